//! The `vshred` binary: stdout, stderr and exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn vshred(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the vshred binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin)
        .expect("stdin takes the input");
    child.wait_with_output().expect("vshred finishes")
}

fn stdout(out: &Output) -> &str {
    std::str::from_utf8(&out.stdout).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).expect("stderr is UTF-8")
}

#[test]
fn roundtrip_prints_each_line_as_the_variant_keeps_it() {
    let out = vshred(
        &["roundtrip", "-"],
        b"{\"b\": 1.50, \"a\": [1e3, 9223372036854775808]}\n\n\"x\"\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"a\":[1000.0,9223372036854775808],\"b\":1.50}\n\"x\"\n"
    );
}

#[test]
fn roundtrip_sizes_prints_metadata_and_value_lengths() {
    let out = vshred(&["roundtrip", "--sizes", "-"], b"{\"a\":1}\n");
    assert!(out.status.success(), "{}", stderr(&out));
    // metadata: header, size, 2 offsets, "a"; value: header, count, id,
    // 2 offsets, int8 (2 bytes).
    assert_eq!(stdout(&out), "5\t7\n");
}

#[test]
fn bad_line_fails_with_one_line_naming_file_row_line_and_column() {
    let out = vshred(&["roundtrip", "-"], b"{\"a\":1}\n{\"a\":1,\"a\":2}\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: -: invalid JSON at row 1, line 2, column 8 (byte 15): duplicate key \"a\"\n"
    );
    assert_eq!(stdout(&out), "{\"a\":1}\n");
}

#[test]
fn keep_last_duplicate_keeps_the_last_value() {
    let out = vshred(
        &["roundtrip", "--keep-last-duplicate", "-"],
        b"{\"a\":1,\"b\":[2],\"a\":\"last\"}\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"a\":\"last\",\"b\":[2]}\n");
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let out = vshred(&["roundtrip", "no/such/file.jsonl"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("vshred: no/such/file.jsonl: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bundled_example_round_trips() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/events.jsonl");
    let out = vshred(&["roundtrip", example], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 5);
    assert!(
        stdout(&out).contains("\"price\":104.80"),
        "{}",
        stdout(&out)
    );
}
