//! The value: a zero-copy, validated view ([`VariantRef`], [`ObjectRef`],
//! [`ArrayRef`]); decoding is in [`decode`](mod@super::decode), validation in
//! [`validate`](super::validate).

use std::convert::Infallible;
use std::fmt;

use crate::error::Result;
use crate::variant::decimal::VariantDecimal;
use crate::variant::decode::{decode, exact};
use crate::variant::metadata::{Metadata, PathStep};
use crate::variant::validate::{Scratch, Validator, validate_with};
use crate::variant::{find_name, read_uint};

/// The default limit on nested objects and arrays: deeper values are
/// rejected rather than risking the stack (serde_json uses the same).
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// Microseconds in a day: TIME values must lie in `0..MICROS_PER_DAY`.
pub(crate) const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A decoded Variant value, borrowing strings, binaries and containers from
/// the bytes it was read from.
///
/// Obtain one with [`VariantRef::try_new`], which validates the whole value
/// first: every `VariantRef`, [`ObjectRef`] and [`ArrayRef`] is known to be
/// valid, so reading it never fails.
///
/// Short strings and long strings both read as [`VariantRef::String`].
/// Equality (`==`) is *logical*, by the spec's equivalence classes: an int8
/// `1` equals a decimal16 `1.00`, a timestamp in micros equals the same
/// instant in nanos, and objects compare by their fields whatever the field
/// ids or value order.
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)] // one variant per primitive type of the spec, named as there
pub enum VariantRef<'a> {
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Double(f64),
    Decimal4(VariantDecimal),
    Decimal8(VariantDecimal),
    Decimal16(VariantDecimal),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since the epoch, UTC.
    TimestampMicros(i64),
    /// Microseconds since the epoch, no time zone.
    TimestampNtzMicros(i64),
    Float(f32),
    Binary(&'a [u8]),
    String(&'a str),
    /// Microseconds since midnight, no time zone.
    TimeNtzMicros(i64),
    /// Nanoseconds since the epoch, UTC.
    TimestampNanos(i64),
    /// Nanoseconds since the epoch, no time zone.
    TimestampNtzNanos(i64),
    /// The 16 bytes of a UUID, big-endian.
    Uuid([u8; 16]),
    Object(ObjectRef<'a>),
    Array(ArrayRef<'a>),
}

/// The physical type of a Variant value, named as in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // one variant per physical type of the spec, named as there
pub enum VariantType {
    Null,
    Boolean,
    Int8,
    Int16,
    Int32,
    Int64,
    Double,
    Decimal4,
    Decimal8,
    Decimal16,
    Date,
    TimestampMicros,
    TimestampNtzMicros,
    Float,
    Binary,
    String,
    TimeNtzMicros,
    TimestampNanos,
    TimestampNtzNanos,
    Uuid,
    Object,
    Array,
}

impl VariantType {
    /// The type's name: `int8`, `decimal16`, `timestamp_ntz_nanos`, ...
    pub fn name(self) -> &'static str {
        match self {
            VariantType::Null => "null",
            VariantType::Boolean => "boolean",
            VariantType::Int8 => "int8",
            VariantType::Int16 => "int16",
            VariantType::Int32 => "int32",
            VariantType::Int64 => "int64",
            VariantType::Double => "double",
            VariantType::Decimal4 => "decimal4",
            VariantType::Decimal8 => "decimal8",
            VariantType::Decimal16 => "decimal16",
            VariantType::Date => "date",
            VariantType::TimestampMicros => "timestamp",
            VariantType::TimestampNtzMicros => "timestamp_ntz",
            VariantType::Float => "float",
            VariantType::Binary => "binary",
            VariantType::String => "string",
            VariantType::TimeNtzMicros => "time",
            VariantType::TimestampNanos => "timestamp_nanos",
            VariantType::TimestampNtzNanos => "timestamp_ntz_nanos",
            VariantType::Uuid => "uuid",
            VariantType::Object => "object",
            VariantType::Array => "array",
        }
    }
}

impl fmt::Display for VariantType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'a> VariantRef<'a> {
    /// Validates `metadata` and `value` as one complete Variant and returns
    /// a view of it, with the [default depth limit](DEFAULT_MAX_DEPTH).
    ///
    /// Errors say what is wrong and at which byte of which part.
    pub fn try_new(metadata: &'a [u8], value: &'a [u8]) -> Result<VariantRef<'a>> {
        VariantRef::try_with_metadata(Metadata::try_new(metadata)?, value, DEFAULT_MAX_DEPTH)
    }

    /// Validates `value` against metadata that is already validated (many
    /// rows often share one metadata), with a limit on nesting depth.
    ///
    /// The validator recurses, a level of stack per level of nesting: a
    /// limit far above [`DEFAULT_MAX_DEPTH`] lets untrusted bytes overflow
    /// a thread's stack (the process aborts) unless the stack is sized to
    /// match.
    pub fn try_with_metadata(
        metadata: Metadata<'a>,
        value: &'a [u8],
        max_depth: usize,
    ) -> Result<VariantRef<'a>> {
        VariantRef::try_with_name_order(metadata, value, max_depth, None, &mut Scratch::default())
    }

    /// As [`try_with_metadata`](Self::try_with_metadata), with the names'
    /// order of an unsorted dictionary ([`Metadata::name_order`]) at hand,
    /// so that field order is checked without comparing names, and buffers
    /// kept from an earlier validation.
    pub(crate) fn try_with_name_order(
        metadata: Metadata<'a>,
        value: &'a [u8],
        max_depth: usize,
        name_order: Option<&[u32]>,
        scratch: &mut Scratch,
    ) -> Result<VariantRef<'a>> {
        validate_with(metadata, value, max_depth, name_order, scratch, &mut ())?;
        Ok(decode(metadata, value))
    }

    /// The bytes of the sub-value at `path` (resolved against `metadata`
    /// by [`Metadata::resolve`]) in `value`, or `None` when the path leads
    /// nowhere; [`decode`] reads them. Only the containers on the way (their
    /// headers, offsets and the ids compared) and the sub-value itself are
    /// validated, so that reading one path of a large value does not check
    /// all of it. (Bytes, not a `VariantRef`, travel back through the
    /// callers: a `VariantRef` is 80 bytes, copied at every step.)
    #[inline]
    pub(crate) fn try_at_path(
        metadata: Metadata<'a>,
        value: &'a [u8],
        path: &[PathStep],
        max_depth: usize,
    ) -> Result<Option<&'a [u8]>> {
        let (mut validation_alone, mut scratch) = ((), Scratch::default());
        let mut validator = Validator::new(
            &metadata,
            None,
            value,
            max_depth,
            &mut validation_alone,
            &mut scratch,
        );
        let Some((at, end)) = validator.locate(path)? else {
            return Ok(None);
        };
        let size = validator.value(at, end, path.len())?;
        Ok(Some(&value[at..at + size]))
    }

    /// The physical type.
    pub fn variant_type(&self) -> VariantType {
        match self {
            VariantRef::Null => VariantType::Null,
            VariantRef::Bool(_) => VariantType::Boolean,
            VariantRef::Int8(_) => VariantType::Int8,
            VariantRef::Int16(_) => VariantType::Int16,
            VariantRef::Int32(_) => VariantType::Int32,
            VariantRef::Int64(_) => VariantType::Int64,
            VariantRef::Double(_) => VariantType::Double,
            VariantRef::Decimal4(_) => VariantType::Decimal4,
            VariantRef::Decimal8(_) => VariantType::Decimal8,
            VariantRef::Decimal16(_) => VariantType::Decimal16,
            VariantRef::Date(_) => VariantType::Date,
            VariantRef::TimestampMicros(_) => VariantType::TimestampMicros,
            VariantRef::TimestampNtzMicros(_) => VariantType::TimestampNtzMicros,
            VariantRef::Float(_) => VariantType::Float,
            VariantRef::Binary(_) => VariantType::Binary,
            VariantRef::String(_) => VariantType::String,
            VariantRef::TimeNtzMicros(_) => VariantType::TimeNtzMicros,
            VariantRef::TimestampNanos(_) => VariantType::TimestampNanos,
            VariantRef::TimestampNtzNanos(_) => VariantType::TimestampNtzNanos,
            VariantRef::Uuid(_) => VariantType::Uuid,
            VariantRef::Object(_) => VariantType::Object,
            VariantRef::Array(_) => VariantType::Array,
        }
    }

    /// Whether this is the Variant null.
    pub fn is_null(&self) -> bool {
        matches!(self, VariantRef::Null)
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            VariantRef::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// Any exact numeric (int8..int64, decimal4/8/16) as a decimal.
    pub fn as_decimal(&self) -> Option<VariantDecimal> {
        match *self {
            VariantRef::Int8(v) => Some(VariantDecimal::from(v as i64)),
            VariantRef::Int16(v) => Some(VariantDecimal::from(v as i64)),
            VariantRef::Int32(v) => Some(VariantDecimal::from(v as i64)),
            VariantRef::Int64(v) => Some(VariantDecimal::from(v)),
            VariantRef::Decimal4(d) | VariantRef::Decimal8(d) | VariantRef::Decimal16(d) => Some(d),
            _ => None,
        }
    }

    /// Any exact numeric whose value is a whole number in `i64` range: an
    /// int8 `3` and a decimal `3.00` both give `Some(3)`; `3.5` gives `None`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            VariantRef::Int8(v) => Some(v as i64),
            VariantRef::Int16(v) => Some(v as i64),
            VariantRef::Int32(v) => Some(v as i64),
            VariantRef::Int64(v) => Some(v),
            VariantRef::Decimal4(d) | VariantRef::Decimal8(d) | VariantRef::Decimal16(d) => {
                d.to_i64()
            }
            _ => None,
        }
    }

    /// A double, or a float widened to double.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            VariantRef::Double(v) => Some(v),
            VariantRef::Float(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The string (short or long), if this is one.
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            VariantRef::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes, if this is a binary.
    pub fn as_binary(&self) -> Option<&'a [u8]> {
        match *self {
            VariantRef::Binary(b) => Some(b),
            _ => None,
        }
    }

    /// Days since 1970-01-01, if this is a date.
    pub fn as_date(&self) -> Option<i32> {
        match *self {
            VariantRef::Date(d) => Some(d),
            _ => None,
        }
    }

    /// Microseconds since midnight, if this is a time.
    pub fn as_time_micros(&self) -> Option<i64> {
        match *self {
            VariantRef::TimeNtzMicros(t) => Some(t),
            _ => None,
        }
    }

    /// A UTC timestamp in microseconds (from micros, or from nanos when
    /// exact).
    pub fn as_timestamp_micros(&self) -> Option<i64> {
        match *self {
            VariantRef::TimestampMicros(t) => Some(t),
            VariantRef::TimestampNanos(t) => exact_micros(t),
            _ => None,
        }
    }

    /// A UTC timestamp in nanoseconds (from nanos, or from micros in range).
    pub fn as_timestamp_nanos(&self) -> Option<i64> {
        match *self {
            VariantRef::TimestampMicros(t) => t.checked_mul(1000),
            VariantRef::TimestampNanos(t) => Some(t),
            _ => None,
        }
    }

    /// A timestamp without time zone in microseconds (exact).
    pub fn as_timestamp_ntz_micros(&self) -> Option<i64> {
        match *self {
            VariantRef::TimestampNtzMicros(t) => Some(t),
            VariantRef::TimestampNtzNanos(t) => exact_micros(t),
            _ => None,
        }
    }

    /// A timestamp without time zone in nanoseconds.
    pub fn as_timestamp_ntz_nanos(&self) -> Option<i64> {
        match *self {
            VariantRef::TimestampNtzMicros(t) => t.checked_mul(1000),
            VariantRef::TimestampNtzNanos(t) => Some(t),
            _ => None,
        }
    }

    /// The UUID's 16 big-endian bytes.
    pub fn as_uuid(&self) -> Option<[u8; 16]> {
        match *self {
            VariantRef::Uuid(u) => Some(u),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<ObjectRef<'a>> {
        match *self {
            VariantRef::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<ArrayRef<'a>> {
        match *self {
            VariantRef::Array(a) => Some(a),
            _ => None,
        }
    }
}

fn exact_micros(nanos: i64) -> Option<i64> {
    (nanos % 1000 == 0).then_some(nanos / 1000)
}

impl PartialEq for VariantRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        use VariantRef as V;
        if let (Some(a), Some(b)) = (self.as_decimal(), other.as_decimal()) {
            return a == b;
        }
        match (*self, *other) {
            (V::Null, V::Null) => true,
            (V::Bool(a), V::Bool(b)) => a == b,
            // NaN equals NaN here: a value must equal itself after a round trip.
            (V::Double(a), V::Double(b)) => a == b || (a.is_nan() && b.is_nan()),
            (V::Float(a), V::Float(b)) => a == b || (a.is_nan() && b.is_nan()),
            (V::Date(a), V::Date(b)) => a == b,
            (V::TimeNtzMicros(a), V::TimeNtzMicros(b)) => a == b,
            (
                V::TimestampMicros(_) | V::TimestampNanos(_),
                V::TimestampMicros(_) | V::TimestampNanos(_),
            ) => nanos_i128(self) == nanos_i128(other),
            (
                V::TimestampNtzMicros(_) | V::TimestampNtzNanos(_),
                V::TimestampNtzMicros(_) | V::TimestampNtzNanos(_),
            ) => nanos_i128(self) == nanos_i128(other),
            (V::Binary(a), V::Binary(b)) => a == b,
            (V::String(a), V::String(b)) => a == b,
            (V::Uuid(a), V::Uuid(b)) => a == b,
            (V::Object(a), V::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va == vb)
            }
            (V::Array(a), V::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y)
            }
            _ => false,
        }
    }
}

/// A timestamp of either unit in nanoseconds, without overflow.
fn nanos_i128(v: &VariantRef<'_>) -> i128 {
    match *v {
        VariantRef::TimestampMicros(t) | VariantRef::TimestampNtzMicros(t) => t as i128 * 1000,
        VariantRef::TimestampNanos(t) | VariantRef::TimestampNtzNanos(t) => t as i128,
        _ => 0,
    }
}

/// A validated object: fields in name order, looked up by binary search.
#[derive(Clone, Copy)]
pub struct ObjectRef<'a> {
    pub(super) metadata: Metadata<'a>,
    /// From the first field id to the end of the field values.
    pub(super) bytes: &'a [u8],
    pub(super) len: u32,
    pub(super) id_size: u8,
    pub(super) offset_size: u8,
}

impl<'a> ObjectRef<'a> {
    /// The number of fields.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the object has no fields.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The metadata the field names come from.
    pub fn metadata(&self) -> Metadata<'a> {
        self.metadata
    }

    fn offsets_at(&self) -> usize {
        self.len() * self.id_size as usize
    }

    fn data_at(&self) -> usize {
        self.offsets_at() + (self.len() + 1) * self.offset_size as usize
    }

    /// The dictionary id of the `i`-th field (in name order).
    pub fn field_id(&self, i: usize) -> usize {
        read_uint(self.bytes, i * self.id_size as usize, self.id_size)
    }

    /// The name of the `i`-th field (in name order).
    pub fn field_name(&self, i: usize) -> &'a str {
        self.metadata.name(self.field_id(i))
    }

    /// The encoded bytes of the `i`-th field's value (in name order): a
    /// valid Variant value with this object's metadata.
    pub fn field_bytes(&self, i: usize) -> &'a [u8] {
        let offset = read_uint(
            self.bytes,
            self.offsets_at() + i * self.offset_size as usize,
            self.offset_size,
        );
        exact(&self.bytes[self.data_at() + offset..])
    }

    /// The value of the `i`-th field (in name order).
    pub fn field(&self, i: usize) -> VariantRef<'a> {
        decode(self.metadata, self.field_bytes(i))
    }

    /// The index of the field called `name`, by binary search on names.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        let Ok(found) = find_name(
            self.len(),
            |i| Ok::<_, Infallible>(self.field_name(i)),
            name,
        );
        found
    }

    /// The value of the field called `name`.
    pub fn get(&self, name: &str) -> Option<VariantRef<'a>> {
        self.index_of(name).map(|i| self.field(i))
    }

    /// The fields as `(name, value)`, in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, VariantRef<'a>)> + '_ {
        (0..self.len()).map(|i| (self.field_name(i), self.field(i)))
    }
}

impl fmt::Debug for ObjectRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A validated array.
#[derive(Clone, Copy)]
pub struct ArrayRef<'a> {
    pub(super) metadata: Metadata<'a>,
    /// From the first offset to the end of the elements.
    pub(super) bytes: &'a [u8],
    pub(super) len: u32,
    pub(super) offset_size: u8,
}

impl<'a> ArrayRef<'a> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// The metadata the elements' field names come from.
    pub fn metadata(&self) -> Metadata<'a> {
        self.metadata
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded bytes of element `i`: a valid Variant value with this
    /// array's metadata.
    pub fn element_bytes(&self, i: usize) -> &'a [u8] {
        let w = self.offset_size as usize;
        let offset = read_uint(self.bytes, i * w, self.offset_size);
        exact(&self.bytes[(self.len() + 1) * w + offset..])
    }

    /// Element `i`, if `i < len()`.
    pub fn get(&self, i: usize) -> Option<VariantRef<'a>> {
        (i < self.len()).then(|| decode(self.metadata, self.element_bytes(i)))
    }

    /// The elements in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = VariantRef<'a>> + '_ {
        (0..self.len()).map(|i| decode(self.metadata, self.element_bytes(i)))
    }
}

impl fmt::Debug for ArrayRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::VariantPath;

    fn at_path(json: &str, path: &str) -> Option<String> {
        let (m, v) = crate::json::json_to_variant(json.as_bytes()).unwrap();
        let path = VariantPath::parse(path).unwrap();
        let metadata = Metadata::try_new(&m).unwrap();
        let mut steps = Vec::new();
        metadata.resolve(path.segments(), &mut steps);
        let found = VariantRef::try_at_path(metadata, &v, &steps, DEFAULT_MAX_DEPTH).unwrap();
        // Searching objects by name finds the same bytes as by key id.
        let by_name: Vec<PathStep> = path.segments().iter().map(PathStep::by_name).collect();
        assert_eq!(
            VariantRef::try_at_path(metadata, &v, &by_name, DEFAULT_MAX_DEPTH).unwrap(),
            found,
            "{path:?} by name"
        );
        found.map(|v| crate::json::variant_to_json_string(&decode(metadata, v)))
    }

    #[test]
    fn path_lookup_finds_what_a_full_decode_finds() {
        let json = r#"{"a":{"b":[10,{"c":"x"}]},"d":1.50}"#;
        // Enough fields that a search by name takes several steps.
        // Keys in and out of name order (a sorted and an unsorted
        // dictionary).
        for wide in [
            r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":{"z":8}}"#,
            r#"{"k8":{"z":8},"k7":7,"k6":6,"k5":5,"k4":4,"k3":3,"k2":2,"k1":1,"k0":0}"#,
        ] {
            for k in 0..8 {
                assert_eq!(at_path(wide, &format!("$.k{k}")), Some(k.to_string()));
            }
            assert_eq!(at_path(wide, "$.k8.z").as_deref(), Some("8"));
            for missing in ["$.k", "$.k9", "$.a", "$.k8.y", "$.k8.zz"] {
                assert_eq!(at_path(wide, missing), None, "{missing}");
            }
        }
        assert_eq!(at_path(json, "$.a.b[1].c").as_deref(), Some(r#""x""#));
        assert_eq!(at_path(json, "$.a.b[0]").as_deref(), Some("10"));
        assert_eq!(at_path(json, "$.d").as_deref(), Some("1.50"));
        assert_eq!(
            at_path(json, "$").as_deref(),
            Some(r#"{"a":{"b":[10,{"c":"x"}]},"d":1.50}"#)
        );
        for missing in ["$.x", "$.a.b[2]", "$.d.e", "$.a[0]", "$.a.b.c"] {
            assert_eq!(at_path(json, missing), None, "{missing}");
        }
    }

    #[test]
    fn path_lookup_finds_a_field_under_either_id_of_a_repeated_name() {
        // Unsorted dictionary "a", "b", "a"; the object {"a": 2, "b": 1}
        // names its "a" by the second id (2), and stores b's value first.
        let metadata = [0x01, 3, 0, 1, 2, 3, b'a', b'b', b'a'];
        let value = [0x02, 2, 2, 1, 2, 0, 4, 0x0C, 1, 0x0C, 2];
        let m = Metadata::try_new(&metadata).unwrap();
        assert!(VariantRef::try_new(&metadata, &value).is_ok());
        let mut steps = Vec::new();
        for (path, want) in [("$.a", Some(2)), ("$.b", Some(1)), ("$.c", None)] {
            m.resolve(VariantPath::parse(path).unwrap().segments(), &mut steps);
            let found = VariantRef::try_at_path(m, &value, &steps, DEFAULT_MAX_DEPTH).unwrap();
            assert_eq!(found.and_then(|v| decode(m, v).as_i64()), want, "{path}");
        }
    }

    /// Spark sorts keys by UTF-16 code units, which puts "😀" (above
    /// U+FFFF) before U+FEFF; the spec's order, UTF-8 bytes, puts it after.
    /// Values in either order read, their fields found by name.
    #[test]
    fn objects_and_dictionaries_in_javas_order_read_and_find_their_fields() {
        let names = ["a", "\u{1F600}", "\u{FEFF}"];
        let mut dictionary = vec![3u8, 0];
        let mut text = Vec::new();
        for name in names {
            text.extend_from_slice(name.as_bytes());
            dictionary.push(text.len() as u8);
        }
        dictionary.extend_from_slice(&text);
        // {"a": 1, "😀": 2, "\u{feff}": 3}, ids 0, 1, 2 in that order.
        let value = [0x02, 3, 0, 1, 2, 0, 2, 4, 6, 0x0C, 1, 0x0C, 2, 0x0C, 3];
        for sorted in [0x11, 0x01] {
            let metadata = [&[sorted][..], &dictionary].concat();
            let v = VariantRef::try_new(&metadata, &value).unwrap();
            let object = v.as_object().unwrap();
            for (name, want) in names.iter().zip(1..) {
                assert_eq!(
                    object.get(name).and_then(|f| f.as_i64()),
                    Some(want),
                    "{name}"
                );
            }
            for missing in ["b", "\u{FFFE}", "\u{1F601}"] {
                assert!(object.get(missing).is_none(), "{missing}");
            }
            let m = Metadata::try_new(&metadata).unwrap();
            let mut steps = Vec::new();
            m.resolve(
                VariantPath::parse("$['\u{1F600}']").unwrap().segments(),
                &mut steps,
            );
            let found = VariantRef::try_at_path(m, &value, &steps, DEFAULT_MAX_DEPTH).unwrap();
            assert_eq!(found.and_then(|f| decode(m, f).as_i64()), Some(2));
            let by_name = [PathStep::by_name(&crate::path::PathSegment::Field(
                "\u{FEFF}".into(),
            ))];
            let found = VariantRef::try_at_path(m, &value, &by_name, DEFAULT_MAX_DEPTH).unwrap();
            assert_eq!(found.and_then(|f| decode(m, f).as_i64()), Some(3));
        }
        // In neither order: refused.
        let metadata = [&[0x01][..], &dictionary].concat();
        let value = [0x02, 3, 1, 0, 2, 0, 2, 4, 6, 0x0C, 1, 0x0C, 2, 0x0C, 3];
        let err = VariantRef::try_new(&metadata, &value).unwrap_err();
        assert!(err.message().contains("unsorted field name \"a\""), "{err}");
        let unsorted = [0x11, 2, 0, 1, 2, b'b', b'a'];
        let err = Metadata::try_new(&unsorted).unwrap_err();
        assert!(err.message().contains("marked sorted"), "{err}");
    }

    #[test]
    fn path_lookup_rejects_bad_bytes_on_its_way() {
        // {"a": 1} with field id 5 while the dictionary has one name.
        let metadata = [0x01, 1, 0, 1, b'a'];
        let value = [0x02, 1, 5, 0, 2, 0x0C, 1];
        let m = Metadata::try_new(&metadata).unwrap();
        let mut path = Vec::new();
        m.resolve(VariantPath::parse("$.a").unwrap().segments(), &mut path);
        let err = VariantRef::try_at_path(m, &value, &path, DEFAULT_MAX_DEPTH).unwrap_err();
        assert!(err.message().contains("field id 5 out of range"), "{err}");
        // The sub-value itself is fully validated: a truncated int8.
        let value = [0x02, 1, 0, 0, 1, 0x0C];
        let err = VariantRef::try_at_path(m, &value, &path, DEFAULT_MAX_DEPTH).unwrap_err();
        assert!(err.message().contains("truncated"), "{err}");
    }
}
