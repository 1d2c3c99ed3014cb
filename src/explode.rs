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
//! columns of the result are `BinaryView`s.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryViewArray, BinaryViewBuilder, Int32Builder, ListArray,
    StringBuilder, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Fields};

use crate::error::{Error, ErrorKind, Result};
use crate::shred::{ShreddingSchema, variant_field};
use crate::unshred::{ShreddedColumn, unshred};
use crate::variant::VariantRef;

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
    let unshredded;
    let column = if column.column_by_name("typed_value").is_some() {
        unshredded = unshred(column)?;
        &unshredded
    } else {
        column
    };
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
    // Each entry's metadata is its row's view, repeated.
    let mut metadata_views: Vec<u128> = Vec::new();
    for row in 0..column.len() {
        let mut entries = 0usize;
        let mut entry = |key: Option<&str>, bytes: &[u8]| {
            pos.append_value(entries as i32);
            keys.append_option(key);
            values.append_value(bytes);
            metadata_views.push(metadata.views()[row]);
            entries += 1;
        };
        if let Some(v) = reader.unshredded_value(row)? {
            explode_one(&v, &mut entry);
        }
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
    let metadata = BinaryViewArray::try_new(
        ScalarBuffer::from(metadata_views),
        metadata.data_buffers().to_vec(),
        None,
    )
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

/// Hands each field (with its name) or element of `v` to `entry`.
fn explode_one(v: &VariantRef<'_>, entry: &mut impl FnMut(Option<&str>, &[u8])) {
    if let Some(object) = v.as_object() {
        for i in 0..object.len() {
            entry(Some(object.field_name(i)), object.field_bytes(i));
        }
    } else if let Some(array) = v.as_array() {
        for i in 0..array.len() {
            entry(None, array.element_bytes(i));
        }
    }
}
