//! reconstruct(shred(v)) == v, for arbitrary values and arbitrary schemas,
//! including schemas that fit the data badly; and the direct JSON
//! reconstruction equals decode-then-JSON.

use arrow::array::{Array, AsArray, StructArray};
use proptest::prelude::*;
use vshred::json::{json_to_variant, variant_to_json_string};
use vshred::shred::{ShredPolicy, Shredder, ShreddingSchema};
use vshred::unshred::{ShreddedColumn, unshred};
use vshred::variant::VariantRef;

mod common;
use common::{json_value, schema};

/// Shreds every text both ways (from Variant and from JSON), checks both
/// columns reconstruct every row.
fn check(
    texts: &[String],
    schema: &ShreddingSchema,
    policy: ShredPolicy,
) -> Result<(), TestCaseError> {
    let encoded: Vec<(Vec<u8>, Vec<u8>)> = texts
        .iter()
        .map(|t| json_to_variant(t.as_bytes()).unwrap())
        .collect();
    let mut from_variant = Shredder::new(schema).with_policy(policy);
    let mut from_json = Shredder::new(schema).with_policy(policy);
    for ((m, v), text) in encoded.iter().zip(texts) {
        from_variant.append_variant(m, v).unwrap();
        from_json.append_json(text.as_bytes()).unwrap();
    }
    from_variant.append_null();
    from_json.append_null();
    for column in [from_variant.finish(), from_json.finish()] {
        check_column(&column, &encoded, policy)?;
    }
    Ok(())
}

fn check_column(
    column: &StructArray,
    encoded: &[(Vec<u8>, Vec<u8>)],
    policy: ShredPolicy,
) -> Result<(), TestCaseError> {
    let unshredded = unshred(column).unwrap();
    let metadata = unshredded
        .column_by_name("metadata")
        .unwrap()
        .as_binary::<i32>();
    let value = unshredded
        .column_by_name("value")
        .unwrap()
        .as_binary::<i32>();
    let reader = ShreddedColumn::try_new(column).unwrap();
    for (row, (m, v)) in encoded.iter().enumerate() {
        let want = VariantRef::try_new(m, v).unwrap();
        let got = VariantRef::try_new(metadata.value(row), value.value(row)).unwrap();
        let want_json = variant_to_json_string(&want);
        let got_json = variant_to_json_string(&got);
        prop_assert!(got == want, "row {}: {} != {}", row, got_json, want_json);
        if policy == ShredPolicy::Faithful {
            prop_assert_eq!(&got_json, &want_json);
        }
        let mut direct = Vec::new();
        reader.write_json(row, &mut direct).unwrap();
        prop_assert_eq!(String::from_utf8(direct).unwrap(), got_json);
    }
    let last = encoded.len();
    prop_assert!(unshredded.is_null(last), "a null row stays null");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn faithful_shredding_round_trips_exactly(texts in prop::collection::vec(json_value(), 1..6), schema in schema()) {
        check(&texts, &schema, ShredPolicy::Faithful)?;
    }

    #[test]
    fn lossless_shredding_round_trips_by_value(texts in prop::collection::vec(json_value(), 1..6), schema in schema()) {
        check(&texts, &schema, ShredPolicy::Lossless)?;
    }
}

/// The shredder guesses each key from the keys of the rows before and
/// compares the guess with the text; keys in another order, spaced,
/// spelled with escapes, between unshredded keys, or named with characters
/// JSON must escape land in their fields all the same.
#[test]
fn keys_in_any_order_spacing_or_spelling_land_in_their_fields() {
    use ShreddingSchema as S;
    let schema = S::object(
        [
            ("a", S::Int64),
            ("ab", S::String),
            ("q\"uote", S::Int64),
            ("back\\slash", S::Int64),
            ("tab\t", S::Int64),
            ("\u{e9}t\u{e9}", r#"{"x":"int64"}"#.parse().unwrap()),
        ]
        .map(|(name, field)| (name.to_string(), field)),
    )
    .unwrap();
    let texts = [
        r#"{"a":1,"ab":"x","q\"uote":2,"back\\slash":3,"tab\t":4,"été":{}}"#,
        r#"{"a":1,"ab":"x","q\"uote":2,"back\\slash":3,"tab\t":4,"été":{}}"#,
        r#"{"été":{"x":1},"tab\t":4,"back\\slash":3,"q\"uote":2,"ab":"x","a":1}"#,
        r#"{ "ab" : "y" ,	"a"	:2 }"#,
        r#"{"\u0061":5,"a\u0062":"z","\u00e9t\u00e9":{}}"#,
        r#"{"a":1,"z":0,"ab":"w","zz":[]}"#,
        r#"{"ab":"v","a":-1}"#,
        r#"{"a":{"ab":1},"ab":2}"#,
        r#"{}"#,
    ]
    .map(String::from);
    check(&texts, &schema, ShredPolicy::Faithful).unwrap();
}

/// A key the shredder guessed right is still checked for duplicates.
#[test]
fn a_guessed_key_given_twice_is_a_duplicate() {
    let schema: ShreddingSchema = r#"{"a":"int64","ab":"string"}"#.parse().unwrap();
    let mut shredder = Shredder::new(&schema);
    shredder.append_json(br#"{"ab":"x","a":1}"#).unwrap();
    let err = shredder
        .append_json(br#"{"a":1,"ab":"x","a":2}"#)
        .unwrap_err();
    assert_eq!(err.kind(), vshred::ErrorKind::DuplicateKey, "{err}");
    assert!(err.message().starts_with(r#""a" appears twice"#), "{err}");
}

#[test]
fn typed_values_land_in_typed_columns() {
    let schema: ShreddingSchema = r#"{"a":"int64","b":"decimal(9,1)","c":["string"]}"#
        .parse()
        .unwrap();
    let mut shredder = Shredder::new(&schema);
    shredder
        .append_json(br#"{"a":7,"b":104.8,"c":["x",null],"d":true}"#)
        .unwrap();
    let column = shredder.finish();
    let typed = column.column_by_name("typed_value").unwrap().as_struct();
    let field = |name: &str| typed.column_by_name(name).unwrap().as_struct().clone();
    let a = field("a");
    assert!(a.column_by_name("value").unwrap().is_null(0));
    assert_eq!(
        a.column_by_name("typed_value")
            .unwrap()
            .as_primitive::<arrow::datatypes::Int64Type>()
            .value(0),
        7
    );
    let b = field("b");
    assert_eq!(
        b.column_by_name("typed_value")
            .unwrap()
            .as_primitive::<arrow::datatypes::Decimal128Type>()
            .value(0),
        1048
    );
    let c = field("c");
    let list = c.column_by_name("typed_value").unwrap().as_list::<i32>();
    let elements = list.values().as_struct();
    let strings = elements
        .column_by_name("typed_value")
        .unwrap()
        .as_string::<i32>();
    assert_eq!(strings.value(0), "x");
    assert!(strings.is_null(1));
    // A null element is a Variant null in the element's value.
    assert_eq!(
        elements
            .column_by_name("value")
            .unwrap()
            .as_binary::<i32>()
            .value(1),
        [0u8]
    );
    // The unshredded field "d" is the residual object.
    let residual = column
        .column_by_name("value")
        .unwrap()
        .as_binary::<i32>()
        .value(0);
    let metadata = column
        .column_by_name("metadata")
        .unwrap()
        .as_binary::<i32>()
        .value(0);
    let v = VariantRef::try_new(metadata, residual).unwrap();
    assert_eq!(variant_to_json_string(&v), r#"{"d":true}"#);
}

#[test]
fn faithful_keeps_other_scales_and_ints_out_of_decimal_columns() {
    let schema: ShreddingSchema = r#"{"b":"decimal(18,1)"}"#.parse().unwrap();
    for (policy, typed_rows) in [(ShredPolicy::Faithful, 1), (ShredPolicy::Lossless, 3)] {
        let mut shredder = Shredder::new(&schema).with_policy(policy);
        for text in [
            r#"{"b":1.5}"#,
            r#"{"b":2}"#,
            r#"{"b":2.50}"#,
            r#"{"b":2.55}"#,
        ] {
            shredder.append_json(text.as_bytes()).unwrap();
        }
        let column = shredder.finish();
        let b = column
            .column_by_name("typed_value")
            .unwrap()
            .as_struct()
            .column_by_name("b")
            .unwrap()
            .as_struct()
            .clone();
        let typed = b.column_by_name("typed_value").unwrap();
        assert_eq!(typed.len() - typed.null_count(), typed_rows, "{policy:?}");
    }
}

/// `variant_get` casts ISO strings to dates and timestamps; shredding must
/// not, or the value would read back as a timestamp, not the string.
#[test]
fn iso_strings_stay_out_of_date_and_timestamp_columns() {
    let schema: ShreddingSchema = r#"{"d":"date","t":"timestamp","n":"timestamp_ntz_nanos"}"#
        .parse()
        .unwrap();
    let text = r#"{"d":"2024-03-01","n":"2024-03-01 12:30:00","t":"2024-03-01T12:30:00Z"}"#;
    let (m, v) = json_to_variant(text.as_bytes()).unwrap();
    for policy in [ShredPolicy::Faithful, ShredPolicy::Lossless] {
        let mut from_variant = Shredder::new(&schema).with_policy(policy);
        from_variant.append_variant(&m, &v).unwrap();
        let mut from_json = Shredder::new(&schema).with_policy(policy);
        from_json.append_json(text.as_bytes()).unwrap();
        for column in [from_variant.finish(), from_json.finish()] {
            let typed = column.column_by_name("typed_value").unwrap().as_struct();
            for name in ["d", "t", "n"] {
                let field = typed.column_by_name(name).unwrap().as_struct();
                let typed_value = field.column_by_name("typed_value").unwrap();
                assert!(typed_value.is_null(0), "{policy:?}: {name}");
            }
            let mut json = Vec::new();
            ShreddedColumn::try_new(&column)
                .unwrap()
                .write_json(0, &mut json)
                .unwrap();
            assert_eq!(String::from_utf8(json).unwrap(), text, "{policy:?}");
        }
    }
}
