//! `vshred report` as a command: what it prints and the page it writes.

use std::process::Command;

mod binary;
use binary::{encoded, fails_with, fifo, stderr, vshred_in, vshred_piped};

/// 300 small rows with a Variant field `v`.
fn seed_lines() -> String {
    (0..300)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"v\":{{\"n\":{},\"s\":\"s-{}\"}}}}\n",
                i % 7,
                i % 13
            )
        })
        .collect()
}

#[test]
fn the_command_prints_markdown_and_writes_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("seed.jsonl");
    std::fs::write(&input, seed_lines()).unwrap();
    let page = dir.path().join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--variant-field", "v", "--runs", "1", "--html"])
        .arg(&page)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("## Size per layout"), "{text}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("<svg"));

    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--runs", "1"])
        .arg(&input)
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("give one JSON Lines input"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn the_command_checks_its_outputs_before_it_encodes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("seed.jsonl");
    std::fs::write(&input, seed_lines()).unwrap();
    let keep = dir.path().join("kept");
    let page = dir.path().join("missing").join("x.html");
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--runs", "1", "--variant-field", "v"])
        .arg("--keep-files")
        .arg(&keep)
        .arg("--html")
        .arg(&page)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "vshred: {}: I/O error: the directory {} does not exist",
            page.display(),
            page.parent().unwrap().display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Nothing was encoded: the directory for the files is not even made.
    assert!(!keep.exists());
    // A directory that holds Parquet files (another run's layouts) is
    // refused: the files kept would read as one dataset with them.
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("auto-flba-decimals.parquet"), "old").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--runs", "1", "--variant-field", "v"])
        .arg("--keep-files")
        .arg(&keep)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "vshred: {}: invalid arguments: holds Parquet files already (such as {}), which the layouts kept would mix with: give an empty or new directory\n",
            keep.display(),
            keep.join("auto-flba-decimals.parquet").display()
        )
    );
    assert_eq!(std::fs::read_dir(&keep).unwrap().count(), 1);
}

/// A query's type that is not a type is named as such, not as a path.
#[test]
fn a_query_of_an_unknown_type_names_the_type() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("seed.jsonl");
    std::fs::write(&input, seed_lines()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--runs", "1", "--variant-field", "v"])
        .args(["--query", "$.n as integr"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("vshred: --query: invalid shredding schema: unknown type \"integr\""),
        "{err}"
    );
}

/// A file without a Variant column is named in the error (it said only
/// "no file has a Variant column").
#[test]
fn a_file_without_a_variant_column_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let copy = vshred_in(
        dir.path(),
        &["sql", "COPY (SELECT 1 AS id) TO 'plain.parquet'"],
    );
    assert!(copy.status.success(), "{}", stderr(&copy));
    fails_with(
        dir.path(),
        &["report", "plain.parquet"],
        "vshred: plain.parquet: invalid arguments: no file has a Variant column",
    );
}

/// The first line of a report that counts the rows.
fn rows_line(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains(" rows;"));
    line.map_or_else(
        || format!("no rows line in {text:?}"),
        |l| l[..l.find(';').unwrap()].to_string(),
    )
}

/// JSON Lines or Parquet from a pipe, by its path or as `-`, are read once:
/// reading the first bytes to tell them apart and then opening the pipe
/// again found it empty (a report of 0 rows) or waited for a writer.
#[test]
fn a_pipe_or_standard_input_is_reported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let lines = seed_lines();
    encoded(dir.path(), "seed.parquet", &lines, &[]);
    let pipe = dir.path().join("in.fifo");
    fifo(&pipe);
    let parquet = std::fs::read(dir.path().join("seed.parquet")).unwrap();
    for bytes in [lines.into_bytes(), parquet] {
        let writer = {
            let (fifo, bytes) = (pipe.clone(), bytes.clone());
            std::thread::spawn(move || std::fs::write(fifo, bytes))
        };
        let out = vshred_in(dir.path(), &["report", "--runs", "1", "in.fifo"]);
        writer.join().unwrap().unwrap();
        assert_eq!(rows_line(&out), "300 rows", "{}", stderr(&out));
        let out = vshred_piped(dir.path(), &["report", "--runs", "1", "-"], &bytes);
        assert_eq!(rows_line(&out), "300 rows", "{}", stderr(&out));
    }
    // Two pipes of one name, each its own file: the second replaced the
    // first's copy, and both rows measured it.
    encoded(dir.path(), "two.parquet", "{\"a\":1}\n{\"a\":2}\n", &[]);
    let mut writers = Vec::new();
    for (sub, file) in [("a", "seed.parquet"), ("b", "two.parquet")] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        let pipe = dir.path().join(sub).join("in.fifo");
        fifo(&pipe);
        let bytes = std::fs::read(dir.path().join(file)).unwrap();
        writers.push(std::thread::spawn(move || std::fs::write(pipe, bytes)));
    }
    let out = vshred_in(
        dir.path(),
        &["report", "--runs", "1", "a/in.fifo", "b/in.fifo"],
    );
    for writer in writers {
        writer.join().unwrap().unwrap();
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let sizes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| in.fifo.parquet |"))
        .take(2)
        .map(|l| l.split('|').nth(2).unwrap().trim())
        .collect();
    assert!(sizes.len() == 2 && sizes[0] != sizes[1], "{text}");
}

#[test]
fn an_input_of_no_json_lines_is_refused_before_any_encode() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "\n \n").unwrap();
    fails_with(
        dir.path(),
        &["report", "empty.jsonl"],
        "empty.jsonl: invalid arguments: nothing to report on: the input holds no JSON lines",
    );
}

#[test]
fn a_dataset_of_key_value_directories_is_reported_with_its_keys_in_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let by_event = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/datasets/by-event"
    );
    // The same files, one directory's key renamed: its rows read back
    // otherwise.
    let renamed = dir.path().join("renamed");
    for entry in std::fs::read_dir(by_event).unwrap() {
        let from = entry.unwrap().path();
        let name = from
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace("=error", "=fault");
        std::fs::create_dir_all(renamed.join(&name)).unwrap();
        for file in std::fs::read_dir(&from).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, renamed.join(&name).join(file.file_name().unwrap())).unwrap();
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["report", "--runs", "1", by_event])
        .arg(&renamed)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let row = |layout: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {layout} |")))
            .unwrap_or_else(|| panic!("no row for {layout}: {text}"))
            .to_string()
    };
    assert!(row("by-event").ends_with("| yes |"), "{text}");
    assert!(
        row("renamed")
            .contains(r#"`…403000000},"event":"error"}` -> `…403000000},"event":"fault"}`"#),
        "{text}"
    );
}

/// `--html` named the input by mistake replaced it with the page; a file
/// there that is not a page is not replaced, one that is, is.
#[test]
fn a_page_does_not_replace_a_file_that_is_not_a_page() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seed.jsonl"), seed_lines()).unwrap();
    encoded(dir.path(), "seed.parquet", &seed_lines(), &[]);
    for input in ["seed.jsonl", "seed.parquet"] {
        let before = std::fs::read(dir.path().join(input)).unwrap();
        fails_with(
            dir.path(),
            &["report", "--runs", "1", input, "--html", input],
            &format!(
                "vshred: {input}: invalid arguments: is not an HTML page, and writing the page would replace it"
            ),
        );
        assert_eq!(std::fs::read(dir.path().join(input)).unwrap(), before);
    }
    for _ in 0..2 {
        let out = vshred_in(
            dir.path(),
            &["report", "--runs", "1", "seed.jsonl", "--html", "page.html"],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
}
