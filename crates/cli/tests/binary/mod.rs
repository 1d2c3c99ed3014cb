//! Running the `vshred` binary from the tests that check it as a user
//! meets it: its stdout, stderr and exit code. Each test crate uses a part.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};

/// Runs `vshred` in `dir` without stdin.
pub fn vshred_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("vshred runs")
}

/// Runs `vshred` in `dir` with `stdin` piped in.
pub fn vshred_piped(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the vshred binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    // vshred may stop reading early (at an error): a closed pipe is fine.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("vshred finishes")
}

pub fn stdout(out: &Output) -> &str {
    std::str::from_utf8(&out.stdout).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).expect("stderr is UTF-8")
}

/// Runs `vshred` in `dir` and asserts that it fails with exit code 1 and
/// one line on stderr that contains `says`.
pub fn fails_with(dir: &Path, args: &[&str], says: &str) {
    let out = vshred_in(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(says), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
}

/// Runs `vshred ARGS` in `dir` with a terminal for its stdout and stderr
/// (through `script`); what the terminal showed.
pub fn on_a_terminal(dir: &Path, args: &str) -> Output {
    let command = format!("{} {args}", env!("CARGO_BIN_EXE_vshred"));
    Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("script runs")
}

/// Encodes `lines` to `dir/name` with `args`.
pub fn encoded(dir: &Path, name: &str, lines: &str, args: &[&str]) {
    let output = dir.join(name);
    std::fs::create_dir_all(output.parent().unwrap()).unwrap();
    // Beside the dataset, not in it.
    let input = dir.join("input.jsonl");
    std::fs::write(&input, lines).unwrap();
    let mut all = vec!["encode", input.to_str().unwrap(), output.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = vshred_in(dir, &all);
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    std::fs::remove_file(input).unwrap();
}

/// Rows `from..to` of objects `{"id":i,"v":{"a":..,"b":..}}`.
pub fn rows(from: i64, to: i64, a: impl Fn(i64) -> String) -> String {
    (from..to)
        .map(|i| format!("{{\"id\":{i},\"v\":{{\"a\":{},\"b\":\"x{i}\"}}}}\n", a(i)))
        .collect()
}

/// `vshred ARGS` started in `dir`, its stderr piped, given `lines` lines
/// `{"i":N}` on a pipe that stays open: an encoder waiting for more input,
/// for a test to signal. The pipe is returned with the child; dropping it
/// ends the input.
pub fn encoding_from_a_pipe(dir: &Path, args: &[&str], lines: usize) -> (Child, ChildStdin) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vshred"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vshred starts");
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..lines {
        writeln!(stdin, "{{\"i\":{i}}}").unwrap();
    }
    stdin.flush().unwrap();
    (child, stdin)
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs each command of the README's `console` block that starts with
/// `first` (in the repository's root, with this `vshred` first on the
/// `PATH`) and asserts that it prints what the README shows (standard
/// output, then standard error), and succeeds unless what it shows is an
/// error alone (`vshred: ...`). Returns how many commands ran.
pub fn readme_console_block(first: &str) -> usize {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find(&format!("```console\n{first}"))
        .unwrap_or_else(|| panic!("no console block starts with {first:?} in the README"));
    let block = &readme[start + "```console\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let bin = Path::new(env!("CARGO_BIN_EXE_vshred")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    // The README's `/tmp/` is a directory of the test's own: the machine's
    // may hold a file of that name that another user owns.
    let tmp = tempfile::tempdir().unwrap();
    let mut commands = 0;
    for example in block.split("\n$ ").map(|e| e.trim_start_matches("$ ")) {
        let (command, shown) = example.split_once('\n').unwrap();
        let command = command.replace("/tmp/", &format!("{}/", tmp.path().display()));
        let out = Command::new("sh")
            .args(["-c", &command])
            .current_dir(root)
            .env("PATH", &path)
            .output()
            .unwrap();
        let shown = shown.strip_suffix('\n').unwrap_or(shown);
        let an_error = shown.starts_with("vshred: ") && !shown.contains('\n');
        assert_eq!(
            out.status.success(),
            !an_error,
            "{command}: {}",
            stderr(&out)
        );
        let printed = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(printed.trim_end_matches('\n'), shown, "{command}");
        commands += 1;
    }
    commands
}

/// Makes a named pipe at `path`.
pub fn fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}
