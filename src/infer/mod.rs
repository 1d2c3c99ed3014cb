//! Inference: choosing a [`ShreddingSchema`] from a sample of values.
//!
//! A [`SchemaInferrer`] takes the first [`sample_rows`](InferOptions::with_sample_rows)
//! values of a column and keeps statistics per path (how often each field
//! occurs, with which types, how many bytes its values take, value ranges,
//! the hashes of distinct values up to 4096, then a small sketch), never
//! the values themselves; memory is bounded by the sample's values and
//! the number of distinct paths, which is capped too
//! ([`with_max_tracked_paths`](InferOptions::with_max_tracked_paths)).
//! [`finish`](SchemaInferrer::finish) turns them into a schema by the rules
//! of a [`Preset`]. Shred with the preset's [`policy`](Preset::policy).
//!
//! ```
//! use vshred::infer::{InferOptions, Preset, infer_schema};
//! use vshred::json::json_to_variant;
//! use vshred::variant::VariantRef;
//!
//! let rows: Vec<_> = (0..4000)
//!     .map(|i| json_to_variant(format!(r#"{{"kind": {}, "price": {}.5}}"#, i % 3, i % 1000).as_bytes()))
//!     .collect::<Result<_, _>>()?;
//! let values = rows.iter().map(|(m, v)| VariantRef::try_new(m, v)).collect::<Result<Vec<_>, _>>()?;
//!
//! let ours = infer_schema(values.iter().copied(), &InferOptions::default());
//! assert_eq!(ours.to_string(), r#"{"kind":"int32","price":"decimal(4,1)"}"#);
//! let spark = infer_schema(values.iter().copied(), &InferOptions::new(Preset::Spark));
//! assert_eq!(spark.to_string(), r#"{"kind":"int64","price":"decimal(18,1)"}"#);
//! # Ok::<(), vshred::Error>(())
//! ```
//!
//! # The `spark` preset
//!
//! Spark 4.3's `InferVariantShreddingSchema`, rule for rule, so that on the
//! same data our layout equals the one Spark writes:
//!
//! - **Sample**: the first 4096 rows of the file (SQL NULL rows count
//!   towards the 4096 but are otherwise skipped; see
//!   [`add_null`](SchemaInferrer::add_null)). Spark also stops at 64 MiB of
//!   buffered rows, which only matters for rows over 16 KiB; we count rows.
//! - **Types per value**: an integer of p ≤ 18 digits is `DECIMAL(p,0)` (so
//!   it can merge with decimals), a 19-digit one `LONG`; a decimal keeps its
//!   precision and scale (`1.50` is (3,2)); a UUID is untyped. TIME and
//!   nanosecond timestamps, which Spark cannot infer at all (its write
//!   fails), are untyped here.
//! - **Merging across rows**: null merges with anything; decimals merge to
//!   the largest scale and the most integer digits (untyped past 38 digits);
//!   a 19-digit long with an integral DECIMAL(p ≤ 18, 0) is a long, with
//!   other decimals a decimal of 19 integer digits. **Every other conflict
//!   makes the field untyped** (value only) and drops its children, even if
//!   one row in 4096 disagrees.
//! - **Frequency**: a field needs `ceil(n × 10%)` of the n sampled non-null
//!   rows ([`min_frequency`](InferOptions::with_min_frequency)). Inside
//!   arrays a field's count is its total number of occurrences over all
//!   elements, compared with the same row-based threshold. Of the fields
//!   that pass, the `min(1000, max_columns)` most frequent are kept.
//! - **No children left**: objects, arrays and all-null fields are value
//!   only (empty objects, always-null fields); an array whose elements have
//!   no typed layout is a LIST of value-only elements (`["variant"]`,
//!   e.g. arrays that are always empty).
//! - **Finalizing**: integers widen to `int64`, `DECIMAL(p, s)` to
//!   `DECIMAL(18, s)` if p ≤ 18, else `DECIMAL(38, s)`.
//! - **Budget**: [`max_columns`](InferOptions::with_max_columns) (300),
//!   spent depth-first in field-name order: each slot costs 1 for its
//!   `value`, a scalar `typed_value` 1 more; the slot that finds the budget
//!   spent is value only and every later field is dropped (it stays in the
//!   residual). Spark shares the 300 among all Variant columns of a file;
//!   here each column has its own budget.
//!
//! Shred with [`ShredPolicy::Lossless`] as Spark does: an integer in a
//! decimal column reads back as a decimal (the same number).
//!
//! # The default preset
//!
//! Spark's rules leave value on the table (one odd value untypes a field;
//! `DECIMAL(18,1)` for 4-digit numbers; a column for every field that
//! clears 10% even when it costs more than it saves) and make sparse data
//! larger. The default preset is built on four principles:
//!
//! 1. **Faithful.** A value goes to a typed column only if it reads back
//!    with the same type and JSON text ([`ShredPolicy::Faithful`]); every
//!    other value goes to `value`. So the types are *faithful type
//!    classes*: integer (any width), decimal *of one scale*, double, float,
//!    string, boolean, date, time, timestamp (UTC or not, micros or nanos),
//!    binary, UUID, object, array.
//! 2. **Majority.** A slot (a field, an array's elements, the root) is typed
//!    by its most common class, if that class has at least
//!    [`min_type_share`](InferOptions::with_min_type_share) (75%) of its
//!    non-null occurrences; the rest go to `value`. An integer field with a
//!    few strings is `int32`; an object that is sometimes an array is an
//!    object; arrays whose nesting depth varies between rows are typed
//!    level by level by the majority at each level. Why 75%: below it the
//!    field is genuinely polymorphic, readers would merge `value` on most
//!    pages, and the chosen type would flip between files.
//! 3. **Narrow.** Integers are `int32` when every sampled value fits it,
//!    else `int64` (never `int8`/`int16`: Parquet stores those as INT32
//!    anyway, so they save nothing and send more out-of-range values to
//!    `value`). Decimals are `DECIMAL(p, s)` with `s` the chosen scale and
//!    `p` the most integer digits seen plus `s`: `104.8`-style values give
//!    `decimal(4,1)`, physically INT32 (4 bytes, where Spark's
//!    `DECIMAL(18,1)` takes 8). A later value with more digits goes to
//!    `value`, correctly.
//! 4. **Pay for itself** (the cost model below). A column is created only
//!    when the bytes it removes from the residual exceed what it costs,
//!    alone or as part of shredding its object completely.
//!    Value-only columns are never created: they give readers nothing the
//!    residual does not (the values are still Variant-encoded) and save at
//!    most a field id and offset per value, 2-3 bytes that compression
//!    mostly recovers anyway, against a new column and its levels.
//!
//!    The model counts bytes before compression. `encode` checks it on the
//!    sample: it writes the sample (its first 8 MiB of JSON) with this
//!    preset's layout and with the Spark preset's, and keeps the Spark one
//!    when that is at least 5% smaller (unique ids and keys, which
//!    compress well once in a column of their own). [`infer_schema`] alone
//!    applies the model only.
//!
//! And two structural rules:
//!
//! - **Frequency**: as in Spark, a field must occur in at least
//!   [`min_frequency`](InferOptions::with_min_frequency) (10%) of the rows
//!   of its column (of the elements, inside arrays), whatever it would
//!   gain: rarer fields make mostly-null columns that readers must scan.
//! - **Maps stay in `value`.** An object path is used as a map, and gets no
//!   columns, when (a) at least 8 distinct keys were seen and at least half
//!   of them look like ids or values rather than names (digits with no
//!   letters such as `"1234"`, `"2024-05-01"`, `"1.2.0"`, a UUID, or 16+ hex
//!   digits), or (b) at least 16 distinct keys were seen and most key
//!   occurrences are of rare keys (keys in fewer than 10% of the objects),
//!   as with language codes, package names or user ids as keys, or (c) more
//!   than 1024 distinct keys were seen (from then on its fields are not
//!   looked at, and the statistics of those seen are dropped: a map of
//!   thousands of keys costs no more than 1024 paths, and only until it
//!   shows). Columns for such keys would be a random slice of an open key
//!   set: mostly null, different in every file.
//!   A record with a few rare optional fields is not a map: most of its key
//!   occurrences are of its common fields.
//!
//! # The cost model
//!
//! For each candidate slot, over the sample, in bytes as our writer stores
//! them (the parquet crate's encodings, chosen per leaf by this model and
//! followed by the writer, [`LeafEncoding`]; RLE/bit-packed levels),
//! before general-purpose compression:
//!
//! - **Saved** from the enclosing residual: for every occurrence, the
//!   field id and offset (their actual widths in the sampled objects; an
//!   element's offset in arrays); for every value that goes to
//!   `typed_value`, its Variant encoding (`104.8` as decimal4: 6 bytes);
//!   for an object whose fields all shred, its header (3 bytes); for an
//!   array, its header. At the root, a row that is fully typed also leaves
//!   the row's `value` null, saving its 4-byte length prefix.
//! - **Typed values**: dictionary indices of `log2(distinct)` bits per
//!   value, except in runs (a group of 8 equal values starts one, as the
//!   RLE/bit-packing hybrid writes it: a count and one index), plus the
//!   dictionary (each distinct value at its Parquet width:
//!   int32, date and `decimal(p ≤ 9)` 4 bytes, int64, double and
//!   timestamps 8, strings and binaries 4 + length); or, when the values
//!   are mostly distinct (90%) or the dictionary passes 64 KiB, no
//!   dictionary: deltas where smaller (`DELTA_BINARY_PACKED` integers, from
//!   the spread of the sampled deltas per miniblock of 32;
//!   `DELTA_BYTE_ARRAY` strings, from the prefixes each shares with the
//!   one before), else PLAIN; booleans 1 bit. Distinct values are counted
//!   exactly by their hashes per path and type class, up to 4096 (past
//!   that, a 1024-register HyperLogLog sketch, about 3% error).
//!   `vshred infer --costs` sets each estimate beside the bytes the
//!   sample's leaf takes when written.
//! - **The group's `value` column**: the values left there (other
//!   classes, nulls, objects that keep unshredded fields, counted as at
//!   most one object per unshredded field occurrence) move there with
//!   their bytes, and cost dictionary indices and a length prefix per
//!   distinct value (nulls are all alike; objects are taken as distinct).
//! - **Levels**, for **every entry of the column, including rows where the
//!   field is missing**: each leaf's definition levels (and repetition
//!   levels under a LIST) are RLE/bit-packed in groups of 8; with presence
//!   p a group is uniform with probability `u = p^8 + (1-p)^8`, mixed
//!   groups cost their bit width and each run of uniform groups about 3
//!   bytes: `entries / 8 × (bits × (1 - u) + 3 × u × (1 - u))`. A field
//!   present in 12% of rows thus costs about 0.25 bytes a row per leaf,
//!   where it saves only 12% of its residual bytes. Scattered so, that is:
//!   a typed leaf outside LISTs is priced on the runs its field made in
//!   the sample's rows (its object missing, the field missing from it, the
//!   Variant null, each class), as for dictionary indices; a field in
//!   blocks of rows, as in a registry's versions of one package, costs a
//!   few bytes per block. Under one LIST, so are a leaf's definition
//!   levels, entry by entry of the list's level sequence (each element,
//!   and one entry for a row without any), and the list's repetition
//!   levels; under nested LISTs, the formula prices both.
//! - **Fixed**: 300 bytes per leaf column (column chunk metadata, schema
//!   element, page and dictionary headers, page index; measured 613 bytes
//!   for a two-leaf field).
//!
//! An object is planned twice, with the fields that pay and with every
//! field that can be typed (objects left with no unshredded field drop
//! their header and leave `value` null, which can outweigh a field that
//! costs a little, such as an all-distinct id in every row); the better
//! plan is kept if it pays, its own terms included. An array is typed if
//! it pays with its elements' plan. Fixed costs and dictionaries are
//! charged as if the file held only the sample, so the model errs towards
//! not shredding (a tiny sample types little).
//!
//! Checked against Parquet files written by the parquet crate (see
//! `tests/infer.rs`): per field, the estimate was within a few KiB of the
//! measured difference on 20 000-row files (mostly within a few hundred
//! bytes). On seed-like rows every field pays (dense, small domains:
//! ~10-bit indices replace 5-8 bytes; the all-distinct `id` by completing
//! the rows), and the file is a fifth of the unshredded one uncompressed.
//! On webhook-like rows whose optional fields (ids, URLs, timestamps,
//! hashes) are each in 10-15% of rows none pays, and none is shredded;
//! sparse fields with small domains do pay, and are. The estimate ignores
//! general-purpose compression: with zstd the files stayed no larger than
//! unshredded ones on all test data, but compression also changes which
//! columns pay (it shrinks sequential ids in the residual better than in a
//! dictionary, and random strings worse).
//!
//! # Limits
//!
//! - [`max_columns`](InferOptions::with_max_columns): at most this many
//!   Parquet leaf columns for the whole Variant column, counted as Spark
//!   does ([`ShreddingSchema::leaf_count`]: a `value` per slot and a
//!   `typed_value` per scalar). When the schema that pays would need more,
//!   the default keeps the scalar columns with the largest estimated gain
//!   (each charged with its enclosing groups), not the first by name.
//! - [`max_depth`](InferOptions::with_max_depth): values nested deeper
//!   than this (the root is at depth 0) are not analysed and stay in
//!   `value`.
//! - [`sample_rows`](InferOptions::with_sample_rows): later values are
//!   ignored.

mod default;
mod encodings;
mod spark;
mod spark_type;
mod stats;

pub use spark_type::SparkType;
pub(crate) use stats::Distinct;

use crate::path::VariantPath;
use crate::shred::{ShredPolicy, ShreddingSchema};
use crate::variant::VariantRef;

/// Bytes of distinct values a column chunk may collect in its dictionary
/// before its pages fall back to plain encoding. The parquet crate's 1 MB
/// lets a column of unique values (ids, timestamps) spend most of a row
/// group dictionary-encoded: a 1 MB dictionary plus 17-bit indices that
/// zstd cannot shrink, twice the size of plain values compressed. 64 KB
/// still holds the dictionaries that pay (1000 distinct int64 values take
/// 8 KB) and took 1M seed rows from 22.39 MB to 18.66 MB (Spark: 18.27 MB).
///
/// The writer ([`ParquetWriter`](crate::parquet::ParquetWriter)) sets this
/// limit and the cost model counts on it; it is defined here, with the
/// model, so that the pipeline's imports run one way.
pub(crate) const DICTIONARY_PAGE_LIMIT: usize = 64 * 1024;

/// The share of distinct values from which a leaf is written without a
/// dictionary. Such a column (ids, timestamps, session keys) overflows the
/// dictionary within a row group anyway, after spending its first 64 KB on
/// incompressible indices; plain (or delta) from the start is smaller. The
/// cost model prices it so, and the writer applies it to the leaves the
/// model did not price.
pub(crate) const MOSTLY_DISTINCT: f64 = 0.9;

/// How a typed leaf stores its values: the choice the cost model priced,
/// which the writer then makes
/// ([`WriteOptions::leaf_encodings`](crate::parquet::WriteOptions::leaf_encodings)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafEncoding {
    /// A dictionary page and `RLE_DICTIONARY` indices: repeated values.
    Dictionary,
    /// No dictionary, `PLAIN` values (bit-packed booleans).
    Plain,
    /// No dictionary, deltas: `DELTA_BINARY_PACKED` integers (ids,
    /// timestamps), `DELTA_BYTE_ARRAY` strings and binaries (prefixes
    /// shared with the value before, and the rest).
    ///
    /// The model prices bytes before compression, where shared prefixes
    /// always favour deltas; under zstd they do not always (hex counters
    /// took 7% more as deltas, and so did the earthquakes set's URLs). So
    /// strings and binaries priced as deltas are written as whichever of
    /// the two is smaller under the codec: the sample written in memory
    /// by the layout settles it, and the leaf is then priced
    /// [`Plain`](Self::Plain) ([`LeafEstimate::plain_bytes`]); where the
    /// sample was not written, the writer measures its first rows both
    /// ways.
    Delta,
}

impl std::fmt::Display for LeafEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LeafEncoding::Dictionary => "dictionary",
            LeafEncoding::Plain => "plain",
            LeafEncoding::Delta => "delta",
        })
    }
}

/// The cost model's estimate for one typed leaf of the layout it chose.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafEstimate {
    /// Its Parquet path below the Variant column:
    /// `["typed_value", "user", "typed_value", "id", "typed_value"]`.
    pub path: Vec<String>,
    /// How its values were priced.
    pub encoding: LeafEncoding,
    /// Its bytes over the sample before compression: values (and
    /// dictionary) and levels.
    pub bytes: f64,
    /// For strings and binaries priced as [deltas](LeafEncoding::Delta),
    /// their bytes as `PLAIN` values (levels included), which the writer
    /// takes instead where those compress smaller.
    pub plain_bytes: Option<f64>,
}

impl LeafEstimate {
    /// This leaf priced as `PLAIN` values, as the writer measured them
    /// smaller under its codec: a string or binary leaf priced as deltas
    /// (otherwise unchanged).
    pub fn priced_plain(&mut self) {
        if let Some(plain) = self.plain_bytes.take() {
            self.encoding = LeafEncoding::Plain;
            self.bytes = plain;
        }
    }
}

/// A layout and how the cost model priced it.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutPlan {
    /// The layout.
    pub schema: ShreddingSchema,
    /// Its typed leaves as priced, in schema order; empty for the `spark`
    /// preset, which has no cost model.
    pub leaves: Vec<LeafEstimate>,
}

impl From<ShreddingSchema> for LayoutPlan {
    /// A layout with no leaf priced: one given, or the `spark` preset's.
    fn from(schema: ShreddingSchema) -> LayoutPlan {
        LayoutPlan {
            schema,
            leaves: Vec::new(),
        }
    }
}

/// A set of inference rules (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preset {
    /// Ours: faithful majority typing, narrow types, maps left alone, and
    /// only columns that pay for themselves.
    #[default]
    Default,
    /// Spark 4.3's `InferVariantShreddingSchema`.
    Spark,
}

impl Preset {
    /// The shredding policy the preset's schemas are meant for:
    /// [`ShredPolicy::Faithful`] for [`Preset::Default`],
    /// [`ShredPolicy::Lossless`] (as Spark writes) for [`Preset::Spark`].
    pub fn policy(self) -> ShredPolicy {
        match self {
            Preset::Default => ShredPolicy::Faithful,
            Preset::Spark => ShredPolicy::Lossless,
        }
    }
}

/// The options of inference; set them builder-style.
///
/// ```
/// use vshred::infer::{InferOptions, Preset};
/// let options = InferOptions::new(Preset::Spark).with_max_columns(100).with_sample_rows(1000);
/// assert_eq!((options.max_columns(), options.sample_rows()), (100, 1000));
/// assert_eq!(options.min_frequency(), 0.10);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InferOptions {
    preset: Preset,
    sample_rows: usize,
    min_frequency: f64,
    max_columns: usize,
    max_depth: usize,
    min_type_share: f64,
    max_tracked_paths: usize,
    typed_paths: Vec<VariantPath>,
}

impl Default for InferOptions {
    fn default() -> InferOptions {
        InferOptions::new(Preset::Default)
    }
}

impl InferOptions {
    /// The options of `preset` with the defaults: 4096 sample rows, 10%
    /// minimum frequency, 300 columns, depth 50, 75% type share, 50 000
    /// tracked paths.
    pub fn new(preset: Preset) -> InferOptions {
        InferOptions {
            preset,
            sample_rows: 4096,
            min_frequency: 0.10,
            max_columns: 300,
            max_depth: 50,
            min_type_share: 0.75,
            max_tracked_paths: 50_000,
            typed_paths: Vec::new(),
        }
    }

    /// The rules to apply.
    pub fn with_preset(mut self, preset: Preset) -> InferOptions {
        self.preset = preset;
        self
    }

    /// How many rows to sample (4096): values after the first
    /// `sample_rows` rows are ignored.
    pub fn with_sample_rows(mut self, rows: usize) -> InferOptions {
        self.sample_rows = rows;
        self
    }

    /// The share of rows (of elements, inside arrays) a field must occur in
    /// to be shredded (0.10); clamped to `0..=1`, NaN counts as 0.
    pub fn with_min_frequency(mut self, share: f64) -> InferOptions {
        self.min_frequency = clamp_share(share);
        self
    }

    /// The most Parquet leaf columns the Variant column may have, counted
    /// as [`ShreddingSchema::leaf_count`] does (300, Spark's default).
    pub fn with_max_columns(mut self, columns: usize) -> InferOptions {
        self.max_columns = columns;
        self
    }

    /// The deepest nesting level that is analysed (50, Spark's default):
    /// the root is level 0, its fields and elements level 1; containers at
    /// this level are not looked into. (At 0, `spark` leaves even a scalar
    /// root untyped, as Spark does.)
    pub fn with_max_depth(mut self, depth: usize) -> InferOptions {
        self.max_depth = depth;
        self
    }

    /// [`Preset::Default`] only: the share of a slot's non-null occurrences
    /// its most common type class needs to be typed (0.75); clamped to
    /// `0..=1`, NaN counts as 0.
    pub fn with_min_type_share(mut self, share: f64) -> InferOptions {
        self.min_type_share = clamp_share(share);
        self
    }

    /// The most distinct paths (object fields and array elements at each
    /// nesting level) statistics are kept for (50 000), which bounds
    /// memory (about 1-2 KiB per path); paths first seen after that are not
    /// shredded. Spark has no such bound, so `spark` matches it only below
    /// it.
    pub fn with_max_tracked_paths(mut self, paths: usize) -> InferOptions {
        self.max_tracked_paths = paths;
        self
    }

    /// [`Preset::Default`] only: paths of object fields (`$.user.id`) to
    /// shred to a typed column whatever they cost, wherever the sample
    /// holds values of one type for them, however rare (a path read by
    /// a bloom filter needs one); with them, the layout is this preset's
    /// own, not one measured against it (unshredded, or the Spark
    /// preset's).
    pub fn with_typed_paths(
        mut self,
        paths: impl IntoIterator<Item = VariantPath>,
    ) -> InferOptions {
        self.typed_paths = paths.into_iter().collect();
        self
    }

    /// The rules to apply.
    pub fn preset(&self) -> Preset {
        self.preset
    }

    /// How many rows are sampled.
    pub fn sample_rows(&self) -> usize {
        self.sample_rows
    }

    /// The share of rows a field must occur in.
    pub fn min_frequency(&self) -> f64 {
        self.min_frequency
    }

    /// The most Parquet leaf columns.
    pub fn max_columns(&self) -> usize {
        self.max_columns
    }

    /// The deepest nesting level analysed.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The share the majority type class needs ([`Preset::Default`]).
    pub fn min_type_share(&self) -> f64 {
        self.min_type_share
    }

    /// The most distinct paths tracked.
    pub fn max_tracked_paths(&self) -> usize {
        self.max_tracked_paths
    }

    /// The paths shredded whatever they cost.
    pub fn typed_paths(&self) -> &[VariantPath] {
        &self.typed_paths
    }
}

fn clamp_share(share: f64) -> f64 {
    if share.is_nan() {
        0.0
    } else {
        share.clamp(0.0, 1.0)
    }
}

/// `ceil(n × share)`, robust to the rounding of `share` (0.1 × 100 is 10).
fn min_count(n: u64, share: f64) -> u64 {
    ((n as f64) * share - 1e-9).ceil().max(0.0) as u64
}

/// Infers a shredding schema from a sample of values, with bounded memory.
///
/// ```
/// use vshred::infer::{InferOptions, SchemaInferrer};
/// use vshred::json::json_to_variant;
/// use vshred::variant::VariantRef;
///
/// let mut inferrer = SchemaInferrer::new(InferOptions::default().with_sample_rows(2000));
/// for i in 0..5000 {
///     let (m, v) = json_to_variant(format!(r#"{{"n": {}, "tag": "t{}"}}"#, i % 100, i % 7).as_bytes())?;
///     inferrer.add(&VariantRef::try_new(&m, &v)?);
///     if inferrer.is_full() {
///         break;
///     }
/// }
/// assert_eq!(inferrer.rows(), 2000);
/// assert_eq!(inferrer.finish().to_string(), r#"{"n":"int32","tag":"string"}"#);
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Debug)]
pub struct SchemaInferrer {
    options: InferOptions,
    /// Rows seen, SQL NULLs included.
    rows: usize,
    stats: PresetStats,
}

#[derive(Debug)]
enum PresetStats {
    Default(stats::Stats),
    Spark(spark::SparkStats),
}

impl SchemaInferrer {
    /// An inferrer with no rows yet.
    pub fn new(options: InferOptions) -> SchemaInferrer {
        let stats = match options.preset {
            Preset::Default => PresetStats::Default(stats::Stats::new(
                options.max_depth,
                options.max_tracked_paths,
            )),
            Preset::Spark => PresetStats::Spark(spark::SparkStats::new(
                options.max_depth,
                options.max_tracked_paths,
            )),
        };
        SchemaInferrer {
            options,
            rows: 0,
            stats,
        }
    }

    /// The options.
    pub fn options(&self) -> &InferOptions {
        &self.options
    }

    /// Adds the next row's value; ignored once the sample is full.
    pub fn add(&mut self, value: &VariantRef<'_>) {
        if self.is_full() {
            return;
        }
        match &mut self.stats {
            PresetStats::Default(stats) => stats.add(value),
            PresetStats::Spark(stats) => stats.add(value, self.rows as u64),
        }
        self.rows += 1;
    }

    /// Adds a row whose Variant is SQL NULL: it takes a place in the
    /// sample (as in Spark, which samples rows) but is otherwise ignored.
    pub fn add_null(&mut self) {
        if !self.is_full() {
            self.rows += 1;
        }
    }

    /// The rows taken into the sample so far, SQL NULLs included.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Whether the sample is complete: further rows are ignored.
    pub fn is_full(&self) -> bool {
        self.rows >= self.options.sample_rows
    }

    /// The schema for the rows so far (more may be added afterwards).
    pub fn finish(&self) -> ShreddingSchema {
        self.plan().schema
    }

    /// The schema for the rows so far with the cost model's estimate for
    /// each typed leaf and the encoding it priced.
    pub fn plan(&self) -> LayoutPlan {
        match &self.stats {
            PresetStats::Default(stats) => default::plan(stats, &self.options),
            PresetStats::Spark(stats) => {
                LayoutPlan::from(stats.finish(self.options.min_frequency, self.options.max_columns))
            }
        }
    }
}

/// Infers a schema from `values` (none of them SQL NULL), reading no more
/// than [`sample_rows`](InferOptions::with_sample_rows) of them.
pub fn infer_schema<'a>(
    values: impl IntoIterator<Item = VariantRef<'a>>,
    options: &InferOptions,
) -> ShreddingSchema {
    let mut inferrer = SchemaInferrer::new(options.clone());
    for value in values.into_iter().take(options.sample_rows) {
        inferrer.add(&value);
    }
    inferrer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_count_is_the_ceiling_without_rounding_surprises() {
        for (n, count) in [
            (0, 0),
            (1, 1),
            (9, 1),
            (10, 1),
            (11, 2),
            (100, 10),
            (101, 11),
        ] {
            assert_eq!(min_count(n, 0.10), count, "{n}");
            assert_eq!(min_count(n, 0.10), n.div_ceil(10), "Spark's (n + 9) / 10");
        }
        for n in 0..20_000 {
            assert_eq!(min_count(n, 0.10), n.div_ceil(10), "{n}");
        }
        assert_eq!(min_count(7, 0.0), 0);
        assert_eq!(min_count(7, 1.0), 7);
    }

    #[test]
    fn shares_are_clamped() {
        let o = InferOptions::default()
            .with_min_frequency(f64::NAN)
            .with_min_type_share(3.0);
        assert_eq!((o.min_frequency(), o.min_type_share()), (0.0, 1.0));
        assert_eq!(
            InferOptions::default()
                .with_min_frequency(-1.0)
                .min_frequency(),
            0.0
        );
    }

    #[test]
    fn presets_have_their_policies() {
        assert_eq!(Preset::Default.policy(), ShredPolicy::Faithful);
        assert_eq!(Preset::Spark.policy(), ShredPolicy::Lossless);
    }
}
