//! JSON Lines -> shredded Parquet, streaming: the first lines are the
//! inference sample; then lines go a batch at a time straight from the text
//! into the column builders and out to the writer, so memory stays bounded
//! by the sample, one batch and one row group. [`encode`] writes one file;
//! [`encode_dataset`] a directory of them, each cut at a number of lines
//! or bytes, with a layout that follows the data ([`dataset`]).
//!
//! For query engines: [`JsonRecords`] reads JSON Lines as the record
//! batches `encode` would write (a `read_jsonl` table), and
//! [`BatchEncoder`] writes record batches of Variants as `encode` writes
//! lines, inferring the layout from the first rows (a `COPY ... TO`).

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, RecordBatch, StringBuilder,
    StructArray,
};
use arrow::datatypes::{DataType, Field};

use crate::error::{Error, ErrorKind, Result};
use crate::infer::{InferOptions, LayoutPlan, LeafEncoding, LeafEstimate, Preset, SchemaInferrer};
use crate::json::{InexactNumbers, JsonNumber, JsonParser, JsonReader, Peek, UTF8_BOM};
use crate::output::Output;
use crate::parquet::{
    ColumnSpec, InMemoryFile, ParquetWriter, WriteOptions, WriteSummary, encode_in_memory,
};
use crate::shred::{ShredPolicy, Shredder, ShreddingSchema};
use crate::variant::{DuplicateKeys, VariantBuilder, VariantRef};

mod batches;
mod costs;
pub mod dataset;
mod records;
pub use batches::{BatchEncoder, BatchesWritten};
pub use costs::{LayoutCosts, LeafCost, layout_costs};
pub use dataset::{DatasetReport, DatasetSplit, LayoutChoice, PartReport, encode_dataset};
pub use records::JsonRecords;

/// The name of the Variant column when whole lines are Variants.
pub const DEFAULT_COLUMN: &str = "v";

/// How Variant columns are shredded.
#[derive(Clone, Debug)]
pub enum ShredMode {
    /// Inferred from the sample, with these options (preset and limits).
    Infer(InferOptions),
    /// Not shredded: `metadata` and `value` only.
    None,
    /// This layout, for every Variant column.
    Schema(ShreddingSchema),
}

impl ShredMode {
    /// The choices [`from_choice`](Self::from_choice) takes by name; any
    /// other is the path of a schema file.
    pub const PRESETS: [&str; 3] = ["auto", "spark", "none"];

    /// The shredding a user names: `auto` (our inference, with `infer`'s
    /// limits), `spark` (Spark's, likewise), `none`, or the path of a
    /// schema file in the JSON form that `vshred infer` prints. A name
    /// that is neither is a usage error, with the preset it is a typo of.
    ///
    /// ```
    /// use vshred::encode::ShredMode;
    /// use vshred::infer::InferOptions;
    ///
    /// assert!(matches!(ShredMode::from_choice("none", InferOptions::default())?, ShredMode::None));
    /// let typo = ShredMode::from_choice("sprak", InferOptions::default()).unwrap_err();
    /// assert!(typo.message().ends_with("did you mean spark?"), "{typo}");
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn from_choice(choice: &str, infer: InferOptions) -> Result<ShredMode> {
        Ok(match choice {
            "auto" => ShredMode::Infer(infer.with_preset(Preset::Default)),
            "spark" => ShredMode::Infer(infer.with_preset(Preset::Spark)),
            "none" => ShredMode::None,
            file => {
                let text = match std::fs::read_to_string(file) {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        let near = ShredMode::PRESETS
                            .iter()
                            .find(|p| strsim::damerau_levenshtein(p, file) <= 2)
                            .map(|p| format!("; did you mean {p}?"))
                            .unwrap_or_default();
                        return Err(Error::new(
                            ErrorKind::Usage,
                            format!(
                                "{file:?} is not a preset (auto, spark, none) nor a schema file{near}"
                            ),
                        ));
                    }
                    Err(e) => return Err(Error::io(std::path::Path::new(file), e)),
                };
                ShredMode::Schema(ShreddingSchema::from_json(&text).map_err(|e| e.in_file(file))?)
            }
        })
    }
}

/// How to encode.
#[derive(Clone, Debug)]
pub struct EncodeOptions {
    /// Top-level fields that become Variant columns; each line must then be
    /// an object, and its other fields become ordinary columns. Empty: each
    /// whole line is one Variant column named `v`.
    pub variant_fields: Vec<String>,
    /// Shredding of the Variant columns.
    pub shred: ShredMode,
    /// File layout.
    pub write: WriteOptions,
    /// Count and skip lines that are not valid JSON (or not objects when
    /// fields are split) instead of failing.
    pub skip_bad_lines: bool,
    /// Lines per batch handed to the writer.
    pub batch_rows: usize,
    /// Lines inspected to choose column types (with [`ShredMode::Infer`],
    /// the larger of this and its own sample size).
    pub sample_rows: usize,
    /// Bloom filters to add: an ordinary column (`id`), or a shredded path
    /// of a Variant column (`v.user.id`, or `$.user.id` for the first
    /// Variant column).
    pub bloom_filters: Vec<String>,
    /// What becomes of numbers that no decimal holds: an error naming the
    /// line (the default), or the nearest double, counted in the report.
    pub inexact_numbers: InexactNumbers,
    /// What an object with a key given twice does: an error (the default),
    /// or keep the last value (each line is then parsed whole before it is
    /// shredded, which is slower).
    pub duplicate_keys: DuplicateKeys,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            variant_fields: Vec::new(),
            shred: ShredMode::Infer(InferOptions::default()),
            write: WriteOptions::default(),
            skip_bad_lines: false,
            batch_rows: 8192,
            sample_rows: 4096,
            bloom_filters: Vec::new(),
            inexact_numbers: InexactNumbers::default(),
            duplicate_keys: DuplicateKeys::default(),
        }
    }
}

/// What the input lines came to: bad lines skipped, numbers stored as
/// inexact doubles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Lines skipped as bad (with `skip_bad_lines`).
    pub bad_lines: u64,
    /// The first bad line skipped, with its error.
    pub first_bad_line: Option<String>,
    /// Numbers stored as inexact doubles (with [`InexactNumbers::Double`]).
    pub inexact_numbers: u64,
    /// The line (from 1) of the first of them.
    pub first_inexact_line: Option<u64>,
}

/// What [`encode`] did.
#[derive(Clone, Debug)]
pub struct EncodeReport {
    /// The columns written, with the shredding chosen for Variant columns.
    pub columns: Vec<ColumnSpec>,
    /// Bad lines skipped and inexact numbers.
    pub lines: LineCounts,
    /// Names given as [`EncodeOptions::variant_fields`] that no sampled
    /// line has: their columns are null in those lines (a misspelt name?).
    pub unsampled_variant_fields: Vec<String>,
    /// The file written.
    pub written: WriteSummary,
}

/// Encodes JSON Lines from `input` into a Parquet file at `output`: a path
/// (written to a temporary file and renamed when complete, see
/// [`output`](crate::output)) or a stream. `progress` is called with the
/// input bytes consumed so far.
pub fn encode(
    input: &mut dyn BufRead,
    output: impl Into<Output>,
    options: &EncodeOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<EncodeReport> {
    // Opened first: an output that cannot be written fails before any work.
    let output = output.into().open()?;
    let mut source = Source::new(input);
    let mut sample = Lines::default();
    source.fill(&mut sample, sample_size(options))?;
    let mut tallies = LineTallies::new(options.skip_bad_lines);
    let plan = plan_columns(&sample, options, &mut tallies)?;
    let write = WriteOptions {
        leaf_encodings: leaf_encodings(&plan.priced),
        ..write_options(&plan.columns, options, None)?
    };
    let writer = ParquetWriter::new(output, &plan.columns, &write)?;
    let written = write_lines(
        &mut source,
        sample,
        &plan.columns,
        writer,
        options,
        FileLimit::default(),
        &mut tallies,
        progress,
    )?;
    Ok(EncodeReport {
        columns: plan.columns,
        lines: tallies.counts(),
        unsampled_variant_fields: plan.unsampled,
        written,
    })
}

/// The write options of a file with these columns: the options', with the
/// leaves of the bloom filters asked for. A path the layout does not shred
/// is an error, or, given `left_out`, is left out and named there.
fn write_options(
    columns: &[ColumnSpec],
    options: &EncodeOptions,
    mut left_out: Option<&mut Vec<String>>,
) -> Result<WriteOptions> {
    let mut write = options.write.clone();
    for path in &options.bloom_filters {
        match (bloom_filter_leaf(path, columns), left_out.as_deref_mut()) {
            (Ok(leaf), _) => write.bloom_filters.push(leaf),
            (Err(_), Some(left_out)) => left_out.push(path.clone()),
            (Err(e), None) => return Err(e),
        }
    }
    Ok(write)
}

/// Where [`write_lines`] ends a file: after `rows` lines, or after the
/// first batch with which its size reaches `bytes`
/// ([`ParquetWriter::reached`]); with neither, at the end of the input.
#[derive(Clone, Copy, Debug, Default)]
struct FileLimit {
    rows: Option<u64>,
    bytes: Option<u64>,
}

/// A batch encoded, with what its lines came to; or the error of its
/// first bad line.
type Encoded = Result<(RecordBatch, LineTallies)>;

/// Writes `first` and then lines of `source` into `writer` until `limit`
/// or the end of the input, and finishes the file.
///
/// Batches of lines are encoded on one thread per core, round-robin, and
/// written (Parquet encoding, compression) on one more, in input order;
/// this thread reads the lines and keeps the order. Bounded channels keep
/// at most two batches per encoder and two for the writer in flight.
///
/// With a byte limit, the writer ends the file after the first batch with
/// which its size reaches the limit. It knows only once that batch is
/// written, when later batches are encoded already: those are put back
/// into `source`, to be encoded again for the next file (whose layout may
/// differ). Lines are tallied only in the batches written, so none is
/// counted twice, and where a file ends depends on the data alone, never
/// on how the threads ran.
#[allow(clippy::too_many_arguments)]
fn write_lines(
    source: &mut Source<'_>,
    first: Lines,
    columns: &[ColumnSpec],
    writer: ParquetWriter,
    options: &EncodeOptions,
    limit: FileLimit,
    tallies: &mut LineTallies,
    progress: &mut dyn FnMut(u64),
) -> Result<WriteSummary> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let schema = writer.schema().clone();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let batch_rows = options.batch_rows.max(1);
    let mut rows_left = limit.rows.map(|r| r.saturating_sub(first.len() as u64));
    let skip = tallies.skip;
    // Set by the writer when the file is full: this thread stops reading.
    let full = &AtomicBool::new(false);
    // Batches written, whose buffers this thread may reuse.
    let written = &AtomicUsize::new(0);
    let panicked = |what: &str| Error::new(ErrorKind::Io, format!("{what} panicked"));
    let template = &*tallies;
    let (writer, counted, count, mut forwarded, reused) = std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Encoded>(2);
        let writing = scope.spawn(move || -> Result<(ParquetWriter, LineTallies, usize)> {
            let mut writer = writer;
            let mut counted = LineTallies::new(skip);
            let mut count = 0;
            for encoded in received {
                if full.load(Ordering::Acquire) {
                    continue; // past the end of the file: for the next one
                }
                let (batch, tally) = encoded?;
                writer.write(&batch)?;
                counted.merge(tally);
                count += 1;
                written.store(count, Ordering::Release);
                if let Some(bytes) = limit.bytes
                    && writer.reached(bytes)?
                {
                    full.store(true, Ordering::Release);
                }
            }
            Ok((writer, counted, count))
        });
        let (encoders, handles): (Vec<_>, Vec<_>) = (0..threads)
            .map(|_| {
                let (to_encoder, lines_in) = std::sync::mpsc::sync_channel::<Lines>(1);
                let (encoded_out, from_encoder) =
                    std::sync::mpsc::sync_channel::<(Encoded, Lines)>(1);
                let mut encoder = RowEncoder::new(columns, options);
                let worker = template.for_worker();
                let schema = schema.clone();
                let handle = scope.spawn(move || {
                    for lines in lines_in {
                        // Tallied per batch: only the batches written count.
                        let mut tally = worker.for_worker();
                        let batch = encoder
                            .encode_batch(&lines, &mut tally)
                            .and_then(|columns| {
                                RecordBatch::try_new(schema.clone(), columns).map_err(|e| {
                                    Error::new(ErrorKind::Schema, format!("building a batch: {e}"))
                                })
                            })
                            .map(|batch| (batch, tally));
                        if encoded_out.send((batch, lines)).is_err() {
                            break;
                        }
                    }
                });
                ((to_encoder, from_encoder), handle)
            })
            .unzip();
        // Lines handed to the writer, from batch `reused` on, kept with a
        // byte limit until written (they may be needed for the next file);
        // the buffers of those written are reused for reading.
        let mut forwarded: VecDeque<Lines> = VecDeque::new();
        let mut reused = 0;
        let mut spare: Vec<Lines> = Vec::new();
        // Batch `k` goes to encoder `k % threads`; its result is taken
        // (and handed to the writer) just before that encoder gets batch
        // `k + threads`, so that results reach the writer in input order.
        let mut take = |k: usize, spare: &mut Vec<Lines>| -> Result<bool> {
            let (encoded, lines) = encoders[k % threads]
                .1
                .recv()
                .map_err(|_| panicked("an encoding thread"))?;
            if limit.bytes.is_none() {
                // Every batch will be written: its buffer is free now.
                spare.push(lines);
                reused += 1;
            } else {
                forwarded.push_back(lines);
                while reused < written.load(Ordering::Acquire) {
                    spare.extend(forwarded.pop_front());
                    reused += 1;
                }
            }
            // A closed channel means the writer stopped: its error says why.
            Ok(batches.send(encoded).is_ok())
        };
        let read = (|| -> Result<()> {
            let mut lines = first;
            let mut sent = 0;
            while !lines.is_empty() {
                if sent >= threads && !take(sent - threads, &mut spare)? {
                    return Ok(());
                }
                if encoders[sent % threads].0.send(lines).is_err() {
                    break; // the encoder panicked: reported when joined
                }
                sent += 1;
                progress(source.consumed());
                let n = rows_left.map_or(batch_rows, |left| left.min(batch_rows as u64) as usize);
                if n == 0 || full.load(Ordering::Acquire) {
                    break;
                }
                lines = spare.pop().unwrap_or_default();
                lines.clear();
                source.fill(&mut lines, n)?;
                if let Some(left) = &mut rows_left {
                    *left -= lines.len() as u64;
                }
            }
            for k in sent.saturating_sub(threads)..sent {
                if !take(k, &mut spare)? {
                    return Ok(());
                }
            }
            Ok(())
        })();
        // Closing the channels stops the encoders and then the writer.
        drop(encoders);
        let mut joined = Ok(());
        for handle in handles {
            if handle.join().is_err() {
                joined = Err(panicked("an encoding thread"));
            }
        }
        drop(batches);
        let writer = writing.join().map_err(|_| panicked("the writer thread"))?;
        // The writer's error comes from an earlier line than a read error.
        // An error drops the writer, which removes its temporary file.
        let (writer, counted, count) = writer?;
        read.and(joined)?;
        Ok::<_, Error>((writer, counted, count, forwarded, reused))
    })?;
    tallies.merge(counted);
    // Batches read past the end of the file go back, in order.
    forwarded.drain(..count - reused);
    source.put_back(forwarded);
    writer.finish()
}

/// Chooses the columns from the first lines of `input`, as [`encode`] would:
/// for `vshred infer`.
pub fn infer_columns(input: &mut dyn BufRead, options: &EncodeOptions) -> Result<Vec<ColumnSpec>> {
    let mut sample = Lines::default();
    Source::new(input).fill(&mut sample, sample_size(options))?;
    plan_columns(
        &sample,
        options,
        &mut LineTallies::new(options.skip_bad_lines),
    )
    .map(|plan| plan.columns)
}

/// The layout of the Variant columns of `columns` in the JSON form a
/// schema file keeps (what `vshred infer` prints): the one column's, or an
/// object of them by name.
pub fn layout_json(columns: &[ColumnSpec]) -> String {
    let variants: Vec<(&String, &ShreddingSchema)> = columns
        .iter()
        .filter_map(|c| match c {
            ColumnSpec::Variant { name, schema } => Some((name, schema)),
            ColumnSpec::Plain(_) => None,
        })
        .collect();
    match variants.as_slice() {
        [(_, schema)] => schema.to_string(),
        many => {
            let body: Vec<String> = many
                .iter()
                .map(|(name, schema)| {
                    let mut key = Vec::new();
                    crate::json::write_json_string(&mut key, name);
                    format!("{}:{schema}", String::from_utf8_lossy(&key))
                })
                .collect();
            format!("{{{}}}", body.join(","))
        }
    }
}

fn sample_size(options: &EncodeOptions) -> usize {
    match &options.shred {
        ShredMode::Infer(infer) => infer.sample_rows().max(options.sample_rows),
        _ => options.sample_rows,
    }
    .max(1)
}

/// The Parquet leaf of a `--bloom-filter` path: an ordinary column, or the
/// `typed_value` of a shredded primitive field.
fn bloom_filter_leaf(path: &str, columns: &[ColumnSpec]) -> Result<Vec<String>> {
    let fail = |why: String| Error::new(ErrorKind::Usage, format!("bloom filter {path:?}: {why}"));
    let (column, rest) = if path.starts_with('$') {
        let first_variant = columns.iter().find_map(|c| match c {
            ColumnSpec::Variant { name, .. } => Some(name.as_str()),
            ColumnSpec::Plain(_) => None,
        });
        (
            first_variant.ok_or_else(|| fail("there is no Variant column".into()))?,
            path,
        )
    } else {
        let split = path.find(['.', '[']).unwrap_or(path.len());
        (&path[..split], &path[split..])
    };
    match columns.iter().find(|c| column_name(c) == column) {
        Some(ColumnSpec::Plain(_)) if rest.is_empty() => Ok(vec![column.to_string()]),
        Some(ColumnSpec::Variant { schema, .. }) => {
            let variant_path = crate::path::VariantPath::parse(rest)?;
            let mut fields = Vec::new();
            let mut slot = schema;
            for segment in variant_path.segments() {
                let next = match segment {
                    crate::path::PathSegment::Field(name) => slot.field(name).map(|n| (name, n)),
                    crate::path::PathSegment::Index(_) => None,
                };
                let Some((name, next)) = next else {
                    return Err(fail(format!("not shredded in {column} (layout {schema})")));
                };
                fields.push(name.as_str());
                slot = next;
            }
            if !slot.is_typed()
                || matches!(slot, ShreddingSchema::Object(_) | ShreddingSchema::Array(_))
            {
                return Err(fail(format!(
                    "not a shredded primitive in {column} (layout {schema})"
                )));
            }
            Ok(crate::parquet::typed_value_path(column, &fields))
        }
        _ => Err(fail(format!("no column {column:?}"))),
    }
}

/// A line held in [`Lines`].
#[derive(Clone, Copy)]
pub(super) struct Line {
    /// Index among the non-blank lines, from 0.
    row: u64,
    /// Line number in the input, from 1.
    number: u64,
    /// Byte offset of the line in the input.
    offset: u64,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// A batch of lines in one buffer, with where each came from.
#[derive(Default)]
pub(super) struct Lines {
    pub(super) text: Vec<u8>,
    /// Each non-blank line in `text`: where it is in the input.
    pub(super) lines: Vec<Line>,
}

impl Lines {
    fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    /// Moves the first `n` lines of `from` to the end of these.
    fn move_front(&mut self, from: &mut Lines, n: usize) {
        for line in from.lines.drain(..n) {
            let start = self.text.len();
            self.text
                .extend_from_slice(&from.text[line.start..line.end]);
            self.lines.push(Line {
                start,
                end: self.text.len(),
                ..line
            });
        }
    }

    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
    }

    fn iter(&self) -> impl Iterator<Item = (Line, &[u8])> + '_ {
        self.lines.iter().map(|&l| (l, &self.text[l.start..l.end]))
    }
}

/// The lines of the input still to be written: those read past the end of
/// the last file (with a byte limit), then the reader's.
struct Source<'r> {
    reader: LineReader<'r>,
    /// Batches read and not written, in input order.
    pending: VecDeque<Lines>,
}

impl<'r> Source<'r> {
    fn new(input: &'r mut dyn BufRead) -> Source<'r> {
        Source {
            reader: LineReader::new(input),
            pending: VecDeque::new(),
        }
    }

    /// Adds up to `n` more lines to `lines`, the pending ones first.
    fn fill(&mut self, lines: &mut Lines, n: usize) -> Result<()> {
        let target = lines.len() + n;
        while lines.len() < target
            && let Some(front) = self.pending.front_mut()
        {
            let moved = (target - lines.len()).min(front.len());
            lines.move_front(front, moved);
            if front.is_empty() {
                self.pending.pop_front();
            }
        }
        self.reader.fill(lines, target - lines.len())
    }

    /// Puts batches read past the end of a file back, before the pending
    /// ones.
    fn put_back(&mut self, batches: VecDeque<Lines>) {
        for batch in batches.into_iter().rev() {
            self.pending.push_front(batch);
        }
    }

    /// Input bytes read so far.
    fn consumed(&self) -> u64 {
        self.reader.consumed()
    }
}

/// Reads the input into [`Lines`], counting lines and bytes.
pub(super) struct LineReader<'r> {
    input: &'r mut dyn BufRead,
    line_no: u64,
    /// Non-blank lines read.
    rows: u64,
    consumed: u64,
}

impl<'r> LineReader<'r> {
    pub(super) fn new(input: &'r mut dyn BufRead) -> LineReader<'r> {
        LineReader {
            input,
            line_no: 0,
            rows: 0,
            consumed: 0,
        }
    }

    /// Reads up to `n` more non-blank lines into `batch`.
    pub(super) fn fill(&mut self, batch: &mut Lines, n: usize) -> Result<()> {
        let target = batch.lines.len() + n;
        while batch.lines.len() < target {
            let start = batch.text.len();
            let read = self
                .input
                .read_until(b'\n', &mut batch.text)
                .map_err(|e| Error::new(ErrorKind::Io, format!("reading input: {e}")))?;
            if read == 0 {
                break;
            }
            let mut offset = self.consumed;
            self.consumed += read as u64;
            self.line_no += 1;
            let mut start = start;
            // A byte order mark at the start of the input is not JSON;
            // offsets still count it.
            if offset == 0 && batch.text[start..].starts_with(UTF8_BOM) {
                start += UTF8_BOM.len();
                offset += UTF8_BOM.len() as u64;
            }
            let mut end = batch.text.len();
            while end > start && matches!(batch.text[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if batch.text[start..end].iter().all(u8::is_ascii_whitespace) {
                batch.text.truncate(batch.text.len() - read);
                continue;
            }
            self.rows += 1;
            batch.lines.push(Line {
                row: self.rows - 1,
                number: self.line_no,
                offset,
                start,
                end,
            });
        }
        Ok(())
    }

    fn consumed(&self) -> u64 {
        self.consumed
    }
}

/// What the lines of a run came to: bad lines (counted and skipped, or
/// the first turned into the error) and lines with inexact numbers.
struct LineTallies {
    skip: bool,
    bad: u64,
    /// The earliest bad line counted: its number and error.
    first_bad: Option<(u64, String)>,
    /// Bad lines of the sample, which is read again when encoding.
    sampled: Vec<u64>,
    /// Numbers stored as inexact doubles.
    inexact: u64,
    /// The earliest line with one.
    first_inexact: Option<u64>,
}

impl LineTallies {
    fn new(skip: bool) -> LineTallies {
        LineTallies {
            skip,
            bad: 0,
            first_bad: None,
            sampled: Vec::new(),
            inexact: 0,
            first_inexact: None,
        }
    }

    /// A tally for an encoding thread or a batch: nothing counted yet,
    /// the same sample lines known.
    fn for_worker(&self) -> LineTallies {
        LineTallies {
            sampled: self.sampled.clone(),
            ..LineTallies::new(self.skip)
        }
    }

    /// What was counted, for a report.
    fn counts(&self) -> LineCounts {
        LineCounts {
            bad_lines: self.bad,
            first_bad_line: self.first_bad.as_ref().map(|(_, e)| e.clone()),
            inexact_numbers: self.inexact,
            first_inexact_line: self.first_inexact,
        }
    }

    /// Adds what an encoding thread counted.
    fn merge(&mut self, other: LineTallies) {
        self.bad += other.bad;
        if let Some(first) = other.first_bad
            && self.first_bad.as_ref().is_none_or(|f| first.0 < f.0)
        {
            self.first_bad = Some(first);
        }
        self.add_inexact(other.inexact, other.first_inexact);
    }

    /// Counts `count` inexact numbers, the first at line `first`.
    fn add_inexact(&mut self, count: u64, first: Option<u64>) {
        self.inexact += count;
        if let Some(line) = first {
            self.first_inexact = Some(self.first_inexact.map_or(line, |f| f.min(line)));
        }
    }

    /// Records a bad line of the sample.
    fn record_sample(&mut self, line: Line, text: &[u8], e: Error) -> Result<()> {
        self.record(line, text, e)?;
        self.sampled.push(line.number);
        Ok(())
    }

    /// Records a bad line: an error unless skipping. Lines are recorded
    /// once, though the sample lines are read twice.
    fn record(&mut self, line: Line, text: &[u8], e: Error) -> Result<()> {
        let e = locate(e, line, text);
        if !self.skip {
            return Err(e);
        }
        if !self.sampled.contains(&line.number) {
            self.bad += 1;
            if self.first_bad.as_ref().is_none_or(|f| line.number < f.0) {
                self.first_bad = Some((line.number, e.to_string()));
            }
        }
        Ok(())
    }
}

/// Moves an error positioned within one line (`text`) to its place in the
/// input.
pub(super) fn locate(e: Error, line: Line, text: &[u8]) -> Error {
    crate::json::JsonLine {
        row: line.row,
        line: line.number,
        byte: line.offset,
        text,
    }
    .locate(e)
}

/// The kinds of JSON value a top-level field took in the sample.
#[derive(Default, Clone, Copy)]
struct Kinds {
    int: bool,
    double: bool,
    string: bool,
    boolean: bool,
    other: bool,
}

impl Kinds {
    /// The ordinary column type, if the field is simple enough for one.
    fn plain_type(self) -> Option<DataType> {
        // Exactly one kind (nulls aside) makes an ordinary column.
        match (self.int, self.double, self.string, self.boolean, self.other) {
            (true, false, false, false, false) => Some(DataType::Int64),
            (false, true, false, false, false) => Some(DataType::Float64),
            (false, false, true, false, false) => Some(DataType::Utf8),
            (false, false, false, true, false) => Some(DataType::Boolean),
            _ => None,
        }
    }
}

/// How much smaller the Spark preset's layout must make the sample for
/// the default preset to take it.
const CLEARLY_SMALLER: f64 = 0.95;

/// The fewest measured values (non-null rows of the sample's first
/// [`MEASURED_BYTES`]) from which `auto` may leave a column unshredded
/// because that writes it smaller. Over fewer, every layout's fixed cost
/// per leaf (page and column headers, a dictionary page) outweighs what
/// shredding saves, so a small input would never be shredded. From it, the
/// real-data bench's smallest sets are left unshredded: 250 countries and
/// 329 webhook payloads, 7% and 29% smaller so.
const MIN_VALUES_TO_UNSHRED: usize = 200;

/// The fewest bytes a measured value that `auto` leaving a column
/// unshredded must save. A saving that does not grow with the rows is the
/// fixed cost of the layout's leaves (their headers and dictionary pages),
/// which a file pays once a row group: 5,000 copies of one small row, or
/// 300 small objects shredding one field, wrote a few hundred bytes
/// smaller unshredded, 5% of almost nothing.
const MIN_SAVING_PER_VALUE: u64 = 1;

/// The most bytes of sample text that layouts are measured on (the first
/// lines read as rows, and the line that crosses it): a sample of 4096
/// rows of up to 2 KiB, such as the seed and events ones (0.7-0.8 MB), is
/// measured whole, rows of 5,000 keys (58 KB) 144 of them, not 2,000.
/// Measuring shreds and writes these lines once per layout, so its time
/// and memory are bounded by this, not by the width of the rows.
const MEASURED_BYTES: usize = 8 << 20;

/// The sample lines layouts are measured on: those read as rows, up to
/// [`MEASURED_BYTES`] of them.
#[derive(Default)]
struct MeasuredRows<'a> {
    rows: Vec<&'a [u8]>,
    bytes: usize,
}

impl<'a> MeasuredRows<'a> {
    fn push(&mut self, text: &'a [u8]) {
        if self.bytes < MEASURED_BYTES {
            self.bytes += text.len();
            self.rows.push(text);
        }
    }
}

/// Shreds the measured sample rows by a layout.
type ShredSample<'a> = dyn Fn(&ShreddingSchema) -> Result<StructArray> + 'a;

/// What the sample says about one top-level field (or the whole line).
struct FieldPlan {
    name: String,
    kinds: Kinds,
    /// When the layout is inferred.
    inferrer: Option<SchemaInferrer>,
    /// With the default preset: the Spark preset's inferrer, to measure
    /// both layouts.
    alternative: Option<SchemaInferrer>,
}

impl FieldPlan {
    /// A field whose layout is inferred with `infer`, if given.
    fn new(name: String, infer: Option<&InferOptions>) -> FieldPlan {
        let alternative = infer
            .filter(|o| o.preset() == Preset::Default)
            .map(|o| SchemaInferrer::new(o.clone().with_preset(Preset::Spark)));
        FieldPlan {
            name,
            kinds: Kinds::default(),
            inferrer: infer.map(|o| SchemaInferrer::new(o.clone())),
            alternative,
        }
    }

    /// Adds a sampled value.
    fn add(&mut self, v: &VariantRef<'_>) {
        if let Some(inferrer) = &mut self.inferrer {
            inferrer.add(v);
        }
        if let Some(spark) = &mut self.alternative {
            spark.add(v);
        }
    }

    /// Adds a sampled row where the column is SQL NULL: it takes a place in
    /// the sample, as [`SchemaInferrer::add_null`] says.
    fn add_null(&mut self) {
        if let Some(inferrer) = &mut self.inferrer {
            inferrer.add_null();
        }
        if let Some(spark) = &mut self.alternative {
            spark.add_null();
        }
    }

    /// The layout of this Variant column: the default preset's, unless the
    /// Spark preset's makes the sample, written as a file, smaller by at
    /// least [`CLEARLY_SMALLER`]; and unshredded when that makes the
    /// sample's column chunks smaller again by as much (from
    /// [`MIN_VALUES_TO_UNSHRED`] measured values). The default preset's cost
    /// model counts bytes before compression; on unique ids and keys, and
    /// on wide rows that compress well whole, compression decides, so the
    /// layouts are measured. Near a tie ours stays: its types are narrower
    /// and its values faithful, and a shredded column serves reads that an
    /// unshredded one cannot. The footer counts between two layouts (a
    /// wider one costs more of it) but not against shredding: on a sample
    /// it outweighs what it does in a file of many rows, and would leave a
    /// thousand seed rows unshredded. Without inference: unshredded.
    ///
    /// `shred_sample` shreds the measured sample rows by a layout, as they
    /// will be written (`None`: nothing to measure, ours stays).
    fn layout(
        &self,
        write: &WriteOptions,
        shred_sample: Option<&ShredSample<'_>>,
    ) -> Result<LayoutPlan> {
        let Some(inferrer) = &self.inferrer else {
            return Ok(LayoutPlan::from(ShreddingSchema::Variant));
        };
        let ours = inferrer.plan();
        let (Some(spark), Some(shred_sample)) = (&self.alternative, shred_sample) else {
            return Ok(ours);
        };
        let write_file = |plan: &LayoutPlan, sample: StructArray| -> Result<InMemoryFile> {
            let column = ColumnSpec::Variant {
                name: self.name.clone(),
                schema: plan.schema.clone(),
            };
            // The sample in one row group, whatever the file's: the
            // leaves' fixed costs then count once, as in a row group larger
            // than a sample, and the layout is the one `infer` gives
            // without a row group size.
            let options = WriteOptions {
                row_group_rows: usize::MAX,
                leaf_encodings: self.leaf_encodings(plan),
                ..write.clone()
            };
            encode_in_memory(&[column], vec![Arc::new(sample)], &options)
        };
        let write_sample = |plan: &LayoutPlan| write_file(plan, shred_sample(&plan.schema)?);
        let clearly_smaller = |a: u64, b: u64| (a as f64) < CLEARLY_SMALLER * b as f64;
        let theirs = spark.plan();
        let (chosen, written) = if theirs.schema == ours.schema {
            (ours, None)
        } else {
            let (ours_file, theirs_file) = (write_sample(&ours)?, write_sample(&theirs)?);
            if clearly_smaller(theirs_file.bytes, ours_file.bytes) {
                (theirs, Some(theirs_file))
            } else {
                (ours, Some(ours_file))
            }
        };
        if chosen.schema == ShreddingSchema::Variant {
            return Ok(chosen);
        }
        let unshredded = shred_sample(&ShreddingSchema::Variant)?;
        let values = unshredded.len() - unshredded.null_count();
        if values < MIN_VALUES_TO_UNSHRED {
            return Ok(match written {
                Some(file) => self.settled(chosen, &file),
                None => chosen,
            });
        }
        let chosen_file = match written {
            Some(file) => file,
            None => write_sample(&chosen)?,
        };
        let unshredded_plan = LayoutPlan::from(ShreddingSchema::Variant);
        let unshredded_bytes = write_file(&unshredded_plan, unshredded)?.column_bytes;
        let saving = chosen_file.column_bytes.saturating_sub(unshredded_bytes);
        Ok(
            if clearly_smaller(unshredded_bytes, chosen_file.column_bytes)
                && saving >= MIN_SAVING_PER_VALUE * values as u64
            {
                unshredded_plan
            } else {
                self.settled(chosen, &chosen_file)
            },
        )
    }

    /// `plan` with the string and binary leaves it priced as deltas that
    /// `file`, the sample written by it, stored `PLAIN` (smaller so under
    /// the codec) priced plain: the writer then writes them so without
    /// measuring again, and each estimate is of what is written.
    fn settled(&self, mut plan: LayoutPlan, file: &InMemoryFile) -> LayoutPlan {
        for leaf in plan.leaves.iter_mut().filter(|l| l.plain_bytes.is_some()) {
            let written = file.leaves.iter().find(|w| {
                w.path
                    .split_first()
                    .is_some_and(|(column, path)| *column == self.name && *path == leaf.path)
            });
            if written.is_some_and(|w| !w.encodings.iter().any(|e| e == "DELTA_BYTE_ARRAY")) {
                leaf.priced_plain();
            }
        }
        plan
    }

    /// The leaves `plan` priced, by their paths in the file.
    fn priced_leaves(&self, plan: &LayoutPlan) -> Vec<LeafEstimate> {
        plan.leaves
            .iter()
            .map(|leaf| LeafEstimate {
                path: std::iter::once(&self.name)
                    .chain(&leaf.path)
                    .cloned()
                    .collect(),
                ..leaf.clone()
            })
            .collect()
    }

    /// The encodings `plan` priced, by the leaves' paths in the file.
    fn leaf_encodings(&self, plan: &LayoutPlan) -> Vec<(Vec<String>, LeafEncoding)> {
        leaf_encodings(&self.priced_leaves(plan))
    }

    /// [`layout`](Self::layout) measured on sample lines read as rows (bad
    /// ones left out), whole Variants or, with `split`, objects holding
    /// this field. They are shredded from their text, as [`encode`] will
    /// shred them, because a residual's bytes depend on how it is built:
    /// re-encoded from the parsed Variants, residual objects had their
    /// values in field order, not in input order as `encode` writes them,
    /// and on rows of 5,000 keys compressed to 18% less, which took a
    /// layout that made the file no smaller (or, on 100 rows of 2,000
    /// keys, 10% larger). Nor is a copy of the sample kept. Lines split
    /// into fields with the last of duplicate keys kept are not measured: a
    /// field is shredded from the line parsed whole, which this does not
    /// repeat.
    fn layout_of_lines(
        &self,
        rows: &[&[u8]],
        split: bool,
        options: &EncodeOptions,
    ) -> Result<LayoutPlan> {
        let keep_last = options.duplicate_keys == DuplicateKeys::KeepLast;
        let shred_sample = |schema: &ShreddingSchema| -> Result<StructArray> {
            let mut shredder = Shredder::new(schema)
                .with_policy(Preset::Default.policy())
                .with_inexact_numbers(options.inexact_numbers)
                .with_duplicate_keys(options.duplicate_keys);
            for &text in rows {
                if split {
                    append_field_of(&mut shredder, text, &self.name, options.inexact_numbers)?;
                } else {
                    shredder.append_json(text)?;
                }
            }
            Ok(shredder.finish())
        };
        let measurable = !(rows.is_empty() || split && keep_last);
        self.layout(
            &options.write,
            measurable.then_some(&shred_sample as &ShredSample<'_>),
        )
    }
}

/// Shreds field `name` of the JSON object `text` (a sample line that
/// parsed), or a null row if it has none, as [`RowEncoder`] does.
fn append_field_of(
    shredder: &mut Shredder,
    text: &[u8],
    name: &str,
    inexact: InexactNumbers,
) -> Result<()> {
    let mut reader = JsonReader::new(text, inexact);
    reader.peek()?;
    let mut key = reader.first_key()?;
    while let Some(k) = key {
        if k == name {
            return shredder.append_json_value(&mut reader);
        }
        reader.skip_value(1, crate::variant::DEFAULT_MAX_DEPTH)?;
        key = reader.next_key()?;
    }
    shredder.append_null();
    Ok(())
}

/// Adds the top-level keys of a JSON object line not yet known to
/// `fields`, in the order the line has them: columns come in input order.
fn record_key_order(text: &[u8], fields: &mut Vec<FieldPlan>, infer: Option<&InferOptions>) {
    // Skipping values classifies no number.
    let mut reader = JsonReader::new(text, InexactNumbers::default());
    if reader.peek().ok() != Some(Peek::Object) {
        return;
    }
    let mut key = reader.first_key().ok().flatten().map(str::to_owned);
    while let Some(k) = key {
        if !fields.iter().any(|f| f.name == k) {
            fields.push(FieldPlan::new(k, infer));
        }
        if reader
            .skip_value(1, crate::variant::DEFAULT_MAX_DEPTH)
            .is_err()
        {
            return;
        }
        key = reader.next_key().ok().flatten().map(str::to_owned);
    }
}

/// The encodings of priced leaves, for [`WriteOptions::leaf_encodings`].
fn leaf_encodings(priced: &[LeafEstimate]) -> Vec<(Vec<String>, LeafEncoding)> {
    priced
        .iter()
        .map(|leaf| (leaf.path.clone(), leaf.encoding))
        .collect()
}

/// The columns chosen from the sample.
struct Plan {
    columns: Vec<ColumnSpec>,
    /// How inference priced the typed leaves of the layouts it chose, by
    /// their paths in the file.
    priced: Vec<LeafEstimate>,
    /// The named Variant fields that no sampled line has.
    unsampled: Vec<String>,
}

/// Looks at the sample and chooses every column.
fn plan_columns(lines: &Lines, options: &EncodeOptions, tallies: &mut LineTallies) -> Result<Plan> {
    let infer = match &options.shred {
        ShredMode::Infer(o) => Some(o),
        _ => None,
    };
    let parser = JsonParser::new().with_inexact_numbers(options.inexact_numbers);
    let mut builder = VariantBuilder::new().with_duplicate_keys(options.duplicate_keys);
    // Per top-level field, in order of appearance.
    let mut fields: Vec<FieldPlan> = Vec::new();
    let mut measured = MeasuredRows::default();
    let split = !options.variant_fields.is_empty();
    if !split {
        fields.push(FieldPlan::new(DEFAULT_COLUMN.into(), infer));
    }
    for (line, text) in lines.iter() {
        builder.reset();
        if let Err(e) = parser.parse(text, &mut builder) {
            tallies.record_sample(line, text, e)?;
            continue;
        }
        let (m, v) = builder.finish();
        let variant = VariantRef::try_new(m, v)?;
        if !split {
            fields[0].add(&variant);
            measured.push(text);
            continue;
        }
        let Some(object) = variant.as_object() else {
            let start = text.len() - text.trim_ascii_start().len();
            tallies.record_sample(line, text, not_an_object(text, start))?;
            continue;
        };
        measured.push(text);
        record_key_order(text, &mut fields, infer);
        for (name, value) in object.iter() {
            let i = match fields.iter().position(|f| f.name == name) {
                Some(i) => i,
                None => {
                    fields.push(FieldPlan::new(name.to_string(), infer));
                    fields.len() - 1
                }
            };
            let kinds = &mut fields[i].kinds;
            match value {
                VariantRef::Null => {}
                VariantRef::Int8(_)
                | VariantRef::Int16(_)
                | VariantRef::Int32(_)
                | VariantRef::Int64(_) => kinds.int = true,
                VariantRef::Double(_) => kinds.double = true,
                VariantRef::String(_) => kinds.string = true,
                VariantRef::Bool(_) => kinds.boolean = true,
                _ => kinds.other = true,
            }
            fields[i].add(&value);
        }
    }
    let mut unsampled = Vec::new();
    for name in &options.variant_fields {
        if !fields.iter().any(|f| &f.name == name) {
            fields.push(FieldPlan::new(name.clone(), infer));
            unsampled.push(name.clone());
        }
    }
    let mut columns = Vec::with_capacity(fields.len());
    let mut priced = Vec::new();
    for field in fields {
        let forced_variant = !split || options.variant_fields.contains(&field.name);
        if let Some(t) = field.kinds.plain_type().filter(|_| !forced_variant) {
            columns.push(ColumnSpec::Plain(Field::new(field.name, t, true)));
            continue;
        }
        let schema = match &options.shred {
            ShredMode::Infer(_) => {
                let plan = field.layout_of_lines(&measured.rows, split, options)?;
                priced.extend(field.priced_leaves(&plan));
                plan.schema
            }
            ShredMode::None => ShreddingSchema::Variant,
            ShredMode::Schema(s) => s.clone(),
        };
        columns.push(ColumnSpec::Variant {
            schema,
            name: field.name,
        });
    }
    Ok(Plan {
        columns,
        priced,
        unsampled,
    })
}

/// Builds the columns of a batch of lines.
struct RowEncoder {
    columns: Vec<ColumnSpec>,
    builders: Vec<ColumnBuilder>,
    split: bool,
    /// Which columns the current line filled.
    seen: Vec<bool>,
    /// Reads split lines, with the options' rule for inexact numbers.
    parser: JsonParser,
    /// With [`DuplicateKeys::KeepLast`], split lines are parsed whole with
    /// this builder first: a value appended to a column cannot be taken
    /// back when its key comes again.
    whole: Option<VariantBuilder>,
}

enum ColumnBuilder {
    Int64(Int64Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Boolean(BooleanBuilder),
    Variant(Box<Shredder>),
}

impl ColumnBuilder {
    fn append_null(&mut self) {
        match self {
            ColumnBuilder::Int64(b) => b.append_null(),
            ColumnBuilder::Float64(b) => b.append_null(),
            ColumnBuilder::Utf8(b) => b.append_null(),
            ColumnBuilder::Boolean(b) => b.append_null(),
            ColumnBuilder::Variant(s) => s.append_null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Int64(b) => Arc::new(b.finish()),
            ColumnBuilder::Float64(b) => Arc::new(b.finish()),
            ColumnBuilder::Utf8(b) => Arc::new(b.finish()),
            ColumnBuilder::Boolean(b) => Arc::new(b.finish()),
            ColumnBuilder::Variant(s) => Arc::new(s.finish()),
        }
    }
}

impl RowEncoder {
    fn new(columns: &[ColumnSpec], options: &EncodeOptions) -> RowEncoder {
        let policy = match &options.shred {
            ShredMode::Infer(o) => o.preset().policy(),
            _ => ShredPolicy::Faithful,
        };
        let builders = columns
            .iter()
            .map(|c| match c {
                ColumnSpec::Plain(f) => match f.data_type() {
                    DataType::Int64 => ColumnBuilder::Int64(Int64Builder::new()),
                    DataType::Float64 => ColumnBuilder::Float64(Float64Builder::new()),
                    DataType::Boolean => ColumnBuilder::Boolean(BooleanBuilder::new()),
                    _ => ColumnBuilder::Utf8(StringBuilder::new()),
                },
                ColumnSpec::Variant { schema, .. } => ColumnBuilder::Variant(Box::new(
                    Shredder::new(schema)
                        .with_policy(policy)
                        .with_inexact_numbers(options.inexact_numbers)
                        .with_duplicate_keys(options.duplicate_keys),
                )),
            })
            .collect();
        RowEncoder {
            columns: columns.to_vec(),
            builders,
            split: !options.variant_fields.is_empty(),
            seen: vec![false; columns.len()],
            parser: JsonParser::new().with_inexact_numbers(options.inexact_numbers),
            whole: (options.duplicate_keys == DuplicateKeys::KeepLast)
                .then(|| VariantBuilder::new().with_duplicate_keys(DuplicateKeys::KeepLast)),
        }
    }

    /// Encodes every line; a bad line (when skipped) makes the batch start
    /// over without it, since a half-written row cannot be taken back out
    /// of the column builders.
    fn encode_batch(&mut self, lines: &Lines, tallies: &mut LineTallies) -> Result<Vec<ArrayRef>> {
        let mut skipped: Vec<u64> = Vec::new();
        'batch: loop {
            // Counted per attempt: lines before a skipped one are encoded again.
            let (mut inexact, mut first_inexact) = (0, None);
            for (line, text) in lines.iter() {
                if skipped.contains(&line.number) {
                    continue;
                }
                match self.encode_line(text) {
                    Ok(0) => {}
                    Ok(n) => {
                        inexact += u64::from(n);
                        first_inexact = first_inexact.or(Some(line.number));
                    }
                    Err(e) => {
                        tallies.record(line, text, e)?;
                        skipped.push(line.number);
                        self.finish();
                        continue 'batch;
                    }
                }
            }
            tallies.add_inexact(inexact, first_inexact);
            return Ok(self.finish());
        }
    }

    /// Encodes one line; returns how many of its numbers were stored as
    /// inexact doubles.
    fn encode_line(&mut self, text: &[u8]) -> Result<u32> {
        if !self.split {
            let ColumnBuilder::Variant(shredder) = &mut self.builders[0] else {
                unreachable!("whole lines go to one Variant column")
            };
            let before = shredder.inexact_numbers();
            shredder.append_json(text)?;
            return Ok((shredder.inexact_numbers() - before) as u32);
        }
        if let Some(builder) = &mut self.whole {
            return encode_parsed_line(
                &self.parser,
                builder,
                text,
                &self.columns,
                &mut self.builders,
                &mut self.seen,
            );
        }
        let mut reader = self.parser.reader(text);
        if reader.peek()? != Peek::Object {
            return Err(not_an_object(text, reader.position()));
        }
        self.seen.fill(false);
        let mut key = reader.first_key()?;
        while let Some(k) = key {
            let Some(i) = self.columns.iter().position(|c| column_name(c) == k) else {
                let message = not_sampled(k);
                return Err(reader.error_at(reader.position(), message));
            };
            if std::mem::replace(&mut self.seen[i], true) {
                let message = format!("duplicate key {k:?}");
                return Err(reader.error_at(reader.position(), message));
            }
            append_field(&mut self.builders[i], &mut reader, &self.columns[i])?;
            key = reader.next_key()?;
        }
        reader.finish()?;
        for (builder, seen) in self.builders.iter_mut().zip(&self.seen) {
            if !seen {
                builder.append_null();
            }
        }
        Ok(reader.inexact_count())
    }

    fn finish(&mut self) -> Vec<ArrayRef> {
        self.builders
            .iter_mut()
            .map(ColumnBuilder::finish)
            .collect()
    }
}

/// The error for a line that is not an object, at byte `at` of it.
#[cold]
fn not_an_object(text: &[u8], at: usize) -> Error {
    Error::json(
        text,
        at,
        "expected a JSON object (--variant-field splits objects into columns)",
    )
}

#[cold]
fn not_sampled(key: &str) -> String {
    format!(
        "field {key:?} was not in the sample lines that chose the columns (raise the sample size)"
    )
}

/// Encodes a line parsed whole first (keeping the last of duplicate keys):
/// each field from its Variant value.
fn encode_parsed_line(
    parser: &JsonParser,
    builder: &mut VariantBuilder,
    text: &[u8],
    columns: &[ColumnSpec],
    builders: &mut [ColumnBuilder],
    seen: &mut [bool],
) -> Result<u32> {
    builder.start_row();
    let inexact = parser.parse(text, builder)?;
    let (metadata, value) = builder.finish();
    let line = VariantRef::try_new(metadata, value)?;
    let Some(object) = line.as_object() else {
        let start = text.len() - text.trim_ascii_start().len();
        return Err(not_an_object(text, start));
    };
    seen.fill(false);
    for i in 0..object.len() {
        let name = object.field_name(i);
        let Some(c) = columns.iter().position(|c| column_name(c) == name) else {
            return Err(Error::json(text, 0, not_sampled(name)));
        };
        seen[c] = true;
        let field = object.field(i);
        let fits = match (&mut builders[c], &field) {
            (ColumnBuilder::Variant(shredder), _) => {
                // The line's metadata serves the field's value too.
                shredder.append_variant(metadata, object.field_bytes(i))?;
                true
            }
            (builder, VariantRef::Null) => {
                builder.append_null();
                true
            }
            (ColumnBuilder::Int64(b), v) => v.as_i64().map(|v| b.append_value(v)).is_some(),
            (ColumnBuilder::Float64(b), VariantRef::Double(v)) => {
                b.append_value(*v);
                true
            }
            (ColumnBuilder::Utf8(b), VariantRef::String(v)) => {
                b.append_value(v);
                true
            }
            (ColumnBuilder::Boolean(b), VariantRef::Bool(v)) => {
                b.append_value(*v);
                true
            }
            _ => false,
        };
        if !fits {
            return Err(Error::json(text, 0, not_of_column_type(&columns[c])));
        }
    }
    for (builder, seen) in builders.iter_mut().zip(seen.iter()) {
        if !seen {
            builder.append_null();
        }
    }
    Ok(inexact)
}

fn column_name(c: &ColumnSpec) -> &str {
    match c {
        ColumnSpec::Plain(f) => f.name(),
        ColumnSpec::Variant { name, .. } => name,
    }
}

/// Appends the reader's next value to an ordinary column, or fails when it
/// is of another type than the sample showed.
fn append_field(
    builder: &mut ColumnBuilder,
    r: &mut JsonReader<'_>,
    column: &ColumnSpec,
) -> Result<()> {
    if let ColumnBuilder::Variant(shredder) = builder {
        return shredder.append_json_value(r);
    }
    let at = r.position();
    let peek = r.peek()?;
    if peek == Peek::Null {
        r.literal(b"null")?;
        builder.append_null();
        return Ok(());
    }
    let ok = match (builder, peek) {
        (ColumnBuilder::Int64(b), Peek::Number) => match r.number()? {
            JsonNumber::Int(v) => {
                b.append_value(v);
                true
            }
            _ => false,
        },
        (ColumnBuilder::Float64(b), Peek::Number) => match r.number()? {
            JsonNumber::Double(v) => {
                b.append_value(v);
                true
            }
            _ => false,
        },
        (ColumnBuilder::Utf8(b), Peek::String) => {
            b.append_value(r.string()?);
            true
        }
        (ColumnBuilder::Boolean(b), Peek::True | Peek::False) => {
            let v = peek == Peek::True;
            r.literal(if v { b"true" } else { b"false" })?;
            b.append_value(v);
            true
        }
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(r.error_at(at, not_of_column_type(column)))
}

/// The error for a value that does not fit the ordinary column chosen
/// from the sample.
#[cold]
fn not_of_column_type(column: &ColumnSpec) -> String {
    let field = column.field();
    format!(
        "field {:?} is a {} column (chosen from the sample lines) but this value is not (raise the sample size, or name it with --variant-field)",
        field.name(),
        field.data_type()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_measured_on_a_bounded_part_of_wide_samples() {
        // Issue 11: 2,000 sampled rows of 5,000 keys each.
        let line = vec![b'x'; 58 * 1024];
        let mut measured = MeasuredRows::default();
        for _ in 0..2000 {
            measured.push(&line);
        }
        assert_eq!(measured.rows.len(), MEASURED_BYTES.div_ceil(line.len()));
        assert!(measured.bytes < MEASURED_BYTES + line.len());
    }
}
