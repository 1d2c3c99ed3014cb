//! The Arrow schema a writer may embed in a Parquet footer under
//! `ARROW:schema` is untrusted bytes like the rest of the file. The parquet
//! crate drops a hint whose flatbuffer does not verify, but arrow-ipc 59
//! converts a verified one with `panic!`s where its fields make no sense (a
//! field of type NONE, a list or map without its child, an integer of 7
//! bits). [`readable_hint`] walks the hint first and says whether arrow-ipc
//! would convert it; a hint it would not is dropped the same way, and the
//! file is read with the types its Parquet schema gives.

use arrow_ipc::{DateUnit, Endianness, Field, IntervalUnit, Precision, TimeUnit, Type};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// True when the base64 `ARROW:schema` value decodes to a schema that
/// arrow-ipc converts without panicking. One that does not verify counts as
/// readable: the parquet crate drops it itself.
pub(super) fn readable_hint(encoded: &str) -> bool {
    let Ok(bytes) = STANDARD.decode(encoded) else {
        return true;
    };
    // The same framing the parquet crate strips: an optional continuation
    // marker and length.
    let message = if bytes.len() > 8 && bytes[0..4] == [255u8; 4] {
        &bytes[8..]
    } else {
        &bytes[..]
    };
    let Ok(message) = arrow_ipc::root_as_message(message) else {
        return true;
    };
    let Some(schema) = message.header_as_schema() else {
        return true;
    };
    let Some(fields) = schema.fields() else {
        return false;
    };
    // Parquet files are little-endian; arrow-ipc refuses big-endian decimals
    // with a panic, so a big-endian hint is not worth the risk.
    schema.endianness() == Endianness::Little && fields.iter().all(readable_field)
}

fn readable_field(field: Field<'_>) -> bool {
    if let Some(dictionary) = field.dictionary() {
        match dictionary.indexType() {
            Some(index) if matches!(index.bitWidth(), 8 | 16 | 32 | 64) => {}
            _ => return false,
        }
    }
    let children = field.children();
    let child_count = children.map_or(0, |c| c.len());
    let own = match field.type_type() {
        Type::Null
        | Type::Bool
        | Type::Binary
        | Type::BinaryView
        | Type::LargeBinary
        | Type::Utf8
        | Type::Utf8View
        | Type::LargeUtf8
        | Type::Struct_ => true,
        Type::Int => field
            .type_as_int()
            .is_some_and(|int| matches!(int.bitWidth(), 8 | 16 | 32 | 64)),
        Type::FixedSizeBinary => field.type_as_fixed_size_binary().is_some(),
        Type::FloatingPoint => field.type_as_floating_point().is_some_and(|float| {
            matches!(
                float.precision(),
                Precision::HALF | Precision::SINGLE | Precision::DOUBLE
            )
        }),
        Type::Date => field
            .type_as_date()
            .is_some_and(|date| matches!(date.unit(), DateUnit::DAY | DateUnit::MILLISECOND)),
        Type::Time => field.type_as_time().is_some_and(|time| {
            matches!(
                (time.bitWidth(), time.unit()),
                (32, TimeUnit::SECOND | TimeUnit::MILLISECOND)
                    | (64, TimeUnit::MICROSECOND | TimeUnit::NANOSECOND)
            )
        }),
        Type::Timestamp => field
            .type_as_timestamp()
            .is_some_and(|t| known_time_unit(t.unit())),
        Type::Duration => field
            .type_as_duration()
            .is_some_and(|d| known_time_unit(d.unit())),
        Type::Interval => field.type_as_interval().is_some_and(|interval| {
            matches!(
                interval.unit(),
                IntervalUnit::YEAR_MONTH | IntervalUnit::DAY_TIME | IntervalUnit::MONTH_DAY_NANO
            )
        }),
        Type::List | Type::LargeList | Type::ListView | Type::LargeListView => child_count == 1,
        Type::FixedSizeList => child_count == 1 && field.type_as_fixed_size_list().is_some(),
        Type::Map => child_count == 1 && field.type_as_map().is_some(),
        Type::RunEndEncoded => child_count == 2,
        Type::Decimal => field.type_as_decimal().is_some_and(|decimal| {
            u8::try_from(decimal.precision()).is_ok()
                && i8::try_from(decimal.scale()).is_ok()
                && matches!(decimal.bitWidth(), 32 | 64 | 128 | 256)
        }),
        // A Parquet file cannot hold a union, so a hint of one is of no use.
        _ => false,
    };
    own && children.is_none_or(|c| c.iter().all(readable_field))
}

fn known_time_unit(unit: TimeUnit) -> bool {
    matches!(
        unit,
        TimeUnit::SECOND | TimeUnit::MILLISECOND | TimeUnit::MICROSECOND | TimeUnit::NANOSECOND
    )
}
