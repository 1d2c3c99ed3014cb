//! `encode IN OUT_DIR --max-file-rows N` / `--max-file-bytes B`: a dataset
//! of files that each appear whole, whose layout follows the data, and
//! that read back, together, as the input.

use std::path::Path;
use std::process::{Command, Stdio};

#[path = "../../../benches/workload/mod.rs"]
mod workload;

mod binary;
use binary::{encoding_from_a_pipe, names, stderr, stdout, vshred_in};

use vshred::encode::{
    DatasetReport, DatasetSplit, EncodeOptions, LayoutChoice, ShredMode, encode_dataset,
};
use vshred::infer::InferOptions;
use vshred::parquet::ColumnSpec;
use vshred::shred::ShreddingSchema;

/// Lines `{"id":N}` for N in 1..=rows, except `bad` line numbers, which
/// are cut short.
fn lines(rows: u64, bad: &[u64]) -> String {
    (1..=rows)
        .map(|n| match bad.contains(&n) {
            true => format!("{{\"id\":{n}]\n"),
            false => format!("{{\"id\":{n}}}\n"),
        })
        .collect()
}

/// `vshred cat PATH` in `dir`, which must succeed.
fn cat(dir: &Path, path: &str) -> String {
    let out = vshred_in(dir, &["cat", path]);
    assert!(out.status.success(), "cat {path}: {}", stderr(&out));
    stdout(&out).to_string()
}

/// Encodes `text` into `dir/out` as a dataset, with small batches so that
/// files end between many of them.
fn write_dataset(
    dir: &Path,
    text: &str,
    options: &EncodeOptions,
    split: &DatasetSplit,
) -> DatasetReport {
    encode_dataset(
        &mut text.as_bytes(),
        &dir.join("out"),
        options,
        split,
        &mut |_| {},
    )
    .unwrap()
}

fn small_batches() -> EncodeOptions {
    EncodeOptions {
        batch_rows: 200,
        ..EncodeOptions::default()
    }
}

/// The layout of the only Variant column.
fn layout(columns: &[ColumnSpec]) -> &ShreddingSchema {
    match columns {
        [ColumnSpec::Variant { schema, .. }] => schema,
        other => panic!("not one Variant column: {other:?}"),
    }
}

#[test]
fn files_are_split_by_rows_and_each_reads_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(10, &[])).unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out", "--max-file-rows", "3"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.starts_with(
            "vshred: wrote 4 files to out (part-00000.parquet to part-00003.parquet): 10 rows, "
        ),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    assert_eq!(
        names(&dir.path().join("out")),
        [
            "part-00000.parquet",
            "part-00001.parquet",
            "part-00002.parquet",
            "part-00003.parquet"
        ]
    );
    let expected = ["1 2 3", "4 5 6", "7 8 9", "10"];
    for (n, ids) in expected.iter().enumerate() {
        let text = cat(dir.path(), &format!("out/part-{n:05}.parquet"));
        let want: String = ids
            .split(' ')
            .map(|id| format!("{{\"v\":{{\"id\":{id}}}}}\n"))
            .collect();
        assert_eq!(text, want, "part {n}");
    }
}

/// Where the row groups of the Parquet file at `path` end: the page
/// indexes and the footer follow.
fn data_end(path: &Path) -> u64 {
    let file = std::fs::File::open(path).unwrap();
    let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    let metadata = parquet::file::reader::FileReader::metadata(&reader);
    metadata
        .row_groups()
        .iter()
        .flat_map(|group| group.columns())
        .map(|column| {
            let (start, len) = column.byte_range();
            start + len
        })
        .max()
        .unwrap()
}

#[test]
fn files_are_split_by_bytes_within_one_batch_of_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let text = workload::events(20_000, 42);
    let limit = 64 * 1024;
    let split = DatasetSplit {
        max_file_bytes: Some(limit),
        ..DatasetSplit::default()
    };
    // A file's first batch is its sample: small too.
    let options = EncodeOptions {
        sample_rows: 200,
        shred: ShredMode::Infer(InferOptions::default().with_sample_rows(200)),
        ..small_batches()
    };
    let report = write_dataset(dir.path(), &text, &options, &split);
    assert!(report.files.len() >= 4, "{} files", report.files.len());
    // One batch of 200 event rows compresses to well under 16 KiB, and so
    // does a footer of a few row groups.
    let (last, full) = report.files.split_last().unwrap();
    for part in full {
        let bytes = part.written.bytes;
        assert_eq!(std::fs::metadata(&part.path).unwrap().len(), bytes);
        let data = data_end(&part.path);
        assert!(
            (limit..limit + 16 * 1024).contains(&data),
            "{}: row groups end at byte {data}",
            part.path.display()
        );
        // Row groups are cut only near the limit: one to three of them.
        assert!(
            (1..=3).contains(&part.written.row_groups),
            "{}: {} row groups",
            part.path.display(),
            part.written.row_groups
        );
        assert!(
            bytes - data < 16 * 1024,
            "{}: {bytes} bytes",
            part.path.display()
        );
    }
    assert!(data_end(&last.path) <= limit + 16 * 1024);
    let rows: u64 = report.files.iter().map(|p| p.written.rows).sum();
    assert_eq!(rows, 20_000);
    // Where files end depends on the data, not on the threads.
    let again = tempfile::tempdir().unwrap();
    let second = write_dataset(again.path(), &text, &options, &split);
    let sizes = |r: &DatasetReport| -> Vec<(u64, u64)> {
        r.files
            .iter()
            .map(|p| (p.written.rows, p.written.bytes))
            .collect()
    };
    assert_eq!(sizes(&report), sizes(&second));
}

/// Fields that stop: the files after them take a layout of their own
/// lines, where they kept every typed column of the gone fields, null (a
/// file of 1,000 small rows was 93 kB, 9 kB alone).
#[test]
fn typed_columns_that_would_hold_nothing_make_a_file_re_infer() {
    let dir = tempfile::tempdir().unwrap();
    let wide = (0..1500).map(|i| {
        let fields: Vec<String> = (0..40).map(|k| format!("\"f{k:02}\": {}", i * k)).collect();
        format!("{{{}}}\n", fields.join(", "))
    });
    let narrow = (0..3000).map(|i| format!("{{\"arc\": {i}, \"points\": [[{i}, 1]]}}\n"));
    let text: String = wide.chain(narrow).collect();
    std::fs::write(dir.path().join("in.jsonl"), &text).unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out", "--max-file-rows", "1000"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "part-00002.parquet: layout re-inferred (40 of the 40 typed columns of the layout before hold none of its first lines' values)"
        ),
        "{}",
        stderr(&out)
    );
    let schema = vshred_in(dir.path(), &["schema", "out/part-00003.parquet"]);
    assert!(!stdout(&schema).contains("f00"), "{}", stdout(&schema));
    assert_eq!(cat(dir.path(), "out").lines().count(), 4500);
}

#[test]
fn a_directory_that_holds_a_dataset_is_refused_and_append_numbers_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(4, &[])).unwrap();
    let args = ["encode", "in.jsonl", "out", "--max-file-rows", "2"];
    assert!(vshred_in(dir.path(), &args).status.success());
    let refused = vshred_in(dir.path(), &args);
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused),
        "vshred: out: dataset exists: holds a dataset already (2 Parquet files, such as out/part-00000.parquet): \
         new files would mix with it; choose another directory (--append adds to it)\n"
    );
    assert_eq!(names(&dir.path().join("out")).len(), 2);
    let appended = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert!(appended.status.success(), "{}", stderr(&appended));
    assert_eq!(
        names(&dir.path().join("out")),
        [
            "part-00000.parquet",
            "part-00001.parquet",
            "part-00002.parquet",
            "part-00003.parquet"
        ]
    );
    let twice: String = lines(4, &[])
        .lines()
        .chain(lines(4, &[]).lines())
        .map(|l| format!("{{\"v\":{l}}}\n"))
        .collect();
    assert_eq!(cat(dir.path(), "out"), twice);
    // A file of another name is a dataset too.
    std::fs::create_dir(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("other/x.parquet"), "").unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "other", "--max-file-rows", "2"],
    );
    assert!(
        stderr(&out).contains("holds a dataset already (1 Parquet file, such as other/x.parquet)")
    );
    // --append alone is not a dataset, said before anything is read.
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "x.parquet", "--append"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with(
            "vshred: invalid arguments: --append adds files to a dataset directory, which --max-file-rows N or --max-file-bytes B writes"
        ),
        "{}",
        stderr(&out)
    );
}

/// Appending to the root of a dataset of key=value directories is
/// refused: the file would sit beside them, reading null there, and Spark
/// skips such a file without a word. A partition's directory takes it.
#[test]
fn an_append_beside_key_value_directories_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(2, &[])).unwrap();
    let write = |to: &str| {
        vshred_in(
            dir.path(),
            &[
                "encode",
                "in.jsonl",
                to,
                "--max-file-rows",
                "10",
                "--append",
            ],
        )
    };
    assert!(write("lake/day=2024-03-01").status.success());
    let refused = write("lake");
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused),
        "vshred: lake: invalid arguments: holds a dataset under day=... directories (such as \
         lake/day=2024-03-01/part-00000.parquet): append to the directory of a partition \
         (.../day=VALUE/), where its files belong\n"
    );
    assert!(write("lake/day=2024-03-02").status.success());
    assert!(write("lake/day=2024-03-01").status.success());
    assert_eq!(
        names(&dir.path().join("lake")),
        ["day=2024-03-01", "day=2024-03-02"]
    );
    assert_eq!(cat(dir.path(), "lake").lines().count(), 6);
    // The other way round: key=value directories begun beside files of
    // none are refused too, whether appended or not.
    assert!(write("flat").status.success());
    for args in [&["--append"][..], &[]] {
        let refused = vshred_in(
            dir.path(),
            &[
                &["encode", "in.jsonl", "flat/day=1", "--max-file-rows", "10"][..],
                args,
            ]
            .concat(),
        );
        assert_eq!(refused.status.code(), Some(1));
        assert_eq!(
            stderr(&refused),
            "vshred: flat/day=1: invalid arguments: flat holds Parquet files outside key=value directories (such as flat/part-00000.parquet): its files would read with no key, and Spark skips them beside key=value directories; write the partitions to a directory of their own\n"
        );
    }
    assert_eq!(names(&dir.path().join("flat")), ["part-00000.parquet"]);
    // Beneath a directory of no key, or linked, they are loose all the same.
    std::fs::create_dir_all(dir.path().join("deep/old")).unwrap();
    std::fs::rename(
        dir.path().join("flat/part-00000.parquet"),
        dir.path().join("deep/old/part-00000.parquet"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../deep/old/part-00000.parquet",
        dir.path().join("flat/l.parquet"),
    )
    .unwrap();
    for (root, loose) in [
        ("deep", "deep/old/part-00000.parquet"),
        ("flat", "flat/l.parquet"),
    ] {
        let to = format!("{root}/day=1");
        let refused = vshred_in(
            dir.path(),
            &["encode", "in.jsonl", &to, "--max-file-rows", "10"],
        );
        assert!(
            stderr(&refused).contains(&format!("(such as {loose})")),
            "{}",
            stderr(&refused)
        );
    }
}

/// Rows appended whole (no Variant field named) to a dataset written with
/// Variant fields are refused: its column `v` would hold a field in the
/// files before and whole rows in the new one.
#[test]
fn an_append_without_the_variant_fields_the_files_were_written_with_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..4)
        .map(|i| format!("{{\"id\":{i},\"v\":{{\"a\":{i}}}}}\n"))
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), rows).unwrap();
    let args = ["encode", "in.jsonl", "ds", "--max-file-rows", "10"];
    let with_field = [&args[..], &["--variant-field", "v"]].concat();
    assert!(vshred_in(dir.path(), &with_field).status.success());
    let refused = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains(
            "the dataset's files hold the columns id, v (Variant: v): they were written with Variant fields"
        ),
        "{}",
        stderr(&refused)
    );
    assert_eq!(names(&dir.path().join("ds")), ["part-00000.parquet"]);
    let appended = vshred_in(dir.path(), &[&with_field[..], &["--append"]].concat());
    assert!(appended.status.success(), "{}", stderr(&appended));
}

/// An input of no rows appended adds no file (an empty part would be one
/// more file for every reader), and makes no directory.
#[test]
fn appending_an_input_of_no_rows_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(4, &[])).unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    let args = ["encode", "in.jsonl", "out", "--max-file-rows", "2"];
    assert!(vshred_in(dir.path(), &args).status.success());
    for target in ["out", "new"] {
        let appended = vshred_in(
            dir.path(),
            &[
                "encode",
                "empty.jsonl",
                target,
                "--max-file-rows",
                "2",
                "--append",
            ],
        );
        assert!(appended.status.success(), "{}", stderr(&appended));
        assert_eq!(
            stderr(&appended),
            format!("vshred: appended nothing to {target}: the input has no rows\n")
        );
    }
    assert_eq!(names(&dir.path().join("out")).len(), 2);
    assert!(!dir.path().join("new").exists());
    // Not appended, an empty input is an empty dataset, as an empty file.
    let made = vshred_in(
        dir.path(),
        &["encode", "empty.jsonl", "new", "--max-file-rows", "2"],
    );
    assert!(made.status.success(), "{}", stderr(&made));
    assert_eq!(names(&dir.path().join("new")), ["part-00000.parquet"]);
}

/// Two runs appending to one dataset at once each take their own part
/// numbers: neither renames a file over the other's.
#[test]
fn appends_at_the_same_time_write_every_file_under_a_name_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let split = DatasetSplit {
        max_file_rows: Some(1000),
        max_file_bytes: None,
        append: true,
    };
    let text = lines(5000, &[]);
    let reports: Vec<DatasetReport> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    encode_dataset(
                        &mut text.as_bytes(),
                        &out,
                        &small_batches(),
                        &split,
                        &mut |_| {},
                    )
                    .unwrap()
                })
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    let mut written: Vec<String> = reports
        .iter()
        .flat_map(|report| &report.files)
        .map(|file| {
            file.path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    written.sort();
    let expected: Vec<String> = (0..10).map(|n| format!("part-{n:05}.parquet")).collect();
    assert_eq!(written, expected);
    assert_eq!(names(&out), expected, "and no claim left behind");
    assert_eq!(cat(dir.path(), "out").lines().count(), 10_000);
}

/// Two appends at once that bring the same new column, of two types: the
/// second waits for the first's file, then takes its type (its texts are
/// bad lines), and the dataset stays readable as one. Each file that
/// brings a column is written under the directory's lock.
#[test]
fn appends_at_once_that_bring_a_column_agree_on_its_type() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let rows = |x: &dyn Fn(i64) -> String| -> String {
        (0..10)
            .map(|i| format!("{{\"i\":{i},\"x\":{},\"v\":{{}}}}\n", x(i)))
            .collect()
    };
    std::fs::write(dir.path().join("first.jsonl"), "{\"i\":0,\"v\":{}}\n").unwrap();
    std::fs::write(
        dir.path().join("texts.jsonl"),
        rows(&|i| format!("\"s{i}\"")),
    )
    .unwrap();
    let append = [
        "--append",
        "--variant-field",
        "v",
        "--max-file-rows",
        "1000",
    ];
    let out = vshred_in(
        dir.path(),
        &[&["encode", "first.jsonl", "out"][..], &append[1..]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Integers, from a pipe left open: its file is written, under the
    // lock, while the pipe is.
    let mut integers = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args([&["encode", "-", "out", "--sample-rows", "5"][..], &append].concat())
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = integers.stdin.take().unwrap();
    pipe.write_all(rows(&|i| i.to_string()).as_bytes()).unwrap();
    pipe.flush().unwrap();
    let started = std::time::Instant::now();
    while !names(&dir.path().join("out"))
        .iter()
        .any(|n| n.ends_with(".claim"))
    {
        assert!(
            started.elapsed().as_secs() < 60,
            "the first append never claimed a file"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut texts = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args([&["encode", "texts.jsonl", "out"][..], &append].concat())
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        texts.try_wait().unwrap().is_none(),
        "the second append did not wait"
    );
    drop(pipe);
    let integers = integers.wait_with_output().unwrap();
    assert!(integers.status.success(), "{}", stderr(&integers));
    let texts = texts.wait_with_output().unwrap();
    assert!(
        stderr(&texts).contains("valid JSON that its columns do not hold")
            && stderr(&texts).contains("field \"x\" is a column of int64"),
        "{}",
        stderr(&texts)
    );
    let cat = vshred_in(dir.path(), &["cat", "out"]);
    assert!(cat.status.success(), "{}", stderr(&cat));
    assert_eq!(stdout(&cat).lines().count(), 11);
}

/// A column's type is the dataset's, not each file's sample's: `p` null
/// in the first file's lines (a Variant column) and numbers in the
/// second's stays a Variant column, and `id`, numbers in the first file,
/// stays `int64`, so that a text in it is a bad line, not a second file
/// the dataset's readers refuse; appended files keep the directory's
/// types too.
#[test]
fn every_file_keeps_the_column_types_of_the_files_before() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..4000)
        .map(|i| match i < 2000 {
            true => format!("{{\"id\":{i},\"p\":null,\"v\":{{\"a\":{i}}}}}\n"),
            false => format!("{{\"id\":{i},\"p\":{i},\"v\":{{\"a\":{i}}}}}\n"),
        })
        .collect();
    let options = EncodeOptions {
        variant_fields: vec!["v".into()],
        ..small_batches()
    };
    let split = DatasetSplit {
        max_file_rows: Some(2000),
        max_file_bytes: None,
        append: false,
    };
    let report = write_dataset(dir.path(), &text, &options, &split);
    let kinds = |report: &DatasetReport| -> Vec<String> {
        report
            .files
            .iter()
            .map(|file| {
                let kinds: Vec<String> = file
                    .columns
                    .iter()
                    .map(|c| match c {
                        ColumnSpec::Plain(f) => format!("{}:{}", f.name(), f.data_type()),
                        ColumnSpec::Variant { name, .. } => format!("{name}:variant"),
                    })
                    .collect();
                kinds.join(",")
            })
            .collect()
    };
    assert_eq!(kinds(&report), ["id:Int64,p:variant,v:variant"; 2]);
    // Kept a Variant column, `p` is shredded as the second file's sample
    // types it.
    let p_layout = |file: &vshred::encode::PartReport| match &file.columns[1] {
        ColumnSpec::Variant { schema, .. } => schema.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(p_layout(&report.files[1]), ShreddingSchema::Int64);
    assert_eq!(cat(dir.path(), "out").lines().count(), 4000);
    // Appended: a text where the dataset has numbers is a bad line.
    let append = DatasetSplit {
        append: true,
        ..split
    };
    let more = "{\"id\":\"x\",\"p\":\"y\",\"v\":{}}\n{\"id\":7,\"p\":\"y\",\"v\":{}}\n";
    let out = dir.path().join("out");
    let err = encode_dataset(&mut more.as_bytes(), &out, &options, &append, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "valid JSON that its columns do not hold at row 0, line 1, column 7 (byte 6): field \"id\" is a column of int64"
        ),
        "{err}"
    );
    let skipping = EncodeOptions {
        skip_bad_lines: true,
        ..options
    };
    let report =
        encode_dataset(&mut more.as_bytes(), &out, &skipping, &append, &mut |_| {}).unwrap();
    assert_eq!(kinds(&report), ["id:Int64,p:variant,v:variant"]);
    assert_eq!(report.lines.bad_lines, 1);
    assert_eq!(cat(dir.path(), "out").lines().count(), 4001);
    // Asked for as a Variant field, an int64 column of the dataset is
    // refused before anything is written.
    let as_variant = EncodeOptions {
        variant_fields: vec!["v".into(), "id".into()],
        ..skipping
    };
    let err = encode_dataset(
        &mut more.as_bytes(),
        &out,
        &as_variant,
        &append,
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    // Named as the dataset, not the input.
    assert!(
        err.starts_with(&format!("{}: ", out.display()))
            && err.contains("column \"id\" is Int64 in the dataset, and as a Variant field"),
        "{err}"
    );
    assert_eq!(cat(dir.path(), "out").lines().count(), 4001);
}

#[test]
fn a_dataset_stops_at_part_99999_so_that_path_order_stays_write_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(2, &[])).unwrap();
    let args = ["encode", "in.jsonl", "out", "--max-file-rows", "1"];
    assert!(vshred_in(dir.path(), &args).status.success());
    let out = dir.path().join("out");
    std::fs::rename(
        out.join("part-00001.parquet"),
        out.join("part-99999.parquet"),
    )
    .unwrap();
    // Refused before any work: nothing written.
    let refused = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused),
        "vshred: out: invalid arguments: no part number is left for a new file: its files are numbered up to part-99999, the highest (five digits, so that path order is the order they were written in); let each file hold more rows or bytes, or write to another directory\n"
    );
    assert_eq!(names(&out), ["part-00000.parquet", "part-99999.parquet"]);
    // Numbers that run out in the run: the files written are said.
    std::fs::rename(
        out.join("part-99999.parquet"),
        out.join("part-99998.parquet"),
    )
    .unwrap();
    let stopped = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert_eq!(stopped.status.code(), Some(1));
    assert!(
        stderr(&stopped).contains("no part number is left for a new file")
            && stderr(&stopped).contains("1 complete file was written"),
        "{}",
        stderr(&stopped)
    );
    assert_eq!(
        names(&out),
        [
            "part-00000.parquet",
            "part-99998.parquet",
            "part-99999.parquet"
        ]
    );
}

#[test]
fn a_failed_run_leaves_the_complete_files_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(10, &[8])).unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out", "--max-file-rows", "3"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: in.jsonl: invalid JSON at row 7, line 8, column 8 (byte 70): expected ',' or '}', \
         found ']'; 2 complete files were written to out (part-00000.parquet to part-00001.parquet) \
         before the failure\n"
    );
    // The third file, which held line 8, is gone, temporary file and all.
    assert_eq!(
        names(&dir.path().join("out")),
        ["part-00000.parquet", "part-00001.parquet"]
    );
    let first_six: String = lines(6, &[])
        .lines()
        .map(|l| format!("{{\"v\":{l}}}\n"))
        .collect();
    assert_eq!(cat(dir.path(), "out"), first_six);
}

/// With `--skip-bad-lines`, lines that are all bad make no file: between
/// good ones they leave no empty file in the dataset (the numbers run on),
/// and as the whole input they are an error, as for one file.
#[test]
fn lines_that_are_all_bad_make_no_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(9, &[4, 5, 6])).unwrap();
    let args = [
        "encode",
        "in.jsonl",
        "out",
        "--max-file-rows",
        "3",
        "--skip-bad-lines",
    ];
    let out = vshred_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        names(&dir.path().join("out")),
        ["part-00000.parquet", "part-00001.parquet"]
    );
    let good: String = [1, 2, 3, 7, 8, 9]
        .iter()
        .map(|id| format!("{{\"v\":{{\"id\":{id}}}}}\n"))
        .collect();
    assert_eq!(cat(dir.path(), "out"), good);

    std::fs::write(dir.path().join("bad.jsonl"), lines(5, &[1, 2, 3, 4, 5])).unwrap();
    let mut args = args;
    args[1..3].copy_from_slice(&["bad.jsonl", "bad"]);
    let out = vshred_in(dir.path(), &args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with(
            "vshred: bad.jsonl: invalid JSON: every line is bad (5 skipped); the first: \
             invalid JSON at row 0, line 1,"
        ),
        "{}",
        stderr(&out)
    );
    // The directory it made for them goes too.
    assert!(!dir.path().join("bad").exists());

    // Valid JSON that the dataset's columns do not hold is called so, not
    // invalid JSON.
    std::fs::write(dir.path().join("a.jsonl"), "{\"name\":\"x\",\"v\":1}\n").unwrap();
    std::fs::write(
        dir.path().join("b.jsonl"),
        "{\"name\":{\"c\":\"y\"},\"v\":2}\n",
    )
    .unwrap();
    let encode = |input, more: &[&str]| {
        let args = [
            "encode",
            input,
            "typed",
            "--variant-field",
            "v",
            "--max-file-rows",
            "10",
        ];
        vshred_in(dir.path(), &[&args[..], more].concat())
    };
    assert!(encode("a.jsonl", &[]).status.success());
    let out = encode("b.jsonl", &["--append", "--skip-bad-lines"]);
    assert!(
        stderr(&out).starts_with(
            "vshred: b.jsonl: valid JSON that its columns do not hold: every line is bad (1 skipped)"
        ),
        "{}",
        stderr(&out)
    );
}

/// A part whose lines are all bad, after one whose layout writes a string
/// leaf of distinct values without a dictionary: the writer measured that
/// leaf on the bad part's sample, which had no row, and panicked.
#[test]
fn a_bad_part_after_distinct_strings_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let distinct = |from: u64| -> String {
        (from..from + 100)
            .map(|i| {
                format!(
                    "{{\"s\":\"{:016x}\"}}\n",
                    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                )
            })
            .collect()
    };
    let text = distinct(0) + &"bad\n".repeat(100) + &distinct(100);
    std::fs::write(dir.path().join("in.jsonl"), &text).unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "out",
            "--max-file-rows",
            "100",
            "--skip-bad-lines",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("skipped 100 bad lines"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        names(&dir.path().join("out")),
        ["part-00000.parquet", "part-00001.parquet"]
    );
    let good: String = text
        .lines()
        .filter(|l| *l != "bad")
        .map(|l| format!("{{\"v\":{l}}}\n"))
        .collect();
    assert_eq!(cat(dir.path(), "out"), good);
}

/// SIGTERM while the second file is being written: the first stays, the
/// second's temporary file goes, and stderr says what is left.
#[test]
fn a_signal_leaves_the_complete_files_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    // The first file whole, the second's sample and a few lines more; then
    // stdin stays open and the second file waits for its next lines.
    let args = [
        "encode",
        "-",
        "out",
        "--max-file-rows",
        "20",
        "--sample-rows",
        "10",
    ];
    let (child, stdin) = encoding_from_a_pipe(dir.path(), &args, 35);
    let started = std::time::Instant::now();
    let ready = |names: &[String]| {
        names.iter().any(|n| n == "part-00000.parquet")
            && names
                .iter()
                .any(|n| n.starts_with(".part-00001.parquet.") && n.ends_with(".tmp"))
    };
    while !(out_dir.is_dir() && ready(&names(&out_dir))) {
        assert!(started.elapsed().as_secs() < 30, "the files did not appear");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(143));
    assert_eq!(names(&out_dir), ["part-00000.parquet"]);
    assert_eq!(
        stderr(&out),
        "vshred: interrupted; 1 complete file was written to out (part-00000.parquet)\n"
    );
    let first: String = (0..20)
        .map(|i| format!("{{\"v\":{{\"i\":{i}}}}}\n"))
        .collect();
    assert_eq!(cat(dir.path(), "out"), first);
}

/// Events whose fields change halfway (`status` from an int to a string,
/// `session` gone, `region` new): the files after the change get a layout
/// inferred afresh, which a layout fixed from the first file's lines
/// cannot match.
#[test]
fn the_layout_is_reinferred_when_the_data_drifts_and_kept_while_it_fits() {
    let text = workload::drift(8_000, 42);
    let split = DatasetSplit {
        max_file_rows: Some(2_000),
        ..DatasetSplit::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let report = write_dataset(dir.path(), &text, &small_batches(), &split);
    let choices: Vec<LayoutChoice> = report.files.iter().map(|p| p.layout).collect();
    assert!(
        matches!(
            choices.as_slice(),
            [
                LayoutChoice::First,
                LayoutChoice::Kept,
                LayoutChoice::Reinferred { .. },
                LayoutChoice::Kept
            ]
        ),
        "{choices:?}"
    );
    let before = layout(&report.files[0].columns);
    let after = layout(&report.files[2].columns);
    assert_eq!(before.field("status"), Some(&ShreddingSchema::Int32));
    assert_eq!(before.field("region"), None);
    assert_eq!(after.field("status"), Some(&ShreddingSchema::String));
    assert_eq!(after.field("region"), Some(&ShreddingSchema::String));

    // The same files with the first file's layout throughout.
    let fixed = EncodeOptions {
        shred: ShredMode::Schema(before.clone()),
        ..small_batches()
    };
    let other = tempfile::tempdir().unwrap();
    let fixed = write_dataset(other.path(), &text, &fixed, &split);
    let share = |r: &DatasetReport, i: usize| r.files[i].typed_share().unwrap();
    assert_eq!(share(&report, 0), share(&fixed, 0));
    assert!(share(&report, 2) > 0.99, "{}", share(&report, 2));
    assert!(share(&fixed, 2) < 0.9, "{}", share(&fixed, 2));
}

#[test]
fn steady_data_keeps_one_layout() {
    let text = workload::events(8_000, 7);
    let split = DatasetSplit {
        max_file_rows: Some(2_000),
        ..DatasetSplit::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let report = write_dataset(dir.path(), &text, &small_batches(), &split);
    let choices: Vec<LayoutChoice> = report.files.iter().map(|p| p.layout).collect();
    assert_eq!(
        choices,
        [
            LayoutChoice::First,
            LayoutChoice::Kept,
            LayoutChoice::Kept,
            LayoutChoice::Kept
        ]
    );
}

/// The dataset reads back as the input does from one file, line for line,
/// across files of different layouts, split by rows or by bytes.
#[test]
fn the_whole_dataset_reads_back_as_the_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), workload::drift(30_000, 42)).unwrap();
    let one = vshred_in(dir.path(), &["encode", "in.jsonl", "one.parquet"]);
    assert!(one.status.success(), "{}", stderr(&one));
    let expected = cat(dir.path(), "one.parquet");
    assert_eq!(expected.lines().count(), 30_000);
    for (out, split) in [
        ("rows", ["--max-file-rows", "7000"]),
        ("bytes", ["--max-file-bytes", "100K"]),
    ] {
        let run = vshred_in(
            dir.path(),
            &[&["encode", "in.jsonl", out][..], &split].concat(),
        );
        assert!(run.status.success(), "{}", stderr(&run));
        assert!(
            stderr(&run).contains("layout re-inferred"),
            "{out}: {}",
            stderr(&run)
        );
        assert!(names(&dir.path().join(out)).len() >= 3, "{out}");
        assert!(cat(dir.path(), out) == expected, "{out}: the rows differ");
    }
}

#[test]
fn the_readme_example_runs() {
    let readme = include_str!("../../../README.md");
    let command = readme
        .lines()
        .find(|l| l.starts_with("vshred encode testdata/events.jsonl events/ --max-file-rows"))
        .expect("the README shows a dataset example");
    let dir = tempfile::tempdir().unwrap();
    let testdata = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata");
    std::os::unix::fs::symlink(&testdata, dir.path().join("testdata")).unwrap();
    let args: Vec<&str> = command
        .split('#')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let out = vshred_in(dir.path(), &args[1..]);
    assert!(out.status.success(), "{command}: {}", stderr(&out));
    let expected = vshred_in(
        dir.path(),
        &["encode", "testdata/events.jsonl", "one.parquet"],
    );
    assert!(expected.status.success());
    assert_eq!(cat(dir.path(), "events/"), cat(dir.path(), "one.parquet"));
}

#[test]
fn a_file_that_keeps_the_layout_keeps_the_encodings_priced_with_it() {
    // Random ids: priced as plain values (their deltas are as wide), where
    // a first batch alone, mostly distinct, would call for deltas. The
    // second file's rows add a rare field, which its own layout would
    // shred, but not by enough to leave the layout in use.
    let mut rng = workload::Rng::new(7);
    let text: String = (0..4_000)
        .map(|row| {
            let rare = if row >= 2_000 && row % 25 == 0 {
                ",\"rare\":1"
            } else {
                ""
            };
            format!("{{\"id\":{}{rare}}}\n", rng.next_u64() >> 1)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let split = DatasetSplit {
        max_file_rows: Some(2_000),
        ..DatasetSplit::default()
    };
    // Each file's layout from its first 1,000 rows: a sample of the file
    // (sampled whole, 2,000 random ids are as small unshredded).
    let options = EncodeOptions {
        shred: ShredMode::Infer(
            InferOptions::default()
                .with_min_frequency(0.01)
                .with_sample_rows(1_000),
        ),
        sample_rows: 1_000,
        ..small_batches()
    };
    let report = write_dataset(dir.path(), &text, &options, &split);
    assert_eq!(report.files.len(), 2);
    assert_eq!(report.files[1].layout, LayoutChoice::Kept);
    for file in &report.files {
        let leaves = vshred::parquet::ParquetFile::open(&file.path)
            .unwrap()
            .leaf_sizes();
        let id = leaves
            .iter()
            .find(|leaf| leaf.path == ["v", "typed_value", "id", "typed_value"])
            .expect("id is shredded");
        assert!(
            id.encodings.iter().any(|e| e == "PLAIN")
                && !id
                    .encodings
                    .iter()
                    .any(|e| e.starts_with("DELTA") || e == "RLE_DICTIONARY"),
            "{}: {:?}",
            file.path.display(),
            id.encodings
        );
    }
}

/// Numbers another writer holds (a concurrent append's claim) are skipped,
/// and the summary's span says that others took numbers between.
#[test]
fn the_summary_says_when_other_writers_files_lie_between() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(6, &[])).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/.part-00001.parquet.claim"), "").unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out", "--max-file-rows", "2"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "vshred: wrote 3 files to out (part-00000.parquet to part-00003.parquet, numbers other writers took between): 6 rows"
        ),
        "{}",
        stderr(&out)
    );
}

/// Two runs that begin one new dataset in the same directory at the same
/// time do not both succeed, their files mixed into one dataset: the
/// second waits for the first's lock, finds its file and fails naming it,
/// and the first's dataset is whole. An append still joins in.
#[test]
fn a_second_writer_of_a_new_dataset_fails_rather_than_mix_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(6, &[])).unwrap();
    let args = [
        "encode",
        "in.jsonl",
        "out",
        "--max-file-rows",
        "100",
        "--sample-rows",
        "5",
    ];
    let (mut first, pipe) = encoding_from_a_pipe(
        dir.path(),
        &{
            let mut a = args;
            a[1] = "-";
            a
        },
        10,
    );
    let started = std::time::Instant::now();
    while !std::fs::exists(dir.path().join("out/.part-00000.parquet.claim")).unwrap() {
        assert!(first.try_wait().unwrap().is_none(), "the first ended");
        assert!(
            started.elapsed().as_secs() < 60,
            "the first never claimed a file"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Time to reach the lock; were it slower, it would find the first's
    // file before it began and fail as well.
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(pipe);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let second = second.wait_with_output().unwrap();
    assert!(!second.status.success());
    assert!(
        stderr(&second).starts_with("vshred: out: another writer: another run wrote part-00000.parquet here while this one began a new dataset: their files would mix with these; choose another directory; no complete file")
            || stderr(&second).contains("holds a dataset already"),
        "{}",
        stderr(&second)
    );
    assert_eq!(names(&dir.path().join("out")), ["part-00000.parquet"]);
    let cat = vshred_in(dir.path(), &["cat", "out"]);
    assert_eq!(stdout(&cat).lines().count(), 10, "{}", stderr(&cat));
    let append = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert!(append.status.success(), "{}", stderr(&append));
}

/// A new dataset's first name claimed by a run killed outright is named,
/// so that it can be removed; an append skips it.
#[test]
fn a_claim_left_in_a_new_datasets_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(6, &[])).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/.part-00000.parquet.claim"), "").unwrap();
    let args = ["encode", "in.jsonl", "out", "--max-file-rows", "100"];
    let out = vshred_in(dir.path(), &args);
    assert!(!out.status.success());
    assert_eq!(
        stderr(&out),
        "vshred: out: another writer: another run is writing part-00000.parquet here while this one began a new dataset: their files would mix with these (if none is running, remove out/.part-00000.parquet.claim: a run killed outright left it); choose another directory; no complete file was written to out before the failure\n"
    );
    let append = vshred_in(dir.path(), &[&args[..], &["--append"]].concat());
    assert!(append.status.success(), "{}", stderr(&append));
    assert_eq!(
        names(&dir.path().join("out")),
        [".part-00000.parquet.claim", "part-00001.parquet"]
    );
}

/// A day's directory written beside another whose files type a column
/// otherwise (integers one day, decimals the next) is warned of as it is
/// written, naming both files; a day that agrees is not.
#[test]
fn a_key_value_directory_that_disagrees_with_its_siblings_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let day = |name: &str, lines: &str, extra: &[&str]| {
        std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
        let out = vshred_in(
            dir.path(),
            &[
                &["encode", "in.jsonl", name, "--max-file-rows", "100"][..],
                &["--variant-field", "v"],
                extra,
            ]
            .concat(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out).to_string()
    };
    let first = day("logs/day=1/", "{\"price\":10,\"v\":{\"a\":1}}\n", &[]);
    assert!(!first.contains("warning"), "{first}");
    let agreeing = day("logs/day=2/", "{\"price\":11,\"v\":{\"a\":2}}\n", &[]);
    assert!(!agreeing.contains("warning"), "{agreeing}");
    let decimals = day("logs/day=3/", "{\"price\":10.5,\"v\":{\"a\":3}}\n", &[]);
    assert!(
        decimals.starts_with("vshred: warning: column \"price\" is Int64 in logs/day=1/part-00000.parquet but variant in logs/day=3/part-00000.parquet: a read of it over logs fails (--variant-field price makes it a Variant column in every file, which files may shred apart)\n"),
        "{decimals}"
    );
    // Against the other directories' files, not only the first pair
    // that disagreed.
    let text = day("logs/day=4/", "{\"price\":\"ten\",\"v\":{\"a\":4}}\n", &[]);
    assert!(
        text.starts_with("vshred: warning: column \"price\" is Int64 in logs/day=1/part-00000.parquet but Utf8 in logs/day=4/part-00000.parquet"),
        "{text}"
    );
    // Only the directories of its key are read: `day=*/` here, not
    // `logs/`, which disagrees.
    let beside = day("day=9/", "{\"price\":\"nine\",\"v\":{\"a\":9}}\n", &[]);
    assert!(!beside.contains("warning"), "{beside}");
    let next = day("day=10", "{\"price\":10,\"v\":{\"a\":10}}\n", &[]);
    assert!(
        next.starts_with("vshred: warning: column \"price\" is Utf8 in day=9/part-00000.parquet but Int64 in day=10/part-00000.parquet: a read of it over . fails"),
        "{next}"
    );
    // A directory that is not key=value is its own dataset.
    let alone = day("other/", "{\"price\":10.5,\"v\":{\"a\":3}}\n", &[]);
    assert!(!alone.contains("warning"), "{alone}");
}

/// Files under other keys than those beside them (`day=5/region=eu/`
/// beside `day=1/`) made the whole dataset unreadable ("not under the
/// same key=value directories"): such an encode is refused, writing
/// nothing.
#[test]
fn a_dataset_under_other_keys_than_its_siblings_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), lines(4, &[])).unwrap();
    let encode = |out: &str| {
        vshred_in(
            dir.path(),
            &["encode", "in.jsonl", out, "--max-file-rows", "2"],
        )
    };
    assert!(encode("logs/day=1/").status.success());
    // Deeper, or under another key beside it, or in a directory whose
    // name is a glob (it was read as one, and saw no sibling).
    for (out, keys) in [
        ("logs/day=5/region=eu/", "day, region"),
        ("logs/region=eu/", "region"),
    ] {
        let refused = encode(out);
        assert_eq!(refused.status.code(), Some(1));
        assert!(
            stderr(&refused).starts_with(&format!(
                "vshred: {out}: invalid arguments: its files would be under the keys {keys}, and the key=value directories beside it in logs are under day: a dataset's files must be under the same keys to be read as one"
            )),
            "{}",
            stderr(&refused)
        );
    }
    assert!(!dir.path().join("logs/day=5").exists());
    assert!(!dir.path().join("logs/region=eu").exists());
    assert!(encode("b[1]/day=1/").status.success());
    assert_eq!(encode("b[1]/day=2/x=1/").status.code(), Some(1));
    // Percent-encoded keys compare decoded, as readers read them.
    assert!(encode("p/a%3Db=1/").status.success());
    assert!(encode("p/a%3Db=2/").status.success(), "a=b beside a=b");
    assert!(encode("logs/day=2/").status.success());
    let read = vshred_in(dir.path(), &["get", "logs", "$.id", "--agg", "count"]);
    assert_eq!(stdout(&read), "8\n", "{}", stderr(&read));
}

/// A column named as a `key=value` directory above the files
/// (`--variant-field` keeping `day` beside `v` under `logs/day=.../`) made
/// a dataset no read accepted ("both in this file and in the dataset's
/// day=... directories"), written without a word: refused, writing
/// nothing, whether the dataset is new or appended to.
#[test]
fn a_column_named_as_a_directory_above_it_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"day\":\"x\",\"p\":{\"a\":1}}\n",
    )
    .unwrap();
    let encode = |out: &str, more: &[&str]| {
        let mut args = vec!["encode", "in.jsonl", out, "--max-file-rows", "5"];
        args.extend_from_slice(more);
        vshred_in(dir.path(), &args)
    };
    for more in [&["--variant-field", "p"][..], &["--variant-field", "day"]] {
        let refused = encode("logs/day=2024-03-01/", more);
        assert_eq!(refused.status.code(), Some(1));
        assert!(
            stderr(&refused).starts_with(
                "vshred: logs/day=2024-03-01/: invalid arguments: the column \"day\" would be named by the directory day=... above it too"
            ),
            "{}",
            stderr(&refused)
        );
        assert!(!dir.path().join("logs/day=2024-03-01").exists());
    }
    // A file written alone there is refused as well.
    std::fs::create_dir_all(dir.path().join("logs/day=2024-03-02")).unwrap();
    let alone = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "logs/day=2024-03-02/x.parquet",
            "--variant-field",
            "p",
        ],
    );
    assert!(
        stderr(&alone).starts_with(
            "vshred: logs/day=2024-03-02/x.parquet: invalid arguments: the column \"day\" would be named"
        ),
        "{}",
        stderr(&alone)
    );
    assert!(!dir.path().join("logs/day=2024-03-02/x.parquet").exists());
    // Inside the Variant column, the field is no column of its own.
    assert!(encode("logs/day=2024-03-01/", &[]).status.success());
    let appended = encode(
        "logs/day=2024-03-01/",
        &["--append", "--variant-field", "p"],
    );
    assert_eq!(appended.status.code(), Some(1), "{}", stderr(&appended));
    let read = vshred_in(dir.path(), &["get", "logs", "$.day", "--with", "day"]);
    assert_eq!(
        stdout(&read),
        "{\"day\":\"2024-03-01\",\"$.day\":\"x\"}\n",
        "{}",
        stderr(&read)
    );
}

/// Files of no more rows than a sample are each weighed whole, footer and
/// all: 150 rows of four small fields are smaller unshredded, and every
/// file of 150 is written so; sampled 100 at a time, they shred.
#[test]
fn files_no_longer_than_the_sample_are_weighed_as_whole_files() {
    let text: String = (0..450)
        .map(|i| {
            format!(
                "{{\"n\":{},\"s\":\"s-{}\",\"d\":{}.{},\"nested\":{{\"a\":{}}}}}\n",
                i * 7919 % 1000,
                i * 104_729 % 997,
                100 + i % 89,
                i % 10,
                i % 100
            )
        })
        .collect();
    let split = DatasetSplit {
        max_file_rows: Some(150),
        ..DatasetSplit::default()
    };
    let layouts = |sample_rows: usize| -> Vec<bool> {
        let dir = tempfile::tempdir().unwrap();
        let options = EncodeOptions {
            shred: ShredMode::Infer(InferOptions::default().with_sample_rows(sample_rows)),
            sample_rows,
            ..EncodeOptions::default()
        };
        write_dataset(dir.path(), &text, &options, &split)
            .files
            .iter()
            .map(|file| match &file.columns[..] {
                [ColumnSpec::Variant { schema, .. }] => *schema != ShreddingSchema::Variant,
                other => panic!("one Variant column: {other:?}"),
            })
            .collect()
    };
    assert_eq!(layouts(4096), [false; 3]);
    assert_eq!(layouts(100), [true; 3]);
}
