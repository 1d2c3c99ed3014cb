//! An open Parquet file: its footer read and checked once, its Variant
//! columns found (by annotation, extension type or shape), its leaves'
//! sizes, and readers of its row groups for [plans](super::plan) and the
//! [executor](super::scan).

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
};
use ::parquet::arrow::{ARROW_SCHEMA_META_KEY, parquet_to_arrow_schema};
use ::parquet::basic::LogicalType;
use ::parquet::bloom_filter::Sbbf;
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::reader::Length;
use ::parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use arrow::array::{
    Array, AsArray, BooleanBufferBuilder, GenericListArray, OffsetSizeTrait, StructArray,
};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::arrow_hint::readable_hint;
use crate::parquet::page_headers::Chunks;
use crate::parquet::scan::{RowGroupBatches, guarded};
use crate::parquet::schema::is_variant_field;
use crate::parquet::shared_file::{ByteSource, LocalFile, SharedFile};
use crate::parquet::thrift;
use crate::shred::check_variant_shape;

/// `schema` with the binary leaves of the `variants` columns read as
/// [`DataType::BinaryView`](arrow::datatypes::DataType::BinaryView).
fn binaries_as_views(
    schema: &arrow::datatypes::SchemaRef,
    variants: &[String],
) -> arrow::datatypes::SchemaRef {
    fn view(field: &Field) -> Field {
        let data_type = match field.data_type() {
            DataType::Binary => DataType::BinaryView,
            // As pyarrow writes a dictionary array's hint; read as views of
            // the dictionary page, as any dictionary-encoded leaf is.
            DataType::Dictionary(_, values) if is_binary(values) => DataType::BinaryView,
            DataType::Struct(fields) => DataType::Struct(fields.iter().map(|f| view(f)).collect()),
            DataType::List(element) => DataType::List(view(element).into()),
            DataType::LargeList(element) => DataType::LargeList(view(element).into()),
            other => other.clone(),
        };
        field.clone().with_data_type(data_type)
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            if variants.iter().any(|v| v == f.name()) {
                view(f)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn is_binary(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

/// The Variant columns of a file of this schema, as
/// [`ParquetFile::variant_columns`] finds them.
fn variant_columns_of(parquet: &SchemaDescriptor, arrow: &Schema) -> Vec<String> {
    let annotated = parquet
        .root_schema()
        .get_fields()
        .iter()
        .filter(|f| {
            matches!(
                f.get_basic_info().logical_type_ref(),
                Some(LogicalType::Variant(_))
            )
        })
        .map(|f| f.name().to_string());
    // By shape, the binaries of a dictionary (as pyarrow hints a dictionary
    // array was written) taken as binaries.
    let undictionaried = |field: &Field| match field.data_type() {
        DataType::Struct(children) => field.clone().with_data_type(DataType::Struct(
            children
                .iter()
                .map(|c| match c.data_type() {
                    DataType::Dictionary(_, values) if is_binary(values) => {
                        c.as_ref().clone().with_data_type(DataType::Binary)
                    }
                    _ => c.as_ref().clone(),
                })
                .collect(),
        )),
        _ => field.clone(),
    };
    let shaped = arrow
        .fields()
        .iter()
        .filter(|f| is_variant_field(&undictionaried(f)))
        .map(|f| f.name().to_string());
    let mut names: Vec<String> = annotated.chain(shaped).collect();
    names.sort();
    names.dedup();
    names
}

/// The Arrow schemas files are read with, one per layout seen: the files
/// of a dataset mostly share a few layouts, and converting a footer's
/// schema to Arrow costs as much as reading the footer.
#[derive(Debug, Default)]
pub struct Layouts {
    /// Each layout's Parquet schema and embedded Arrow schema, with the
    /// schema it is read with.
    seen: Mutex<Vec<(TypePtr, Option<String>, SchemaRef)>>,
}

/// The most layouts [`Layouts`] keeps; files of others convert their
/// schema each time.
const MAX_LAYOUTS: usize = 256;

impl Layouts {
    /// The schema to read a file of this footer with: its Arrow schema
    /// (the embedded one where the writer stored it) with the binary leaves
    /// of its Variant columns read as views.
    fn reading_schema(&self, metadata: &ParquetMetaData) -> ::parquet::errors::Result<SchemaRef> {
        let parquet = metadata.file_metadata().schema_descr();
        let kv = metadata.file_metadata().key_value_metadata();
        let embedded = kv.and_then(|kv| {
            kv.iter()
                .find(|e| e.key == ARROW_SCHEMA_META_KEY)
                .and_then(|e| e.value.clone())
        });
        let root = parquet.root_schema_ptr();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((.., schema)) = seen.iter().find(|(t, e, _)| *t == root && *e == embedded) {
            return Ok(schema.clone());
        }
        drop(seen); // converting takes a while
        let arrow = match (&embedded, kv) {
            (Some(hint), Some(kv)) if !readable_hint(hint) => {
                let others: Vec<_> = kv
                    .iter()
                    .filter(|e| e.key != ARROW_SCHEMA_META_KEY)
                    .cloned()
                    .collect();
                parquet_to_arrow_schema(parquet, Some(&others))?
            }
            _ => parquet_to_arrow_schema(parquet, kv)?,
        };
        let arrow = Arc::new(arrow);
        // Variant binaries are read as views: a view points into the
        // decompressed page (or the dictionary) instead of copying each
        // value into one buffer, and repeated metadata keeps one address.
        let schema = binaries_as_views(&arrow, &variant_columns_of(parquet, &arrow));
        seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() < MAX_LAYOUTS {
            seen.push((root, embedded, schema.clone()));
        }
        Ok(schema)
    }
}

/// The size of each leaf column of a file with this footer, summed over
/// the row groups, in schema order.
pub(crate) fn leaf_sizes(metadata: &ParquetMetaData) -> Vec<LeafSize> {
    let descr = metadata.file_metadata().schema_descr();
    (0..descr.num_columns())
        .map(|leaf| {
            let mut size = LeafSize {
                path: descr.column(leaf).path().parts().to_vec(),
                compressed: 0,
                uncompressed: 0,
                values: 0,
                nulls: Some(0),
                encodings: Vec::new(),
            };
            for rg in metadata.row_groups() {
                let chunk = rg.column(leaf);
                size.compressed += chunk.compressed_size().max(0) as u64;
                size.uncompressed += chunk.uncompressed_size().max(0) as u64;
                size.values += chunk.num_values().max(0) as u64;
                let nulls = chunk.statistics().and_then(|s| s.null_count_opt());
                size.nulls = size.nulls.zip(nulls).map(|(a, b)| a + b);
                for encoding in chunk.encodings() {
                    let name = encoding.to_string();
                    if !size.encodings.contains(&name) {
                        size.encodings.push(name);
                    }
                }
            }
            size
        })
        .collect()
}

/// Where the values of Variant columns are stored: how many non-null
/// values their `typed_value` leaves hold, and how many their `value`
/// leaves hold (a residual counts once, however much it holds). From the
/// footer's statistics, so the same for any writer's file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypedValues {
    /// Non-null values of `typed_value` leaves.
    pub typed: u64,
    /// Non-null values of `value` leaves.
    pub residual: u64,
    /// `typed_value` leaves (primitive ones: an object's or a list's are
    /// groups).
    pub typed_leaves: u64,
    /// `typed_value` leaves that hold no value.
    pub empty_typed_leaves: u64,
}

impl TypedValues {
    /// Counted over `leaves` (those of Variant columns); `None` when a
    /// leaf's statistics leave out its null count.
    pub fn of_leaves<'a>(leaves: impl IntoIterator<Item = &'a LeafSize>) -> Option<TypedValues> {
        let mut values = TypedValues::default();
        for leaf in leaves {
            match leaf.path.last().map(String::as_str) {
                Some("typed_value") => values.add_typed_leaf(leaf.values - leaf.nulls?),
                Some("value") => values.residual += leaf.values - leaf.nulls?,
                // `metadata` leaves are written without statistics.
                _ => {}
            }
        }
        Some(values)
    }

    /// Counted over Variant columns as arrays, before they are written:
    /// what their file's statistics will count (a value under a null
    /// object, list or row is not one). How a dataset weighs a layout on a
    /// file's sample without writing it.
    pub fn of_variant_arrays<'a>(
        columns: impl IntoIterator<Item = &'a StructArray>,
    ) -> TypedValues {
        let mut values = TypedValues::default();
        for column in columns {
            values.count_present(column, None, "");
        }
        values
    }

    /// Adds the values of the leaves under `array` (the field `name` of its
    /// parent) that are defined where `present` (`None`: everywhere).
    fn count_present(&mut self, array: &dyn Array, present: Option<&BooleanBuffer>, name: &str) {
        let defined: Option<BooleanBuffer> = match (present, array.logical_nulls()) {
            (None, None) => None,
            (Some(p), None) => Some(p.clone()),
            (None, Some(own)) => Some(own.inner().clone()),
            (Some(p), Some(own)) => Some(p & own.inner()),
        };
        match array.data_type() {
            DataType::Struct(fields) => {
                for (field, child) in fields.iter().zip(array.as_struct().columns()) {
                    self.count_present(child.as_ref(), defined.as_ref(), field.name());
                }
            }
            DataType::List(_) => self.count_elements(array.as_list::<i32>(), defined),
            DataType::LargeList(_) => self.count_elements(array.as_list::<i64>(), defined),
            _ => {
                let count = match &defined {
                    None => array.len(),
                    Some(d) => d.count_set_bits(),
                } as u64;
                match name {
                    "typed_value" => self.add_typed_leaf(count),
                    "value" => self.residual += count,
                    _ => {}
                }
            }
        }
    }

    fn add_typed_leaf(&mut self, values: u64) {
        self.typed += values;
        self.typed_leaves += 1;
        self.empty_typed_leaves += u64::from(values == 0);
    }

    /// Adds the values under the elements of the lists of `list` that are
    /// defined where `defined` (`None`: everywhere).
    fn count_elements<O: OffsetSizeTrait>(
        &mut self,
        list: &GenericListArray<O>,
        defined: Option<BooleanBuffer>,
    ) {
        let offsets = list.value_offsets();
        let mut elements = BooleanBufferBuilder::new(list.values().len());
        elements.append_n(list.values().len(), false);
        for i in 0..list.len() {
            if defined.as_ref().is_none_or(|d| d.value(i)) {
                for at in offsets[i].as_usize()..offsets[i + 1].as_usize() {
                    elements.set_bit(at, true);
                }
            }
        }
        self.count_present(list.values().as_ref(), Some(&elements.finish()), "");
    }

    /// The share of the values stored in `typed_value`, from 0 to 1 (0
    /// when there are none).
    pub fn share(&self) -> f64 {
        let all = self.typed + self.residual;
        if all == 0 {
            0.0
        } else {
            self.typed as f64 / all as f64
        }
    }
}

/// An open Parquet file.
pub struct ParquetFile {
    pub(super) path: PathBuf,
    pub(super) file: SharedFile,
    pub(super) metadata: ArrowReaderMetadata,
    stamp: FileStamp,
    fingerprint: Option<u64>,
}

impl std::fmt::Debug for ParquetFile {
    /// Its path, rows and row groups.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let metadata = self.metadata.metadata();
        f.debug_struct("ParquetFile")
            .field("path", &self.path)
            .field("rows", &metadata.file_metadata().num_rows())
            .field("row_groups", &metadata.num_row_groups())
            .finish_non_exhaustive()
    }
}

/// The size of one leaf column of a file ([`ParquetFile::leaf_sizes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafSize {
    /// Its path from the root: `["v", "typed_value", "f0", "typed_value"]`.
    pub path: Vec<String>,
    /// Bytes in the file, after compression.
    pub compressed: u64,
    /// Bytes before compression.
    pub uncompressed: u64,
    /// Values, nulls included (one per row, or per element inside lists).
    pub values: u64,
    /// Nulls among them, when every row group's statistics say.
    pub nulls: Option<u64>,
    /// The encodings of its pages, as the footer names them
    /// (`RLE_DICTIONARY`, `PLAIN`, ...), in the order first seen.
    pub encodings: Vec<String>,
}

/// A file's footer as [`ParquetFile::open`] read and checked it, kept to
/// open the file again without reading the footer twice
/// ([`ParquetFile::open_with_footer`]), with the length and modification
/// time the file had, to tell whether it is still the same file.
#[derive(Clone, Debug)]
pub struct Footer {
    metadata: ArrowReaderMetadata,
    stamp: FileStamp,
    fingerprint: Option<u64>,
}

/// What tells a file that changed from one that did not, short of reading
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    length: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(source: &dyn ByteSource) -> FileStamp {
        FileStamp {
            length: source.size(),
            modified: source.modified(),
        }
    }
}

impl Footer {
    /// The bytes it takes in memory.
    pub fn memory_size(&self) -> usize {
        self.metadata.metadata().memory_size()
    }
}

impl LeafSize {
    /// Adds the sizes of the same leaf in another file (of a dataset).
    pub fn add(&mut self, other: &LeafSize) {
        self.compressed += other.compressed;
        self.uncompressed += other.uncompressed;
        self.values += other.values;
        self.nulls = self.nulls.zip(other.nulls).map(|(a, b)| a + b);
        for encoding in &other.encodings {
            if !self.encodings.contains(encoding) {
                self.encodings.push(encoding.clone());
            }
        }
    }
}

impl ParquetFile {
    /// Opens `path` and reads its footer.
    pub fn open(path: &Path) -> Result<ParquetFile> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        // A directory opens; reading it says only that it is no Parquet
        // file.
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            let e = std::io::Error::from(std::io::ErrorKind::IsADirectory);
            return Err(Error::io(path, e));
        }
        ParquetFile::from_file(file, path)
    }

    /// Opens the file `source` reads, named `name` in errors, again with
    /// the footer read when it was opened before, or, if the file has
    /// changed since (its length or modification time), with its footer
    /// read anew.
    pub fn open_with_footer(
        source: Arc<dyn ByteSource>,
        name: &Path,
        footer: &Footer,
        layouts: &Layouts,
    ) -> Result<ParquetFile> {
        if FileStamp::of(&*source) != footer.stamp {
            return ParquetFile::open_in(source, name, layouts);
        }
        Ok(ParquetFile {
            path: name.to_path_buf(),
            file: SharedFile::new(source),
            metadata: footer.metadata.clone(),
            stamp: footer.stamp,
            fingerprint: footer.fingerprint,
        })
    }

    /// A hash of its footer's bytes, the same in every process: with its
    /// size, what tells a worker that its file at a path is the one the
    /// query was planned with. `None` where the footer was not read here
    /// as bytes (the parquet crate read it).
    pub fn fingerprint(&self) -> Option<u64> {
        self.fingerprint
    }

    /// Its size in bytes, as it was when opened.
    pub fn size(&self) -> u64 {
        ::parquet::file::reader::Length::len(&self.file)
    }

    /// The bytes read from the file since it was opened (a footer read to
    /// open it included): of column chunks, bloom filters, page indexes.
    pub fn bytes_read(&self) -> u64 {
        self.file
            .bytes_read()
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The count behind [`bytes_read`](Self::bytes_read), which outlives
    /// the file (a scan sums it once done, its files closed).
    pub(crate) fn read_counter(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        self.file.bytes_read()
    }

    /// The footer, to open the file again with
    /// ([`open_with_footer`](Self::open_with_footer)).
    pub fn footer(&self) -> Footer {
        Footer {
            metadata: self.metadata.clone(),
            stamp: self.stamp,
            fingerprint: self.fingerprint,
        }
    }

    /// The file's name, as errors give it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the footer of an open file (standard input redirected from a
    /// file, say); `name` is how errors refer to it.
    pub fn from_file(file: File, name: &Path) -> Result<ParquetFile> {
        let source = LocalFile::new(file).map_err(|e| Error::io(name, e))?;
        ParquetFile::open_in(Arc::new(source), name, &Layouts::default())
    }

    /// Reads the footer of the file `source` reads, named `name` in
    /// errors, converting its schema to Arrow only if `layouts` has not
    /// seen it.
    pub fn open_in(
        source: Arc<dyn ByteSource>,
        name: &Path,
        layouts: &Layouts,
    ) -> Result<ParquetFile> {
        let stamp = FileStamp::of(&*source);
        let length = stamp.length;
        let file = SharedFile::new(source);
        check_magic(&file, length).map_err(|e| e.in_file(name))?;
        let (metadata, fingerprint) = read_metadata(&file, length).map_err(|e| {
            Error::parquet(&footer_context(&file, length), &e)
                .in_file(name)
                .with_source(e)
        })?;
        check_chunks(&metadata, length)
            .map_err(|e| Error::new(ErrorKind::Parquet, e).in_file(name))?;
        let schema = layouts
            .reading_schema(&metadata)
            .map_err(|e| Error::parquet_in(name, e))?;
        let metadata = ArrowReaderMetadata::try_new(
            Arc::new(metadata),
            ArrowReaderOptions::new().with_schema(schema),
        )
        .map_err(|e| Error::parquet_in(name, e))?;
        let (parquet_schema, arrow_schema) = (
            metadata.metadata().file_metadata().schema_descr(),
            metadata.schema(),
        );
        for column in variant_columns_of(parquet_schema, arrow_schema) {
            if let Ok(field) = arrow_schema.field_with_name(&column) {
                check_variant_shape(&column, field.data_type()).map_err(|e| e.in_file(name))?;
            }
        }
        Ok(ParquetFile {
            path: name.to_path_buf(),
            file,
            metadata,
            stamp,
            fingerprint,
        })
    }

    /// The file's Parquet schema.
    pub fn parquet_schema(&self) -> &SchemaDescriptor {
        self.metadata.metadata().file_metadata().schema_descr()
    }

    /// The file's metadata (row groups, column chunks, statistics).
    pub fn metadata(&self) -> &::parquet::file::metadata::ParquetMetaData {
        self.metadata.metadata()
    }

    /// The file's schema as Arrow reads it.
    pub fn arrow_schema(&self) -> &arrow::datatypes::SchemaRef {
        self.metadata.schema()
    }

    /// The Variant column a command works on: `requested` if given (it must
    /// be one), else the only one, else one named `v`.
    pub fn choose_variant_column(&self, requested: Option<&str>) -> Result<String> {
        if let Some(name) = requested {
            return self.variant_column(name).map(|_| name.to_string());
        }
        let variants = self.variant_columns();
        match variants.as_slice() {
            [only] => Ok(only.clone()),
            _ if variants.iter().any(|c| c == "v") => Ok("v".into()),
            [] => Err(Error::new(
                ErrorKind::Usage,
                "this file has no Variant column",
            )),
            _ => Err(Error::new(ErrorKind::AmbiguousColumn, variants.join(", "))),
        }
    }

    /// The names of the top-level Variant columns: groups annotated
    /// `VARIANT`, or, when a writer left the annotation out, fields with the
    /// Arrow extension type or the `metadata` + `value`/`typed_value` shape.
    pub fn variant_columns(&self) -> Vec<String> {
        variant_columns_of(self.parquet_schema(), self.arrow_schema())
    }

    /// The size of each leaf column, summed over the row groups, in schema
    /// order.
    pub fn leaf_sizes(&self) -> Vec<LeafSize> {
        leaf_sizes(self.metadata())
    }

    /// A reader of row group `rg`: the leaves of `mask`, the rows of
    /// `selection` (all when `None`).
    pub(super) fn row_group_reader(
        &self,
        metadata: &ArrowReaderMetadata,
        rg: usize,
        batch_size: usize,
        mask: ProjectionMask,
        selection: Option<RowSelection>,
    ) -> Result<RowGroupBatches> {
        // Without a selection every page of the chunks is read: one read
        // each. With one, the pages it skips are not read at all, and those
        // it keeps are read ahead by runs of pages (one request each in an
        // object store), when the offset index places them.
        let columns = metadata.metadata().row_group(rg).columns();
        let leaves = (0..columns.len()).filter(|&i| mask.leaf_included(i));
        let pages = metadata.metadata().offset_index().and_then(|o| o.get(rg));
        let ranges: Vec<Range<u64>> = match (&selection, pages) {
            (None, _) => leaves
                .map(|i| {
                    let (start, length) = columns[i].byte_range();
                    start..start.saturating_add(length)
                })
                .collect(),
            (Some(selection), Some(pages)) => {
                let mut ranges = Vec::new();
                for i in leaves {
                    let Some(locations) = pages.get(i).map(|p| p.page_locations()) else {
                        continue;
                    };
                    if !sound_pages(locations, self.file.len()) {
                        // A corrupt offset index: the reader's own checks
                        // report it, page by page.
                        continue;
                    }
                    // The dictionary page, before the first data page.
                    let start = columns[i].byte_range().0;
                    if let Some(first) = locations.first().filter(|f| f.offset as u64 > start) {
                        ranges.push(start..first.offset as u64);
                    }
                    ranges.extend(selection.scan_ranges(locations));
                }
                coalesced(ranges)
            }
            (Some(_), None) => Vec::new(),
        };
        let file = match ranges.is_empty() {
            true => self.file.clone(),
            false => self
                .file
                .holding(ranges)
                .map_err(|e| self.row_group_error(rg, e))?,
        };
        let file = file.checking(Chunks::of(metadata.metadata(), [rg], &mask));
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
                .with_row_groups(vec![rg])
                .with_projection(mask)
                .with_batch_size(batch_size);
        // The rows the footer counts, those the selection keeps.
        let rows = match &selection {
            Some(selection) => selection.row_count() as u64,
            None => metadata.metadata().row_group(rg).num_rows().max(0) as u64,
        };
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        builder
            .build()
            .map(|reader| RowGroupBatches::new(reader, rg, rows))
            .map_err(|e| self.row_group_error(rg, e))
    }

    /// The bloom filter of row group `rg`'s leaf `leaf`, if it has one that
    /// can be trusted. One with no bit set holds no value: a writer writes
    /// it only for a chunk of nulls alone, which its statistics rule out
    /// anyway, so it is taken for damaged (it would rule out every row).
    /// So is one whose size is not the one its header gives: the parquet
    /// crate takes the footer's length for it, and a filter read with
    /// another count of blocks rules out values it holds.
    pub(super) fn bloom_filter(&self, rg: usize, leaf: usize) -> Result<Option<Sbbf>> {
        use ::parquet::file::reader::ChunkReader;
        let bloom = ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.file.clone(),
            self.metadata.clone(),
        )
        .get_row_group_column_bloom_filter(rg, leaf)
        .map_err(|e| self.error(e))?;
        let Some(bloom) = bloom else {
            return Ok(None);
        };
        let chunk = self.metadata().row_group(rg).column(leaf);
        let offset = chunk.bloom_filter_offset().unwrap_or(0).max(0) as u64;
        let header = self
            .file
            .get_bytes(
                offset,
                self.file.len().saturating_sub(offset).min(64) as usize,
            )
            .map_err(|e| self.error(e))?;
        let sized = thrift::bloom_filter_size(&header).is_some_and(|(header, bits)| {
            bits == bloom.num_blocks() * 32
                && chunk
                    .bloom_filter_length()
                    .is_none_or(|length| usize::try_from(length) == Ok(header + bits))
        });
        if !sized {
            return Ok(None);
        }
        let mut bits = Vec::with_capacity(bloom.num_blocks() * 32);
        bloom.write_bitset(&mut bits).map_err(|e| self.error(e))?;
        Ok(bits.iter().any(|&b| b != 0).then_some(bloom))
    }

    /// The footer again, with the column and offset indexes (where the
    /// writer wrote them).
    pub(super) fn with_page_index(&self) -> Result<ArrowReaderMetadata> {
        self.check_offset_indexes()?;
        let options = ArrowReaderOptions::new()
            .with_schema(self.arrow_schema().clone())
            .with_page_index_policy(PageIndexPolicy::Optional);
        guarded(&self.path, || {
            ArrowReaderMetadata::load(&self.file, options).map_err(|e| self.error(e))
        })?
    }

    /// Checks that the count of pages of each of the file's offset indexes
    /// fits its bytes ([`thrift::first_list_fits`]), before the parquet
    /// crate sizes its list of a chunk's pages by it: an error naming the
    /// first that does not. Indexes outside the file are left to the
    /// crate's error.
    fn check_offset_indexes(&self) -> Result<()> {
        use ::parquet::file::reader::ChunkReader;
        let mut ranges = Vec::new();
        for (rg, group) in self.metadata().row_groups().iter().enumerate() {
            for chunk in group.columns() {
                let range = chunk.offset_index_offset().zip(chunk.offset_index_length());
                let Some((at, end)) = range.and_then(|(at, length)| {
                    let at = u64::try_from(at).ok()?;
                    Some((at, at.checked_add(u64::try_from(length).ok()?)?))
                }) else {
                    continue;
                };
                ranges.push((rg, chunk.column_path(), at, end));
            }
        }
        let (Some(start), Some(end)) = (
            ranges.iter().map(|r| r.2).min(),
            ranges.iter().map(|r| r.3).max(),
        ) else {
            return Ok(());
        };
        // One read, as the crate's own, of the span they lie in.
        let Some(bytes) = usize::try_from(end - start)
            .ok()
            .filter(|_| end <= self.stamp.length)
            .and_then(|size| self.file.get_bytes(start, size).ok())
        else {
            return Ok(());
        };
        for (rg, column, at, end) in ranges {
            let index = &bytes[(at - start) as usize..(end - start) as usize];
            thrift::first_list_fits(index).map_err(|unreadable| {
                let unreadable = unreadable.in_file_at(at);
                self.error(format!(
                    "the offset index of column {column} in row group {rg} (bytes {at} to {end}): {unreadable}"
                ))
            })?;
        }
        Ok(())
    }

    #[cold]
    pub(super) fn error(&self, e: impl std::fmt::Display) -> Error {
        Error::parquet("reading", e).in_file(&self.path)
    }

    /// An error met while reading row group `rg`, named as the batches'
    /// errors are ([`RowGroupBatches::next`]).
    #[cold]
    fn row_group_error(&self, rg: usize, e: impl std::fmt::Display) -> Error {
        Error::parquet(&format!("reading row group {rg}"), e).in_file(&self.path)
    }

    /// The names of the top-level columns, in the file's order.
    pub fn column_names(&self) -> Vec<String> {
        self.parquet_schema()
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect()
    }

    /// The indices of the top-level columns named in `names` that the file
    /// has, in the order given; the others are left out.
    pub(super) fn present_roots(&self, names: &[String]) -> Vec<usize> {
        let roots = self.parquet_schema().root_schema().get_fields();
        names
            .iter()
            .filter_map(|name| roots.iter().position(|f| f.name() == name))
            .collect()
    }

    /// The indices of top-level columns by name, in the order given.
    pub(super) fn root_indices(&self, names: &[String]) -> Result<Vec<usize>> {
        let roots = self.parquet_schema().root_schema().get_fields();
        names
            .iter()
            .map(|name| {
                roots.iter().position(|f| f.name() == name).ok_or_else(|| {
                    let all: Vec<&str> = roots.iter().map(|f| f.name()).collect();
                    Error::new(
                        ErrorKind::Usage,
                        format!("no column {name:?} (the columns: {})", all.join(", ")),
                    )
                    .in_file(&self.path)
                })
            })
            .collect()
    }

    /// The Parquet group of a top-level Variant column.
    pub(super) fn variant_column(&self, name: &str) -> Result<&Type> {
        let root = self.parquet_schema().root_schema();
        let field = root
            .get_fields()
            .iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Usage,
                    format!(
                        "no column {name:?} (Variant columns: {})",
                        self.variant_columns().join(", ")
                    ),
                )
            })?;
        if !self.variant_columns().iter().any(|c| c == name) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("column {name:?} is not a Variant column"),
            ));
        }
        Ok(field)
    }
}

/// Whether an offset index's page locations are ones
/// `RowSelection::scan_ranges` may add and subtract (it does unchecked):
/// pages within the file, first rows from 0 and never decreasing.
fn sound_pages(
    locations: &[::parquet::file::page_index::offset_index::PageLocation],
    length: u64,
) -> bool {
    let mut first_row = 0;
    locations.iter().all(|page| {
        let sound = page.first_row_index >= first_row
            && u64::try_from(page.offset)
                .ok()
                .zip(u64::try_from(page.compressed_page_size).ok())
                .and_then(|(offset, size)| offset.checked_add(size))
                .is_some_and(|end| end <= length);
        first_row = page.first_row_index;
        sound
    })
}

/// Bytes between two runs of pages read as one run rather than two reads.
const PAGES_GAP: u64 = 16 << 10;

/// `ranges` sorted, those apart by at most [`PAGES_GAP`] merged.
fn coalesced(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end.saturating_add(PAGES_GAP) => {
                last.end = last.end.max(range.end);
            }
            _ => merged.push(range),
        }
    }
    merged
}

/// Fails unless the file starts and ends with Parquet's magic bytes, so
/// that any other file is "not a Parquet file" rather than a corrupt one.
fn check_magic(file: &SharedFile, length: u64) -> Result<()> {
    use ::parquet::file::reader::ChunkReader;
    const MAGIC: &[u8] = b"PAR1";
    let magic_at = |at: u64| file.get_bytes(at, 4).is_ok_and(|b| b == MAGIC);
    let head = length >= 4 && magic_at(0);
    // The smallest file: magic, an empty footer's length, magic.
    if length >= 12 && head && magic_at(length - 4) {
        return Ok(());
    }
    let size = match length {
        1 => "1 byte".to_string(),
        n => format!("{n} bytes"),
    };
    let why = if length == 0 {
        "the file is empty".to_string()
    } else if head && length < 12 {
        format!(
            "it starts as one but is {size}, too few for the magic bytes at both ends and a footer's length (12; cut short?)"
        )
    } else if head {
        "it starts as one but does not end with the PAR1 footer magic (cut short?)".to_string()
    } else if file
        .get_bytes(0, 1)
        .is_ok_and(|b| matches!(b.first(), Some(b'{' | b'[')))
    {
        format!(
            "it does not start with the PAR1 magic bytes ({size}) but as JSON text (`vshred encode` makes Parquet of JSON lines)"
        )
    } else {
        format!("it does not start with the PAR1 magic bytes ({size})")
    };
    Err(Error::new(
        ErrorKind::Parquet,
        format!("not a Parquet file: {why}"),
    ))
}

/// The most names on a path from a file's schema root to a leaf: more
/// than inference nests (a shredded Variant takes two or three a level of
/// its values, and inference goes 50 levels down), few enough for the
/// recursions of the parquet crate, Arrow and DataFusion over a schema on
/// a thread's stack of 2 MiB (a test's, a tokio worker's), which 500
/// overflowed.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 256;

/// The footer of `file` (of `length` bytes, its magic checked), refused
/// if its schema nests deeper than [`MAX_SCHEMA_DEPTH`] before the parquet
/// crate builds the schema's tree ([`thrift::schema_depth`]), and its
/// [`fingerprint`](ParquetFile::fingerprint). Footer bytes that cannot be
/// read from the file are left to the crate, whose error says why.
fn read_metadata(
    file: &SharedFile,
    length: u64,
) -> std::result::Result<(ParquetMetaData, Option<u64>), ParquetError> {
    use ::parquet::file::reader::ChunkReader;
    let footer_end = length - 8;
    let footer_start = footer_size(file, length)
        .filter(|&size| size <= footer_end)
        .map(|size| footer_end - size);
    let footer = footer_start
        .and_then(|start| file.get_bytes(start, (footer_end - start) as usize).ok())
        .zip(footer_start);
    let Some((footer, footer_start)) = footer else {
        return Ok((ParquetMetaDataReader::new().parse_and_finish(file)?, None));
    };
    let fingerprint = crate::hash::BytesHasher::unseeded().hash(&footer);
    // A schema this reader cannot follow is not left to the crate, which
    // reads some such (a count of children as an i64, or cut to 32 bits)
    // and then recurses as deep as they say.
    match thrift::schema_depth(&footer) {
        Ok(depth) if depth <= MAX_SCHEMA_DEPTH => Ok((
            ParquetMetaDataReader::decode_metadata(&footer)?,
            Some(fingerprint),
        )),
        Ok(depth) => Err(ParquetError::General(format!(
            "its schema nests {depth} levels deep, more than the {MAX_SCHEMA_DEPTH} vshred reads"
        ))),
        Err(unreadable) => Err(ParquetError::General(
            unreadable.in_file_at(footer_start).to_string(),
        )),
    }
}

/// The size the footer of `file` (of `length` bytes, its magic checked)
/// declares, in the four bytes before the magic.
fn footer_size(file: &SharedFile, length: u64) -> Option<u64> {
    use ::parquet::file::reader::ChunkReader;
    let bytes = file.get_bytes(length - 8, 4).ok()?;
    Some(u64::from(u32::from_le_bytes(
        bytes.as_ref().try_into().ok()?,
    )))
}

/// Where the footer lies, for an error in it: `its footer (bytes 691 to
/// 1580 of 1588)`.
#[cold]
fn footer_context(file: &SharedFile, length: u64) -> String {
    let footer_end = length - 8;
    match footer_size(file, length) {
        Some(size) if size <= footer_end => format!(
            "its footer (bytes {} to {footer_end} of {length})",
            footer_end - size
        ),
        Some(size) => format!("its footer ({size} bytes, in a file of {length})"),
        None => "its footer".to_string(),
    }
}

/// Checks that every column chunk lies inside the file, which the parquet
/// crate assumes (it panics on negative offsets), that the row counts add
/// up without overflow, and that each chunk holds values for its row
/// group's rows: one per row where the column repeats nowhere, at least
/// one otherwise. A reader trusts the row count where it reads no values
/// (a count) and the values where it does, so a row count that disagrees
/// with them answers one query with the one and the next with the other.
fn check_chunks(
    metadata: &::parquet::file::metadata::ParquetMetaData,
    length: u64,
) -> std::result::Result<(), String> {
    let mut rows: i64 = 0;
    let leaves = metadata.file_metadata().schema_descr().columns();
    for (rg, group) in metadata.row_groups().iter().enumerate() {
        // The parquet crate adds the row groups' row counts up unchecked.
        rows = rows
            .checked_add(group.num_rows())
            .filter(|_| group.num_rows() >= 0)
            .ok_or_else(|| {
                format!(
                    "row group {rg} claims {} rows, which no file holds",
                    group.num_rows()
                )
            })?;
        for (leaf, chunk) in group.columns().iter().enumerate() {
            let repeated = leaves.get(leaf).is_some_and(|c| c.max_rep_level() > 0);
            let (values, rows) = (chunk.num_values(), group.num_rows());
            if values != rows && !(repeated && values > rows) {
                return Err(format!(
                    "row group {rg}, column {}: {values} values for {rows} rows",
                    chunk.column_path()
                ));
            }
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            if start < 0 || size < 0 || (start as u64).saturating_add(size as u64) > length {
                return Err(format!(
                    "row group {rg}, column {}: chunk at byte {start} of {size} bytes lies outside the file ({length} bytes)",
                    chunk.column_path()
                ));
            }
        }
    }
    // A count of the file's rows reads its count, a scan its row groups.
    let counted = metadata.file_metadata().num_rows();
    if counted != rows {
        return Err(format!(
            "the footer counts {counted} rows in the file and {rows} in its row groups"
        ));
    }
    Ok(())
}
