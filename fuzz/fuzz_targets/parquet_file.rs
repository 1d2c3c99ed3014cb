//! Untrusted Parquet files: every read path the command offers (`cat`'s
//! full reconstruction, `get` with a filter that reaches the statistics,
//! bloom filters and page index) must return an error or a result, never
//! panic, hang or run out of memory. The parquet crate's own panics on
//! corrupt pages are caught and turned into errors by `ParquetFile`, so a
//! panic that reaches this harness is ours. The file is also read as a
//! dataset (twice over), through the dataset's passes and executor, and
//! its Variant columns exploded.

#![no_main]

use std::path::PathBuf;
use std::sync::Once;

use arrow::array::AsArray;
use libfuzzer_sys::fuzz_target;
use vshred::dataset::Dataset;
use vshred::explode::variant_explode_outer;
use vshred::parquet::{GetRequest, ParquetFile, ScanOptions};
use vshred::shred::ShreddingSchema;
use vshred::unshred::JsonRows;

fuzz_target!(|data: &[u8]| {
    static QUIET: Once = Once::new();
    // libFuzzer's hook aborts on every panic, even one `ParquetFile` catches
    // and reports as an error; a panic that escapes still aborts, as
    // libfuzzer-sys aborts when the target unwinds.
    QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    let path = scratch_file();
    std::fs::write(&path, data).expect("the scratch file is writable");
    let _ = read_everything(&path);
});

/// One file per fuzzing process, rewritten for each input: in /dev/shm
/// when there is one, so that it stays in memory.
fn scratch_file() -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("vshred-fuzz-{}.parquet", std::process::id()))
}

fn read_everything(path: &std::path::Path) -> vshred::Result<()> {
    let file = ParquetFile::open(path)?;
    let variants = file.variant_columns();
    let mut text = Vec::new();
    for batch in file.batches(64)? {
        let batch = batch?;
        let rows = JsonRows::try_new(&batch, &variants)?;
        for row in 0..batch.num_rows() {
            text.clear();
            rows.write_row(row, &mut text)?;
        }
        // Split where its columns store each row, as SQL's scan does.
        for name in &variants {
            if let Some(column) = batch.column_by_name(name).and_then(|c| c.as_struct_opt()) {
                variant_explode_outer(column)?;
            }
        }
    }
    let Some(column) = variants.first() else {
        return Ok(());
    };
    for (path, filter) in [
        ("$", "$.id > 2"),
        ("$.a", "$.a == \"x\""),
        ("$[0]", "$ < 5"),
        ("$.b", "($.a == 1 or $.b in (1, 2)) and not $.c is null"),
    ] {
        let request = GetRequest {
            column: column.clone(),
            path: path.parse()?,
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: Some(filter.parse()?),
        };
        file.get(&request, 64, |_| Ok(()))?;
    }
    // The same file twice as a dataset: footers kept between the passes,
    // one scan over both on the worker pool.
    let dataset = Dataset::from_files(vec![path.to_path_buf(), path.to_path_buf()]);
    let options = ScanOptions::new(64);
    dataset.json_lines(None, &options, |_| Ok(()))?;
    let request = GetRequest {
        column: column.clone(),
        path: "$.a".parse()?,
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: Some("$.id > 2 or $.a is null".parse()?),
    };
    dataset.get_with(&request, &[], &options, |_, _| Ok(()))?;
    dataset.schema()?;
    Ok(())
}
