//! JSON -> Variant -> JSON at the boundaries of the encoding, from
//! `testdata/edge-cases/` (see its README.md), plus table tests that pin
//! each boundary with inputs built here.
//!
//! Each line of `edge.jsonl` is `{"id":N,"case":NAME,"v":VALUE}`. The whole
//! line is encoded with `json_to_variant`; `v` is taken from the resulting
//! object and
//!
//! 1. its `variant_type().name()` must be the type `expected.json` gives for
//!    NAME (`null` there means more than one encoding is allowed, so any
//!    type passes). `expected.json` uses the spec's type names, which are
//!    also ours for every name it contains (`int8`..`int64`,
//!    `decimal4/8/16`, `double`, `string`, `object`, `array`, `null`);
//!    [`our_type_name`] maps the few spellings that differ elsewhere
//!    (`bool` -> `boolean`, `time_ntz` -> `time`, ...) and fails on a name
//!    we do not know, so a vocabulary mismatch cannot pass silently;
//! 2. `write_json` of `v`, parsed back, must equal the original `v`.
//!
//! # How the round trip is compared
//!
//! `serde_json` (without `arbitrary_precision`, which is not enabled) turns
//! every number into an `f64`/`i64`/`u64`, which would hide exactly the
//! digits and scales under test. So both the original line and our output
//! are read by [`RawJson`], a small reader written here that keeps each
//! number's *text* and builds objects (key -> value maps, duplicates
//! rejected) and arrays (in order). Strings are cut out as raw tokens and
//! decoded by `serde_json::from_str::<String>`, an independent decoder for
//! escapes and surrogate pairs, then compared byte for byte. Our output must
//! also parse as a `serde_json::Value`, as a check that it is valid JSON.
//!
//! Numbers follow the codec's rules from the README: a number without an
//! exponent and with at most 38 significant digits and 38 fractional digits
//! is exact (an int or a decimal) and must come back as the *same text*
//! (`1.50` stays `1.50`, `432.0` stays `432.0`); the one documented
//! exception is negative zero (`-0`, `-0.0`), which Variant ints and decimals
//! cannot hold, so it comes back without its sign. Every other number is a
//! double and compares as `f64` (parsed by Rust's correctly rounded parser),
//! including the sign of zero: `1e3` may come back as `1000.0`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vshred::json::{
    InexactNumbers, JsonParser, json_to_variant, variant_to_json_string, write_json,
};
use vshred::variant::{VariantBuilder, VariantRef};
use vshred::{ErrorKind, Position};

const DATA_DIR: &str = "testdata/edge-cases";

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_DIR);
    assert!(
        dir.join("edge.jsonl").is_file() && dir.join("expected.json").is_file(),
        "edge-case data not found: expected edge.jsonl and expected.json in {} \
         (<crate root>/{DATA_DIR}, which the repository ships: `git checkout -- testdata` \
         restores them; see its README.md)",
        dir.display()
    );
    dir
}

/// One line of `edge.jsonl`.
struct Line {
    /// Line number, from 1.
    number: usize,
    case: String,
    text: String,
}

fn lines() -> Vec<Line> {
    let path = data_dir().join("edge.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let parsed: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("edge.jsonl line {}: {e}", i + 1));
            let case = parsed["case"]
                .as_str()
                .unwrap_or_else(|| panic!("edge.jsonl line {}: no \"case\"", i + 1))
                .to_string();
            Line {
                number: i + 1,
                case,
                text: l.to_string(),
            }
        })
        .collect()
}

/// `expected.json`: case name -> type name, or `None` for "any".
fn expected() -> BTreeMap<String, Option<String>> {
    let path = data_dir().join("expected.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every name `VariantType::name` returns.
const OUR_TYPE_NAMES: &[&str] = &[
    "null",
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "double",
    "decimal4",
    "decimal8",
    "decimal16",
    "date",
    "timestamp",
    "timestamp_ntz",
    "float",
    "binary",
    "string",
    "time",
    "timestamp_nanos",
    "timestamp_ntz_nanos",
    "uuid",
    "object",
    "array",
];

/// Our name for a type in `expected.json`'s vocabulary. Identity for every
/// name the file uses today; the other arms are spellings of the spec's
/// table that differ from ours.
fn our_type_name(expected: &str) -> &str {
    let ours = match expected {
        "bool" | "boolean_true" | "boolean_false" => "boolean",
        "time_ntz" | "time_ntz_micros" => "time",
        "timestamp_micros" | "timestamp_tz" => "timestamp",
        "timestamp_ntz_micros" => "timestamp_ntz",
        "short_string" => "string",
        other => other,
    };
    assert!(
        OUR_TYPE_NAMES.contains(&ours),
        "expected.json names type {expected:?}, which has no counterpart in VariantType::name; map it in our_type_name"
    );
    ours
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Panics with every failure, one per line, if there are any.
fn report(what: &str, failures: Vec<String>, total: usize) {
    assert!(
        failures.is_empty(),
        "{what}: {} of {total} cases failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

/// Encodes one edge.jsonl line and hands `v`, its encoded bytes and the
/// line's metadata to `f`.
fn with_v<T>(line: &Line, f: impl FnOnce(VariantRef<'_>, &[u8], &[u8]) -> T) -> Result<T, String> {
    let (metadata, value) = spark_numbers(line.text.as_bytes()).map_err(|e| {
        format!(
            "line {} ({}): json_to_variant failed: {e}",
            line.number, line.case
        )
    })?;
    let root = VariantRef::try_new(&metadata, &value).map_err(|e| {
        format!(
            "line {} ({}): does not validate: {e}",
            line.number, line.case
        )
    })?;
    let object = root.as_object().ok_or(format!(
        "line {} ({}): not an object: {root:?}",
        line.number, line.case
    ))?;
    let i = object.index_of("v").ok_or(format!(
        "line {} ({}): no field \"v\"",
        line.number, line.case
    ))?;
    Ok(f(object.field(i), object.field_bytes(i), &metadata))
}

fn line_for<'a>(lines: &'a [Line], case: &str) -> &'a Line {
    lines
        .iter()
        .find(|l| l.case == case)
        .unwrap_or_else(|| panic!("edge.jsonl has no case {case:?}"))
}

// ---------------------------------------------------------------------------
// RawJson: JSON with numbers kept as text.

#[derive(Debug, PartialEq)]
enum RawJson {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<RawJson>),
    Object(BTreeMap<String, RawJson>),
}

struct RawReader<'a> {
    text: &'a str,
    pos: usize,
}

impl RawJson {
    fn parse(text: &str) -> Result<RawJson, String> {
        let mut r = RawReader { text, pos: 0 };
        let value = r.value()?;
        r.skip_whitespace();
        if r.pos != text.len() {
            return Err(format!("trailing text at byte {}", r.pos));
        }
        Ok(value)
    }
}

impl RawReader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        self.skip_whitespace();
        if self.text[self.pos..].starts_with(token) {
            self.pos += token.len();
            Ok(())
        } else {
            Err(format!("expected {token:?} at byte {}", self.pos))
        }
    }

    fn value(&mut self) -> Result<RawJson, String> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'n') => self.expect("null").map(|_| RawJson::Null),
            Some(b't') => self.expect("true").map(|_| RawJson::Bool(true)),
            Some(b'f') => self.expect("false").map(|_| RawJson::Bool(false)),
            Some(b'"') => self.string().map(RawJson::String),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.pos;
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.pos += 1;
                }
                Ok(RawJson::Number(self.text[start..self.pos].to_string()))
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(RawJson::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(RawJson::Array(items));
                        }
                        _ => return Err(format!("expected ',' or ']' at byte {}", self.pos)),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut fields = BTreeMap::new();
                self.skip_whitespace();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(RawJson::Object(fields));
                }
                loop {
                    self.skip_whitespace();
                    let key = self.string()?;
                    self.expect(":")?;
                    let value = self.value()?;
                    if fields.insert(key.clone(), value).is_some() {
                        return Err(format!("duplicate key {key:?}"));
                    }
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(RawJson::Object(fields));
                        }
                        _ => return Err(format!("expected ',' or '}}' at byte {}", self.pos)),
                    }
                }
            }
            _ => Err(format!("expected a value at byte {}", self.pos)),
        }
    }

    /// A string token, decoded by serde_json.
    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(format!("expected a string at byte {start}"));
        }
        let bytes = self.text.as_bytes();
        let mut i = start + 1;
        loop {
            match bytes.get(i) {
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
                None => return Err(format!("unterminated string at byte {start}")),
            }
        }
        self.pos = i + 1;
        let token = &self.text[start..self.pos];
        serde_json::from_str(token).map_err(|e| format!("string at byte {start}: {e}"))
    }
}

/// Whether a number token is exact under the codec's rules: no exponent, at
/// most 38 significant and 38 fractional digits.
fn is_exact_number(text: &str) -> bool {
    if text.contains(['e', 'E']) {
        return false;
    }
    let digits = text.trim_start_matches('-');
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all: String = [int, frac].concat();
    let significant = all.trim_start_matches('0').len();
    significant <= 38 && frac.len() <= 38
}

fn compare_numbers(original: &str, ours: &str) -> Result<(), String> {
    if is_exact_number(original) {
        let negative_zero =
            original.starts_with('-') && original.bytes().all(|b| matches!(b, b'-' | b'0' | b'.'));
        let expected = if negative_zero {
            &original[1..]
        } else {
            original
        };
        if ours == expected {
            Ok(())
        } else {
            Err(format!("exact number {original} came back as {ours}"))
        }
    } else {
        let a: f64 = original.parse().map_err(|e| format!("{original}: {e}"))?;
        let b: f64 = ours.parse().map_err(|e| format!("{ours}: {e}"))?;
        if a == b && a.is_sign_negative() == b.is_sign_negative() {
            Ok(())
        } else {
            Err(format!(
                "double {original} ({a:e}) came back as {ours} ({b:e})"
            ))
        }
    }
}

/// Compares the original `v` with ours; the error names the first path that
/// differs.
fn compare(original: &RawJson, ours: &RawJson, path: &str) -> Result<(), String> {
    let differ = || {
        let show = |v: &RawJson| {
            let s = format!("{v:?}");
            if s.len() > 120 {
                format!("{}...", prefix(&s, 120))
            } else {
                s
            }
        };
        Err(format!("{path}: {} vs ours {}", show(original), show(ours)))
    };
    match (original, ours) {
        (RawJson::Number(a), RawJson::Number(b)) => {
            compare_numbers(a, b).map_err(|e| format!("{path}: {e}"))
        }
        (RawJson::Array(a), RawJson::Array(b)) => {
            if a.len() != b.len() {
                return Err(format!("{path}: {} elements vs ours {}", a.len(), b.len()));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(x, y, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        (RawJson::Object(a), RawJson::Object(b)) => {
            if !a.keys().eq(b.keys()) {
                let missing: Vec<_> = a.keys().filter(|k| !b.contains_key(*k)).collect();
                let extra: Vec<_> = b.keys().filter(|k| !a.contains_key(*k)).collect();
                return Err(format!("{path}: keys missing {missing:?}, extra {extra:?}"));
            }
            for (k, x) in a {
                compare(x, &b[k], &format!("{path}.{k:?}"))?;
            }
            Ok(())
        }
        (a, b) if a == b => Ok(()),
        _ => differ(),
    }
}

/// The original `v` of a line, numbers as text.
fn original_v(line: &Line) -> Result<RawJson, String> {
    match RawJson::parse(&line.text) {
        Ok(RawJson::Object(mut fields)) => fields
            .remove("v")
            .ok_or(format!("line {}: no \"v\"", line.number)),
        Ok(other) => Err(format!("line {}: not an object: {other:?}", line.number)),
        Err(e) => Err(format!("line {}: {e}", line.number)),
    }
}

// ---------------------------------------------------------------------------
// The edge-case file.

#[test]
fn edge_file_and_expected_json_list_the_same_cases() {
    let lines = lines();
    let expected = expected();
    assert_eq!(lines.len(), 66, "edge.jsonl should have 66 lines");
    let mut names: Vec<&str> = lines.iter().map(|l| l.case.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), lines.len(), "case names must be unique");
    let listed: Vec<&str> = expected.keys().map(String::as_str).collect();
    assert_eq!(
        names, listed,
        "edge.jsonl and expected.json must name the same cases"
    );
    for t in expected.values().flatten() {
        our_type_name(t);
    }
}

#[test]
fn raw_json_reader_keeps_number_text_and_decodes_strings() {
    let parsed =
        RawJson::parse(r#" {"a": [1.50, -0, 1e3], "\u00e9\"": "x\ud83d\ude00\n", "n": null} "#)
            .expect("parses");
    let expected = RawJson::Object(BTreeMap::from([
        (
            "a".to_string(),
            RawJson::Array(vec![
                RawJson::Number("1.50".into()),
                RawJson::Number("-0".into()),
                RawJson::Number("1e3".into()),
            ]),
        ),
        ("é\"".to_string(), RawJson::String("x😀\n".into())),
        ("n".to_string(), RawJson::Null),
    ]));
    assert_eq!(parsed, expected);
    assert!(RawJson::parse(r#"{"a":1,"a":2}"#).is_err());
    assert!(compare_numbers("1.50", "1.5").is_err());
    assert!(compare_numbers("-0.0", "0.0").is_ok());
    assert!(compare_numbers("1e3", "1000.0").is_ok());
    assert!(compare_numbers("-0e0", "0.0").is_err());
    assert!(
        compare_numbers(
            "123456789012345678901234567890123456789",
            "1.2345678901234568e38"
        )
        .is_ok()
    );
}

#[test]
fn every_edge_case_has_the_expected_type() {
    let lines = lines();
    let expected = expected();
    let mut failures = Vec::new();
    for line in &lines {
        let Some(want) = expected.get(&line.case) else {
            failures.push(format!(
                "line {} ({}): not in expected.json",
                line.number, line.case
            ));
            continue;
        };
        match with_v(line, |v, _, _| v.variant_type().name()) {
            Ok(got) => {
                if let Some(want) = want
                    && got != our_type_name(want)
                {
                    failures.push(format!(
                        "line {} ({}): type {got}, expected {want}",
                        line.number, line.case
                    ));
                }
            }
            Err(e) => failures.push(e),
        }
    }
    report("type", failures, lines.len());
}

#[test]
fn every_edge_case_round_trips_through_json() {
    let lines = lines();
    let mut failures = Vec::new();
    for line in &lines {
        let result = with_v(line, |v, _, _| {
            let mut out = Vec::new();
            write_json(&v, &mut out);
            out
        })
        .and_then(|out| {
            let out = String::from_utf8(out).map_err(|e| format!("output is not UTF-8: {e}"))?;
            serde_json::from_str::<serde_json::Value>(&out)
                .map_err(|e| format!("output is not valid JSON ({e})"))?;
            let ours = RawJson::parse(&out).map_err(|e| format!("output: {e}"))?;
            compare(&original_v(line)?, &ours, "v")
        });
        if let Err(e) = result {
            failures.push(format!("line {} ({}): {e}", line.number, line.case));
        }
    }
    report("round trip", failures, lines.len());
}

/// Header bits of `v` for the boundary cases of the file itself.
#[test]
fn boundary_cases_in_the_edge_file_have_the_expected_headers() {
    let lines = lines();
    let header = |case: &str| with_v(line_for(&lines, case), |_, bytes, _| bytes[0]).expect(case);
    let is_large = |h: u8, object: bool| h & if object { 1 << 6 } else { 1 << 4 } != 0;
    let offset_size = |h: u8| ((h >> 2) & 0b11) + 1;
    let field_id_size = |h: u8| ((h >> 4) & 0b11) + 1;

    assert_eq!(header("string 63 bytes"), 63 << 2 | 1, "short string of 63");
    assert_eq!(header("string 64 bytes"), 16 << 2, "long string");
    assert_eq!(
        header("string 62 bytes + 2-byte char"),
        16 << 2,
        "64 bytes: long string"
    );
    assert_eq!(header("string empty"), 1, "short string of 0");
    assert!(!is_large(header("object 255 fields"), true));
    assert!(is_large(header("object 256 fields"), true));
    assert!(!is_large(header("array 255 elements"), false));
    assert!(is_large(header("array 256 elements"), false));
    assert_eq!(offset_size(header("array offsets over 65535")), 3);
    assert_eq!(offset_size(header("object offsets over 65535")), 3);
    assert_eq!(field_id_size(header("metadata over 255 keys")), 2);
    let metadata_offset_size = |case: &str| {
        with_v(line_for(&lines, case), |_, _, metadata| {
            (metadata[0] >> 6) + 1
        })
        .expect(case)
    };
    assert_eq!(metadata_offset_size("metadata over 65535 bytes"), 3);
    assert_eq!(metadata_offset_size("metadata over 255 keys"), 2);
}

// ---------------------------------------------------------------------------
// Boundaries, with inputs built here.

/// Encodes `text` and returns (metadata, value); panics with the error.
/// Numbers that no decimal holds become doubles, as the expected results
/// (Spark's parse_json) have them; the default, an error, is tested in
/// `json_text.rs`.
fn encode(text: &str) -> (Vec<u8>, Vec<u8>) {
    spark_numbers(text.as_bytes()).unwrap_or_else(|e| panic!("{}: {e}", prefix(text, 80)))
}

/// `json_to_variant`, with numbers that no decimal holds as doubles.
fn spark_numbers(text: &[u8]) -> vshred::Result<(Vec<u8>, Vec<u8>)> {
    let mut builder = VariantBuilder::new();
    JsonParser::new()
        .with_inexact_numbers(InexactNumbers::Double)
        .parse(text, &mut builder)?;
    Ok(builder.into_parts())
}

fn type_of(text: &str) -> &'static str {
    let (m, v) = encode(text);
    VariantRef::try_new(&m, &v)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .variant_type()
        .name()
}

fn json_of(text: &str) -> String {
    let (m, v) = encode(text);
    variant_to_json_string(&VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{text}: {e}")))
}

#[test]
fn int_127_is_int8() {
    let (m, v) = encode("127");
    assert_eq!(v, [3 << 2, 127]);
    assert_eq!(
        VariantRef::try_new(&m, &v).unwrap().variant_type().name(),
        "int8"
    );
}

#[test]
fn int_128_is_int16() {
    let (m, v) = encode("128");
    assert_eq!(v, [4 << 2, 128, 0]);
    assert_eq!(
        VariantRef::try_new(&m, &v).unwrap().variant_type().name(),
        "int16"
    );
}

#[test]
fn integers_take_the_smallest_type_that_holds_them() {
    for (text, ty) in [
        ("0", "int8"),
        ("-0", "int8"),
        ("127", "int8"),
        ("-128", "int8"),
        ("128", "int16"),
        ("-129", "int16"),
        ("32767", "int16"),
        ("-32768", "int16"),
        ("32768", "int32"),
        ("-32769", "int32"),
        ("2147483647", "int32"),
        ("-2147483648", "int32"),
        ("2147483648", "int64"),
        ("-2147483649", "int64"),
        ("9223372036854775807", "int64"),
        ("-9223372036854775808", "int64"),
        ("9223372036854775808", "decimal16"),
        ("-9223372036854775809", "decimal16"),
        ("99999999999999999999999999999999999999", "decimal16"),
        ("100000000000000000000000000000000000000", "double"),
    ] {
        assert_eq!(type_of(text), ty, "{text}");
        if ty != "double" {
            // Negative zero has no int encoding: "-0" comes back as "0".
            let expected = if text == "-0" { "0" } else { text };
            assert_eq!(json_of(text), expected, "{text}");
        }
    }
}

#[test]
fn decimal_432_0_is_decimal4_with_scale_1() {
    let (m, v) = encode("432.0");
    // decimal4 header, scale 1, unscaled 4320 little-endian.
    assert_eq!(v, [8 << 2, 1, 0xE0, 0x10, 0, 0]);
    let variant = VariantRef::try_new(&m, &v).unwrap();
    assert_eq!(variant.variant_type().name(), "decimal4");
    let d = variant.as_decimal().unwrap();
    assert_eq!((d.unscaled(), d.scale()), (4320, 1));
    assert_eq!(variant_to_json_string(&variant), "432.0");
}

#[test]
fn decimals_take_the_smallest_type_that_holds_digits_and_scale() {
    for (text, ty, scale) in [
        ("1.5", "decimal4", 1),
        ("1.50", "decimal4", 2),
        ("-0.5", "decimal4", 1),
        ("0.0", "decimal4", 1),
        ("0.000000001", "decimal4", 9),
        ("99999999.9", "decimal4", 1),
        ("999999999.9", "decimal8", 1),
        ("0.0000000001", "decimal8", 10),
        ("99999.99999", "decimal8", 5),
        ("99999999999999999.9", "decimal8", 1),
        ("123456789012345678.9", "decimal16", 1),
        ("0.00000000000000000000000000000000000001", "decimal16", 38),
        ("1234567890123456789012345678.9012345678", "decimal16", 10),
    ] {
        let (m, v) = encode(text);
        let variant = VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(variant.variant_type().name(), ty, "{text}");
        assert_eq!(
            variant.as_decimal().map(|d| d.scale()),
            Some(scale),
            "{text}"
        );
        assert_eq!(variant_to_json_string(&variant), text, "{text}");
    }
}

#[test]
fn exponents_and_too_many_digits_make_doubles() {
    for (text, value) in [
        ("1e10", 1e10),
        ("1E-5", 1e-5),
        ("-2.5e+3", -2500.0),
        ("0e0", 0.0),
        ("1.7976931348623157e308", f64::MAX),
        ("5e-324", 5e-324),
        (
            "1234567890123456789012345678.90123456789",
            1.2345678901234568e27,
        ),
        ("0.000000000000000000000000000000000000001", 1e-39),
    ] {
        let (m, v) = encode(text);
        let variant = VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(variant.variant_type().name(), "double", "{text}");
        assert_eq!(variant.as_f64(), Some(value), "{text}");
    }
}

/// The first value byte of a JSON string of `len` ASCII bytes.
fn string_header(s: &str) -> (u8, Vec<u8>) {
    let (_, v) = encode(&serde_json::to_string(s).unwrap());
    (v[0], v)
}

#[test]
fn string_of_63_bytes_is_a_short_string() {
    let s = "a".repeat(63);
    let (header, v) = string_header(&s);
    assert_eq!(header & 0b11, 1, "basic type short string");
    assert_eq!(header >> 2, 63, "length in the header");
    assert_eq!(&v[1..], s.as_bytes());
}

#[test]
fn string_of_64_bytes_is_a_long_string() {
    let s = "a".repeat(64);
    let (header, v) = string_header(&s);
    assert_eq!(header & 0b11, 0, "basic type primitive");
    assert_eq!(header >> 2, 16, "primitive type string");
    assert_eq!(v[1..5], 64u32.to_le_bytes());
    assert_eq!(&v[5..], s.as_bytes());
}

#[test]
fn string_length_counts_bytes_not_characters() {
    // 61 + 2 = 63 bytes: short; 62 + 2 = 64 bytes: long.
    let short = "a".repeat(61) + "é";
    assert_eq!(string_header(&short).0, 63 << 2 | 1);
    let long = "a".repeat(62) + "é";
    assert_eq!(string_header(&long).0, 16 << 2);
}

fn object_of(fields: usize, value: impl Fn(usize) -> String) -> String {
    let body: Vec<String> = (0..fields)
        .map(|i| format!("\"k{i:05}\":{}", value(i)))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn array_of(elements: usize, value: impl Fn(usize) -> String) -> String {
    let body: Vec<String> = (0..elements).map(value).collect();
    format!("[{}]", body.join(","))
}

#[test]
fn object_with_256_fields_sets_is_large_and_255_does_not() {
    for (fields, large) in [(255, false), (256, true)] {
        let (_, v) = encode(&object_of(fields, |i| i.to_string()));
        assert_eq!(v[0] & 0b11, 2, "object");
        assert_eq!(
            v[0] & 1 << 6 != 0,
            large,
            "{fields} fields: header {:#010b}",
            v[0]
        );
        let count = if large {
            u32::from_le_bytes(v[1..5].try_into().unwrap()) as usize
        } else {
            v[1] as usize
        };
        assert_eq!(count, fields);
    }
}

#[test]
fn array_with_256_elements_sets_is_large_and_255_does_not() {
    for (elements, large) in [(255, false), (256, true)] {
        let (_, v) = encode(&array_of(elements, |i| i.to_string()));
        assert_eq!(v[0] & 0b11, 3, "array");
        assert_eq!(
            v[0] & 1 << 4 != 0,
            large,
            "{elements} elements: header {:#010b}",
            v[0]
        );
    }
}

#[test]
fn offsets_over_65535_use_three_bytes() {
    // One long string of n bytes takes 5 + n bytes: the last offset is that.
    let offset_size = |v: &[u8]| ((v[0] >> 2) & 0b11) + 1;
    for (data_len, size) in [(255, 1), (256, 2), (65535, 2), (65536, 3)] {
        let s = "x".repeat(data_len - 5);
        let (_, v) = encode(&format!("[\"{s}\"]"));
        assert_eq!(
            offset_size(&v),
            size,
            "array with {data_len} bytes of values"
        );
        let (_, v) = encode(&format!("{{\"a\":\"{s}\"}}"));
        assert_eq!(
            offset_size(&v),
            size,
            "object with {data_len} bytes of values"
        );
    }
    // Many elements, as in the edge file.
    let (_, v) = encode(&array_of(300, |i| {
        format!("\"{}\"", "y".repeat(300 + i % 2))
    }));
    assert_eq!(offset_size(&v), 3);
}

#[test]
fn metadata_over_65535_bytes_uses_three_byte_offsets() {
    let metadata_offset_size = |text: &str| (encode(text).0[0] >> 6) + 1;
    for (name_len, size) in [(255, 1), (256, 2), (65535, 2), (65536, 3)] {
        let text = format!("{{\"{}\":1}}", "k".repeat(name_len));
        assert_eq!(
            metadata_offset_size(&text),
            size,
            "one key of {name_len} bytes"
        );
    }
    // 3000 keys of 10 bytes: 30000 bytes, 2-byte offsets; of 30 bytes: 90000.
    let keys = |width: usize| {
        let body: Vec<String> = (0..3000)
            .map(|i| format!("\"{i:0width$}\":{}", i % 100))
            .collect();
        format!("{{{}}}", body.join(","))
    };
    assert_eq!(metadata_offset_size(&keys(10)), 2);
    assert_eq!(metadata_offset_size(&keys(30)), 3);
}

#[test]
fn metadata_over_255_keys_uses_two_byte_field_ids() {
    for (fields, id_size) in [(256, 1), (257, 2)] {
        let (_, v) = encode(&object_of(fields, |_| "0".into()));
        assert_eq!(((v[0] >> 4) & 0b11) + 1, id_size, "{fields} fields");
    }
}

fn nested_arrays(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

fn nested_objects(depth: usize) -> String {
    "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth)
}

#[test]
fn nesting_depth_100_parses_with_the_default_limit() {
    for text in [nested_arrays(100), nested_objects(100)] {
        let (m, v) = encode(&text);
        let variant = VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(variant_to_json_string(&variant), text);
    }
}

#[test]
fn nesting_depth_128_is_the_default_limit() {
    for text in [nested_arrays(128), nested_objects(128)] {
        let (m, v) = encode(&text);
        VariantRef::try_new(&m, &v).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn nesting_depth_129_fails_naming_the_limit_on_line_1() {
    // The error points at the opening bracket that goes one level too deep.
    for (text, at) in [(nested_arrays(129), 128), (nested_objects(129), 128 * 5)] {
        let e = json_to_variant(text.as_bytes()).expect_err("129 levels must fail");
        assert_eq!(e.kind(), ErrorKind::Json, "{e}");
        assert!(
            e.message().contains("128"),
            "message should name the limit: {e}"
        );
        assert!(e.message().contains("limit"), "{e}");
        match e.position() {
            Some(Position::Json { line, column, byte }) => {
                assert_eq!(line, 1, "{e}");
                assert_eq!((byte, column), (at as u64, at as u64 + 1), "{e}");
            }
            other => panic!("expected a JSON position, got {other:?}: {e}"),
        }
    }
}

#[test]
fn a_lower_depth_limit_is_honoured() {
    let parser = JsonParser::new().with_max_depth(3);
    let mut builder = VariantBuilder::new();
    parser.parse(b"[[[1]]]", &mut builder).expect("3 levels");
    builder.reset();
    let e = parser
        .parse(b"[[[[1]]]]", &mut builder)
        .expect_err("4 levels");
    assert!(e.message().contains("limit of 3"), "{e}");
}
