//! `vshred sql` as a user meets it: rows in each format, several
//! statements, settings, timing, and one-line errors.

mod binary;

use binary::{encoded, fails_with, stderr, stdout, vshred_in, vshred_piped};

const ROWS: &str = concat!(
    r#"{"id":1,"v":{"a":1,"s":"x","d":1.50}}"#,
    "\n",
    r#"{"id":2,"v":{"a":2,"s":"y","t":[true,null]}}"#,
    "\n",
    r#"{"id":3,"v":{"a":"three"}}"#,
    "\n"
);

fn dataset() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "t.parquet", ROWS, &["--variant-field", "v"]);
    dir
}

#[test]
fn json_rows_are_what_cat_prints() {
    let dir = dataset();
    let cat = vshred_in(dir.path(), &["cat", "t.parquet"]);
    let sql = vshred_in(
        dir.path(),
        &["sql", "--format", "json", "SELECT * FROM 't.parquet'"],
    );
    assert!(sql.status.success(), "{}", stderr(&sql));
    assert_eq!(stdout(&sql), stdout(&cat));
}

/// A table shows a long text's first 4,096 characters and says so: the
/// table printer took 7 s for one of 8 MB, minutes for longer ones. CSV
/// prints it whole.
#[test]
fn a_table_cuts_long_texts_and_says_so() {
    let dir = dataset();
    let query = "SELECT repeat('é', 5000) AS long, 'short' AS s";
    let table = vshred_in(dir.path(), &["sql", query]);
    assert!(table.status.success(), "{}", stderr(&table));
    let shown = stdout(&table);
    assert!(
        shown.contains(&format!("| {}… | short |", "é".repeat(4096))),
        "{shown}"
    );
    assert!(
        stderr(&table).contains(
            "1 of the values shown are cut to 4096 characters (…); --format json or csv prints them whole"
        ),
        "{}",
        stderr(&table)
    );
    let csv = vshred_in(dir.path(), &["sql", "--format", "csv", query]);
    assert!(stdout(&csv).contains(&"é".repeat(5000)), "{}", stdout(&csv));
    assert!(stderr(&csv).is_empty(), "{}", stderr(&csv));
    // Binary, shown as hex, and dictionary texts are cut too.
    let query = "SELECT CAST(repeat('a', 3000) AS BINARY) AS b, \
                 arrow_cast(repeat('d', 5000), 'Dictionary(Int32, Utf8)') AS d";
    let table = vshred_in(dir.path(), &["sql", query]);
    let shown = stdout(&table);
    assert!(
        shown.contains(&format!(
            "| {}… | {}… |",
            "61".repeat(2048),
            "d".repeat(4096)
        )),
        "{shown}"
    );
    assert!(
        stderr(&table).contains("2 of the values shown are cut"),
        "{}",
        stderr(&table)
    );
}

#[test]
fn tables_and_csv_show_variants_as_json_text() {
    let dir = dataset();
    let query = "SELECT id, try_variant_get(v, '$.a', 'int') AS a, variant_get(v, '$.d', 'decimal(4,2)') AS d, v FROM 't.parquet' ORDER BY id";
    let table = vshred_in(dir.path(), &["sql", query]);
    assert!(table.status.success(), "{}", stderr(&table));
    let shown = stdout(&table);
    let cells: Vec<Vec<&str>> = shown
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(cells[0], ["id", "a", "d", "v"], "{shown}");
    assert_eq!(
        cells[1],
        ["1", "1", "1.50", r#"{"a":1,"d":1.50,"s":"x"}"#],
        "{shown}"
    );
    assert_eq!(cells[3], ["3", r#"{"a":"three"}"#], "{shown}");
    let csv = vshred_in(dir.path(), &["sql", "--format", "csv", query]);
    let lines: Vec<&str> = stdout(&csv).lines().collect();
    assert_eq!(lines[0], "id,a,d,v");
    assert_eq!(lines[1], r#"1,1,1.50,"{""a"":1,""d"":1.50,""s"":""x""}""#);
}

/// A null is an empty field and an empty text `""`, as Spark and DuckDB
/// write them (Arrow's writer wrote both as an empty field); a field
/// holding a comma, a quote or a line break is quoted.
#[test]
fn csv_tells_null_from_an_empty_text() {
    let dir = dataset();
    let query = "SELECT * FROM (VALUES (1, '', NULL, 'a,b', 'q\"x'), (NULL, 'x', '', E'l\\nm', NULL)) t(i, e, n, c, q)";
    let csv = vshred_in(dir.path(), &["sql", "--format", "csv", query]);
    assert!(csv.status.success(), "{}", stderr(&csv));
    assert_eq!(
        stdout(&csv),
        "i,e,n,c,q\n1,\"\",,\"a,b\",\"q\"\"x\"\n,x,\"\",\"l\nm\",\n"
    );
    // Alone in its row, a null is not an empty line, which readers skip.
    let alone = "SELECT s FROM (VALUES ('a'), (NULL), ('')) t(s)";
    let csv = vshred_in(dir.path(), &["sql", "--format", "csv", alone]);
    assert_eq!(stdout(&csv), "s\na\n\"\"\n\"\"\n");
}

/// No rows still name their columns, so that a script tells an empty
/// result from a query that returns nothing (it printed nothing at all);
/// a statement that returns no columns (DDL, `SET`) prints nothing.
#[test]
fn an_empty_result_prints_its_header() {
    let dir = dataset();
    let query = "SELECT id, v FROM 't.parquet' WHERE id > 100";
    let csv = vshred_in(dir.path(), &["sql", "--format", "csv", query]);
    assert_eq!(stdout(&csv), "id,v\n");
    let table = vshred_in(dir.path(), &["sql", query]);
    assert_eq!(
        stdout(&table),
        "+----+---+\n| id | v |\n+----+---+\n+----+---+\n"
    );
    let json = vshred_in(dir.path(), &["sql", "--format", "json", query]);
    assert_eq!(stdout(&json), "");
    let ddl = vshred_in(
        dir.path(),
        &["sql", "--format", "csv", "CREATE VIEW w AS SELECT 1 AS a"],
    );
    assert!(
        ddl.status.success() && stdout(&ddl).is_empty(),
        "{}",
        stdout(&ddl)
    );
}

#[test]
fn statements_run_in_turn_from_a_file_with_settings_and_timing() {
    let dir = dataset();
    std::fs::write(
        dir.path().join("q.sql"),
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 't.parquet';\n\
         SELECT count(*) AS n FROM t WHERE variant_get(v, '$.s', 'string') = 'y';\n\
         SHOW datafusion.execution.batch_size;",
    )
    .unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "--file",
            "q.sql",
            "--format",
            "csv",
            "--set",
            "datafusion.execution.batch_size=7",
            "--timing",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "n\n1\nname,value\ndatafusion.execution.batch_size,7\n"
    );
    let timings: Vec<&str> = stderr(&out).lines().collect();
    assert_eq!(timings.len(), 3, "{timings:?}");
    // The runtime's settings too, as SET makes them (they are not the
    // session's options, and --set refused them).
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "--format",
            "csv",
            "--set",
            "datafusion.runtime.memory_limit=100M",
            "SHOW datafusion.runtime.memory_limit",
        ],
    );
    assert_eq!(
        stdout(&out),
        "name,value\ndatafusion.runtime.memory_limit,100M\n",
        "{}",
        stderr(&out)
    );
    fails_with(
        dir.path(),
        &[
            "sql",
            "--set",
            "datafusion.runtime.memory_limt=1M",
            "SELECT 1",
        ],
        "--set datafusion.runtime.memory_limt=1M: Unknown runtime configuration",
    );
    assert!(
        timings
            .iter()
            .all(|t| t.starts_with("Elapsed ") && t.ends_with(" seconds."))
    );
}

#[test]
fn errors_are_one_line() {
    let dir = dataset();
    fails_with(
        dir.path(),
        &[
            "sql",
            "SELECT variant_get(v, '$.a', 'bigint') FROM 't.parquet'",
        ],
        r#"t.parquet: conversion failed at row 2: $.a: "three" does not convert to int64 (try_variant_get or TRY_CAST gives null instead)"#,
    );
    fails_with(dir.path(), &["sql", "SELECT nope FROM 't.parquet'"], "nope");
    // A wrong count of arguments is the query's mistake, not a bug of
    // DataFusion's to report.
    let out = vshred_in(
        dir.path(),
        &["sql", "SELECT variant_get(v) FROM 't.parquet'"],
    );
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "vshred: variant_get takes a Variant, a path and optionally a type, not 1 argument"
        ) && !err.contains("bug"),
        "{err}"
    );
    fails_with(
        dir.path(),
        &["sql", "SELEC 1"],
        "vshred: SQL syntax error: Expected: an SQL statement, found: SELEC at Line: 1, Column: 1",
    );
    fails_with(
        dir.path(),
        &["sql", "SELECT 1; SELECT nope; SELECT 3"],
        "vshred: statement 2 of 3: No field named nope.",
    );
    fails_with(
        dir.path(),
        &["sql", "--set", "nonsense", "SELECT 1"],
        "--set nonsense: expected KEY=VALUE",
    );
    fails_with(
        dir.path(),
        &[
            "sql",
            "SELECT variant_get(v, '$.a', 'map<string,int>') FROM 't.parquet'",
        ],
        "not supported yet",
    );
}

#[test]
fn a_missing_file_or_directory_is_named_as_missing() {
    let dir = dataset();
    for (query, missing) in [
        ("SELECT * FROM 'nope.parquet'", "nope.parquet"),
        ("SELECT * FROM 'nope/'", "nope/"),
        ("SELECT * FROM read_jsonl('nope.jsonl')", "nope.jsonl"),
    ] {
        let out = vshred_in(dir.path(), &["sql", query]);
        assert_eq!(out.status.code(), Some(1), "{query}");
        assert_eq!(
            stderr(&out),
            format!("vshred: {missing}: I/O error: No such file or directory (os error 2)\n"),
            "{query}"
        );
    }
    // Another name with a `/` is a path or a table's name: a table may be
    // made under it.
    let out = vshred_in(dir.path(), &["sql", "SELECT * FROM 'nope/x'"]);
    assert_eq!(
        stderr(&out),
        "vshred: nope/x: no such file or directory (nor a table of that name)\n"
    );
    let made = vshred_in(
        dir.path(),
        &[
            "sql",
            "CREATE TABLE \"m/n\" AS SELECT 1 AS a; SELECT a FROM \"m/n\"",
        ],
    );
    assert!(made.status.success(), "{}", stderr(&made));
}

/// read_jsonl reads its file twice (to plan, then to run): a pipe would
/// give its rows to the plan and none to the query, so it is refused.
#[test]
fn read_jsonl_refuses_a_pipe_rather_than_count_nothing() {
    let dir = dataset();
    let out = vshred_piped(
        dir.path(),
        &["sql", "SELECT count(*) AS n FROM read_jsonl('/dev/stdin')"],
        b"1\n2\n3\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("/dev/stdin: invalid arguments: read_jsonl reads a regular file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn from_reads_a_parquet_file_whatever_its_name_and_points_json_lines_to_read_jsonl() {
    let dir = dataset();
    std::fs::copy(dir.path().join("t.parquet"), dir.path().join("T.PARQUET")).unwrap();
    std::fs::copy(dir.path().join("t.parquet"), dir.path().join("snapshot")).unwrap();
    for name in ["T.PARQUET", "snapshot"] {
        let query = format!("SELECT count(*) AS n FROM '{name}'");
        let out = vshred_in(dir.path(), &["sql", "--format", "json", &query]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(stdout(&out), "{\"n\":3}\n", "{name}");
    }
    std::fs::write(dir.path().join("in.jsonl"), ROWS).unwrap();
    fails_with(
        dir.path(),
        &["sql", "SELECT * FROM 'in.jsonl'"],
        "in.jsonl is JSON Lines, which read_jsonl('in.jsonl') reads",
    );
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    fails_with(
        dir.path(),
        &["sql", "SELECT * FROM 'notes.txt'"],
        "notes.txt is not a Parquet file (FROM reads Parquet files, and CSV, JSON, Avro and Arrow files by their extension)",
    );
    // A glob is read when it matches Parquet files alone, by name or by
    // their first bytes, and refused, naming two, when it matches files of
    // more than one kind: DataFusion read those of the first one's
    // extension alone (T.PARQUET, one of three Parquet files; the CSV file
    // beside a JSON file). One whose files DataFusion does not read names
    // one (it was "table ... not found").
    std::fs::create_dir(dir.path().join("parts")).unwrap();
    for part in ["parts/part-0", "parts/part-1"] {
        std::fs::copy(dir.path().join("t.parquet"), dir.path().join(part)).unwrap();
    }
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "--format",
            "json",
            "SELECT count(*) AS n FROM 'parts/*'",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"n\":6}\n");
    std::fs::create_dir(dir.path().join("mixed")).unwrap();
    std::fs::write(dir.path().join("mixed/a.csv"), "x\n1\n").unwrap();
    std::fs::write(dir.path().join("mixed/b.json"), "{\"x\":2}\n").unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/a.txt"), "hello\n").unwrap();
    for (glob, message) in [
        (
            "*",
            "* matches files of more than one kind, T.PARQUET and in.jsonl (FROM reads a glob",
        ),
        (
            "mixed/*",
            "mixed/* matches files of more than one kind, mixed/a.csv and mixed/b.json",
        ),
        (
            "notes/*",
            "notes/* matches notes/a.txt, which is not a Parquet file (FROM reads a glob",
        ),
    ] {
        fails_with(
            dir.path(),
            &["sql", &format!("SELECT count(*) FROM '{glob}'")],
            message,
        );
    }
    let out = vshred_in(
        dir.path(),
        &[
            "sql",
            "SELECT variant_get(v, '$.a', 'bogus') FROM 't.parquet'",
        ],
    );
    let err = stderr(&out);
    assert!(
        err.contains("unknown type \"bogus\"") && !err.contains("shredding schema"),
        "{err}"
    );
}

/// A Variant inside a struct or a list (`variant_explode`'s `value`) is
/// its JSON in every format, and a nested column is JSON text in a table
/// and in CSV (which has no nested form).
#[test]
fn a_variant_inside_a_struct_prints_as_json_in_every_format() {
    let dir = dataset();
    let query = "SELECT unnest(variant_explode(v)) AS e FROM 't.parquet' WHERE id = 1 LIMIT 1";
    for (format, expected) in [
        ("json", "{\"e\":{\"pos\":0,\"key\":\"a\",\"value\":1}}\n"),
        (
            "csv",
            "e\n\"{\"\"pos\"\":0,\"\"key\"\":\"\"a\"\",\"\"value\"\":1}\"\n",
        ),
    ] {
        let out = vshred_in(dir.path(), &["sql", "--format", format, query]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{format}");
    }
    let out = vshred_in(dir.path(), &["sql", query]);
    assert!(
        stdout(&out).contains("| {\"pos\":0,\"key\":\"a\",\"value\":1} |"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_readme_shows_what_sql_prints() {
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"SELECT count(*) AS n"),
        5
    );
}

/// The reported comparisons, which compared bytes (a count of 0, `false`),
/// are a one-line error naming what to compare instead; the README's
/// comparisons of typed values and texts print what it shows.
#[test]
fn comparing_variants_is_an_error_and_the_readme_shows_what_to_compare() {
    let dir = tempfile::tempdir().unwrap();
    encoded(
        dir.path(),
        "g.parquet",
        "{\"o\":1,\"a\":1}\n{\"o\":1}\n",
        &["--shred", "none"],
    );
    for query in [
        "SELECT count(*) FROM 'g.parquet' WHERE variant_get(v,'$.o') = parse_json('1')",
        r#"SELECT parse_json('{"a":1,"b":2}') = parse_json('{"b":2,"a":1}') AS eq"#,
    ] {
        fails_with(
            dir.path(),
            &["sql", query],
            "cannot compare Variant values: = of ",
        );
    }
    // Grouping is refused by an analyzer rule, whose name is left out.
    let grouped = vshred_in(
        dir.path(),
        &["sql", "SELECT count(*) FROM 'g.parquet' GROUP BY v"],
    );
    assert!(
        stderr(&grouped).starts_with("vshred: cannot group or sort Variant values: GROUP BY of "),
        "{}",
        stderr(&grouped)
    );
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"SELECT to_json(parse_json("),
        2
    );
}

#[test]
fn the_readme_shows_what_variant_explode_gives() {
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"SELECT * FROM variant_explode"),
        3
    );
}

#[test]
fn the_readme_shows_a_sum_past_its_type_failing() {
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"SELECT sum(x) FROM (VALUES"),
        1
    );
}

#[test]
fn the_readme_shows_what_copy_writes() {
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"COPY (SELECT * FROM read_jsonl"),
        2
    );
}

#[test]
fn copy_to_a_path_without_an_extension_writes_a_parquet_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), ROWS).unwrap();
    let copy = vshred_in(
        dir.path(),
        &[
            "sql",
            "COPY (SELECT * FROM read_jsonl('in.jsonl')) TO 'out'",
        ],
    );
    assert!(copy.status.success(), "{}", stderr(&copy));
    let files: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        !files.is_empty()
            && files
                .iter()
                .all(|f| f.extension().is_some_and(|e| e == "parquet")),
        "{files:?}"
    );
    let cat = vshred_in(dir.path(), &["cat", "out"]);
    assert!(cat.status.success(), "{}", stderr(&cat));
    let lines: Vec<serde_json::Value> = stdout(&cat)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expected: Vec<serde_json::Value> = ROWS
        .lines()
        .map(|l| serde_json::json!({"v": serde_json::from_str::<serde_json::Value>(l).unwrap()}))
        .collect();
    assert_eq!(lines, expected);
}

#[test]
fn statements_come_from_stdin_when_none_are_given() {
    let dir = dataset();
    let out = vshred_piped(
        dir.path(),
        &["sql", "--format", "csv"],
        b"SELECT count(*) AS n FROM 't.parquet';\nSELECT 2 AS two",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "n\n3\ntwo\n2\n");
}

/// At a terminal, `vshred sql` prompts: a statement may span lines, runs
/// at its `;`, an error is shown and the prompt goes on, `\q` ends it, and
/// the statements are kept as history.
#[test]
fn a_terminal_gets_a_prompt_with_history() {
    let dir = dataset();
    let lines = [
        "SELECT count(*) +",
        " 1 AS n FROM 't.parquet';",
        "SELECT nope;",
        "SELECT 7 AS after;",
        "\\q",
    ];
    // Paced, as a user types: the prompt reads a line at a time (the
    // first once the prompt is up, however long a loaded machine takes to
    // start the binary).
    let typed: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let pause = if i == 0 { "3" } else { "0.5" };
            format!(
                "sleep {pause}; printf '%s\\n' '{}'",
                l.replace('\'', "'\\''")
            )
        })
        .collect();
    let command = format!(
        "({}) | script -qec '{} sql' /dev/null",
        typed.join("; "),
        env!("CARGO_BIN_EXE_vshred")
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // What the terminal showed, without its control sequences.
    let shown = stdout(&out).replace('\r', "");
    let shown: String = {
        let mut plain = String::new();
        let mut chars = shown.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                // CSI: ESC [ parameters final-letter.
                chars.next();
                while chars.next().is_some_and(|c| !c.is_ascii_alphabetic()) {}
                continue;
            }
            plain.push(c);
        }
        plain
    };
    assert!(shown.contains("vshred> SELECT count(*) +"), "{shown}");
    assert!(shown.contains("| 4 |"), "3 rows + 1: {shown}");
    assert!(shown.contains("vshred: No field named nope."), "{shown}");
    assert!(shown.contains("| 7     |"), "the prompt went on: {shown}");
    let history = std::fs::read_to_string(dir.path().join(".vshred_history")).unwrap();
    assert!(history.contains("SELECT 7 AS after;"), "{history}");
}

/// A `COPY` interrupted by a signal (Ctrl-C, SIGTERM) leaves nothing: the
/// files the store had staged and the directories it made go, as a failed
/// `COPY`'s do; the process exits at once, with no time to unwind. One
/// killed outright leaves its staged files under hidden names, which
/// readers skip.
#[test]
fn an_interrupted_copy_leaves_no_staged_file_and_no_directory() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("kept")).unwrap();
    for (signal, code) in [("-INT", Some(130)), ("-TERM", Some(143)), ("-KILL", None)] {
        // Uploaded in parts of 1 KiB, so that parts are staged at once;
        // the query runs far longer than the test waits.
        let child = Command::new(env!("CARGO_BIN_EXE_vshred"))
            .args([
                "sql",
                "--set",
                "datafusion.execution.objectstore_writer_buffer_size=1024",
                "COPY (SELECT value AS n FROM range(10000000000)) TO 'kept/new/'",
            ])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let target = dir.path().join("kept/new");
        let started = std::time::Instant::now();
        let staged = || {
            std::fs::read_dir(&target).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.contains(".parquet.vshred-") && name.ends_with("#1")
                })
            })
        };
        let mut child = child;
        while !staged() {
            if started.elapsed().as_secs() >= 60 {
                // Not left running: its query would go on for hours.
                let _ = child.kill();
                panic!("no part was staged");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), code, "{}", stderr(&out));
        let left: Vec<_> = std::fs::read_dir(dir.path().join("kept"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        if code.is_some() {
            assert!(left.is_empty(), "{signal}: {left:?}");
            continue;
        }
        let staged: Vec<_> = std::fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            !staged.is_empty() && staged.iter().all(|name| name.starts_with('.')),
            "{staged:?}"
        );
    }
}
