//! Untrusted JSON text: parsing must never panic; what parses must validate
//! and survive Variant -> JSON -> Variant; errors must point inside the
//! text; and accept/reject must agree with serde_json (JSON grammar), up to
//! the documented differences:
//!
//! - duplicate keys: rejected by default (serde_json keeps the last value);
//!   with `DuplicateKeys::KeepLast` we must accept them and keep the last
//!   value too;
//! - numbers without an exponent that no decimal holds (more than 38
//!   digits): rejected by default (serde_json rounds them to a double);
//!   with `InexactNumbers::Double` we must accept them as the nearest
//!   double too;
//! - nesting: serde_json stops at 127 levels, we at `DEFAULT_MAX_DEPTH`
//!   (128), so input nested exactly 128 deep is ours alone.
//!
//! Where both accept (with `KeepLast` and `Double`), the two trees must match: same
//! structure, same strings, same keys, same numbers (exact for integers, as
//! the nearest double otherwise; serde_json is built with `float_roundtrip`
//! so its doubles are correctly rounded like ours).

#![no_main]

use arrow::array::{Array, AsArray, StructArray};
use arrow::datatypes::Int32Type;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vshred::json::{InexactNumbers, JsonParser, write_json};
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::explode::variant_explode_outer;
use vshred::unshred::{json_strings, unshred};
use vshred::variant::{DEFAULT_MAX_DEPTH, DuplicateKeys, VariantBuilder, VariantRef};
use vshred::{Error, ErrorKind, Position};

fuzz_target!(|data: &[u8]| {
    let parser = JsonParser::new();
    let serde = serde_json::from_slice::<Value>(data);

    // Default policies: duplicate keys and numbers no decimal holds are
    // errors.
    let mut strict = VariantBuilder::new();
    let strict_result = parser.parse(data, &mut strict);
    if let Err(e) = &strict_result {
        check_error(e, data);
    }
    if let Ok(inexact) = strict_result {
        assert_eq!(inexact, 0, "the default counted inexact numbers");
    }

    // Last value wins and such numbers are doubles, like serde_json.
    let lenient_parser = JsonParser::new().with_inexact_numbers(InexactNumbers::Double);
    let mut lenient = VariantBuilder::new().with_duplicate_keys(DuplicateKeys::KeepLast);
    let lenient_result = lenient_parser.parse(data, &mut lenient);
    if let Err(e) = &lenient_result {
        check_error(e, data);
        assert!(!is_duplicate_key(e), "KeepLast reported a duplicate: {e}");
        assert!(
            !is_inexact_number(e),
            "Double reported an inexact number: {e}"
        );
    }

    match (&strict_result, &lenient_result) {
        (Ok(_), Ok(0)) => {
            // Without duplicates or inexact numbers both build the same bytes.
            assert_eq!(strict.finish(), lenient.finish());
        }
        (Ok(_), Ok(n)) => panic!("the strict policy accepted {n} inexact numbers"),
        (Err(e), Ok(_)) => assert!(
            is_duplicate_key(e) || is_inexact_number(e),
            "only the lenient policies accepted: {e}"
        ),
        (Ok(_), Err(e)) => panic!("only the strict policy accepted: {e}"),
        (Err(_), Err(_)) => {}
    }

    match (&lenient_result, &serde) {
        (Ok(_), Ok(expected)) => {
            let (m, v) = lenient.finish();
            let v = VariantRef::try_new(m, v).expect("parsed Variant validates");
            round_trip(&v);
            assert!(
                matches_serde(&v, expected),
                "differs from serde_json\nours:  {v:?}\nserde: {expected:?}"
            );
        }
        (Ok(_), Err(e)) => {
            // Nested exactly 128 deep: over serde_json's limit, within ours.
            assert!(
                e.to_string().contains("recursion limit exceeded"),
                "serde_json rejects what we accept: {e}"
            );
            let (m, v) = lenient.finish();
            let v = VariantRef::try_new(m, v).expect("parsed Variant validates");
            assert_eq!(depth(&v), DEFAULT_MAX_DEPTH, "{e}");
            round_trip(&v);
        }
        (Err(e), Ok(_)) => panic!("we reject what serde_json accepts: {e}"),
        (Err(_), Err(_)) => {}
    }

    shreds_as_it_parses(data, strict_result.is_ok().then(|| strict.finish()));

    // A builder reset after any of the above (even a failed parse) works
    // like a new one.
    strict.reset();
    let again = parser.parse(data, &mut strict);
    assert_eq!(again.is_ok(), strict_result.is_ok());
    if again.is_ok() {
        let mut fresh = VariantBuilder::new();
        parser.parse(data, &mut fresh).expect("parsed once already");
        assert_eq!(strict.finish(), fresh.finish(), "reset builder differs");
    }
});

/// The shredder reads the text itself, guessing each key from the keys
/// before it and comparing the guess with the text; it must accept what the
/// parser accepts (`parsed`) and give back the same value. The text is
/// shredded twice, so that the second row is read with the first's guesses.
fn shreds_as_it_parses(data: &[u8], parsed: Option<(&[u8], &[u8])>) {
    let schema: ShreddingSchema =
        r#"{"a":"int64","ab":"string","b":{"a":"variant","c":["int64"]},"c":[{"a":"string"}],"\"":"boolean"}"#
            .parse()
            .expect("a valid layout");
    let mut shredder = Shredder::new(&schema);
    for _ in 0..2 {
        let result = shredder.append_json(data);
        assert_eq!(
            result.is_ok(),
            parsed.is_some(),
            "the shredder and the parser disagree: {result:?}"
        );
        if let Err(e) = &result {
            check_error(e, data);
            return;
        }
    }
    let (m, v) = parsed.expect("accepted");
    let want = VariantRef::try_new(m, v).expect("parsed Variant validates");
    let shredded = shredder.finish();
    let column = unshred(&shredded).expect("a shredded column reconstructs");
    assert_eq!(
        exploded(&shredded),
        exploded(&column),
        "a shredded row splits otherwise than its reconstruction"
    );
    let metadata = column.column(0).as_binary::<i32>();
    let value = column.column(1).as_binary::<i32>();
    for row in 0..2 {
        let got = VariantRef::try_new(metadata.value(row), value.value(row))
            .expect("a reconstructed Variant validates");
        assert!(
            got == want,
            "row {row} shredded as {got:?}, parsed as {want:?}"
        );
    }
}

/// Each row's entries of `variant_explode_outer`, each as its position,
/// key and value as JSON.
fn exploded(column: &StructArray) -> Vec<(Option<i32>, Option<String>, Option<String>)> {
    let list = variant_explode_outer(column).expect("a valid column explodes");
    let entries = list.values().as_struct();
    let pos = entries.column(0).as_primitive::<Int32Type>();
    let key = entries.column(1).as_string::<i32>();
    let value = json_strings(entries.column(2).as_struct()).expect("entries are valid");
    (0..entries.len())
        .map(|i| {
            (
                pos.is_valid(i).then(|| pos.value(i)),
                key.is_valid(i).then(|| key.value(i).to_string()),
                value.is_valid(i).then(|| value.value(i).to_string()),
            )
        })
        .collect()
}

/// Variant -> JSON -> Variant gives the same value, and the JSON text is a
/// fixed point. Only doubles may change type: a double prints as e.g.
/// `100000.0`, which reads back as an exact decimal of the same value; a
/// double -0.0 prints as `-0.0`, which reads back as the decimal 0.0 (no
/// negative zero), so its text becomes `0.0` after one round.
fn round_trip(v: &VariantRef<'_>) {
    let json = to_json(v);
    let (m, w) = parse(&json);
    let w = VariantRef::try_new(&m, &w).expect("re-parsed Variant validates");
    assert!(
        same_value(v, &w),
        "JSON round trip changed the value\n{v:?}\n{w:?}"
    );
    let json2 = to_json(&w);
    if has_negative_zero(v) {
        // From the second round on, the text is stable.
        let (m, x) = parse(&json2);
        let x = VariantRef::try_new(&m, &x).expect("re-parsed Variant validates");
        assert_eq!(
            String::from_utf8_lossy(&json2),
            String::from_utf8_lossy(&to_json(&x)),
            "JSON text is not a fixed point after two rounds"
        );
    } else {
        assert_eq!(
            String::from_utf8_lossy(&json),
            String::from_utf8_lossy(&json2),
            "JSON text is not a fixed point"
        );
    }
}

fn to_json(v: &VariantRef<'_>) -> Vec<u8> {
    let mut json = Vec::new();
    write_json(v, &mut json);
    json
}

/// Parses our own JSON output, which must succeed.
fn parse(json: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut builder = VariantBuilder::new();
    if let Err(e) = JsonParser::new().parse(json, &mut builder) {
        panic!(
            "our JSON does not parse: {e}\n{}",
            String::from_utf8_lossy(json)
        );
    }
    builder.into_parts()
}

fn has_negative_zero(v: &VariantRef<'_>) -> bool {
    match v {
        VariantRef::Double(x) => *x == 0.0 && x.is_sign_negative(),
        VariantRef::Object(o) => o.iter().any(|(_, x)| has_negative_zero(&x)),
        VariantRef::Array(a) => a.iter().any(|x| has_negative_zero(&x)),
        _ => false,
    }
}

/// `==`, except that a double may equal an exact numeric of the same value.
fn same_value(a: &VariantRef<'_>, b: &VariantRef<'_>) -> bool {
    match (a, b) {
        (VariantRef::Double(x), _) if b.as_decimal().is_some() => Some(*x) == to_f64(b),
        (_, VariantRef::Double(y)) if a.as_decimal().is_some() => to_f64(a) == Some(*y),
        (VariantRef::Object(x), VariantRef::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_value(&vx, &vy))
        }
        (VariantRef::Array(x), VariantRef::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(&p, &q))
        }
        _ => a == b,
    }
}

/// Any JSON number of ours as the nearest double.
fn to_f64(v: &VariantRef<'_>) -> Option<f64> {
    v.as_f64().or_else(|| v.as_decimal().map(|d| d.to_f64()))
}

fn matches_serde(v: &VariantRef<'_>, expected: &Value) -> bool {
    match expected {
        Value::Null => v.is_null(),
        Value::Bool(b) => v.as_bool() == Some(*b),
        Value::String(s) => v.as_str() == Some(s.as_str()),
        Value::Number(n) => {
            let exact = n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
            match exact {
                Some(x) => v
                    .as_decimal()
                    .is_some_and(|d| d.scale() == 0 && d.unscaled() == x),
                None => to_f64(v) == n.as_f64(),
            }
        }
        Value::Array(items) => v.as_array().is_some_and(|a| {
            a.len() == items.len() && a.iter().zip(items).all(|(x, y)| matches_serde(&x, y))
        }),
        // serde_json's map is a BTreeMap: keys in byte order, like ours.
        Value::Object(map) => v.as_object().is_some_and(|o| {
            o.len() == map.len()
                && o.iter()
                    .zip(map)
                    .all(|((k, x), (kk, y))| k == kk && matches_serde(&x, y))
        }),
    }
}

fn depth(v: &VariantRef<'_>) -> usize {
    match v {
        VariantRef::Object(o) => 1 + o.iter().map(|(_, x)| depth(&x)).max().unwrap_or(0),
        VariantRef::Array(a) => 1 + a.iter().map(|x| depth(&x)).max().unwrap_or(0),
        _ => 0,
    }
}

fn is_inexact_number(e: &Error) -> bool {
    e.kind() == ErrorKind::InexactNumber
}

fn is_duplicate_key(e: &Error) -> bool {
    e.kind() == ErrorKind::DuplicateKey
}

/// A JSON error points inside the text, with a consistent line and column.
fn check_error(e: &Error, text: &[u8]) {
    let _ = e.to_string();
    match e.position() {
        Some(Position::Json { line, column, byte }) => {
            let byte = usize::try_from(byte).expect("byte offset fits usize");
            assert!(byte <= text.len(), "{e} (text has {} bytes)", text.len());
            let before = &text[..byte];
            let newlines = before.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(line, 1 + newlines, "{e}");
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            assert_eq!(column, (byte - line_start) as u64 + 1, "{e}");
        }
        other => panic!("JSON error without a text position: {other:?}: {e}"),
    }
}
