//! Parquet files with Variant columns: the annotated schema, and a writer
//! that replaces files atomically.

mod schema;
mod write;

pub use schema::{
    DecimalMode, VARIANT_EXTENSION_NAME, is_variant_field, typed_value_path, variant_field,
    variant_group,
};
pub use write::{
    ColumnSpec, Compression, ParquetWriter, WriteOptions, WriteSummary, parquet_schema,
};
