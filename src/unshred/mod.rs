//! Reconstruction: shredded columns back to Variant values or JSON text.
//!
//! [`ShreddedColumn`] checks a Variant column's Arrow layout once (by field
//! names, as the spec asks, so any writer's column order works) and then
//! rebuilds rows: as Variant bytes through a
//! [`VariantBuilder`](crate::variant::VariantBuilder), or straight
//! to JSON text, merging typed fields and the residual in name order
//! without building a Variant first.
//!
//! Where a file breaks the spec, reconstruction fails with the row and the
//! path: a primitive or array with both `value` and `typed_value`, or a
//! shredded object whose `value` is not an object. One case is read rather
//! than rejected: a partially shredded object whose residual repeats a
//! shredded field (the spec calls the file invalid but lets readers use
//! `typed_value`): the shredded field wins, even when it is missing there,
//! as the spec says readers must use `typed_value` and may assume shredded
//! fields are absent from `value` (parquet-testing cases 43 and 125).

mod column;
mod find;
mod plain;
mod reconstruct;

use column::{FieldName, Offsets, is_valid};
pub use column::{ScalarColumn, ShreddedColumn};
pub(crate) use find::Found;
pub use plain::NullFields;
pub(crate) use reconstruct::Entry;
pub use reconstruct::{JsonRows, column_json_strings, json_strings, unshred};
