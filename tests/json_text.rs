//! JSON text -> Variant: number classification and error positions.

use vshred::json::{InexactNumbers, JsonParser, json_to_variant, variant_to_json_string};
use vshred::shred::ParseJsonOptions;
use vshred::variant::{DuplicateKeys, VariantBuilder, VariantRef};
use vshred::{ErrorKind, Position};

/// Parses `text` and returns the type name and JSON rendering.
fn encode(text: &str) -> (String, String) {
    let (m, v) = json_to_variant(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
    let variant = VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{text}: {e}"));
    (
        variant.variant_type().name().to_string(),
        variant_to_json_string(&variant),
    )
}

macro_rules! encodes_as {
    ($($name:ident: $text:expr => $type:expr, $json:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_eq!(encode($text), ($type.to_string(), $json.to_string()));
        }
    )*};
}

encodes_as! {
    zero_is_int8: "0" => "int8", "0";
    minus_zero_is_int8_zero: "-0" => "int8", "0";
    int_max_i64_is_int64: "9223372036854775807" => "int64", "9223372036854775807";
    int_min_i64_is_int64: "-9223372036854775808" => "int64", "-9223372036854775808";
    int_19_digits_below_i64_is_int64: "1000000000000000000" => "int64", "1000000000000000000";
    int_beyond_i64_is_decimal16: "-9223372036854775809" => "decimal16", "-9223372036854775809";
    int_38_digits_is_decimal16: "99999999999999999999999999999999999999" => "decimal16", "99999999999999999999999999999999999999";
    fraction_keeps_scale: "432.0" => "decimal4", "432.0";
    fraction_trailing_zeros_kept: "1.500" => "decimal4", "1.500";
    fraction_9_digits_is_decimal4: "99999.9999" => "decimal4", "99999.9999";
    fraction_10_digits_is_decimal8: "999999.9999" => "decimal8", "999999.9999";
    fraction_19_digits_is_decimal16: "1234567890.123456789" => "decimal16", "1234567890.123456789";
    small_fraction_scale_decides_width: "0.0000000001" => "decimal8", "0.0000000001";
    exponent_is_double: "1e3" => "double", "1000.0";
    exponent_with_fraction_is_double: "-2.5E-3" => "double", "-0.0025";
    whitespace_around_is_ignored: " \t\r\n[ 1 , 2 ]\n" => "array", "[1,2]";
    escapes_are_decoded: r#""\u00e9\ud83d\ude00\/\n""# => "string", "\"é😀/\\n\"";
    keys_are_sorted: r#"{"b":1,"a":2,"B":3}"# => "object", r#"{"B":3,"a":2,"b":1}"#;
}

/// With `InexactNumbers::Double`, numbers that no decimal holds become the
/// nearest double (as Spark's parse_json makes them) and are counted; a
/// number beyond the double range stays an error.
#[test]
fn inexact_numbers_become_counted_doubles_when_asked() {
    let parser = JsonParser::new().with_inexact_numbers(InexactNumbers::Double);
    for (text, json, count) in [
        ("999999999999999999999999999999999999999", "1e39", 1),
        ("0.000000000000000000000000000000000000001", "1e-39", 1),
        (
            "[1e3, 0.11111111111111111111111111111111111111111]",
            "[1000.0,0.1111111111111111]",
            1,
        ),
        (
            "[99999999999999999999999999999999999999, 1.5]",
            "[99999999999999999999999999999999999999,1.5]",
            0,
        ),
    ] {
        let mut builder = VariantBuilder::new();
        assert_eq!(
            parser.parse(text.as_bytes(), &mut builder).unwrap(),
            count,
            "{text}"
        );
        let (m, v) = builder.finish();
        assert_eq!(
            variant_to_json_string(&VariantRef::try_new(m, v).unwrap()),
            json
        );
    }
    let mut builder = VariantBuilder::new();
    let err = parser
        .parse("9".repeat(400).as_bytes(), &mut builder)
        .unwrap_err();
    assert!(err.message().contains("out of range for a double"), "{err}");
}

/// Asserts that `text` fails at `line`/`column` with a message containing
/// `message`: of its own kind for a number no decimal holds (a front end
/// adds its way to store a double), invalid JSON otherwise.
fn fails_at(text: &str, line: u64, column: u64, kind: ErrorKind, message: &str) {
    let err = json_to_variant(text.as_bytes()).expect_err(text);
    assert_eq!(err.kind(), kind, "{text}: {err}");
    match err.position() {
        Some(Position::Json {
            line: l, column: c, ..
        }) => assert_eq!((l, c), (line, column), "{text}: {err}"),
        other => panic!("{text}: no JSON position: {other:?}"),
    }
    assert!(err.message().contains(message), "{text}: {err}");
}

macro_rules! fails_at {
    ($($name:ident: $text:expr => $line:expr, $column:expr, $kind:ident, $message:expr;)*) => {$(
        #[test]
        fn $name() {
            fails_at($text, $line, $column, ErrorKind::$kind, $message);
        }
    )*};
}

fails_at! {
    empty_input: "" => 1, 1, Json, "unexpected end of input";
    trailing_comma_in_object: r#"{"a":1,}"# => 1, 8, Json, "expected '\"' to start a key";
    trailing_comma_in_array: "[1,]" => 1, 4, Json, "expected a JSON value";
    missing_colon: r#"{"a" 1}"# => 1, 6, Json, "expected ':'";
    second_line_error: "[1,\n  x]" => 2, 3, Json, "expected a JSON value, found 'x'";
    leading_zero: "01" => 1, 2, Json, "expected the end of input";
    bare_minus: "-" => 1, 2, Json, "expected a digit";
    dot_without_digits: "1." => 1, 3, Json, "expected a digit after '.'";
    exponent_without_digits: "1e+" => 1, 4, Json, "expected a digit in the exponent";
    number_beyond_double: "1e400" => 1, 1, Json, "out of range for a double";
    int_39_digits_is_an_error: "[1, 999999999999999999999999999999999999999]" => 1, 5, InexactNumber, "number with 39 digits: no decimal holds more than 38";
    fraction_scale_39_is_an_error: "0.000000000000000000000000000000000000001" => 1, 1, InexactNumber, "number with 39 digits after the point";
    fraction_of_400_digits_is_an_error: &format!("0.{}", "1".repeat(400)) => 1, 1, InexactNumber, "number with 400 digits after the point";
    int_400_digits_is_out_of_range_whatever_is_asked: &"9".repeat(400) => 1, 1, Json, "number out of range for a double";
    significant_39_digits_is_an_error: "1234567890123456789012345678.90123456789" => 1, 1, InexactNumber, "number with 39 significant digits";
    unterminated_string: "\"abc" => 1, 1, Json, "unterminated string";
    raw_control_character: "\"a\tb\"" => 1, 3, Json, "control character";
    lone_high_surrogate: r#""\ud800x""# => 1, 2, Json, "unpaired surrogate";
    lone_low_surrogate: r#""\udc00""# => 1, 2, Json, "unpaired surrogate";
    bad_escape: r#""\x""# => 1, 2, Json, "invalid escape";
    bad_literal: "nul" => 1, 1, Json, "expected 'null'";
    trailing_garbage: "{} {}" => 1, 4, Json, "expected the end of input";
    duplicate_key_points_at_second: "{\"a\":1,\n \"a\":2}" => 2, 2, DuplicateKey, "\"a\" appears twice";
    duplicate_key_in_nested_object: r#"[{"x":{"k":1,"j":2,"k":3}}]"# => 1, 20, DuplicateKey, "\"k\" appears twice";
}

#[test]
fn invalid_utf8_in_string_is_an_error_at_its_byte() {
    let err = json_to_variant(b"[\"ab\xFFc\"]").unwrap_err();
    assert_eq!(
        err.position(),
        Some(Position::Json {
            line: 1,
            column: 5,
            byte: 4
        })
    );
    assert!(err.message().contains("invalid UTF-8"), "{err}");
}

#[test]
fn invalid_utf8_after_valid_strings_is_an_error_at_its_byte() {
    // Strings before it, with and without multi-byte characters, come
    // from the line's valid prefix; the bad one is still found, in a value
    // or in a key.
    for (text, byte) in [
        (&b"{\"\xC3\xA9\": \"ok\", \"k\": \"a\xFFb\"}"[..], 20),
        (&b"{\"a\": \"\xE2\x82\xAC\", \"b\xC3\": 1}"[..], 15),
    ] {
        let err = json_to_variant(text).unwrap_err();
        assert!(err.message().contains("invalid UTF-8"), "{err}");
        assert_eq!(
            err.position(),
            Some(Position::Json {
                line: 1,
                column: byte as u64 + 1,
                byte: byte as u64
            }),
            "{err}"
        );
    }
}

#[test]
fn depth_limit_is_128_by_default_and_configurable() {
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(json_to_variant(nested(128).as_bytes()).is_ok());
    let err = json_to_variant(nested(129).as_bytes()).unwrap_err();
    assert!(err.message().contains("limit of 128"), "{err}");

    let parser = JsonParser::new().with_max_depth(3);
    let mut builder = VariantBuilder::new();
    assert!(parser.parse(nested(3).as_bytes(), &mut builder).is_ok());
    builder.reset();
    assert!(parser.parse(nested(4).as_bytes(), &mut builder).is_err());
}

#[test]
fn keep_last_drops_earlier_duplicates_with_their_nested_values() {
    let mut builder = VariantBuilder::new().with_duplicate_keys(DuplicateKeys::KeepLast);
    JsonParser::new()
        .parse(
            br#"{"a":{"x":[1,2]},"b":true,"a":"last","c":null,"b":false}"#,
            &mut builder,
        )
        .unwrap();
    let (m, v) = builder.finish();
    let variant = VariantRef::try_new(m, v).unwrap();
    assert_eq!(
        variant_to_json_string(&variant),
        r#"{"a":"last","b":false,"c":null}"#
    );
}

#[test]
fn builder_is_reusable_across_values() {
    let parser = JsonParser::new();
    let mut builder = VariantBuilder::new();
    for text in [r#"{"z":1,"y":[true]}"#, r#"{"a":"b"}"#, "7"] {
        builder.reset();
        parser.parse(text.as_bytes(), &mut builder).unwrap();
        let (m, v) = builder.finish();
        let json = variant_to_json_string(&VariantRef::try_new(m, v).unwrap());
        let (m2, v2) = json_to_variant(text.as_bytes()).unwrap();
        assert_eq!(
            json,
            variant_to_json_string(&VariantRef::try_new(&m2, &v2).unwrap())
        );
    }
}

/// `parse_json_column`'s rows, rendered back as JSON (`None` for null).
fn parsed_column(texts: &[Option<&str>], strict: bool) -> vshred::Result<Vec<Option<String>>> {
    parsed_column_with(texts, options(strict, DuplicateKeys::Error))
}

fn options(strict: bool, duplicate_keys: DuplicateKeys) -> ParseJsonOptions {
    ParseJsonOptions {
        strict,
        inexact_numbers: InexactNumbers::Error,
        duplicate_keys,
    }
}

fn parsed_column_with(
    texts: &[Option<&str>],
    options: ParseJsonOptions,
) -> vshred::Result<Vec<Option<String>>> {
    use arrow::array::{Array, StringArray};
    let text = StringArray::from(texts.to_vec());
    let column = vshred::shred::parse_json_column(&text, options)?;
    let json = vshred::unshred::json_strings(&column)?;
    assert_eq!(json.len(), texts.len());
    Ok((0..json.len())
        .map(|i| json.is_valid(i).then(|| json.value(i).to_string()))
        .collect())
}

#[test]
fn parse_json_column_without_strict_makes_each_bad_text_null_and_keeps_every_other_row() {
    let some = |s: &str| Some(s.to_string());
    let texts = [
        Some("1"),
        Some("x"),
        Some(r#"{"a":[2]}"#),
        None,
        Some("{\"b\":"),
        Some("[3]"),
        Some("1234567890123456789012345678901234567890"),
    ];
    assert_eq!(
        parsed_column(&texts, false).unwrap(),
        vec![
            some("1"),
            None,
            some(r#"{"a":[2]}"#),
            None,
            None,
            some("[3]"),
            None
        ]
    );
    // Every text bad, and bad texts in a row.
    let bad = [Some("x"), Some("y"), Some("{"), Some("[1,")];
    assert_eq!(parsed_column(&bad, false).unwrap(), vec![None; 4]);
    // With `strict`, the first bad text is an error naming its row.
    let e = parsed_column(&texts, true).unwrap_err();
    assert_eq!(e.row(), Some(1), "{e}");
    assert_eq!(
        parsed_column(&[], false).unwrap(),
        Vec::<Option<String>>::new()
    );
}

#[test]
fn parse_json_column_keeps_the_last_of_duplicate_keys_when_asked_before_and_after_a_bad_text() {
    let some = |s: &str| Some(s.to_string());
    let texts = [
        Some(r#"{"a":1,"a":2}"#),
        Some("x"),
        Some(r#"{"b":{"c":3,"c":4}}"#),
    ];
    assert_eq!(
        parsed_column_with(&texts, options(false, DuplicateKeys::KeepLast)).unwrap(),
        vec![some(r#"{"a":2}"#), None, some(r#"{"b":{"c":4}}"#)]
    );
    assert_eq!(
        parsed_column_with(&texts, options(false, DuplicateKeys::Error)).unwrap(),
        vec![None; 3]
    );
    let e = parsed_column_with(&texts, options(true, DuplicateKeys::Error)).unwrap_err();
    assert_eq!(
        (e.kind(), e.row()),
        (ErrorKind::DuplicateKey, Some(0)),
        "{e}"
    );
}

#[test]
fn parse_json_column_reads_a_sliced_array_from_its_offset() {
    use arrow::array::{Array, StringArray};
    let text = StringArray::from(vec!["x", "1", "{", "[2]", "y"]).slice(1, 3);
    let column =
        vshred::shred::parse_json_column(&text, options(false, DuplicateKeys::Error)).unwrap();
    let json = vshred::unshred::json_strings(&column).unwrap();
    let rows: Vec<Option<&str>> = (0..json.len())
        .map(|i| json.is_valid(i).then(|| json.value(i)))
        .collect();
    assert_eq!(rows, vec![Some("1"), None, Some("[2]")]);
}

#[test]
fn parse_json_column_of_binary_names_a_value_that_is_not_utf8_when_strict() {
    use arrow::array::{Array, BinaryArray};
    let text = BinaryArray::from(vec![&b"1"[..], &b"{\"a\":\"\xff\"}"[..], &b"[2]"[..]]);
    let e =
        vshred::shred::parse_json_column(&text, options(true, DuplicateKeys::Error)).unwrap_err();
    assert_eq!((e.kind(), e.row()), (ErrorKind::Json, Some(1)), "{e}");
    assert!(e.message().contains("not UTF-8"), "{e}");
    let column =
        vshred::shred::parse_json_column(&text, options(false, DuplicateKeys::Error)).unwrap();
    assert_eq!(column.null_count(), 1);
}
