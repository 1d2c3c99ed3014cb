//! `COPY ... TO` through a real DataFusion session: Variant columns are
//! written shredded by our inference (as `encode` shreds the same lines),
//! annotated VARIANT, and read back as the rows they came from; options
//! and errors as documented, and no partial file on failure.

use std::path::{Path, PathBuf};

use arrow::array::{Array, AsArray, RecordBatch};
use datafusion::prelude::SessionContext;
use vshred::encode::{EncodeOptions, encode};
use vshred::parquet::ParquetFile;
use vshred::shred::ShreddingSchema;

/// `rows` event lines: an id, a kind of 3, a price, a nested user; keys
/// in name order, as a Variant object renders them.
fn events(rows: usize) -> Vec<String> {
    (0..rows)
        .map(|i| {
            format!(
                r#"{{"id":{i},"kind":"k{}","price":{}.{:02},"user":{{"age":{},"name":"u{}"}}}}"#,
                i % 3,
                i % 100,
                i % 100,
                20 + i % 50,
                i % 17,
            )
        })
        .collect()
}

/// The first line where two runs of lines differ, if any (the runs are
/// too long to print whole).
fn first_difference(got: &[String], expected: &[String]) -> Option<String> {
    if let Some(i) = (0..got.len().min(expected.len())).find(|&i| got[i] != expected[i]) {
        return Some(format!("line {i}: {} instead of {}", got[i], expected[i]));
    }
    (got.len() != expected.len())
        .then(|| format!("{} lines instead of {}", got.len(), expected.len()))
}

fn write_lines(dir: &Path, lines: &[String]) -> PathBuf {
    let path = dir.join("in.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

/// Runs `sql` as `vshred sql` does, through
/// [`statements`](vshred_datafusion::statements).
async fn run_statements(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<()> {
    use vshred_datafusion::statements::{execute, parse_statements};
    for statement in parse_statements(ctx, sql)? {
        execute(ctx, statement).await?.collect().await?;
    }
    Ok(())
}

async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The strings of a one-column result, in order.
fn strings(batches: &[RecordBatch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8).unwrap();
            let c = c.as_string::<i32>().clone();
            (0..c.len())
                .map(move |i| c.value(i).to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Checks that the rows of the file or directory `table`, by `$.id`, are
/// `lines`.
async fn assert_reads_back(ctx: &SessionContext, table: &str, lines: &[String]) {
    let sql = format!("SELECT to_json(v) FROM '{table}' ORDER BY variant_get(v, '$.id', 'bigint')");
    assert_eq!(
        first_difference(&strings(&query(ctx, &sql).await), lines),
        None
    );
}

/// The layout of Variant column `name` in a Parquet file.
fn layout(file: &Path, name: &str) -> String {
    let file = ParquetFile::open(file).unwrap();
    let field = file.arrow_schema().field_with_name(name).unwrap().clone();
    ShreddingSchema::from_column_type(field.data_type())
        .unwrap_or_else(|| panic!("{name} is not a Variant column: {field:?}"))
        .to_string()
}

/// The Parquet files under `dir`, recursively.
fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(parquet_files(&path));
        } else if path.extension().is_some_and(|e| e == "parquet") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[tokio::test]
async fn copy_from_read_jsonl_is_encode_in_sql() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(3000);
    let input = write_lines(dir.path(), &lines);
    let out = dir.path().join("out.parquet");
    let ctx = vshred_datafusion::context(Default::default());
    let copied = query(
        &ctx,
        &format!(
            "COPY (SELECT * FROM read_jsonl('{}')) TO '{}'",
            input.display(),
            out.display()
        ),
    )
    .await;
    assert_eq!(strings(&copied), ["3000"], "COPY returns the rows written");

    // The layout `encode` infers from the same lines.
    let encoded = dir.path().join("encoded.parquet");
    let text = lines.join("\n");
    encode(
        &mut text.as_bytes(),
        &encoded,
        &EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(layout(&out, "v"), layout(&encoded, "v"));
    assert!(
        layout(&out, "v").contains(r#""user":{"#),
        "{}",
        layout(&out, "v")
    );
    let v = parquet_schema(&out).root_schema().get_fields()[0].clone();
    assert!(
        annotated_variant(&v),
        "annotated VARIANT: {:?}",
        v.get_basic_info()
    );

    assert_reads_back(&ctx, &out.display().to_string(), &lines).await;
}

/// The Parquet schema in a file's footer.
fn parquet_schema(file: &Path) -> parquet::schema::types::SchemaDescPtr {
    let bytes = bytes::Bytes::from(std::fs::read(file).unwrap());
    let reader = parquet::file::serialized_reader::SerializedFileReader::new(bytes).unwrap();
    parquet::file::reader::FileReader::metadata(&reader)
        .file_metadata()
        .schema_descr_ptr()
}

fn annotated_variant(group: &parquet::schema::types::Type) -> bool {
    matches!(
        group.get_basic_info().logical_type_ref(),
        Some(parquet::basic::LogicalType::Variant { .. })
    )
}

#[tokio::test]
async fn variants_nested_in_a_struct_or_a_list_are_written_annotated_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(100);
    let input = write_lines(dir.path(), &lines);
    let out = dir.path().join("nested.parquet");
    let ctx = vshred_datafusion::context(Default::default());
    query(
        &ctx,
        &format!(
            "COPY (SELECT named_struct('v', v, 'n', 1) AS t, [v] AS l FROM read_jsonl('{}')) TO '{}'",
            input.display(),
            out.display()
        ),
    )
    .await;
    // As other engines tell a Variant: t.v and l's element annotated.
    let schema = parquet_schema(&out);
    let fields = schema.root_schema().get_fields();
    let t_v = &fields[0].get_fields()[0];
    let element = &fields[1].get_fields()[0].get_fields()[0];
    for group in [t_v, element] {
        assert!(
            annotated_variant(group),
            "annotated VARIANT: {:?}",
            group.get_basic_info()
        );
    }
    for value in ["t.v", "l[1]"] {
        let sql = format!(
            "SELECT to_json({value}) FROM '{}' ORDER BY variant_get({value}, '$.id', 'bigint')",
            out.display()
        );
        assert_eq!(
            first_difference(&strings(&query(&ctx, &sql).await), &lines),
            None,
            "{value}"
        );
    }
}

#[tokio::test]
async fn copy_to_a_directory_partitions_as_datafusion_does_and_reads_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = events(600);
    let input = write_lines(dir.path(), &lines);
    let out = dir.path().join("by_kind");
    let ctx = vshred_datafusion::context(Default::default());
    query(
        &ctx,
        &format!(
            "COPY (SELECT variant_get(v, '$.kind', 'string') AS kind, v FROM read_jsonl('{}')) \
             TO '{}/' STORED AS PARQUET PARTITIONED BY (kind) OPTIONS (shred 'spark')",
            input.display(),
            out.display()
        ),
    )
    .await;
    let files = parquet_files(&out);
    let partitions: std::collections::BTreeSet<_> = files
        .iter()
        .map(|f| {
            f.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        partitions.into_iter().collect::<Vec<_>>(),
        ["kind=k0", "kind=k1", "kind=k2"]
    );
    for file in &files {
        assert!(
            layout(file, "v").contains(r#""id":"int64""#),
            "Spark's types: {}",
            layout(file, "v")
        );
    }
    assert_reads_back(&ctx, &format!("{}/", out.display()), &lines).await;
}

/// A null in a `PARTITIONED BY` column is refused, with or without
/// Variant columns, and nothing is written: DataFusion 55 wrote it under
/// `n=0`, which reads back as 0.
#[tokio::test]
async fn a_partition_value_that_would_not_read_back_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = vshred_datafusion::context(Default::default());
    for (name, columns) in [("variant", "n, parse_json('{}') AS v"), ("plain", "n, id")] {
        let out = dir.path().join(name);
        let sql = format!(
            "COPY (SELECT {columns} FROM (VALUES (1, 1), (NULL, 2), (3, 3)) t(n, id)) \
             TO '{}/' STORED AS PARQUET PARTITIONED BY (n)",
            out.display()
        );
        let e = run(&ctx, &sql).await.unwrap_err().to_string();
        assert!(
            e.contains("COPY ... PARTITIONED BY (n): n is null in some row"),
            "{name}: {e}"
        );
        assert!(!out.exists(), "{name}: {:?}", parquet_files(&out));
        // Without the nulls, written.
        run(&ctx, &sql.replace("(NULL, 2), ", "")).await.unwrap();
        assert_eq!(parquet_files(&out).len(), 2, "{name}");
    }
    // Texts that would not read back as themselves, or not in DuckDB.
    for (text, why) in [
        ("", "the empty string"),
        ("__HIVE_DEFAULT_PARTITION__", "Hive's name for null"),
        ("x=y", "a text with '='"),
    ] {
        let out = dir.path().join("texts");
        let sql = format!(
            "COPY (SELECT k, id FROM (VALUES ('a', 1), ('{text}', 2)) t(k, id)) TO '{}/' STORED AS PARQUET PARTITIONED BY (k)",
            out.display()
        );
        let e = run(&ctx, &sql).await.unwrap_err().to_string();
        assert!(e.contains(&format!("k is {why}")), "{text}: {e}");
        assert!(!out.exists(), "{text}");
    }
}

#[tokio::test]
async fn copy_options_choose_the_layout_decimals_and_bloom_filters() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), &events(3000));
    let ctx = vshred_datafusion::context(Default::default());
    let copy = |name: &str, options: &str| {
        let out = dir.path().join(name);
        let sql = format!(
            "COPY (SELECT v FROM read_jsonl('{}')) TO '{}' OPTIONS ({options})",
            input.display(),
            out.display()
        );
        (out, sql)
    };

    let (none, sql) = copy("none.parquet", "shred 'none'");
    query(&ctx, &sql).await;
    assert_eq!(layout(&none, "v"), r#""variant""#);

    let schema = dir.path().join("schema.json");
    std::fs::write(&schema, r#"{"id":"int64","price":"decimal(9,2)"}"#).unwrap();
    let (flba, sql) = copy(
        "flba.parquet",
        &format!(
            "shred '{}', decimal 'flba', bloom_filter '$.id', compression 'snappy', max_row_group_size 1000",
            schema.display()
        ),
    );
    query(&ctx, &sql).await;
    assert_eq!(
        layout(&flba, "v"),
        r#"{"id":"int64","price":"decimal(9,2)"}"#
    );
    let file = ParquetFile::open(&flba).unwrap();
    let metadata = file.metadata();
    assert_eq!(metadata.num_row_groups(), 3, "max_row_group_size");
    let group = metadata.row_group(0);
    let leaf = |path: &str| {
        group
            .columns()
            .iter()
            .find(|c| c.column_path().string() == path)
            .unwrap_or_else(|| panic!("no leaf {path}"))
    };
    assert_eq!(
        leaf("v.typed_value.price.typed_value")
            .column_descr()
            .physical_type(),
        parquet::basic::Type::FIXED_LEN_BYTE_ARRAY
    );
    assert!(
        leaf("v.typed_value.id.typed_value")
            .bloom_filter_offset()
            .is_some()
    );
    assert!(
        leaf("v.typed_value.price.typed_value")
            .bloom_filter_offset()
            .is_none()
    );
    assert_eq!(
        leaf("v.metadata").compression(),
        parquet::basic::Compression::SNAPPY
    );
}

#[tokio::test]
async fn bad_copies_fail_with_the_option_or_row_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), &events(10));
    let ctx = vshred_datafusion::context(Default::default());
    let out = dir.path().join("out.parquet");
    for (options, expected) in [
        (
            "shred 'sprak'",
            "COPY option shred: \"sprak\" is not a preset (auto, spark, none) nor a schema file; did you mean spark?",
        ),
        (
            "decimal 'float'",
            "COPY option decimal: \"float\" is not int or flba",
        ),
        ("sample_rows '0'", "COPY option sample_rows"),
        (
            "compression 'gzip(6)'",
            "COPY option compression: \"gzip(6)\": not written with Variant columns",
        ),
        (
            "compression 'zstd(99)'",
            "COPY option compression: \"zstd(99)\": zstd level \"99\" is not a whole number from 1 to 22",
        ),
        (
            "dictionary_enabled 'false'",
            "COPY option dictionary_enabled is DataFusion's Parquet writer's",
        ),
        (
            "bloom_filter '$.nope'",
            "bloom filter \"$.nope\": not shredded in v",
        ),
    ] {
        let sql = format!(
            "COPY (SELECT v FROM read_jsonl('{}')) TO '{}' OPTIONS (shred 'spark', {options})",
            input.display(),
            out.display()
        );
        // The first `shred` is overridden by a later one.
        let sql = if options.starts_with("shred") {
            sql.replace("shred 'spark', ", "")
        } else {
            sql
        };
        let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
        assert!(err.contains(expected), "{sql}:\n{err}");
        assert!(!out.exists(), "{sql}: no file");
    }

    // Without Variant columns, ours would go unused: refused too.
    let sql = format!(
        "COPY (SELECT 1 AS x) TO '{}' OPTIONS (shred 'spark')",
        out.display()
    );
    let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
    assert!(
        err.contains("COPY option shred is for Variant columns, and the query has none"),
        "{err}"
    );
    assert!(!out.exists(), "{sql}: no file");

    // A Variant-shaped struct whose value is cut short: row 1 is named.
    let sql = format!(
        "COPY (SELECT named_struct('metadata', X'010000', 'value', v) AS v \
         FROM (VALUES (X'0c01'), (X'0c')) AS t(v)) TO '{}'",
        out.display()
    );
    let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
    assert!(err.contains("at row 1"), "{err}");
    assert!(err.contains("in column v"), "{err}");
    assert!(!out.exists(), "no partial file");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the input is there"
    );
}

/// The query fails after its first batches were written (a value far down
/// does not convert): an existing file at the target stays as it was, and
/// neither a new file nor a directory gets any, and no directory the
/// `COPY` made stays; with Variant columns
/// (vshred's writer) or without (DataFusion's), whether the files are
/// uploaded whole or in parts.
#[tokio::test]
async fn a_copy_whose_query_fails_late_leaves_the_target_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = events(20_000);
    lines.push(r#"{"id":"twenty thousand"}"#.to_string());
    let input = write_lines(dir.path(), &lines);
    let ctx = vshred_datafusion::context(Default::default());
    let existing = dir.path().join("existing.parquet");
    query(
        &ctx,
        &format!("COPY (SELECT 1 AS n) TO '{}'", existing.display()),
    )
    .await;
    let before = std::fs::read(&existing).unwrap();
    // DataFusion's writer uploads a file in parts of this many bytes.
    for part_bytes in ["10485760", "1024"] {
        let set = format!("SET datafusion.execution.objectstore_writer_buffer_size = {part_bytes}");
        run(&ctx, &set).await.unwrap();
        for columns in ["v, ", ""] {
            let targets = [
                "existing.parquet",
                "new.parquet",
                "new_dir/",
                "new_parent/new.parquet",
                "new_a/new_b/",
            ];
            for target in targets {
                let sql = format!(
                    "COPY (SELECT {columns}variant_get(v, '$.id', 'bigint') AS id FROM read_jsonl('{}')) TO '{}/{target}' STORED AS PARQUET",
                    input.display(),
                    dir.path().display()
                );
                let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
                assert!(err.contains("does not convert to int64"), "{sql}: {err}");
            }
        }
    }
    // DataFusion's CSV and JSON writers too (they left the rows before the
    // failure in place of an existing file).
    let texts = [("existing.csv", "n\n1\n"), ("existing.json", "{\"n\":1}\n")];
    for (name, text) in texts {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    for (format, targets) in [
        ("CSV", ["existing.csv", "new.csv", "new_csv/"]),
        ("JSON", ["existing.json", "new.json", "new_json/"]),
    ] {
        for target in targets {
            let sql = format!(
                "COPY (SELECT variant_get(v, '$.id', 'bigint') AS id FROM read_jsonl('{}')) TO '{}/{target}' STORED AS {format}",
                input.display(),
                dir.path().display()
            );
            let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
            assert!(err.contains("does not convert to int64"), "{sql}: {err}");
        }
    }
    // Partitions written into a directory that is there: those the COPY
    // made go (they stayed, empty).
    std::fs::create_dir(dir.path().join("parts")).unwrap();
    std::fs::write(dir.path().join("parts/keep.txt"), "kept").unwrap();
    for format in ["CSV", "PARQUET"] {
        let sql = format!(
            "COPY (SELECT variant_get(v, '$.id', 'bigint') AS id, variant_get(v, '$.id', 'bigint') % 3 AS k FROM read_jsonl('{}')) TO '{}/parts/' STORED AS {format} PARTITIONED BY (k)",
            input.display(),
            dir.path().display()
        );
        let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
        assert!(err.contains("does not convert to int64"), "{sql}: {err}");
        let left: Vec<_> = std::fs::read_dir(dir.path().join("parts"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, ["keep.txt"], "{format}");
    }
    assert!(
        std::fs::read(&existing).unwrap() == before,
        "the existing file was replaced"
    );
    for (name, text) in texts {
        let now = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(now == text, "{name} was replaced");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "existing.csv",
            "existing.json",
            "existing.parquet",
            "in.jsonl",
            "parts"
        ]
    );
}

/// `COPY ... TO` a file that is not Parquet (the input, say) replaces
/// nothing, as `encode` does not.
#[tokio::test]
async fn a_copy_onto_a_file_that_is_not_parquet_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), &events(10));
    let before = std::fs::read(&input).unwrap();
    let ctx = vshred_datafusion::context(Default::default());
    // Variant columns (vshred's writer) or none (DataFusion's).
    for columns in ["*", "to_json(v) AS j"] {
        let sql = format!(
            "COPY (SELECT {columns} FROM read_jsonl('{0}')) TO '{0}' STORED AS PARQUET",
            input.display()
        );
        let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
        assert!(
            err.contains("the COPY target is not a Parquet file, and writing would replace it"),
            "{err}"
        );
        assert!(
            std::fs::read(&input).unwrap() == before,
            "{sql}: the input was replaced"
        );
    }
}

/// A `COPY` run twice into one directory held every row twice: a
/// directory with Parquet files is refused, as `encode` refuses it,
/// whether the columns are Variants or not; one with only files a reader
/// skips is not.
#[tokio::test]
async fn a_copy_into_a_directory_that_holds_parquet_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), &events(10));
    let ctx = vshred_datafusion::context(Default::default());
    for columns in ["*", "to_json(v) AS j"] {
        let out = dir.path().join(format!("out-{}/", columns.len()));
        let sql = format!(
            "COPY (SELECT {columns} FROM read_jsonl('{}')) TO '{}' STORED AS PARQUET",
            input.display(),
            out.display()
        );
        run(&ctx, &sql).await.expect(&sql);
        let written = parquet_files(&out);
        let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
        assert!(
            err.contains("the COPY target holds Parquet files already (such as"),
            "{err}"
        );
        assert_eq!(parquet_files(&out), written, "{sql}: files were added");
    }
    // A target named as a file is a directory when partitioned, and
    // checked as one.
    let partitioned = dir.path().join("by-kind.parquet");
    let sql = format!(
        "COPY (SELECT variant_get(v, '$.kind', 'string') AS kind, v FROM read_jsonl('{}')) \
         TO '{}' STORED AS PARQUET PARTITIONED BY (kind)",
        input.display(),
        partitioned.display()
    );
    run(&ctx, &sql).await.expect(&sql);
    let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
    assert!(
        err.contains("the COPY target holds Parquet files already"),
        "{err}"
    );
    let skipped = dir.path().join("skipped/");
    std::fs::create_dir_all(skipped.join("_temporary")).unwrap();
    std::fs::write(skipped.join("_temporary/part.parquet"), b"").unwrap();
    std::fs::write(skipped.join(".hidden.parquet"), b"").unwrap();
    let sql = format!(
        "COPY (SELECT * FROM read_jsonl('{}')) TO '{}' STORED AS PARQUET",
        input.display(),
        skipped.display()
    );
    run(&ctx, &sql).await.expect(&sql);
    // A `_key=value` directory is read, as Spark reads it: its files count.
    let keyed = dir.path().join("keyed/");
    std::fs::create_dir_all(keyed.join("_k=1")).unwrap();
    std::fs::write(keyed.join("_k=1/part.parquet"), b"").unwrap();
    let sql = format!(
        "COPY (SELECT * FROM read_jsonl('{}')) TO '{}' STORED AS PARQUET",
        input.display(),
        keyed.display()
    );
    let err = run(&ctx, &sql).await.expect_err(&sql).to_string();
    assert!(err.contains("(such as _k=1/part.parquet)"), "{err}");
}

/// Two runs that began one new dataset in one directory at the same time
/// both passed the check when planned, and every row was there twice.
/// The files go into place under the directory's writers' lock, held
/// here while another writer's file appears: the `COPY` fails, and
/// leaves nothing of its own, whether its columns are Variants or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_whose_new_directory_another_writer_filled_meanwhile_fails() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_lines(dir.path(), &events(10));
    let ctx = vshred_datafusion::context(Default::default());
    for columns in ["*", "to_json(v) AS j"] {
        let out = dir.path().join(format!("out-{}", columns.len()));
        std::fs::create_dir(&out).unwrap();
        let held = std::fs::File::open(&out).unwrap();
        held.lock().unwrap();
        let sql = format!(
            "COPY (SELECT {columns} FROM read_jsonl('{}')) TO '{}/' STORED AS PARQUET",
            input.display(),
            out.display()
        );
        let copy = tokio::spawn({
            let (ctx, sql) = (ctx.clone(), sql.clone());
            async move { run(&ctx, &sql).await }
        });
        // Its files are staged under hidden names once it is planned.
        let names = || -> Vec<String> {
            std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        while !names().iter().any(|n| n.starts_with('.')) {
            assert!(!copy.is_finished(), "{sql}: ended before it staged a file");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        std::fs::copy(dir.path().join("in.jsonl"), out.join("theirs.parquet")).unwrap();
        held.unlock().unwrap();
        let err = copy.await.unwrap().expect_err(&sql).to_string();
        assert!(
            err.contains("another writer: another run wrote theirs.parquet here while this one began a new dataset"),
            "{sql}: {err}"
        );
        assert_eq!(names(), ["theirs.parquet"], "{sql}");
    }
}

#[tokio::test]
async fn copy_without_variant_columns_is_datafusion_s_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain.parquet");
    let ctx = vshred_datafusion::context(Default::default());
    query(
        &ctx,
        &format!(
            "COPY (SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(n, s)) TO '{}' OPTIONS (dictionary_enabled 'false')",
            out.display()
        ),
    )
    .await;
    let back = query(
        &ctx,
        &format!("SELECT s FROM '{}' ORDER BY n", out.display()),
    )
    .await;
    assert_eq!(strings(&back), ["a", "b"]);
}

/// A store whose uploads fail once `room` bytes are taken, as a full disk
/// fails them.
#[derive(Debug)]
struct FullStore {
    inner: datafusion::object_store::memory::InMemory,
    room: u64,
}

impl std::fmt::Display for FullStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FullStore")
    }
}

mod full_store {
    use super::FullStore;
    use async_trait::async_trait;
    use datafusion::object_store::path::Path;
    use datafusion::object_store::{
        CopyOptions, Error, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
        ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result, UploadPart,
    };
    use futures::stream::BoxStream;

    #[derive(Debug)]
    struct FullUpload {
        inner: Box<dyn MultipartUpload>,
        left: u64,
    }

    #[async_trait]
    impl MultipartUpload for FullUpload {
        fn put_part(&mut self, data: PutPayload) -> UploadPart {
            let bytes = data.content_length() as u64;
            if bytes > self.left {
                // As a disk's write does: after a while, so that parts are
                // under way when the writer waits for one to end.
                return Box::pin(async {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    Err(Error::Generic {
                        store: "FullStore",
                        source: "No space left on device".into(),
                    })
                });
            }
            self.left -= bytes;
            self.inner.put_part(data)
        }
        async fn complete(&mut self) -> Result<PutResult> {
            self.inner.complete().await
        }
        async fn abort(&mut self) -> Result<()> {
            self.inner.abort().await
        }
    }

    #[async_trait]
    impl ObjectStore for FullStore {
        async fn put_opts(
            &self,
            at: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> Result<PutResult> {
            self.inner.put_opts(at, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            at: &Path,
            opts: PutMultipartOptions,
        ) -> Result<Box<dyn MultipartUpload>> {
            Ok(Box::new(FullUpload {
                inner: self.inner.put_multipart_opts(at, opts).await?,
                left: self.room,
            }))
        }
        async fn get_opts(&self, at: &Path, options: GetOptions) -> Result<GetResult> {
            self.inner.get_opts(at, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, Result<Path>>,
        ) -> BoxStream<'static, Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }
}

/// An upload that fails (a full disk) fails the COPY with its error; the
/// encoder, which waited for the upload to take its next bytes, hung for
/// ever before.
#[tokio::test]
async fn a_copy_whose_upload_fails_ends_with_the_upload_s_error() {
    let dir = tempfile::tempdir().unwrap();
    // Texts with no pattern, uncompressed: megabytes of file.
    let mut state = 1u64;
    let lines: Vec<String> = (0..120_000)
        .map(|i| {
            let text: String = (0..8)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    format!("{state:016x}")
                })
                .collect();
            format!(r#"{{"id":{i},"text":"{text}"}}"#)
        })
        .collect();
    let input = write_lines(dir.path(), &lines);
    let ctx = vshred_datafusion::context(Default::default());
    let full = std::sync::Arc::new(FullStore {
        inner: datafusion::object_store::memory::InMemory::new(),
        room: 0,
    });
    ctx.register_object_store(&url::Url::parse("full://").unwrap(), full);
    run(
        &ctx,
        "SET datafusion.execution.objectstore_writer_buffer_size = 1048576",
    )
    .await
    .unwrap();
    let copy = format!(
        "COPY (SELECT * FROM read_jsonl('{}')) TO 'full:///out.parquet' OPTIONS (compression 'uncompressed')",
        input.display()
    );
    let ended = tokio::time::timeout(std::time::Duration::from_secs(60), run(&ctx, &copy)).await;
    let error = ended.expect("the COPY ended").unwrap_err().to_string();
    assert!(error.contains("No space left on device"), "{error}");
    assert!(error.contains("full:///out.parquet"), "{error}");
}

/// JSON's and CSV's writers would write a Variant's encoding, its
/// metadata and value bytes in hex (CSV refused a struct, in Arrow's
/// words): refused, naming the column and `to_json`, which is written.
#[tokio::test]
async fn a_variant_copied_to_json_or_csv_is_refused_and_its_json_text_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = vshred_datafusion::context(Default::default());
    for (columns, format, column) in [
        ("parse_json('{\"a\":1}') AS v", "json", "v"),
        ("1 AS n, parse_json('1') AS v", "csv", "v"),
        ("named_struct('s', parse_json('1')) AS w", "json", "w"),
    ] {
        let out = dir.path().join(format!("x.{format}"));
        let sql = format!("COPY (SELECT {columns}) TO '{}'", out.display());
        let e = vshred_datafusion::functions::error_message(&run(&ctx, &sql).await.unwrap_err());
        assert_eq!(
            e,
            format!(
                "COPY to {format} would write the Variant column \"{column}\" as its encoding (its metadata and value bytes): write to_json({column}) for its JSON text, or COPY to Parquet"
            )
        );
        assert!(!out.exists(), "{columns}");
    }
    let out = dir.path().join("text.json");
    let sql = format!(
        "COPY (SELECT to_json(parse_json('{{\"a\":1}}')) AS v) TO '{}'",
        out.display()
    );
    query(&ctx, &sql).await;
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "{\"v\":\"{\\\"a\\\":1}\"}\n"
    );
}

/// `PARTITIONED BY` a Variant column is refused, saying to select a value
/// of it, which partitions (DataFusion said its writer did not support a
/// struct); no directory is left.
#[tokio::test]
async fn a_copy_partitioned_by_a_variant_column_is_refused_and_one_by_its_value_written() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = vshred_datafusion::context(Default::default());
    let out = dir.path().join("out");
    let rows = "SELECT parse_json('{\"a\":\"x\"}') AS v";
    let sql = format!(
        "COPY ({rows}) TO '{}/' STORED AS PARQUET PARTITIONED BY (v)",
        out.display()
    );
    let e = vshred_datafusion::functions::error_message(&run(&ctx, &sql).await.unwrap_err());
    assert_eq!(
        e,
        "COPY cannot be PARTITIONED BY the Variant column \"v\": a directory is named by a value, so select one from it, as variant_get(v, '$.a', 'string') AS a, and partition by that"
    );
    assert!(!out.exists());
    let sql = format!(
        "COPY (SELECT v, variant_get(v, '$.a', 'string') AS a FROM ({rows})) TO '{}/' STORED AS PARQUET PARTITIONED BY (a)",
        out.display()
    );
    query(&ctx, &sql).await;
    assert_eq!(parquet_files(&out.join("a=x")).len(), 1);
    // A name SQL quotes is quoted in the statement suggested, which runs.
    let out = dir.path().join("quoted");
    let rows = "SELECT parse_json('{\"a\":\"x\"}') AS \"Pay load\"";
    let sql = format!(
        "COPY ({rows}) TO '{}/' STORED AS PARQUET PARTITIONED BY (\"Pay load\")",
        out.display()
    );
    let e = run_statements(&ctx, &sql).await.unwrap_err();
    let e = vshred_datafusion::functions::error_message(&e);
    let suggested = "variant_get(\"Pay load\", '$.a', 'string') AS a";
    assert!(e.contains(suggested), "{e}");
    let sql = format!(
        "COPY (SELECT \"Pay load\", {suggested} FROM ({rows})) TO '{}/' STORED AS PARQUET PARTITIONED BY (a)",
        out.display()
    );
    run_statements(&ctx, &sql).await.unwrap();
    assert_eq!(parquet_files(&out.join("a=x")).len(), 1);
    // A struct holding a Variant is not called one (DataFusion refuses it
    // as the struct it is).
    let sql = format!(
        "COPY (SELECT named_struct('v', parse_json('1')) AS s) TO '{}/' STORED AS PARQUET PARTITIONED BY (s)",
        dir.path().join("struct").display()
    );
    let e = vshred_datafusion::functions::error_message(&run(&ctx, &sql).await.unwrap_err());
    assert!(!e.contains("Variant column"), "{e}");
}

/// A `PARTITIONED BY` column in double quotes or backquotes, a name in
/// capitals or with a space, is the name it quotes: DataFusion 55 looked
/// the text up with its quotes (`No field named """Event"""`), with
/// Variant columns or without.
#[tokio::test]
async fn a_partition_column_in_quotes_is_the_name_it_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = vshred_datafusion::context(Default::default());
    for (name, value) in [("plain", "1 AS n"), ("variant", "parse_json('1') AS v")] {
        let out = dir.path().join(name);
        let sql = format!(
            "COPY (SELECT 'a' AS \"Event\", 'b' AS \"ev name\", 'c' AS \"x\"\"y\", 'd' AS \"x\"\"\"\"y\", {value}) TO '{}/' STORED AS PARQUET PARTITIONED BY (\"Event\", `ev name`, \"x\"\"\"\"y\")",
            out.display()
        );
        run_statements(&ctx, &sql).await.unwrap();
        // A doubled quote inside is one (`x""y`, not `x"y`, a column too).
        let partition = out.join("Event=a").join("ev name=b").join("x%22%22y=d");
        assert_eq!(
            parquet_files(&partition).len(),
            1,
            "{name}: {:?}",
            parquet_files(&out)
        );
    }
}
