//! The per-file cost of a dataset: `variant_get` of one shredded path
//! summed over the seed rows, in one file, and in files of 300 rows each
//! (the shape of a read-path benchmark in our field: 400 file groups of
//! 300 rows), each file with the layout its own rows infer, and with one
//! layout fixed for all. The difference, divided by the files, is what a
//! file costs beyond its rows: its footer, its plan, its readers.
//!
//! ```text
//! cargo bench -p vshred --bench datasets          # criterion, 120,000 rows: 1 file and 400
//! ```
//!
//! The files are written once, outside the timings, into a temporary
//! directory on `/dev/shm`. See `benches/README.md` for the figures.

mod workload;

use std::path::{Path, PathBuf};
use std::time::Duration;

use arrow::array::AsArray;
use arrow::datatypes::Int64Type;
use criterion::{Criterion, SamplingMode};
use vshred::dataset::Dataset;
use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::parquet::{ColumnSpec, GetRequest, ScanOptions};
use vshred::shred::ShreddingSchema;

const ROWS: usize = 120_000;
const FILE_ROWS: usize = 300;

/// `lines` written as files of `file_rows` rows into `dir`, each shredded
/// as `shred` says; their paths.
fn write(dir: &Path, lines: &str, file_rows: usize, shred: &ShredMode) -> Vec<PathBuf> {
    let lines: Vec<&str> = lines.lines().collect();
    lines
        .chunks(file_rows)
        .enumerate()
        .map(|(i, chunk)| {
            let path = dir.join(format!("part-{i:05}.parquet"));
            let text = chunk.join("\n");
            let options = EncodeOptions {
                variant_fields: vec!["v".into()],
                shred: shred.clone(),
                ..EncodeOptions::default()
            };
            encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).expect("encodes");
            path
        })
        .collect()
}

/// The sum of `$.f0` over the dataset, opened anew as a command would.
fn sum_f0(files: &[PathBuf]) -> i64 {
    let request = GetRequest {
        column: "v".into(),
        path: "$.f0".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: None,
    };
    let mut sum = 0;
    Dataset::from_files(files.to_vec())
        .get_with(&request, &[], &ScanOptions::default(), |values, _| {
            sum += values
                .as_primitive::<Int64Type>()
                .iter()
                .flatten()
                .sum::<i64>();
            Ok(())
        })
        .expect("reads");
    sum
}

fn main() {
    let lines = workload::seed(ROWS, 42);
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a temporary directory");
    // One layout for all: what the whole input infers, so that `$.f0` is
    // typed in every file; and each file's own inference.
    let layout = vshred::encode::infer_columns(
        &mut lines.as_bytes(),
        &EncodeOptions {
            variant_fields: vec!["v".into()],
            ..EncodeOptions::default()
        },
    )
    .expect("infers");
    let fixed = layout
        .columns
        .into_iter()
        .find_map(|c| match c {
            ColumnSpec::Variant { schema, .. } => Some(schema),
            ColumnSpec::Plain(_) => None,
        })
        .expect("a Variant column");
    let fixed = ShredMode::Schema(fixed);
    let inferred = EncodeOptions::default().shred;
    let sets = [
        ("one file", write(dir.path(), &lines, ROWS, &fixed)),
        ("400 files, one layout", {
            let at = dir.path().join("fixed");
            std::fs::create_dir(&at).unwrap();
            write(&at, &lines, FILE_ROWS, &fixed)
        }),
        ("400 files, each its own layout", {
            let at = dir.path().join("own");
            std::fs::create_dir(&at).unwrap();
            write(&at, &lines, FILE_ROWS, &inferred)
        }),
    ];
    let expected = sum_f0(&sets[0].1);
    for (name, files) in &sets {
        assert_eq!(sum_f0(files), expected, "{name}");
    }
    let mut criterion = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5));
    let mut group = criterion.benchmark_group("dataset get $.f0 sum, 120,000 rows");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    for (name, files) in &sets {
        group.bench_function(*name, |b| b.iter(|| sum_f0(files)));
    }
    group.finish();
    criterion.final_summary();
}
