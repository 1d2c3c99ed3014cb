//! Variant -> JSON text.

use crate::error::Result;
use crate::variant::time::civil_from_days;
use crate::variant::{
    DEFAULT_MAX_DEPTH, Metadata, Scratch, VariantDecimal, VariantRef, Visit, validate_with,
};

/// Appends the JSON text of `v` to `out`, compact (no spaces).
///
/// - decimals print their exact digits and scale (`432.0`, `0.000000001`);
/// - doubles and floats print in the shortest form that reads back to the
///   same number; NaN and infinities, which JSON lacks, print as the
///   strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
/// - dates print as `"YYYY-MM-DD"`, times as `"HH:MM:SS.ffffff"`;
/// - timestamps print as ISO 8601 with `T` and 6 (micros) or 9 (nanos)
///   fractional digits, the time-zone-aware ones with `+00:00`;
/// - binaries print as base64 strings, UUIDs in hyphenated form.
///
/// ```
/// use vshred::json::{json_to_variant, write_json};
/// use vshred::variant::VariantRef;
/// let (m, v) = json_to_variant(br#"{"b": [1.50, 2e0], "a": "\u00e9"}"#)?;
/// let mut out = Vec::new();
/// write_json(&VariantRef::try_new(&m, &v)?, &mut out);
/// assert_eq!(out, "{\"a\":\"é\",\"b\":[1.50,2.0]}".as_bytes());
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn write_json(v: &VariantRef<'_>, out: &mut Vec<u8>) {
    write_value(v, out, &mut EscapeKeys);
}

/// Writes object keys as JSON (`"name":`).
trait KeyWriter {
    /// The key `name`, dictionary id `id`.
    fn key(&mut self, id: usize, name: &str, out: &mut Vec<u8>);
}

/// Escapes every key as it comes.
struct EscapeKeys;

impl KeyWriter for EscapeKeys {
    fn key(&mut self, _id: usize, name: &str, out: &mut Vec<u8>) {
        write_string(out, name);
        out.push(b':');
    }
}

/// Renders Variants as [`write_json`] does, keeping the JSON text of the
/// keys of the last metadata seen: the rows of a column mostly share one
/// metadata, so each key is escaped once instead of in every row.
#[derive(Default)]
pub(crate) struct JsonWriter {
    /// The metadata whose keys `keys` holds.
    metadata: Vec<u8>,
    /// `"name":` of the field ids rendered so far, back to back.
    keys: Vec<u8>,
    /// Where each field id's text lies in `keys`; empty until rendered.
    spans: Vec<(u32, u32)>,
}

impl JsonWriter {
    pub(crate) fn write_json(&mut self, v: &VariantRef<'_>, out: &mut Vec<u8>) {
        let metadata = match v {
            VariantRef::Object(o) => o.metadata(),
            VariantRef::Array(a) => a.metadata(),
            _ => return write_json(v, out),
        };
        self.keys_of(metadata);
        write_value(v, out, self);
    }

    /// Validates `value` against `metadata` (with the names' order of an
    /// unsorted dictionary, [`Metadata::name_order`], if at hand, and
    /// buffers kept from an earlier validation) and
    /// appends its JSON text, as [`write_json`] renders it, in the same
    /// pass over the bytes. On error, `out` is left as it was.
    pub(crate) fn validate_and_write(
        &mut self,
        metadata: Metadata<'_>,
        value: &[u8],
        name_order: Option<&[u32]>,
        scratch: &mut Scratch,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        self.keys_of(metadata);
        let len = out.len();
        let mut render = Render { keys: self, out };
        let result = validate_with(
            metadata,
            value,
            DEFAULT_MAX_DEPTH,
            name_order,
            scratch,
            &mut render,
        );
        if result.is_err() {
            out.truncate(len);
        }
        result
    }

    /// Keeps the keys of `metadata`, forgetting those of another.
    fn keys_of(&mut self, metadata: Metadata<'_>) {
        if self.metadata != metadata.as_bytes() {
            self.metadata.clear();
            self.metadata.extend_from_slice(metadata.as_bytes());
            self.keys.clear();
            self.spans.clear();
            self.spans.resize(metadata.len(), (0, 0));
        }
    }
}

impl KeyWriter for JsonWriter {
    fn key(&mut self, id: usize, name: &str, out: &mut Vec<u8>) {
        // Validation keeps ids inside the dictionary.
        let Some(&(mut start, mut end)) = self.spans.get(id) else {
            return EscapeKeys.key(id, name, out);
        };
        if start == end {
            start = self.keys.len() as u32;
            EscapeKeys.key(id, name, &mut self.keys);
            end = self.keys.len() as u32;
            self.spans[id] = (start, end);
        }
        out.extend_from_slice(&self.keys[start as usize..end as usize]);
    }
}

/// JSON text written as validation walks a value.
struct Render<'w> {
    keys: &'w mut JsonWriter,
    out: &'w mut Vec<u8>,
}

impl Visit for Render<'_> {
    fn scalar(&mut self, v: VariantRef<'_>) {
        write_value(&v, self.out, &mut EscapeKeys);
    }

    fn begin_object(&mut self) {
        self.out.push(b'{');
    }

    fn key(&mut self, metadata: &Metadata<'_>, id: usize, first: bool) {
        if !first {
            self.out.push(b',');
        }
        self.keys.key(id, metadata.name(id), self.out);
    }

    fn end_object(&mut self) {
        self.out.push(b'}');
    }

    fn begin_array(&mut self) {
        self.out.push(b'[');
    }

    fn element(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
    }

    fn end_array(&mut self) {
        self.out.push(b']');
    }
}

fn write_value(v: &VariantRef<'_>, out: &mut Vec<u8>, keys: &mut impl KeyWriter) {
    match *v {
        VariantRef::Null => out.extend_from_slice(b"null"),
        VariantRef::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        VariantRef::Int8(x) => write_int(out, x as i64),
        VariantRef::Int16(x) => write_int(out, x as i64),
        VariantRef::Int32(x) => write_int(out, x as i64),
        VariantRef::Int64(x) => write_int(out, x),
        VariantRef::Decimal4(d) | VariantRef::Decimal8(d) | VariantRef::Decimal16(d) => {
            write_decimal(out, d)
        }
        VariantRef::Double(x) => write_float(out, x, |b| b.format_finite(x)),
        VariantRef::Float(x) => write_float(out, x as f64, |b| b.format_finite(x)),
        VariantRef::String(s) => write_string(out, s),
        VariantRef::Binary(b) => {
            out.push(b'"');
            write_base64(out, b);
            out.push(b'"');
        }
        VariantRef::Date(days) => {
            out.push(b'"');
            write_date(out, days as i64);
            out.push(b'"');
        }
        VariantRef::TimeNtzMicros(t) => {
            out.push(b'"');
            write_time(out, t, 6);
            out.push(b'"');
        }
        VariantRef::TimestampMicros(t) => write_timestamp(out, t, 6, true),
        VariantRef::TimestampNtzMicros(t) => write_timestamp(out, t, 6, false),
        VariantRef::TimestampNanos(t) => write_timestamp(out, t, 9, true),
        VariantRef::TimestampNtzNanos(t) => write_timestamp(out, t, 9, false),
        VariantRef::Uuid(u) => {
            out.push(b'"');
            write_uuid(out, &u);
            out.push(b'"');
        }
        VariantRef::Object(o) => {
            out.push(b'{');
            for i in 0..o.len() {
                if i > 0 {
                    out.push(b',');
                }
                keys.key(o.field_id(i), o.field_name(i), out);
                write_value(&o.field(i), out, keys);
            }
            out.push(b'}');
        }
        VariantRef::Array(a) => {
            out.push(b'[');
            for (i, value) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(&value, out, keys);
            }
            out.push(b']');
        }
    }
}

/// The JSON text of `v` as a `String`; see [`write_json`].
pub fn variant_to_json_string(v: &VariantRef<'_>) -> String {
    let mut out = Vec::new();
    write_json(v, &mut out);
    // write_json emits valid UTF-8: ASCII plus strings that were validated.
    String::from_utf8(out).unwrap_or_default()
}

#[inline]
pub(crate) fn write_int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn write_decimal(out: &mut Vec<u8>, d: VariantDecimal) {
    d.write_to(out);
}

/// `x` decides the non-finite cases (a float widens to the same NaN or
/// infinity); `format` prints the finite value in its own precision.
fn write_float(out: &mut Vec<u8>, x: f64, format: impl FnOnce(&mut ryu::Buffer) -> &str) {
    if x.is_finite() {
        out.extend_from_slice(format(&mut ryu::Buffer::new()).as_bytes());
    } else if x.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if x > 0.0 {
        out.extend_from_slice(b"\"Infinity\"");
    } else {
        out.extend_from_slice(b"\"-Infinity\"");
    }
}

/// For each byte: 0 to copy as is, else the character after the backslash
/// (`u` for the `\u00XX` form).
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Writes `s` as a JSON string, escaping only what JSON requires
/// (`\u001F`).
#[inline]
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPE[b as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        out.push(b'\\');
        out.push(escape);
        if escape == b'u' {
            // Upper case, as Spark's `to_json` (Jackson) writes it, so that
            // texts compare equal across engines.
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(&[b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 0xF) as usize]]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn write_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        for shift in [18, 12, 6, 0] {
            out.push(ALPHABET[(n >> shift & 63) as usize]);
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let n = (rest[0] as u32) << 16 | (*rest.get(1).unwrap_or(&0) as u32) << 8;
        out.push(ALPHABET[(n >> 18 & 63) as usize]);
        out.push(ALPHABET[(n >> 12 & 63) as usize]);
        out.push(if rest.len() == 2 {
            ALPHABET[(n >> 6 & 63) as usize]
        } else {
            b'='
        });
        out.push(b'=');
    }
}

fn write_uuid(out: &mut Vec<u8>, u: &[u8; 16]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, &b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push(b'-');
        }
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 0xF) as usize]);
    }
}

fn write_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(v).as_bytes();
    out.resize(out.len() + width.saturating_sub(digits.len()), b'0');
    out.extend_from_slice(digits);
}

/// `YYYY-MM-DD`; years outside 0000-9999 get a sign, as ISO 8601 expands them.
fn write_date(out: &mut Vec<u8>, days: i64) {
    let (year, month, day) = civil_from_days(days);
    if year < 0 {
        out.push(b'-');
    } else if year > 9999 {
        out.push(b'+');
    }
    write_padded(out, year.unsigned_abs(), 4);
    out.push(b'-');
    write_padded(out, month as u64, 2);
    out.push(b'-');
    write_padded(out, day as u64, 2);
}

/// `HH:MM:SS.f...` from a count of `10^-digits` seconds since midnight.
fn write_time(out: &mut Vec<u8>, ticks: i64, digits: u32) {
    let per_second = 10u64.pow(digits);
    let ticks = ticks as u64;
    let seconds = ticks / per_second;
    write_padded(out, seconds / 3600, 2);
    out.push(b':');
    write_padded(out, seconds / 60 % 60, 2);
    out.push(b':');
    write_padded(out, seconds % 60, 2);
    out.push(b'.');
    write_padded(out, ticks % per_second, digits as usize);
}

fn write_timestamp(out: &mut Vec<u8>, ticks: i64, digits: u32, utc: bool) {
    let per_day = 86_400 * 10i64.pow(digits);
    out.push(b'"');
    write_date(out, ticks.div_euclid(per_day));
    out.push(b'T');
    write_time(out, ticks.rem_euclid(per_day), digits);
    if utc {
        out.extend_from_slice(b"+00:00");
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(v: VariantRef<'_>) -> String {
        variant_to_json_string(&v)
    }

    #[test]
    fn json_writer_renders_as_write_json_across_metadata_changes() {
        let rows = [
            r#"{"b":1,"a":{"b":[{"a\"q":2}]}}"#,
            r#"{"b":5,"a":{"b":[{"a\"q":6},{}]}}"#,
            r#"{"b":2,"a":{"b":[]}}"#,
            r#"{"z":"x","b":3}"#,
            r#"[{"b":4},{"c":5}]"#,
            r#"7"#,
            r#"{"b":1,"a":{"b":[{"a\"q":2}]}}"#,
        ];
        let mut writer = JsonWriter::default();
        for row in rows {
            let (m, v) = crate::json::json_to_variant(row.as_bytes()).unwrap();
            let v = VariantRef::try_new(&m, &v).unwrap();
            let mut cached = Vec::new();
            writer.write_json(&v, &mut cached);
            assert_eq!(String::from_utf8(cached).unwrap(), json(v));
        }
    }

    #[test]
    fn renders_dates_times_and_timestamps() {
        assert_eq!(json(VariantRef::Date(0)), r#""1970-01-01""#);
        assert_eq!(json(VariantRef::Date(-1)), r#""1969-12-31""#);
        assert_eq!(json(VariantRef::Date(19_723)), r#""2024-01-01""#);
        assert_eq!(json(VariantRef::Date(-719_529)), r#""-0001-12-31""#);
        assert_eq!(json(VariantRef::Date(2_932_897)), r#""+10000-01-01""#);
        assert_eq!(
            json(VariantRef::TimeNtzMicros(45_296_000_001)),
            r#""12:34:56.000001""#
        );
        assert_eq!(
            json(VariantRef::TimestampMicros(1_700_000_000_123_456)),
            r#""2023-11-14T22:13:20.123456+00:00""#
        );
        assert_eq!(
            json(VariantRef::TimestampNtzMicros(-1)),
            r#""1969-12-31T23:59:59.999999""#
        );
        assert_eq!(
            json(VariantRef::TimestampNanos(1_700_000_000_123_456_789)),
            r#""2023-11-14T22:13:20.123456789+00:00""#
        );
        assert_eq!(
            json(VariantRef::TimestampNtzNanos(i64::MIN)),
            r#""1677-09-21T00:12:43.145224192""#
        );
    }

    #[test]
    fn renders_floats_shortest_and_non_finite_as_strings() {
        assert_eq!(json(VariantRef::Double(0.1)), "0.1");
        assert_eq!(json(VariantRef::Double(1e300)), "1e300");
        assert_eq!(json(VariantRef::Double(-0.0)), "-0.0");
        assert_eq!(json(VariantRef::Float(0.1)), "0.1");
        assert_eq!(json(VariantRef::Double(f64::NAN)), r#""NaN""#);
        assert_eq!(json(VariantRef::Float(f32::NEG_INFINITY)), r#""-Infinity""#);
    }

    #[test]
    fn renders_binary_as_base64_and_uuid_hyphenated() {
        for (bytes, text) in [
            (&b""[..], r#""""#),
            (b"f", r#""Zg==""#),
            (b"fo", r#""Zm8=""#),
            (b"foo", r#""Zm9v""#),
            (b"foob", r#""Zm9vYg==""#),
            (&[0xFF, 0xFE, 0x00], r#""//4A""#),
        ] {
            assert_eq!(json(VariantRef::Binary(bytes)), text);
        }
        let u = [
            0xf2, 0x4f, 0x9b, 0x64, 0x81, 0xfa, 0x49, 0xd1, 0xb7, 0x4e, 0x8c, 0x09, 0xa6, 0xe3,
            0x1c, 0x56,
        ];
        assert_eq!(
            json(VariantRef::Uuid(u)),
            r#""f24f9b64-81fa-49d1-b74e-8c09a6e31c56""#
        );
    }

    #[test]
    fn escapes_only_what_json_requires() {
        assert_eq!(
            json(VariantRef::String("a\"b\\c\n\u{1}/é\u{1f}")),
            r#""a\"b\\c\n\u0001/é\u001F""#
        );
    }
}
