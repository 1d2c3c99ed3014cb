//! `encode` spreads batches of lines over encoding threads: the file keeps
//! the input order, and bad lines are reported as if read one by one (the
//! earliest fails the run, or all are counted and the earliest named).

use vshred::Position;
#[path = "../benches/workload/mod.rs"]
mod workload;

use vshred::encode::{EncodeOptions, encode};
use vshred::parquet::ParquetFile;

/// Lines `{"id":N}` for N in 1..=rows, except `bad` line numbers, which
/// are cut short.
fn input(rows: u64, bad: &[u64]) -> String {
    (1..=rows)
        .map(|n| match bad.contains(&n) {
            true => format!("{{\"id\":{n}\n"),
            false => format!("{{\"id\":{n}}}\n"),
        })
        .collect()
}

/// Small batches and sample, so that the lines pass through many batches
/// and every encoding thread.
fn options(skip_bad_lines: bool) -> EncodeOptions {
    EncodeOptions {
        batch_rows: 3,
        sample_rows: 4,
        skip_bad_lines,
        ..EncodeOptions::default()
    }
}

fn ids(path: &std::path::Path) -> Vec<u64> {
    let mut text = Vec::new();
    let file = ParquetFile::open(path).unwrap();
    file.json_lines(None, &vshred::parquet::ScanOptions::new(5), |chunk| {
        text.extend_from_slice(&chunk);
        Ok(())
    })
    .unwrap();
    String::from_utf8(text)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["v"]["id"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn rows_keep_the_input_order_across_encoding_threads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let text = input(500, &[]);
    let report = encode(&mut text.as_bytes(), &out, &options(false), &mut |_| {}).unwrap();
    assert_eq!(report.written.rows, 500);
    assert_eq!(ids(&out), (1..=500).collect::<Vec<_>>());
}

/// Long lines are encoded in batches of 64 MiB of text, not of 8,192
/// lines (whose values overflowed an Arrow array's 2 GiB), but the sample
/// that chooses the columns is still `sample_rows` lines: a field first
/// met past the first batch's lines is a column, and every row is there.
#[test]
fn a_sample_of_long_lines_is_whole_and_encoded_a_batch_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let pad = "p".repeat(20_000);
    let text: String = (0..4000)
        .map(|i| match i < 3400 {
            true => format!("{{\"pad\":\"{pad}\",\"x\":{i}}}\n"),
            false => format!("{{\"pad\":\"{pad}\",\"y\":{i}}}\n"),
        })
        .collect();
    let options = EncodeOptions {
        variant_fields: vec!["pad".into()],
        ..EncodeOptions::default()
    };
    let report = encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap();
    assert_eq!(report.written.rows, 4000);
    let file = ParquetFile::open(&out).unwrap();
    let names: Vec<String> = file
        .arrow_schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["pad", "x", "y"]);
}

/// A top-level field that no sampled line has is valid JSON that the
/// columns do not hold, as a value of another type than its column is,
/// not "invalid JSON"; the error names the line and the field.
#[test]
fn a_field_first_met_after_the_sample_is_a_line_its_columns_do_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    for (late, says) in [
        (
            r#"{"v":1,"a":1,"b":2}"#,
            "field \"b\" was not in the sample lines",
        ),
        (r#"{"v":1,"a":"x"}"#, "field \"a\" is a column of int64"),
    ] {
        // Past the sample's 4,096 lines.
        let text = format!("{}{late}\n", "{\"v\":1,\"a\":1}\n".repeat(5000));
        let options = EncodeOptions {
            variant_fields: vec!["v".into()],
            ..EncodeOptions::default()
        };
        let e = encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap_err();
        assert_eq!(e.kind(), vshred::ErrorKind::ColumnMismatch, "{e}");
        let message = e.to_string();
        assert!(
            message.starts_with("valid JSON that its columns do not hold at row 5000, line 5001")
                && message.contains(says),
            "{message}"
        );
    }
}

#[test]
fn the_earliest_bad_line_fails_the_run_whichever_thread_meets_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    // Later bad lines sit in batches that other threads may finish first.
    let text = input(300, &[151, 152, 250, 299]);
    let e = encode(&mut text.as_bytes(), &out, &options(false), &mut |_| {}).unwrap_err();
    match e.position() {
        Some(Position::Json { line, .. }) => assert_eq!(line, 151, "{e}"),
        other => panic!("no line in {e} ({other:?})"),
    }
    assert!(!out.exists(), "no partial file");
}

#[test]
fn a_bad_line_read_before_a_read_error_is_the_error_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    // Past the sample (4096 lines), read whole before any is encoded.
    let text = input(6000, &[5499]);
    // The input fails to read after line 5500, while the batch of line
    // 5499 is still being encoded.
    let readable = text.lines().take(5500).map(|l| l.len() + 1).sum::<usize>();
    let mut reader = std::io::BufReader::with_capacity(
        64,
        std::io::Read::chain(
            &text.as_bytes()[..readable],
            FailingRead("the disk went away"),
        ),
    );
    let e = encode(&mut reader, &out, &options(false), &mut |_| {}).unwrap_err();
    match e.position() {
        Some(Position::Json { line, .. }) => assert_eq!(line, 5499, "{e}"),
        other => panic!("no line in {e} ({other:?})"),
    }
    // Without the bad line, the read error is the one.
    let text = input(6000, &[]);
    let mut reader = std::io::BufReader::with_capacity(
        64,
        std::io::Read::chain(&text.as_bytes()[..readable], FailingRead("gone")),
    );
    let e = encode(&mut reader, &out, &options(false), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("reading input: gone"), "{e}");
    assert!(!out.exists(), "no partial file");
}

/// A reader that fails.
struct FailingRead(&'static str);

impl std::io::Read for FailingRead {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other(self.0))
    }
}

#[test]
fn skipped_bad_lines_are_all_counted_and_the_earliest_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    // Line 2 is in the sample (read twice, counted once).
    let bad = [2, 151, 152, 250, 299];
    let text = input(300, &bad);
    let report = encode(&mut text.as_bytes(), &out, &options(true), &mut |_| {}).unwrap();
    assert_eq!(report.lines.bad_lines, bad.len() as u64);
    let first = report.lines.first_bad_line.unwrap();
    assert!(first.contains("line 2"), "{first}");
    let want: Vec<u64> = (1..=300).filter(|n| !bad.contains(n)).collect();
    assert_eq!(ids(&out), want);
}

fn file_size(text: &str, shred: vshred::encode::ShredMode) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let options = EncodeOptions {
        shred,
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &out, &options, &mut |_| {})
        .unwrap()
        .written
        .bytes
}

#[test]
fn default_inference_is_no_larger_than_the_spark_preset_on_unique_keys() {
    use vshred::encode::ShredMode;
    use vshred::infer::{InferOptions, Preset};
    // The bench's event rows: unique ids and session keys, sparse fields.
    let text = workload::events(20_000, 42);
    let ours = file_size(&text, ShredMode::Infer(InferOptions::default()));
    let spark = file_size(&text, ShredMode::Infer(InferOptions::new(Preset::Spark)));
    let none = file_size(&text, ShredMode::None);
    assert!(ours * 100 <= spark * 101, "default {ours} vs spark {spark}");
    assert!(ours < none, "default {ours} vs unshredded {none}");
}

/// The compressed bytes of each leaf of `text` encoded with `compression`
/// and `shred`.
fn leaf_sizes(text: &str, compression: &str, shred: &str) -> Vec<(String, u64)> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let mut options = EncodeOptions {
        variant_fields: vec!["v".into()],
        shred: vshred::encode::ShredMode::from_choice(shred, Default::default()).unwrap(),
        ..EncodeOptions::default()
    };
    options.write.compression = compression.parse().unwrap();
    encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap();
    let file = ParquetFile::open(&out).unwrap();
    file.leaf_sizes()
        .into_iter()
        .map(|leaf| (leaf.path.join("."), leaf.compressed))
        .collect()
}

#[test]
fn the_default_zstd_packs_variant_bytes_harder_and_typed_leaves_not() {
    let seed = workload::seed(20_000, 42);
    let unshredded = leaf_sizes(&seed, "zstd", "none");
    let unshredded_at_1 = leaf_sizes(&seed, "zstd:1", "none");
    let value = |leaves: &[(String, u64)]| leaves.iter().find(|(p, _)| p == "v.value").unwrap().1;
    assert!(
        value(&unshredded) * 100 < value(&unshredded_at_1) * 95,
        "{unshredded:?} against {unshredded_at_1:?} at level 1"
    );
    let ordinary = |leaves: &[(String, u64)]| -> Vec<(String, u64)> {
        leaves
            .iter()
            .filter(|(p, _)| !p.starts_with("v."))
            .cloned()
            .collect()
    };
    assert_eq!(ordinary(&unshredded), ordinary(&unshredded_at_1));
    // Shredded events, each row one Variant: Variant bytes (`metadata` and
    // the residual `value` leaves) smaller, typed leaves the same bytes.
    let events: String = workload::events(20_000, 42)
        .lines()
        .map(|row| format!("{{\"v\":{row}}}\n"))
        .collect();
    let shredded = leaf_sizes(&events, "zstd", "auto");
    let shredded_at_1 = leaf_sizes(&events, "zstd:1", "auto");
    let leaves = |leaves: &[(String, u64)], variant_bytes: bool| -> Vec<(String, u64)> {
        leaves
            .iter()
            .filter(|(p, _)| (p.ends_with(".value") || p.ends_with(".metadata")) == variant_bytes)
            .cloned()
            .collect()
    };
    assert_eq!(leaves(&shredded, false), leaves(&shredded_at_1, false));
    let total = |leaves: Vec<(String, u64)>| leaves.iter().map(|(_, b)| b).sum::<u64>();
    let (residuals, residuals_at_1) = (
        total(leaves(&shredded, true)),
        total(leaves(&shredded_at_1, true)),
    );
    assert!(
        residuals < residuals_at_1,
        "Variant bytes {residuals} against {residuals_at_1} at level 1"
    );
}

#[test]
fn a_layout_given_in_place_may_be_longer_than_a_file_name_or_hold_a_slash() {
    let fields: Vec<String> = (0..40)
        .map(|i| format!("\"field_number_{i}\":\"int64\""))
        .collect();
    for layout in [
        format!("{{{}}}", fields.join(",")),
        r#"{"a/b":"string"}"#.to_string(),
    ] {
        let mode = vshred::encode::ShredMode::from_choice(&layout, Default::default());
        assert!(
            matches!(mode, Ok(vshred::encode::ShredMode::Schema(_))),
            "{} bytes: {mode:?}",
            layout.len()
        );
    }
}

/// A dataset's file whose sample proposes the layout of a file before it,
/// but whose values price another encoding, is written with its own: ids
/// all distinct in the first file (no dictionary), of five values in the
/// second (a dictionary).
#[test]
fn each_file_of_a_dataset_gets_the_encodings_its_own_values_price() {
    let distinct =
        (0..20_000u64).map(|i| format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    let few = (0..20_000u64).map(|i| format!("k{}", i % 5));
    let text: String = distinct
        .chain(few)
        .enumerate()
        .map(|(n, id)| format!("{{\"n\":{n},\"id\":\"{id}\"}}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let split = vshred::encode::DatasetSplit {
        max_file_rows: Some(20_000),
        ..Default::default()
    };
    let report = vshred::encode::encode_dataset(
        &mut text.as_bytes(),
        &dir.path().join("out"),
        &EncodeOptions::default(),
        &split,
        &mut |_| {},
    )
    .unwrap();
    let dictionary = |file: &std::path::Path| {
        let leaves = ParquetFile::open(file).unwrap().leaf_sizes();
        let id = leaves
            .iter()
            .find(|l| l.path.join(".") == "v.typed_value.id.typed_value")
            .unwrap_or_else(|| panic!("{leaves:?}"));
        id.encodings.iter().any(|e| e == "RLE_DICTIONARY")
    };
    let files: Vec<_> = report.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(files.len(), 2);
    assert_eq!(
        (dictionary(&files[0]), dictionary(&files[1])),
        (false, true)
    );
}

/// A layout nesting deeper than a file may for vshred to read it back
/// (values nested 100 arrays deep, inference let go 100 levels down) is
/// refused before a file is written, and nothing is left behind.
#[test]
fn a_layout_too_deep_to_read_back_is_refused() {
    use vshred::encode::ShredMode;
    use vshred::infer::InferOptions;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deep.parquet");
    let value = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let text = format!("{value}\n{value}\n");
    let options = EncodeOptions {
        shred: ShredMode::Infer(InferOptions::default().with_max_depth(100)),
        ..EncodeOptions::default()
    };
    let error = encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("more than the 256 a file may for vshred to read it back"),
        "{error}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Inference's own depth, 50, writes a file that reads back.
    let options = EncodeOptions::default();
    encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap();
    assert_eq!(
        ParquetFile::open(&out)
            .unwrap()
            .metadata()
            .file_metadata()
            .num_rows(),
        2
    );
}
