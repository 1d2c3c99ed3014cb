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
//!
//! Inside, one module a step: `lines` reads JSON Lines a batch at a time
//! into one buffer and tallies bad ones; `plan` chooses the columns from
//! the sample (inferring and measuring layouts); `rows` shreds a batch of
//! lines into column arrays; `pipeline` runs reading, shredding and writing
//! on their threads.

use std::io::BufRead;

use crate::error::{Error, ErrorKind, Result};
use crate::infer::{InferOptions, Preset};
use crate::json::InexactNumbers;
use crate::output::Output;
use crate::parquet::{ColumnSpec, ParquetWriter, WriteOptions, WriteSummary, open_output};
use crate::shred::ShreddingSchema;
use crate::variant::DuplicateKeys;
use lines::{LineTallies, Lines, Source};
use pipeline::{FileLimit, every_line_bad, write_lines};
pub use plan::LeftUnshredded;
use plan::{MeasuredLayouts, leaf_encodings, plan_columns};
use rows::column_name;

mod batches;
mod costs;
pub mod dataset;
mod lines;
mod pipeline;
mod plan;
mod records;
mod rows;
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
    /// This layout: every Variant column's, or, with several, a layout by
    /// name as `infer` writes it (an object whose keys are all their
    /// names) gives each its own entry.
    Schema(ShreddingSchema),
}

/// The layout `schema` gives Variant column `column`, one of
/// `variant_columns`: with several, a layout by name, as `infer` writes it
/// (an object whose keys are all among the columns' names), gives each
/// column its entry, and one it leaves out is not shredded; otherwise
/// `schema` is every column's.
fn given_layout(
    schema: &ShreddingSchema,
    column: &str,
    variant_columns: &[&str],
) -> ShreddingSchema {
    match schema {
        ShreddingSchema::Object(by_name)
            if variant_columns.len() > 1
                && by_name
                    .iter()
                    .all(|(name, _)| variant_columns.contains(&name.as_str())) =>
        {
            by_name
                .iter()
                .find(|(name, _)| name == column)
                .map_or(ShreddingSchema::Variant, |(_, layout)| layout.clone())
        }
        _ => schema.clone(),
    }
}

impl ShredMode {
    /// The choices [`from_choice`](Self::from_choice) takes by name; any
    /// other is the path of a schema file.
    pub const PRESETS: [&str; 3] = ["auto", "spark", "none"];

    /// The shredding a user names: `auto` (our inference, with `infer`'s
    /// limits), `spark` (Spark's, likewise), `none`, a layout in the JSON
    /// form that `vshred infer` prints, or the path of a schema file
    /// holding one. A name that is neither is a usage error, with the
    /// preset it is a typo of.
    ///
    /// ```
    /// use vshred::encode::ShredMode;
    /// use vshred::infer::InferOptions;
    ///
    /// assert!(matches!(ShredMode::from_choice("none", InferOptions::default())?, ShredMode::None));
    /// let given = ShredMode::from_choice(r#"{"id": "int64"}"#, InferOptions::default())?;
    /// assert!(matches!(given, ShredMode::Schema(_)));
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
                    // Not a file: a layout given in place, in the JSON form
                    // `infer` prints (longer than a file name may be, or
                    // with a `/` in a field name), or the one type it
                    // prints for a column it leaves whole (`variant`).
                    Err(_) if file.trim_start().starts_with(['{', '[', '"']) => {
                        return Ok(ShredMode::Schema(ShreddingSchema::from_json(file)?));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        if let Ok(schema) = ShreddingSchema::parse_type_name(file) {
                            return Ok(ShredMode::Schema(schema));
                        }
                        let near = ShredMode::PRESETS
                            .iter()
                            .find(|p| strsim::damerau_levenshtein(p, file) <= 2)
                            .map(|p| format!("; did you mean {p}?"))
                            .unwrap_or_default();
                        // A name with a dot or a slash was meant as a file.
                        let what = match near.is_empty() && file.contains(['.', '/']) {
                            true => format!(
                                "{file:?}: no such schema file (nor a preset: auto, spark, none)"
                            ),
                            false => format!(
                                "{file:?} is not a preset (auto, spark, none) nor a schema file{near}"
                            ),
                        };
                        return Err(Error::new(ErrorKind::Usage, what));
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
    /// fields are split) instead of failing; but for an input that is not
    /// JSON Lines at all by its first line (a Parquet file, compressed
    /// data, one document over many lines), which still fails.
    pub skip_bad_lines: bool,
    /// The input's lines are items, each one whole JSON text (as Python's
    /// iterables give them): a first item that does not parse is a bad
    /// item, skipped as any other, not a sign of an input of another kind.
    pub items: bool,
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
            items: false,
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
    /// Fields of a layout given ([`ShredMode::Schema`]) that no sampled
    /// line has, as `COLUMN.path`: their typed columns are null there (a
    /// misspelt name?).
    pub unsampled_layout_fields: Vec<String>,
    /// The Variant columns `auto` left unshredded because the sample was
    /// smaller so than with the layout it inferred.
    pub left_unshredded: Vec<LeftUnshredded>,
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
    let output = output.into();
    let path = match &output {
        Output::Path(path) => Some(path.clone()),
        Output::Stream(_) => None,
    };
    // Opened first: an output that cannot be written fails before any work.
    let output = open_output(output)?;
    let mut source = Source::new(input);
    let mut tallies = LineTallies::of(options);
    let (sample, plan) = plan_first_sample(&mut source, options, &mut tallies)?;
    if let Some(path) = path {
        let dir = path.parent().unwrap_or(&path);
        dataset::refuse_columns_named_by_directories(dir, &plan.columns)
            .map_err(|e| e.in_file(&path))?;
    }
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
    )?
    .ok_or_else(|| every_line_bad(&tallies))?;
    Ok(EncodeReport {
        columns: plan.columns,
        lines: tallies.counts(),
        unsampled_variant_fields: plan.unsampled,
        unsampled_layout_fields: plan.unsampled_layout_fields,
        left_unshredded: plan.left_unshredded,
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
        match (
            bloom_filter_leaf(path, columns, &options.shred),
            left_out.as_deref_mut(),
        ) {
            (Ok(leaf), _) => write.bloom_filters.push(leaf),
            (Err(_), Some(left_out)) => left_out.push(path.clone()),
            (Err(e), None) => return Err(e),
        }
    }
    Ok(write)
}

/// What [`infer_columns`] chose.
#[derive(Clone, Debug)]
pub struct Inferred {
    /// The columns, with the shredding chosen for Variant columns.
    pub columns: Vec<ColumnSpec>,
    /// Names given as [`EncodeOptions::variant_fields`] that no sampled
    /// line has (misspelt, perhaps).
    pub unsampled_variant_fields: Vec<String>,
    /// As [`EncodeReport::unsampled_layout_fields`].
    pub unsampled_layout_fields: Vec<String>,
    /// Numbers of the sampled lines that no decimal holds, read as the
    /// nearest double ([`InexactNumbers::Double`](crate::json::InexactNumbers)).
    pub inexact_numbers: u64,
    /// The line of the first of them.
    pub first_inexact_line: Option<u64>,
    /// As [`EncodeReport::left_unshredded`].
    pub left_unshredded: Vec<LeftUnshredded>,
}

/// Chooses the columns from the first lines of `input`, as [`encode`] would:
/// for `vshred infer`.
pub fn infer_columns(input: &mut dyn BufRead, options: &EncodeOptions) -> Result<Inferred> {
    let mut tallies = LineTallies::of(options);
    let (_, plan) = plan_first_sample(&mut Source::new(input), options, &mut tallies)?;
    // A layout that `encode` would refuse to write is refused here too:
    // measuring layouts writes them, but the Spark preset's is not measured.
    crate::parquet::parquet_schema(&plan.columns, options.write.decimals)?;
    Ok(Inferred {
        columns: plan.columns,
        unsampled_variant_fields: plan.unsampled,
        unsampled_layout_fields: plan.unsampled_layout_fields,
        inexact_numbers: plan.inexact.0,
        first_inexact_line: plan.inexact.1,
        left_unshredded: plan.left_unshredded,
    })
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

/// The first sample of `source`, and its columns as a file of its own
/// chooses them (a dataset's writer plans each of its files, and remembers
/// the layouts it measured).
fn plan_first_sample(
    source: &mut Source<'_>,
    options: &EncodeOptions,
    tallies: &mut LineTallies,
) -> Result<(Lines, plan::Plan)> {
    let mut sample = Lines::default();
    source.fill_sample(&mut sample, sample_size(options))?;
    let whole = source.ended()?;
    let plan = plan_columns(
        &sample,
        whole,
        options,
        tallies,
        &mut MeasuredLayouts::default(),
    )?;
    Ok((sample, plan))
}

fn sample_size(options: &EncodeOptions) -> usize {
    match &options.shred {
        ShredMode::Infer(infer) => infer.sample_rows().max(options.sample_rows),
        _ => options.sample_rows,
    }
    .max(1)
}

/// The column a `--bloom-filter` path names (`None` for `$.a`: the first
/// Variant column) and the path in it (`$.a`, `.a.b`; empty for an
/// ordinary column).
fn bloom_filter_column(path: &str) -> (Option<&str>, &str) {
    if path.starts_with('$') {
        return (None, path);
    }
    let split = path.find(['.', '[']).unwrap_or(path.len());
    (Some(&path[..split]), &path[split..])
}

/// The Variant path of a `--bloom-filter` path's rest
/// ([`bloom_filter_column`]): `$.a`, or `.a.b` after a column's name, its
/// `$` implied.
fn bloom_filter_path(rest: &str) -> Result<crate::path::VariantPath> {
    match rest.starts_with('$') {
        true => crate::path::VariantPath::parse(rest),
        false => crate::path::VariantPath::parse(&format!("${rest}")),
    }
}

/// A layout as an error shows it: whole up to 300 characters, which a
/// line of a terminal or two holds; a wider one by its start and its size
/// (`vshred infer` prints it whole).
fn abbreviated(schema: &ShreddingSchema) -> String {
    const SHOWN: usize = 300;
    let text = schema.to_string();
    if text.len() <= SHOWN {
        return text;
    }
    let cut = (0..=SHOWN - 60)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}... of {} columns", &text[..cut], schema.leaf_count())
}

/// The Parquet leaf of a `--bloom-filter` path: an ordinary column, or the
/// `typed_value` of a shredded primitive field.
fn bloom_filter_leaf(path: &str, columns: &[ColumnSpec], shred: &ShredMode) -> Result<Vec<String>> {
    let fail = |why: String| Error::new(ErrorKind::Usage, format!("bloom filter {path:?}: {why}"));
    let (column, rest) = match bloom_filter_column(path) {
        (Some(column), rest) => (column, rest),
        (None, rest) => {
            let first_variant = columns.iter().find_map(|c| match c {
                ColumnSpec::Variant { name, .. } => Some(name.as_str()),
                ColumnSpec::Plain(_) => None,
            });
            (
                first_variant.ok_or_else(|| fail("there is no Variant column".into()))?,
                rest,
            )
        }
    };
    match columns.iter().find(|c| column_name(c) == column) {
        Some(ColumnSpec::Plain(_)) if rest.is_empty() => Ok(vec![column.to_string()]),
        Some(ColumnSpec::Variant { schema, .. }) => {
            let variant_path = bloom_filter_path(rest)?;
            let mut fields = Vec::new();
            let mut slot = schema;
            for segment in variant_path.segments() {
                let next = match segment {
                    crate::path::PathSegment::Field(name) => slot.field(name).map(|n| (name, n)),
                    crate::path::PathSegment::Index(_) => None,
                };
                // A filter reads one value of a row at its path.
                if matches!(slot, ShreddingSchema::Array(_)) {
                    return Err(fail(format!(
                        "it goes through an array in {column} (layout {}), and a bloom filter takes a path through objects alone",
                        abbreviated(schema)
                    )));
                }
                let Some((name, next)) = next else {
                    let why = match shred {
                        // The budget is spent in field-name order: the
                        // fields after it are left out whatever their type.
                        ShredMode::Infer(o) if schema.leaf_count() + 2 >= o.max_columns() => {
                            format!(
                                "the layout inference chose takes {} of the {} columns `--max-columns` allows, and fields past them stay in `value` (a larger --max-columns takes them)",
                                schema.leaf_count(),
                                o.max_columns()
                            )
                        }
                        ShredMode::Infer(_) => {
                            "inference (`auto`, `spark`) types such a path only where the sampled lines give it values of one type (a decimal's scale is part of its type: 1.5 and 1.25 are two)".into()
                        }
                        ShredMode::None => "`--shred none` shreds no path".into(),
                        ShredMode::Schema(_) => "the layout given does not shred it".into(),
                    };
                    return Err(fail(format!(
                        "not shredded in {column} (layout {}): {why}",
                        abbreviated(schema)
                    )));
                };
                fields.push(name.as_str());
                slot = next;
            }
            if !slot.is_typed()
                || matches!(slot, ShreddingSchema::Object(_) | ShreddingSchema::Array(_))
            {
                return Err(fail(format!(
                    "not a shredded primitive in {column} (layout {})",
                    abbreviated(schema)
                )));
            }
            Ok(crate::parquet::typed_value_path(column, &fields))
        }
        _ => Err(fail(format!("no column {column:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_layout_is_shown_by_its_start_and_its_size() {
        let narrow: ShreddingSchema = r#"{"a": "string"}"#.parse().unwrap();
        assert_eq!(abbreviated(&narrow), narrow.to_string());
        let fields = (0..400).map(|k| (format!("f{k:03}é"), ShreddingSchema::String));
        let wide = ShreddingSchema::object(fields).unwrap();
        let shown = abbreviated(&wide);
        assert!(shown.len() < 300, "{shown}");
        assert!(shown.starts_with(r#"{"f000é":"string""#), "{shown}");
        assert!(shown.ends_with("... of 801 columns"), "{shown}");
    }
}
