//! JSON <-> Variant, vshred side by side with its floor (serde_json scanning
//! into `IgnoredAny`), serde_json's `Value`, and its peer (arrow-rs
//! `parquet-variant-json`), on the seeded workloads of `workload/`.
//!
//! ```text
//! cargo bench -p vshred --bench codec                              # criterion, ~1.5 min
//! VSHRED_BENCH_ROWS=1000000 cargo bench -p vshred --bench codec    # one-shot timings
//! ```
//!
//! The one-shot mode skips criterion: it generates `VSHRED_BENCH_ROWS` rows
//! of each workload and times every implementation over all of them
//! `VSHRED_BENCH_REPEAT` times (default 3), round-robin, printing the best
//! wall-clock and on-CPU times and all runs.
//! `VSHRED_BENCH_ONLY=vshred` (a substring of the labels printed) runs only
//! those, and `VSHRED_BENCH_WORKLOAD=seed` (or `events`) only that workload,
//! e.g. under `perf record`. See `benches/README.md` for the figures.

mod workload;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use parquet_variant_json::{JsonToVariant, VariantToJson};
use serde::de::IgnoredAny;
use vshred::json::{JsonParser, write_json};
use vshred::variant::{VariantBuilder, VariantRef};
use workload::{env_usize, race, ratio, wanted};

/// Rows per criterion iteration: each iteration is a few ms to ~100 ms.
const SEED_ROWS: usize = 20_000;
const EVENT_ROWS: usize = 20_000;
const SEED: u64 = 42;

/// `workload::seed` or `workload::events`: `(rows, seed)` to JSON Lines.
type Generator = fn(usize, u64) -> String;

/// A generated JSON Lines text and its lines.
struct Workload {
    name: &'static str,
    text: String,
}

impl Workload {
    /// The workloads, generated one at a time as the caller gets to them;
    /// `VSHRED_BENCH_WORKLOAD=seed` (or `events`) keeps only that one.
    fn all(rows: Option<usize>) -> impl Iterator<Item = Workload> {
        let only = std::env::var("VSHRED_BENCH_WORKLOAD").ok();
        let generators: [(&'static str, Generator, usize); 2] = [
            ("seed", workload::seed, SEED_ROWS),
            ("events", workload::events, EVENT_ROWS),
        ];
        generators
            .into_iter()
            .filter(move |(name, _, _)| only.as_ref().is_none_or(|only| only == name))
            .map(move |(name, generate, default_rows)| Workload {
                name,
                text: generate(rows.unwrap_or(default_rows), SEED),
            })
    }

    /// The lines as bytes, split once outside the timed loops: every
    /// implementation gets the same slices.
    fn lines(&self) -> Vec<&[u8]> {
        self.text.lines().map(str::as_bytes).collect()
    }
}

// The implementations. Each returns a figure derived from its output, which
// the callers assert on, so that a no-op would fail the bench. Not inlined,
// so that profilers can single them out (`valgrind --tool=callgrind
// --toggle-collect='codec::vshred_to_variant'`).

/// The floor: serde_json checks the syntax and builds nothing.
#[inline(never)]
fn serde_ignored_any(lines: &[&[u8]]) -> usize {
    let mut n = 0;
    for line in lines {
        let _: IgnoredAny = serde_json::from_slice(line).expect("valid JSON");
        n += 1;
    }
    n
}

/// serde_json's tree, what arrow-rs builds before its Variant.
#[inline(never)]
fn serde_value(lines: &[&[u8]]) -> usize {
    let mut fields = 0;
    for line in lines {
        let value: serde_json::Value = serde_json::from_slice(line).expect("valid JSON");
        fields += value.as_object().map_or(1, |o| o.len());
    }
    fields
}

/// The intended hot loop: one parser and one builder for all rows.
#[inline(never)]
fn vshred_to_variant(lines: &[&[u8]], parser: &JsonParser, builder: &mut VariantBuilder) -> usize {
    let mut bytes = 0;
    for line in lines {
        builder.start_row();
        parser.parse(line, builder).expect("valid JSON");
        let (metadata, value) = builder.finish();
        bytes += metadata.len() + value.len();
    }
    bytes
}

/// arrow-rs: its `VariantBuilder::finish` consumes the builder, so one per
/// row. Its API takes `&str`: the UTF-8 check of the line is counted.
#[inline(never)]
fn arrow_to_variant(lines: &[&[u8]]) -> usize {
    let mut bytes = 0;
    for line in lines {
        let text = std::str::from_utf8(line).expect("UTF-8");
        let mut builder = parquet_variant::VariantBuilder::new();
        builder.append_json(text).expect("valid JSON");
        let (metadata, value) = builder.finish();
        bytes += metadata.len() + value.len();
    }
    bytes
}

/// Many Variants back to back: metadata and value bytes, and where each
/// row's end.
#[derive(Default)]
struct Encoded {
    metadata: Vec<u8>,
    value: Vec<u8>,
    ends: Vec<(usize, usize)>,
}

impl Encoded {
    fn push(&mut self, metadata: &[u8], value: &[u8]) {
        self.metadata.extend_from_slice(metadata);
        self.value.extend_from_slice(value);
        self.ends.push((self.metadata.len(), self.value.len()));
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let starts = std::iter::once((0, 0)).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|((m0, v0), &(m1, v1))| (&self.metadata[m0..m1], &self.value[v0..v1]))
    }

    fn bytes(&self) -> usize {
        self.metadata.len() + self.value.len()
    }

    fn by_vshred(lines: &[&[u8]]) -> Encoded {
        let (parser, mut builder) = (JsonParser::new(), VariantBuilder::new());
        let mut encoded = Encoded::default();
        for line in lines {
            builder.reset();
            parser.parse(line, &mut builder).expect("valid JSON");
            let (metadata, value) = builder.finish();
            encoded.push(metadata, value);
        }
        encoded
    }

    fn by_arrow(lines: &[&[u8]]) -> Encoded {
        let mut encoded = Encoded::default();
        for line in lines {
            let mut builder = parquet_variant::VariantBuilder::new();
            builder
                .append_json(std::str::from_utf8(line).expect("UTF-8"))
                .expect("valid JSON");
            let (metadata, value) = builder.finish();
            encoded.push(&metadata, &value);
        }
        encoded
    }
}

/// Validates each Variant, then renders it into one reused buffer.
#[inline(never)]
fn vshred_to_json(encoded: &Encoded, out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for (metadata, value) in encoded.iter() {
        out.clear();
        let variant = VariantRef::try_new(metadata, value).expect("valid Variant");
        write_json(&variant, out);
        bytes += out.len();
    }
    bytes
}

/// The same with arrow-rs: `Variant::try_new` validates fully too.
#[inline(never)]
fn arrow_to_json(encoded: &Encoded, out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for (metadata, value) in encoded.iter() {
        out.clear();
        let variant = parquet_variant::Variant::try_new(metadata, value).expect("valid Variant");
        variant.to_json(out).expect("JSON");
        bytes += out.len();
    }
    bytes
}

/// Outside the timings: both encoders' Variants render back to the input's
/// JSON values (numbers compared as serde_json reads them), so the benches
/// compare implementations that do the same work.
fn check_round_trips(lines: &[&[u8]], vshred: &Encoded, arrow: &Encoded) {
    assert_eq!(vshred.ends.len(), lines.len());
    assert_eq!(arrow.ends.len(), lines.len());
    let parse = |json: &[u8]| -> serde_json::Value { serde_json::from_slice(json).expect("JSON") };
    let mut out = Vec::new();
    let variants = vshred.iter().zip(arrow.iter());
    for (i, (line, ((vm, vv), (am, av)))) in lines.iter().zip(variants).enumerate() {
        let input = parse(line);
        out.clear();
        write_json(
            &VariantRef::try_new(vm, vv).expect("valid Variant"),
            &mut out,
        );
        assert_eq!(parse(&out), input, "vshred round trip of row {i}");
        out.clear();
        let variant = parquet_variant::Variant::try_new(am, av).expect("valid Variant");
        variant.to_json(&mut out).expect("JSON");
        assert_eq!(parse(&out), input, "arrow-rs round trip of row {i}");
    }
}

fn json_to_variant(c: &mut Criterion) {
    let mut group = c.benchmark_group("json_to_variant");
    for workload in Workload::all(None) {
        let lines = workload.lines();
        let rows = lines.len();
        group.throughput(Throughput::Bytes(workload.text.len() as u64));
        group.bench_function(BenchmarkId::new("serde_ignored_any", workload.name), |b| {
            b.iter(|| assert_eq!(black_box(serde_ignored_any(black_box(&lines))), rows))
        });
        group.bench_function(BenchmarkId::new("serde_value", workload.name), |b| {
            b.iter(|| assert!(black_box(serde_value(black_box(&lines))) >= rows))
        });
        let (parser, mut builder) = (JsonParser::new(), VariantBuilder::new());
        group.bench_function(BenchmarkId::new("vshred", workload.name), |b| {
            b.iter(|| {
                let bytes = vshred_to_variant(black_box(&lines), &parser, &mut builder);
                assert!(black_box(bytes) > 2 * rows)
            })
        });
        group.bench_function(BenchmarkId::new("arrow_rs", workload.name), |b| {
            b.iter(|| assert!(black_box(arrow_to_variant(black_box(&lines))) > 2 * rows))
        });
    }
    group.finish();
}

fn variant_to_json(c: &mut Criterion) {
    let mut group = c.benchmark_group("variant_to_json");
    for workload in Workload::all(None) {
        let lines = workload.lines();
        let (vshred, arrow) = (Encoded::by_vshred(&lines), Encoded::by_arrow(&lines));
        check_round_trips(&lines, &vshred, &arrow);
        // Per byte of the JSON text, like json_to_variant.
        group.throughput(Throughput::Bytes(workload.text.len() as u64));
        let mut out = Vec::new();
        group.bench_function(BenchmarkId::new("vshred", workload.name), |b| {
            b.iter(|| assert!(black_box(vshred_to_json(black_box(&vshred), &mut out)) > 0))
        });
        group.bench_function(BenchmarkId::new("arrow_rs", workload.name), |b| {
            b.iter(|| assert!(black_box(arrow_to_json(black_box(&arrow), &mut out)) > 0))
        });
    }
    group.finish();
}

/// The one-shot mode: every implementation over all rows, no criterion.
fn one_shot(rows: usize) {
    let repeat = env_usize("VSHRED_BENCH_REPEAT").unwrap_or(3).max(1);
    for workload in Workload::all(Some(rows)) {
        let lines = workload.lines();
        let mb = workload.text.len() as f64 / 1e6;
        println!(
            "{}: {} rows, {mb:.1} MB, {:.1} bytes/row; best of {repeat}, round-robin",
            workload.name,
            lines.len(),
            workload.text.len() as f64 / lines.len() as f64
        );

        println!(" json_to_variant");
        let (parser, mut builder) = (JsonParser::new(), VariantBuilder::new());
        let best = race(
            mb,
            repeat,
            vec![
                ("serde IgnoredAny", Box::new(|| serde_ignored_any(&lines))),
                ("serde Value", Box::new(|| serde_value(&lines))),
                (
                    "vshred JSON->Variant",
                    Box::new(|| vshred_to_variant(&lines, &parser, &mut builder)),
                ),
                (
                    "arrow-rs JSON->Variant",
                    Box::new(|| arrow_to_variant(&lines)),
                ),
            ],
        );
        let floor = "serde IgnoredAny";
        let (vshred, arrow) = ("vshred JSON->Variant", "arrow-rs JSON->Variant");
        println!(
            "  ratios: vshred/IgnoredAny {}, Value/IgnoredAny {}, arrow-rs/IgnoredAny {}, \
             vshred/arrow-rs {}",
            ratio(&best, vshred, floor),
            ratio(&best, "serde Value", floor),
            ratio(&best, arrow, floor),
            ratio(&best, vshred, arrow)
        );

        println!(" variant_to_json (MB/s per byte of JSON input)");
        let (vshred, arrow) = ("vshred Variant->JSON", "arrow-rs Variant->JSON");
        let encode = |label, by: fn(&[&[u8]]) -> Encoded| {
            let encoded = if wanted(label) {
                by(&lines)
            } else {
                Encoded::default()
            };
            println!("  {label}: input {} Variant bytes", encoded.bytes());
            encoded
        };
        let by_vshred = encode(vshred, Encoded::by_vshred);
        let by_arrow = encode(arrow, Encoded::by_arrow);
        let (mut out_vshred, mut out_arrow) = (Vec::new(), Vec::new());
        let best = race(
            mb,
            repeat,
            vec![
                (
                    vshred,
                    Box::new(|| vshred_to_json(&by_vshred, &mut out_vshred)),
                ),
                (arrow, Box::new(|| arrow_to_json(&by_arrow, &mut out_arrow))),
            ],
        );
        println!("  ratios: vshred/arrow-rs {}", ratio(&best, vshred, arrow));
    }
}

fn main() {
    if let Some(rows) = env_usize("VSHRED_BENCH_ROWS") {
        one_shot(rows);
        return;
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    json_to_variant(&mut criterion);
    variant_to_json(&mut criterion);
    criterion.final_summary();
}
