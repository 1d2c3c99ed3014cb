//! The Variant binary encoding (`VariantEncoding.md` in apache/parquet-format).
//!
//! A Variant is two byte strings: the *metadata*, a dictionary of the field
//! names used, and the *value*, a self-describing tree whose objects refer to
//! names by dictionary id. This module has no Arrow, Parquet or I/O in it:
//!
//! - [`Metadata`]: a validated, zero-copy view of the metadata;
//! - [`VariantRef`]: a validated, zero-copy view of a value, with
//!   [`ObjectRef`] and [`ArrayRef`] for the containers;
//! - [`VariantBuilder`]: writes metadata + value with the smallest widths;
//! - [`VariantDecimal`]: an exact decimal of up to 38 digits;
//! - [`compare`]: a total order over values (Spark's), for min and max.
//!
//! ```
//! use vshred::variant::{VariantBuilder, VariantRef};
//!
//! let mut builder = VariantBuilder::new();
//! builder.begin_object();
//! builder.key("name");
//! builder.string("ada");
//! builder.key("year");
//! builder.int(1843);
//! builder.end_object()?;
//! let (metadata, value) = builder.finish();
//!
//! let variant = VariantRef::try_new(metadata, value)?;
//! let object = variant.as_object().unwrap();
//! assert_eq!(object.get("year").and_then(|v| v.as_i64()), Some(1843));
//! assert_eq!(object.get("name").and_then(|v| v.as_str()), Some("ada"));
//! # Ok::<(), vshred::Error>(())
//! ```

mod builder;
mod decimal;
mod decode;
mod metadata;
mod order;
pub(crate) mod time;
mod validate;
mod value;

pub(crate) use builder::write_object_without;
pub use builder::{DuplicateKeys, VariantBuilder};
pub use decimal::{VariantDecimal, nearest_double};
pub(crate) use decode::decode;
pub use metadata::Metadata;
pub(crate) use metadata::PathStep;
pub(crate) use order::nanos_since_epoch;
pub use order::{Kind, compare};
pub(crate) use validate::{Scratch, Visit, validate_with};
pub use value::{ArrayRef, DEFAULT_MAX_DEPTH, ObjectRef, VariantRef, VariantType};

/// The 2-bit basic type in the low bits of a value's first byte.
pub(crate) mod basic_type {
    pub const PRIMITIVE: u8 = 0;
    pub const SHORT_STRING: u8 = 1;
    pub const OBJECT: u8 = 2;
    pub const ARRAY: u8 = 3;
}

/// Primitive type ids, from the spec's "Variant primitive types" table.
pub(crate) mod type_id {
    pub const NULL: u8 = 0;
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const INT8: u8 = 3;
    pub const INT16: u8 = 4;
    pub const INT32: u8 = 5;
    pub const INT64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const DECIMAL4: u8 = 8;
    pub const DECIMAL8: u8 = 9;
    pub const DECIMAL16: u8 = 10;
    pub const DATE: u8 = 11;
    pub const TIMESTAMP_MICROS: u8 = 12;
    pub const TIMESTAMP_NTZ_MICROS: u8 = 13;
    pub const FLOAT: u8 = 14;
    pub const BINARY: u8 = 15;
    pub const STRING: u8 = 16;
    pub const TIME_NTZ_MICROS: u8 = 17;
    pub const TIMESTAMP_NANOS: u8 = 18;
    pub const TIMESTAMP_NTZ_NANOS: u8 = 19;
    pub const UUID: u8 = 20;
}

/// Longest string that fits the one-byte short-string header.
pub(crate) const MAX_SHORT_STRING: usize = 63;

/// The number of bytes (1-4) an unsigned little-endian field needs to hold `v`.
#[inline]
pub(crate) fn width_for(v: usize) -> u8 {
    match v {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

/// Reads an unsigned little-endian integer of `width` (1-4) bytes. The
/// caller has checked that `bytes[at..at + width]` exists.
#[inline]
pub(crate) fn read_uint(bytes: &[u8], at: usize, width: u8) -> usize {
    let b = &bytes[at..at + width as usize];
    match width {
        1 => b[0] as usize,
        2 => u16::from_le_bytes([b[0], b[1]]) as usize,
        3 => u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize,
        _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
    }
}

/// Appends `v` as an unsigned little-endian integer of `width` (1-4) bytes.
#[inline]
pub(crate) fn write_uint(out: &mut [u8], v: usize, width: u8) {
    out[..width as usize].copy_from_slice(&(v as u32).to_le_bytes()[..width as usize]);
}

/// The index in `0..len` of `name`, where `name_at(i)` is the `i`-th of
/// names in ascending order (dictionary names, an object's field names):
/// by binary search, then, for a name it missed that may sort otherwise,
/// by a scan.
///
/// Ascending is the spec's order, UTF-8 bytes, or Java's, UTF-16 code
/// units, which Spark writes ([`ascending_in_java_order`]). The two
/// differ only between characters from U+E000 up, so a binary search in
/// either order finds a name without such characters.
#[inline]
pub(crate) fn find_name<'n, E>(
    len: usize,
    name_at: impl Fn(usize) -> Result<&'n str, E>,
    name: &str,
) -> Result<Option<usize>, E> {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match name_at(mid)?.cmp(name) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(Some(mid)),
        }
    }
    // UTF-8 lead bytes from 0xEE start the characters from U+E000 up.
    if name.bytes().any(|b| b >= 0xEE) {
        for i in 0..len {
            if name_at(i)? == name {
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

/// Whether `names` ascend in Java's `String` order, by UTF-16 code units:
/// the order Spark sorts object keys and dictionaries by, which puts
/// characters above U+FFFF before those from U+E000 to U+FFFF. Checked
/// where names do not ascend in the spec's order, UTF-8 bytes, so that
/// Spark's values with such keys read.
pub(crate) fn ascending_in_java_order<'n>(names: impl Iterator<Item = &'n str>) -> bool {
    let mut previous: Option<&str> = None;
    for name in names {
        if previous.is_some_and(|p| p.encode_utf16().cmp(name.encode_utf16()).is_ge()) {
            return false;
        }
        previous = Some(name);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_the_smallest_that_holds_the_value() {
        for (v, w) in [
            (0, 1),
            (255, 1),
            (256, 2),
            (65535, 2),
            (65536, 3),
            (0xFF_FFFF, 3),
            (0x100_0000, 4),
        ] {
            assert_eq!(width_for(v), w, "{v}");
            let mut buf = [0u8; 4];
            write_uint(&mut buf, v, w);
            assert_eq!(read_uint(&buf, 0, w), v);
        }
    }
}
