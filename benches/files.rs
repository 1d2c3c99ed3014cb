//! File-level benchmarks: JSON Lines -> shredded Parquet file, and reading
//! those files back (`variant_get` shredded and unshredded, a predicate
//! that skips row groups, full reconstruction to JSON text), vshred side
//! by side with its floors (a serde_json `IgnoredAny` scan; reading the one
//! `typed_value` leaf with the parquet crate) and with arrow-rs 59.3
//! (`parquet-variant-compute` over the parquet crate's Arrow reader and
//! writer), on the seeded workloads of `workload/`.
//!
//! ```text
//! cargo bench -p vshred --bench files                              # criterion, seed, ~1.5 min
//! VSHRED_BENCH_ROWS=1000000 cargo bench -p vshred --bench files    # one-shot timings
//! ```
//!
//! Each whole line is one Variant column `v` (no `--variant-field`), so
//! `$.id` is inside the Variant and `$.id > X` can skip row groups. The
//! files are written once per run, outside the timings, into a temporary
//! directory on `/dev/shm` (memory): unshredded, shredded by our inference
//! with INT and with FLBA decimals, and shredded by the `spark` preset.
//!
//! The one-shot mode skips criterion and runs the contenders of each case
//! round-robin `VSHRED_BENCH_REPEAT` times (default 3), printing the best
//! wall-clock and on-CPU times; `VSHRED_BENCH_ONLY` (a substring of the
//! labels) and `VSHRED_BENCH_WORKLOAD=seed|events` narrow it down. The
//! criterion mode runs the seed workload unless `VSHRED_BENCH_WORKLOAD`
//! says otherwise. See `benches/README.md` for the figures.

mod workload;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::{
    DataType, Decimal32Type, Decimal64Type, Decimal128Type, Field, Int8Type, Int16Type, Int32Type,
    Int64Type,
};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::schema::types::SchemaDescriptor;
use parquet_variant::{VariantPath as ArrowPath, VariantPathElement};
use parquet_variant_compute::{GetOptions, VariantArray};
use parquet_variant_json::VariantToJson;
use serde::de::IgnoredAny;
use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::infer::{InferOptions, Preset};
use vshred::parquet::{DecimalMode, GetRequest, ParquetFile, ReadStats, WriteOptions};
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;
use workload::{Run, arrow_encode, arrow_rs_type, env_usize, race, ratio, variant_schema};

/// Rows in criterion mode: each iteration is a few ms to ~100 ms.
const CRITERION_ROWS: usize = 20_000;
const SEED: u64 = 42;
/// Rows per batch, for every reader and writer.
const BATCH: usize = 8192;
/// The Variant column of whole-line files.
const COLUMN: &str = "v";

/// What each workload is read by.
struct Spec {
    name: &'static str,
    generate: fn(usize, u64) -> String,
    /// An integer field to get as int64 and sum.
    int_path: &'static [&'static str],
    /// A decimal field to get as this decimal and sum (unscaled).
    decimal_path: &'static [&'static str],
    decimal: (u8, u8),
    /// The layouts the decimal is read from.
    decimal_layouts: &'static [Layout],
    /// The layout `$.id > X` is read from: one where `$.id` is shredded.
    predicate_layout: Layout,
}

const SPECS: [Spec; 2] = [
    Spec {
        name: "seed",
        generate: workload::seed,
        int_path: &["v", "f0"],
        decimal_path: &["v", "f2"],
        decimal: (18, 1),
        decimal_layouts: &[Layout::AutoInt, Layout::AutoFlba],
        predicate_layout: Layout::AutoInt,
    },
    Spec {
        name: "events",
        generate: workload::events,
        // Click events only (about a third of the rows).
        int_path: &["pos", "x"],
        // Purchases only (12%), two decimals.
        decimal_path: &["total"],
        decimal: (18, 2),
        // Our inference leaves `total` and `id` in the residual here (too
        // sparse, or not worth a column); the spark preset shreds both.
        decimal_layouts: &[Layout::SparkInt],
        predicate_layout: Layout::SparkInt,
    },
];

/// `$.a.b` of field names.
fn dollar(fields: &[&str]) -> String {
    std::iter::once("$")
        .chain(fields.iter().copied())
        .collect::<Vec<_>>()
        .join(".")
}

/// The file layouts written once per run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    Unshredded,
    AutoInt,
    AutoFlba,
    SparkInt,
}

impl Layout {
    const ALL: [Layout; 4] = [
        Layout::Unshredded,
        Layout::AutoInt,
        Layout::AutoFlba,
        Layout::SparkInt,
    ];

    fn name(self) -> &'static str {
        match self {
            Layout::Unshredded => "unshredded",
            Layout::AutoInt => "auto int",
            Layout::AutoFlba => "auto flba",
            Layout::SparkInt => "spark int",
        }
    }

    /// `vshred encode IN OUT --shred ... --decimal ...`, whole lines.
    fn options(self, row_group_rows: usize) -> EncodeOptions {
        let (shred, decimals) = match self {
            Layout::Unshredded => (ShredMode::None, DecimalMode::Int),
            Layout::AutoInt => (ShredMode::Infer(InferOptions::default()), DecimalMode::Int),
            Layout::AutoFlba => (ShredMode::Infer(InferOptions::default()), DecimalMode::Flba),
            Layout::SparkInt => (
                ShredMode::Infer(InferOptions::new(Preset::Spark)),
                DecimalMode::Int,
            ),
        };
        EncodeOptions {
            shred,
            write: WriteOptions {
                decimals,
                row_group_rows,
                ..WriteOptions::default()
            },
            ..EncodeOptions::default()
        }
    }
}

/// A file written by vshred, outside the timings.
struct Written {
    layout: Layout,
    path: PathBuf,
    schema: ShreddingSchema,
}

/// One workload, its text and its files.
struct Data {
    spec: &'static Spec,
    text: String,
    rows: usize,
    row_group_rows: usize,
    dir: tempfile::TempDir,
    files: Vec<Written>,
}

impl Data {
    fn new(spec: &'static Spec, rows: usize) -> Data {
        let text = (spec.generate)(rows, SEED);
        // Ten row groups, so that a selective predicate can skip most.
        let row_group_rows = rows.div_ceil(10).max(1);
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .expect("a temporary directory");
        let mut files = Vec::new();
        for layout in Layout::ALL {
            let path = dir
                .path()
                .join(format!("{}.parquet", layout.name().replace(' ', "-")));
            let report = encode(
                &mut text.as_bytes(),
                &path,
                &layout.options(row_group_rows),
                &mut |_| {},
            )
            .expect("vshred encodes the workload");
            assert_eq!(report.written.rows, rows as u64);
            let schema = variant_schema(&report.columns);
            println!(
                "  {}: {} file {:.1} MB, {} row groups, layout {}",
                spec.name,
                layout.name(),
                report.written.bytes as f64 / 1e6,
                report.written.row_groups,
                abbreviate(&schema.to_string(), 100_000),
            );
            files.push(Written {
                layout,
                path,
                schema,
            });
        }
        Data {
            spec,
            text,
            rows,
            row_group_rows,
            dir,
            files,
        }
    }

    fn file(&self, layout: Layout) -> &Written {
        self.files
            .iter()
            .find(|f| f.layout == layout)
            .expect("written")
    }

    fn lines(&self) -> Vec<&str> {
        self.text.lines().collect()
    }

    fn mb(&self) -> f64 {
        self.text.len() as f64 / 1e6
    }
}

fn abbreviate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

// ---------------------------------------------------------------------------
// The contenders. Each returns figures derived from its output, which the
// callers check. Not inlined, so that profilers can single them out.

/// The floor for anything that reads the JSON: checks the syntax, builds
/// nothing (lines split beforehand).
#[inline(never)]
fn serde_ignored_any(lines: &[&str]) -> usize {
    let mut n = 0;
    for line in lines {
        let _: IgnoredAny = serde_json::from_str(line).expect("valid JSON");
        n += 1;
    }
    n
}

/// `vshred encode`: JSON Lines text to a Parquet file; (rows, bytes).
#[inline(never)]
fn vshred_encode(text: &str, path: &Path, options: &EncodeOptions) -> (u64, u64) {
    let report = encode(&mut text.as_bytes(), path, options, &mut |_| {}).expect("encodes");
    (report.written.rows, report.written.bytes)
}

/// A sum of integers or unscaled decimals, and the number of non-null
/// values that went into it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sum {
    count: usize,
    total: i128,
}

impl Sum {
    fn add(&mut self, array: &dyn Array) {
        macro_rules! fold {
            ($t:ty) => {{
                let a = array.as_primitive::<$t>();
                self.count += a.len() - a.null_count();
                self.total += a.iter().flatten().map(|v| v as i128).sum::<i128>();
            }};
        }
        match array.data_type() {
            DataType::Int8 => fold!(Int8Type),
            DataType::Int16 => fold!(Int16Type),
            DataType::Int32 => fold!(Int32Type),
            DataType::Int64 => fold!(Int64Type),
            DataType::Decimal32(..) => fold!(Decimal32Type),
            DataType::Decimal64(..) => fold!(Decimal64Type),
            DataType::Decimal128(..) => fold!(Decimal128Type),
            other => panic!("cannot sum {other}"),
        }
    }
}

/// The Arrow type of a get as `as_type`, for both libraries.
fn result_type(as_type: &ShreddingSchema) -> DataType {
    as_type.typed_value_type().expect("a primitive type")
}

/// `vshred get FILE PATH --as TYPE [--where FILTER] --agg sum --stats`.
#[inline(never)]
fn vshred_get(path: &Path, request: &GetRequest) -> (Sum, ReadStats) {
    let file = ParquetFile::open(path).expect("opens");
    let mut sum = Sum::default();
    let stats = file
        .get(request, BATCH, |array| {
            sum.add(array.as_ref());
            Ok(())
        })
        .expect("gets");
    (sum, stats)
}

/// The parquet crate reading one leaf (a `typed_value`) and nothing else:
/// the floor of a get of a fully shredded field.
#[inline(never)]
fn leaf_alone(path: &Path, leaf: &[String]) -> Sum {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).expect("opens"))
        .expect("a reader");
    let index = leaf_index(builder.parquet_schema(), leaf).expect("the leaf exists");
    let mask = ProjectionMask::leaves(builder.parquet_schema(), [index]);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH)
        .build()
        .expect("a reader");
    let mut sum = Sum::default();
    for batch in reader {
        let batch = batch.expect("reads");
        let mut array: &ArrayRef = batch.column(0);
        for name in &leaf[1..] {
            array = array.as_struct().column_by_name(name).expect("projected");
        }
        sum.add(array.as_ref());
    }
    sum
}

fn leaf_index(schema: &SchemaDescriptor, leaf: &[String]) -> Option<usize> {
    (0..schema.num_columns()).find(|&i| schema.column(i).path().parts() == leaf)
}

/// The Parquet path of the `typed_value` leaf of a shredded field.
fn typed_leaf(fields: &[&str]) -> Vec<String> {
    let mut path = vec![COLUMN.to_string()];
    for f in fields {
        path.push("typed_value".into());
        path.push(f.to_string());
    }
    path.push("typed_value".into());
    path
}

/// The leaves arrow-rs's `variant_get` of each of `paths` needs: `metadata`
/// (a `VariantArray` requires it), the `value` of every slot on the way,
/// and the whole subtree of the slot at the end (all of `value` when
/// unshredded). vshred reads the same, less the `value` leaves that the
/// statistics say are all null, and then `metadata` too.
fn variant_projection(schema: &SchemaDescriptor, paths: &[&[&str]]) -> ProjectionMask {
    let wanted = |parts: &[String]| {
        if parts == [COLUMN, "metadata"] {
            return true;
        }
        paths.iter().any(|fields| {
            let mut slot = vec![COLUMN.to_string()];
            for f in fields.iter() {
                if parts.len() == slot.len() + 1
                    && parts.starts_with(&slot)
                    && parts.last().is_some_and(|l| l == "value")
                {
                    return true;
                }
                slot.push("typed_value".into());
                slot.push(f.to_string());
            }
            parts.starts_with(&slot)
        })
    };
    let leaves = (0..schema.num_columns()).filter(|&i| wanted(schema.column(i).path().parts()));
    ProjectionMask::leaves(schema, leaves)
}

fn arrow_path<'a>(fields: &[&'a str]) -> ArrowPath<'a> {
    fields
        .iter()
        .map(|f| VariantPathElement::field(*f))
        .collect()
}

/// A parquet crate reader of the Variant leaves the `paths` need
/// ([`variant_projection`]), over every row group.
fn arrow_reader(
    path: &Path,
    paths: &[&[&str]],
) -> parquet::arrow::arrow_reader::ParquetRecordBatchReader {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).expect("opens"))
        .expect("a reader");
    let mask = variant_projection(builder.parquet_schema(), paths);
    builder
        .with_projection(mask)
        .with_batch_size(BATCH)
        .build()
        .expect("a reader")
}

/// arrow-rs `variant_get` of one path over the leaves it needs
/// ([`variant_projection`]), all row groups.
#[inline(never)]
fn arrow_get(path: &Path, fields: &[&str], as_type: &DataType) -> Sum {
    let reader = arrow_reader(path, &[fields]);
    let as_field = Arc::new(Field::new("result", as_type.clone(), true));
    let mut sum = Sum::default();
    for batch in reader {
        let batch = batch.expect("reads");
        let options =
            GetOptions::new_with_path(arrow_path(fields)).with_as_type(Some(as_field.clone()));
        let result = parquet_variant_compute::variant_get(batch.column(0), options).expect("gets");
        sum.add(result.as_ref());
    }
    sum
}

/// arrow-rs: `variant_get` of `$.id` and of a path over every row group,
/// then keep the rows where `id > threshold`.
#[inline(never)]
fn arrow_get_where(path: &Path, fields: &[&str], as_type: &DataType, threshold: i64) -> Sum {
    let reader = arrow_reader(path, &[fields, &["id"]]);
    let as_field = Arc::new(Field::new("result", as_type.clone(), true));
    let id_field = Arc::new(Field::new("id", DataType::Int64, true));
    let threshold = Int64Array::new_scalar(threshold);
    let mut sum = Sum::default();
    for batch in reader {
        let batch = batch.expect("reads");
        let column = batch.column(0);
        let ids = parquet_variant_compute::variant_get(
            column,
            GetOptions::new_with_path(arrow_path(&["id"])).with_as_type(Some(id_field.clone())),
        )
        .expect("gets");
        let keep = arrow::compute::kernels::cmp::gt(&ids, &threshold).expect("compares");
        let options =
            GetOptions::new_with_path(arrow_path(fields)).with_as_type(Some(as_field.clone()));
        let result = parquet_variant_compute::variant_get(column, options).expect("gets");
        let kept = arrow::compute::filter(&result, &keep).expect("filters");
        sum.add(kept.as_ref());
    }
    sum
}

/// `vshred cat`: every row to JSON text, `{"v":<value>}`, rendered on the
/// reader's worker threads (`ParquetFile::json_lines`), each line handed to
/// `row` (a no-op when timed); the bytes written, newlines left out.
#[inline(never)]
fn vshred_json(path: &Path, mut row: impl FnMut(usize, &[u8])) -> usize {
    let file = ParquetFile::open(path).expect("opens");
    let (mut bytes, mut index) = (0, 0);
    file.json_lines(None, &vshred::parquet::ScanOptions::new(BATCH), |block| {
        for line in block.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            row(index, line);
            bytes += line.len();
            index += 1;
        }
        Ok(())
    })
    .expect("reconstructs");
    bytes
}

/// arrow-rs: every row of the Variant column to JSON text: per batch,
/// `unshred_variant` when shredded (its `VariantArray::value` does not
/// merge shredded objects), then `value(i)` and `to_json`.
#[inline(never)]
fn arrow_json(path: &Path, mut row: impl FnMut(usize, &[u8])) -> usize {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).expect("opens"))
        .expect("a reader")
        .with_batch_size(BATCH)
        .build()
        .expect("a reader");
    let (mut out, mut bytes, mut index) = (Vec::with_capacity(512), 0, 0);
    for batch in reader {
        let batch = batch.expect("reads");
        let mut variants = VariantArray::try_new(batch.column(0)).expect("a Variant column");
        if variants.typed_value_column().is_some() {
            variants = parquet_variant_compute::unshred_variant(&variants).expect("unshreds");
        }
        for i in 0..variants.len() {
            out.clear();
            if variants.is_null(i) {
                out.extend_from_slice(b"null");
            } else {
                variants.value(i).to_json(&mut out).expect("renders");
            }
            row(index, &out);
            bytes += out.len();
            index += 1;
        }
    }
    bytes
}

// ---------------------------------------------------------------------------
// Checks, outside the timings: the contenders agree before they are timed.

/// Rows compared between the two reconstructions and the input: about 200
/// spread over the file, and the last.
fn sample(rows: usize) -> impl Fn(usize) -> bool {
    let step = (rows / 200).max(1);
    move |i| i % step == 0 || i + 1 == rows
}

/// Equal JSON values, numbers compared by value (`122` and `122.0` alike).
fn same_numbers(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_numbers(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_numbers(v, w)))
        }
        _ => a == b,
    }
}

fn parse(json: &[u8]) -> serde_json::Value {
    serde_json::from_slice(json).expect("valid JSON")
}

/// vshred's and arrow-rs's JSON of a sample of rows are the input's JSON
/// values; returns (vshred bytes, arrow-rs bytes). A file vshred wrote
/// holds the input exactly; one arrow-rs wrote (`exact` false) holds its
/// numbers equal in value: its shredding casts `19997.0` into an integer
/// column, where ours leaves it in `value`.
fn check_json(data: &Data, lines: &[&str], path: &Path, what: &str, exact: bool) -> (usize, usize) {
    let picked = sample(data.rows);
    let mut seen = 0;
    let vshred = vshred_json(path, |i, json| {
        if picked(i) {
            let (row, input) = (parse(json)[COLUMN].take(), parse(lines[i].as_bytes()));
            if exact || !same_numbers(&row, &input) {
                assert_eq!(row, input, "vshred {what} row {i}");
            }
            seen += 1;
        }
    });
    let mut renumbered = 0;
    let arrow = arrow_json(path, |i, json| {
        if picked(i) {
            let (row, input) = (parse(json), parse(lines[i].as_bytes()));
            if row != input {
                assert!(
                    same_numbers(&row, &input),
                    "arrow-rs {what} row {i}: {row} is not {input}"
                );
                renumbered += 1;
            }
            seen += 1;
        }
    });
    assert!(seen >= 4, "{what}: too few rows compared");
    if renumbered > 0 {
        println!(
            "  {what}: arrow-rs wrote numbers of {renumbered} of {} sampled rows differently \
             (equal in value, e.g. 122.0 as 122)",
            seen / 2
        );
    }
    (vshred, arrow)
}

// ---------------------------------------------------------------------------
// The cases: each a list of contenders, run by criterion or raced.

/// One case: contenders doing the same work, and the ratios to print.
struct Case<'a> {
    /// The criterion group: what is done.
    operation: &'static str,
    /// What it is done on.
    case: String,
    /// MB of JSON text the case stands for (for MB/s).
    mb: f64,
    contenders: Vec<(String, Run<'a>)>,
    ratios: Vec<(String, String)>,
}

impl<'a> Case<'a> {
    fn new(operation: &'static str, case: String, mb: f64) -> Case<'a> {
        Case {
            operation,
            case,
            mb,
            contenders: Vec::new(),
            ratios: Vec::new(),
        }
    }

    fn add(mut self, label: &str, run: Run<'a>) -> Self {
        self.contenders.push((label.to_string(), run));
        self
    }

    fn ratio(mut self, a: &str, b: &str) -> Self {
        self.ratios.push((a.to_string(), b.to_string()));
        self
    }
}

const FLOOR: &str = "serde IgnoredAny (floor)";
const VSHRED_INT: &str = "vshred encode auto int";
const VSHRED_FLBA: &str = "vshred encode auto flba";
const ARROW_ENCODE: &str = "arrow-rs encode (int)";
const VSHRED_GET: &str = "vshred get";
const LEAF: &str = "parquet leaf-alone get";
const ARROW_GET: &str = "arrow-rs variant_get";
const VSHRED_CAT: &str = "vshred json_lines (cat)";
const ARROW_CAT: &str = "arrow-rs to_json";

fn encode_case<'a>(data: &'a Data, lines: &'a [&'a str]) -> Case<'a> {
    let rows = data.rows as u64;
    let auto = data.file(Layout::AutoInt);
    let as_type = arrow_rs_type(&auto.schema).expect("the workload shreds");
    // Outside the timings: arrow-rs's file reads back as the input.
    let (arrow_rows, bytes) =
        arrow_encode(lines, Some(&as_type), data.row_group_rows, BATCH).expect("arrow-rs encodes");
    assert_eq!(arrow_rows, rows);
    let arrow_file = data.dir.path().join("arrow-rs.parquet");
    std::fs::write(&arrow_file, &bytes).expect("writes");
    let (_, arrow_json_bytes) = check_json(data, lines, &arrow_file, "arrow-rs's file", false);
    println!(
        "  {}: arrow-rs file {:.1} MB ({} bytes of JSON from it)",
        data.spec.name,
        bytes.len() as f64 / 1e6,
        arrow_json_bytes
    );
    let mut case = Case::new("encode", data.spec.name.to_string(), data.mb())
        .add(FLOOR, Box::new(move || serde_ignored_any(lines)));
    for (label, layout) in [
        (VSHRED_INT, Layout::AutoInt),
        (VSHRED_FLBA, Layout::AutoFlba),
    ] {
        let path = data.dir.path().join(format!(
            "encode-{}.parquet",
            layout.name().replace(' ', "-")
        ));
        let options = layout.options(data.row_group_rows);
        case = case.add(
            label,
            Box::new(move || {
                let (written, bytes) = vshred_encode(&data.text, &path, &options);
                assert_eq!(written, rows);
                bytes as usize
            }),
        );
    }
    case.add(
        ARROW_ENCODE,
        Box::new(move || {
            let (written, bytes) = arrow_encode(lines, Some(&as_type), data.row_group_rows, BATCH)
                .expect("arrow-rs encodes");
            assert_eq!(written, rows);
            bytes.len()
        }),
    )
    .ratio(VSHRED_INT, FLOOR)
    .ratio(VSHRED_FLBA, FLOOR)
    .ratio(ARROW_ENCODE, FLOOR)
    .ratio(VSHRED_INT, ARROW_ENCODE)
    .ratio(VSHRED_FLBA, VSHRED_INT)
}

/// A get of `fields` as `as_type` on a layout: vshred, the leaf alone when
/// the field is shredded there, arrow-rs; all checked to agree first.
fn get_case<'a>(
    data: &'a Data,
    layout: Layout,
    fields: &'static [&'static str],
    as_type: ShreddingSchema,
) -> Case<'a> {
    let file = data.file(layout);
    let path = file.path.as_path();
    let arrow_type = result_type(&as_type);
    let request = GetRequest {
        column: COLUMN.into(),
        path: dollar(fields).parse().expect("a path"),
        as_type: as_type.clone(),
        strict: false,
        filter: None,
    };
    let (expected, stats) = vshred_get(path, &request);
    assert!(expected.count > 0, "{}: nothing to sum", dollar(fields));
    assert_eq!(arrow_get(path, fields, &arrow_type), expected, "arrow-rs");
    let leaf = typed_leaf(fields);
    let shredded = {
        let reader = ParquetFile::open(path).expect("opens");
        leaf_index(reader.parquet_schema(), &leaf).is_some()
    };
    if shredded {
        assert_eq!(leaf_alone(path, &leaf), expected, "the leaf alone");
    }
    println!(
        "  {} {} {} as {}: {} values, sum {}, {} of {} row groups",
        data.spec.name,
        layout.name(),
        dollar(fields),
        as_type,
        expected.count,
        expected.total,
        stats.row_groups_read,
        stats.row_groups
    );
    let operation = if layout == Layout::Unshredded {
        "get_unshredded"
    } else {
        "get_shredded"
    };
    let name = format!(
        "{} {} {} as {}",
        data.spec.name,
        layout.name(),
        dollar(fields),
        as_type
    );
    let mut case = Case::new(operation, name, data.mb()).add(
        VSHRED_GET,
        Box::new(move || {
            let (sum, _) = vshred_get(path, &request);
            assert_eq!(sum, expected);
            sum.count
        }),
    );
    if shredded {
        case = case
            .add(
                LEAF,
                Box::new(move || {
                    let sum = leaf_alone(path, &leaf);
                    assert_eq!(sum, expected);
                    sum.count
                }),
            )
            .ratio(VSHRED_GET, LEAF);
    }
    case.add(
        ARROW_GET,
        Box::new(move || {
            let sum = arrow_get(path, fields, &arrow_type);
            assert_eq!(sum, expected);
            sum.count
        }),
    )
    .ratio(VSHRED_GET, ARROW_GET)
}

/// `get PATH --where '$.id > 90% of the rows'` on the auto int file.
fn predicate_case(data: &Data) -> Case<'_> {
    let file = data.file(data.spec.predicate_layout);
    let path = file.path.as_path();
    let fields = data.spec.int_path;
    let threshold = (data.rows * 9 / 10) as i64;
    let filter = format!("$.id > {threshold}");
    let request = GetRequest {
        column: COLUMN.into(),
        path: dollar(fields).parse().expect("a path"),
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: Some(Predicate::parse(&filter).expect("a predicate")),
    };
    let (expected, stats) = vshred_get(path, &request);
    assert!(expected.count > 0);
    assert_eq!(
        arrow_get_where(path, fields, &DataType::Int64, threshold),
        expected,
        "arrow-rs"
    );
    println!(
        "  {} {} {} where {filter}: {} values, sum {}, read {} of {} row groups ({} rows)",
        data.spec.name,
        file.layout.name(),
        dollar(fields),
        expected.count,
        expected.total,
        stats.row_groups_read,
        stats.row_groups,
        stats.rows_read
    );
    assert!(
        stats.row_groups_read < stats.row_groups,
        "vshred skipped no row group"
    );
    let name = format!("{} {} where {filter}", data.spec.name, dollar(fields));
    let vshred = format!(
        "{VSHRED_GET} (read {}/{} row groups)",
        stats.row_groups_read, stats.row_groups
    );
    let arrow = format!("{ARROW_GET} (all {} row groups)", stats.row_groups);
    Case::new("predicate", name, data.mb())
        .add(
            &vshred,
            Box::new(move || {
                let (sum, _) = vshred_get(path, &request);
                assert_eq!(sum, expected);
                sum.count
            }),
        )
        .add(
            &arrow,
            Box::new(move || {
                let sum = arrow_get_where(path, fields, &DataType::Int64, threshold);
                assert_eq!(sum, expected);
                sum.count
            }),
        )
        .ratio(&vshred, &arrow)
}

/// Every row to JSON text.
fn json_case<'a>(data: &'a Data, lines: &[&str], layout: Layout) -> Case<'a> {
    let path = data.file(layout).path.as_path();
    let (vshred_bytes, arrow_bytes) = check_json(data, lines, path, layout.name(), true);
    let name = format!("{} {}", data.spec.name, layout.name());
    Case::new("to_json", name, data.mb())
        .add(
            VSHRED_CAT,
            Box::new(move || {
                let bytes = vshred_json(path, |_, _| {});
                assert_eq!(bytes, vshred_bytes);
                bytes
            }),
        )
        .add(
            ARROW_CAT,
            Box::new(move || {
                let bytes = arrow_json(path, |_, _| {});
                assert_eq!(bytes, arrow_bytes);
                bytes
            }),
        )
        .ratio(VSHRED_CAT, ARROW_CAT)
}

/// All cases of a workload, checked.
fn cases<'a>(data: &'a Data, lines: &'a [&'a str]) -> Vec<Case<'a>> {
    let spec = data.spec;
    let (precision, scale) = spec.decimal;
    let decimal = ShreddingSchema::Decimal { precision, scale };
    let mut cases = vec![
        encode_case(data, lines),
        get_case(data, Layout::AutoInt, spec.int_path, ShreddingSchema::Int64),
    ];
    for &layout in spec.decimal_layouts {
        cases.push(get_case(data, layout, spec.decimal_path, decimal.clone()));
    }
    cases.push(get_case(
        data,
        Layout::Unshredded,
        spec.int_path,
        ShreddingSchema::Int64,
    ));
    cases.push(predicate_case(data));
    for layout in [Layout::AutoInt, Layout::AutoFlba, Layout::Unshredded] {
        cases.push(json_case(data, lines, layout));
    }
    cases
}

/// The workloads `VSHRED_BENCH_WORKLOAD` selects (default: all).
fn specs(default: &[&str]) -> Vec<&'static Spec> {
    let only = std::env::var("VSHRED_BENCH_WORKLOAD").ok();
    SPECS
        .iter()
        .filter(|s| match &only {
            Some(only) => only == s.name,
            None => default.contains(&s.name),
        })
        .collect()
}

fn one_shot(rows: usize) {
    let repeat = env_usize("VSHRED_BENCH_REPEAT").unwrap_or(3).max(1);
    for spec in specs(&["seed", "events"]) {
        println!("{}: {rows} rows; writing the files", spec.name);
        let data = Data::new(spec, rows);
        let lines = data.lines();
        println!(
            "{}: {} rows, {:.1} MB of JSON, {} rows per row group; best of {repeat}, round-robin \
             (MB/s per byte of JSON)",
            spec.name,
            data.rows,
            data.mb(),
            data.row_group_rows
        );
        for case in cases(&data, &lines) {
            println!(" {} {}", case.operation, case.case);
            let (labels, runs): (Vec<String>, Vec<Run<'_>>) = case.contenders.into_iter().unzip();
            let contenders = labels.iter().map(String::as_str).zip(runs).collect();
            let best = race(case.mb, repeat, contenders);
            for (a, b) in &case.ratios {
                println!("  ratio {a} / {b}: {}", ratio(&best, a, b));
            }
        }
    }
}

fn main() {
    if let Some(rows) = env_usize("VSHRED_BENCH_ROWS") {
        one_shot(rows);
        return;
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .configure_from_args();
    for spec in specs(&["seed"]) {
        let data = Data::new(spec, CRITERION_ROWS);
        let lines = data.lines();
        for case in cases(&data, &lines) {
            let mut group = criterion.benchmark_group(case.operation);
            group.throughput(Throughput::Bytes((case.mb * 1e6) as u64));
            // The same number of iterations per sample: the slowest
            // contenders take 10 iterations, not the 55 of linear sampling.
            group.sampling_mode(SamplingMode::Flat);
            for (label, mut run) in case.contenders {
                group.bench_function(BenchmarkId::new(label, &case.case), |b| {
                    b.iter(|| assert!(run() > 0))
                });
            }
            group.finish();
        }
    }
    criterion.final_summary();
}
