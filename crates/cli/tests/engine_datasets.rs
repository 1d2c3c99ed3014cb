//! Datasets that mix files of several writers (issue 12): Spark's and
//! DuckDB's shredded files from `testdata/datasets/engines/`, one arrow-rs
//! writes, and ours (auto, spark, none, FLBA decimals), all of the same
//! rows, read as one. Every answer over the directory must be the answers
//! for each file alone, concatenated in path order.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Fields, Schema};

mod binary;
use binary::{stderr, stdout, vshred_in};

fn engines() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata/datasets/engines")
}

/// Lines `from..to` of the source rows.
fn source_rows(from: usize, to: usize) -> Vec<String> {
    let text = std::fs::read_to_string(engines().join("rows.jsonl"))
        .expect("testdata/datasets/engines/rows.jsonl (see its README.md)");
    text.lines()
        .skip(from)
        .take(to - from)
        .map(str::to_owned)
        .collect()
}

/// Encodes source rows `from..to` into `dir/name` with `args`.
fn ours(dir: &Path, name: &str, from: usize, to: usize, args: &[&str]) {
    let input = dir.join(format!("{name}.jsonl"));
    std::fs::write(&input, source_rows(from, to).join("\n") + "\n").unwrap();
    let output = dir.join("ds").join(name);
    let mut all = vec![
        "encode",
        input.to_str().unwrap(),
        output.to_str().unwrap(),
        "--variant-field",
        "v",
    ];
    all.extend_from_slice(args);
    let out = vshred_in(dir, &all);
    assert!(out.status.success(), "{name}: {}", stderr(&out));
}

/// Source rows `from..to` as arrow-rs writes them: `json_to_variant` of
/// each line's `v`, `shred_variant` into a layout of its choosing, and the
/// parquet crate's `ArrowWriter`, beside an `id` column.
fn arrow_rs(dir: &Path, name: &str, from: usize, to: usize) {
    let (ids, values): (Vec<i64>, Vec<String>) = source_rows(from, to)
        .iter()
        .map(|line| {
            // `{"id":N,"v":{...}}`: the text of `v` as it is, so that no
            // digit of a decimal goes through a double.
            let (id, v) = line.split_once(",\"v\":").expect("an id, then v");
            let id: i64 = id.trim_start_matches("{\"id\":").parse().expect("an id");
            (id, v[..v.len() - 1].to_string())
        })
        .unzip();
    let strings: ArrayRef = Arc::new(StringArray::from(values));
    let variants = parquet_variant_compute::json_to_variant(&strings).expect("parses");
    let slot = |name: &str, t: DataType| Field::new(name, t, true);
    let layout = DataType::Struct(Fields::from(vec![
        slot("n", DataType::Int64),
        slot("ok", DataType::Boolean),
        slot(
            "user",
            DataType::Struct(Fields::from(vec![
                slot("id", DataType::Int64),
                slot("name", DataType::Utf8),
            ])),
        ),
    ]));
    let shredded = parquet_variant_compute::shred_variant(&variants, &layout).expect("shreds");
    let column: ArrayRef = Arc::new(shredded.into_inner());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", column.data_type().clone(), true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(ids)), column],
    )
    .unwrap();
    let file = std::fs::File::create(dir.join("ds").join(name)).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// A directory `ds` of overlapping slices of the source rows, each written
/// by another writer or layout, interleaved in path order; their names in
/// that order.
fn mixed(dir: &Path) -> Vec<String> {
    std::fs::create_dir(dir.join("ds")).unwrap();
    let copy = |from: &str, to: &str| {
        std::fs::copy(engines().join(from), dir.join("ds").join(to)).unwrap();
    };
    // 40 rows are too few for `auto` to shred: it stays unshredded, as
    // `none` is; `spark` shreds whatever the size.
    ours(dir, "a-ours-auto.parquet", 0, 40, &[]);
    copy("spark.parquet", "b-spark.parquet");
    ours(dir, "c-ours-spark.parquet", 0, 20, &["--shred", "spark"]);
    copy("duckdb.parquet", "d-duckdb.parquet");
    ours(dir, "e-ours-none.parquet", 20, 40, &["--shred", "none"]);
    copy("spark-legacy.parquet", "f-spark-legacy.parquet");
    ours(
        dir,
        "g-ours-flba.parquet",
        10,
        30,
        &["--shred", "spark", "--decimal", "flba"],
    );
    arrow_rs(dir, "h-arrow-rs.parquet", 5, 25);
    let mut names: Vec<String> = std::fs::read_dir(dir.join("ds"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `vshred ARGS` with `input` first after the command; its stdout, which
/// must be a success.
fn run(dir: &Path, command: &str, input: &str, args: &[&str]) -> String {
    let mut all = vec![command, input];
    all.extend_from_slice(args);
    let out = vshred_in(dir, &all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    stdout(&out).to_string()
}

/// Asserts that `vshred COMMAND ds ARGS` prints what it prints for each
/// file alone, concatenated in path order; the text.
fn same_as_each_alone(dir: &Path, files: &[String], command: &str, args: &[&str]) -> String {
    let whole = run(dir, command, "ds", args);
    let alone: String = files
        .iter()
        .map(|f| run(dir, command, &format!("ds/{f}"), args))
        .collect();
    assert_eq!(whole, alone, "{command} {args:?}");
    whole
}

#[test]
fn cat_of_a_mixed_directory_is_cat_of_each_file_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let files = mixed(dir.path());
    assert_eq!(files.len(), 8);
    let text = same_as_each_alone(dir.path(), &files, "cat", &[]);
    // 40 + 30 + 20 + 30 + 20 + 30 + 20 + 20 rows.
    assert_eq!(text.lines().count(), 210);
    // Row 10 from each file that has it: DuckDB and arrow-rs parse the
    // price as a double, Spark and vshred as a decimal, scale kept.
    let row_10: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("{\"id\":10,"))
        .collect();
    let decimal = r#"{"id":10,"v":{"n":"many","ok":true,"price":20.70,"tags":[],"user":{"id":1010,"name":"u-10"}}}"#;
    let double = r#"{"id":10,"v":{"n":"many","ok":true,"price":20.7,"tags":[],"user":{"id":1010,"name":"u-10"}}}"#;
    assert_eq!(
        row_10,
        [decimal, decimal, decimal, double, decimal, decimal, double]
    );
}

#[test]
fn get_over_a_mixed_directory_is_get_of_each_file_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let files = mixed(dir.path());
    let ids = same_as_each_alone(dir.path(), &files, "get", &["$.user.id", "--as", "int64"]);
    // Null where a row has no user (rows 5, 16, 27, 38): 4 + 3 + 2 + 3 +
    // 2 + 3 + 2 + 2 times over the slices, whatever the file.
    assert_eq!(ids.lines().filter(|l| *l == "null").count(), 21, "{ids}");
    same_as_each_alone(dir.path(), &files, "get", &["$.price"]);
    same_as_each_alone(dir.path(), &files, "get", &["$.tags", "--as", "variant"]);
    let filtered = same_as_each_alone(
        dir.path(),
        &files,
        "get",
        &[
            "$.n",
            "--as",
            "int64",
            "--with",
            "id",
            "--where",
            "$.user.id >= 1030 and $.ok",
        ],
    );
    assert!(filtered.contains("{\"id\":30,\"$.n\":90}\n"), "{filtered}");
}

#[test]
fn schema_of_a_mixed_directory_shows_each_writers_layout() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let text = run(dir.path(), "schema", "ds", &[]);
    assert!(
        text.starts_with("8 files, 210 rows, 8 row groups\n"),
        "{text}"
    );
    let path = |p: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(p))
            .unwrap_or_else(|| panic!("no {p} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Unshredded in our auto and none files; arrow-rs does not shred it.
    // 30 + 20 + 30 + 30 + 20 rows.
    assert_eq!(
        path("$.price"),
        "$.price decimal(18,2) INT64 (2), double (1), decimal(18,2) FLBA(8) (2) 3 100.0% (130/130)"
    );
    // Spark and our spark preset leave `$.n` (integers and strings) in
    // `value`; DuckDB and arrow-rs type it, and only arrow-rs puts its
    // small integers in `typed_value`: 17 of its 20 rows (3 are "many").
    assert_eq!(path("$.n"), "$.n int64 (2) 6 34.0% (17/50)");
    // Two elements in each row but every fifth: 48 + 32 + 48 + 48 + 32 in
    // the five files that shred the tags.
    assert_eq!(path("$.tags[*]"), "$.tags[*] string (5) 3 100.0% (208/208)");
}
