//! Shredding and reconstruction throughput on the seed workload, vshred
//! side by side with serde_json's `IgnoredAny` scan (the floor for anything
//! that reads the JSON) and arrow-rs (`parquet-variant-compute`).
//!
//! ```text
//! cargo bench -p vshred --bench shred                              # criterion
//! VSHRED_BENCH_ROWS=1000000 cargo bench -p vshred --bench shred    # one-shot timings
//! ```
//!
//! The layout is the one the seed workload calls for: `v.f0`..`v.f9` typed
//! as int64, string or decimal(18,1), `v.nested.a`/`b` typed, and `id`,
//! `ts` as int64 (each line is one Variant).

mod workload;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, StringArray, StructArray};
use criterion::{Criterion, Throughput};
use serde::de::IgnoredAny;
use vshred::json::JsonParser;
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::unshred::{ShreddedColumn, unshred};
use vshred::variant::VariantBuilder;
use workload::arrow_rs_type;

const ROWS: usize = 20_000;
const SEED: u64 = 42;

const SCHEMA: &str = r#"{"id":"int64","ts":"int64","v":{"f0":"int64","f1":"string","f2":"decimal(18,1)","f3":"int64","f4":"string","f5":"decimal(18,1)","f6":"int64","f7":"string","f8":"decimal(18,1)","f9":"string","nested":{"a":"int64","b":"string"}}}"#;

struct Data {
    text: String,
    schema: ShreddingSchema,
    /// Each line as (metadata, value).
    variants: Vec<(Vec<u8>, Vec<u8>)>,
    shredded: StructArray,
}

impl Data {
    fn new(rows: usize) -> Data {
        let text = workload::seed(rows, SEED);
        let schema: ShreddingSchema = SCHEMA.parse().expect("the bench schema parses");
        let parser = JsonParser::new();
        let mut builder = VariantBuilder::new();
        let variants = lines(&text)
            .map(|line| {
                builder.reset();
                parser
                    .parse(line, &mut builder)
                    .expect("seed JSON is valid");
                let (m, v) = builder.finish();
                (m.to_vec(), v.to_vec())
            })
            .collect();
        let shredded = shred_json(&text, &schema);
        Data {
            text,
            schema,
            variants,
            shredded,
        }
    }
}

fn lines(text: &str) -> impl Iterator<Item = &[u8]> {
    text.as_bytes()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
}

fn ignored_any(text: &str) -> usize {
    let mut n = 0;
    for line in lines(text) {
        let _: IgnoredAny = serde_json::from_slice(line).expect("valid JSON");
        n += 1;
    }
    n
}

fn shred_json(text: &str, schema: &ShreddingSchema) -> StructArray {
    let mut shredder = Shredder::new(schema);
    for line in lines(text) {
        shredder.append_json(line).expect("seed JSON shreds");
    }
    shredder.finish()
}

fn shred_variants(data: &Data) -> StructArray {
    let mut shredder = Shredder::new(&data.schema);
    for (m, v) in &data.variants {
        shredder.append_variant(m, v).expect("valid Variants shred");
    }
    shredder.finish()
}

fn to_json(column: &StructArray) -> usize {
    let reader = ShreddedColumn::try_new(column).expect("our own layout");
    let mut out = Vec::with_capacity(256);
    let mut total = 0;
    for row in 0..column.len() {
        out.clear();
        reader.write_json(row, &mut out).expect("reconstructs");
        total += out.len();
    }
    total
}

fn arrow_rs_variants(text: &str) -> parquet_variant_compute::VariantArray {
    let strings: ArrayRef = Arc::new(StringArray::from_iter_values(
        text.lines().filter(|l| !l.is_empty()),
    ));
    parquet_variant_compute::json_to_variant(&strings).expect("arrow-rs parses the seed")
}

fn bench(c: &mut Criterion) {
    let data = Data::new(ROWS);
    let arrow_type = arrow_rs_type(&data.schema).expect("typed");
    let arrow_variants = arrow_rs_variants(&data.text);
    let arrow_shredded = parquet_variant_compute::shred_variant(&arrow_variants, &arrow_type)
        .expect("arrow-rs shreds");

    let mut group = c.benchmark_group("json_to_shredded");
    group.throughput(Throughput::Bytes(data.text.len() as u64));
    group.bench_function("serde IgnoredAny (floor)", |b| {
        b.iter(|| assert_eq!(ignored_any(black_box(&data.text)), ROWS))
    });
    group.bench_function("vshred", |b| {
        b.iter(|| assert_eq!(shred_json(black_box(&data.text), &data.schema).len(), ROWS))
    });
    group.bench_function("arrow-rs json_to_variant + shred_variant", |b| {
        b.iter(|| {
            let v = arrow_rs_variants(black_box(&data.text));
            let s = parquet_variant_compute::shred_variant(&v, &arrow_type).expect("shreds");
            assert_eq!(s.len(), ROWS)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("variant_to_shredded");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("vshred", |b| {
        b.iter(|| assert_eq!(shred_variants(black_box(&data)).len(), ROWS))
    });
    group.bench_function("arrow-rs shred_variant", |b| {
        b.iter(|| {
            let s = parquet_variant_compute::shred_variant(black_box(&arrow_variants), &arrow_type)
                .expect("shreds");
            assert_eq!(s.len(), ROWS)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("shredded_to_variant");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("vshred", |b| {
        b.iter(|| {
            assert_eq!(
                unshred(black_box(&data.shredded)).expect("unshreds").len(),
                ROWS
            )
        })
    });
    group.bench_function("arrow-rs unshred_variant", |b| {
        b.iter(|| {
            let u = parquet_variant_compute::unshred_variant(black_box(&arrow_shredded))
                .expect("unshreds");
            assert_eq!(u.len(), ROWS)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("shredded_to_json");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("vshred", |b| {
        b.iter(|| assert!(to_json(black_box(&data.shredded)) > ROWS))
    });
    group.bench_function("arrow-rs unshred_variant + variant_to_json", |b| {
        b.iter(|| {
            let u = parquet_variant_compute::unshred_variant(black_box(&arrow_shredded))
                .expect("unshreds");
            let json =
                parquet_variant_compute::variant_to_json(&ArrayRef::from(u)).expect("renders");
            assert_eq!(json.len(), ROWS)
        })
    });
    group.finish();
}

/// One pass of each operation over `rows` rows, timed.
fn one_shot(rows: usize) {
    let data = Data::new(rows);
    let mb = data.text.len() as f64 / 1e6;
    let arrow_type = arrow_rs_type(&data.schema).expect("typed");
    println!("seed workload: {rows} rows, {mb:.1} MB of JSON");
    let time = |name: &str, f: &mut dyn FnMut()| {
        let best = (0..3)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min);
        println!("  {name:<48} {best:>9.1} ms (best of 3)");
        best
    };
    let floor = time("serde IgnoredAny (floor)", &mut || {
        black_box(ignored_any(&data.text));
    });
    let json_shred = time("vshred JSON -> shredded", &mut || {
        black_box(shred_json(&data.text, &data.schema));
    });
    let mut arrow_variants = None;
    let arrow_json = time("arrow-rs JSON -> Variant", &mut || {
        arrow_variants = Some(arrow_rs_variants(&data.text));
    });
    let arrow_variants = arrow_variants.expect("ran");
    let mut arrow_shredded = None;
    let arrow_shred = time("arrow-rs shred_variant", &mut || {
        arrow_shredded = Some(
            parquet_variant_compute::shred_variant(&arrow_variants, &arrow_type).expect("shreds"),
        );
    });
    let arrow_shredded = arrow_shredded.expect("ran");
    time("vshred Variant -> shredded", &mut || {
        black_box(shred_variants(&data));
    });
    let unshred_ms = time("vshred shredded -> Variant", &mut || {
        black_box(unshred(&data.shredded).expect("unshreds"));
    });
    let to_json_ms = time("vshred shredded -> JSON", &mut || {
        black_box(to_json(&data.shredded));
    });
    let mut arrow_unshredded = None;
    let arrow_unshred = time("arrow-rs unshred_variant", &mut || {
        arrow_unshredded =
            Some(parquet_variant_compute::unshred_variant(&arrow_shredded).expect("unshreds"));
    });
    let arrow_unshredded = ArrayRef::from(arrow_unshredded.expect("ran"));
    let arrow_to_json = time("arrow-rs variant_to_json", &mut || {
        black_box(parquet_variant_compute::variant_to_json(&arrow_unshredded).expect("renders"));
    });
    println!(
        "  ratios: vshred JSON->shredded / IgnoredAny {:.2}x; arrow-rs (JSON->Variant + shred) / vshred {:.1}x",
        json_shred / floor,
        (arrow_json + arrow_shred) / json_shred
    );
    println!(
        "          arrow-rs (unshred + to JSON) / vshred shredded->JSON {:.1}x; arrow-rs unshred / vshred unshred {:.1}x",
        (arrow_unshred + arrow_to_json) / to_json_ms,
        arrow_unshred / unshred_ms
    );
}

fn main() {
    if let Some(rows) = std::env::var("VSHRED_BENCH_ROWS")
        .ok()
        .and_then(|r| r.parse().ok())
    {
        one_shot(rows);
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(3))
        .configure_from_args();
    bench(&mut c);
    c.final_summary();
}
