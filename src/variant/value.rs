//! The value: a zero-copy, validated view ([`VariantRef`]) and its validation.

use std::convert::Infallible;
use std::fmt;

use crate::error::{Error, Result, VariantPart};
use crate::variant::decimal::VariantDecimal;
use crate::variant::metadata::{Metadata, PathStep};
use crate::variant::{basic_type, binary_search, read_uint, type_id};

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
    metadata: Metadata<'a>,
    /// From the first field id to the end of the field values.
    bytes: &'a [u8],
    len: u32,
    id_size: u8,
    offset_size: u8,
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
        let Ok(found) = binary_search(self.len(), |i| {
            Ok::<_, Infallible>(self.field_name(i).cmp(name))
        });
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
    metadata: Metadata<'a>,
    /// From the first offset to the end of the elements.
    bytes: &'a [u8],
    len: u32,
    offset_size: u8,
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

/// The sizes of an object or array header, read from its first byte.
struct ContainerHeader {
    is_large: bool,
    id_size: u8,
    offset_size: u8,
}

impl ContainerHeader {
    fn object(header: u8) -> ContainerHeader {
        ContainerHeader {
            offset_size: ((header >> 2) & 0b11) + 1,
            id_size: ((header >> 4) & 0b11) + 1,
            is_large: header & 0b100_0000 != 0,
        }
    }

    fn array(header: u8) -> ContainerHeader {
        ContainerHeader {
            offset_size: ((header >> 2) & 0b11) + 1,
            id_size: 0,
            is_large: header & 0b1_0000 != 0,
        }
    }

    fn count_size(&self) -> usize {
        if self.is_large { 4 } else { 1 }
    }
}

/// Where the parts of a container lie, its sizes checked.
struct Bounds {
    len: usize,
    ids_at: usize,
    offsets_at: usize,
    data_at: usize,
    data_len: usize,
    id_size: u8,
    offset_size: u8,
}

impl Bounds {
    /// Offset `i` (of `len + 1`), relative to the values.
    fn offset(&self, value: &[u8], i: usize) -> usize {
        read_uint(
            value,
            self.offsets_at + i * self.offset_size as usize,
            self.offset_size,
        )
    }

    /// Where the child starting at offset `start` must end: the next child
    /// in byte order, or the end of the values.
    fn child_end(&self, value: &[u8], start: usize) -> usize {
        let offsets =
            &value[self.offsets_at..self.offsets_at + self.len * self.offset_size as usize];
        let after = |o: usize| (o > start).then_some(o);
        // Runs over every field of each object on a path, in every row:
        // values under 256 bytes, the common case, get a loop of their own.
        match self.offset_size {
            1 => offsets.iter().filter_map(|&o| after(o as usize)).min(),
            w => offsets
                .chunks_exact(w as usize)
                .filter_map(|o| after(read_uint(o, 0, w)))
                .min(),
        }
        .unwrap_or(self.data_len)
    }
}

/// Decodes a value known to be valid. `bytes` starts at its header byte.
pub(crate) fn decode<'a>(metadata: Metadata<'a>, bytes: &'a [u8]) -> VariantRef<'a> {
    let header = bytes[0];
    match header & 0b11 {
        basic_type::PRIMITIVE => decode_primitive(header >> 2, &bytes[1..]),
        basic_type::SHORT_STRING => {
            let len = (header >> 2) as usize;
            VariantRef::String(utf8(&bytes[1..1 + len]))
        }
        basic_type::OBJECT => {
            let h = ContainerHeader::object(header);
            let (len, body) = count(&bytes[1..], h.count_size());
            VariantRef::Object(ObjectRef {
                metadata,
                bytes: body,
                len,
                id_size: h.id_size,
                offset_size: h.offset_size,
            })
        }
        _ => {
            let h = ContainerHeader::array(header);
            let (len, body) = count(&bytes[1..], h.count_size());
            VariantRef::Array(ArrayRef {
                metadata,
                bytes: body,
                len,
                offset_size: h.offset_size,
            })
        }
    }
}

/// The valid value at the start of `bytes`, without what follows it.
fn exact(bytes: &[u8]) -> &[u8] {
    &bytes[..encoded_len(bytes)]
}

/// The size of the valid value that starts `bytes`, read from its headers.
pub(crate) fn encoded_len(bytes: &[u8]) -> usize {
    let header = bytes[0];
    match header & 0b11 {
        basic_type::PRIMITIVE => match primitive_type(header >> 2).and_then(fixed_size) {
            Some(size) => 1 + size,
            None => 1 + 4 + read_uint(bytes, 1, 4),
        },
        basic_type::SHORT_STRING => 1 + (header >> 2) as usize,
        _ => {
            let h = if header & 0b11 == basic_type::OBJECT {
                ContainerHeader::object(header)
            } else {
                ContainerHeader::array(header)
            };
            let count_size = h.count_size();
            let len = read_uint(bytes, 1, count_size as u8);
            let offsets_at = 1 + count_size + len * h.id_size as usize;
            let w = h.offset_size as usize;
            offsets_at + (len + 1) * w + read_uint(bytes, offsets_at + len * w, h.offset_size)
        }
    }
}

fn count(bytes: &[u8], size: usize) -> (u32, &[u8]) {
    (read_uint(bytes, 0, size as u8) as u32, &bytes[size..])
}

/// A validated string: validation has already run `from_utf8` on these bytes.
fn utf8(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

fn fixed<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&data[..N]);
    out
}

fn decode_primitive(id: u8, data: &[u8]) -> VariantRef<'_> {
    let i64_at = |d: &[u8]| i64::from_le_bytes(fixed(d));
    // Validated: scale <= 38 and at most 38 digits.
    let decimal = |d: &[u8]| read_decimal(id, d).unwrap_or(VariantDecimal::from(0));
    match id {
        type_id::NULL => VariantRef::Null,
        type_id::TRUE => VariantRef::Bool(true),
        type_id::FALSE => VariantRef::Bool(false),
        type_id::INT8 => VariantRef::Int8(data[0] as i8),
        type_id::INT16 => VariantRef::Int16(i16::from_le_bytes(fixed(data))),
        type_id::INT32 => VariantRef::Int32(i32::from_le_bytes(fixed(data))),
        type_id::INT64 => VariantRef::Int64(i64_at(data)),
        type_id::DOUBLE => VariantRef::Double(f64::from_le_bytes(fixed(data))),
        type_id::DECIMAL4 => VariantRef::Decimal4(decimal(data)),
        type_id::DECIMAL8 => VariantRef::Decimal8(decimal(data)),
        type_id::DECIMAL16 => VariantRef::Decimal16(decimal(data)),
        type_id::DATE => VariantRef::Date(i32::from_le_bytes(fixed(data))),
        type_id::TIMESTAMP_MICROS => VariantRef::TimestampMicros(i64_at(data)),
        type_id::TIMESTAMP_NTZ_MICROS => VariantRef::TimestampNtzMicros(i64_at(data)),
        type_id::FLOAT => VariantRef::Float(f32::from_le_bytes(fixed(data))),
        type_id::BINARY | type_id::STRING => {
            let len = u32::from_le_bytes(fixed(data)) as usize;
            let payload = &data[4..4 + len];
            if id == type_id::BINARY {
                VariantRef::Binary(payload)
            } else {
                VariantRef::String(utf8(payload))
            }
        }
        type_id::TIME_NTZ_MICROS => VariantRef::TimeNtzMicros(i64_at(data)),
        type_id::TIMESTAMP_NANOS => VariantRef::TimestampNanos(i64_at(data)),
        type_id::TIMESTAMP_NTZ_NANOS => VariantRef::TimestampNtzNanos(i64_at(data)),
        _ => VariantRef::Uuid(fixed(data)),
    }
}

/// The decimal of a decimal4/8/16 primitive (type `id`) whose data, a
/// scale byte then the unscaled value, starts `data`.
fn read_decimal(id: u8, data: &[u8]) -> Result<VariantDecimal> {
    let unscaled = match id {
        type_id::DECIMAL4 => i32::from_le_bytes(fixed(&data[1..])) as i128,
        type_id::DECIMAL8 => i64::from_le_bytes(fixed(&data[1..])) as i128,
        _ => i128::from_le_bytes(fixed(&data[1..])),
    };
    VariantDecimal::try_new(unscaled, data[0])
}

/// The type of primitive type id `id`, if the spec defines it.
fn primitive_type(id: u8) -> Option<VariantType> {
    Some(match id {
        type_id::NULL => VariantType::Null,
        type_id::TRUE | type_id::FALSE => VariantType::Boolean,
        type_id::INT8 => VariantType::Int8,
        type_id::INT16 => VariantType::Int16,
        type_id::INT32 => VariantType::Int32,
        type_id::INT64 => VariantType::Int64,
        type_id::DOUBLE => VariantType::Double,
        type_id::DECIMAL4 => VariantType::Decimal4,
        type_id::DECIMAL8 => VariantType::Decimal8,
        type_id::DECIMAL16 => VariantType::Decimal16,
        type_id::DATE => VariantType::Date,
        type_id::TIMESTAMP_MICROS => VariantType::TimestampMicros,
        type_id::TIMESTAMP_NTZ_MICROS => VariantType::TimestampNtzMicros,
        type_id::FLOAT => VariantType::Float,
        type_id::BINARY => VariantType::Binary,
        type_id::STRING => VariantType::String,
        type_id::TIME_NTZ_MICROS => VariantType::TimeNtzMicros,
        type_id::TIMESTAMP_NANOS => VariantType::TimestampNanos,
        type_id::TIMESTAMP_NTZ_NANOS => VariantType::TimestampNtzNanos,
        type_id::UUID => VariantType::Uuid,
        _ => return None,
    })
}

/// The size of a primitive's data after its header byte; `None` for the
/// length-prefixed binary and string.
fn fixed_size(t: VariantType) -> Option<usize> {
    Some(match t {
        VariantType::Null | VariantType::Boolean => 0,
        VariantType::Int8 => 1,
        VariantType::Int16 => 2,
        VariantType::Int32 | VariantType::Date | VariantType::Float => 4,
        VariantType::Int64
        | VariantType::Double
        | VariantType::TimestampMicros
        | VariantType::TimestampNtzMicros
        | VariantType::TimeNtzMicros
        | VariantType::TimestampNanos
        | VariantType::TimestampNtzNanos => 8,
        VariantType::Decimal4 => 5,
        VariantType::Decimal8 => 9,
        VariantType::Decimal16 => 17,
        VariantType::Uuid => 16,
        VariantType::Binary | VariantType::String | VariantType::Object | VariantType::Array => {
            return None;
        }
    })
}

/// What validation reports of a value as it checks it, in the order of a
/// walk of the value (object fields in name order): so that a renderer
/// reads the bytes once, checking and writing together, instead of
/// validating first and walking the value again. Each call comes once the
/// part it reports is checked; a value found invalid part-way stops the
/// calls, and what was written must be discarded.
pub(crate) trait Visit {
    /// Whether the calls are wanted: validation alone (`()`) skips
    /// decoding the scalars it would pass.
    const ACTIVE: bool = true;
    /// A primitive or string value.
    fn scalar(&mut self, v: VariantRef<'_>);
    fn begin_object(&mut self);
    /// The key of an object's next field: dictionary id `id`; `first` for
    /// the object's first field.
    fn key(&mut self, metadata: &Metadata<'_>, id: usize, first: bool);
    fn end_object(&mut self);
    fn begin_array(&mut self);
    /// Before each element; `first` for the array's first.
    fn element(&mut self, first: bool);
    fn end_array(&mut self);
}

/// Validation alone.
impl Visit for () {
    const ACTIVE: bool = false;
    fn scalar(&mut self, _: VariantRef<'_>) {}
    fn begin_object(&mut self) {}
    fn key(&mut self, _: &Metadata<'_>, _: usize, _: bool) {}
    fn end_object(&mut self) {}
    fn begin_array(&mut self) {}
    fn element(&mut self, _: bool) {}
    fn end_array(&mut self) {}
}

/// Validates `value` against `metadata` as
/// [`try_with_name_order`](VariantRef::try_with_name_order) does, telling
/// `visit` what it holds as it goes.
pub(crate) fn validate_with(
    metadata: Metadata<'_>,
    value: &[u8],
    max_depth: usize,
    name_order: Option<&[u32]>,
    scratch: &mut Scratch,
    visit: &mut impl Visit,
) -> Result<()> {
    let mut validator = Validator::new(&metadata, name_order, value, max_depth, visit, scratch);
    let size = validator.value(0, value.len(), 0)?;
    if size != value.len() {
        return Err(err(
            size,
            format!("{} bytes after the end of the value", value.len() - size),
        ));
    }
    Ok(())
}

/// Checks one value tree against the spec, once, so that decoding never has
/// to. Work is linear in the bytes: child values of a container may not
/// overlap, which also rules out crafted inputs that reuse one subtree
/// many times over.
struct Validator<'m, 'a, V> {
    metadata: &'m Metadata<'a>,
    /// Each id's place in name order, for an unsorted dictionary.
    name_order: Option<&'m [u32]>,
    value: &'a [u8],
    max_depth: usize,
    visit: &'m mut V,
    scratch: &'m mut Scratch,
}

/// Buffers that validation reuses from value to value, for containers
/// whose children are not stored in field order.
#[derive(Default)]
pub(crate) struct Scratch {
    /// For sorting such a container's children by where they start:
    /// `(offset, index)`.
    by_offset: Vec<(usize, usize)>,
    /// Where each child of such containers must end, by index: a stack,
    /// each container's below its children's.
    limits: Vec<usize>,
}

impl<'m, 'a, V: Visit> Validator<'m, 'a, V> {
    fn new(
        metadata: &'m Metadata<'a>,
        name_order: Option<&'m [u32]>,
        value: &'a [u8],
        max_depth: usize,
        visit: &'m mut V,
        scratch: &'m mut Scratch,
    ) -> Self {
        // A value that failed validation may have left limits behind.
        scratch.limits.clear();
        Validator {
            metadata,
            name_order,
            value,
            max_depth,
            visit,
            scratch,
        }
    }

    /// Validates the value starting at `at`, which must end by `end`;
    /// returns its size.
    fn value(&mut self, at: usize, end: usize, depth: usize) -> Result<usize> {
        let header = self.header(at, end)?;
        match header & 0b11 {
            basic_type::PRIMITIVE => self.primitive(at, end, header >> 2),
            basic_type::SHORT_STRING => {
                let len = (header >> 2) as usize;
                self.need(at + 1, len, end, "short string")?;
                let s = self.check_utf8(at + 1, len)?;
                self.visit.scalar(VariantRef::String(s));
                Ok(1 + len)
            }
            basic_type::OBJECT => {
                self.container(at, end, depth, ContainerHeader::object(header), true)
            }
            _ => self.container(at, end, depth, ContainerHeader::array(header), false),
        }
    }

    fn primitive(&mut self, at: usize, end: usize, id: u8) -> Result<usize> {
        let data = at + 1;
        let t =
            primitive_type(id).ok_or_else(|| err(at, format!("unknown primitive type id {id}")))?;
        match fixed_size(t) {
            None => {
                self.need(data, 4, end, t.name())?;
                let len = read_uint(self.value, data, 4);
                self.need(data + 4, len, end, t.name())?;
                if t == VariantType::String {
                    let s = self.check_utf8(data + 4, len)?;
                    self.visit.scalar(VariantRef::String(s));
                } else {
                    let bytes = &self.value[data + 4..data + 4 + len];
                    self.visit.scalar(VariantRef::Binary(bytes));
                }
                Ok(1 + 4 + len)
            }
            Some(size) => {
                self.need(data, size, end, t.name())?;
                let bytes = &self.value[data..data + size];
                match id {
                    type_id::DECIMAL4 | type_id::DECIMAL8 | type_id::DECIMAL16 => {
                        read_decimal(id, bytes).map_err(|e| err(data, e.message().to_string()))?;
                    }
                    type_id::TIME_NTZ_MICROS => {
                        let t = i64::from_le_bytes(fixed(bytes));
                        if !(0..MICROS_PER_DAY).contains(&t) {
                            return Err(err(
                                data,
                                format!("time {t} is outside 0..86400000000 microseconds"),
                            ));
                        }
                    }
                    _ => {}
                }
                if V::ACTIVE {
                    self.visit.scalar(decode_primitive(id, bytes));
                }
                Ok(1 + size)
            }
        }
    }

    /// Follows `path` from the top-level value, checking each container on
    /// the way; returns where the sub-value starts and the end it must fit
    /// before.
    fn locate(&mut self, path: &[PathStep]) -> Result<Option<(usize, usize)>> {
        let (mut at, mut end) = (0, self.value.len());
        for (depth, step) in path.iter().enumerate() {
            let header = self.header(at, end)?;
            let h = match (header & 0b11, step) {
                (basic_type::ARRAY, PathStep::Index(_)) => ContainerHeader::array(header),
                (basic_type::OBJECT, PathStep::Index(_)) | (basic_type::ARRAY, _) => {
                    return Ok(None);
                }
                (basic_type::OBJECT, _) => ContainerHeader::object(header),
                _ => return Ok(None),
            };
            let c = self.container_bounds(at, end, depth, &h)?;
            let index = match step {
                PathStep::Key(id) => self.find_field(&c, |i| i == *id)?,
                PathStep::Absent => self.find_field(&c, |_| false)?,
                PathStep::Name(name) => binary_search(c.len, |i| {
                    Ok(self.metadata.name(self.field_id(&c, i)?).cmp(name))
                })?,
                PathStep::Index(k) => (*k < c.len).then_some(*k),
            };
            let Some(i) = index else {
                return Ok(None);
            };
            let start = self.child_offset(&c, i)?;
            (at, end) = (
                c.data_at + start,
                c.data_at + c.child_end(self.value, start),
            );
        }
        Ok(Some((at, end)))
    }

    /// The first field of object `c` whose key id satisfies `is`; every id
    /// up to it is checked against the dictionary.
    #[inline]
    fn find_field(&self, c: &Bounds, is: impl Fn(usize) -> bool) -> Result<Option<usize>> {
        for i in 0..c.len {
            if is(self.field_id(c, i)?) {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The header byte at `at`, which must lie before `end`.
    #[inline]
    fn header(&self, at: usize, end: usize) -> Result<u8> {
        self.value
            .get(at)
            .copied()
            .filter(|_| at < end)
            .ok_or_else(|| err(at, "truncated: expected a value header byte"))
    }

    /// Checks a container's depth, count, ids and offsets lie within
    /// `at..end`, and says where its parts are.
    #[inline(always)]
    fn container_bounds(
        &self,
        at: usize,
        end: usize,
        depth: usize,
        h: &ContainerHeader,
    ) -> Result<Bounds> {
        let what = if h.id_size > 0 { "object" } else { "array" };
        if depth >= self.max_depth {
            return Err(err(
                at,
                format!("{what} nested deeper than the limit of {}", self.max_depth),
            ));
        }
        let count_at = at + 1;
        self.need(count_at, h.count_size(), end, "element count")?;
        let len = read_uint(self.value, count_at, h.count_size() as u8);
        let ids_at = count_at + h.count_size();
        let id_bytes = len * h.id_size as usize;
        // len < 2^32, sizes <= 4: no overflow on 64-bit targets.
        let offset_bytes = (len + 1) * h.offset_size as usize;
        self.need(ids_at, id_bytes + offset_bytes, end, what)?;
        let mut bounds = Bounds {
            len,
            ids_at,
            offsets_at: ids_at + id_bytes,
            data_at: ids_at + id_bytes + offset_bytes,
            data_len: 0,
            id_size: h.id_size,
            offset_size: h.offset_size,
        };
        bounds.data_len = bounds.offset(self.value, len);
        self.need(bounds.data_at, bounds.data_len, end, "container values")?;
        Ok(bounds)
    }

    /// The dictionary id of field `i`, checked against the dictionary.
    #[inline(always)]
    fn field_id(&self, c: &Bounds, i: usize) -> Result<usize> {
        let id_at = c.ids_at + i * c.id_size as usize;
        let id = read_uint(self.value, id_at, c.id_size);
        let dict_len = self.metadata.len();
        if id >= dict_len {
            return Err(err(
                id_at,
                format!("field id {id} out of range (dictionary has {dict_len} names)"),
            ));
        }
        Ok(id)
    }

    /// The offset of child `i`, checked to start inside the values.
    #[inline(always)]
    fn child_offset(&self, c: &Bounds, i: usize) -> Result<usize> {
        let o = c.offset(self.value, i);
        if o >= c.data_len {
            return Err(err(
                c.offsets_at + i * c.offset_size as usize,
                format!(
                    "offset {o} of element {i} is past the end of the values ({} bytes)",
                    c.data_len
                ),
            ));
        }
        Ok(o)
    }

    fn container(
        &mut self,
        at: usize,
        end: usize,
        depth: usize,
        h: ContainerHeader,
        is_object: bool,
    ) -> Result<usize> {
        let what = if is_object { "object" } else { "array" };
        let c = self.container_bounds(at, end, depth, &h)?;
        let data_end = c.data_at + c.data_len;
        if is_object {
            // In a sorted dictionary (unique names, ascending) ids order as
            // their names do; else their places in name order, if known.
            let before = |p: usize, id: usize| match self.name_order {
                _ if self.metadata.is_sorted() => p < id,
                Some(order) => order[p] < order[id],
                None => self.metadata.name(p).as_bytes() < self.metadata.name(id).as_bytes(),
            };
            let mut prev = None;
            for i in 0..c.len {
                let id = self.field_id(&c, i)?;
                if let Some(p) = prev
                    && !before(p, id)
                {
                    let (p, name) = (self.metadata.name(p), self.metadata.name(id));
                    let problem = if p == name { "duplicate" } else { "unsorted" };
                    return Err(err(
                        c.ids_at + i * c.id_size as usize,
                        format!(
                            "{problem} field name {name:?} after {p:?} (names must be unique and ascending)"
                        ),
                    ));
                }
                prev = Some(id);
            }
        }

        // Children, in field order: each starts at its offset and must end
        // before the next child in byte order starts.
        let mut in_order = true;
        let mut last_start = 0;
        for i in 0..c.len {
            let o = self.child_offset(&c, i)?;
            in_order &= i == 0 || o > last_start;
            last_start = o;
        }
        let limits_at = self.scratch.limits.len();
        if !in_order {
            self.child_limits(&c, what)?;
        }
        if is_object {
            self.visit.begin_object();
        } else {
            self.visit.begin_array();
        }
        for i in 0..c.len {
            let start = c.offset(self.value, i);
            let limit = if !in_order {
                self.scratch.limits[limits_at + i]
            } else if i + 1 < c.len {
                c.offset(self.value, i + 1)
            } else {
                c.data_len
            };
            // Validation alone reads no ids here (the reads could panic,
            // so the compiler would keep them).
            if V::ACTIVE {
                if is_object {
                    let id = read_uint(self.value, c.ids_at + i * c.id_size as usize, c.id_size);
                    self.visit.key(self.metadata, id, i == 0);
                } else {
                    self.visit.element(i == 0);
                }
            }
            self.value(c.data_at + start, c.data_at + limit, depth + 1)?;
        }
        self.scratch.limits.truncate(limits_at);
        if is_object {
            self.visit.end_object();
        } else {
            self.visit.end_array();
        }
        Ok(data_end - at)
    }

    /// Pushes onto `limits` where each child of `c` (whose offsets are not
    /// in field order) must end: where the next child in byte order
    /// starts. Two children may not start at one offset.
    fn child_limits(&mut self, c: &Bounds, what: &str) -> Result<()> {
        let Scratch { by_offset, limits } = &mut *self.scratch;
        let at = limits.len();
        limits.resize(at + c.len, 0);
        by_offset.clear();
        by_offset.extend((0..c.len).map(|i| (c.offset(self.value, i), i)));
        by_offset.sort_unstable();
        for (k, &(o, i)) in by_offset.iter().enumerate() {
            let limit = by_offset.get(k + 1).map_or(c.data_len, |&(next, _)| next);
            if limit == o {
                return Err(err(
                    c.offsets_at + i * c.offset_size as usize,
                    format!("{what} element {i} shares offset {o} with another element"),
                ));
            }
            limits[at + i] = limit;
        }
        Ok(())
    }

    /// Checks that `len` bytes from `at` lie before `end`.
    #[inline]
    fn need(&self, at: usize, len: usize, end: usize, what: &str) -> Result<()> {
        if at.checked_add(len).is_none_or(|stop| stop > end) {
            return Err(err(
                at,
                format!(
                    "truncated: {what} needs {len} bytes, {} are left",
                    end.saturating_sub(at)
                ),
            ));
        }
        Ok(())
    }

    fn check_utf8(&self, at: usize, len: usize) -> Result<&'a str> {
        std::str::from_utf8(&self.value[at..at + len])
            .map_err(|e| err(at + e.valid_up_to(), "string is not valid UTF-8"))
    }
}

#[cold]
fn err(byte: usize, message: impl Into<String>) -> Error {
    Error::variant(VariantPart::Value, byte, message)
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
