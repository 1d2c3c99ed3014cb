//! Decoding values known to be valid: [`decode`] reads a value's header and
//! builds the view of it, [`encoded_len`] finds where it ends. Nothing is
//! checked here; [`validate`](super::validate) has checked it all before.

use crate::error::Result;
use crate::variant::decimal::VariantDecimal;
use crate::variant::metadata::Metadata;
use crate::variant::value::{ArrayRef, ObjectRef, VariantRef, VariantType};
use crate::variant::{basic_type, read_uint, type_id};

/// The sizes of an object or array header, read from its first byte.
pub(super) struct ContainerHeader {
    pub(super) is_large: bool,
    pub(super) id_size: u8,
    pub(super) offset_size: u8,
}

impl ContainerHeader {
    pub(super) fn object(header: u8) -> ContainerHeader {
        ContainerHeader {
            offset_size: ((header >> 2) & 0b11) + 1,
            id_size: ((header >> 4) & 0b11) + 1,
            is_large: header & 0b100_0000 != 0,
        }
    }

    pub(super) fn array(header: u8) -> ContainerHeader {
        ContainerHeader {
            offset_size: ((header >> 2) & 0b11) + 1,
            id_size: 0,
            is_large: header & 0b1_0000 != 0,
        }
    }

    pub(super) fn count_size(&self) -> usize {
        if self.is_large { 4 } else { 1 }
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
pub(super) fn exact(bytes: &[u8]) -> &[u8] {
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

pub(super) fn fixed<const N: usize>(data: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&data[..N]);
    out
}

pub(super) fn decode_primitive(id: u8, data: &[u8]) -> VariantRef<'_> {
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
pub(super) fn read_decimal(id: u8, data: &[u8]) -> Result<VariantDecimal> {
    let unscaled = match id {
        type_id::DECIMAL4 => i32::from_le_bytes(fixed(&data[1..])) as i128,
        type_id::DECIMAL8 => i64::from_le_bytes(fixed(&data[1..])) as i128,
        _ => i128::from_le_bytes(fixed(&data[1..])),
    };
    VariantDecimal::try_new(unscaled, data[0])
}

/// The type of primitive type id `id`, if the spec defines it.
pub(super) fn primitive_type(id: u8) -> Option<VariantType> {
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
pub(super) fn fixed_size(t: VariantType) -> Option<usize> {
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
