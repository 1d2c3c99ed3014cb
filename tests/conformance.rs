//! Conformance against apache/parquet-testing's `variant/` folder (copied to
//! `testdata/parquet-testing/variant`, see `testdata/parquet-testing/README.md`).
//!
//! Every `NAME.metadata` + `NAME.value` pair must validate with
//! `VariantRef::try_new`, have the type its name says, decode to the value
//! `data_dictionary.json` gives for `NAME`, survive re-encoding through
//! `VariantBuilder::append`, and fail cleanly (an error inside the input,
//! never a panic) when cut short at any byte.
//!
//! When the folder is missing every test here fails with a hint saying where
//! the data is expected: a conformance suite that passes on no data is worse
//! than none.
//!
//! # How `data_dictionary.json` is read and compared
//!
//! The dictionary was printed by Python, and it shows:
//!
//! - **A trailing comma** after the last entry, which strict JSON parsers
//!   reject. [`strip_trailing_commas`] removes every comma whose next
//!   non-whitespace character closes an object or array (outside strings)
//!   before `serde_json` parses the text.
//! - **Numbers are Python floats**, so decimals lose digits: decimal16
//!   `12345678912345678.90` is printed `1.2345678912345678e+16`, decimal8
//!   `12345678.90` is `12345678.9`, the decimal4 `1.23456789` inside
//!   `object_primitive` is named `double_field`; and the float `1234567936`
//!   (the f32 nearest 1234567890) is printed with f32 shortest digits as
//!   `1234567940.0`. The comparison is therefore driven by the *decoded*
//!   type: integers compare exactly (`i64`); doubles exactly as `f64`;
//!   decimals by their nearest `f64` (`VariantDecimal::to_f64`) against the
//!   dictionary's `f64`; floats by rounding the dictionary's number to `f32`.
//!   Since that is lossy, [`lossy_dictionary_values_decode_exactly`] pins the
//!   exact unscaled values and scales read from the bytes by hand.
//! - **Dates, times, timestamps, binaries and UUIDs are strings**, parsed here
//!   independently of the crate's JSON writer: dates `YYYY-MM-DD` to days
//!   since the epoch; the time as `12:33:54:123456` (note the `:` before the
//!   fraction; `.` is accepted too) to microseconds; timestamps
//!   `YYYY-MM-DD[ T]HH:MM:SS[.fraction][±HH:MM|Z]` to micros or nanos, with
//!   the offset applied for the UTC types (`12:34:56.78-04:00` is
//!   `16:34:56.78Z`) and required to be absent for the NTZ types; binaries as
//!   base64; UUIDs as hyphenated hex.
//! - Strings that *look* like timestamps (`object_primitive.timestamp_field`,
//!   `object_nested.observation.time`) are encoded as strings in the files;
//!   since comparison follows the decoded type, they compare as strings.
//! - **`long_string` has files but no dictionary entry**. It is listed in
//!   [`NOT_IN_DICTIONARY`] and checked against its text, pinned here from the
//!   bytes; any other file without an entry, or entry without files, fails.
//! - Objects compare as key -> value maps (both sides sorted by byte order),
//!   arrays in order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use vshred::json::variant_to_json_string;
use vshred::variant::{DEFAULT_MAX_DEPTH, Metadata, VariantBuilder, VariantDecimal, VariantRef};
use vshred::{Position, VariantPart};

/// Where the data is expected, relative to the crate root.
const DATA_DIR: &str = "testdata/parquet-testing/variant";

/// Files whose dictionary entry is missing upstream, with the string they hold.
const NOT_IN_DICTIONARY: &[(&str, &str)] = &[(
    "long_string",
    "This string is for sure and certainly longer than 64 bytes and it also includes \
     several non ascii characters such as 🐢, 💖, ♥️, 🎣 and 🤦!!",
)];

/// The Variant type (`VariantType::name`) each file must decode to.
const EXPECTED_TYPES: &[(&str, &str)] = &[
    ("array_empty", "array"),
    ("array_nested", "array"),
    ("array_primitive", "array"),
    ("long_string", "string"),
    ("object_empty", "object"),
    ("object_nested", "object"),
    ("object_primitive", "object"),
    ("primitive_binary", "binary"),
    ("primitive_boolean_false", "boolean"),
    ("primitive_boolean_true", "boolean"),
    ("primitive_date", "date"),
    ("primitive_decimal16", "decimal16"),
    ("primitive_decimal4", "decimal4"),
    ("primitive_decimal8", "decimal8"),
    ("primitive_double", "double"),
    ("primitive_float", "float"),
    ("primitive_int16", "int16"),
    ("primitive_int32", "int32"),
    ("primitive_int64", "int64"),
    ("primitive_int8", "int8"),
    ("primitive_null", "null"),
    ("primitive_string", "string"),
    ("primitive_time", "time"),
    ("primitive_timestamp", "timestamp"),
    ("primitive_timestamp_nanos", "timestamp_nanos"),
    ("primitive_timestampntz", "timestamp_ntz"),
    ("primitive_timestampntz_nanos", "timestamp_ntz_nanos"),
    ("primitive_uuid", "uuid"),
    ("short_string", "string"),
];

/// One `NAME.metadata` + `NAME.value` pair.
struct Case {
    name: String,
    metadata: Vec<u8>,
    value: Vec<u8>,
}

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA_DIR);
    assert!(
        dir.is_dir(),
        "parquet-testing Variant data not found at {}: expected the `variant/` folder of \
         apache/parquet-testing (commit 1a2a7512) at <crate root>/{DATA_DIR}, which the \
         repository ships (`git checkout -- testdata` restores it; see \
         testdata/parquet-testing/README.md)",
        dir.display()
    );
    dir
}

/// All pairs in the folder, sorted by name; fails on a half pair.
fn cases() -> Vec<Case> {
    let dir = data_dir();
    let mut names = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        let (Some(stem), Some(ext)) = (path.file_stem(), path.extension()) else {
            continue;
        };
        let (stem, ext) = (stem.to_string_lossy(), ext.to_string_lossy());
        if ext == "metadata" || ext == "value" {
            names
                .entry(stem.into_owned())
                .or_insert_with(Vec::new)
                .push(ext.into_owned());
        }
    }
    let cases: Vec<Case> = names
        .into_iter()
        .map(|(name, exts)| {
            assert_eq!(
                exts.len(),
                2,
                "{name}: expected both {name}.metadata and {name}.value, found only .{}",
                exts[0]
            );
            let read = |ext: &str| {
                let path = dir.join(format!("{name}.{ext}"));
                std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            };
            Case {
                metadata: read("metadata"),
                value: read("value"),
                name,
            }
        })
        .collect();
    assert!(
        !cases.is_empty(),
        "no NAME.metadata/NAME.value pairs in {}",
        dir.display()
    );
    cases
}

/// Removes each comma that is followed (after whitespace) by `}` or `]`,
/// outside strings: Python's trailing comma after the last entry.
fn strip_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

fn dictionary() -> BTreeMap<String, Value> {
    let path = data_dir().join("data_dictionary.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&strip_trailing_commas(&text)).unwrap_or_else(|e| {
        panic!(
            "{}: not JSON even without trailing commas: {e}",
            path.display()
        )
    })
}

fn expected_type(name: &str) -> &'static str {
    EXPECTED_TYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .unwrap_or_else(|| panic!("{name}: no expected type in EXPECTED_TYPES; add it"))
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

// ---------------------------------------------------------------------------
// Parsing the dictionary's strings, independently of the crate's JSON writer.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn number(s: &str) -> Result<i64, String> {
    s.parse().map_err(|e| format!("{s:?}: {e}"))
}

/// `YYYY-MM-DD` -> days since the epoch.
fn parse_date(s: &str) -> Result<i64, String> {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(format!("{s:?} is not YYYY-MM-DD"));
    };
    Ok(days_from_civil(number(y)?, number(m)?, number(d)?))
}

/// `HH:MM:SS[.:]fraction` -> (seconds of the day, ticks of 10^-digits s).
fn parse_time(s: &str, digits: usize) -> Result<(i64, i64), String> {
    let (hms, fraction) = match s.get(8..9) {
        Some("." | ":") => (&s[..8], &s[9..]),
        None => (s, ""),
        _ => return Err(format!("{s:?} is not HH:MM:SS.fraction")),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, m, sec] = parts[..] else {
        return Err(format!("{s:?} is not HH:MM:SS"));
    };
    if fraction.len() > digits || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?}: fraction is not at most {digits} digits"));
    }
    let ticks = if fraction.is_empty() {
        0
    } else {
        number(fraction)? * 10i64.pow((digits - fraction.len()) as u32)
    };
    Ok((number(h)? * 3600 + number(m)? * 60 + number(sec)?, ticks))
}

/// `HH:MM:SS:ffffff` (or `.ffffff`) -> microseconds since midnight.
fn parse_time_micros(s: &str) -> Result<i64, String> {
    let (seconds, micros) = parse_time(s, 6)?;
    Ok(seconds * 1_000_000 + micros)
}

/// `YYYY-MM-DD[ T]HH:MM:SS[.fraction][±HH:MM|Z]` -> ticks of 10^-digits s
/// since the epoch. `utc` types need an offset (applied), NTZ types none.
fn parse_timestamp(s: &str, digits: usize, utc: bool) -> Result<i64, String> {
    let (date, rest) = s
        .split_at_checked(10)
        .ok_or(format!("{s:?} is too short"))?;
    let rest = rest
        .strip_prefix(['T', ' '])
        .ok_or(format!("{s:?}: expected 'T' or ' ' after the date"))?;
    let (time, offset_minutes) = if let Some(time) = rest.strip_suffix('Z') {
        (time, Some(0))
    } else if rest.len() > 6 && matches!(&rest[rest.len() - 6..rest.len() - 5], "+" | "-") {
        let (time, offset) = rest.split_at(rest.len() - 6);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let minutes = number(&offset[1..3])? * 60 + number(&offset[4..6])?;
        (time, Some(sign * minutes))
    } else {
        (rest, None)
    };
    let offset_minutes = match (utc, offset_minutes) {
        (true, Some(m)) => m,
        (false, None) => 0,
        (true, None) => return Err(format!("{s:?}: a UTC timestamp needs an offset")),
        (false, Some(_)) => return Err(format!("{s:?}: an NTZ timestamp has no offset")),
    };
    let (seconds, ticks) = parse_time(time, digits)?;
    let seconds = parse_date(date)? * 86_400 + seconds - offset_minutes * 60;
    Ok(seconds * 10i64.pow(digits as u32) + ticks)
}

fn parse_base64(s: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let digits = s.trim_end_matches('=');
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in digits.bytes() {
        let d = ALPHABET
            .iter()
            .position(|&a| a == c)
            .ok_or(format!("{s:?}: {:?} is not base64", c as char))?;
        acc = acc << 6 | d as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

fn parse_uuid(s: &str) -> Result<[u8; 16], String> {
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    if hex.len() != 32 || s.len() != 36 {
        return Err(format!("{s:?} is not a hyphenated UUID"));
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte =
            u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| format!("{s:?}: {e}"))?;
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Comparing a decoded Variant with the dictionary's JSON.

/// Whether `v` is the value `e` describes; see the file's top comment.
fn check_value(v: &VariantRef<'_>, e: &Value, path: &str) -> Result<(), String> {
    let mismatch = |why: &str| {
        Err(format!(
            "{path}: decoded {} {v:?} but the dictionary has {e}{why}",
            v.variant_type().name()
        ))
    };
    let text = || {
        e.as_str()
            .ok_or(format!("{path}: dictionary has {e}, expected a string"))
    };
    let equal = match *v {
        VariantRef::Null => e.is_null(),
        VariantRef::Bool(b) => e.as_bool() == Some(b),
        VariantRef::Int8(_)
        | VariantRef::Int16(_)
        | VariantRef::Int32(_)
        | VariantRef::Int64(_) => e.is_i64() && e.as_i64() == v.as_i64(),
        VariantRef::Decimal4(d) | VariantRef::Decimal8(d) | VariantRef::Decimal16(d) => {
            e.as_f64() == Some(d.to_f64())
        }
        VariantRef::Double(x) => e.as_f64() == Some(x),
        VariantRef::Float(x) => e.as_f64().map(|f| f as f32) == Some(x),
        VariantRef::String(s) => e.as_str() == Some(s),
        VariantRef::Binary(b) => parse_base64(text()?)? == b,
        VariantRef::Date(d) => parse_date(text()?)? == d as i64,
        VariantRef::TimeNtzMicros(t) => parse_time_micros(text()?)? == t,
        VariantRef::TimestampMicros(t) => parse_timestamp(text()?, 6, true)? == t,
        VariantRef::TimestampNtzMicros(t) => parse_timestamp(text()?, 6, false)? == t,
        VariantRef::TimestampNanos(t) => parse_timestamp(text()?, 9, true)? == t,
        VariantRef::TimestampNtzNanos(t) => parse_timestamp(text()?, 9, false)? == t,
        VariantRef::Uuid(u) => parse_uuid(text()?)? == u,
        VariantRef::Object(o) => {
            let Some(map) = e.as_object() else {
                return mismatch("");
            };
            let ours: Vec<&str> = o.iter().map(|(k, _)| k).collect();
            let theirs: Vec<&str> = map.keys().map(String::as_str).collect();
            if ours != theirs {
                return mismatch(&format!(" (keys {ours:?} vs {theirs:?})"));
            }
            for (name, value) in o.iter() {
                check_value(&value, &map[name], &format!("{path}.{name}"))?;
            }
            true
        }
        VariantRef::Array(a) => {
            let Some(items) = e.as_array() else {
                return mismatch("");
            };
            if a.len() != items.len() {
                return mismatch(&format!(" ({} vs {} elements)", a.len(), items.len()));
            }
            for (i, (value, item)) in a.iter().zip(items).enumerate() {
                check_value(&value, item, &format!("{path}[{i}]"))?;
            }
            true
        }
    };
    if equal { Ok(()) } else { mismatch("") }
}

// ---------------------------------------------------------------------------
// Tests.

#[test]
fn data_dictionary_parses_after_stripping_the_trailing_comma() {
    assert_eq!(
        strip_trailing_commas(r#"{"a": [1, 2,], "b": ",}", "c": "\",]",}"#),
        r#"{"a": [1, 2], "b": ",}", "c": "\",]"}"#
    );
    let dictionary = dictionary();
    assert_eq!(
        dictionary.len(),
        EXPECTED_TYPES.len() - NOT_IN_DICTIONARY.len(),
        "entries: {:?}",
        dictionary.keys()
    );
}

/// Writes one value into a builder.
type Build<'a> = &'a dyn Fn(&mut VariantBuilder);

/// The comparison itself: right values pass, near misses fail.
#[test]
fn dictionary_comparison_accepts_equal_and_rejects_near_values() {
    let check = |build: &dyn Fn(&mut VariantBuilder), expected: &str| {
        let mut builder = VariantBuilder::new();
        build(&mut builder);
        let (m, v) = builder.finish();
        let variant = VariantRef::try_new(m, v).expect("valid");
        let e: Value = serde_json::from_str(expected).expect("JSON");
        check_value(&variant, &e, "$")
    };
    let dec = |u, s| VariantDecimal::try_new(u, s).expect("decimal");
    let ok: &[(Build, &str)] = &[
        (&|b| b.int8(42), "42"),
        (
            &|b| b.decimal16(dec(1_234_567_891_234_567_890, 2)),
            "1.2345678912345678e+16",
        ),
        (&|b| b.float(1_234_567_890.0), "1234567940.0"),
        (
            &|b| b.time_micros(45_234_123_456).expect("time"),
            r#""12:33:54:123456""#,
        ),
        (
            &|b| b.timestamp_micros(1_744_821_296_780_000),
            r#""2025-04-16 12:34:56.78-04:00""#,
        ),
        (
            &|b| b.timestamp_ntz_micros(1_744_806_896_780_000),
            r#""2025-04-16 12:34:56.78""#,
        ),
        (&|b| b.binary(&[3, 0x13, 0x37]), r#""AxM3""#),
    ];
    for (i, (build, expected)) in ok.iter().enumerate() {
        check(build, expected).unwrap_or_else(|e| panic!("case {i}: {e}"));
    }
    let wrong: &[(Build, &str)] = &[
        (&|b| b.int8(42), "43"),
        (&|b| b.int8(42), "42.5"),
        (&|b| b.int8(1), "true"),
        (&|b| b.decimal4(dec(1234, 2)), "12.35"),
        (&|b| b.float(1_234_567_890.0), "1234568100.0"),
        (&|b| b.string("12:34:56"), r#""12:34:57""#),
        (
            &|b| b.time_micros(45_234_123_456).expect("time"),
            r#""12:33:54:123457""#,
        ),
        // Same wall time, offset ignored: off by four hours.
        (
            &|b| b.timestamp_micros(1_744_806_896_780_000),
            r#""2025-04-16 12:34:56.78-04:00""#,
        ),
        // An NTZ timestamp must not carry an offset.
        (
            &|b| b.timestamp_ntz_micros(1_744_806_896_780_000),
            r#""2025-04-16 12:34:56.78Z""#,
        ),
        (
            &|b| b.timestamp_nanos(1),
            r#""1970-01-01T00:00:00.000000002+00:00""#,
        ),
        (&|b| b.date(20_194), r#""2025-04-17""#),
        (
            &|b| b.uuid([0; 16]),
            r#""00000000-0000-0000-0000-000000000001""#,
        ),
        (
            &|b| {
                b.begin_array();
                b.int8(1);
                b.end_array().expect("array");
            },
            "[1, 2]",
        ),
        (
            &|b| {
                b.begin_object();
                b.key("a");
                b.null();
                b.end_object().expect("object");
            },
            r#"{"b": null}"#,
        ),
    ];
    for (i, (build, expected)) in wrong.iter().enumerate() {
        assert!(
            check(build, expected).is_err(),
            "case {i}: {expected} should not match"
        );
    }
}

#[test]
fn every_file_pair_has_a_dictionary_entry_and_an_expected_type() {
    let cases = cases();
    let dictionary = dictionary();
    let files: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    let missing_entry: Vec<&str> = files
        .iter()
        .copied()
        .filter(|n| !dictionary.contains_key(*n))
        .collect();
    let known_missing: Vec<&str> = NOT_IN_DICTIONARY.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        missing_entry, known_missing,
        "files without a dictionary entry"
    );
    let missing_files: Vec<&String> = dictionary
        .keys()
        .filter(|k| !files.contains(&k.as_str()))
        .collect();
    assert!(
        missing_files.is_empty(),
        "dictionary entries without files: {missing_files:?}"
    );
    let typed: Vec<&str> = EXPECTED_TYPES.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        files, typed,
        "EXPECTED_TYPES must list exactly the files, sorted"
    );
}

#[test]
fn every_variant_validates_and_decodes_to_its_dictionary_value() {
    let cases = cases();
    let dictionary = dictionary();
    let mut failures = Vec::new();
    for case in &cases {
        let variant = match VariantRef::try_new(&case.metadata, &case.value) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: does not validate: {e}", case.name));
                continue;
            }
        };
        let result = match dictionary.get(&case.name) {
            Some(expected) => check_value(&variant, expected, &case.name),
            None => {
                let text = NOT_IN_DICTIONARY
                    .iter()
                    .find(|(n, _)| *n == case.name)
                    .map(|(_, t)| *t);
                match text {
                    Some(t) if variant.as_str() == Some(t) => Ok(()),
                    _ => Err(format!(
                        "{}: decoded {variant:?}, expected {text:?}",
                        case.name
                    )),
                }
            }
        };
        if let Err(e) = result {
            failures.push(e);
        }
    }
    report("decode", failures, cases.len());
}

#[test]
fn every_variant_has_the_type_its_name_says() {
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let expected = expected_type(&case.name);
        match VariantRef::try_new(&case.metadata, &case.value) {
            Ok(v) if v.variant_type().name() == expected => {}
            Ok(v) => failures.push(format!(
                "{}: type {}, expected {expected}",
                case.name,
                v.variant_type().name()
            )),
            Err(e) => failures.push(format!("{}: does not validate: {e}", case.name)),
        }
    }
    report("type", failures, cases.len());
}

#[test]
fn short_and_long_strings_use_their_own_encodings() {
    let cases = cases();
    let header = |name: &str| {
        let case = cases.iter().find(|c| c.name == name).expect(name);
        case.value[0]
    };
    // basic_type 1 (short string) with the length in the upper six bits.
    let short = header("short_string");
    assert_eq!(short & 0b11, 1, "short_string header {short:#04x}");
    let short_case = cases
        .iter()
        .find(|c| c.name == "short_string")
        .expect("short_string");
    assert_eq!((short >> 2) as usize, short_case.value.len() - 1);
    // basic_type 0 (primitive), type id 16 (string).
    for name in ["long_string", "primitive_string"] {
        assert_eq!(header(name), 16 << 2, "{name}");
    }
}

/// The values the dictionary prints inexactly (or not at all), read from the
/// bytes by hand, and how the crate renders them as JSON.
#[test]
fn lossy_dictionary_values_decode_exactly() {
    let cases = cases();
    let decoded = |name: &str| {
        let case = cases.iter().find(|c| c.name == name).expect(name);
        let v = VariantRef::try_new(&case.metadata, &case.value)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        (v, variant_to_json_string(&v))
    };
    for (name, unscaled, scale, json) in [
        ("primitive_decimal4", 1234, 2, "12.34"),
        ("primitive_decimal8", 1_234_567_890, 2, "12345678.90"),
        (
            "primitive_decimal16",
            1_234_567_891_234_567_890,
            2,
            "12345678912345678.90",
        ),
    ] {
        let (v, text) = decoded(name);
        let d = v.as_decimal().unwrap_or_else(|| panic!("{name}: {v:?}"));
        assert_eq!((d.unscaled(), d.scale()), (unscaled, scale), "{name}");
        assert_eq!(text, json, "{name}");
    }
    let (v, text) = decoded("primitive_float");
    assert_eq!(v.as_f64(), Some(1_234_567_936.0));
    assert_eq!(text, "1234568000.0");
    let (v, _) = decoded("primitive_double");
    assert_eq!(v.as_f64(), Some(1_234_567_890.123_4));
    // 2025-04-16 12:34:56.78 at -04:00, and without a zone.
    let (v, text) = decoded("primitive_timestamp");
    assert_eq!(v.as_timestamp_micros(), Some(1_744_821_296_780_000));
    assert_eq!(text, r#""2025-04-16T16:34:56.780000+00:00""#);
    let (v, text) = decoded("primitive_timestampntz");
    assert_eq!(v.as_timestamp_ntz_micros(), Some(1_744_806_896_780_000));
    assert_eq!(text, r#""2025-04-16T12:34:56.780000""#);
    let (v, text) = decoded("primitive_timestamp_nanos");
    assert_eq!(v.as_timestamp_nanos(), Some(1_730_982_834_123_456_789));
    assert_eq!(text, r#""2024-11-07T12:33:54.123456789+00:00""#);
    let (v, text) = decoded("primitive_time");
    assert_eq!(v.as_time_micros(), Some(45_234_123_456));
    assert_eq!(text, r#""12:33:54.123456""#);
    let (v, text) = decoded("primitive_date");
    assert_eq!(v.as_date(), Some(20_194));
    assert_eq!(text, r#""2025-04-16""#);
    let (v, text) = decoded("primitive_binary");
    assert_eq!(
        v.as_binary(),
        Some(&[3, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe][..])
    );
    assert_eq!(text, r#""AxM33q2+78r+""#);
    let (v, _) = decoded("long_string");
    assert_eq!(v.as_str(), Some(NOT_IN_DICTIONARY[0].1));
}

#[test]
fn every_variant_survives_reencoding_with_the_builder() {
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        let original = match VariantRef::try_new(&case.metadata, &case.value) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: does not validate: {e}", case.name));
                continue;
            }
        };
        let mut builder = VariantBuilder::new();
        if let Err(e) = builder.append(&original) {
            failures.push(format!("{}: append failed: {e}", case.name));
            continue;
        }
        let (metadata, value) = builder.finish();
        let copy = match VariantRef::try_new(metadata, value) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{}: re-encoded bytes do not validate: {e} (metadata {metadata:02x?}, value {value:02x?})",
                    case.name
                ));
                continue;
            }
        };
        if copy != original {
            failures.push(format!(
                "{}: re-encoded {copy:?} != original {original:?}",
                case.name
            ));
        }
        if copy.variant_type() != original.variant_type() {
            failures.push(format!(
                "{}: re-encoded type {} != original {}",
                case.name,
                copy.variant_type().name(),
                original.variant_type().name()
            ));
        }
        let (a, b) = (
            variant_to_json_string(&original),
            variant_to_json_string(&copy),
        );
        if a != b {
            failures.push(format!(
                "{}: JSON differs after re-encoding:\n    {a}\n    {b}",
                case.name
            ));
        }
    }
    report("re-encode", failures, cases.len());
}

/// The error of `result` must be at a Variant position in `part`, at most
/// `len` (the length of that part: "more was expected here").
fn check_truncation_error(
    result: Result<impl std::fmt::Debug, vshred::Error>,
    part: VariantPart,
    len: usize,
) -> Result<(), String> {
    match result {
        Ok(v) => Err(format!("validated: {v:?}")),
        Err(e) => match e.position() {
            Some(Position::Variant { part: p, byte }) if p == part && byte <= len => Ok(()),
            other => Err(format!(
                "error {e} has position {other:?}, expected {part:?} <= {len}"
            )),
        },
    }
}

#[test]
fn truncated_metadata_and_values_fail_with_an_error_inside_the_input() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut tried = 0;
    for case in &cases {
        let (m, v) = (&case.metadata[..], &case.value[..]);
        for len in 0..m.len() {
            tried += 1;
            let outcome = std::panic::catch_unwind(|| {
                check_truncation_error(Metadata::try_new(&m[..len]), VariantPart::Metadata, len)?;
                check_truncation_error(
                    VariantRef::try_new(&m[..len], v),
                    VariantPart::Metadata,
                    len,
                )
            });
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    failures.push(format!("{}: metadata cut to {len} bytes: {e}", case.name))
                }
                Err(_) => failures.push(format!(
                    "{}: metadata cut to {len} bytes: panicked",
                    case.name
                )),
            }
        }
        // Metadata and value back to back, as in shredded_variant's
        // .variant.bin files: split with parse_prefix.
        let both = [m, v].concat();
        for len in 0..both.len() {
            tried += 1;
            let bytes = &both[..len];
            let outcome = std::panic::catch_unwind(|| match Metadata::parse_prefix(bytes) {
                Err(e) => check_truncation_error(Err::<(), _>(e), VariantPart::Metadata, len),
                Ok((metadata, used)) => check_truncation_error(
                    VariantRef::try_with_metadata(metadata, &bytes[used..], DEFAULT_MAX_DEPTH),
                    VariantPart::Value,
                    len - used,
                ),
            });
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!(
                    "{}: metadata + value cut to {len} bytes: {e}",
                    case.name
                )),
                Err(_) => failures.push(format!(
                    "{}: metadata + value cut to {len} bytes: panicked",
                    case.name
                )),
            }
        }
        for len in 0..v.len() {
            tried += 1;
            let outcome = std::panic::catch_unwind(|| {
                check_truncation_error(VariantRef::try_new(m, &v[..len]), VariantPart::Value, len)
            });
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    failures.push(format!("{}: value cut to {len} bytes: {e}", case.name))
                }
                Err(_) => {
                    failures.push(format!("{}: value cut to {len} bytes: panicked", case.name))
                }
            }
        }
    }
    report("truncation", failures, tried);
}
