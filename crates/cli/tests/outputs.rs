//! What `vshred encode` does to its output path: never the input, never a
//! device or link replaced, nothing left behind when interrupted.

use std::io::Read;
use std::path::Path;
use std::process::Command;

const LINES: &str = "{\"id\":1,\"v\":{\"a\":1}}\n{\"id\":2,\"v\":{\"a\":2}}\n";

mod binary;
use binary::{encoding_from_a_pipe, fifo as fifo_at, names, on_a_terminal, stderr, vshred_in};

#[test]
fn an_output_that_is_the_input_is_refused_however_it_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("same.jsonl"), LINES).unwrap();
    std::fs::hard_link(dir.path().join("same.jsonl"), dir.path().join("hard.jsonl")).unwrap();
    std::os::unix::fs::symlink("same.jsonl", dir.path().join("link.jsonl")).unwrap();
    for output in ["same.jsonl", "./same.jsonl", "hard.jsonl", "link.jsonl"] {
        let out = vshred_in(dir.path(), &["encode", "same.jsonl", output]);
        assert_eq!(out.status.code(), Some(1), "{output}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("writing it would destroy the input"),
            "{output}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("same.jsonl")).unwrap(),
            LINES
        );
    }
    // Standard input redirected from the output file.
    let out = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["encode", "-", "same.jsonl"])
        .current_dir(dir.path())
        .stdin(std::fs::File::open(dir.path().join("same.jsonl")).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is standard input"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("same.jsonl")).unwrap(),
        LINES
    );
}

#[test]
fn a_symlinked_output_replaces_its_target_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    std::fs::write(dir.path().join("real.parquet"), "PAR1, an older file").unwrap();
    std::os::unix::fs::symlink("real.parquet", dir.path().join("latest.parquet")).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "latest.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let link = std::fs::symlink_metadata(dir.path().join("latest.parquet")).unwrap();
    assert!(link.file_type().is_symlink());
    let written = std::fs::read(dir.path().join("real.parquet")).unwrap();
    assert!(written.starts_with(b"PAR1") && written.ends_with(b"PAR1"));
    assert_eq!(
        names(dir.path()),
        ["in.jsonl", "latest.parquet", "real.parquet"]
    );
}

#[test]
fn a_fifo_output_is_written_directly_and_stays_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    let fifo = dir.path().join("out.fifo");
    fifo_at(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            std::fs::File::open(fifo)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            bytes
        })
    };
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "out.fifo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = reader.join().unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(names(dir.path()), ["in.jsonl", "out.fifo"]);
}

/// JSON lines from a FIFO are read once: the check that a file of one
/// line holding an array is one row opened a FIFO again, and waited for a
/// writer for ever.
#[test]
fn a_fifo_input_of_one_line_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    fifo_at(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, "[1,2]\n"))
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(["encode", "in.fifo", "out.parquet"])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed().as_secs() > 60 {
            child.kill().unwrap();
            panic!("encode of a FIFO did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    writer.join().unwrap().unwrap();
    assert!(status.success());
    assert!(dir.path().join("out.parquet").exists());
}

/// A Parquet file given as the path of a pipe (`<(vshred encode ...)` in a
/// shell) is read whole first, as `-` is: Parquet is read from its end.
#[test]
fn a_file_given_by_the_path_of_a_pipe_is_read_as_standard_input_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "file.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(dir.path().join("file.parquet")).unwrap();
    let fifo = dir.path().join("in.fifo");
    fifo_at(&fifo);
    for (from_pipe, from_file) in [
        (&["cat", "in.fifo"][..], &["cat", "file.parquet"][..]),
        (&["get", "in.fifo", "$"], &["get", "file.parquet", "$"]),
    ] {
        let writer = {
            let (fifo, bytes) = (fifo.clone(), bytes.clone());
            std::thread::spawn(move || std::fs::write(fifo, bytes))
        };
        let out = vshred_in(dir.path(), from_pipe);
        writer.join().unwrap().unwrap();
        assert!(out.status.success(), "{from_pipe:?}: {}", stderr(&out));
        let expected = vshred_in(dir.path(), from_file);
        assert_eq!(out.stdout, expected.stdout, "{from_pipe:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).lines().count(),
            LINES.lines().count()
        );
    }
}

#[test]
fn stdout_gets_the_file_streamed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(dir.path().join("copy.parquet"), &out.stdout).unwrap();
    let cat = vshred_in(dir.path(), &["cat", "copy.parquet"]);
    assert_eq!(
        String::from_utf8_lossy(&cat.stdout),
        "{\"v\":{\"id\":1,\"v\":{\"a\":1}}}\n{\"v\":{\"id\":2,\"v\":{\"a\":2}}}\n"
    );
}

#[test]
fn parquet_is_not_written_to_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    let out = on_a_terminal(dir.path(), "encode in.jsonl -");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{printed}");
    assert!(
        printed.contains("standard output is a terminal"),
        "{printed}"
    );
    assert!(!printed.contains("PAR1"), "{printed}");
}

#[test]
fn a_missing_output_directory_is_named_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "no/such/out.parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: no/such/out.parquet: I/O error: the directory no/such does not exist\n"
    );
}

/// A directory, there or named with a trailing `/`, takes a dataset:
/// without a limit per file, the options that write one are named (a name
/// ending in `/` gave "Not a directory (os error 20)").
#[test]
fn a_directory_as_the_output_of_one_file_names_the_options_that_write_a_dataset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), LINES).unwrap();
    std::fs::create_dir(dir.path().join("there")).unwrap();
    for output in ["there", "there/", "new/"] {
        let out = vshred_in(dir.path(), &["encode", "in.jsonl", output]);
        assert_eq!(out.status.code(), Some(1), "{output}");
        assert_eq!(
            stderr(&out),
            format!(
                "vshred: invalid arguments: {output}: a directory takes a dataset of files, which --max-file-rows N or --max-file-bytes N writes; give a file's name to write one file\n"
            )
        );
    }
    assert!(!dir.path().join("new").exists());
    let dataset = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "new/", "--max-file-rows", "1"],
    );
    assert!(dataset.status.success(), "{}", stderr(&dataset));
    assert!(dir.path().join("new").is_dir());
}

/// SIGINT or SIGTERM while encoding: the temporary file is removed and
/// the process exits as the signal would.
#[test]
fn a_signal_while_encoding_leaves_no_temporary_file() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        // More lines than the sample, then stdin stays open: the encoder
        // has its temporary file and waits for more input.
        let args = ["encode", "-", "new.parquet", "--sample-rows", "10"];
        let (mut child, stdin) = encoding_from_a_pipe(dir.path(), &args, 100);
        let started = std::time::Instant::now();
        while !names(dir.path()).iter().any(|n| n.ends_with(".tmp")) {
            assert!(
                started.elapsed().as_secs() < 30,
                "no temporary file appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(
            names(dir.path()).is_empty(),
            "{signal}: {:?}",
            names(dir.path())
        );
    }
}

/// `encode IN -` into a reader that stops early (`| head -c 100`) fails,
/// saying so: the reader has a file cut short (it ended quietly, with
/// success, as `cat` into `| head` does, where the reader asked for no
/// more text; a reader that failed halfway went unnoticed).
#[test]
fn encoding_to_a_reader_that_stops_early_is_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..200_000)
        .map(|i| format!("{{\"id\":{i},\"s\":\"text {}\"}}\n", i * 7919 % 100_003))
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    let (start, out) = read_100_bytes(dir.path(), &["encode", "in.jsonl", "-"]);
    assert_eq!(&start[..4], b"PAR1");
    assert_eq!(
        (out.status.code(), stderr(&out)),
        (
            Some(1),
            "vshred: standard output was closed before the Parquet file was complete: its reader has a file cut short\n"
        )
    );
}

/// `sql` into a reader that stops early ends quietly in every format: CSV
/// ended with "Csv error: Broken pipe" and status 1.
#[test]
fn sql_to_a_reader_that_stops_early_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["csv", "json", "table"] {
        let query = "SELECT value AS n, 'some text' AS s FROM range(2000000)";
        let (_, out) = read_100_bytes(dir.path(), &["sql", "--format", format, query]);
        assert_eq!((out.status.code(), stderr(&out)), (Some(0), ""), "{format}");
    }
}

/// Runs vshred with `args` in `dir`, reads the first 100 bytes of its
/// output and closes the pipe: the rest cannot be written.
fn read_100_bytes(dir: &Path, args: &[&str]) -> ([u8; 100], std::process::Output) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut start = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut start).unwrap();
    (start, child.wait_with_output().unwrap())
}
