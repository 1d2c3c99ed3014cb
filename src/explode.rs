//! `variant_explode`: each Variant object's fields, or each array's
//! elements, as a list of `{pos, key, value}` per row, as Spark's table
//! function gives them as rows: `pos` the field's place in its object (the
//! spec keeps fields in name order, as Spark does) or the element's index,
//! `key` the field's name (null for an element), `value` a Variant. Rows
//! that are not an object or an array (SQL null, the Variant null, a
//! scalar) give an empty list, as Spark's give no row; with
//! [`variant_explode_outer`], as with Spark's, they and empty ones give
//! one entry of nulls.
//!
//! The values share their row's metadata: each one's `metadata` is a view
//! of the row's bytes, not a copy (an object used as a map may have
//! thousands of keys, each in every row's metadata), so the Variant
//! columns of the result are `BinaryView`s. A shredded row is not rebuilt
//! whole to be split again: its residual's fields are views of their
//! bytes as an unshredded row's are, and only its typed fields or
//! elements are rebuilt, each with metadata of its own (a scalar's three
//! bytes fit in the view).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryViewArray, BinaryViewBuilder, Int32Builder, ListArray,
    MAX_INLINE_VIEW_LEN, StringBuilder, StructArray, make_view,
};
use arrow::buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Fields};

use crate::error::{Error, ErrorKind, Result};
use crate::shred::{ShreddingSchema, variant_field};
use crate::unshred::{Entry, ShreddedColumn};
use crate::variant::VariantBuilder;

/// The type of each exploded entry: `struct<pos int, key string, value
/// variant>`; `pos` and `value` are null only in the entry that
/// [`variant_explode_outer`] gives a row without entries.
pub fn entry_fields(outer: bool) -> Fields {
    Fields::from(vec![
        Field::new("pos", DataType::Int32, outer),
        Field::new("key", DataType::Utf8, true),
        value_field().with_nullable(outer),
    ])
}

/// The list type [`variant_explode`] (or, when `outer`,
/// [`variant_explode_outer`]) returns.
pub fn exploded_type(outer: bool) -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(entry_fields(outer)),
        false,
    )))
}

fn value_field() -> Field {
    let struct_type = DataType::Struct(Fields::from(vec![
        Field::new("metadata", DataType::BinaryView, false),
        Field::new("value", DataType::BinaryView, false),
    ]));
    variant_field("value", &ShreddingSchema::Variant)
        .with_data_type(struct_type)
        .with_nullable(false)
}

/// The fields or elements of each Variant of `column` (a Variant struct,
/// shredded or not), one list per row ([`exploded_type`]).
pub fn variant_explode(column: &StructArray) -> Result<ListArray> {
    explode(column, false)
}

/// As [`variant_explode`], but a row with no fields or elements (null, a
/// scalar, an empty object or array) gives one entry of nulls, as Spark's
/// `variant_explode_outer` gives one row of them.
pub fn variant_explode_outer(column: &StructArray) -> Result<ListArray> {
    explode(column, true)
}

fn explode(column: &StructArray, outer: bool) -> Result<ListArray> {
    let reader = ShreddedColumn::try_new(column)?;
    let metadata = column
        .column_by_name("metadata")
        .ok_or_else(|| Error::new(ErrorKind::Usage, "a Variant column has no metadata"))?;
    let metadata = arrow::compute::cast(metadata, &DataType::BinaryView)
        .map_err(|e| Error::new(ErrorKind::Usage, format!("a Variant's metadata: {e}")))?;
    let metadata = metadata.as_binary_view();
    let mut offsets = Vec::with_capacity(column.len() + 1);
    offsets.push(0i32);
    let mut pos = Int32Builder::new();
    let mut keys = StringBuilder::new();
    let mut values = BinaryViewBuilder::new();
    // A stored entry's metadata is its row's view, repeated; a rebuilt
    // one's is inline in its view (a scalar's takes 3 bytes) or, longer,
    // in one more buffer after the rows'.
    let mut metadata_views: Vec<u128> = Vec::new();
    let mut rebuilt_metadata: Vec<u8> = Vec::new();
    let rebuilt_block = metadata.data_buffers().len() as u32;
    let mut builder = VariantBuilder::new();
    for row in 0..column.len() {
        let mut entries = 0usize;
        reader.entries(row, &mut builder, |key, value| {
            pos.append_value(entries as i32);
            keys.append_option(key);
            match value {
                Entry::Stored(bytes) => {
                    values.append_value(bytes);
                    metadata_views.push(metadata.views()[row]);
                }
                Entry::Rebuilt { metadata, value } => {
                    values.append_value(value);
                    let offset = rebuilt_metadata.len() as u32;
                    metadata_views.push(make_view(metadata, rebuilt_block, offset));
                    if metadata.len() > MAX_INLINE_VIEW_LEN as usize {
                        rebuilt_metadata.extend_from_slice(metadata);
                    }
                }
            }
            entries += 1;
        })?;
        if outer && entries == 0 {
            // An entry of nulls: its `pos` is null exactly where its value is.
            pos.append_null();
            keys.append_null();
            values.append_value([]);
            metadata_views.push(0); // an empty view
            entries = 1;
        }
        let end = i32::try_from(offsets[offsets.len() - 1] as usize + entries).map_err(|_| {
            Error::new(
                ErrorKind::Usage,
                "variant_explode: more than 2^31 entries in one batch",
            )
            .with_row(row as u64)
        })?;
        offsets.push(end);
    }
    if u32::try_from(rebuilt_metadata.len()).is_err() {
        return Err(Error::new(
            ErrorKind::Usage,
            "variant_explode: more than 4 GiB of rebuilt metadata in one batch",
        ));
    }
    let mut buffers = metadata.data_buffers().to_vec();
    if !rebuilt_metadata.is_empty() {
        buffers.push(Buffer::from_vec(rebuilt_metadata));
    }
    let metadata = BinaryViewArray::try_new(ScalarBuffer::from(metadata_views), buffers, None)
        .map_err(|e| Error::new(ErrorKind::Usage, format!("variant_explode: {e}")))?;
    let DataType::Struct(value_fields) = value_field().data_type().clone() else {
        unreachable!("a Variant field is a struct")
    };
    let pos = pos.finish();
    let value = StructArray::new(
        value_fields,
        vec![Arc::new(metadata) as ArrayRef, Arc::new(values.finish())],
        pos.nulls().cloned(),
    );
    let entries = StructArray::new(
        entry_fields(outer),
        vec![Arc::new(pos), Arc::new(keys.finish()), Arc::new(value)],
        None,
    );
    let DataType::List(item) = exploded_type(outer) else {
        unreachable!("exploded_type is a list")
    };
    Ok(ListArray::new(
        item,
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Arc::new(entries),
        None::<NullBuffer>,
    ))
}
