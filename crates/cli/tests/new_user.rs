//! What a new user ran into (issue #11): silent digit loss, wrong output
//! and the rough edges of the first hour, each through the binary.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

mod binary;
use binary::{fails_with, on_a_terminal, stderr, stdout, vshred_in, vshred_piped};

/// Encodes `lines` into `name` in `dir` with extra `args`.
fn encoded(dir: &Path, name: &str, lines: &str, args: &[&str]) {
    std::fs::write(dir.join("in.jsonl"), lines).unwrap();
    let mut all = vec!["encode", "in.jsonl", name];
    all.extend_from_slice(args);
    let out = vshred_in(dir, &all);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_number_no_decimal_holds_is_an_error_unless_doubles_are_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let nines = "9".repeat(39);
    let lines = format!(
        "{{\"a\":1}}\n{{\"a\":{nines}}}\n{{\"b\":0.{}}}\n",
        "1".repeat(400)
    );
    std::fs::write(dir.path().join("in.jsonl"), &lines).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "out.parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: in.jsonl: inexact number at row 1, line 2, column 6 (byte 13): number with 39 digits: no decimal holds more than 38, and a double would lose digits (--inexact-numbers double stores the nearest double)\n"
    );
    assert!(!dir.path().join("out.parquet").exists());

    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "out.parquet",
            "--inexact-numbers",
            "double",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "warning: 2 numbers that no decimal holds (more than 38 digits) stored as the nearest double (the first on line 2)"
        ),
        "{}",
        stderr(&out)
    );
    let cat = vshred_in(dir.path(), &["cat", "out.parquet"]);
    assert_eq!(
        stdout(&cat),
        "{\"v\":{\"a\":1}}\n{\"v\":{\"a\":1e39}}\n{\"v\":{\"b\":0.1111111111111111}}\n"
    );
    // The same rule for roundtrip and report.
    for command in [&["roundtrip"][..], &["report", "--runs", "1"]] {
        let mut args = command.to_vec();
        args.push("in.jsonl");
        let out = vshred_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("line 2, column 6"),
            "{}",
            stderr(&out)
        );
        args.extend(["--inexact-numbers", "double"]);
        let out = vshred_in(dir.path(), &args);
        assert!(out.status.success(), "{command:?}: {}", stderr(&out));
    }
    // infer reads the sample alone, and warns of its numbers too.
    let out = vshred_in(
        dir.path(),
        &["infer", "in.jsonl", "--inexact-numbers", "double"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning: 2 numbers that no decimal holds"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cat_prints_list_struct_and_map_columns_as_json() {
    use arrow::array::{ArrayRef, Int64Array, ListBuilder, MapBuilder, StringBuilder, StructArray};
    use arrow::datatypes::{DataType, Field, Schema};
    let dir = tempfile::tempdir().unwrap();
    let mut tags = ListBuilder::new(StringBuilder::new());
    tags.values().append_value("x");
    tags.append(true);
    tags.append(false);
    let tags: ArrayRef = Arc::new(tags.finish());
    let point: ArrayRef = Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("x", DataType::Int64, true)),
        Arc::new(Int64Array::from(vec![Some(1), None])) as ArrayRef,
    )]));
    let mut attrs = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    attrs.keys().append_value("k");
    attrs.values().append_value(7);
    attrs.append(true).unwrap();
    attrs.append(true).unwrap();
    let attrs: ArrayRef = Arc::new(attrs.finish());
    let schema = Arc::new(Schema::new(vec![
        Field::new("tags", tags.data_type().clone(), true),
        Field::new("point", point.data_type().clone(), true),
        Field::new("attrs", attrs.data_type().clone(), true),
    ]));
    let batch =
        arrow::array::RecordBatch::try_new(schema.clone(), vec![tags, point, attrs]).unwrap();
    let file = std::fs::File::create(dir.path().join("plain.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    use arrow::array::Int64Builder;
    let cat = vshred_in(dir.path(), &["cat", "plain.parquet"]);
    assert!(cat.status.success(), "{}", stderr(&cat));
    assert_eq!(
        stdout(&cat),
        "{\"tags\":[\"x\"],\"point\":{\"x\":1},\"attrs\":{\"k\":7}}\n{\"tags\":null,\"point\":{\"x\":null},\"attrs\":{}}\n"
    );
}

#[test]
fn a_dash_reads_parquet_from_stdin_piped_or_redirected() {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "f.parquet", "{\"a\":1}\n{\"a\":2}\n", &[]);
    let bytes = std::fs::read(dir.path().join("f.parquet")).unwrap();
    for args in [&["cat", "-"][..], &["get", "-", "$.a"], &["schema", "-"]] {
        let piped = vshred_piped(dir.path(), args, &bytes);
        assert!(piped.status.success(), "{args:?}: {}", stderr(&piped));
        let redirected = Command::new(env!("CARGO_BIN_EXE_vshred"))
            .args(args)
            .current_dir(dir.path())
            .stdin(std::fs::File::open(dir.path().join("f.parquet")).unwrap())
            .output()
            .unwrap();
        assert_eq!(stdout(&piped), stdout(&redirected), "{args:?}");
        let named = vshred_in(
            dir.path(),
            &args
                .iter()
                .map(|a| if *a == "-" { "f.parquet" } else { a })
                .collect::<Vec<_>>(),
        );
        assert_eq!(stdout(&piped), stdout(&named), "{args:?}");
    }
    let get = vshred_piped(dir.path(), &["get", "-", "$.a"], &bytes);
    assert_eq!(stdout(&get), "1\n2\n");
}

/// A file of one line holding an array (`json.dump(rows)`) is one row,
/// as JSON Lines has it, and a warning names the command that makes a row
/// of each element; lines of arrays, or one array among objects, are not
/// warned about.
#[test]
fn one_line_holding_an_array_is_one_row_and_a_warning_names_jq() {
    let dir = tempfile::tempdir().unwrap();
    let warning = "vshred: warning: the input is one line holding a JSON array, written as one row (`jq -c '.[]' in.json` writes its elements as JSON Lines, a row each)\n";
    for (text, warned) in [
        ("\u{feff} [{\"id\":1},{\"id\":2}]", true),
        ("[{\"id\":1}]\n[{\"id\":2}]\n", false),
        ("{\"id\":1}\n", false),
    ] {
        std::fs::write(dir.path().join("in.json"), text).unwrap();
        let out = vshred_in(dir.path(), &["encode", "in.json", "out.parquet"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            stderr(&out).starts_with(warning),
            warned,
            "{}",
            stderr(&out)
        );
    }
}

/// A sum stays exact while it fits a decimal (38 digits); past that it
/// goes on as a double, and says so, whether the file is shredded or not.
#[test]
fn a_sum_past_38_digits_says_it_is_not_exact() {
    let dir = tempfile::tempdir().unwrap();
    let nines = "9".repeat(38);
    let lines = format!("{{\"a\":{nines}}}\n{{\"a\":{nines}}}\n{{\"a\":-{nines}}}\n");
    for shred in ["none", "auto"] {
        let file = format!("{shred}.parquet");
        encoded(dir.path(), &file, &lines, &["--shred", shred]);
        let sum = vshred_in(dir.path(), &["get", &file, "$.a", "--agg", "sum"]);
        assert!(sum.status.success(), "{}", stderr(&sum));
        assert_eq!(stdout(&sum), "1e38\n", "{shred}");
        assert_eq!(
            stderr(&sum),
            "vshred: the sum passed 38 digits, more than a decimal holds, and was added up as a double from there: it is not exact\n",
            "{shred}"
        );
        // Within 38 digits: exact, and nothing to say of the sum.
        let first = vshred_in(
            dir.path(),
            &["get", &file, "$.a", "--agg", "sum", "--limit", "1"],
        );
        assert_eq!(stdout(&first), format!("{nines}\n"), "{shred}");
        assert_eq!(
            stderr(&first),
            "vshred: the aggregate stopped at --limit: it is of the first row alone\n"
        );
    }
}

/// Exact numbers added to a double are added as doubles, and the sum
/// says so; a sum of doubles alone is as exact as they are, and read as
/// a decimal each value is converted first and added exactly.
#[test]
fn a_sum_of_exact_numbers_with_doubles_says_it_is_not_exact() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "{\"a\":18446744073709551617}\n{\"a\":1e0}\n{\"a\":2e0}\n";
    for shred in ["none", "auto"] {
        let file = format!("{shred}.parquet");
        encoded(dir.path(), &file, lines, &["--shred", shred]);
        let sum = vshred_in(dir.path(), &["get", &file, "$.a", "--agg", "sum"]);
        assert_eq!(stdout(&sum), "1.8446744073709552e19\n", "{shred}");
        assert_eq!(
            stderr(&sum),
            "vshred: 2 values were doubles, and the exact numbers were added to them as doubles: the sum may not be exact (read as a decimal, each value is converted to it and added exactly)\n",
            "{shred}"
        );
        let exact = vshred_in(
            dir.path(),
            &["get", &file, "$.a", "--as", "decimal(38,0)", "--agg", "sum"],
        );
        assert_eq!(stdout(&exact), "18446744073709551620\n", "{shred}");
        assert!(stderr(&exact).is_empty(), "{}", stderr(&exact));
    }
    encoded(
        dir.path(),
        "doubles.parquet",
        "{\"a\":1e0}\n{\"a\":2.5e0}\n",
        &[],
    );
    let doubles = vshred_in(
        dir.path(),
        &["get", "doubles.parquet", "$.a", "--agg", "sum"],
    );
    assert_eq!(stdout(&doubles), "3.5\n");
    assert!(stderr(&doubles).is_empty(), "{}", stderr(&doubles));
}

#[test]
fn min_and_max_of_mixed_kinds_follow_one_order_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "{\"t\":\"b\"}\n{\"t\":3}\n{\"t\":\"a\"}\n{\"t\":-1.5}\n{\"t\":null}\n";
    encoded(dir.path(), "f.parquet", lines, &["--shred", "none"]);
    let agg = |agg: &str| vshred_in(dir.path(), &["get", "f.parquet", "$.t", "--agg", agg]);
    let min = agg("min");
    assert_eq!(stdout(&min), "-1.5\n");
    let note = stderr(&min);
    assert!(
        note.contains("the values were of 2 kinds (2 numbers, 2 strings)")
            && note.contains("null < boolean < number < string"),
        "{note}"
    );
    // One of a kind is said in the singular.
    let one = "{\"t\":\"b\"}\n{\"t\":3}\n{\"t\":4}\n";
    encoded(dir.path(), "one.parquet", one, &["--shred", "none"]);
    let max = vshred_in(dir.path(), &["get", "one.parquet", "$.t", "--agg", "max"]);
    assert!(
        stderr(&max).contains("the values were of 2 kinds (2 numbers, 1 string)"),
        "{}",
        stderr(&max)
    );
    assert!(!note.contains("not numbers"), "{note}");
    assert_eq!(stdout(&agg("max")), "\"b\"\n");
    let sum = agg("sum");
    assert_eq!(stdout(&sum), "1.5\n");
    assert!(
        stderr(&sum).contains("2 values were not numbers and left out of the sum"),
        "{}",
        stderr(&sum)
    );
    // One kind: nothing to say.
    let only_numbers = vshred_in(
        dir.path(),
        &["get", "f.parquet", "$.t", "--as", "double", "--agg", "min"],
    );
    assert_eq!(stdout(&only_numbers), "-1.5\n");
    assert!(
        stderr(&only_numbers).is_empty(),
        "{}",
        stderr(&only_numbers)
    );
}

#[test]
fn out_of_range_counts_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "{\"a\":1}\n").unwrap();
    for (args, says) in [
        (
            &["encode", "in.jsonl", "o.parquet", "--row-group-rows", "0"][..],
            "--row-group-rows",
        ),
        (
            &["encode", "in.jsonl", "o.parquet", "--min-frequency", "2"],
            "2 is not from 0 to 1",
        ),
        (
            &["encode", "in.jsonl", "o.parquet", "--sample-rows", "0"],
            "--sample-rows",
        ),
        (&["report", "in.jsonl", "--runs", "0"], "--runs"),
    ] {
        let out = vshred_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("vshred: invalid value") && err.contains(says),
            "{args:?}: {err}"
        );
        assert!(!dir.path().join("o.parquet").exists());
    }
}

#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    encoded(
        dir.path(),
        "f.parquet",
        "\u{feff}{\"a\":1}\n{\"a\":2}\n",
        &[],
    );
    let cat = vshred_in(dir.path(), &["cat", "f.parquet"]);
    assert_eq!(stdout(&cat), "{\"v\":{\"a\":1}}\n{\"v\":{\"a\":2}}\n");
    std::fs::write(dir.path().join("bom.jsonl"), "\u{feff}[1]\n").unwrap();
    let roundtrip = vshred_in(dir.path(), &["roundtrip", "bom.jsonl"]);
    assert_eq!(stdout(&roundtrip), "[1]\n", "{}", stderr(&roundtrip));
}

#[test]
fn input_that_is_not_json_lines_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    for (text, args, hint) in [
        (
            "{\n  \"a\": 1\n}\n",
            &[][..],
            "this looks like pretty-printed JSON",
        ),
        (
            "[\n{\"a\": 1}\n]\n",
            &[],
            "this looks like a JSON array over many lines",
        ),
        (
            "[{\"a\": 1},\n{\"a\": 2}]\n",
            &[],
            "this looks like a JSON array over many lines",
        ),
        (
            "[{\"a\": 1}]\n",
            &["--variant-field", "a"],
            "a JSON array of objects becomes JSON Lines",
        ),
    ] {
        std::fs::write(dir.path().join("in.json"), text).unwrap();
        let mut all = vec!["encode", "in.json", "out.parquet"];
        all.extend_from_slice(args);
        let out = vshred_in(dir.path(), &all);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(stderr(&out).contains(hint), "{text}: {}", stderr(&out));
        assert!(stderr(&out).contains("line 1, column"), "{}", stderr(&out));
    }
}

/// A gzip-compressed input or a Parquet file given to `encode`, and JSON
/// Lines given to `cat`, are named for what they are.
#[test]
fn a_file_of_another_kind_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "f.parquet", "{\"a\":1}\n", &[]);
    // gzip's magic bytes, then deflated data.
    std::fs::write(
        dir.path().join("in.jsonl.gz"),
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0],
    )
    .unwrap();
    // zstd's, xz's and bzip2's.
    std::fs::write(dir.path().join("in.jsonl.zst"), [0x28, 0xb5, 0x2f, 0xfd, 0]).unwrap();
    std::fs::write(dir.path().join("in.jsonl.xz"), b"\xfd7zXZ\0\0").unwrap();
    std::fs::write(dir.path().join("in.jsonl.bz2"), b"BZh91AY&SY").unwrap();
    // UTF-16, little-endian with a byte order mark and big-endian without.
    let utf16 = |bytes: fn(u16) -> [u8; 2], bom: &[u8]| -> Vec<u8> {
        let text = "{\"a\":1}\n".encode_utf16().flat_map(bytes);
        bom.iter().copied().chain(text).collect()
    };
    std::fs::write(
        dir.path().join("le.jsonl"),
        utf16(u16::to_le_bytes, &[0xff, 0xfe]),
    )
    .unwrap();
    std::fs::write(dir.path().join("be.jsonl"), utf16(u16::to_be_bytes, &[])).unwrap();
    let utf16_said = " (UTF-16 text: convert it to UTF-8 first, as iconv -f UTF-16 -t UTF-8 does)";
    for (args, said) in [
        (
            ["encode", "le.jsonl", "out.parquet"],
            &*format!("expected a JSON value, found byte 0xff{utf16_said}"),
        ),
        (
            ["encode", "be.jsonl", "out.parquet"],
            &format!("expected a JSON value, found byte 0x00{utf16_said}"),
        ),
        (
            ["encode", "in.jsonl.gz", "out.parquet"],
            "expected a JSON value, found byte 0x1f (gzip-compressed data: decompress it first, as zcat does)",
        ),
        (
            ["encode", "in.jsonl.zst", "out.parquet"],
            "expected a JSON value, found '(' (zstd-compressed data: decompress it first, as zstdcat does)",
        ),
        (
            ["encode", "in.jsonl.xz", "out.parquet"],
            "expected a JSON value, found byte 0xfd (xz-compressed data: decompress it first, as xzcat does)",
        ),
        (
            ["encode", "in.jsonl.bz2", "out.parquet"],
            "expected a JSON value, found 'B' (bzip2-compressed data: decompress it first, as bzcat does)",
        ),
        (
            ["encode", "f.parquet", "out.parquet"],
            "expected a JSON value, found 'P' (a Parquet file, which is read, not encoded)",
        ),
    ] {
        fails_with(dir.path(), &args, said);
    }
    fails_with(
        dir.path(),
        &["cat", "in.jsonl"],
        "not a Parquet file: it does not start with the PAR1 magic bytes (8 bytes) but as JSON text (`vshred encode` makes Parquet of JSON lines)",
    );
    // A file that starts as Parquet, cut short: too short for a footer's
    // length, though it ends with the magic; or longer, without it.
    std::fs::write(dir.path().join("short.parquet"), "PAR1PAR1").unwrap();
    fails_with(
        dir.path(),
        &["cat", "short.parquet"],
        "not a Parquet file: it starts as one but is 8 bytes, too few for the magic bytes at both ends and a footer's length (12; cut short?)",
    );
    std::fs::write(dir.path().join("cut.parquet"), "PAR1 and the rest").unwrap();
    fails_with(
        dir.path(),
        &["cat", "cut.parquet"],
        "not a Parquet file: it starts as one but does not end with the PAR1 footer magic (cut short?)",
    );
}

/// A line cut short after lines of JSON Lines is only that: no hint that
/// the file is something else (the README shows this error).
#[test]
fn a_last_line_cut_short_gets_no_hint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "{\"a\":1}\n\n{\"a\":").unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "out.parquet"]);
    assert_eq!(
        stderr(&out),
        "vshred: in.jsonl: invalid JSON at row 1, line 3, column 6 (byte 14): unexpected end of input, expected a JSON value\n"
    );
    // So is a first line cut short after a value: pretty-printed JSON
    // breaks lines after `{`, `[`, `,` or `:`.
    std::fs::write(
        dir.path().join("in.jsonl"),
        "{\"id\": 1, \"level\": \"INFO\"\n{\"id\": 2}\n",
    )
    .unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "out.parquet"]);
    assert!(
        stderr(&out).starts_with("vshred: in.jsonl: invalid JSON at row 0, line 1,")
            && !stderr(&out).contains("looks like"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_line_that_is_not_an_object_is_named_by_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "{\"a\":1}\n  42\n").unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "out.parquet", "--variant-field", "a"],
    );
    assert_eq!(
        stderr(&out),
        "vshred: in.jsonl: invalid JSON at row 1, line 2, column 3 (byte 10): expected a JSON object (with Variant fields named, each line is an object split into columns)\n"
    );
}

#[test]
fn a_file_that_is_not_parquet_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.parquet"), "{\"a\":1}\n").unwrap();
    // `report` takes JSON lines too, but not under a Parquet file's name.
    for command in ["cat", "schema", "report"] {
        let out = vshred_in(dir.path(), &[command, "x.parquet"]);
        assert_eq!(
            stderr(&out),
            "vshred: x.parquet: Parquet error: not a Parquet file: it does not start with the PAR1 magic bytes (8 bytes) but as JSON text (`vshred encode` makes Parquet of JSON lines)\n"
        );
    }
}

/// A damaged page's error names the row group and the column read, with
/// one prefix: the parquet crate's errors name neither, and nest their
/// prefixes.
#[test]
fn a_damaged_page_is_an_error_naming_its_row_group_and_column() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/corrupt/dictionary-page-header-divides-by-zero.parquet");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&fixture, dir.path().join("damaged.parquet")).unwrap();
    let out = vshred_in(dir.path(), &["cat", "damaged.parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: damaged.parquet: Parquet error: reading row group 0, column \"v.typed_value.user.typed_value.plan.typed_value\": corrupt data: attempt to divide by zero\n"
    );
}

#[test]
fn schema_prints_the_variant_annotation_as_the_spec_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "f.parquet", "{\"a\":1}\n", &[]);
    let out = vshred_in(dir.path(), &["schema", "f.parquet"]);
    let schema = stdout(&out);
    assert!(schema.contains("(VARIANT(1))"), "{schema}");
    assert!(!schema.contains("Some("), "{schema}");
}

/// Rows for the filter tests: `delay` shredded as an integer, `id` an
/// ordinary column.
fn filtered_file(dir: &Path) {
    let mut lines = String::new();
    for i in 0..40 {
        let note = if i % 10 == 0 { "null" } else { "\"ok\"" };
        lines.push_str(&format!(
            "{{\"id\":{i},\"v\":{{\"delay\":{},\"note\":{note}}}}}\n",
            i % 7
        ));
    }
    encoded(
        dir,
        "f.parquet",
        &lines,
        &["--variant-field", "v", "--shred", "spark"],
    );
}

/// `get f.parquet '$.delay' --where FILTER --agg count` in `dir` (of
/// [`filtered_file`]).
fn delay_count(dir: &Path, filter: &str) -> std::process::Output {
    vshred_in(
        dir,
        &[
            "get",
            "f.parquet",
            "$.delay",
            "--where",
            filter,
            "--agg",
            "count",
        ],
    )
}

#[test]
fn a_filter_no_row_can_pass_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    filtered_file(dir.path());
    let out = delay_count(dir.path(), "$.delay == \"5\"");
    assert_eq!(stdout(&out), "0\n");
    assert!(
        stderr(&out).contains(
            "warning: no row can pass `$.delay == \"5\"`: every value of $.delay is stored as numbers"
        ),
        "{}",
        stderr(&out)
    );
    let fine = delay_count(dir.path(), "$.delay == 5");
    assert_eq!(stdout(&fine), "5\n");
    assert!(stderr(&fine).is_empty(), "{}", stderr(&fine));
    // Read as a type, a value is of that type's kind, whatever it was
    // stored as: the number 5 read as a string equals "5"; a date, never
    // a number (a date is compared with a string that is one).
    for (filter, count, warned) in [
        ("$.delay as string == \"5\"", "5", false),
        ("$.delay as date == 5", "0", true),
        ("$.delay as date == \"2024-03-01\"", "0", false),
    ] {
        let out = delay_count(dir.path(), filter);
        assert_eq!(
            stdout(&out),
            format!("{count}\n"),
            "{filter}: {}",
            stderr(&out)
        );
        assert_eq!(
            stderr(&out).contains("warning: no row can pass"),
            warned,
            "{filter}: {}",
            stderr(&out)
        );
    }
}

/// A misspelt path in a filter reads null in every row, so the filter
/// passes none: where the file's layout shows that no row holds a value
/// there (not shredded, and no residual that could hold it), that is said.
#[test]
fn a_filter_on_a_path_no_row_has_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    filtered_file(dir.path());
    for filter in [
        "$.dealy == 5",
        "$.delay.x == 5",
        "$.dealy as int64 > 1",
        "$.dealy in (1, 2, 3)",
    ] {
        let out = delay_count(dir.path(), filter);
        assert_eq!(stdout(&out), "0\n", "{filter}");
        let path = filter.split(' ').next().unwrap();
        assert_eq!(
            stderr(&out),
            format!(
                "vshred: warning: no row has a value at {path}, so no comparison of it passes (misspelt?)\n"
            ),
            "{filter}"
        );
    }
    // A field the layout does not shred may be in the residual: no word.
    encoded(
        dir.path(),
        "partly.parquet",
        &std::fs::read_to_string(dir.path().join("in.jsonl")).unwrap(),
        &["--variant-field", "v", "--shred", r#"{"delay":"int64"}"#],
    );
    let out = vshred_in(
        dir.path(),
        &[
            "get",
            "partly.parquet",
            "$.delay",
            "--where",
            r#"$.note == "ok""#,
            "--agg",
            "count",
        ],
    );
    assert_eq!((stdout(&out), stderr(&out)), ("36\n", ""));
}

#[test]
fn filters_take_and_or_not_in_null_and_ordinary_columns() {
    let dir = tempfile::tempdir().unwrap();
    filtered_file(dir.path());
    let count = |filter: &str| {
        let out = delay_count(dir.path(), filter);
        assert!(out.status.success(), "{filter}: {}", stderr(&out));
        stdout(&out).trim().parse::<u64>().unwrap()
    };
    // Computed from the rows above: id 0..40, delay = id % 7, note null
    // when id % 10 == 0.
    let expect = |f: fn(u64) -> bool| (0..40).filter(|&i| f(i)).count() as u64;
    assert_eq!(count("id < 10"), 10);
    assert_eq!(
        count("id >= 30 and $.delay == 0"),
        expect(|i| i >= 30 && i % 7 == 0)
    );
    assert_eq!(
        count("$.delay == 1 or $.delay == 2"),
        expect(|i| matches!(i % 7, 1 | 2))
    );
    assert_eq!(
        count("$.delay in (1, 2)"),
        expect(|i| matches!(i % 7, 1 | 2))
    );
    assert_eq!(
        count("not $.delay in (1, 2)"),
        expect(|i| !matches!(i % 7, 1 | 2))
    );
    assert_eq!(count("$.note is null"), expect(|i| i % 10 == 0));
    assert_eq!(
        count("$.note != null and (id < 5 or id > 35)"),
        expect(|i| i % 10 != 0 && !(5..=35).contains(&i))
    );
    assert_eq!(count("$.missing == null"), 40);
    // A comparison with a null, missing or other kind of value is
    // unknown, as in SQL: `not` of it does not pass either.
    assert_eq!(count("not $.note == \"ok\""), 0);
    assert_eq!(count("not $.missing == 1"), 0);
    assert_eq!(count("not $.delay == \"5\""), 0);
    // Unknown and false is false: its `not` passes.
    assert_eq!(
        count("not ($.note == \"ok\" and $.delay == 1)"),
        expect(|i| i % 7 != 1)
    );
    assert_eq!(
        count("$.note == \"ok\" or $.delay == 1"),
        expect(|i| i % 10 != 0 || i % 7 == 1)
    );
    fails_with(
        dir.path(),
        &["get", "f.parquet", "$.delay", "--where", "nope == 1"],
        "no column \"nope\" in the file (it has: id, v); a field of the Variant column \"v\" is named by its path: $.nope",
    );
}

#[test]
fn get_prints_columns_beside_the_value_and_stops_at_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    filtered_file(dir.path());
    let out = vshred_in(
        dir.path(),
        &[
            "get",
            "f.parquet",
            "$.delay",
            "--with",
            "id",
            "--where",
            "id >= 20",
            "--limit",
            "3",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"id\":20,\"$.delay\":6}\n{\"id\":21,\"$.delay\":0}\n{\"id\":22,\"$.delay\":1}\n"
    );
    let cat = vshred_in(
        dir.path(),
        &["cat", "f.parquet", "--columns", "id", "--limit", "2"],
    );
    assert_eq!(stdout(&cat), "{\"id\":0}\n{\"id\":1}\n");
    let none = vshred_in(dir.path(), &["cat", "f.parquet", "--limit", "0"]);
    assert!(none.status.success() && none.stdout.is_empty());
}

/// A Variant column beside the value is its JSON, as `cat` prints it, not
/// its metadata and value bytes; from a file and from standard input.
#[test]
fn get_prints_variant_columns_beside_the_value_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let lines =
        "{\"id\":1,\"v\":{\"k\":1},\"w\":{\"x\":[1,2]}}\n{\"id\":2,\"v\":{\"k\":2},\"w\":\"s\"}\n";
    encoded(
        dir.path(),
        "f.parquet",
        lines,
        &["--variant-field", "v", "--variant-field", "w"],
    );
    let expected = "{\"v\":{\"k\":1},\"w\":{\"x\":[1,2]},\"id\":1,\"$.k\":1}\n{\"v\":{\"k\":2},\"w\":\"s\",\"id\":2,\"$.k\":2}\n";
    let args = ["--column", "v", "--with", "v,w,id"];
    let out = vshred_in(
        dir.path(),
        &[&["get", "f.parquet", "$.k"][..], &args].concat(),
    );
    assert_eq!(stdout(&out), expected, "{}", stderr(&out));
    let piped = vshred_piped(
        dir.path(),
        &[&["get", "-", "$.k"][..], &args].concat(),
        &std::fs::read(dir.path().join("f.parquet")).unwrap(),
    );
    assert_eq!(stdout(&piped), expected, "{}", stderr(&piped));
}

#[test]
fn as_takes_the_type_names_users_type() {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "f.parquet", "{\"a\":1}\n{\"a\":\"x\"}\n", &[]);
    for (name, printed) in [
        ("int", "1\nnull\n"),
        ("BIGINT", "1\nnull\n"),
        // A number converts to its text, as in Spark.
        ("str", "\"1\"\n\"x\"\n"),
        ("json", "1\n\"x\"\n"),
    ] {
        let out = vshred_in(dir.path(), &["get", "f.parquet", "$.a", "--as", name]);
        assert_eq!(stdout(&out), printed, "{name}: {}", stderr(&out));
    }
    fails_with(
        dir.path(),
        &["get", "f.parquet", "$.a", "--as", "decimal(40,2)"],
        "precision 40 is over 38",
    );
}

#[test]
fn a_path_shredded_as_an_object_converts_as_a_whole_value() {
    // Every `u` is an object, so its own `value` is all null; one `a` is
    // not an integer and is Variant-encoded in `a`'s `value`, which a
    // result of any type must read the names to decode.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("u.json"), r#"{"u":{"a":"int64"}}"#).unwrap();
    encoded(
        dir.path(),
        "f.parquet",
        "{\"u\":{\"a\":1}}\n{\"u\":{\"a\":\"x\"}}\n",
        &["--shred", "u.json"],
    );
    let out = vshred_in(dir.path(), &["get", "f.parquet", "$.u", "--as", "string"]);
    assert_eq!(
        stdout(&out),
        "\"{\\\"a\\\":1}\"\n\"{\\\"a\\\":\\\"x\\\"}\"\n",
        "{}",
        stderr(&out)
    );
    let out = vshred_in(dir.path(), &["get", "f.parquet", "$.u", "--as", "int64"]);
    assert_eq!(stdout(&out), "null\nnull\n", "{}", stderr(&out));
    fails_with(
        dir.path(),
        &["get", "f.parquet", "$.u", "--as", "int64", "--strict"],
        "$.u: {\"a\":1} does not convert to int64",
    );
}

/// The limits of inference given with a layout that infers nothing are
/// warned of, and `infer` refuses a layout that `encode` would refuse to
/// write (the Spark preset's is not measured by writing it).
#[test]
fn limits_that_do_not_apply_are_warned_of_and_infer_refuses_what_encode_would() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "{\"a\":{\"b\":1}}\n").unwrap();
    std::fs::write(dir.path().join("l.json"), r#"{"a":{"b":"int64"}}"#).unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "in.jsonl",
            "o.parquet",
            "--shred",
            "l.json",
            "--max-depth",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "vshred: warning: --max-depth limits what is inferred, and --shred l.json infers nothing\n"
        ),
        "{}",
        stderr(&out)
    );
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "o.parquet", "--max-depth", "1"],
    );
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let deep = "[".repeat(100) + "1" + &"]".repeat(100) + "\n";
    std::fs::write(dir.path().join("deep.jsonl"), deep.repeat(3)).unwrap();
    for shred in ["auto", "spark"] {
        fails_with(
            dir.path(),
            &[
                "infer",
                "deep.jsonl",
                "--shred",
                shred,
                "--max-depth",
                "100",
            ],
            "the layout nests 302 levels deep, more than the 256 a file may for vshred to read it back",
        );
    }
}

#[test]
fn typos_and_absent_fields_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.jsonl"), "{\"a\":1,\"b\":{\"c\":2}}\n").unwrap();
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "o.parquet", "--shred", "sprak"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "vshred: invalid arguments: --shred \"sprak\" is not a preset (auto, spark, none) nor a schema file; did you mean spark?\n"
    );
    fails_with(
        dir.path(),
        &["encode", "in.jsonl", "o.parquet", "--shred", "layout.json"],
        "--shred \"layout.json\": no such schema file (nor a preset: auto, spark, none)",
    );
    for command in [
        &["encode", "in.jsonl", "o.parquet"][..],
        &["infer", "in.jsonl"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--variant-field", "nope"]);
        let out = vshred_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("warning: --variant-field \"nope\": no sampled line has this field"),
            "{command:?}: {}",
            stderr(&out)
        );
    }
    // A layout's field that no line has, at any depth, for each Variant
    // column it applies to, not the fields under it; the fields the lines
    // have are not named.
    let layout = r#"{"a":"int64","bb":"int64","b":{"c":"int64","cc":"string"}}"#;
    for (args, warned) in [
        (&[][..], ["v.b.cc", "v.bb"].as_slice()),
        (&["--variant-field", "b"], ["b.a", "b.b", "b.bb"].as_slice()),
    ] {
        let mut all = vec!["encode", "in.jsonl", "o.parquet", "--shred", layout];
        all.extend(args);
        let out = vshred_in(dir.path(), &all);
        assert!(out.status.success(), "{all:?}: {}", stderr(&out));
        let mut said: Vec<&str> = stderr(&out)
            .lines()
            .filter_map(|line| {
                line.strip_prefix(
                    "vshred: warning: --shred: no sampled line has the layout's field ",
                )?
                .strip_suffix("; its typed column is null there (misspelt?)")
            })
            .collect();
        said.sort();
        assert_eq!(said, warned, "{all:?}: {}", stderr(&out));
    }
    // A key written with an escape is found (the text does not spell it);
    // a key with a dot is named as a path spells it, apart from the
    // nested field the lines have.
    std::fs::write(
        dir.path().join("escaped.jsonl"),
        "{\"\\u0075sr\":1,\"c\":{\"d\":2}}\n",
    )
    .unwrap();
    let out = vshred_in(
        dir.path(),
        &[
            "encode",
            "escaped.jsonl",
            "o.parquet",
            "--shred",
            r#"{"usr":"int64","c.d":"int64","c":{"d":"int64"}}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .lines()
            .filter(|l| l.contains("warning"))
            .collect::<Vec<_>>(),
        [
            "vshred: warning: --shred: no sampled line has the layout's field v['c.d']; its typed column is null there (misspelt?)"
        ],
        "{}",
        stderr(&out)
    );
}

#[test]
fn encode_keeps_the_last_of_a_duplicate_key_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "{\"id\":1,\"v\":{\"a\":1,\"a\":2},\"id\":3}\n{\"id\":4,\"v\":{\"a\":5}}\n";
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    let refused = vshred_in(dir.path(), &["encode", "in.jsonl", "o.parquet"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("(--keep-last-duplicate keeps the last value)"),
        "{}",
        stderr(&refused)
    );
    for split in [&[][..], &["--variant-field", "v"]] {
        let mut args = vec!["encode", "in.jsonl", "o.parquet", "--keep-last-duplicate"];
        args.extend_from_slice(split);
        let out = vshred_in(dir.path(), &args);
        assert!(out.status.success(), "{split:?}: {}", stderr(&out));
        let out = vshred_in(dir.path(), &["cat", "o.parquet"]);
        let cat = stdout(&out);
        let expected = if split.is_empty() {
            "{\"v\":{\"id\":3,\"v\":{\"a\":2}}}\n{\"v\":{\"id\":4,\"v\":{\"a\":5}}}\n"
        } else {
            "{\"id\":3,\"v\":{\"a\":2}}\n{\"id\":4,\"v\":{\"a\":5}}\n"
        };
        assert_eq!(cat, expected, "{split:?}");
    }
}

#[test]
fn no_arguments_print_the_help() {
    let out = vshred_in(Path::new("."), &[]);
    assert_eq!(out.status.code(), Some(1));
    let help = stderr(&out);
    assert!(
        help.contains("Usage: vshred <COMMAND>") && help.contains("encode"),
        "{help}"
    );
}

#[test]
fn a_long_encode_on_a_terminal_shows_progress_with_size_and_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for i in 0..200_000 {
        lines.push_str(&format!(
            "{{\"id\":{i},\"name\":\"n{i}\",\"x\":{}.5}}\n",
            i % 100
        ));
    }
    std::fs::write(dir.path().join("in.jsonl"), &lines).unwrap();
    let out = on_a_terminal(dir.path(), "encode in.jsonl out.parquet");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    let total = format!("/{:.2} MiB", lines.len() as f64 / (1024.0 * 1024.0));
    assert!(
        shown.contains(" read, ") && shown.contains(" left") && shown.contains(&total),
        "{total}: {shown}"
    );
    // Not on a pipe.
    let piped = vshred_in(dir.path(), &["encode", "in.jsonl", "out.parquet"]);
    assert!(!stderr(&piped).contains(" left"), "{}", stderr(&piped));
}

/// The input and the output given the wrong way round: the JSON file is
/// not replaced, and with every line bad no file is written at all.
#[test]
fn arguments_the_wrong_way_round_lose_no_file() {
    let dir = tempfile::tempdir().unwrap();
    encoded(dir.path(), "e.parquet", "{\"a\":1}\n{\"a\":2}\n", &[]);
    let json = std::fs::read(dir.path().join("in.jsonl")).unwrap();
    for skip in [&[][..], &["--skip-bad-lines"]] {
        let mut args = vec!["encode", "e.parquet", "in.jsonl"];
        args.extend_from_slice(skip);
        fails_with(
            dir.path(),
            &args,
            "in.jsonl: invalid arguments: is not a Parquet file, and writing would replace it",
        );
        assert_eq!(std::fs::read(dir.path().join("in.jsonl")).unwrap(), json);
    }
    fails_with(
        dir.path(),
        &["encode", "e.parquet", "new.parquet", "--skip-bad-lines"],
        "(a Parquet file, which is read, not encoded); --skip-bad-lines skips bad lines of JSON Lines, and this input is not JSON Lines",
    );
    assert!(!dir.path().join("new.parquet").exists());
    // Nor is an input of another kind whose few lines that parse would be
    // all that is written (a compressed file, one JSON document over many
    // lines), replacing a file that was there; a bad first line of JSON
    // Lines is skipped.
    for (input, text) in [
        ("in.gz", &b"\x1f\x8b\x08\x00\x00\x00\n7\n{\"a\":1}\n"[..]),
        ("in.json", &b"[\n  {\"a\": 1},\n  3\n]\n"[..]),
    ] {
        std::fs::write(dir.path().join(input), text).unwrap();
        fails_with(
            dir.path(),
            &["encode", input, "e.parquet", "--skip-bad-lines"],
            "--skip-bad-lines skips bad lines of JSON Lines, and this input is not JSON Lines",
        );
        let kept = vshred_in(dir.path(), &["cat", "e.parquet"]);
        assert_eq!(
            stdout(&kept),
            "{\"v\":{\"a\":1}}\n{\"v\":{\"a\":2}}\n",
            "{input}"
        );
    }
    // So is one a crash left zeroed at its start.
    for first in ["oops", "\0\0\0\0"] {
        std::fs::write(
            dir.path().join("first.jsonl"),
            format!("{first}\n{{\"a\":3}}\n"),
        )
        .unwrap();
        let out = vshred_in(
            dir.path(),
            &["encode", "first.jsonl", "e.parquet", "--skip-bad-lines"],
        );
        assert!(out.status.success(), "{first:?}: {}", stderr(&out));
    }
    // An empty file, a Parquet file and a device are written as before.
    std::fs::write(dir.path().join("empty.out"), "").unwrap();
    for output in ["empty.out", "e.parquet", "/dev/null"] {
        let out = vshred_in(dir.path(), &["encode", "in.jsonl", output]);
        assert!(out.status.success(), "{output}: {}", stderr(&out));
    }
}

/// A value past the sample that does not fit the ordinary column chosen
/// from it is named with its line and the column's type.
#[test]
fn a_value_that_does_not_fit_its_column_names_the_columns_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: String = (0..5000)
        .map(|i| format!("{{\"id\":{i},\"v\":{{\"a\":1}}}}\n"))
        .collect();
    lines.push_str("{\"id\":\"x\",\"v\":{\"a\":1}}\n");
    std::fs::write(dir.path().join("in.jsonl"), lines).unwrap();
    fails_with(
        dir.path(),
        &["encode", "in.jsonl", "o.parquet", "--variant-field", "v"],
        "at row 5000, line 5001, column 7 (byte 118896): field \"id\" is a column of int64 (chosen from the sample lines, or in a dataset by its files before), and this value is not one (a larger sample, or the field as a Variant field, takes it)",
    );
}

/// Once the other fields are columns (`--variant-field v`), `$.id` is not
/// in `v`: the nulls it gives come with a note naming the column, and a
/// path no file has, or one some row has, with none.
#[test]
fn a_path_naming_a_column_beside_the_variant_says_so() {
    let dir = tempfile::tempdir().unwrap();
    encoded(
        dir.path(),
        "e.parquet",
        "{\"id\":1,\"v\":{\"a\":1}}\n{\"id\":2,\"v\":{\"a\":2,\"id\":7}}\n",
        &["--variant-field", "v"],
    );
    let note = "vshred: note: no row has $.id in the Variant column v; id is a column beside it (print it with --with id, filter on it with --where 'id ...')\n";
    let out = vshred_in(
        dir.path(),
        &["get", "e.parquet", "$.id", "--where", "$.a == 1"],
    );
    assert_eq!((stdout(&out), stderr(&out)), ("null\n", note));
    let out = vshred_in(dir.path(), &["get", "e.parquet", "$.id", "--agg", "count"]);
    assert_eq!((stdout(&out), stderr(&out)), ("1\n", ""));
    let out = vshred_in(dir.path(), &["get", "e.parquet", "$.nope"]);
    assert_eq!((stdout(&out), stderr(&out)), ("null\nnull\n", ""));
}

#[test]
fn a_column_asked_of_a_file_without_variant_columns_is_named_with_none_listed() {
    let dir = tempfile::tempdir().unwrap();
    let out = vshred_in(
        dir.path(),
        &["sql", "COPY (SELECT 1 AS a) TO 'plain.parquet'"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    fails_with(
        dir.path(),
        &["get", "plain.parquet", "$.a", "--column", "a"],
        "no Variant column \"a\" in the file (it has none)",
    );
}

/// `auto` writing a small input unshredded (smaller so) says it, with the
/// sizes that decided it: a user expecting typed columns would otherwise
/// find none and not know why.
#[test]
fn a_column_left_unshredded_is_said_with_the_sizes_that_decided_it() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..300)
        .map(|i| {
            format!(
                "{{\"n\":{},\"s\":\"s-{}\"}}\n",
                i * 7919 % 1000,
                i * 31 % 97
            )
        })
        .collect();
    std::fs::write(dir.path().join("in.jsonl"), &lines).unwrap();
    let out = vshred_in(dir.path(), &["encode", "in.jsonl", "auto.parquet"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let size = std::fs::metadata(dir.path().join("auto.parquet"))
        .unwrap()
        .len();
    let said = stderr(&out);
    let prefix =
        format!("vshred: v left unshredded: written alone, it makes a file of {size} bytes so, ");
    let line = said
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{said}"));
    let shredded: u64 = line[prefix.len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(shredded > size, "{line}");
    assert!(
        line.ends_with("--shred spark shreds it whatever it costs)"),
        "{line}"
    );
    // `infer` says it too, of the layout it prints.
    let out = vshred_in(dir.path(), &["infer", "in.jsonl"]);
    assert_eq!(stdout(&out), "\"variant\"\n");
    assert!(stderr(&out).starts_with(&prefix), "{}", stderr(&out));
    // A dataset says it of the file that chose the layout, by name, once:
    // the files after keep that layout.
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "parts", "--max-file-rows", "100"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.contains("left unshredded"))
        .map(String::from)
        .collect();
    let first = std::fs::metadata(dir.path().join("parts/part-00000.parquet"))
        .unwrap()
        .len();
    let prefix = format!(
        "vshred: part-00000.parquet: v left unshredded: written alone, it makes a file of {first} bytes so, "
    );
    assert!(said.len() == 1 && said[0].starts_with(&prefix), "{said:?}");
    // Shredded as asked, nothing to say.
    let out = vshred_in(
        dir.path(),
        &["encode", "in.jsonl", "spark.parquet", "--shred", "spark"],
    );
    assert!(!stderr(&out).contains("unshredded"), "{}", stderr(&out));
    let spark = std::fs::metadata(dir.path().join("spark.parquet"))
        .unwrap()
        .len();
    assert!(spark > size, "{spark} against {size}");
}
