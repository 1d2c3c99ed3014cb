//! Parquet files with Variant columns: the annotated schema, a writer that
//! replaces files atomically, and a reader that reads only the leaves a
//! path needs and skips row groups that cannot match.

mod read;
mod schema;
mod shared_file;
mod write;

pub use read::{GetRequest, LeafSize, ParquetFile, ReadStats};

pub use schema::{
    DecimalMode, VARIANT_EXTENSION_NAME, is_variant_field, typed_value_path, variant_field,
    variant_group,
};
pub use write::{
    ColumnSpec, Compression, ParquetWriter, WriteOptions, WriteSummary, parquet_schema,
};
pub(crate) use write::{DICTIONARY_PAGE_LIMIT, encoded_size};
