//! Writing Parquet files with Variant columns: the schema is ours to give,
//! so the groups carry `VARIANT(1)` and decimals take the physical type the
//! user chose; output goes to a temporary file renamed into place only when
//! complete.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::arrow::{ArrowSchemaConverter, ArrowWriter, arrow_writer::ArrowWriterOptions};
use ::parquet::basic::{
    Compression as ParquetCompression, Encoding, Type as PhysicalType, ZstdLevel,
};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};
use ::parquet::schema::types::{ColumnPath, SchemaDescriptor, Type};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use crate::error::{Error, Result};
use crate::parquet::schema::{DecimalMode, variant_field, variant_group};
use crate::shred::ShreddingSchema;

/// Compression of the written column chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// zstd, level 3.
    #[default]
    Zstd,
    /// Snappy.
    Snappy,
    /// None.
    None,
}

/// How to write a file.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Physical type of typed decimal columns.
    pub decimals: DecimalMode,
    /// Compression codec.
    pub compression: Compression,
    /// Rows per row group.
    pub row_group_rows: usize,
    /// Parquet leaf columns that get a bloom filter, as dotted paths
    /// (e.g. `v.typed_value.id.typed_value`).
    pub bloom_filters: Vec<Vec<String>>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            decimals: DecimalMode::Int,
            compression: Compression::Zstd,
            row_group_rows: 128 * 1024,
            bloom_filters: Vec::new(),
        }
    }
}

/// Bytes of distinct values a column chunk may collect in its dictionary
/// before its pages fall back to plain encoding. The parquet crate's 1 MB
/// lets a column of unique values (ids, timestamps) spend most of a row
/// group dictionary-encoded: a 1 MB dictionary plus 17-bit indices that
/// zstd cannot shrink, twice the size of plain values compressed. 64 KB
/// still holds the dictionaries that pay (1000 distinct int64 values take
/// 8 KB) and took 1M seed rows from 22.39 MB to 18.66 MB (Spark: 18.27 MB).
pub(crate) const DICTIONARY_PAGE_LIMIT: usize = 64 * 1024;

/// One column of the output.
#[derive(Clone, Debug)]
pub enum ColumnSpec {
    /// An ordinary column, written as the parquet crate maps its Arrow type.
    Plain(Field),
    /// A Variant column with its shredding layout.
    Variant {
        /// The column name.
        name: String,
        /// Its typed layout ([`ShreddingSchema::Variant`] for none).
        schema: ShreddingSchema,
    },
}

impl ColumnSpec {
    /// The column's Arrow field.
    pub fn field(&self) -> Field {
        match self {
            ColumnSpec::Plain(f) => f.clone(),
            ColumnSpec::Variant { name, schema } => variant_field(name, schema),
        }
    }
}

/// Writes record batches to a Parquet file that appears at its path only
/// once [`finish`](Self::finish) succeeds; if the writer is dropped before,
/// or anything fails, the temporary file is removed and an existing file at
/// the path is left untouched.
pub struct ParquetWriter {
    writer: ArrowWriter<File>,
    temp: tempfile::TempPath,
    target: PathBuf,
    schema: SchemaRef,
}

/// What [`ParquetWriter::finish`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    /// Rows written.
    pub rows: u64,
    /// Row groups written.
    pub row_groups: usize,
    /// Size of the file in bytes.
    pub bytes: u64,
}

impl ParquetWriter {
    /// Opens a temporary file beside `path` for a file with these columns.
    pub fn create(
        path: &Path,
        columns: &[ColumnSpec],
        options: &WriteOptions,
    ) -> Result<ParquetWriter> {
        let fields: Vec<Field> = columns.iter().map(ColumnSpec::field).collect();
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let descriptor = parquet_schema(columns, options.decimals)?;
        let mut properties = WriterProperties::builder()
            .set_compression(match options.compression {
                Compression::Zstd => ParquetCompression::ZSTD(ZstdLevel::default()),
                Compression::Snappy => ParquetCompression::SNAPPY,
                Compression::None => ParquetCompression::UNCOMPRESSED,
            })
            .set_max_row_group_row_count(Some(options.row_group_rows.max(1)))
            // Page statistics feed the column index, for page skipping.
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_dictionary_page_size_limit(DICTIONARY_PAGE_LIMIT);
        for path in &options.bloom_filters {
            properties =
                properties.set_column_bloom_filter_enabled(ColumnPath::new(path.clone()), true);
        }
        // Integer columns whose dictionary overflows (ids, timestamps) fall
        // back to delta encoding rather than plain: on 300k seed rows shredded
        // whole, `id` took 871 kB as plain int32 under zstd and 212 kB as
        // deltas, `ts` 658 kB and 476 kB (the file 6.17 MB and 5.32 MB).
        for leaf in descriptor.columns() {
            if matches!(
                leaf.physical_type(),
                PhysicalType::INT32 | PhysicalType::INT64
            ) {
                properties = properties
                    .set_column_encoding(leaf.path().clone(), Encoding::DELTA_BINARY_PACKED);
            }
        }
        let temp = crate::output::temp_file_beside(path)?;
        let (file, temp) = temp.into_parts();
        let writer = ArrowWriter::try_new_with_options(
            file,
            schema.clone(),
            ArrowWriterOptions::new()
                .with_properties(properties.build())
                .with_parquet_schema(descriptor),
        )
        .map_err(|e| Error::parquet("creating the Parquet writer", e))?;
        Ok(ParquetWriter {
            writer,
            temp,
            target: path.to_path_buf(),
            schema,
        })
    }

    /// The Arrow schema batches must have.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Writes a batch; row groups are cut at `row_group_rows`.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer
            .write(batch)
            .map_err(|e| Error::parquet("writing a batch", e))
    }

    /// Completes the file and moves it to its path.
    pub fn finish(self) -> Result<WriteSummary> {
        let metadata = self
            .writer
            .close()
            .map_err(|e| Error::parquet("finishing the file", e))?;
        let file = File::options()
            .read(true)
            .open(&self.temp)
            .map_err(|e| Error::io(&self.temp, e))?;
        file.sync_all().map_err(|e| Error::io(&self.temp, e))?;
        let bytes = file.metadata().map_err(|e| Error::io(&self.temp, e))?.len();
        self.temp
            .persist(&self.target)
            .map_err(|e| Error::io(&self.target, e.error))?;
        Ok(WriteSummary {
            rows: metadata.file_metadata().num_rows() as u64,
            row_groups: metadata.num_row_groups(),
            bytes,
        })
    }
}

/// The file's Parquet schema: ordinary columns as the parquet crate maps
/// them, Variant columns as the spec's annotated groups.
pub fn parquet_schema(columns: &[ColumnSpec], decimals: DecimalMode) -> Result<SchemaDescriptor> {
    let mut fields = Vec::with_capacity(columns.len());
    for column in columns {
        fields.push(match column {
            ColumnSpec::Plain(field) => {
                let one = ArrowSchemaConverter::new()
                    .convert(&Schema::new(vec![field.clone()]))
                    .map_err(|e| Error::parquet(&format!("column {}", field.name()), e))?;
                one.root_schema().get_fields()[0].clone()
            }
            ColumnSpec::Variant { name, schema } => variant_group(name, schema, decimals)?,
        });
    }
    let root = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map_err(|e| Error::parquet("the file schema", e))?;
    Ok(SchemaDescriptor::new(Arc::new(root)))
}
