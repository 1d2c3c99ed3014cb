//! Choosing the columns from the sample: an ordinary column for a field
//! with one simple kind of value, otherwise a Variant column whose layout
//! is inferred, then measured against the other preset's and against
//! leaving it unshredded by writing the sample each way in memory.

use std::sync::Arc;

use arrow::array::{Array, StructArray};
use arrow::datatypes::{DataType, Field};

use super::lines::{LineTallies, Lines};
use super::rows::not_an_object;
use super::{
    DEFAULT_COLUMN, EncodeOptions, ShredMode, bloom_filter_column, bloom_filter_path, given_layout,
};
use crate::error::Result;
use crate::infer::{InferOptions, LayoutPlan, LeafEncoding, LeafEstimate, Preset, SchemaInferrer};
use crate::json::{InexactNumbers, JsonParser, JsonReader, Peek};
use crate::parquet::{ColumnSpec, InMemoryFile, WriteOptions, encode_in_memory};
use crate::path::{PathSegment, VariantPath};
use crate::shred::{Shredder, ShreddingSchema};
use crate::variant::{
    DEFAULT_MAX_DEPTH, DuplicateKeys, Metadata, PathStep, VariantBuilder, VariantRef,
};

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
/// because that writes it smaller, from a sample of a longer input (one
/// the sample holds whole is weighed as a file, footer and all). Over
/// fewer, every layout's fixed cost per leaf (page and column headers, a
/// dictionary page) outweighs what shredding saves, so the first rows of
/// an input would never be shredded. From it, the
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
pub(super) const MEASURED_BYTES: usize = 8 << 20;

/// The sample lines layouts are measured on: those read as rows, up to
/// [`MEASURED_BYTES`] of them. A line longer than that ends them unmeasured:
/// measuring shreds and writes it once per layout, several copies of it in
/// memory at once (a 71 MB line took 622 MB), to price what one row says
/// little about.
#[derive(Default)]
struct MeasuredRows<'a> {
    rows: Vec<&'a [u8]>,
    bytes: usize,
    /// Whether a line read as a row was left out.
    cut: bool,
}

impl<'a> MeasuredRows<'a> {
    fn push(&mut self, text: &'a [u8]) {
        if self.bytes >= MEASURED_BYTES || text.len() > MEASURED_BYTES {
            self.bytes = self.bytes.max(MEASURED_BYTES);
            self.cut = true;
            return;
        }
        self.bytes += text.len();
        self.rows.push(text);
    }
}

/// The layouts that measuring chose, by column and by what the two presets
/// proposed (each layout with the encodings it priced its leaves with): a
/// dataset's files after the first take what a file before them chose on
/// the same proposals, unmeasured (writing the sample in memory for each
/// layout was a quarter of the CPU of a dataset of 20,000-row event
/// files). The proposals are inferred from each file's own sample, so data
/// whose types, fields or distinct values change is measured again; so is
/// a sample of too few values to weigh unshredding
/// ([`MIN_VALUES_TO_UNSHRED`]), whose choice is not kept. Beside them, the
/// columns measuring left unshredded since the last file's plan, to be
/// said.
#[derive(Default)]
pub(super) struct MeasuredLayouts {
    chosen: Vec<(Proposed, LayoutPlan)>,
    left_unshredded: Vec<LeftUnshredded>,
}

/// A Variant column that `auto` left unshredded because the sample written
/// so (as a file of that column alone) was smaller than with the layout it
/// inferred.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftUnshredded {
    /// The column.
    pub column: String,
    /// The sample written unshredded, in bytes: the file where
    /// [`in_row_groups`](Self::in_row_groups), else its column chunks.
    pub unshredded_bytes: u64,
    /// The same, written with the layout inferred.
    pub shredded_bytes: u64,
    /// Whether the sample was the whole input, weighed as a file, footer
    /// and all, rather than its first rows.
    pub whole_file: bool,
    /// Whether the sample was written in the file's row groups, footer
    /// and all (a whole input's, or first rows that the file's row groups
    /// cut), rather than weighed by its column chunks in one row group.
    pub in_row_groups: bool,
    /// Whether the unshredded column chunks alone were the smaller (whole
    /// values compressed better than their fields apart), as opposed to
    /// the typed columns' footer entries outweighing what they saved.
    pub smaller_columns: bool,
}

/// What the two presets proposed for a column: its name, and each layout
/// with the encodings it priced.
type Proposed = (String, [(ShreddingSchema, Vec<LeafEncoding>); 2]);

/// `plan`'s layout and the encodings of its leaves.
fn proposal(plan: &LayoutPlan) -> (ShreddingSchema, Vec<LeafEncoding>) {
    let encodings = plan.leaves.iter().map(|leaf| leaf.encoding).collect();
    (plan.schema.clone(), encodings)
}

/// Shreds the measured sample rows by a layout (on two threads at once:
/// the two candidate layouts are measured side by side).
pub(super) type ShredSample<'a> = dyn Fn(&ShreddingSchema) -> Result<StructArray> + Sync + 'a;

/// What the sample says about one top-level field (or the whole line).
pub(super) struct FieldPlan {
    name: String,
    kinds: Kinds,
    /// When the layout is inferred.
    inferrer: Option<SchemaInferrer>,
    /// With the default preset: the Spark preset's inferrer, to measure
    /// both layouts.
    alternative: Option<SchemaInferrer>,
}

impl FieldPlan {
    /// A field whose layout is inferred with `infer`, if given, the paths
    /// that `bloom_filters` read in it typed whatever they cost.
    pub(super) fn new(
        name: String,
        infer: Option<&InferOptions>,
        bloom_filters: &[String],
    ) -> FieldPlan {
        let infer = infer.map(|o| {
            let typed = o.typed_paths().iter().cloned();
            o.clone()
                .with_typed_paths(typed.chain(bloom_filter_paths(&name, bloom_filters)))
        });
        // Paths asked for typed are in our layout alone: it is not
        // measured against Spark's, and falls back to those paths typed
        // alone rather than to unshredded.
        let alternative = infer
            .as_ref()
            .filter(|o| o.preset() == Preset::Default && o.typed_paths().is_empty())
            .map(|o| SchemaInferrer::new(o.clone().with_preset(Preset::Spark)));
        FieldPlan {
            inferrer: infer.map(SchemaInferrer::new),
            name,
            kinds: Kinds::default(),
            alternative,
        }
    }

    /// Adds a sampled value.
    pub(super) fn add(&mut self, v: &VariantRef<'_>) {
        if let Some(inferrer) = &mut self.inferrer {
            inferrer.add(v);
        }
        if let Some(spark) = &mut self.alternative {
            spark.add(v);
        }
    }

    /// Adds a sampled row where the column is SQL NULL: it takes a place in
    /// the sample, as [`SchemaInferrer::add_null`] says.
    pub(super) fn add_null(&mut self) {
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
    /// wider one costs more of it) but not against shredding, unless the
    /// sample is the whole file or the file's row groups cut it (it is then
    /// written in them): a sample of a file's first rows in one row group
    /// weighs it as the file will not (the footer and page indexes that shredding
    /// adds to 1,000 seed rows, 8.4 kB, take almost all of the 8.7 kB it
    /// saves them; to 4,000 rows, an eighth of 68 kB; to a row group of 1M
    /// rows, nothing to speak of). Without inference: unshredded. With
    /// paths asked for typed (a bloom filter's), ours, measured against
    /// those paths typed alone rather than against Spark's and unshredded,
    /// which may leave them in `value`.
    ///
    /// `shred_sample` shreds the measured sample rows by a layout, as they
    /// will be written (`None`: nothing to measure, ours stays).
    ///
    /// `whole`: the measured rows are all that the file will hold. The
    /// sample written is then the file, footer and all, and unshredded is
    /// taken whenever that makes it smaller, however few its values: 500
    /// seed rows, or 1,911 emoji descriptions whose 154 leaves' footer
    /// entries outweigh what their columns save.
    ///
    /// What measuring chose is kept in `measured`, and taken again without
    /// measuring where the two presets propose the same layouts as then.
    pub(super) fn layout(
        &self,
        write: &WriteOptions,
        shred_sample: Option<&ShredSample<'_>>,
        whole: bool,
        measured: &mut MeasuredLayouts,
    ) -> Result<LayoutPlan> {
        let Some(inferrer) = &self.inferrer else {
            return Ok(LayoutPlan::from(ShreddingSchema::Variant));
        };
        let ours = inferrer.plan();
        let Some(shred_sample) = shred_sample else {
            return Ok(ours);
        };
        let typed_paths = inferrer.options().typed_paths();
        let theirs = match &self.alternative {
            // Ours types one of the keys equal but for case; Spark's types
            // them all, which DuckDB reads wrong (see `infer`): then ours
            // is measured against unshredded alone.
            Some(spark) => match spark.plan() {
                theirs if theirs.schema.has_fields_equal_but_for_case() => ours.clone(),
                theirs => theirs,
            },
            // Paths asked for typed: against those paths typed alone.
            None if !typed_paths.is_empty() && inferrer.options().preset() == Preset::Default => {
                ours.clone()
            }
            None => return Ok(ours),
        };
        let segments: Vec<&[PathSegment]> = typed_paths.iter().map(|p| p.segments()).collect();
        let floor = typed_alone(&ours.schema, &segments);
        let proposed = (self.name.clone(), [proposal(&ours), proposal(&theirs)]);
        if let Some((_, chosen)) = measured.chosen.iter().find(|(p, _)| *p == proposed) {
            return Ok(chosen.clone());
        }
        let (chosen, kept, left) =
            self.measured(ours, theirs, floor, write, shred_sample, whole)?;
        if kept {
            measured.chosen.push((proposed, chosen.clone()));
        }
        measured.left_unshredded.extend(left);
        Ok(chosen)
    }

    /// [`layout`](Self::layout)'s choice between `ours` and `theirs` (and
    /// `floor`: unshredded, or the paths asked for typed alone), measured
    /// on the sample, whether it may be kept for other samples (not when
    /// too few values were measured to weigh the floor), and the sizes
    /// that left the column unshredded, if they did.
    fn measured(
        &self,
        ours: LayoutPlan,
        theirs: LayoutPlan,
        floor: ShreddingSchema,
        write: &WriteOptions,
        shred_sample: &ShredSample<'_>,
        whole: bool,
    ) -> Result<(LayoutPlan, bool, Option<LeftUnshredded>)> {
        let in_row_groups = |rows: usize| whole || write.row_group_rows < rows;
        let write_file = |plan: &LayoutPlan, sample: StructArray| -> Result<InMemoryFile> {
            let column = ColumnSpec::Variant {
                name: self.name.clone(),
                schema: plan.schema.clone(),
            };
            // A sample of the file's first rows in one row group where
            // the file's hold more: the leaves' fixed costs then count
            // once, as in a row group larger than a sample, and the layout
            // is the one `infer` gives without a row group size. A whole
            // file's sample, or one that the file's row groups cut, is
            // written in those row groups, each paying those costs and
            // its footer entries again.
            let options = WriteOptions {
                row_group_rows: if in_row_groups(sample.len()) {
                    write.row_group_rows
                } else {
                    usize::MAX
                },
                leaf_encodings: self.leaf_encodings(plan),
                ..write.clone()
            };
            encode_in_memory(&[column], vec![Arc::new(sample)], &options)
        };
        let write_sample = |plan: &LayoutPlan| write_file(plan, shred_sample(&plan.schema)?);
        let clearly_smaller = |a: u64, b: u64| (a as f64) < CLEARLY_SMALLER * b as f64;
        let (chosen, written) = if theirs.schema == ours.schema {
            (ours, None)
        } else {
            // Side by side: on small inputs, which the sample holds whole,
            // measuring is a third of the encode or more (`vshred encode`
            // of the 250 countries 87 -> 57 ms, of 329 webhooks 147 ->
            // 112 ms, of 250 country outlines 520 -> 435 ms).
            let (ours_file, theirs_file) = std::thread::scope(|scope| {
                let theirs_file = crate::threads::spawn_scoped(scope, || write_sample(&theirs));
                let ours_file = write_sample(&ours);
                let theirs_file = theirs_file
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (ours_file, theirs_file)
            });
            let (ours_file, theirs_file) = (ours_file?, theirs_file?);
            if clearly_smaller(theirs_file.bytes, ours_file.bytes) {
                (theirs, Some(theirs_file))
            } else {
                (ours, Some(ours_file))
            }
        };
        if chosen.schema == floor {
            return Ok((chosen, true, None));
        }
        let unshredded = shred_sample(&floor)?;
        let values = unshredded.len() - unshredded.null_count();
        let grouped = in_row_groups(unshredded.len());
        if !whole && values < MIN_VALUES_TO_UNSHRED {
            let chosen = match written {
                Some(file) => self.settled(chosen, &file),
                None => chosen,
            };
            return Ok((chosen, false, None));
        }
        let chosen_file = match written {
            Some(file) => file,
            None => write_sample(&chosen)?,
        };
        let unshredded_plan = LayoutPlan::from(floor);
        let unshredded_file = write_file(&unshredded_plan, unshredded)?;
        let (unshredded, shredded) = match grouped {
            true => (unshredded_file.bytes, chosen_file.bytes),
            false => (unshredded_file.column_bytes, chosen_file.column_bytes),
        };
        let unshred = match whole {
            true => unshredded < shredded,
            false => {
                clearly_smaller(unshredded, shredded)
                    && shredded - unshredded >= MIN_SAVING_PER_VALUE * values as u64
            }
        };
        if !unshred {
            return Ok((self.settled(chosen, &chosen_file), true, None));
        }
        // The floor of paths asked for typed is shredded still.
        let left = (unshredded_plan.schema == ShreddingSchema::Variant).then(|| LeftUnshredded {
            column: self.name.clone(),
            unshredded_bytes: unshredded,
            shredded_bytes: shredded,
            whole_file: whole,
            in_row_groups: grouped,
            smaller_columns: unshredded_file.column_bytes < chosen_file.column_bytes,
        });
        Ok((unshredded_plan, true, left))
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
    pub(super) fn priced_leaves(&self, plan: &LayoutPlan) -> Vec<LeafEstimate> {
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
    /// this field. They are shredded from their text, as [`encode`](super::encode) will
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
        whole: bool,
        options: &EncodeOptions,
        measured: &mut MeasuredLayouts,
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
                    shredder.append_json_text(text)?;
                }
            }
            Ok(shredder.finish())
        };
        let measurable = !(rows.is_empty() || split && keep_last);
        self.layout(
            &options.write,
            measurable.then_some(&shred_sample as &ShredSample<'_>),
            whole,
            measured,
        )
    }
}

/// Shreds field `name` of the JSON object `text` (a sample line that
/// parsed), or a null row if it has none, as [`RowEncoder`](super::rows::RowEncoder) does.
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
fn record_key_order(
    text: &[u8],
    fields: &mut Vec<FieldPlan>,
    field_plan: &dyn Fn(String) -> FieldPlan,
) {
    // Skipping values classifies no number.
    let mut reader = JsonReader::new(text, InexactNumbers::default());
    if reader.peek().ok() != Some(Peek::Object) {
        return;
    }
    let mut key = reader.first_key().ok().flatten().map(str::to_owned);
    while let Some(k) = key {
        if !fields.iter().any(|f| f.name == k) {
            fields.push(field_plan(k));
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
pub(super) fn leaf_encodings(priced: &[LeafEstimate]) -> Vec<(Vec<String>, LeafEncoding)> {
    priced
        .iter()
        .map(|leaf| (leaf.path.clone(), leaf.encoding))
        .collect()
}

/// The columns chosen from the sample.
pub(super) struct Plan {
    pub(super) columns: Vec<ColumnSpec>,
    /// How inference priced the typed leaves of the layouts it chose, by
    /// their paths in the file.
    pub(super) priced: Vec<LeafEstimate>,
    /// The named Variant fields that no sampled line has.
    pub(super) unsampled: Vec<String>,
    /// The fields of a layout given that no sampled line has
    /// ([`layout_fields_unsampled`]).
    pub(super) unsampled_layout_fields: Vec<String>,
    /// Numbers of the sample that no decimal holds, read as doubles, and
    /// the line of the first: for `infer`, which reads the sample alone
    /// (an encode counts them as it writes each line).
    pub(super) inexact: (u64, Option<u64>),
    /// The Variant columns measuring left unshredded, smaller so.
    pub(super) left_unshredded: Vec<LeftUnshredded>,
}

/// The paths of Variant column `column` that `bloom_filters` read (`$.a`
/// in any Variant column, `column.a` in that one), which inference types
/// whatever they cost. Paths that do not parse are left to the error that
/// the bloom filter's leaf gives.
/// `schema` with only the fields on `paths` typed (each with its layout
/// there) and the objects above them: what `auto` may fall back to when
/// paths are asked for typed, as it falls back to unshredded otherwise.
fn typed_alone(schema: &ShreddingSchema, paths: &[&[PathSegment]]) -> ShreddingSchema {
    if paths.iter().any(|p| p.is_empty()) {
        return schema.clone();
    }
    let ShreddingSchema::Object(fields) = schema else {
        return ShreddingSchema::Variant;
    };
    let kept: Vec<_> = fields
        .iter()
        .filter_map(|(name, field)| {
            let below: Vec<&[PathSegment]> = paths
                .iter()
                .filter_map(|p| match p.split_first() {
                    Some((PathSegment::Field(f), rest)) if f == name => Some(rest),
                    _ => None,
                })
                .collect();
            if below.is_empty() {
                return None;
            }
            match typed_alone(field, &below) {
                ShreddingSchema::Variant => None,
                typed => Some((name.clone(), typed)),
            }
        })
        .collect();
    match kept.is_empty() {
        true => ShreddingSchema::Variant,
        false => ShreddingSchema::Object(kept),
    }
}

fn bloom_filter_paths(column: &str, bloom_filters: &[String]) -> Vec<VariantPath> {
    bloom_filters
        .iter()
        .filter_map(|path| match bloom_filter_column(path) {
            (Some(named), rest) if named != column || rest.is_empty() => None,
            (_, rest) => bloom_filter_path(rest).ok(),
        })
        .collect()
}

/// Looks at the sample and chooses every column; `whole`: the sample is
/// all the file will hold.
pub(super) fn plan_columns(
    lines: &Lines,
    whole: bool,
    options: &EncodeOptions,
    tallies: &mut LineTallies,
    layouts: &mut MeasuredLayouts,
) -> Result<Plan> {
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
    let field_plan = |name: String| FieldPlan::new(name, infer, &options.bloom_filters);
    if !split {
        fields.push(field_plan(DEFAULT_COLUMN.into()));
    }
    let mut inexact = (0, None);
    for (line, text) in lines.iter() {
        builder.reset();
        match parser.parse(text, &mut builder) {
            Ok(0) => {}
            Ok(n) => inexact = (inexact.0 + u64::from(n), inexact.1.or(Some(line.number))),
            Err(e) => {
                tallies.record_sample(line, text, e)?;
                continue;
            }
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
        record_key_order(text, &mut fields, &field_plan);
        for (name, value) in object.iter() {
            let i = match fields.iter().position(|f| f.name == name) {
                Some(i) => i,
                None => {
                    fields.push(field_plan(name.to_string()));
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
            fields.push(field_plan(name.clone()));
            unsampled.push(name.clone());
        }
    }
    // Each field's ordinary column type; none for a Variant column.
    let plain_types: Vec<_> = fields
        .iter()
        .map(|f| {
            let forced_variant = !split || options.variant_fields.contains(&f.name);
            f.kinds.plain_type().filter(|_| !forced_variant)
        })
        .collect();
    let variant_names: Vec<String> = fields
        .iter()
        .zip(&plain_types)
        .filter(|(_, plain)| plain.is_none())
        .map(|(f, _)| f.name.clone())
        .collect();
    let variant_columns: Vec<&str> = variant_names.iter().map(String::as_str).collect();
    let mut columns = Vec::with_capacity(fields.len());
    let mut priced = Vec::new();
    for (field, plain) in fields.into_iter().zip(plain_types) {
        if let Some(t) = plain {
            columns.push(ColumnSpec::Plain(Field::new(field.name, t, true)));
            continue;
        }
        let schema = match &options.shred {
            ShredMode::Infer(_) => {
                let whole = whole && !measured.cut;
                let plan = field.layout_of_lines(&measured.rows, split, whole, options, layouts)?;
                priced.extend(field.priced_leaves(&plan));
                plan.schema
            }
            ShredMode::None => ShreddingSchema::Variant,
            ShredMode::Schema(s) => given_layout(s, &field.name, &variant_columns),
        };
        columns.push(ColumnSpec::Variant {
            schema,
            name: field.name,
        });
    }
    let unsampled_layout_fields = match &options.shred {
        ShredMode::Schema(_) => layout_fields_unsampled(lines, &columns, split, options),
        _ => Vec::new(),
    };
    Ok(Plan {
        columns,
        priced,
        unsampled,
        unsampled_layout_fields,
        inexact,
        left_unshredded: std::mem::take(&mut layouts.left_unshredded),
    })
}

/// The fields of the given layouts (through objects, not arrays' elements)
/// that no sampled line has, as `COLUMN.path` (`v.usr.id`): a name
/// mistyped in `--shred`, whose typed column would stay null while the
/// values it meant went on in `value`. Reads the sample again, only for a
/// layout given.
fn layout_fields_unsampled(
    lines: &Lines,
    columns: &[ColumnSpec],
    split: bool,
    options: &EncodeOptions,
) -> Vec<String> {
    // Each field of a layout: its column, its path in the column, and
    // the steps to it from a line's root (through the column's field,
    // where a line's fields are columns).
    let mut fields: Vec<(&str, VariantPath, Vec<PathStep>)> = Vec::new();
    fn walk<'s>(
        column: &'s str,
        schema: &ShreddingSchema,
        path: &VariantPath,
        out: &mut Vec<(&'s str, VariantPath, Vec<PathStep>)>,
        split: bool,
    ) {
        if let ShreddingSchema::Object(by_name) = schema {
            for (name, field) in by_name {
                let path = path.join(PathSegment::Field(name.clone()));
                let column_step = split.then(|| PathStep::Name(column.to_string()));
                let steps = column_step
                    .into_iter()
                    .chain(path.segments().iter().map(PathStep::by_name))
                    .collect();
                out.push((column, path.clone(), steps));
                walk(column, field, &path, out, split);
            }
        }
    }
    for column in columns {
        if let ColumnSpec::Variant { name, schema } = column {
            walk(name, schema, &VariantPath::root(), &mut fields, split);
        }
    }
    // A name written nowhere in the sample's text is in no line, where no
    // `\u` escape could spell it otherwise and it holds no character that
    // another escape spells: its fields need no line parsed (a misspelt
    // name, the case warned about, would have every line parsed again).
    let literal = memchr::memmem::find(&lines.text, b"\\u").is_none();
    let written = |segment: &PathSegment| match segment {
        PathSegment::Field(name) => {
            !literal
                || name.is_empty()
                || name
                    .chars()
                    .any(|c| matches!(c, '"' | '\\' | '/') || c < ' ')
                || memchr::memmem::find(&lines.text, name.as_bytes()).is_some()
        }
        PathSegment::Index(_) => true,
    };
    // Each field still unseen, and those of them a line may have.
    let mut unseen = vec![true; fields.len()];
    let mut sought: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].1.segments().iter().all(written))
        .collect();
    let parser = JsonParser::new().with_inexact_numbers(InexactNumbers::Double);
    let mut builder = VariantBuilder::new().with_duplicate_keys(options.duplicate_keys);
    for (_, text) in lines.iter() {
        if sought.is_empty() {
            break;
        }
        builder.reset();
        if parser.parse(text, &mut builder).is_err() {
            continue;
        }
        let (m, v) = builder.finish();
        let Ok(metadata) = Metadata::try_new(m) else {
            continue;
        };
        sought.retain(|&i| {
            let found = VariantRef::try_at_path(metadata, v, &fields[i].2, DEFAULT_MAX_DEPTH);
            unseen[i] = !matches!(found, Ok(Some(_)));
            unseen[i]
        });
    }
    let absent: Vec<&(&str, VariantPath, Vec<PathStep>)> = fields
        .iter()
        .zip(&unseen)
        .filter_map(|(field, &unseen)| unseen.then_some(field))
        .collect();
    // A field under one no line has goes unsaid; each as a path prints
    // (`$.a.b`, `$['c.d']`), its column for the `$`.
    absent
        .iter()
        .filter(|(column, path, _)| {
            !absent.iter().any(|(c, p, _)| {
                c == column
                    && p.segments().len() < path.segments().len()
                    && path.segments().starts_with(p.segments())
            })
        })
        .map(|(column, path, _)| format!("{column}{}", &path.to_string()[1..]))
        .collect()
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
