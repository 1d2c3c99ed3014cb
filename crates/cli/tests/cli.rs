//! The `vshred` binary: stdout, stderr and exit codes.

use std::process::Output;

mod binary;
use binary::{stderr, stdout, vshred_in, vshred_piped};

fn vshred(args: &[&str], stdin: &[u8]) -> Output {
    vshred_piped(std::path::Path::new("."), args, stdin)
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
fn roundtrip_sizes_prints_each_lines_own_metadata_and_value_lengths() {
    let out = vshred(&["roundtrip", "--sizes", "-"], b"{\"a\":1}\n[1]\n");
    assert!(out.status.success(), "{}", stderr(&out));
    // metadata: header, size, 2 offsets, "a"; value: header, count, id,
    // 2 offsets, int8 (2 bytes). The array's metadata holds no name of
    // the line before: header, size 0, one offset.
    assert_eq!(stdout(&out), "5\t7\n3\t6\n");
}

#[test]
fn bad_line_fails_with_one_line_naming_file_row_line_and_column() {
    let out = vshred(&["roundtrip", "-"], b"{\"a\":1}\n{\"a\":1,\"a\":2}\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: -: duplicate key at row 1, line 2, column 8 (byte 15): \"a\" appears twice in one object (--keep-last-duplicate keeps the last value)\n"
    );
    assert_eq!(stdout(&out), "{\"a\":1}\n");
}

#[test]
fn usage_errors_are_one_line_with_exit_code_1() {
    for (args, says) in [
        (&["bogus"][..], "unrecognized subcommand 'bogus'"),
        (
            &["encode"],
            "required arguments were not provided: <INPUT> <OUTPUT>",
        ),
        (
            &["encode", "a", "b", "--decimal", "xyz"],
            "invalid value 'xyz' for '--decimal <DECIMAL>' [possible values: int, flba]",
        ),
        (
            &["encode", "a", "b", "--compression", "zstd:23"],
            "zstd level \"23\" is not a whole number from 1 to 22",
        ),
        (
            &["get", "x.parquet", "$.a", "--nope"],
            "unexpected argument '--nope'",
        ),
        // Clap's tip, on the same line.
        (
            &["encode", "a", "b", "--compresion", "zstd"],
            "unexpected argument '--compresion' found (did you mean --compression? see",
        ),
        (
            &["encod", "a", "b"],
            "unrecognized subcommand 'encod' (did you mean encode? see",
        ),
        (
            &["get", "x.parquet", "$.a", "--threads", "0"],
            "invalid value '0' for '--threads <N>': must be at least 1",
        ),
        (
            &["encode", "a", "b", "--max-file-rows", "0"],
            "invalid value '0' for '--max-file-rows <N>': must be at least 1",
        ),
        (
            &["encode", "a", "b", "--row-group-rows", "many"],
            "invalid value 'many' for '--row-group-rows <N>': not a count",
        ),
        (
            &["infer", "a", "--min-frequency", "-0.1"],
            "invalid value '-0.1' for '--min-frequency <F>'",
        ),
    ] {
        let out = vshred(args, b"");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("vshred: ") && err.contains(says),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        // The help that lists a command's options is its own.
        let help = match args[0] {
            "bogus" | "encod" => "see vshred --help)".to_string(),
            command => format!("see vshred {command} --help)"),
        };
        assert!(err.ends_with(&format!("{help}\n")), "{args:?}: {err}");
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
    for help in [&["--help"][..], &["encode", "--help"], &["--version"]] {
        let out = vshred(help, b"");
        assert!(out.status.success(), "{help:?}: {}", stderr(&out));
        assert!(!stdout(&out).is_empty(), "{help:?}");
    }
}

#[test]
fn each_compression_option_reaches_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..3000)
        .map(|i| format!("{{\"id\":{i},\"note\":\"{}\"}}\n", "ab".repeat(i % 40)))
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), text).unwrap();
    let mut sizes = Vec::new();
    for compression in ["zstd:1", "zstd:19", "snappy", "none"] {
        let out = vshred_in(
            dir.path(),
            &[
                "encode",
                "in.jsonl",
                "out.parquet",
                "--shred",
                "none",
                "--compression",
                compression,
            ],
        );
        assert!(out.status.success(), "{compression}: {}", stderr(&out));
        let cat = vshred_in(dir.path(), &["cat", "out.parquet"]);
        assert_eq!(stdout(&cat).lines().count(), 3000, "{compression}");
        sizes.push(
            std::fs::metadata(dir.path().join("out.parquet"))
                .unwrap()
                .len(),
        );
    }
    // The level reaches zstd (the files differ), and each codec its own.
    let (zstd1, zstd19, snappy, none) = (sizes[0], sizes[1], sizes[2], sizes[3]);
    assert!(
        zstd1 != zstd19 && zstd1.max(zstd19) < snappy && snappy < none,
        "{sizes:?}"
    );
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
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/events.jsonl");
    let out = vshred(&["roundtrip", example], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 5);
    assert!(
        stdout(&out).contains("\"price\":104.80"),
        "{}",
        stdout(&out)
    );
}

const EVENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/events.jsonl");

#[test]
fn encode_then_cat_gives_back_every_row() {
    let dir = tempfile::tempdir().unwrap();
    for shred in ["auto", "spark", "none"] {
        let out = vshred_in(
            dir.path(),
            &[
                "encode",
                EVENTS,
                "events.parquet",
                "--shred",
                shred,
                "--variant-field",
                "user",
            ],
        );
        assert!(out.status.success(), "{shred}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("wrote events.parquet: 5 rows"),
            "{}",
            stderr(&out)
        );
        let cat = vshred_in(dir.path(), &["cat", "events.parquet"]);
        assert!(cat.status.success(), "{}", stderr(&cat));
        let lines: Vec<&str> = stdout(&cat).lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[0].starts_with(r#"{"id":1,"ts":1732838400000000,"#),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains(r#""user":{"id":"u-17","plan":"pro"}"#),
            "{}",
            lines[0]
        );
        assert!(
            lines[3].contains(r#""big":123456789012345678901234567890"#),
            "{}",
            lines[3]
        );
        assert!(
            lines[4].contains(r#""price":104.80"#),
            "{shred}: {}",
            lines[4]
        );
    }
}

#[test]
fn whole_lines_become_column_v_and_get_reads_paths() {
    let dir = tempfile::tempdir().unwrap();
    let out = vshred_in(dir.path(), &["encode", EVENTS, "e.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let get = vshred_in(dir.path(), &["get", "e.parquet", "$.user.id"]);
    assert!(get.status.success(), "{}", stderr(&get));
    assert_eq!(
        stdout(&get),
        "\"u-17\"\n\"u-03\"\n\"u-17\"\nnull\n\"u-99\"\n"
    );
    let ids = vshred_in(
        dir.path(),
        &["get", "e.parquet", "$.id", "--as", "int64", "--agg", "sum"],
    );
    assert_eq!(stdout(&ids), "15\n", "{}", stderr(&ids));
    // A limit cuts the rows folded, and says so; one that cuts nothing
    // says nothing.
    let sum_of_first = |limit: &str| {
        let args = ["get", "e.parquet", "$.id", "--as", "int64", "--agg", "sum"];
        vshred_in(dir.path(), &[&args[..], &["--limit", limit]].concat())
    };
    let first = sum_of_first("2");
    assert_eq!(stdout(&first), "3\n", "{}", stderr(&first));
    assert_eq!(
        stderr(&first),
        "vshred: the aggregate stopped at --limit: it is of the first 2 rows alone\n"
    );
    let all = sum_of_first("5");
    assert_eq!(stdout(&all), "15\n", "{}", stderr(&all));
    assert!(stderr(&all).is_empty(), "{}", stderr(&all));
    let prices = vshred_in(
        dir.path(),
        &[
            "get",
            "e.parquet",
            "$.price",
            "--where",
            "$.event == \"click\"",
        ],
    );
    assert_eq!(stdout(&prices), "104.8\n104.80\n", "{}", stderr(&prices));
    let bad = vshred_in(dir.path(), &["get", "e.parquet", "$.id", "--as", "int65"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).starts_with("vshred: "), "{}", stderr(&bad));
}

#[test]
fn schema_shows_the_annotation_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", EVENTS, "e.parquet", "--decimal", "flba"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let schema = vshred_in(dir.path(), &["schema", "e.parquet"]);
    assert!(schema.status.success(), "{}", stderr(&schema));
    let text = stdout(&schema);
    assert!(text.contains("OPTIONAL group v (VARIANT"), "{text}");
    assert!(text.contains("Variant columns: v"), "{text}");
    assert!(text.contains("v.metadata"), "{text}");
    // A file of none says so (the line ended at its colon).
    let out = vshred_in(
        dir.path(),
        &["sql", "COPY (SELECT 1 AS n) TO 'plain.parquet'"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let plain = vshred_in(dir.path(), &["schema", "plain.parquet"]);
    let text = stdout(&plain);
    assert!(
        text.contains("1 row, 1 row group; Variant columns: none\n"),
        "{text}"
    );
}

#[test]
fn bad_lines_fail_with_their_line_or_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"a\":1}\n\n{\"a\":\n{\"a\":3}\n",
    )
    .unwrap();
    let fail = vshred_in(dir.path(), &["encode", "in.jsonl", "out.parquet"]);
    assert_eq!(fail.status.code(), Some(1));
    assert!(stderr(&fail).contains("line 3"), "{}", stderr(&fail));
    assert!(!dir.path().join("out.parquet").exists(), "no partial file");
    let skip = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out.parquet", "--skip-bad-lines"],
    );
    assert!(skip.status.success(), "{}", stderr(&skip));
    assert!(
        stderr(&skip).contains("skipped 1 bad line; the first: "),
        "{}",
        stderr(&skip)
    );
    let cat = vshred_in(dir.path(), &["cat", "out.parquet"]);
    assert_eq!(stdout(&cat), "{\"v\":{\"a\":1}}\n{\"v\":{\"a\":3}}\n");
    // The rows before the bad line are kept, and no message says else
    // (the library's Shredder::append_json notes the rows it drops).
    for out in [&fail, &skip] {
        assert!(!stderr(out).contains("discarded"), "{}", stderr(out));
    }
}

#[test]
fn infer_prints_a_schema_that_encode_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let infer = vshred_in(dir.path(), &["infer", EVENTS, "--shred", "spark"]);
    assert!(infer.status.success(), "{}", stderr(&infer));
    std::fs::write(dir.path().join("schema.json"), &infer.stdout).unwrap();
    let schema: vshred::shred::ShreddingSchema = stdout(&infer).trim().parse().unwrap();
    assert!(schema.is_typed(), "{schema}");
    let out = vshred_in(
        dir.path(),
        &["encode", EVENTS, "e.parquet", "--shred", "schema.json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_summary_counts_one_row_and_one_file_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.jsonl"), "{\"a\":1}\n").unwrap();
    let out = vshred_in(dir.path(), &["encode", "one.jsonl", "one.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("wrote one.parquet: 1 row in 1 row group, "),
        "{}",
        stderr(&out)
    );
    let out = vshred_in(
        dir.path(),
        &["encode", "one.jsonl", "out/", "--max-file-rows", "1"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("wrote 1 file to out/ (part-00000.parquet): 1 row, "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_schema_file_with_an_empty_object_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("schema.json"), r#"{"user":{}}"#).unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", EVENTS, "e.parquet", "--shred", "schema.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains("schema.json") && message.contains("$.user: an object of no fields"),
        "{message}"
    );
    assert!(!dir.path().join("e.parquet").exists());
}

#[test]
fn infer_costs_sets_each_priced_leaf_beside_its_written_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..2000)
        .map(|i| format!("{{\"id\": {}, \"kind\": \"k{}\"}}\n", 500_000 + i, i % 3))
        .collect();
    std::fs::write(dir.path().join("rows.jsonl"), lines).unwrap();
    let out = vshred_in(dir.path(), &["infer", "rows.jsonl", "--costs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.starts_with("2000 sample rows"), "{table}");
    for (leaf, priced, written) in [
        (
            "v.typed_value.id.typed_value",
            "delta",
            "DELTA_BINARY_PACKED",
        ),
        (
            "v.typed_value.kind.typed_value",
            "dictionary",
            "RLE_DICTIONARY",
        ),
    ] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{leaf}` |")))
            .unwrap_or_else(|| panic!("no {leaf} in {table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], priced, "{row}");
        assert!(cells[4].contains(written), "{row}");
        let estimate: f64 = cells[3].parse().unwrap();
        let before: f64 = cells[5].parse().unwrap();
        assert!(estimate > 0.0 && before > 0.0, "{row}");
    }
}

#[test]
fn corrupt_parquet_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.parquet"), b"PAR1 not really").unwrap();
    for command in ["cat", "schema"] {
        let out = vshred_in(dir.path(), &[command, "bad.parquet"]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(
            stderr(&out).starts_with("vshred: bad.parquet: "),
            "{}",
            stderr(&out)
        );
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
}

#[test]
fn where_skips_row_groups_by_statistics_and_bloom_filters() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..4000 {
        // Each row group of 1000 rows holds ids i..i+999 and its own names.
        text.push_str(&format!(
            r#"{{"id":{i},"name":"n{}","x":{}}}"#,
            i % 1000 * 7919 % 100003,
            i % 3
        ));
        text.push('\n');
    }
    std::fs::write(dir.path().join("in.jsonl"), text).unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "f.parquet",
            "--shred",
            "spark",
            "--row-group-rows",
            "1000",
            "--bloom-filter",
            "$.name",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let get = |filter: &str| {
        let out = vshred_in(
            dir.path(),
            &[
                "get",
                "f.parquet",
                "$.x",
                "--where",
                filter,
                "--agg",
                "count",
                "--stats",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        (
            stdout(&out).trim().to_string(),
            stderr(&out).trim().to_string(),
        )
    };
    assert_eq!(
        get("$.id == 2500"),
        (
            "1".into(),
            "vshred: read 1 of 1 file, 1 of 4 row groups (1000 rows); skipped 3 by statistics, 0 by bloom filters, 0 by the column index, which ruled out 0 pages".into()
        )
    );
    assert_eq!(
        get("$.id >= 3500"),
        (
            "500".into(),
            "vshred: read 1 of 1 file, 1 of 4 row groups (1000 rows); skipped 3 by statistics, 0 by bloom filters, 0 by the column index, which ruled out 0 pages".into()
        )
    );
    assert_eq!(
        get("$.id < 0"),
        ("0".into(), "vshred: read 0 of 1 file, 0 of 4 row groups (0 rows); skipped 4 by statistics, 0 by bloom filters, 0 by the column index, which ruled out 0 pages".into())
    );
    // Names repeat in every row group: statistics cannot skip, the bloom
    // filter rules out a name that is nowhere.
    assert_eq!(
        get("$.name == \"n5x\""),
        ("0".into(), "vshred: read 0 of 1 file, 0 of 4 row groups (0 rows); skipped 0 by statistics, 4 by bloom filters, 0 by the column index, which ruled out 0 pages".into())
    );
    let (count, stats) = get("$.name == \"n7919\"");
    assert_eq!(count, "4");
    assert_eq!(
        stats,
        "vshred: read 1 of 1 file, 4 of 4 row groups (4000 rows); skipped 0 by statistics, 0 by bloom filters, 0 by the column index, which ruled out 0 pages"
    );
    // Not shredded: never skipped, still right.
    assert_eq!(get("$.missing == 1").0, "0");
}

#[test]
fn where_compares_a_date_or_timestamp_read_with_an_iso_string() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        r#"{"id":1,"ts":"2024-03-01T23:59:59Z"}"#,
        r#"{"id":2,"ts":"2024-03-02T00:00:00+01:00"}"#,
        r#"{"id":3,"ts":"2024-03-02 12:30:00"}"#,
        r#"{"id":4,"ts":1709424000}"#,
        r#"{"id":5,"ts":"soon"}"#,
        r#"{"id":6}"#,
    ];
    std::fs::write(dir.path().join("t.jsonl"), lines.join("\n")).unwrap();
    let encode = vshred_in(
        dir.path(),
        &["encode", "t.jsonl", "t.parquet", "--row-group-rows", "2"],
    );
    assert!(encode.status.success(), "{}", stderr(&encode));
    for (filter, ids) in [
        // As a timestamp, +01:00 is 23:00 on the 1st in UTC; as a date,
        // the string's own day (as Spark casts it). 1709424000 is the 3rd.
        (r#"$.ts as timestamp >= "2024-03-02""#, "3\n4\n"),
        (r#"$.ts as date == "2024-03-01""#, "1\n"),
        (r#"$.ts as date == "2024-03-02""#, "2\n3\n"),
        (
            r#"$.ts as timestamp in ("2024-03-03T00:00:00Z", "2024-03-01T23:59:59Z")"#,
            "1\n4\n",
        ),
        (
            r#"not $.ts as timestamp < "2024-03-02T12:30:00Z""#,
            "3\n4\n",
        ),
    ] {
        let get = vshred_in(dir.path(), &["get", "t.parquet", "$.id", "--where", filter]);
        assert_eq!((stdout(&get), stderr(&get)), (ids, ""), "{filter}");
    }
    let bad = vshred_in(
        dir.path(),
        &[
            "get",
            "t.parquet",
            "$.id",
            "--where",
            r#"$.ts as date > "3/2/2024""#,
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains(r#"invalid filter: "$.ts as date > \"3/2/2024\"" at character 16: "3/2/2024" is not a date"#), "{}", stderr(&bad));
}

/// `auto` shreds a path a bloom filter reads even where shredding does
/// not pay (five rows, which it leaves unshredded otherwise): the filter
/// was refused as "not shredded".
#[test]
fn a_bloom_filter_path_is_shredded_by_auto_whatever_it_costs() {
    let dir = tempfile::tempdir().unwrap();
    for output in [&["e.parquet"][..], &["ds", "--max-file-rows", "2"]] {
        let args = [
            &["encode", EVENTS][..],
            output,
            &["--bloom-filter", "$.user.id"],
        ]
        .concat();
        let out = vshred_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    for input in ["e.parquet", "ds"] {
        // Within the statistics of the row group that holds u-03 and u-17
        // (in either file), ruled out by its bloom filter.
        let get = vshred_in(
            dir.path(),
            &[
                "get",
                input,
                "$.id",
                "--where",
                r#"$.user.id == "u-10""#,
                "--stats",
            ],
        );
        assert!(
            stdout(&get).is_empty() && stderr(&get).contains(" by statistics, 1 by bloom filters"),
            "{input}: {}",
            stderr(&get)
        );
    }
}

/// Where `auto` leaves rows unshredded (wide and repetitive, smaller whole
/// under compression), a bloom filter's path is typed alone: the whole
/// layout `auto` measured against unshredded was taken unmeasured, 120
/// typed fields and a file 16 times larger.
#[test]
fn a_bloom_filter_path_is_typed_alone_where_auto_leaves_the_rest_unshredded() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..400)
        .map(|i| {
            let fields: Vec<String> = (0..120)
                .map(|k| {
                    format!(
                        r#""field_{k:03}": "https://api.example.com/r/{}""#,
                        "x".repeat(k % 7)
                    )
                })
                .collect();
            format!(
                r#"{{"id": {i}, "user": {{"login": "u{}"}}, {}}}"#,
                i % 13,
                fields.join(", ")
            ) + "\n"
        })
        .collect();
    std::fs::write(dir.path().join("wide.jsonl"), lines).unwrap();
    for (file, bloom) in [
        ("plain.parquet", None),
        ("bloom.parquet", Some("$.user.login")),
        // The column's name for `$`, as `--help` shows.
        ("named.parquet", Some("v.user.login")),
    ] {
        let mut args = vec!["encode", "wide.jsonl", file];
        args.extend(
            bloom
                .map(|path| ["--bloom-filter", path])
                .into_iter()
                .flatten(),
        );
        let out = vshred_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let typed = |file: &str| {
        let out = vshred_in(dir.path(), &["schema", file]);
        let schema = stdout(&out);
        let groups = schema.matches("group typed_value").count();
        groups + schema.matches(" typed_value (").count()
    };
    assert_eq!(typed("plain.parquet"), 0);
    // The row's, the user object's and the login's.
    assert_eq!(typed("bloom.parquet"), 3);
    assert_eq!(typed("named.parquet"), 3);
}

/// A path the layout does not shred is refused naming why: the layout
/// given, `--shred none` (it blamed `auto`, which was not used),
/// inference's rule, or an array on the way.
#[test]
fn a_bloom_filter_path_not_shredded_names_the_layout_that_left_it() {
    let dir = tempfile::tempdir().unwrap();
    let layout = r#"{"user":{"id":"string"}}"#;
    for (path, shred, says) in [
        (
            "$.id",
            layout,
            format!("bloom filter \"$.id\": not shredded in v (layout {layout}): the layout given does not shred it"),
        ),
        (
            "$.id",
            "none",
            "bloom filter \"$.id\": not shredded in v (layout \"variant\"): `--shred none` shreds no path".into(),
        ),
        // Inference's reasons: decimals of two scales (104.8, 19.99) are
        // two types; an array's elements are many values of a row.
        (
            "$.price",
            "auto",
            "(a decimal's scale is part of its type: 1.5 and 1.25 are two)".into(),
        ),
        (
            "$.items.sku",
            "spark",
            "and a bloom filter takes a path through objects alone".into(),
        ),
        // Spent on the fields before it in name order (it blamed the
        // path's types, which were one).
        (
            "$.user.id",
            "spark --max-columns 4",
            "takes 4 of the 4 columns `--max-columns` allows, and fields past them stay in `value`".into(),
        ),
    ] {
        let mut args = vec!["encode", EVENTS, "b.parquet", "--bloom-filter", path, "--shred"];
        args.extend(shred.split(' '));
        binary::fails_with(dir.path(), &args, &says);
    }
}

#[test]
fn get_stats_counts_in_the_singular_when_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.jsonl"), "{\"a\":1}\n").unwrap();
    let out = vshred_in(dir.path(), &["encode", "one.jsonl", "one.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = vshred_in(dir.path(), &["get", "one.parquet", "$.a", "--stats"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "vshred: read 1 of 1 file, 1 of 1 row group (1 row); skipped 0 by statistics, 0 by bloom filters, 0 by the column index, which ruled out 0 pages\n"
    );
}

/// `--stats` with a `--limit` that stops the read says why it has no
/// counts, instead of nothing; a limit the rows end at stops nothing.
#[test]
fn get_stats_stopped_by_a_limit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("three.jsonl"),
        "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n",
    )
    .unwrap();
    // A row group, so a batch, each.
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "three.jsonl",
            "three.parquet",
            "--row-group-rows",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let get = |limit: &str| {
        vshred_in(
            dir.path(),
            &[
                "get",
                "three.parquet",
                "$.a",
                "--stats",
                "--threads",
                "1",
                "--limit",
                limit,
            ],
        )
    };
    let out = get("1");
    assert_eq!(
        (stdout(&out), stderr(&out)),
        (
            "1\n",
            "vshred: no read counts: the read stopped at the --limit\n"
        )
    );
    for limit in ["3", "5"] {
        let out = get(limit);
        assert_eq!(stdout(&out), "1\n2\n3\n", "{limit}");
        assert!(
            stderr(&out).starts_with("vshred: read 1 of 1 file, 3 of 3 row groups (3 rows)"),
            "{limit}: {}",
            stderr(&out)
        );
    }
}

/// Issue #11: `--as timestamp` reads ISO-8601 strings as Spark's cast does,
/// a string without a zone in UTC.
#[test]
fn get_as_timestamp_converts_iso_strings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ts.jsonl"),
        concat!(
            r#"{"ts":"2024-03-01T12:30:00Z"}"#,
            "\n",
            r#"{"ts":"2024-03-01 13:30:00.5+01:00"}"#,
            "\n",
            r#"{"ts":"2024-03-01 12:30"}"#,
            "\n",
            r#"{"ts":"soon"}"#,
            "\n",
        ),
    )
    .unwrap();
    let out = vshred_in(dir.path(), &["encode", "ts.jsonl", "ts.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let get = vshred_in(
        dir.path(),
        &["get", "ts.parquet", "$.ts", "--as", "timestamp"],
    );
    assert_eq!(
        stdout(&get),
        concat!(
            "\"2024-03-01T12:30:00.000000+00:00\"\n",
            "\"2024-03-01T12:30:00.500000+00:00\"\n",
            "\"2024-03-01T12:30:00.000000+00:00\"\n",
            "null\n",
        ),
        "{}",
        stderr(&get)
    );
    let strict = vshred_in(
        dir.path(),
        &["get", "ts.parquet", "$.ts", "--as", "timestamp", "--strict"],
    );
    assert_eq!(strict.status.code(), Some(1));
    assert!(
        stderr(&strict).ends_with(
            "conversion failed at row 3: $.ts: \"soon\" does not convert to timestamp \
             (without --strict, null)\n"
        ),
        "{}",
        stderr(&strict)
    );
}

/// A strict read prints the values before the one that does not convert,
/// and with a limit they reach, needs nothing after them: the same answer
/// however the rows fall into batches and row groups.
#[test]
fn a_strict_get_stops_at_the_value_that_does_not_convert_not_before() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..10)
        .map(|i| match i {
            7 => "{\"id\":7,\"x\":\"bad\"}\n".to_string(),
            i => format!("{{\"id\":{i},\"x\":{i}}}\n"),
        })
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    for rows_per_group in ["100", "4"] {
        let out = vshred_in(
            dir.path(),
            &[
                "encode",
                "in.jsonl",
                "x.parquet",
                "--row-group-rows",
                rows_per_group,
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let get = |extra: &[&str]| {
            let args = [
                &["get", "x.parquet", "$.x", "--as", "int64", "--strict"][..],
                extra,
            ];
            vshred_in(dir.path(), &args.concat())
        };
        let limited = get(&["--limit", "3"]);
        assert!(limited.status.success(), "{}", stderr(&limited));
        assert_eq!(stdout(&limited), "0\n1\n2\n");
        let filtered = get(&["--where", "$.id > 4", "--limit", "2"]);
        assert!(filtered.status.success(), "{}", stderr(&filtered));
        assert_eq!(stdout(&filtered), "5\n6\n");
        let whole = get(&[]);
        assert_eq!(whole.status.code(), Some(1));
        assert_eq!(stdout(&whole), "0\n1\n2\n3\n4\n5\n6\n");
        assert!(
            stderr(&whole).ends_with("conversion failed at row 7: $.x: \"bad\" does not convert to int64 (without --strict, null)\n"),
            "{}",
            stderr(&whole)
        );
    }
}

/// A file of several Variant columns: which one is asked, and how.
#[test]
fn several_variant_columns_ask_for_one_with_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"a\":{\"x\":1},\"b\":{\"y\":[1.5]}}\n",
    )
    .unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "two.parquet",
            "--variant-field",
            "a",
            "--variant-field",
            "b",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = vshred_in(dir.path(), &["get", "two.parquet", "$.x"]);
    assert_eq!(
        stderr(&out),
        "vshred: two.parquet: several Variant columns: a, b (--column NAME chooses one)\n"
    );
    let out = vshred_in(dir.path(), &["get", "two.parquet", "$.x", "--column", "a"]);
    assert_eq!(stdout(&out), "1\n", "{}", stderr(&out));
}
