//! The Arrow schema a writer may embed in a Parquet footer under
//! `ARROW:schema` is untrusted bytes like the rest of the file. The parquet
//! crate refuses a file whose hint does not decode or whose flatbuffer does
//! not verify (the verifier allows 64 levels of tables: a schema of Variant
//! objects shredded about 30 deep has more), and arrow-ipc 59 converts a
//! verified one with `panic!`s where its fields make no sense (a field of
//! type NONE, a list or map without its child, an integer of 7 bits).
//! [`readable_hint`] says whether the parquet crate would read a hint and
//! arrow-ipc convert it; a hint that would not is dropped, and the file is
//! read with the types its Parquet schema gives. [`embeddable`] keeps our
//! writer from embedding one: every reader built on the parquet crate
//! would refuse the file.

use arrow_ipc::{DateUnit, Endianness, Field, IntervalUnit, Precision, TimeUnit, Type};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// True when the base64 `ARROW:schema` value decodes to a schema that
/// the parquet crate reads and arrow-ipc converts without panicking.
pub(super) fn readable_hint(encoded: &str) -> bool {
    let Ok(bytes) = STANDARD.decode(encoded) else {
        return false;
    };
    // The same framing the parquet crate strips: an optional continuation
    // marker and length.
    let message = if bytes.len() > 8 && bytes[0..4] == [255u8; 4] {
        &bytes[8..]
    } else {
        &bytes[..]
    };
    let Ok(message) = arrow_ipc::root_as_message(message) else {
        return false;
    };
    let Some(schema) = message.header_as_schema() else {
        return false;
    };
    let Some(fields) = schema.fields() else {
        return false;
    };
    // Parquet files are little-endian; arrow-ipc refuses big-endian decimals
    // with a panic, so a big-endian hint is not worth the risk.
    schema.endianness() == Endianness::Little && fields.iter().all(readable_field)
}

/// Whether `schema`, embedded as the hint of a file, would be read back:
/// not when it is too deep for the flatbuffer verifier.
pub(super) fn embeddable(schema: &arrow::datatypes::Schema) -> bool {
    readable_hint(&::parquet::arrow::encode_arrow_schema(schema))
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
