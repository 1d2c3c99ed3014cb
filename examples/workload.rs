//! Writes the benchmark workloads as JSON Lines, to reproduce the figures
//! in `benches/README.md` from the command line (`vshred encode`, `get`,
//! `report`):
//!
//! ```sh
//! cargo run --release --example workload -- seed 1000000 > seed.jsonl
//! cargo run --release --example workload -- events 1000000 > events.jsonl
//! cargo run --release --example workload -- drift 200000 > drift.jsonl
//! ```
//!
//! Generated from seed 42, as in the benches: the same bytes.

#[path = "../benches/workload/mod.rs"]
mod workload;

use std::io::Write;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let generate: fn(usize, u64) -> String = match args.first().map(String::as_str) {
        Some("seed") => workload::seed,
        Some("events") => workload::events,
        Some("drift") => workload::drift,
        _ => usage(),
    };
    let Some(rows) = args.get(1).and_then(|r| r.parse().ok()) else {
        usage()
    };
    let mut out = std::io::stdout().lock();
    out.write_all(generate(rows, 42).as_bytes())?;
    out.flush()
}

fn usage() -> ! {
    eprintln!("usage: workload seed|events|drift ROWS");
    std::process::exit(2)
}
