//! `variant_get` on shredded columns equals `variant_get` on the same
//! values unshredded (which always resolves row by row): the typed-column
//! passthrough and the per-row merge agree with decode-and-walk.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{Date32Type, Int64Type, TimestampMicrosecondType, TimestampNanosecondType};
use proptest::prelude::*;
use vshred::get::variant_get;
use vshred::json::{json_to_variant, variant_to_json_string};
use vshred::path::{PathSegment, VariantPath};
use vshred::shred::{ShredPolicy, Shredder, ShreddingSchema};
use vshred::variant::{VariantBuilder, VariantRef};

mod common;
use common::{KEYS, json_value, schema};

fn path() -> impl Strategy<Value = VariantPath> {
    let segment = prop_oneof![
        prop::sample::select(KEYS).prop_map(|k| PathSegment::Field(k.to_string())),
        (0usize..3).prop_map(PathSegment::Index),
    ];
    prop::collection::vec(segment, 0..3).prop_map(VariantPath::new)
}

fn as_type() -> impl Strategy<Value = ShreddingSchema> {
    prop::sample::select(vec![
        ShreddingSchema::Variant,
        ShreddingSchema::Boolean,
        ShreddingSchema::Int8,
        ShreddingSchema::Int64,
        ShreddingSchema::Double,
        ShreddingSchema::Decimal {
            precision: 18,
            scale: 2,
        },
        ShreddingSchema::Decimal {
            precision: 6,
            scale: 3,
        },
        ShreddingSchema::String,
        ShreddingSchema::Object(vec![
            ("b".into(), ShreddingSchema::Int64),
            ("a".into(), ShreddingSchema::Variant),
        ]),
        ShreddingSchema::Array(Box::new(ShreddingSchema::Int64)),
        ShreddingSchema::Array(Box::new(ShreddingSchema::Object(vec![(
            "c".into(),
            ShreddingSchema::String,
        )]))),
    ])
}

fn column(texts: &[String], schema: &ShreddingSchema) -> arrow::array::StructArray {
    // Faithful: a value reads back with the same JSON text, so results compare
    // as text (Lossless shredding, checked by value in shred_roundtrip, may
    // turn 0 into 0.0).
    let mut shredder = Shredder::new(schema).with_policy(ShredPolicy::Faithful);
    for text in texts {
        shredder.append_json(text.as_bytes()).unwrap();
    }
    shredder.append_null();
    shredder.finish()
}

/// Renders each row, so that Variant results (also inside structs and
/// lists) compare by JSON text.
fn rows(array: &ArrayRef) -> Vec<Option<String>> {
    (0..array.len())
        .map(|i| (!array.is_null(i)).then(|| render(array, i)))
        .collect()
}

fn render(array: &ArrayRef, i: usize) -> String {
    if array.is_null(i) {
        return "null".into();
    }
    if let Some(s) = array.as_struct_opt() {
        if let (Some(m), Some(v)) = (s.column_by_name("metadata"), s.column_by_name("value")) {
            let (m, v) = (m.as_binary::<i32>().value(i), v.as_binary::<i32>().value(i));
            return variant_to_json_string(&VariantRef::try_new(m, v).unwrap());
        }
        let fields: Vec<String> = s
            .column_names()
            .iter()
            .zip(s.columns())
            .map(|(name, child)| format!("{name}: {}", render(child, i)))
            .collect();
        return format!("{{{}}}", fields.join(", "));
    }
    if let Some(list) = array.as_list_opt::<i32>() {
        let elements = list.value(i);
        let items: Vec<String> = (0..elements.len()).map(|j| render(&elements, j)).collect();
        return format!("[{}]", items.join(", "));
    }
    arrow::util::display::array_value_to_string(array, i).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn shredded_get_equals_unshredded_get(
        texts in prop::collection::vec(json_value(), 1..6),
        schema in schema(),
        path in path(),
        as_type in as_type(),
    ) {
        let shredded = column(&texts, &schema);
        let plain = column(&texts, &ShreddingSchema::Variant);
        let got = variant_get(&shredded, &path, &as_type, false).unwrap();
        let want = variant_get(&plain, &path, &as_type, false).unwrap();
        prop_assert_eq!(got.data_type(), want.data_type());
        prop_assert_eq!(rows(&got), rows(&want), "path {}", path);
        // Strict: the same first failing row, or the same rows.
        let got = variant_get(&shredded, &path, &as_type, true);
        let want = variant_get(&plain, &path, &as_type, true);
        match (got, want) {
            (Ok(got), Ok(want)) => prop_assert_eq!(rows(&got), rows(&want)),
            (Err(got), Err(want)) => prop_assert_eq!(got.row(), want.row(), "{} / {}", got, want),
            (got, want) => prop_assert!(false, "{:?} / {:?}", got.map(|g| rows(&g)), want.map(|w| rows(&w))),
        }
    }
}

/// The sub-value of `text` at `path`, by decoding the whole value and
/// walking it.
fn walk(text: &str, path: &VariantPath) -> Option<String> {
    let (m, v) = json_to_variant(text.as_bytes()).unwrap();
    let mut value = VariantRef::try_new(&m, &v).unwrap();
    for segment in path.segments() {
        value = match (segment, value) {
            (PathSegment::Field(name), VariantRef::Object(o)) => o.get(name)?,
            (PathSegment::Index(i), VariantRef::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(variant_to_json_string(&value))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Sub-values found in Variant-encoded values come back as their own
    /// bytes under the row's metadata: they must read as the walk finds.
    #[test]
    fn variant_results_are_the_sub_values_a_walk_finds(
        texts in prop::collection::vec(json_value(), 1..6),
        path in path(),
    ) {
        let plain = column(&texts, &ShreddingSchema::Variant);
        let got = variant_get(&plain, &path, &ShreddingSchema::Variant, false).unwrap();
        let mut want: Vec<Option<String>> = texts.iter().map(|t| walk(t, &path)).collect();
        want.push(None); // the null row
        prop_assert_eq!(rows(&got), want, "path {}", path);
    }
}

#[test]
fn fully_shredded_path_hands_over_the_typed_column() {
    let schema: ShreddingSchema = r#"{"a":{"b":"int64"}}"#.parse().unwrap();
    let texts: Vec<String> = (0..100)
        .map(|i| format!(r#"{{"a":{{"b":{i}}},"c":{i}}}"#))
        .collect();
    let shredded = column(&texts, &schema);
    let got = variant_get(
        &shredded,
        &"$.a.b".parse().unwrap(),
        &ShreddingSchema::Int64,
        false,
    )
    .unwrap();
    let typed = shredded
        .column_by_name("typed_value")
        .unwrap()
        .as_struct()
        .column_by_name("a")
        .unwrap()
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .as_struct()
        .column_by_name("b")
        .unwrap()
        .as_struct()
        .column_by_name("typed_value")
        .unwrap()
        .clone();
    // The same buffer, not a copy.
    assert_eq!(
        got.as_primitive::<Int64Type>().values().as_ptr(),
        typed.as_primitive::<Int64Type>().values().as_ptr()
    );
    assert_eq!(got.as_primitive::<Int64Type>().value(99), 99);
    assert!(got.is_null(100), "the null row stays null");
}

#[test]
fn strict_get_names_row_and_path() {
    let shredded = column(
        &[r#"{"a":1}"#.to_string(), r#"{"a":"x"}"#.to_string()],
        &ShreddingSchema::Variant,
    );
    let err = variant_get(
        &shredded,
        &"$.a".parse().unwrap(),
        &ShreddingSchema::Int64,
        true,
    )
    .unwrap_err();
    assert_eq!(err.row(), Some(1));
    assert!(
        err.to_string()
            .contains("$.a: \"x\" does not convert to int64"),
        "{err}"
    );
}

/// A row whose `value` and primitive `typed_value` are both set (the
/// spec forbids it; `cat` refuses the row) is an error naming it, where a
/// typed read gave the typed value.
#[test]
fn a_row_with_both_value_and_typed_value_is_an_error() {
    use arrow::array::{BinaryArray, StructArray};
    let shredded = column(
        &["7".to_string(), "\"x\"".to_string()],
        &ShreddingSchema::Int64,
    );
    // Row 0 keeps its typed 7 and gets row 1's value too.
    let value = shredded.column_by_name("value").unwrap().as_binary::<i32>();
    let both: ArrayRef = std::sync::Arc::new(BinaryArray::from(vec![
        Some(value.value(1)),
        Some(value.value(1)),
        None,
    ]));
    let (fields, mut columns, nulls) = shredded.into_parts();
    let at = fields.iter().position(|f| f.name() == "value").unwrap();
    columns[at] = both;
    let conflicting = StructArray::new(fields, columns, nulls);
    for as_type in [ShreddingSchema::Int64, ShreddingSchema::Variant] {
        let err =
            variant_get(&conflicting, &VariantPath::new(vec![]), &as_type, false).unwrap_err();
        assert_eq!(err.row(), Some(0), "{err}");
        assert!(
            err.to_string()
                .contains("$: conflicting value and typed_value (both are set)"),
            "{err}"
        );
    }
}

#[test]
fn rows_with_different_metadata_each_find_their_own_keys() {
    // Each row's dictionary is sorted, so "a" is id 0 in some rows and id 1
    // (after "0") in others; consecutive rows repeat or change metadata.
    let texts: Vec<String> = [
        r#"{"a":1,"b":2}"#,
        r#"{"a":2,"b":3}"#,
        r#"{"0":3,"a":4}"#,
        r#"{"b":5}"#,
        r#"{"c":{"a":6}}"#,
        r#"{"a":7}"#,
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let plain = column(&texts, &ShreddingSchema::Variant);
    let metadata = plain.column_by_name("metadata").unwrap().as_binary::<i32>();
    assert_eq!(metadata.value(0), metadata.value(1));
    assert_ne!(metadata.value(1), metadata.value(2));
    for (path, want) in [
        (
            "$.a",
            vec![Some(1), Some(2), Some(4), None, None, Some(7), None],
        ),
        (
            "$.b",
            vec![Some(2), Some(3), None, Some(5), None, None, None],
        ),
        ("$.c.a", vec![None, None, None, None, Some(6), None, None]),
    ] {
        let got = variant_get(
            &plain,
            &path.parse().unwrap(),
            &ShreddingSchema::Int64,
            false,
        )
        .unwrap();
        let got: Vec<Option<i64>> = got.as_primitive::<Int64Type>().iter().collect();
        assert_eq!(got, want, "{path}");
    }
}

/// Issue #11: ISO-8601 strings convert to timestamps as Spark's
/// `CAST(s AS TIMESTAMP)` reads them, with UTC for the session time zone.
#[test]
fn iso_strings_convert_to_timestamps_as_spark_casts_them() {
    // 2024-03-01T12:30:00Z
    const T: i64 = 1_709_296_200_000_000;
    let rows = [
        (r#""2024-03-01T12:30:00Z""#, Some(T)),
        (r#""2024-03-01 12:30:00.5""#, Some(T + 500_000)), // no zone: UTC
        (
            r#"" 2024-03-01T13:30:00.123456789+01:00 ""#,
            Some(T + 123_456),
        ),
        (r#""2024-03-01T12:30""#, Some(T)),
        (r#""2024-02-29""#, Some(1_709_164_800_000_000)),
        (r#""2023-02-29""#, None), // no such day
        (r#""2024-03-01T24:00""#, None),
        (r#""2024-03-01T12:30Z""#, None), // Spark takes a zone only after seconds
        (r#""soon""#, None),
    ];
    let texts: Vec<String> = rows
        .iter()
        .map(|(v, _)| format!(r#"{{"ts":{v}}}"#))
        .collect();
    let mut want: Vec<Option<i64>> = rows.iter().map(|(_, t)| *t).collect();
    want.push(None); // the null row
    let timestamp = ShreddingSchema::Timestamp {
        utc: true,
        nanos: false,
    };
    let ts: VariantPath = "$.ts".parse().unwrap();
    // Unshredded, shredded as strings (the typed leaf, cast row by row), and
    // shredded as timestamps (where the strings stay in `value`).
    for schema in [
        r#"{"ts":"variant"}"#,
        r#"{"ts":"string"}"#,
        r#"{"ts":"timestamp"}"#,
    ] {
        let column = column(&texts, &schema.parse().unwrap());
        let got = variant_get(&column, &ts, &timestamp, false).unwrap();
        let got: Vec<Option<i64>> = got
            .as_primitive::<TimestampMicrosecondType>()
            .iter()
            .collect();
        assert_eq!(got, want, "{schema}");
        let err = variant_get(&column, &ts, &timestamp, true).unwrap_err();
        assert_eq!(err.row(), Some(5), "{schema}");
        assert!(
            err.to_string()
                .contains(r#"$.ts: "2023-02-29" does not convert to timestamp"#),
            "{err}"
        );
    }
}

/// The other date and time types take the same strings: a date reads the
/// date part, `timestamp_ntz` ignores the zone, nanos keep nine digits.
#[test]
fn iso_strings_convert_to_dates_and_the_other_timestamps() {
    let texts: Vec<String> = [
        r#""2024-03-01T23:30:00.123456789-01:00""#,
        r#""2024-3-1""#,
        r#""2024-03-01T12:30:00+25:00""#, // no such offset
    ]
    .iter()
    .map(|v| format!(r#"{{"ts":{v}}}"#))
    .collect();
    let column = column(&texts, &ShreddingSchema::Variant);
    let get = |as_type| variant_get(&column, &"$.ts".parse().unwrap(), &as_type, false).unwrap();
    let timestamp = |utc, nanos| get(ShreddingSchema::Timestamp { utc, nanos });
    // 2024-03-01, in days and in seconds; 23:30 in seconds.
    const DAY: i32 = 19_783;
    const MIDNIGHT: i64 = 1_709_251_200;
    const LOCAL: i64 = MIDNIGHT + 23 * 3600 + 30 * 60;
    let date: Vec<Option<i32>> = get(ShreddingSchema::Date)
        .as_primitive::<Date32Type>()
        .iter()
        .collect();
    assert_eq!(date, [Some(DAY), Some(DAY), Some(DAY), None]);
    let ntz: Vec<Option<i64>> = timestamp(false, false)
        .as_primitive::<TimestampMicrosecondType>()
        .iter()
        .collect();
    let micros = |s: i64| s * 1_000_000;
    assert_eq!(
        ntz,
        [
            Some(micros(LOCAL) + 123_456),
            Some(micros(MIDNIGHT)),
            None,
            None
        ]
    );
    let nanos = |s: i64| s * 1_000_000_000;
    for (utc, instant) in [(true, LOCAL + 3600), (false, LOCAL)] {
        let got: Vec<Option<i64>> = timestamp(utc, true)
            .as_primitive::<TimestampNanosecondType>()
            .iter()
            .collect();
        assert_eq!(
            got,
            [
                Some(nanos(instant) + 123_456_789),
                Some(nanos(MIDNIGHT)),
                None,
                None
            ],
            "utc: {utc}"
        );
    }
}

/// A timestamp converts to the date it falls on in UTC, as Spark's cast
/// does in a session time zone of UTC; shredding into a date column does
/// not take it, as that loses the time.
#[test]
fn timestamps_convert_to_the_date_they_fall_on_in_utc() {
    // 2024-03-01T23:59:59.999999Z in micros; -1 is 1969-12-31T23:59:59.999999.
    const LATE: i64 = 1_709_337_599_999_999;
    let writes: [fn(&mut VariantBuilder); 6] = [
        |b| b.timestamp_micros(LATE),
        |b| b.timestamp_ntz_micros(LATE + 1),
        |b| b.timestamp_nanos(LATE * 1000 + 999),
        |b| b.timestamp_ntz_nanos(-1),
        |b| b.timestamp_micros(-1),
        |b| b.string("2024-03-01T23:59:59.999999-01:00"), // a date reads no zone
    ];
    let want = [
        Some(19_783),
        Some(19_784),
        Some(19_783),
        Some(-1),
        Some(-1),
        Some(19_783),
    ];
    for policy in [ShredPolicy::Faithful, ShredPolicy::Lossless] {
        let mut shredder = Shredder::new(&ShreddingSchema::Date).with_policy(policy);
        let mut builder = VariantBuilder::new();
        for write in writes {
            builder.start_row();
            write(&mut builder);
            let (m, v) = builder.finish();
            shredder.append_variant(m, v).unwrap();
        }
        let column = shredder.finish();
        let typed = column.column_by_name("typed_value").unwrap();
        assert_eq!(typed.null_count(), writes.len(), "{policy:?}");
        let got = variant_get(
            &column,
            &"$".parse().unwrap(),
            &ShreddingSchema::Date,
            false,
        )
        .unwrap();
        let got: Vec<Option<i32>> = got.as_primitive::<Date32Type>().iter().collect();
        assert_eq!(got, want, "{policy:?}");
    }
}

#[test]
fn structs_and_lists_come_back_as_arrow_structs_and_lists() {
    let texts: Vec<String> = [
        r#"{"user":{"id":1,"name":"a","x":true},"tags":["x","y"]}"#,
        r#"{"user":{"id":"two"},"tags":[]}"#,
        r#"{"user":5,"tags":"s"}"#,
        r#"{}"#,
    ]
    .map(String::from)
    .to_vec();
    let layout: ShreddingSchema = r#"{"user":{"id":"int64","name":"string"},"tags":["string"]}"#
        .parse()
        .unwrap();
    let user: ShreddingSchema =
        ShreddingSchema::parse_type_name("struct<id:bigint,name:string>").unwrap();
    let tags = ShreddingSchema::parse_type_name("array<string>").unwrap();
    for schema in [&layout, &ShreddingSchema::Variant] {
        let column = column(&texts, schema);
        let got = variant_get(&column, &"$.user".parse().unwrap(), &user, false).unwrap();
        assert_eq!(
            rows(&got),
            [
                Some("{id: 1, name: a}".into()),
                Some("{id: null, name: null}".into()),
                None,
                None,
                None
            ],
            "{schema}"
        );
        let strict = variant_get(&column, &"$.user".parse().unwrap(), &user, true).unwrap_err();
        assert_eq!(strict.row(), Some(1), "the first row that fails: {strict}");
        let got = variant_get(&column, &"$.tags".parse().unwrap(), &tags, false).unwrap();
        assert_eq!(
            rows(&got),
            [Some("[x, y]".into()), Some("[]".into()), None, None, None],
            "{schema}"
        );
        let strict = variant_get(&column, &"$.tags".parse().unwrap(), &tags, true).unwrap_err();
        assert_eq!(strict.row(), Some(2), "{strict}");
        assert!(strict.to_string().contains("not an array"), "{strict}");
    }
}

/// Whole columns of integers, decimals, doubles, floats and strings (with
/// nulls, past `i64`'s range, NaN, -0.0, a sum past 38 digits and past an
/// `i128`), each but its last row as a limit cuts it, then a double, fold
/// as they do value by value.
#[test]
fn aggregates_of_whole_columns_are_those_value_by_value() {
    use std::sync::Arc;

    use arrow::array::{
        Array, Decimal128Array, Float32Array, Float64Array, Int32Array, Int64Array, StringArray,
    };
    use vshred::get::{Accumulator, Aggregate};
    use vshred::variant::{VariantDecimal, VariantRef};

    let big = 99_999_999_999_999_999_999_999_999_999_999_999_999i128;
    let decimals = |values: Vec<Option<i128>>| -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(38, 2)
                .unwrap(),
        )
    };
    let sets: Vec<Vec<ArrayRef>> = vec![
        vec![
            Arc::new(Int64Array::from(vec![
                Some(i64::MAX),
                None,
                Some(i64::MAX),
                Some(-3),
                Some(1),
            ])),
            Arc::new(Int32Array::from(vec![
                Some(7),
                Some(i32::MIN),
                None,
                Some(0),
            ])),
            Arc::new(Int64Array::from(vec![None, None])),
        ],
        vec![
            decimals(vec![Some(150), None, Some(-2), Some(7)]),
            decimals(vec![Some(1), Some(-300)]),
        ],
        // A partial sum past 38 digits, the total within them: one by one
        // goes on as a double from there.
        vec![decimals(vec![Some(big), Some(1), Some(-1), Some(0)])],
        // An exact sum at scale 2, then integers at scale 0.
        vec![
            decimals(vec![Some(150), Some(1)]),
            Arc::new(Int64Array::from(vec![Some(3), Some(4), None])),
        ],
        // Past 38 digits, then past an i128.
        vec![
            decimals(vec![Some(big), Some(big)]),
            decimals(vec![Some(big); 3]),
        ],
        vec![
            Arc::new(Float64Array::from(vec![
                Some(0.1),
                Some(f64::NAN),
                None,
                Some(-0.0),
                Some(0.0),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(1e300),
                Some(-1e300),
                Some(0.2),
            ])),
        ],
        vec![Arc::new(Float32Array::from(vec![
            Some(1.1f32),
            None,
            Some(-2.5),
        ]))],
        vec![Arc::new(StringArray::from(vec![
            Some("b"),
            None,
            Some("é"),
            Some(""),
            Some("ab"),
        ]))],
    ];
    let value = |column: &ArrayRef, i: usize| -> Option<VariantRef<'static>> {
        if column.is_null(i) {
            return None;
        }
        let any = column.as_any();
        Some(if let Some(n) = any.downcast_ref::<Int64Array>() {
            VariantRef::Int64(n.value(i))
        } else if let Some(n) = any.downcast_ref::<Int32Array>() {
            VariantRef::Int32(n.value(i))
        } else if let Some(d) = any.downcast_ref::<Decimal128Array>() {
            VariantRef::Decimal16(VariantDecimal::try_new(d.value(i), 2).unwrap())
        } else if let Some(f) = any.downcast_ref::<Float64Array>() {
            VariantRef::Double(f.value(i))
        } else if let Some(f) = any.downcast_ref::<Float32Array>() {
            VariantRef::Float(f.value(i))
        } else {
            let s = any.downcast_ref::<StringArray>().unwrap().value(i);
            VariantRef::String(Box::leak(s.to_string().into_boxed_str()))
        })
    };
    for columns in &sets {
        for aggregate in [
            Aggregate::Count,
            Aggregate::Sum,
            Aggregate::Min,
            Aggregate::Max,
        ] {
            let (mut whole, mut one_by_one) =
                (Accumulator::new(aggregate), Accumulator::new(aggregate));
            for column in columns {
                let rows = column.len() - 1;
                whole.add_column(column, rows).unwrap();
                for i in 0..rows {
                    if let Some(v) = value(column, i) {
                        one_by_one.add(&v).unwrap();
                    }
                }
            }
            whole.add(&VariantRef::Double(0.5)).unwrap();
            one_by_one.add(&VariantRef::Double(0.5)).unwrap();
            let what = format!("{aggregate:?} of {:?}", columns[0].data_type());
            assert_eq!(whole.to_json(), one_by_one.to_json(), "{what}");
            assert_eq!(whole.note(), one_by_one.note(), "{what}");
        }
    }
    // A count of a typed column of another type counts its non-nulls.
    let strings: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![
        Some("a"),
        None,
        Some(""),
    ]));
    let mut count = Accumulator::new(Aggregate::Count);
    count.add_column(&strings, 3).unwrap();
    assert_eq!(count.to_json(), "2");
    // Two i64::MAX and -3: exact past i64's range.
    let mut sum = Accumulator::new(Aggregate::Sum);
    sum.add_column(&sets[0][0], 4).unwrap();
    assert_eq!(sum.to_json(), "18446744073709551611");
}
