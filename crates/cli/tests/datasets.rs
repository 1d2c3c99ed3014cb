//! Datasets: a directory or a glob of files with differing layouts reads
//! as one, and every answer is what reading each file alone gives.

use std::path::Path;
use std::sync::Arc;

mod binary;
use binary::{encoded, fails_with, readme_console_block, rows, stderr, stdout, vshred_in};

/// A directory of files that differ in layout, decimal storage, the type
/// of `$.a`, and in having the Variant column at all; plus files that are
/// not data.
fn mixed(dir: &Path) {
    let split = ["--variant-field", "v"];
    encoded(
        dir,
        "data/part-0.parquet",
        &rows(0, 50, |i| i.to_string()),
        &split,
    );
    encoded(
        dir,
        "data/part-1.parquet",
        &rows(50, 100, |i| format!("{i}.5")),
        &[
            "--variant-field",
            "v",
            "--shred",
            "spark",
            "--decimal",
            "flba",
        ],
    );
    encoded(
        dir,
        "data/day=2/part-2.parquet",
        &rows(100, 150, |i| format!("\"s{i}\"")),
        &["--variant-field", "v", "--shred", "none"],
    );
    // No Variant column at all: only ids and a column the others lack.
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("note", DataType::Utf8, true),
    ]));
    let batch = arrow::array::RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![150, 151])) as ArrayRef,
            Arc::new(StringArray::from(vec!["n1", "n2"])) as ArrayRef,
        ],
    )
    .unwrap();
    let file = std::fs::File::create(dir.join("data/part-3.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::write(dir.join("data/_SUCCESS"), "").unwrap();
    std::fs::write(dir.join("data/.part-0.parquet.crc"), "junk").unwrap();
    std::fs::write(dir.join("data/_temporary.parquet"), "junk").unwrap();
}

const FILES: [&str; 4] = [
    "data/day=2/part-2.parquet",
    "data/part-0.parquet",
    "data/part-1.parquet",
    "data/part-3.parquet",
];

/// What `args` (with the input first) prints for each file alone,
/// concatenated in path order.
fn each_alone(dir: &Path, command: &str, args: &[&str]) -> String {
    FILES
        .iter()
        .map(|file| {
            let mut all = vec![command, *file];
            all.extend_from_slice(args);
            let out = vshred_in(dir, &all);
            assert!(out.status.success(), "{file}: {}", stderr(&out));
            stdout(&out).to_string()
        })
        .collect()
}

#[test]
fn a_directory_reads_as_its_files_would_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    // The file without a Variant column gives nulls; alone it has none to
    // read, so it is left out of the comparison and checked apart.
    for args in [
        &["$.a"][..],
        &["$.b", "--as", "string"],
        &["$.a", "--as", "double"],
    ] {
        let whole = vshred_in(dir.path(), &[&["get", "data"][..], args].concat());
        assert!(whole.status.success(), "{args:?}: {}", stderr(&whole));
        let alone: String = FILES[..3]
            .iter()
            .map(|file| {
                let out = vshred_in(dir.path(), &[&["get", file][..], args].concat());
                stdout(&out).to_string()
            })
            .collect();
        assert_eq!(stdout(&whole), format!("{alone}null\nnull\n"), "{args:?}");
    }
    let sum = vshred_in(
        dir.path(),
        &["get", "data", "$.a", "--as", "double", "--agg", "sum"],
    );
    // 0..49, then 50.5..99.5; the strings and the nulls are not numbers.
    let expected: f64 =
        (0..50).map(|i| i as f64).sum::<f64>() + (50..100).map(|i| i as f64 + 0.5).sum::<f64>();
    assert_eq!(stdout(&sum).trim().parse::<f64>().unwrap(), expected);
}

#[test]
fn rows_have_the_columns_of_every_file_null_where_a_file_lacks_one() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let out = vshred_in(dir.path(), &["cat", "data"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<&str> = stdout(&out).lines().collect();
    assert_eq!(lines.len(), 152);
    // Columns in the order they first appear: id, v (part-2), then note;
    // last, the day=2 directory's, null for the files beside it.
    assert_eq!(
        lines[0],
        r#"{"id":100,"v":{"a":"s100","b":"x100"},"note":null,"day":2}"#
    );
    assert_eq!(
        lines[50],
        r#"{"id":0,"v":{"a":0,"b":"x0"},"note":null,"day":null}"#
    );
    assert_eq!(
        lines[100],
        r#"{"id":50,"v":{"a":50.5,"b":"x50"},"note":null,"day":null}"#
    );
    assert_eq!(lines[151], r#"{"id":151,"v":null,"note":"n2","day":null}"#);
    // Columns beside the result, and a filter on a column, that files
    // lack: null there (a Variant one and the filter were errors).
    for (with, filter, printed) in [
        (
            "note,id",
            "id >= 149",
            "{\"note\":null,\"id\":149,\"$.b\":\"x149\"}\n{\"note\":\"n1\",\"id\":150,\"$.b\":null}\n{\"note\":\"n2\",\"id\":151,\"$.b\":null}\n",
        ),
        (
            "v",
            "note is null and id >= 149",
            "{\"v\":{\"a\":\"s149\",\"b\":\"x149\"},\"$.b\":\"x149\"}\n",
        ),
        (
            "v,id",
            "id >= 150",
            "{\"v\":null,\"id\":150,\"$.b\":null}\n{\"v\":null,\"id\":151,\"$.b\":null}\n",
        ),
    ] {
        let out = vshred_in(
            dir.path(),
            &["get", "data", "$.b", "--with", with, "--where", filter],
        );
        assert_eq!(stdout(&out), printed, "{with} {filter}: {}", stderr(&out));
    }
    let cat_each = each_alone(dir.path(), "cat", &["--columns", "id"]);
    let cat_ids = vshred_in(dir.path(), &["cat", "data", "--columns", "id"]);
    assert_eq!(stdout(&cat_ids), cat_each);
}

#[test]
fn a_glob_chooses_files_and_stats_count_files_skipped_by_their_footers() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let out = vshred_in(
        dir.path(),
        &[
            "get",
            "data/part-*.parquet",
            "$.b",
            "--as",
            "string",
            "--agg",
            "count",
        ],
    );
    assert_eq!(stdout(&out), "100\n", "{}", stderr(&out));
    let out = vshred_in(
        dir.path(),
        &[
            "get", "data", "$.b", "--where", "id < 10", "--agg", "count", "--stats",
        ],
    );
    assert_eq!(stdout(&out), "10\n");
    assert!(
        stderr(&out).starts_with(
            "vshred: read 1 of 4 files, 1 of 4 row groups (50 rows); skipped 3 by statistics"
        ),
        "{}",
        stderr(&out)
    );
}

/// A wildcard skips what a directory's walk skips (names starting with `.`
/// or `_`), unless the pattern spells that first character; a pattern
/// that matches nothing says so; a glob the shell expanded is pointed to
/// quotes.
#[test]
fn a_glob_skips_hidden_and_underscore_names_as_a_directory_does() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let count = |input: &str| {
        let out = vshred_in(dir.path(), &["get", input, "$.a", "--agg", "count"]);
        assert!(out.status.success(), "{input}: {}", stderr(&out));
        stdout(&out).to_string()
    };
    let whole = count("data");
    assert_eq!(count("data/*"), whole);
    assert_eq!(count("./data/*"), whole);
    assert_eq!(count("data/*.parquet"), count("data/part-[013].parquet"));
    fails_with(
        dir.path(),
        &["get", "data/_*.parquet", "$.a"],
        "data/_temporary.parquet: Parquet error: not a Parquet file",
    );
    for expanded in [
        &["cat", "data/part-0.parquet", "data/part-1.parquet"][..],
        &["get", "data/part-0.parquet", "data/part-1.parquet", "$.a"],
    ] {
        fails_with(
            dir.path(),
            expanded,
            &format!(
                "(a glob goes in quotes, 'dir/*.parquet', for vshred to expand; see vshred {} --help)",
                expanded[0]
            ),
        );
    }
}

/// A pattern follows links to directories but not a link to a directory
/// it is already in (`d/up -> ..`), which it followed at every level, to
/// the system's limit on links in a path (the rows were counted 41
/// times): each file is read once.
#[test]
fn a_glob_through_a_link_to_a_directory_above_reads_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    encoded(
        dir.path(),
        "sl/d/a.parquet",
        "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n",
        &[],
    );
    std::os::unix::fs::symlink("..", dir.path().join("sl/d/up")).unwrap();
    let count = |pattern: &str| {
        let out = vshred_in(dir.path(), &["get", pattern, "$.id", "--agg", "count"]);
        assert!(out.status.success(), "{pattern}: {}", stderr(&out));
        stdout(&out).to_string()
    };
    assert_eq!(count("sl/**/*.parquet"), "3\n");
    // Under its shortest path: in key=value directories the paths round
    // the loop named the key again and again (refused), and a link to a
    // file is not followed past the system's limit.
    encoded(dir.path(), "hl/day=1/a.parquet", "{\"id\":1}\n", &[]);
    std::os::unix::fs::symlink("..", dir.path().join("hl/day=1/all")).unwrap();
    assert_eq!(count("hl/**/*.parquet"), "1\n");
    encoded(
        dir.path(),
        "g2/sub/x.parquet",
        "{\"id\":1}\n{\"id\":2}\n",
        &[],
    );
    std::os::unix::fs::symlink("..", dir.path().join("g2/sub/up")).unwrap();
    std::os::unix::fs::symlink("sub/x.parquet", dir.path().join("g2/y.parquet")).unwrap();
    assert_eq!(count("g2/**/*.parquet"), "2\n");
    // With a second path to the directory beside the loop, every path
    // through the two was a match, twice as many at each level: the walk
    // did not end, its memory growing.
    std::os::unix::fs::symlink("d", dir.path().join("sl/again")).unwrap();
    assert_eq!(count("sl/**/*.parquet"), "3\n");
    assert_eq!(count("sl/*/*.parquet"), "3\n");
    // `**` and `dir/*/` match directories alone, as the shell's do: not a
    // text file beside the data, nor a link to nothing.
    std::fs::write(dir.path().join("sl/d/notes.txt"), "hi").unwrap();
    std::os::unix::fs::symlink("/nowhere", dir.path().join("sl/gone")).unwrap();
    for pattern in ["sl/**", "sl/*/", "sl/**/"] {
        assert_eq!(count(pattern), "3\n", "{pattern}");
    }
    // The walk goes down, so a `..` after a wildcard is refused, named.
    fails_with(
        dir.path(),
        &["cat", "sl/*/../d/a.parquet"],
        "a pattern's `..` after its first wildcard is not followed: name the directory it leads to",
    );
}

/// A directory was read with each file and each link to it, where a
/// pattern reads the file once; and a link to nothing named as a data
/// file was skipped, where a pattern names it as an error.
#[test]
fn a_directory_reads_a_file_and_a_link_to_it_once_and_names_a_link_to_nothing() {
    let dir = tempfile::tempdir().unwrap();
    encoded(
        dir.path(),
        "d/real/a.parquet",
        "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n",
        &[],
    );
    std::os::unix::fs::symlink("real/a.parquet", dir.path().join("d/alink.parquet")).unwrap();
    let count = |input: &str| {
        let out = vshred_in(dir.path(), &["get", input, "$.id", "--agg", "count"]);
        assert!(out.status.success(), "{input}: {}", stderr(&out));
        stdout(&out).to_string()
    };
    assert_eq!(count("d"), "3\n");
    assert_eq!(count("d/**/*.parquet"), "3\n");
    // A link to a file elsewhere is one of its files.
    encoded(dir.path(), "elsewhere/b.parquet", "{\"id\":4}\n", &[]);
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere/b.parquet"),
        dir.path().join("d/b.parquet"),
    )
    .unwrap();
    assert_eq!(count("d"), "4\n");
    std::os::unix::fs::symlink("/nowhere/c.parquet", dir.path().join("d/c.parquet")).unwrap();
    for input in ["d", "d/*.parquet"] {
        fails_with(
            dir.path(),
            &["cat", input],
            "d/c.parquet: I/O error: No such file or directory",
        );
    }
}

#[test]
fn names_and_files_that_fit_no_file_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    fails_with(
        dir.path(),
        &["get", "data", "$.a", "--with", "nope"],
        "no column \"nope\" in any of the 4 files",
    );
    fails_with(
        dir.path(),
        &["cat", "data", "--columns", "nope"],
        "no column \"nope\" in any of the 4 files",
    );
    fails_with(
        dir.path(),
        &["get", "data", "$.a", "--column", "id"],
        "no Variant column \"id\" in any of the 4 files",
    );
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    fails_with(
        dir.path(),
        &["cat", "empty"],
        "empty: invalid arguments: no Parquet file here",
    );
    fails_with(
        dir.path(),
        &["cat", "nothing-*.parquet"],
        "nothing-*.parquet: invalid arguments: no Parquet file matches this pattern",
    );
    std::fs::write(dir.path().join("data/bad.parquet"), "not parquet").unwrap();
    fails_with(
        dir.path(),
        &["cat", "data"],
        "data/bad.parquet: Parquet error: not a Parquet file",
    );
}

/// The README's dataset commands print what it shows (standard output,
/// then standard error).
#[test]
fn the_readme_shows_what_dataset_commands_print() {
    assert_eq!(
        readme_console_block("$ vshred get testdata/datasets/engines"),
        2
    );
}

/// "No row can pass" is said of a dataset only when every file says it:
/// one file storing `code` as numbers and another as strings each rule out
/// one kind of literal, and the dataset neither.
#[test]
fn a_filter_is_warned_about_only_when_no_file_can_pass_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("w")).unwrap();
    // Shredded whatever it costs: 300 rows of one small field are as
    // small unshredded, and `auto` leaves them so.
    const SHREDDED: &[&str] = &["--shred", "spark"];
    let lines = |code: &dyn Fn(i64) -> String| -> String {
        (0..300)
            .map(|i| format!("{{\"code\":{}}}\n", code(i)))
            .collect()
    };
    encoded(
        dir.path(),
        "w/a.parquet",
        &lines(&|i| i.to_string()),
        SHREDDED,
    );
    encoded(
        dir.path(),
        "w/b.parquet",
        &lines(&|i| format!("\"E{i}\"")),
        SHREDDED,
    );
    for (filter, found) in [
        ("$.code == 250", "250\n"),
        (r#"$.code == "E250""#, "\"E250\"\n"),
    ] {
        let out = vshred_in(dir.path(), &["get", "w", "$.code", "--where", filter]);
        assert_eq!((stdout(&out), stderr(&out)), (found, ""), "{filter}");
    }
    // Both files of numbers: a string can match no row of either.
    std::fs::remove_file(dir.path().join("w/b.parquet")).unwrap();
    encoded(
        dir.path(),
        "w/c.parquet",
        &lines(&|i| (i + 300).to_string()),
        SHREDDED,
    );
    let out = vshred_in(
        dir.path(),
        &["get", "w", "$.code", "--where", r#"$.code == "E250""#],
    );
    assert!(
        stdout(&out).is_empty()
            && stderr(&out).contains(r#"warning: no row can pass `$.code == "E250"`"#),
        "{}",
        stderr(&out)
    );
}

/// What `COPY ... PARTITIONED BY` keeps in its directories comes back as
/// columns, in `cat`, `get` and SQL; a filter on one opens only the files
/// whose directories it passes. The README's example runs as shown.
#[test]
fn key_value_directories_are_columns_and_a_filter_on_them_skips_files() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..40)
        .map(|i| {
            format!(
                "{{\"day\":\"2024-03-{:02}\",\"n\":{},\"v\":{{\"a\":{i}}}}}\n",
                i % 4 + 1,
                i % 3
            )
        })
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    let copy = vshred_in(
        dir.path(),
        &[
            "sql",
            "COPY (SELECT * FROM read_jsonl('in.jsonl', 'v')) TO 'out/' PARTITIONED BY (day, n)",
        ],
    );
    assert!(copy.status.success(), "{}", stderr(&copy));
    assert!(dir.path().join("out/day=2024-03-01/n=0").is_dir());
    // Every row back, with the values its path gives.
    let cat = vshred_in(dir.path(), &["cat", "out"]);
    let mut rows: Vec<&str> = stdout(&cat).lines().collect();
    rows.sort();
    assert_eq!(rows.len(), 40, "{}", stderr(&cat));
    assert_eq!(rows[0], r#"{"v":{"a":0},"day":"2024-03-01","n":0}"#);
    let get = vshred_in(
        dir.path(),
        &[
            "get",
            "out",
            "$.a",
            "--with",
            "n",
            "--where",
            r#"day == "2024-03-02" and n == 1"#,
            "--stats",
        ],
    );
    let mut found: Vec<&str> = stdout(&get).lines().collect();
    found.sort();
    // i % 4 == 1 and i % 3 == 1: 1, 13, 25, 37 (sorted as text).
    assert_eq!(
        found,
        [
            r#"{"n":1,"$.a":13}"#,
            r#"{"n":1,"$.a":1}"#,
            r#"{"n":1,"$.a":25}"#,
            r#"{"n":1,"$.a":37}"#
        ]
    );
    assert!(
        stderr(&get)
            .contains("read 1 of 12 files, 1 of 12 row groups (4 rows); skipped 11 by directories"),
        "{}",
        stderr(&get)
    );
    // A literal of another kind than a directory's column: warned of.
    let other = vshred_in(dir.path(), &["get", "out", "$.a", "--where", r#"n == "1""#]);
    assert_eq!(
        (stdout(&other), stderr(&other)),
        (
            "",
            "vshred: warning: no row can pass `n == \"1\"`: n, from the dataset's n=... directories, holds numbers, and \"1\" is not one (the filter compares values of one kind)\n"
        )
    );
    // A name no file and no directory has: the two kinds are named apart.
    fails_with(
        dir.path(),
        &["get", "out", "$.a", "--with", "hour"],
        "no column \"hour\" in any of the 12 files (they have: v; their key=value directories: day, n)",
    );
    let one = "out/day=2024-03-01/n=0";
    let file = std::fs::read_dir(dir.path().join(one))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fails_with(
        dir.path(),
        &["cat", file.to_str().unwrap(), "--columns", "hour"],
        "no column \"hour\" in the file (it has: v)",
    );
    // A glob's root is before its first wildcard; a leading ./ is none of it.
    for glob in ["out/day=*/n=2", "./out/day=*/n=2"] {
        let found = vshred_in(
            dir.path(),
            &["get", glob, "$.a", "--with", "day,n", "--limit", "1"],
        );
        assert_eq!(
            stdout(&found),
            "{\"day\":\"2024-03-01\",\"n\":2,\"$.a\":8}\n",
            "{glob}: {}",
            stderr(&found)
        );
    }
    // A _key=value directory is read, as Spark reads it.
    let underscored = vshred_in(
        dir.path(),
        &[
            "sql",
            "COPY (SELECT n AS _n, v FROM 'out') TO 'under/' PARTITIONED BY (_n)",
        ],
    );
    assert!(underscored.status.success(), "{}", stderr(&underscored));
    let back = vshred_in(
        dir.path(),
        &[
            "get", "under", "$.a", "--where", "_n == 2", "--agg", "count",
        ],
    );
    assert_eq!(stdout(&back), "13\n", "{}", stderr(&back));
    let sql = vshred_in(
        dir.path(),
        &[
            "sql",
            "SELECT day, sum(n) AS n, count(*) AS rows FROM 'out' WHERE day >= '2024-03-03' GROUP BY day ORDER BY day",
        ],
    );
    assert_eq!(
        stdout(&sql),
        // Days 3 and 4 are rows 2, 6, .. 38 and 3, 7, .. 39; n is i % 3.
        "+------------+----+------+\n| day        | n  | rows |\n+------------+----+------+\n| 2024-03-03 | 11 | 10   |\n| 2024-03-04 | 9  | 10   |\n+------------+----+------+\n",
        "{}",
        stderr(&sql)
    );
    let explain = vshred_in(
        dir.path(),
        &[
            "sql",
            "EXPLAIN ANALYZE SELECT count(*) FROM 'out' WHERE day = '2024-03-01'",
        ],
    );
    assert!(
        stdout(&explain).contains("row_groups_pruned_directories=9"),
        "{}",
        stdout(&explain)
    );
    // PARTITIONED BY may name the directories' columns, all and in order.
    let declared = vshred_in(
        dir.path(),
        &[
            "sql",
            "CREATE EXTERNAL TABLE t STORED AS PARQUET PARTITIONED BY (day, n) LOCATION 'out/'; SELECT count(*) AS rows FROM t WHERE n = 2",
        ],
    );
    assert_eq!(
        stdout(&declared),
        "+------+\n| rows |\n+------+\n| 13   |\n+------+\n",
        "{}",
        stderr(&declared)
    );
    fails_with(
        dir.path(),
        &[
            "sql",
            "CREATE EXTERNAL TABLE t STORED AS PARQUET PARTITIONED BY (n) LOCATION 'out/'",
        ],
        "PARTITIONED BY (n): the key=value directories of out/ are day, n, which the table has as its last columns",
    );
    let quoted = vshred_in(
        dir.path(),
        &[
            "sql",
            r#"CREATE EXTERNAL TABLE t (day VARCHAR, n BIGINT) STORED AS PARQUET PARTITIONED BY ("day", n) LOCATION 'out/'; SELECT count(*) AS rows FROM t"#,
        ],
    );
    assert!(stdout(&quoted).contains("| 40   |"), "{}", stderr(&quoted));
    fails_with(
        dir.path(),
        &[
            "sql",
            "CREATE EXTERNAL TABLE t STORED AS PARQUET PARTITIONED BY (day STRING, n STRING) LOCATION 'out/'",
        ],
        "PARTITIONED BY (day, n): n is declared Utf8View, and its directories hold int64 values",
    );
    assert_eq!(
        readme_console_block("$ vshred cat testdata/datasets/by-event"),
        2
    );
}

/// Files under other keys, or a column a directory names too, are refused
/// naming the files; nothing is read.
#[test]
fn directories_that_disagree_with_each_other_or_with_the_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = rows(0, 3, |i| i.to_string());
    encoded(dir.path(), "a/day=1/f.parquet", &one, &[]);
    encoded(dir.path(), "a/hour=1/f.parquet", &one, &[]);
    fails_with(
        dir.path(),
        &["cat", "a"],
        "a/day=1/f.parquet is under directories day=..., a/hour=1/f.parquet under directories hour=...",
    );
    // Written elsewhere and moved in: `encode` refuses to write it there.
    encoded(dir.path(), "f.parquet", &one, &["--variant-field", "v"]);
    std::fs::create_dir_all(dir.path().join("b/id=1")).unwrap();
    std::fs::rename(
        dir.path().join("f.parquet"),
        dir.path().join("b/id=1/f.parquet"),
    )
    .unwrap();
    fails_with(
        dir.path(),
        &["cat", "b"],
        "b/id=1/f.parquet: invalid arguments: the column \"id\" is both in this file and in the dataset's id=... directories",
    );
}

/// A filter on a directory's column passes the rows it passes where the
/// column is in the files: pruning by directories follows SQL's
/// three-valued logic, `not` and `is null` included.
#[test]
fn filters_on_directories_pass_what_they_pass_on_columns_in_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let row = |i: i64, n: &str| {
        let a = if i == 3 {
            "null".to_string()
        } else {
            i.to_string()
        };
        format!("{{\"id\":{i},\"n\":{n},\"v\":{{\"a\":{a}}}}}\n")
    };
    let mut all = String::new();
    for (n, name) in [
        ("1", "1"),
        ("2", "2"),
        ("null", "__HIVE_DEFAULT_PARTITION__"),
    ] {
        let rows: String = (0..4).map(|i| row(i, n)).collect();
        let without_n: String = rows
            .lines()
            .map(|l| l.replace(&format!("\"n\":{n},"), "") + "\n")
            .collect();
        encoded(
            dir.path(),
            &format!("h/n={name}/f.parquet"),
            &without_n,
            &["--variant-field", "v"],
        );
        all.push_str(&rows);
    }
    encoded(
        dir.path(),
        "flat/f.parquet",
        &all,
        &["--variant-field", "v"],
    );
    for filter in [
        "n == 1",
        "n is null",
        "not n == 1",
        "not (n == 1 or $.a == 1)",
        "not (n is null or $.a == 2)",
        "n in (1, 2) or not $.a > 1",
        "not ($.a is null and n is null)",
    ] {
        let read = |data: &str| {
            let out = vshred_in(
                dir.path(),
                &["get", data, "$.a", "--with", "id,n", "--where", filter],
            );
            let mut rows: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
            rows.sort();
            rows
        };
        let flat = read("flat");
        assert!(!flat.is_empty(), "{filter}");
        assert_eq!(read("h"), flat, "{filter}");
    }
}
