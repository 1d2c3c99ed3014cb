//! `variant_get` converts as Spark 4.3 does: each value of
//! `testdata/spark-casts.jsonl` to each type gives what Spark's
//! `try_variant_get(parse_json(value), '$', type)` gave, or for a value
//! JSON cannot write (a date, a timestamp, binary, a float), its
//! `try_variant_get(CAST(value AS VARIANT), '$', type)`
//! (`tests/interop/spark_casts.py` wrote the file with Spark).

use arrow::array::{Array, ArrayRef, AsArray, StructArray};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use vshred::get::variant_get;
use vshred::path::VariantPath;
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::variant::{VariantBuilder, VariantDecimal, VariantRef};

/// Values whose text Spark's `parse_json` keeps another way than ours:
/// Spark drops a decimal's trailing zeros (`2.50` is the decimal `2.5`),
/// we keep the text's digits, so the JSON of an array or object holding
/// one (its cast to a string) differs; a decimal's own text has none in
/// both.
const TRAILING_ZEROS: [&str; 1] = ["[1, \"x\", 2.50]"];

/// Spark's result as the fixture tags it, for row `row` of `array`.
fn tagged(array: &ArrayRef, row: usize) -> Value {
    if array.is_null(row) {
        return json!({"null": true});
    }
    match array.data_type() {
        DataType::Boolean => json!({"bool": array.as_boolean().value(row)}),
        DataType::Int8 => json!({"int": array.as_primitive::<Int8Type>().value(row).to_string()}),
        DataType::Int16 => json!({"int": array.as_primitive::<Int16Type>().value(row).to_string()}),
        DataType::Int32 => json!({"int": array.as_primitive::<Int32Type>().value(row).to_string()}),
        DataType::Int64 => json!({"int": array.as_primitive::<Int64Type>().value(row).to_string()}),
        DataType::Float32 => double(f64::from(array.as_primitive::<Float32Type>().value(row))),
        DataType::Float64 => double(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(_, scale) => {
            let unscaled = array.as_primitive::<Decimal128Type>().value(row);
            let d = VariantDecimal::try_new(unscaled, *scale as u8).unwrap();
            json!({"decimal": d.to_string()})
        }
        DataType::Utf8 => json!({"string": array.as_string::<i32>().value(row)}),
        DataType::Date32 => json!({"date": array.as_primitive::<Date32Type>().value(row)}),
        DataType::Timestamp(_, _) => {
            json!({"timestamp": array.as_primitive::<TimestampMicrosecondType>().value(row)})
        }
        DataType::Binary => {
            let bytes = array.as_binary::<i32>().value(row);
            json!({"binary": bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()})
        }
        other => panic!("no tag for {other}"),
    }
}

/// A double as the fixture tags it: NaN and the infinities by name.
fn double(x: f64) -> Value {
    match x {
        x if x.is_nan() => json!({"double": "NaN"}),
        x if x.is_infinite() => json!({"double": if x > 0.0 { "Infinity" } else { "-Infinity" }}),
        x => json!({"double": x}),
    }
}

/// The Variant value the fixture tags a SQL-made value as (`{"date": 19783}`);
/// a binary one's bytes are `bytes`.
fn tagged_variant<'a>(tag: &Value, bytes: &'a [u8]) -> VariantRef<'a> {
    let (kind, v) = tag.as_object().unwrap().iter().next().unwrap();
    match kind.as_str() {
        "date" => VariantRef::Date(v.as_i64().unwrap() as i32),
        "timestamp" => VariantRef::TimestampMicros(v.as_i64().unwrap()),
        "timestamp_ntz" => VariantRef::TimestampNtzMicros(v.as_i64().unwrap()),
        "float" => VariantRef::Float(v.as_f64().unwrap() as f32),
        "double" => VariantRef::Double(v.as_f64().unwrap()),
        "int8" => VariantRef::Int8(v.as_i64().unwrap() as i8),
        "binary" => VariantRef::Binary(bytes),
        other => panic!("no Variant of kind {other}"),
    }
}

/// The bytes of a hex string (none for anything else).
fn hex_bytes(hex: &Value) -> Vec<u8> {
    let hex = hex.as_str().unwrap_or_default();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// A one-row Variant column holding `v`.
fn column_of(v: &VariantRef<'_>) -> StructArray {
    let mut builder = VariantBuilder::new();
    builder.append(v).unwrap();
    let (metadata, value) = builder.into_parts();
    let mut shredder = Shredder::new(&ShreddingSchema::Variant);
    shredder.append_variant(&metadata, &value).unwrap();
    shredder.finish()
}

#[test]
fn variant_get_converts_every_value_to_every_type_as_spark_does() {
    let text = std::fs::read_to_string("testdata/spark-casts.jsonl").unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    assert!(records.len() > 900, "{} records", records.len());
    let mut mismatches = Vec::new();
    for record in &records {
        let type_name = record["type"].as_str().unwrap();
        let (source, column) = match record["json"].as_str() {
            Some(json_text) => {
                if type_name == "string" && TRAILING_ZEROS.contains(&json_text) {
                    continue;
                }
                let mut shredder = Shredder::new(&ShreddingSchema::Variant);
                shredder.append_json(json_text.as_bytes()).unwrap();
                (json_text, shredder.finish())
            }
            None => {
                let bytes = hex_bytes(&record["variant"]["binary"]);
                let v = tagged_variant(&record["variant"], &bytes);
                (record["sql"].as_str().unwrap(), column_of(&v))
            }
        };
        let as_type = ShreddingSchema::parse_type_name(type_name).unwrap();
        let result = variant_get(&column, &"$".parse().unwrap(), &as_type, false).unwrap();
        let ours = tagged(&result, 0);
        let mut spark = record["result"].clone();
        // PySpark hands a float over as a double a few units off the
        // float's own value (99.99500274658205 for 99.99500274658203125):
        // the float nearest to it is Spark's.
        if let Some(x) = spark["double"].as_f64().filter(|_| type_name == "float") {
            spark = double(f64::from(x as f32));
        }
        if ours != spark {
            mismatches.push(format!(
                "{source} as {type_name}: ours {ours}, Spark's {spark}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        records.len(),
        mismatches.join("\n")
    );
}

/// The types of the fixture, as `variant_get` names them.
const TYPES: [&str; 16] = [
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "decimal(5,2)",
    "decimal(3,1)",
    "decimal(38,0)",
    "decimal(38,10)",
    "string",
    "date",
    "timestamp",
    "timestamp_ntz",
    "binary",
];

/// Converting any value to any type gives a value or null, never a panic
/// or a hang, and the strict `variant_get` fails exactly where the lenient
/// one gives null for a value that is not null.
fn converts_or_fails_alike(json_text: &str) -> Result<(), TestCaseError> {
    let mut shredder = Shredder::new(&ShreddingSchema::Variant);
    if shredder.append_json(json_text.as_bytes()).is_err() {
        // Not JSON we take (a number out of range): nothing to convert.
        return Ok(());
    }
    let column: StructArray = shredder.finish();
    let null_value = json_text.trim() == "null";
    for type_name in TYPES.iter().chain(&["timestamp_nanos", "time", "uuid"]) {
        let (strict_failed, lenient_null) = get_both(&column, type_name);
        prop_assert_eq!(
            strict_failed,
            lenient_null && !null_value,
            "{} as {}",
            json_text,
            type_name
        );
    }
    Ok(())
}

/// Whether the strict `variant_get` of row 0 as `type_name` fails, and
/// whether the lenient one gives null.
fn get_both(column: &StructArray, type_name: &str) -> (bool, bool) {
    let root: VariantPath = "$".parse().unwrap();
    let as_type = ShreddingSchema::parse_type_name(type_name).unwrap();
    let lenient = variant_get(column, &root, &as_type, false).unwrap();
    let strict = variant_get(column, &root, &as_type, true);
    (strict.is_err(), lenient.is_null(0))
}

#[test]
fn extreme_values_of_every_kind_convert_or_fail_alike() {
    use VariantRef as V;
    let big = VariantDecimal::try_new(10i128.pow(38) - 1, 0).unwrap();
    let tiny = VariantDecimal::try_new(-(10i128.pow(38) - 1), 38).unwrap();
    let values = [
        V::Int64(i64::MIN),
        V::Int64(i64::MAX),
        V::Int8(-128),
        V::Double(f64::NAN),
        V::Double(f64::NEG_INFINITY),
        V::Double(-f64::MIN_POSITIVE),
        V::Float(f32::MAX),
        V::Float(-0.0),
        V::Decimal16(big),
        V::Decimal16(tiny),
        V::Date(i32::MIN),
        V::Date(i32::MAX),
        V::TimestampMicros(i64::MIN),
        V::TimestampNtzMicros(i64::MAX),
        V::TimestampNanos(i64::MIN),
        V::TimestampNtzNanos(-1),
        V::TimeNtzMicros(86_399_999_999),
        V::Binary(&[0xff, 0xfe, 0]),
        V::Uuid([0xab; 16]),
        V::String("\u{0}\u{10ffff}"),
    ];
    for v in values {
        let column = column_of(&v);
        for type_name in TYPES.iter().chain(&["timestamp_nanos", "time", "uuid"]) {
            let (strict_failed, lenient_null) = get_both(&column, type_name);
            assert_eq!(strict_failed, lenient_null, "{v:?} as {type_name}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_number_converts_to_any_type_or_fails_alike(
        text in "-?[0-9]{1,45}(\\.[0-9]{1,45})?([eE][+-]?[0-9]{1,10})?"
    ) {
        converts_or_fails_alike(&text)?;
    }

    #[test]
    fn any_string_converts_to_any_type_or_fails_alike(
        text in prop_oneof![
            any::<String>(),
            "[ \\t]?[+-]?[0-9.eE]{0,12}[ ]?",
            "(?i)(true|false|yes|no|t|f|y|n|nan|-?infinity)",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?)?(Z|[+-][0-9]{2}:[0-9]{2})?",
        ]
    ) {
        converts_or_fails_alike(&serde_json::to_string(&text).unwrap())?;
    }
}
