//! Writing Parquet files with Variant columns: the schema is ours to give,
//! so the groups carry `VARIANT(1)` and decimals take the physical type the
//! user chose; output goes to a temporary file renamed into place only when
//! complete.

use std::io::Write;
use std::sync::Arc;

use ::parquet::arrow::{ArrowSchemaConverter, ArrowWriter, arrow_writer::ArrowWriterOptions};
use ::parquet::basic::{
    Compression as ParquetCompression, Encoding, LogicalType, Type as PhysicalType, ZstdLevel,
};
use ::parquet::column::page::Page;
use ::parquet::file::properties::{EnabledStatistics, WriterProperties, WriterPropertiesBuilder};
use ::parquet::file::reader::{FileReader, SerializedFileReader};
use ::parquet::schema::types::{ColumnPath, SchemaDescriptor, Type};
use arrow::array::{Array, ArrayRef, AsArray, GenericListArray, OffsetSizeTrait};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;

use crate::error::{Error, ErrorKind, Result};
use crate::hash::BytesHasher;
use crate::infer::{DICTIONARY_PAGE_LIMIT, Distinct, LeafEncoding, MOSTLY_DISTINCT};
use crate::output::{Completion, Destination, OpenOutput, Output, destination};
use crate::parquet::file::{LeafSize, MAX_SCHEMA_DEPTH, TypedValues, leaf_sizes};
use crate::parquet::parallel_writer::ParallelWriter;
use crate::parquet::schema::{DecimalMode, annotate_nested_variants, variant_field, variant_group};
use crate::parquet::{magic_of, starts_as_parquet};
use crate::shred::ShreddingSchema;
use crate::unshred::ShreddedColumn;

/// Compression of the written column chunks.
///
/// Parsed from `zstd` (the default: level 1, Variant `metadata` and `value`
/// leaves at 3), `zstd:LEVEL` (that level for every column), `snappy` or
/// `none`:
///
/// ```
/// use vshred::parquet::Compression;
/// assert_eq!("zstd".parse::<Compression>()?, Compression::default());
/// assert_eq!(Compression::default(), Compression::Zstd { level: 1, variant_level: 3 });
/// assert_eq!("zstd:3".parse::<Compression>()?, Compression::Zstd { level: 3, variant_level: 3 });
/// assert!("zstd:23".parse::<Compression>().is_err());
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// zstd at `level` (1 to 22; 1 is the fastest), and at
    /// `variant_level` for the Variant bytes: every Variant column's
    /// `metadata` and each `value` leaf, unshredded or residual. Variant
    /// bytes repeat their structure from row to row, which a higher level
    /// finds: on 1M rows, level 3 made unshredded seed values 13% smaller
    /// (31.7 against 36.7 MB, the size Spark's and arrow-rs's writers
    /// reach), and the residuals of our real data sets 0.5% (events) to 9%
    /// (bcd's `support`) smaller. Typed leaves gain nothing from it.
    Zstd {
        /// The zstd level of typed leaves and ordinary columns.
        level: i32,
        /// The zstd level of Variant `metadata` and `value` leaves.
        variant_level: i32,
    },
    /// Snappy.
    Snappy,
    /// None.
    None,
}

impl Default for Compression {
    fn default() -> Self {
        Compression::Zstd {
            level: 1,
            variant_level: 3,
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = Error;

    fn from_str(s: &str) -> Result<Compression> {
        let level = |l: &str| {
            l.parse::<i32>()
                .ok()
                .filter(|&l| (1..=22).contains(&l))
                .ok_or_else(|| {
                    Error::from_message(format!(
                        "zstd level {l:?} is not a whole number from 1 to 22"
                    ))
                })
        };
        match s {
            "zstd" => Ok(Compression::default()),
            "snappy" => Ok(Compression::Snappy),
            "none" => Ok(Compression::None),
            _ => match s.strip_prefix("zstd:") {
                Some(l) => {
                    let level = level(l)?;
                    Ok(Compression::Zstd {
                        level,
                        variant_level: level,
                    })
                }
                None => Err(Error::from_message(format!(
                    "unknown compression {s:?} (expected zstd, zstd:LEVEL, snappy or none)"
                ))),
            },
        }
    }
}

/// How to write a file.
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Physical type of typed decimal columns.
    pub decimals: DecimalMode,
    /// Compression codec.
    pub compression: Compression,
    /// Rows per row group (at least one: 0 is taken as 1).
    pub row_group_rows: usize,
    /// Bytes a row group's pages may take in memory (compressed) before it
    /// is written out, whatever its rows (128 MiB): a row group is held
    /// whole until then,
    /// and rows of long texts fill one long before `row_group_rows`.
    pub row_group_bytes: usize,
    /// Parquet leaf columns that get a bloom filter, as dotted paths
    /// (e.g. `v.typed_value.id.typed_value`).
    pub bloom_filters: Vec<Vec<String>>,
    /// How leaves store their values, by path (as `bloom_filters`), as
    /// inference priced them ([`LayoutPlan`](crate::infer::LayoutPlan)).
    /// Other leaves keep their dictionary unless their values in the first
    /// rows written are mostly distinct.
    pub leaf_encodings: Vec<(Vec<String>, LeafEncoding)>,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            decimals: DecimalMode::Int,
            compression: Compression::default(),
            row_group_rows: 128 * 1024,
            row_group_bytes: 128 << 20,
            bloom_filters: Vec::new(),
            leaf_encodings: Vec::new(),
        }
    }
}

/// The values each column writer takes at a time.
const WRITE_BATCH_VALUES: usize = 8192;

/// The values at the start of each leaf of the first batch that decide
/// whether it is written without a dictionary (as many as inference
/// samples rows). A count of values, not rows: inside lists a few rows can
/// hold hundreds of thousands (country-geo's 250 rows, 452k coordinates),
/// and counting them all took a third of its encode.
const DISTINCT_SAMPLE_VALUES: usize = 4096;

/// Whether a leaf with `distinct` distinct values among `values` is written
/// without a dictionary when inference did not price it.
fn mostly_distinct(distinct: usize, values: usize) -> bool {
    distinct > 0 && distinct as f64 >= MOSTLY_DISTINCT * values as f64
}

/// One column of the output.
#[derive(Clone, Debug, PartialEq)]
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
/// the path is left untouched. A path that is a device or FIFO is written
/// directly, and so is a stream (an [`Output::Stream`]); see
/// [`output`](crate::output) for the rules.
pub struct ParquetWriter {
    writer: Writer,
    /// The columns, to count where Variant values went.
    columns: Vec<ColumnSpec>,
    /// What [`reached`](Self::reached) learned when it last cut a row group.
    last_cut: RowGroupCut,
    /// What makes the output whole once written.
    completion: Completion,
    schema: SchemaRef,
}

/// How the last row group that [`ParquetWriter::reached`] cut compared with
/// what was known of it before: for predicting the next one's size.
#[derive(Debug, Clone, Copy)]
struct RowGroupCut {
    /// Its bytes against the parquet crate's estimate of them.
    estimate_ratio: f64,
    /// Its bytes per row.
    row_bytes: f64,
}

impl Default for RowGroupCut {
    /// Before any cut: the estimate as it is.
    fn default() -> Self {
        RowGroupCut {
            estimate_ratio: 1.0,
            row_bytes: 0.0,
        }
    }
}

impl RowGroupCut {
    /// A cut row group of `bytes`, which the parquet crate had estimated
    /// at `estimate`, of `rows` rows.
    fn measured(bytes: u64, estimate: u64, rows: u64) -> Self {
        let per = |whole: u64| bytes as f64 / whole.max(1) as f64;
        RowGroupCut {
            estimate_ratio: per(estimate),
            row_bytes: per(rows),
        }
    }

    /// The predicted size of a row group in progress of `rows` rows that
    /// the parquet crate estimates at `estimate` bytes. That estimate
    /// counts the pages not yet flushed before compression (on event rows,
    /// half as much again as they came to) and those flushed after it, so
    /// scaled by the last cut's ratio it falls short once pages flush (by
    /// 40% on event rows); the last cut's bytes per row fall short when
    /// rows grow. Each answer errs low in its own case, so the larger
    /// stands.
    fn predict(&self, estimate: u64, rows: u64) -> u64 {
        let scaled = estimate as f64 * self.estimate_ratio;
        let by_rows = rows as f64 * self.row_bytes;
        scaled.max(by_rows) as u64
    }
}

/// Where the file's bytes go: a file, or a stream.
type Out = Box<dyn Write + Send>;

/// The Arrow writer, created at the first batch, whose values choose the
/// leaves written without a dictionary.
enum Writer {
    Pending {
        out: Out,
        layout: FileLayout,
    },
    Open(ParallelWriter<Out>),
    /// Creating the Arrow writer failed (or is under way).
    Failed,
}

impl Writer {
    /// The Arrow writer, created if pending with the dictionaries `first`
    /// (the first batch, if any) calls for.
    fn open(&mut self, first: Option<&RecordBatch>) -> Result<&mut ParallelWriter<Out>> {
        // Left `Failed` if creating the writer fails.
        *self = match std::mem::replace(self, Writer::Failed) {
            Writer::Pending { out, layout } => Writer::Open(arrow_writer(out, layout, first)?),
            opened_or_failed => opened_or_failed,
        };
        match self {
            Writer::Open(writer) => Ok(writer),
            _ => Err(Error::parquet(
                "writing a batch",
                "the Parquet writer could not be created",
            )),
        }
    }
}

/// The Arrow writer of a file of `layout` into `out`, with the encodings
/// its priced leaves were given and those the first batch (if any) calls
/// for elsewhere.
fn arrow_writer<W: std::io::Write + Send>(
    out: W,
    layout: FileLayout,
    first: Option<&RecordBatch>,
) -> Result<ParallelWriter<W>> {
    let FileLayout {
        schema,
        descriptor,
        mut properties,
        priced,
    } = layout;
    // The codecs as set so far, to price a leaf's encodings with.
    let codecs = properties.clone().build();
    for (leaf, physical_type, encoding, sample) in leaf_encodings(first, &descriptor, &priced) {
        if encoding == LeafEncoding::Dictionary {
            continue;
        }
        // Deltas for integers (ids, timestamps): on 300k seed rows shredded
        // whole, `id` took 871 kB as plain int32 under zstd and 212 kB as
        // deltas, `ts` 658 kB and 476 kB. Only where chosen: the parquet
        // crate reserves 1 MB up front for each delta encoder, which as
        // the fallback of every integer leaf's dictionary cost 8 MB more
        // memory while encoding. Strings are deltas (prefixes and
        // suffixes) only where the sample is smaller so: on 1M events
        // rows, the session keys took 7% less, and hex counters in a test
        // 7% more.
        let delta = match physical_type {
            PhysicalType::INT32 | PhysicalType::INT64 if encoding == LeafEncoding::Delta => {
                Some(Encoding::DELTA_BINARY_PACKED)
            }
            PhysicalType::BYTE_ARRAY
                if sample
                    .as_ref()
                    .is_some_and(|s| smaller_as_delta(s, codecs.compression(&leaf))) =>
            {
                Some(Encoding::DELTA_BYTE_ARRAY)
            }
            _ => None,
        };
        if let Some(delta) = delta {
            properties = properties.set_column_encoding(leaf.clone(), delta);
        }
        properties = properties.set_column_dictionary_enabled(leaf, false);
    }
    // A schema too deep to embed is left out: readers then take the types
    // the Parquet schema gives, which the hint only refines (a time zone's
    // name, a large or view type).
    let skip_hint = !super::arrow_hint::embeddable(&schema);
    ParallelWriter::try_new(
        out,
        schema,
        ArrowWriterOptions::new()
            .with_properties(properties.build())
            .with_parquet_schema(descriptor)
            .with_skip_arrow_metadata(skip_hint),
        super::cores(),
    )
    .map_err(|e| Error::parquet("creating the Parquet writer", e))
}

/// A file written in memory by [`encode_in_memory`].
pub(crate) struct InMemoryFile {
    /// Its size.
    pub(crate) bytes: u64,
    /// The bytes of its column chunks: its size without the page indexes
    /// and the footer, whose entries per leaf weigh on a sample of a few
    /// thousand rows far more than in a file of many rows.
    pub(crate) column_bytes: u64,
    /// Its leaves.
    pub(crate) leaves: Vec<LeafSize>,
}

/// The file that `columns` (one array per column) make when written, in
/// memory, as [`ParquetWriter`] would: how inference compares layouts on
/// its sample.
pub(crate) fn encode_in_memory(
    columns: &[ColumnSpec],
    arrays: Vec<ArrayRef>,
    options: &WriteOptions,
) -> Result<InMemoryFile> {
    let layout = file_layout(columns, options)?;
    let batch = RecordBatch::try_new(layout.schema.clone(), arrays)
        .map_err(|e| Error::parquet("measuring a layout", e))?;
    let mut writer = arrow_writer(Vec::new(), layout, Some(&batch))?;
    writer
        .write(&batch)
        .map_err(|e| Error::parquet("measuring a layout", e))?;
    let metadata = writer
        .finish()
        .map_err(|e| Error::parquet("measuring a layout", e))?;
    let leaves = leaf_sizes(&metadata);
    Ok(InMemoryFile {
        bytes: writer.bytes_written() as u64,
        column_bytes: leaves.iter().map(|leaf| leaf.compressed).sum(),
        leaves,
    })
}

/// Where the values of the Variant columns of a file with these leaves
/// went.
fn variant_values(leaves: &[LeafSize], columns: &[ColumnSpec]) -> Option<TypedValues> {
    TypedValues::of_leaves(leaves.iter().filter(|leaf| {
        columns.iter().any(
            |c| matches!(c, ColumnSpec::Variant { name, .. } if leaf.path.first() == Some(name)),
        )
    }))
}

/// The leaves not to dictionary-encode, with their physical types, the
/// encoding chosen and their first `DISTINCT_SAMPLE_VALUES` values in
/// `first` (if it has rows and its leaves match the schema's):
/// the leaves in `priced` as inference priced them; of the others, those
/// whose sampled values are [mostly distinct](mostly_distinct): deltas
/// (integers) or plain values, Variant `value` leaves plain; and Variant
/// `value` leaves whose sampled values are all null, plain. A Variant's
/// `metadata` keeps its dictionary: rows share their names. Booleans are
/// never dictionary-encoded.
fn leaf_encodings(
    first: Option<&RecordBatch>,
    descriptor: &SchemaDescriptor,
    priced: &[(ColumnPath, LeafEncoding)],
) -> Vec<(ColumnPath, PhysicalType, LeafEncoding, Option<ArrayRef>)> {
    let mut samples = Vec::new();
    if let Some(batch) = first {
        let sample = batch.slice(0, batch.num_rows().min(DISTINCT_SAMPLE_VALUES));
        for column in sample.columns() {
            leaf_arrays(column, &mut samples);
        }
        for leaf in &mut samples {
            *leaf = leaf.slice(0, leaf.len().min(DISTINCT_SAMPLE_VALUES));
        }
    }
    if samples.len() != descriptor.num_columns() {
        samples.clear();
    }
    let mut leaves = Vec::new();
    for (i, column) in descriptor.columns().iter().enumerate() {
        let mut sample = samples.get(i);
        let encoding = match priced.iter().find(|(path, _)| path == column.path()) {
            Some((_, encoding)) => *encoding,
            None => {
                let distinct = sample
                    .and_then(distinct_values)
                    .is_some_and(|(distinct, values)| mostly_distinct(distinct, values));
                let no_values = sample.is_some_and(|s| !s.is_empty() && s.null_count() == s.len());
                match (distinct, in_variant(descriptor, i), column.name()) {
                    // Residuals of distinct values (whole rows, coordinate
                    // pairs): plain Variant bytes, not measured as deltas.
                    // So are residuals with no values in their sample (of
                    // fields always typed): an empty dictionary page costs
                    // 21 bytes under zstd, 504 bytes (0.4%) of the
                    // earthquakes set, and values that come later are
                    // Variant bytes, which zstd packs well plain.
                    (_, true, "value") if distinct || no_values => {
                        sample = None;
                        LeafEncoding::Plain
                    }
                    (false, _, _) | (true, true, "metadata") => LeafEncoding::Dictionary,
                    (true, _, _) => LeafEncoding::Delta,
                }
            }
        };
        leaves.push((
            column.path().clone(),
            column.physical_type(),
            encoding,
            sample.cloned(),
        ));
    }
    leaves
}

/// Whether the values of `sample` (strings or binary) take fewer bytes as
/// `DELTA_BYTE_ARRAY` than `PLAIN`, each compressed by `codec`: both
/// written uncompressed as a file in memory, once per file (and per layout
/// that inference measures), and their pages compressed one by one, as
/// the writer would, by one compressor. On 1M events rows, three leaves
/// priced so, the encoder's CPU time moved by 0.5%. Written compressed,
/// each file's column writer made a zstd compression and a decompression
/// context of its own (the parquet crate's codec holds both): `vshred
/// encode` of the 250 countries took 85 ms so, 70 ms now.
fn smaller_as_delta(sample: &ArrayRef, codec: ParquetCompression) -> bool {
    let pages = |encoding| -> Option<Vec<Page>> {
        let file = sample_file(sample, encoding, ParquetCompression::UNCOMPRESSED)?;
        let file = SerializedFileReader::new(Bytes::from(file)).ok()?;
        // A sample of no rows makes no row group (and the parquet crate
        // panics on a row group it does not have).
        if file.num_row_groups() == 0 {
            return None;
        }
        let pages = file.get_row_group(0).ok()?.get_column_page_reader(0).ok()?;
        pages.collect::<::parquet::errors::Result<_>>().ok()
    };
    let (Some(delta), Some(plain)) = (pages(Encoding::DELTA_BYTE_ARRAY), pages(Encoding::PLAIN))
    else {
        return false;
    };
    let Some(mut compressor) = PageCompressor::new(codec) else {
        return false;
    };
    match (compressor.size(&delta), compressor.size(&plain)) {
        (Some(delta), Some(plain)) => delta < plain,
        _ => false,
    }
}

/// `sample` written as a file of one column in `encoding`, without a
/// dictionary or statistics.
fn sample_file(
    sample: &ArrayRef,
    encoding: Encoding,
    codec: ParquetCompression,
) -> Option<Vec<u8>> {
    let field = Field::new("sample", sample.data_type().clone(), true);
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![sample.clone()]).ok()?;
    let properties = WriterProperties::builder()
        .set_compression(codec)
        .set_dictionary_enabled(false)
        .set_encoding(encoding)
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let mut writer = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(properties)).ok()?;
    writer.write(&batch).ok()?;
    writer.into_inner().ok()
}

/// Compresses pages as the parquet crate's codecs do, to measure them:
/// those of the [`Compression`]s vshred writes.
enum PageCompressor {
    Zstd(zstd::bulk::Compressor<'static>),
    Snappy(Box<snap::raw::Encoder>),
    None,
}

impl PageCompressor {
    fn new(codec: ParquetCompression) -> Option<PageCompressor> {
        Some(match codec {
            ParquetCompression::ZSTD(level) => {
                PageCompressor::Zstd(zstd::bulk::Compressor::new(level.compression_level()).ok()?)
            }
            ParquetCompression::SNAPPY => {
                PageCompressor::Snappy(Box::new(snap::raw::Encoder::new()))
            }
            // Uncompressed.
            _ => PageCompressor::None,
        })
    }

    /// The bytes of `pages`' bodies, each compressed alone.
    fn size(&mut self, pages: &[Page]) -> Option<usize> {
        pages
            .iter()
            .map(|page| match self {
                PageCompressor::Zstd(zstd) => zstd.compress(page.buffer()).ok().map(|c| c.len()),
                PageCompressor::Snappy(snappy) => {
                    snappy.compress_vec(page.buffer()).ok().map(|c| c.len())
                }
                PageCompressor::None => Some(page.buffer().len()),
            })
            .sum()
    }
}

/// The leaf arrays of `array`, depth first as the Parquet schema orders its
/// leaf columns; lists contribute the elements of their rows only.
fn leaf_arrays(array: &ArrayRef, leaves: &mut Vec<ArrayRef>) {
    match array.data_type() {
        DataType::Struct(_) => {
            for child in array.as_struct().columns() {
                leaf_arrays(child, leaves);
            }
        }
        DataType::List(_) => leaf_arrays(&list_elements(array.as_list::<i32>()), leaves),
        DataType::LargeList(_) => leaf_arrays(&list_elements(array.as_list::<i64>()), leaves),
        DataType::Map(..) => {
            let map = array.as_map();
            let offsets = map.value_offsets();
            let (start, end) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
            leaf_arrays(&map.keys().slice(start, end - start), leaves);
            leaf_arrays(&map.values().slice(start, end - start), leaves);
        }
        _ => leaves.push(array.clone()),
    }
}

fn list_elements<O: OffsetSizeTrait>(list: &GenericListArray<O>) -> ArrayRef {
    let offsets = list.value_offsets();
    let start = offsets[0].as_usize();
    list.values()
        .slice(start, offsets[offsets.len() - 1].as_usize() - start)
}

/// The distinct non-null values of a leaf and its non-null values; `None`
/// for booleans and types not compared here.
fn distinct_values(leaf: &ArrayRef) -> Option<(usize, usize)> {
    /// Counted by 64-bit hashes, as the inferrer counts them (exactly, for
    /// the [`DISTINCT_SAMPLE_VALUES`] at most given here): residuals can
    /// be whole rows (250 countries' outlines, 3.3 MB), which std's
    /// SipHash took 3% of the encode to hash. Two of a few thousand values
    /// share a hash with a chance of about 10^-12, and the hasher's seed is
    /// drawn afresh.
    fn count<'a>(values: impl Iterator<Item = &'a [u8]>) -> (usize, usize) {
        let hasher = BytesHasher::default();
        let mut distinct = Distinct::default();
        let mut n = 0;
        for v in values {
            distinct.insert(hasher.hash(v));
            n += 1;
        }
        (distinct.estimate() as usize, n)
    }
    Some(match leaf.data_type() {
        DataType::Binary => count(leaf.as_binary::<i32>().iter().flatten()),
        DataType::LargeBinary => count(leaf.as_binary::<i64>().iter().flatten()),
        DataType::BinaryView => count(leaf.as_binary_view().iter().flatten()),
        DataType::Utf8 => count(leaf.as_string::<i32>().iter().flatten().map(str::as_bytes)),
        DataType::LargeUtf8 => count(leaf.as_string::<i64>().iter().flatten().map(str::as_bytes)),
        DataType::Utf8View => count(leaf.as_string_view().iter().flatten().map(str::as_bytes)),
        DataType::FixedSizeBinary(_) => count(leaf.as_fixed_size_binary().iter().flatten()),
        t => {
            let width = t.primitive_width()?;
            let data = leaf.to_data();
            let bytes =
                &data.buffers()[0].as_slice()[data.offset() * width..][..data.len() * width];
            count(
                bytes
                    .chunks_exact(width)
                    .enumerate()
                    .filter(|(i, _)| leaf.is_valid(*i))
                    .map(|(_, v)| v),
            )
        }
    })
}

/// Opens `output` for a Parquet file, as [`Output`] opens any, but refuses
/// to replace a file that is not one: an output named where the input was
/// meant (the two given the wrong way round) would otherwise lose that
/// file. An empty file is replaced.
pub(crate) fn open_output(output: Output) -> Result<OpenOutput> {
    if let Output::Path(path) = &output
        && let Destination::Replace(target) = destination(path)?
        && magic_of(&target).is_some_and(|m| !m.is_empty() && !starts_as_parquet(&m))
    {
        return Err(Error::new(
            ErrorKind::Usage,
            "is not a Parquet file, and writing would replace it (remove it first, or choose another output)",
        )
        .in_file(path));
    }
    output.open()
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
    /// Where the values of its Variant columns went (`None` if the
    /// statistics lack null counts, which ours never do).
    pub typed_values: Option<TypedValues>,
}

impl ParquetWriter {
    /// A writer of a file with these columns to `output`: a path, replaced
    /// whole by [`finish`](Self::finish) (a device or FIFO is written
    /// directly), or a stream, which gets the bytes as they are made
    /// (Parquet's footer comes last, so nothing needs to seek; after a
    /// failure a stream holds a partial file).
    pub fn create(
        output: impl Into<Output>,
        columns: &[ColumnSpec],
        options: &WriteOptions,
    ) -> Result<ParquetWriter> {
        ParquetWriter::new(open_output(output.into())?, columns, options)
    }

    /// A writer of a file with these columns to an output opened already.
    pub(crate) fn new(
        output: OpenOutput,
        columns: &[ColumnSpec],
        options: &WriteOptions,
    ) -> Result<ParquetWriter> {
        let layout = file_layout(columns, options)?;
        Ok(ParquetWriter {
            schema: layout.schema.clone(),
            writer: Writer::Pending {
                out: output.out,
                layout,
            },
            completion: output.completion,
            columns: columns.to_vec(),
            last_cut: RowGroupCut::default(),
        })
    }

    /// The Arrow schema batches must have.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Writes a batch; row groups are cut at `row_group_rows`. The bytes
    /// of its Variant columns are checked first, every row's metadata and
    /// values: one that is not a valid Variant is an error naming its
    /// column and row, and nothing of the batch is written (a file no
    /// reader could read back was written without a word).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut json = Vec::new();
        for spec in &self.columns {
            let ColumnSpec::Variant { name, .. } = spec else {
                continue;
            };
            let Some(column) = batch.column_by_name(name).and_then(|c| c.as_struct_opt()) else {
                continue;
            };
            let column = ShreddedColumn::try_new(column)?;
            for row in 0..batch.num_rows() {
                json.clear();
                column
                    .write_json(row, &mut json)
                    .map_err(|e| e.with_note(&format!("in Variant column {name}; not written")))?;
            }
        }
        self.write_made(batch)
    }

    /// [`write`](Self::write) of a batch whose Variant columns vshred
    /// made itself, unchecked.
    pub(crate) fn write_made(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer
            .open(Some(batch))?
            .write(batch)
            .map_err(|e| self.failed("writing a batch", e))
    }

    /// Whether the file has reached `limit` bytes: for a file that ends
    /// there. The row group in progress is held in memory, and its size is
    /// predicted first from what the last cut row group came to (against
    /// the parquet crate's estimate of it, and per row); once the bytes
    /// written and that prediction pass the limit, the row group is
    /// written out, cut short, and the file's size is exact. A file that
    /// ends so has one to three short row groups at its end; the answer
    /// depends on the data alone.
    pub fn reached(&mut self, limit: u64) -> Result<bool> {
        let Writer::Open(writer) = &mut self.writer else {
            return Ok(false);
        };
        let written = writer.bytes_written() as u64;
        let estimate = writer.in_progress_size() as u64;
        let rows = writer.in_progress_rows() as u64;
        if written + self.last_cut.predict(estimate, rows) < limit {
            return Ok(false);
        }
        let flushed = writer.flush();
        let now = writer.bytes_written() as u64;
        flushed.map_err(|e| self.failed("writing a row group", e))?;
        if rows > 0 {
            self.last_cut = RowGroupCut::measured(now - written, estimate, rows);
        }
        Ok(now >= limit)
    }

    /// Completes the file (and moves it to its path).
    pub fn finish(self) -> Result<WriteSummary> {
        let (summary, completion) = self.finish_staged()?;
        completion.complete()?;
        Ok(summary)
    }

    /// Writes the rest of the file, footer included, and leaves a path's
    /// file staged beside it: the [`Completion`] moves it into place, or,
    /// dropped, removes it.
    pub fn finish_staged(mut self) -> Result<(WriteSummary, Completion)> {
        let writer = self.writer.open(None)?;
        // Flushes the output too.
        let finished = writer.finish();
        let bytes = writer.bytes_written() as u64;
        let metadata = finished.map_err(|e| self.failed("finishing the file", e))?;
        let summary = WriteSummary {
            rows: metadata.file_metadata().num_rows() as u64,
            row_groups: metadata.num_row_groups(),
            bytes,
            typed_values: variant_values(&leaf_sizes(&metadata), &self.columns),
        };
        Ok((summary, self.completion))
    }

    /// An error of the parquet crate or of the output, naming the file.
    #[cold]
    fn failed(&self, doing: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
        // The cause kept: a front end tells a closed pipe from a failure.
        let e = Error::parquet(doing, &e).with_source(e);
        match self.completion.target() {
            Some(target) => e.in_file(target),
            None => e,
        }
    }
}

/// A file's schemas and writer properties, and the leaves whose encoding
/// inference priced.
struct FileLayout {
    schema: SchemaRef,
    descriptor: SchemaDescriptor,
    properties: WriterPropertiesBuilder,
    priced: Vec<(ColumnPath, LeafEncoding)>,
}

fn file_layout(columns: &[ColumnSpec], options: &WriteOptions) -> Result<FileLayout> {
    let fields: Vec<Field> = columns.iter().map(ColumnSpec::field).collect();
    // Rows would be read back as objects with a name twice.
    for (i, field) in fields.iter().enumerate() {
        if fields[..i].iter().any(|f| f.name() == field.name()) {
            return Err(Error::new(
                ErrorKind::Schema,
                format!("two columns are named {}", field.name()),
            ));
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let descriptor = parquet_schema(columns, options.decimals)?;
    let zstd = |level| {
        ZstdLevel::try_new(level)
            .map(ParquetCompression::ZSTD)
            .map_err(|e| Error::parquet("zstd level", e))
    };
    let mut properties = WriterProperties::builder()
        .set_compression(match options.compression {
            Compression::Zstd { level, .. } => zstd(level)?,
            Compression::Snappy => ParquetCompression::SNAPPY,
            Compression::None => ParquetCompression::UNCOMPRESSED,
        })
        .set_max_row_group_row_count(Some(options.row_group_rows.max(1)))
        .set_max_row_group_bytes(Some(options.row_group_bytes.max(1)))
        // Page statistics feed the column index, for page skipping.
        .set_statistics_enabled(EnabledStatistics::Page)
        // Each leaf takes a batch's values 8192 at a time instead of 1024:
        // the column writers' checks (page full, dictionary full) and
        // per-call costs come 8x less often. Encoding 1M events rows took
        // 4-7% less CPU (two sets of 6 alternated runs), and the file came
        // out 0.5% smaller. A page may then hold up to 8192 rows more than
        // its 20,000-row limit; the parquet crate still sizes the batches
        // of byte arrays to keep pages within their byte limits.
        .set_write_batch_size(WRITE_BATCH_VALUES)
        .set_dictionary_page_size_limit(DICTIONARY_PAGE_LIMIT);
    if let Compression::Zstd {
        level,
        variant_level,
    } = options.compression
        && variant_level != level
    {
        let variant_compression = zstd(variant_level)?;
        for leaf in variant_bytes_leaves(&descriptor) {
            properties = properties.set_column_compression(leaf, variant_compression);
        }
    }
    // A Variant's metadata bytes sort in no order a reader could skip by,
    // and their min and max, compared byte by byte over long shared
    // prefixes, took 4.5% of the CPU of encoding 1M event rows.
    for leaf in variant_bytes_leaves(&descriptor) {
        if leaf.parts().last().is_some_and(|name| name == "metadata") {
            properties = properties.set_column_statistics_enabled(leaf, EnabledStatistics::None);
        }
    }
    for path in &options.bloom_filters {
        properties =
            properties.set_column_bloom_filter_enabled(ColumnPath::new(path.clone()), true);
    }
    let priced = options
        .leaf_encodings
        .iter()
        .map(|(path, encoding)| (ColumnPath::new(path.clone()), *encoding))
        .collect();
    Ok(FileLayout {
        schema,
        descriptor,
        properties,
        priced,
    })
}

/// Whether leaf `leaf` belongs to a Variant column (a group annotated
/// `VARIANT`, as [`parquet_schema`] writes every one).
fn in_variant(descriptor: &SchemaDescriptor, leaf: usize) -> bool {
    matches!(
        descriptor
            .get_column_root(leaf)
            .get_basic_info()
            .logical_type_ref(),
        Some(LogicalType::Variant { .. })
    )
}

/// The leaves of Variant bytes: each Variant column's `metadata` and every
/// `value`, the whole value where unshredded, a residual where shredded.
/// (A shredded field's own name is never a leaf's: its leaves are its
/// `value` and `typed_value`.)
fn variant_bytes_leaves(descriptor: &SchemaDescriptor) -> impl Iterator<Item = ColumnPath> + '_ {
    (0..descriptor.num_columns()).filter_map(move |leaf| {
        let column = descriptor.column(leaf);
        let variant_bytes =
            in_variant(descriptor, leaf) && matches!(column.name(), "value" | "metadata");
        variant_bytes.then(|| column.path().clone())
    })
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
                let converted = one.root_schema().get_fields()[0].clone();
                annotate_nested_variants(field, converted, field.name())?
            }
            ColumnSpec::Variant { name, schema } => variant_group(name, schema, decimals)?,
        });
    }
    let root = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map_err(|e| Error::parquet("the file schema", e))?;
    let descriptor = SchemaDescriptor::new(Arc::new(root));
    let depth = descriptor.columns().iter().map(|c| c.path().parts().len());
    if let Some(depth) = depth.max().filter(|&d| d > MAX_SCHEMA_DEPTH) {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "the layout nests {depth} levels deep, more than the {MAX_SCHEMA_DEPTH} a file may for vshred to read it back; shred fewer levels (--max-depth, or a shallower layout where one is given)"
            ),
        ));
    }
    Ok(descriptor)
}

#[cfg(test)]
mod tests {
    use arrow::array::{BinaryArray, Int32Array, StringArray};

    use super::*;

    #[test]
    fn distinct_values_count_each_value_once_and_leave_out_nulls() {
        let long = vec![7u8; 10_000];
        let longer = [long.clone(), vec![8]].concat();
        let binary: ArrayRef = Arc::new(BinaryArray::from_iter([
            Some(&long[..]),
            None,
            Some(&longer[..]),
            Some(&long[..]),
            Some(&b""[..]),
        ]));
        assert_eq!(distinct_values(&binary), Some((3, 4)));
        let strings: ArrayRef = Arc::new(StringArray::from_iter(
            (0..1000).map(|i| (i % 10 != 0).then(|| format!("k{:07}", i % 300))),
        ));
        assert_eq!(distinct_values(&strings), Some((270, 900)));
        let ints: ArrayRef = Arc::new(Int32Array::from_iter(
            (0..100).map(|i| (i != 5).then_some(i / 2)),
        ));
        // A slice, whose values start past the buffer's first.
        assert_eq!(distinct_values(&ints.slice(10, 20)), Some((10, 20)));
        assert_eq!(distinct_values(&ints), Some((50, 99)));
    }

    #[test]
    fn deltas_are_chosen_as_the_parquet_crates_own_compressed_files_would_choose() {
        // The reference: each encoding written by the parquet crate with
        // the codec, as the leaf will be.
        let compressed = |sample: &ArrayRef, codec, encoding| -> usize {
            sample_file(sample, encoding, codec).unwrap().len()
        };
        // Prefixes shared with the neighbours; hexadecimal hashes, whose
        // lengths alone deltas pack.
        let paths: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..4096).map(|i| format!("/catalog/items/{:07}", i * 13)),
        ));
        let hashed: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..4096u64).map(|i| format!("{:x}", i * 2654435761 % 1_000_003)),
        ));
        let mut chosen = Vec::new();
        for codec in [
            ParquetCompression::ZSTD(ZstdLevel::try_new(1).unwrap()),
            ParquetCompression::ZSTD(ZstdLevel::try_new(3).unwrap()),
            ParquetCompression::SNAPPY,
            ParquetCompression::UNCOMPRESSED,
        ] {
            for sample in [&paths, &hashed] {
                let reference = compressed(sample, codec, Encoding::DELTA_BYTE_ARRAY)
                    < compressed(sample, codec, Encoding::PLAIN);
                assert_eq!(smaller_as_delta(sample, codec), reference, "{codec:?}");
                chosen.push(reference);
            }
        }
        // Both answers are exercised: hashes are plain under zstd only.
        assert_eq!(chosen, [true, false, true, false, true, true, true, true]);
    }
}
