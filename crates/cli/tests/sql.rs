//! `vshred sql` as a user meets it: rows in each format, several
//! statements, settings, timing, and one-line errors.

mod binary;

use binary::{encoded, fails_with, stderr, stdout, vshred_in};

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
        r#"t.parquet: out of range at row 2: $.a: "three" does not convert to int64"#,
    );
    fails_with(dir.path(), &["sql", "SELECT nope FROM 't.parquet'"], "nope");
    fails_with(dir.path(), &["sql", "SELEC 1"], "SELEC");
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
fn the_readme_shows_what_sql_prints() {
    assert_eq!(
        binary::readme_console_block("$ vshred sql \"SELECT count(*) AS n"),
        2
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
