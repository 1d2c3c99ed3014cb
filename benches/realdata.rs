//! Real data sets, the Rust writers' side (issue 15): for every
//! `WORK/input/<name>.jsonl`, vshred's files (`--shred auto`, `spark` and
//! `none`, default options otherwise) and arrow-rs's file in vshred's
//! `auto` layout (arrow-rs has no inference of its own), written to
//! `WORK/files/<name>.<writer>.parquet`, with each encoder's time, side by
//! side, to `WORK/encode.tsv`: vshred's with its inference and with the
//! layout it inferred given (`--shred SCHEMA.json`), which is what arrow-rs
//! is given. `benches/realdata/run.sh` runs it between
//! fetching the data and writing Spark's and DuckDB's files; its
//! `measure.py` compares the sizes.
//!
//! ```text
//! VSHRED_REALDATA_WORK=DIR cargo bench -p vshred --bench realdata
//! ```
//!
//! It also writes `WORK/input/events.jsonl` when missing:
//! `VSHRED_REALDATA_EVENTS_ROWS` (default 1,000,000) rows of the `events`
//! workload. `VSHRED_BENCH_REPEAT` (default 3) runs per encoder, best kept.

mod workload;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::infer::{InferOptions, Preset};
use vshred::parquet::WriteOptions;
use vshred::shred::ShreddingSchema;
use workload::{Run, arrow_encode, arrow_rs_type, env_usize, race, variant_schema};

/// Rows per batch given to arrow-rs (vshred batches on its own).
const BATCH: usize = 8192;

/// vshred's writers: file label and shredding; `auto` first.
fn layouts() -> [(&'static str, ShredMode); 3] {
    [
        ("vshred-auto", ShredMode::Infer(InferOptions::default())),
        (
            "vshred-spark",
            ShredMode::Infer(InferOptions::new(Preset::Spark)),
        ),
        ("vshred-none", ShredMode::None),
    ]
}

fn main() {
    let Ok(work) = std::env::var("VSHRED_REALDATA_WORK") else {
        println!(
            "realdata: set VSHRED_REALDATA_WORK (benches/realdata/run.sh does); nothing to do"
        );
        return;
    };
    let work = PathBuf::from(work);
    let input = work.join("input");
    let files = work.join("files");
    std::fs::create_dir_all(&files).expect("creates WORK/files");
    write_events(&input.join("events.jsonl"));
    let repeat = env_usize("VSHRED_BENCH_REPEAT").unwrap_or(3);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&input)
        .expect("reads WORK/input")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    inputs.sort();
    let mut timings =
        String::from("dataset\trows\tinput_mb\tvshred_auto_ms\tvshred_given_ms\tarrow_rs_ms\n");
    for path in &inputs {
        let name = path.file_stem().expect("a name").to_string_lossy();
        let text = std::fs::read_to_string(path).expect("reads the input");
        let lines: Vec<&str> = text.lines().collect();
        let mb = text.len() as f64 / 1e6;
        println!("{name}: {} rows, {mb:.2} MB", lines.len());
        let schemas: Vec<ShreddingSchema> = layouts()
            .into_iter()
            .map(|(label, shred)| {
                vshred_encode(&text, &files.join(format!("{name}.{label}.parquet")), shred)
            })
            .collect();
        let as_type = arrow_rs_type(&schemas[0]);
        let rows = lines.len();
        let row_group_rows = WriteOptions::default().row_group_rows;
        let arrow = arrow_encode(&lines, as_type.as_ref(), row_group_rows, BATCH);
        let arrow_ok = match arrow {
            Ok((written, bytes)) => {
                assert_eq!(written, rows as u64, "arrow-rs wrote every row of {name}");
                let out = files.join(format!("{name}.arrow-rs.parquet"));
                std::fs::write(out, bytes).expect("writes");
                true
            }
            Err(e) => {
                println!("  arrow-rs failed on {name}: {e}");
                false
            }
        };

        let scratch = files.join(format!("{name}.timing.parquet"));
        let given = ShredMode::Schema(schemas[0].clone());
        let mut contenders: Vec<(&str, Run<'_>)> = vec![
            (
                "vshred encode (auto)",
                Box::new(|| {
                    vshred_encode(&text, &scratch, layouts()[0].1.clone());
                    rows
                }),
            ),
            (
                "vshred encode (auto's layout given)",
                Box::new(|| {
                    vshred_encode(&text, &scratch, given.clone());
                    rows
                }),
            ),
        ];
        if arrow_ok {
            contenders.push((
                "arrow-rs encode (auto layout)",
                Box::new(|| {
                    let (_, bytes) = arrow_encode(&lines, as_type.as_ref(), row_group_rows, BATCH)
                        .expect("arrow-rs encoded it before");
                    bytes.len()
                }),
            ));
        }
        let best = race(mb, repeat, contenders);
        std::fs::remove_file(&scratch).expect("removes the scratch file");
        let ms = |i: usize| {
            best.get(i).map_or("-".to_string(), |b| {
                format!("{:.1}", b.wall.as_secs_f64() * 1e3)
            })
        };
        timings += &format!("{name}\t{rows}\t{mb:.3}\t{}\t{}\t{}\n", ms(0), ms(1), ms(2));
    }
    std::fs::write(work.join("encode.tsv"), timings).expect("writes WORK/encode.tsv");
}

/// Encodes `text` as vshred does by default but for `shred`; the Variant
/// column's shredding.
fn vshred_encode(text: &str, out: &Path, shred: ShredMode) -> ShreddingSchema {
    let options = EncodeOptions {
        shred,
        ..EncodeOptions::default()
    };
    let report = encode(&mut text.as_bytes(), out, &options, &mut |_| {})
        .unwrap_or_else(|e| panic!("vshred encodes {}: {e}", out.display()));
    variant_schema(&report.columns)
}

/// The `events` workload, when the input directory lacks it.
fn write_events(path: &Path) {
    if path.exists() {
        return;
    }
    let rows = env_usize("VSHRED_REALDATA_EVENTS_ROWS").unwrap_or(1_000_000);
    let part = path.with_extension("jsonl.part");
    let mut file = std::fs::File::create(&part).expect("creates the events input");
    file.write_all(workload::events(rows, 42).as_bytes())
        .expect("writes the events input");
    std::fs::rename(&part, path).expect("renames the events input");
}
