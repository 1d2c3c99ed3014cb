//! Reports that help choose a layout: how big each one is and how fast it
//! reads.
//!
//! [`compare_layouts`] encodes JSON Lines in every layout vshred writes
//! (unshredded; shredded by our inference and by Spark's, each with INT and
//! with FIXED_LEN_BYTE_ARRAY decimals, the latter only when a decimal
//! column makes them differ) and measures each file;
//! [`measure_files`] measures existing files, whoever wrote them. Either
//! gives a [`Report`], printed as markdown ([`Report::write_markdown`]) or
//! as a self-contained HTML page with bar charts ([`Report::write_html`],
//! or [`ReportOptions::html`]). Both functions check the options before
//! any work, so that a page that cannot be written fails in a moment, not
//! after the timings.
//!
//! Each layout also says whether it gives back the input's text: whether
//! its rows read back as JSON, as `vshred cat` prints them, row for row as
//! the first layout's (unshredded, the codec's own rendering of the input;
//! or the first file given) in [`LayoutReport::exact`]. That reading is
//! done once per file before the timings and is not timed.
//!
//! Sizes come from the file's footer. Timings are wall-clock medians of
//! [`ReportOptions::runs`] runs, with the fastest and the slowest run to
//! show how much they vary, taken round-robin over the layouts so that load
//! from the rest of the machine spreads over all of them; each read starts
//! from opening the file (the footer is parsed every time), as a query
//! would.

mod render;

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow::array::Array;

use crate::dataset::Dataset;
use crate::dataset::schema::ColumnType;
use crate::encode::{EncodeOptions, ShredMode, encode, infer_columns};
use crate::error::{Error, ErrorKind, Result};
use crate::infer::{InferOptions, Preset};
use crate::json::InexactNumbers;
use crate::output::{Destination, Output, destination};
use crate::parquet::{
    DecimalMode, GetRequest, LeafSize, ParquetFile, ScanOptions, TypedValues, WriteOptions,
    parquet_schema,
};
use crate::path::{PathSegment, VariantPath};
use crate::shred::ShreddingSchema;
use crate::variant::DuplicateKeys;

/// Rows per batch when reading.
const BATCH_ROWS: usize = 8192;

/// What to report on.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// As [`EncodeOptions::variant_fields`]: top-level fields that become
    /// Variant columns; empty for whole lines as one column `v`.
    pub variant_fields: Vec<String>,
    /// The Variant column queried (default: the only one, or `v`).
    pub column: Option<String>,
    /// Paths to time `variant_get` on; empty for every top-level field the
    /// reference layout shreds.
    pub queries: Vec<Query>,
    /// How many times each timing is taken; the report gives the median,
    /// the fastest and the slowest.
    pub runs: usize,
    /// Keep the encoded files in this directory, made if missing (else a
    /// temporary one); [`measure_files`] encodes nothing and refuses it.
    pub keep_dir: Option<PathBuf>,
    /// Also write the report as an HTML page ([`Report::write_html`]) to
    /// this file, whole or not at all.
    pub html: Option<PathBuf>,
    /// As [`EncodeOptions::inexact_numbers`].
    pub inexact_numbers: InexactNumbers,
    /// As [`EncodeOptions::duplicate_keys`].
    pub duplicate_keys: DuplicateKeys,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            variant_fields: Vec::new(),
            column: None,
            queries: Vec::new(),
            runs: 5,
            keep_dir: None,
            html: None,
            inexact_numbers: InexactNumbers::default(),
            duplicate_keys: DuplicateKeys::default(),
        }
    }
}

impl ReportOptions {
    /// Checks the options before any work, so that a mistake fails at once
    /// rather than after every layout is encoded and timed: at least one
    /// run, a page that can be written, a directory to keep files in.
    fn check(&self) -> Result<()> {
        if self.runs == 0 {
            return Err(Error::new(
                ErrorKind::Usage,
                "runs is 0: each timing needs at least one run",
            ));
        }
        if let Some(page) = &self.html {
            // A file there that is not a page (the input, named as the
            // page by mistake) is not replaced, as `encode` replaces no
            // file but Parquet.
            if let Destination::Replace(target) = destination(page)?
                && crate::parquet::magic_of(&target)
                    .is_some_and(|m| m.first().is_some_and(|&b| b != b'<'))
            {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "is not an HTML page, and writing the page would replace it (remove it first, or choose another name)",
                )
                .in_file(page));
            }
            // The page is written whole at the end: opening it now (a
            // temporary file beside it, removed when dropped) shows that
            // it can be written.
            drop(Output::from(page).open()?);
        }
        // Last, so that a check that fails leaves nothing behind.
        if let Some(dir) = &self.keep_dir {
            // Another run's layouts, left beside this one's, would read as
            // one dataset with them.
            if dir.is_dir()
                && let Some(held) = crate::dataset::parquet_files_beneath(dir)?.first()
            {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "holds Parquet files already (such as {}), which the layouts kept would mix with: give an empty or new directory",
                        held.display()
                    ),
                )
                .in_file(dir));
            }
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    }
}

/// A `variant_get` to time: a path, and the type to get it as.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// The path inside the Variant column.
    pub path: VariantPath,
    /// The result type; `None` for the type the reference layout shreds
    /// the path to (every layout answers the same question), or `variant`
    /// where it is not shredded to a primitive.
    pub as_type: Option<ShreddingSchema>,
}

impl std::str::FromStr for Query {
    type Err = Error;

    /// `$.a.b`, or `$.a.b as int64`.
    fn from_str(text: &str) -> Result<Query> {
        // A quoted key may hold " as " (`$['a as b']`): the text is a path
        // and a type only if what comes before it is a path.
        if let Some((path, type_name)) = text.rsplit_once(" as ")
            && let Ok(path) = path.trim().parse()
        {
            return Ok(Query {
                path,
                as_type: Some(ShreddingSchema::parse_type_name(type_name.trim())?),
            });
        }
        Ok(Query {
            path: text.trim().parse()?,
            as_type: None,
        })
    }
}

/// One way of laying out the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `metadata` and `value` only.
    Unshredded,
    /// Shredded with the schema a preset infers, decimals stored as chosen.
    Shredded(Preset, DecimalMode),
}

impl Layout {
    /// The layouts [`compare_layouts`] writes, in report order (the
    /// `Flba` ones only when they differ from the `Int` ones).
    pub const ENCODED: [Layout; 5] = [
        Layout::Unshredded,
        Layout::Shredded(Preset::Default, DecimalMode::Int),
        Layout::Shredded(Preset::Default, DecimalMode::Flba),
        Layout::Shredded(Preset::Spark, DecimalMode::Int),
        Layout::Shredded(Preset::Spark, DecimalMode::Flba),
    ];

    /// A short name: `unshredded`, `auto, int decimals`, ...
    pub fn name(self) -> String {
        match self {
            Layout::Unshredded => "unshredded".into(),
            Layout::Shredded(preset, decimals) => format!(
                "{}, {} decimals",
                match preset {
                    Preset::Default => "auto",
                    Preset::Spark => "spark",
                },
                match decimals {
                    DecimalMode::Int => "int",
                    DecimalMode::Flba => "flba",
                }
            ),
        }
    }

    fn file_name(self) -> String {
        self.name().replace(", ", "-").replace(' ', "-") + ".parquet"
    }

    fn encode_options(self, report: &ReportOptions) -> EncodeOptions {
        let (shred, decimals) = match self {
            Layout::Shredded(preset, decimals) => {
                (ShredMode::Infer(InferOptions::new(preset)), decimals)
            }
            Layout::Unshredded => (ShredMode::None, DecimalMode::Int),
        };
        EncodeOptions {
            variant_fields: report.variant_fields.clone(),
            inexact_numbers: report.inexact_numbers,
            duplicate_keys: report.duplicate_keys,
            shred,
            write: WriteOptions {
                decimals,
                ..WriteOptions::default()
            },
            ..EncodeOptions::default()
        }
    }
}

/// A report over one or more layouts of the same data.
#[derive(Clone, Debug)]
pub struct Report {
    /// What was measured: the input's or the file's name.
    pub source: String,
    /// Rows in each file.
    pub rows: u64,
    /// The Variant column queried.
    pub column: String,
    /// Runs behind each [`Timing`].
    pub runs: usize,
    /// The queries timed, with the type each was read as.
    pub queries: Vec<(VariantPath, ShreddingSchema)>,
    /// One entry per layout.
    pub layouts: Vec<LayoutReport>,
    /// The entry the others are compared with, and whose shredding gives
    /// the queries their types.
    pub reference: usize,
    /// What the report left out and why, one sentence each (markdown).
    pub notes: Vec<String>,
}

/// The figures for one layout.
#[derive(Clone, Debug)]
pub struct LayoutReport {
    /// The layout's name, or the file's.
    pub name: String,
    /// Which layout, when the report encoded it.
    pub layout: Option<Layout>,
    /// Where the file is (gone after the report unless kept).
    pub file: PathBuf,
    /// Size of the whole file.
    pub file_bytes: u64,
    /// Its rows (the first layout's are [`Report::rows`]).
    pub rows: u64,
    /// The leaves of the Variant columns, largest (compressed) first.
    pub leaves: Vec<LeafSize>,
    /// Whether the rows read back as the first layout's do.
    pub exact: Exactness,
    /// Time to encode the input into this layout, when it was.
    pub encode: Option<Timing>,
    /// Time to read every row back as JSON text.
    pub reconstruct: Timing,
    /// Time of each query, in [`Report::queries`] order.
    pub query_times: Vec<Timing>,
    /// Non-null values each query returned.
    pub query_values: Vec<u64>,
}

/// How a layout's rows, read back as JSON text, compare with the first
/// layout's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exactness {
    /// Every row reads back as the same text.
    Same,
    /// Some rows read back differently, or one of the two lacks them.
    Differs {
        /// How many rows differ (a row one of the two lacks counts).
        rows: u64,
        /// How many rows it has.
        of: u64,
        /// The first of them, from 0.
        first: u64,
        /// Its text in the first layout (empty if that has no such row).
        expected: String,
        /// Its text in this one (empty if this has no such row).
        found: String,
    },
}

/// The wall-clock times of one measurement over [`Report::runs`] runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// The middle run (of an even number, the slower of the middle two).
    pub median: Duration,
    /// The fastest run.
    pub min: Duration,
    /// The slowest run.
    pub max: Duration,
}

impl Timing {
    /// The figures of the runs' times, given in any order.
    fn of(mut times: Vec<Duration>) -> Timing {
        times.sort_unstable();
        Timing {
            median: times.get(times.len() / 2).copied().unwrap_or_default(),
            min: times.first().copied().unwrap_or_default(),
            max: times.last().copied().unwrap_or_default(),
        }
    }
}

impl LayoutReport {
    /// Compressed bytes of the Variant columns.
    pub fn variant_bytes(&self) -> u64 {
        self.leaves.iter().map(|l| l.compressed).sum()
    }

    /// Non-null values stored in `typed_value` leaves and in `value` leaves
    /// of the Variant columns (a residual counts once, however much it
    /// holds); `None` when the file's statistics leave out null counts.
    pub fn typed_and_residual_values(&self) -> Option<(u64, u64)> {
        TypedValues::of_leaves(&self.leaves).map(|v| (v.typed, v.residual))
    }

    /// The share of values that landed in `typed_value`.
    pub fn typed_share(&self) -> Option<f64> {
        TypedValues::of_leaves(&self.leaves).map(|v| v.share())
    }
}

/// Encodes JSON Lines in every layout of [`Layout::ENCODED`] and measures
/// each file. `source` names the input in the report. The `Flba` layouts
/// are left out, with a note that says so, when the columns our inference
/// and Spark's choose have the same Parquet schema with either decimal
/// storage: they would be the `Int` files again.
pub fn compare_layouts(json_lines: &[u8], source: &str, options: &ReportOptions) -> Result<Report> {
    options.check()?;
    // Every size and ratio of no rows would be 0.
    if json_lines.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::new(
            ErrorKind::Usage,
            "nothing to report on: the input holds no JSON lines",
        )
        .in_file(Path::new(source)));
    }
    let (layouts, notes) = layouts_worth_writing(json_lines, options)?;
    let temp;
    let dir = match &options.keep_dir {
        Some(dir) => dir.as_path(),
        None => {
            temp =
                tempfile::tempdir().map_err(|e| Error::io(Path::new("temporary directory"), e))?;
            temp.path()
        }
    };
    let runs = options.runs;
    let files: Vec<PathBuf> = layouts.iter().map(|l| dir.join(l.file_name())).collect();
    let mut encode_times = vec![Vec::with_capacity(runs); layouts.len()];
    for _ in 0..runs {
        for ((layout, file), times) in layouts.iter().zip(&files).zip(&mut encode_times) {
            let start = Instant::now();
            encode(
                &mut &json_lines[..],
                file,
                &layout.encode_options(options),
                &mut |_| {},
            )?;
            times.push(start.elapsed());
        }
    }
    let entries: Vec<(String, Option<Layout>)> =
        layouts.iter().map(|l| (l.name(), Some(*l))).collect();
    // Our default inference is the reference: its types are the ones every
    // layout is asked for.
    let datasets: Vec<Dataset> = files
        .iter()
        .map(|file| Dataset::from_files(vec![file.clone()]))
        .collect();
    let mut report = measure(&entries, &files, &datasets, 1, source, options)?;
    for (layout, times) in report.layouts.iter_mut().zip(encode_times) {
        layout.encode = Some(Timing::of(times));
    }
    report.notes = notes;
    write_page(report, options)
}

/// The layouts of [`Layout::ENCODED`] that can differ on this input, and a
/// note on those left out. Decimals are the only thing [`DecimalMode`]
/// changes, so the schemas of the columns each inference chooses (as
/// `encode` chooses them, from the sample) say whether it changes anything.
fn layouts_worth_writing(
    json_lines: &[u8],
    report: &ReportOptions,
) -> Result<(Vec<Layout>, Vec<String>)> {
    for preset in [Preset::Default, Preset::Spark] {
        let options = Layout::Shredded(preset, DecimalMode::Int).encode_options(report);
        let columns = infer_columns(&mut &json_lines[..], &options)?.columns;
        if parquet_schema(&columns, DecimalMode::Int)?
            != parquet_schema(&columns, DecimalMode::Flba)?
        {
            return Ok((Layout::ENCODED.to_vec(), Vec::new()));
        }
    }
    let layouts = Layout::ENCODED
        .into_iter()
        .filter(|l| !matches!(l, Layout::Shredded(_, DecimalMode::Flba)))
        .collect();
    let note = "The `flba` layouts are left out: neither inference gives a decimal column that INT32 or INT64 would hold, so they would be the `int` files again.";
    Ok((layouts, vec![note.into()]))
}

/// Measures existing Parquet files with Variant columns, whoever wrote
/// them, side by side: the same data in different layouts, or any files
/// with a Variant column of the same name. The first is the reference.
/// Each input may be a dataset ([`Dataset::find`]): a file, a directory
/// or a glob, measured as one (sizes summed over its files, rows read in
/// its order).
pub fn measure_files(files: &[PathBuf], options: &ReportOptions) -> Result<Report> {
    if options.keep_dir.is_some() {
        return Err(Error::new(
            ErrorKind::Usage,
            "there are no encoded files to keep: Parquet files are measured as they are",
        ));
    }
    options.check()?;
    let entries: Vec<(String, Option<Layout>)> = files
        .iter()
        .map(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            (name.unwrap_or_else(|| f.display().to_string()), None)
        })
        .collect();
    let source = entries
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let datasets = files
        .iter()
        .map(|input| Dataset::find(input))
        .collect::<Result<Vec<_>>>()?;
    write_page(
        measure(&entries, files, &datasets, 0, &source, options)?,
        options,
    )
}

/// Writes the HTML page if the options ask for one; the report.
fn write_page(report: Report, options: &ReportOptions) -> Result<Report> {
    if let Some(page) = &options.html {
        report.write_html_file(page)?;
    }
    Ok(report)
}

/// The report on `datasets` (read from `files`, as `entries` name them),
/// the one at `reference` the reference.
fn measure(
    entries: &[(String, Option<Layout>)],
    files: &[PathBuf],
    datasets: &[Dataset],
    reference: usize,
    source: &str,
    options: &ReportOptions,
) -> Result<Report> {
    let reference_set = datasets
        .get(reference)
        .ok_or_else(|| Error::new(ErrorKind::Usage, "nothing to report on: no files"))?;
    let column = reference_set
        .choose_variant_column(options.column.as_deref())
        .map_err(|e| match e.file() {
            Some(_) => e,
            None => e.in_file(&files[reference]),
        })?;
    // Default queries follow the layout of the reference's first file with
    // the column, or when that is not shredded (`auto` leaves a column
    // unshredded where that writes it smaller), the first other layout
    // that is.
    let layout_of = |set: &Dataset| {
        set.files().iter().find_map(|path| {
            let file = ParquetFile::open(path).ok()?;
            let field = file.arrow_schema().field_with_name(&column).ok()?;
            ShreddingSchema::from_column_type(field.data_type())
        })
    };
    let reference_schema = layout_of(reference_set).ok_or_else(|| {
        Error::new(
            ErrorKind::Schema,
            format!("column {column} is not a Variant column"),
        )
        .in_file(&files[reference])
    })?;
    let schema = match reference_schema {
        ShreddingSchema::Variant => datasets
            .iter()
            .filter_map(layout_of)
            .find(|schema| *schema != ShreddingSchema::Variant)
            .unwrap_or(ShreddingSchema::Variant),
        shredded => shredded,
    };
    let queries = resolve_queries(&options.queries, &schema);
    let runs = options.runs;
    let mut reports = Vec::with_capacity(entries.len());
    for (((name, layout), path), dataset) in entries.iter().zip(files).zip(datasets) {
        // From the footers alone, read once for both.
        let schema = dataset.schema()?;
        let variants: Vec<&str> = schema
            .columns
            .iter()
            .filter(|c| c.column_type == ColumnType::Variant)
            .map(|c| c.name.as_str())
            .collect();
        let mut leaves: Vec<LeafSize> = schema
            .leaves
            .into_iter()
            .map(|total| total.size)
            .filter(|l| {
                l.path
                    .first()
                    .is_some_and(|c| variants.contains(&c.as_str()))
            })
            .collect();
        leaves.sort_by(|a, b| b.compressed.cmp(&a.compressed).then(a.path.cmp(&b.path)));
        let mut file_bytes = 0;
        for file in dataset.files() {
            file_bytes += std::fs::metadata(file)
                .map_err(|e| Error::io(file, e))?
                .len();
        }
        reports.push(LayoutReport {
            name: name.clone(),
            layout: *layout,
            file: path.clone(),
            file_bytes,
            rows: schema.rows,
            leaves,
            exact: Exactness::Same,
            encode: None,
            reconstruct: Timing::default(),
            query_times: Vec::new(),
            query_values: Vec::new(),
        });
    }
    let mut notes = Vec::new();
    let mut columns = Vec::with_capacity(datasets.len());
    for ((name, _), dataset) in entries.iter().zip(datasets) {
        notes.extend(columns_left_out(name, dataset)?);
        columns.push(read_columns(dataset)?);
    }
    // Untimed, and before the timings so that no run is the only one to
    // find the files out of the page cache.
    let (rows, exact) = compare_text(datasets, &columns)?;
    for (report, exact) in reports.iter_mut().zip(exact) {
        report.exact = exact;
    }
    let mut reconstruct_times = vec![Vec::with_capacity(runs); entries.len()];
    let mut query_times = vec![vec![Vec::with_capacity(runs); queries.len()]; entries.len()];
    for run in 0..runs {
        for (i, dataset) in datasets.iter().enumerate() {
            let files = dataset.files();
            let start = Instant::now();
            reconstruct(dataset, &columns[i])?;
            reconstruct_times[i].push(start.elapsed());
            for (q, (query_path, as_type)) in queries.iter().enumerate() {
                let start = Instant::now();
                let values = get(files, &column, query_path, as_type)?;
                query_times[i][q].push(start.elapsed());
                if run == 0 {
                    reports[i].query_values.push(values);
                }
            }
        }
    }
    for ((report, reconstruct), queries) in
        reports.iter_mut().zip(reconstruct_times).zip(query_times)
    {
        report.reconstruct = Timing::of(reconstruct);
        report.query_times = queries.into_iter().map(Timing::of).collect();
    }
    Ok(Report {
        source: source.to_string(),
        rows,
        column,
        runs,
        queries,
        layouts: reports,
        reference,
        notes,
    })
}

/// Each query with its type: given, or the reference layout's.
fn resolve_queries(
    queries: &[Query],
    schema: &ShreddingSchema,
) -> Vec<(VariantPath, ShreddingSchema)> {
    if queries.is_empty() {
        let ShreddingSchema::Object(fields) = schema else {
            return Vec::new();
        };
        return fields
            .iter()
            .map(|(name, field)| {
                (
                    VariantPath::new(vec![PathSegment::Field(name.clone())]),
                    primitive_or_variant(field),
                )
            })
            .collect();
    }
    queries
        .iter()
        .map(|q| {
            let as_type = q.as_type.clone().unwrap_or_else(|| {
                shredded_at(schema, q.path.segments())
                    .map(primitive_or_variant)
                    .unwrap_or(ShreddingSchema::Variant)
            });
            (q.path.clone(), as_type)
        })
        .collect()
}

/// The layout at `path` inside `schema`, as far as it is shredded.
fn shredded_at<'s>(
    schema: &'s ShreddingSchema,
    path: &[PathSegment],
) -> Option<&'s ShreddingSchema> {
    path.iter()
        .try_fold(schema, |slot, segment| match (segment, slot) {
            (PathSegment::Field(name), _) => slot.field(name),
            (PathSegment::Index(_), ShreddingSchema::Array(element)) => Some(element.as_ref()),
            _ => None,
        })
}

fn primitive_or_variant(slot: &ShreddingSchema) -> ShreddingSchema {
    match slot {
        ShreddingSchema::Object(_) | ShreddingSchema::Array(_) => ShreddingSchema::Variant,
        primitive => primitive.clone(),
    }
}

// Each timed read opens its files anew, footers included, as a command
// would.

/// Reads every row of `dataset` as JSON text, as `vshred cat`
/// does, with `columns` ([`read_columns`]: its `key=value` directories'
/// too), its files opened afresh.
fn reconstruct(dataset: &Dataset, columns: &[String]) -> Result<()> {
    let options = ScanOptions::new(BATCH_ROWS);
    Dataset::from_files(dataset.files().to_vec())
        .with_hive_columns(dataset.hive_columns().cloned())
        .json_lines(Some(columns), &options, |_| Ok(()))
}

/// Hands each row of `dataset`, read back as JSON text as `vshred cat`
/// prints it (without the newline), to `row` with its index.
fn for_each_row(
    dataset: &Dataset,
    columns: &[String],
    mut row: impl FnMut(usize, &[u8]),
) -> Result<()> {
    let mut index = 0;
    dataset.json_lines(Some(columns), &ScanOptions::new(BATCH_ROWS), |text| {
        for line in text.split_inclusive(|&b| b == b'\n') {
            row(index, line.strip_suffix(b"\n").unwrap_or(line));
            index += 1;
        }
        Ok(())
    })
}

/// Each dataset's rows as JSON text against the first one's, row for row,
/// on the columns every dataset reads (`columns`, each dataset's
/// [`read_columns`]: a file that adds an `id` beside `v`, as Spark's
/// writer may, is compared on `v`), and the first one's row count. The
/// first one's rows are kept as 64-bit hashes, 8 bytes a row however long
/// it is (a collision is negligibly likely), and read again only for the
/// text of a row that differs.
fn compare_text(datasets: &[Dataset], columns: &[Vec<String>]) -> Result<(u64, Vec<Exactness>)> {
    let hash = |line: &[u8]| {
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write(line);
        hasher.finish()
    };
    let mut shared = columns[0].clone();
    for names in &columns[1..] {
        shared.retain(|name| names.contains(name));
    }
    let mut expected = Vec::new();
    for_each_row(&datasets[0], &shared, |_, line| expected.push(hash(line)))?;
    let mut exact = vec![Exactness::Same];
    for dataset in &datasets[1..] {
        let (mut differ, mut first, mut rows) = (0, None, 0);
        for_each_row(dataset, &shared, |row, line| {
            rows = row + 1;
            if expected.get(row) != Some(&hash(line)) {
                differ += 1;
                first.get_or_insert_with(|| (row, String::from_utf8_lossy(line).into_owned()));
            }
        })?;
        if rows < expected.len() {
            differ += expected.len() - rows;
            first.get_or_insert((rows, String::new()));
        }
        exact.push(match first {
            None => Exactness::Same,
            Some((row, found)) => Exactness::Differs {
                rows: differ as u64,
                of: rows as u64,
                first: row as u64,
                expected: String::new(),
                found,
            },
        });
    }
    if exact.iter().any(|e| matches!(e, Exactness::Differs { .. })) {
        for_each_row(&datasets[0], &shared, |row, line| {
            for e in &mut exact {
                if let Exactness::Differs {
                    first, expected, ..
                } = e
                    && *first == row as u64
                {
                    *expected = String::from_utf8_lossy(line).into_owned();
                }
            }
        })?;
    }
    Ok((expected.len() as u64, exact))
}

/// The top-level columns of `dataset` that its rows are read with, in
/// order: all of them, or where its files disagree on the type of some
/// (which `cat` refuses), the others.
fn read_columns(dataset: &Dataset) -> Result<Vec<String>> {
    let columns = dataset.columns()?;
    Ok(match columns.agreed() {
        Some(agreed) => agreed.into_iter().map(String::from).collect(),
        None => columns.all.clone(),
    })
}

/// A note for each column of `dataset` (named `name`) left out of its
/// rows read because its files disagree on the column's type.
fn columns_left_out(name: &str, dataset: &Dataset) -> Result<Vec<String>> {
    let columns = dataset.columns()?;
    Ok(columns
        .all
        .iter()
        .filter_map(|column| {
            let disagreement = columns.disagreement(column)?;
            Some(format!(
                "Column `{column}` of {name} is left out of the rows read back (reconstruction, and the check that every layout reads back the same): its files disagree on its type ({disagreement})."
            ))
        })
        .collect())
}

/// Runs one `variant_get` over the dataset of `files`; the non-null values
/// it returned.
fn get(
    files: &[PathBuf],
    column: &str,
    query: &VariantPath,
    as_type: &ShreddingSchema,
) -> Result<u64> {
    let request = GetRequest {
        column: column.to_string(),
        path: query.clone(),
        as_type: as_type.clone(),
        strict: false,
        filter: None,
    };
    let mut values = 0;
    let options = ScanOptions::new(BATCH_ROWS);
    Dataset::from_files(files.to_vec()).get_with(&request, &[], &options, |result, _| {
        values += (result.len() - result.logical_null_count()) as u64;
        Ok(())
    })?;
    Ok(values)
}
