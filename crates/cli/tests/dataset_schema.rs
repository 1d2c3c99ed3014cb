//! `vshred schema DATASET` (issue 12): the union of the files' columns,
//! how each file shreds each Variant path, the typed share and the leaves'
//! sizes summed; ordinary columns whose files disagree are named.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, StringArray};
use arrow::array::{ArrayRef, Int32Array, Int64Array, LargeStringArray, NullArray, RecordBatch};
use arrow::datatypes::{Field, Schema};

mod binary;
use binary::{encoded, fails_with, rows, stderr, stdout, vshred_in};

/// Encodes `lines` to `dir/name` with `args`, the `v` field the Variant
/// column.
fn encoded_v(dir: &Path, name: &str, lines: &str, args: &[&str]) {
    encoded(
        dir,
        name,
        lines,
        &[&["--variant-field", "v"], args].concat(),
    );
}

/// Writes `columns` to `dir/name` with the arrow-rs writer.
fn plain_file(dir: &Path, name: &str, columns: Vec<(&str, ArrayRef)>) {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Files that differ in layout, decimal storage and the type of `$.a`, and
/// one without the Variant column but with a column the others lack.
fn mixed(dir: &Path) {
    // `auto` shreds only when a column pays for itself: 1,000 rows do.
    encoded_v(
        dir,
        "d/0-auto.parquet",
        &rows(0, 1000, |i| i.to_string()),
        &[],
    );
    encoded_v(
        dir,
        "d/1-spark.parquet",
        &rows(0, 40, |i| format!("{i}.5")),
        &["--shred", "spark"],
    );
    encoded_v(
        dir,
        "d/2-flba.parquet",
        &rows(0, 40, |i| format!("{i}.5")),
        &["--shred", "spark", "--decimal", "flba"],
    );
    encoded_v(
        dir,
        "d/3-none.parquet",
        &rows(0, 40, |i| i.to_string()),
        &["--shred", "none"],
    );
    // `$.a` a string, and in 5 of 40 rows an integer (left in `value`).
    let a = |i: i64| {
        if i % 8 == 0 {
            i.to_string()
        } else {
            format!("\"s{i}\"")
        }
    };
    let layout = dir.join("layout.json");
    std::fs::write(&layout, r#"{"a":"string","b":"string"}"#).unwrap();
    encoded_v(
        dir,
        "d/4-string.parquet",
        &rows(0, 40, a),
        &["--shred", layout.to_str().unwrap()],
    );
    plain_file(
        dir,
        "d/5-plain.parquet",
        vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2]))),
            ("note", Arc::new(StringArray::from(vec!["n1", "n2"]))),
        ],
    );
}

/// `vshred schema DIR`, which must succeed.
fn schema_of(dir: &Path, dataset: &str) -> String {
    let out = vshred_in(dir, &["schema", dataset]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).to_string()
}

#[test]
fn schema_of_a_dataset_lists_each_path_with_its_types_and_files() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let text = schema_of(dir.path(), "d");
    let tables: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(tables[0], "6 files, 1162 rows, 6 row groups");
    // `note` is in one file only; `v` in all but the plain one.
    assert_eq!(
        tables[1],
        "  column  type     files
  id      Int64    6 of 6
  v       variant  5 of 6
  note    Utf8     1 of 6"
    );
    // `$.a` is int32 (auto), decimal as INT64 (spark) and as FLBA (spark,
    // flba), and string; the unshredded file shreds nothing. The string
    // file's 5 integers are in `value`.
    assert_eq!(
        tables[2],
        "Variant column v (in 5 of 6): shredded paths
  path  types (files)                                                              not shredded  typed share
  $     object (4)                                                                 1             -
  $.a   int32 (1), decimal(18,1) INT64 (1), decimal(18,1) FLBA(8) (1), string (1)  1             99.6% (1115/1120)
  $.b   string (4)                                                                 1             100.0% (1120/1120)"
    );
}

/// The sizes `vshred schema FILE` prints for leaf `leaf`, if the file has it.
fn leaf_sizes_alone(dir: &Path, file: &str, leaf: &str) -> Option<(u64, u64)> {
    let text = schema_of(dir, file);
    text.lines().find_map(|line| {
        let cells: Vec<&str> = line.split_whitespace().collect();
        match cells.as_slice() {
            [c, u, name] if *name == leaf => Some((c.parse().ok()?, u.parse().ok()?)),
            _ => None,
        }
    })
}

#[test]
fn leaf_sizes_are_summed_over_the_files_that_have_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    mixed(dir.path());
    let text = schema_of(dir.path(), "d");
    let files: Vec<String> = (0..6)
        .map(|i| {
            let name = ["auto", "spark", "flba", "none", "string", "plain"][i];
            format!("d/{i}-{name}.parquet")
        })
        .collect();
    for leaf in ["id", "v.value", "v.typed_value.a.typed_value", "note"] {
        let alone: Vec<(u64, u64)> = files
            .iter()
            .filter_map(|f| leaf_sizes_alone(dir.path(), f, leaf))
            .collect();
        let (compressed, uncompressed) = alone
            .iter()
            .fold((0, 0), |(c, u), (fc, fu)| (c + fc, u + fu));
        let expected = format!(
            "{compressed:>14} {uncompressed:>14} {:>6}  {leaf}",
            alone.len()
        );
        assert!(text.lines().any(|l| l == expected), "{expected}\n{text}");
    }
    assert!(
        text.contains("v.typed_value.a.typed_value\n"),
        "leaves by their dotted paths: {text}"
    );
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l.ends_with("     6  (all columns)")),
        "{text}"
    );
}

/// The schema names the files that disagree on a column; a read of that
/// column fails naming them, a read of the others does not (`get` of `v`
/// failed too).
#[test]
fn files_that_disagree_on_an_ordinary_column_are_named_and_only_its_reads_fail() {
    let dir = tempfile::tempdir().unwrap();
    encoded_v(
        dir.path(),
        "d/a.parquet",
        &rows(0, 5, |i| i.to_string()),
        &[],
    );
    let disagreeing = |name: &str, column: &str, array: ArrayRef, says: &str, types: &str| {
        plain_file(dir.path(), name, vec![(column, array)]);
        let schema = schema_of(dir.path(), "d");
        // The column's line counts the files of each type (it showed the
        // first file's type alone).
        assert!(
            schema
                .lines()
                .any(|l| l.starts_with(&format!("  {column} ")) && l.contains(types)),
            "{types}\n{schema}"
        );
        assert!(
            schema.contains(&format!(
                "column \"{column}\" is {says}: a read of it fails; the other columns read"
            )),
            "{schema}"
        );
        fails_with(
            dir.path(),
            &["cat", "d"],
            &format!("vshred: d: incompatible files: column \"{column}\" is {says}"),
        );
        std::fs::remove_file(dir.path().join(name)).unwrap();
    };
    disagreeing(
        "d/b.parquet",
        "id",
        Arc::new(StringArray::from(vec!["one"])),
        "Int64 in d/a.parquet but Utf8 in d/b.parquet",
        "  Int64 (1), Utf8 (1)  2 of 2",
    );
    // A Variant column in one file, an ordinary one in another.
    disagreeing(
        "d/c.parquet",
        "v",
        Arc::new(StringArray::from(vec!["{}"])),
        "variant in d/a.parquet but Utf8 in d/c.parquet",
        "  variant (1), Utf8 (1)  2 of 2",
    );
    // No widening: int32 and int64 are two types.
    disagreeing(
        "d/d.parquet",
        "id",
        Arc::new(Int32Array::from(vec![1])),
        "Int64 in d/a.parquet but Int32 in d/d.parquet",
        "  Int64 (1), Int32 (1)  2 of 2",
    );
    // The others read: `v` beside an `id` the files disagree on.
    plain_file(
        dir.path(),
        "d/b.parquet",
        vec![("id", Arc::new(StringArray::from(vec!["one"])))],
    );
    let out = vshred_in(dir.path(), &["get", "d", "$.a", "--agg", "count"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "5\n");
    // `cat` says which columns read, and they do; `report` reads them
    // back, saying which it left out.
    fails_with(
        dir.path(),
        &["cat", "d"],
        "vshred: d: incompatible files: column \"id\" is Int64 in d/a.parquet but Utf8 in d/b.parquet (--columns v reads the others)",
    );
    let out = vshred_in(dir.path(), &["cat", "d", "--columns", "v"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 6);
    let out = vshred_in(dir.path(), &["report", "d"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Column `id` of d is left out of the rows read back (reconstruction, and the check that every layout reads back the same): its files disagree on its type (Int64 in d/a.parquet but Utf8 in d/b.parquet)."),
        "{}",
        stdout(&out)
    );
    fails_with(
        dir.path(),
        &["get", "d", "$.a", "--with", "id"],
        "column \"id\" is Int64 in d/a.parquet but Utf8 in d/b.parquet",
    );
    // A Variant column that the first file has as an ordinary one is
    // still the one `get` reads, and names both files (it said "no file
    // has a Variant column").
    plain_file(
        dir.path(),
        "d/0.parquet",
        vec![("v", Arc::new(StringArray::from(vec!["{}"])))],
    );
    fails_with(
        dir.path(),
        &["get", "d", "$.a"],
        "column \"v\" is Utf8 in d/0.parquet but variant in d/a.parquet",
    );
}

#[test]
fn string_widths_and_null_typed_columns_agree_with_the_type_parquet_stores() {
    let dir = tempfile::tempdir().unwrap();
    let notes = |array: ArrayRef| {
        vec![
            ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
            ("note", array),
        ]
    };
    // The arrow-rs writer keeps the Arrow type in the footer: this file's
    // `note` reads back as LargeUtf8.
    plain_file(
        dir.path(),
        "d/a.parquet",
        notes(Arc::new(LargeStringArray::from(vec!["x"]))),
    );
    plain_file(
        dir.path(),
        "d/b.parquet",
        notes(Arc::new(StringArray::from(vec!["y"]))),
    );
    plain_file(
        dir.path(),
        "d/c.parquet",
        notes(Arc::new(NullArray::new(1))),
    );
    let text = schema_of(dir.path(), "d");
    assert!(
        text.contains(
            "\n  id      Int64               3 of 3\n  note    Utf8 (2), Null (1)  3 of 3\n"
        ),
        "{text}"
    );
    let cat = vshred_in(dir.path(), &["cat", "d"]);
    assert_eq!(
        stdout(&cat),
        "{\"id\":1,\"note\":\"x\"}\n{\"id\":1,\"note\":\"y\"}\n{\"id\":1,\"note\":null}\n"
    );
    // A null-typed column beside a Variant one of the same name (it was
    // "variant in d/v.parquet but Null in d/w.parquet").
    let dir = tempfile::tempdir().unwrap();
    encoded_v(
        dir.path(),
        "d/v.parquet",
        &rows(0, 3, |i| i.to_string()),
        &["--shred", r#"{"a":"int64"}"#],
    );
    plain_file(
        dir.path(),
        "d/w.parquet",
        vec![("v", Arc::new(NullArray::new(2)))],
    );
    let text = schema_of(dir.path(), "d");
    assert!(
        text.contains("\n  v       variant (1), Null (1)  2 of 2\n"),
        "{text}"
    );
    assert!(text.contains("\nVariant column v (in 1 of 2)"), "{text}");
    // Not shredded in no file: the null-typed one has no Variant column.
    let root = text.lines().find(|l| l.starts_with("  $ ")).unwrap();
    assert_eq!(root.split_whitespace().nth(3), Some("0"), "{text}");
    let count = vshred_in(dir.path(), &["get", "d", "$.a", "--agg", "count"]);
    assert_eq!(stdout(&count), "3\n", "{}", stderr(&count));
    let cat = vshred_in(dir.path(), &["cat", "d"]);
    assert!(
        stdout(&cat).ends_with("}\n{\"id\":null,\"v\":null}\n{\"id\":null,\"v\":null}\n"),
        "{}{}",
        stdout(&cat),
        stderr(&cat)
    );
}

#[test]
fn a_typed_share_without_null_counts_in_the_footer_says_so() {
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use vshred::shred::{Shredder, ShreddingSchema};
    let dir = tempfile::tempdir().unwrap();
    encoded_v(
        dir.path(),
        "d/a.parquet",
        &rows(0, 10, |i| i.to_string()),
        &["--shred", "spark"],
    );
    // The same layout, written without statistics.
    let layout: ShreddingSchema = r#"{"a":"int64","b":"string"}"#.parse().unwrap();
    let mut shredder = Shredder::new(&layout);
    for i in 0..4 {
        shredder
            .append_json(format!("{{\"a\":{i},\"b\":\"x\"}}").as_bytes())
            .unwrap();
    }
    let column: ArrayRef = Arc::new(shredder.finish());
    let field =
        vshred::parquet::variant_field("v", &layout).with_data_type(column.data_type().clone());
    let schema = Arc::new(Schema::new(vec![field]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let properties = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let file = std::fs::File::create(dir.path().join("d/b.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let text = schema_of(dir.path(), "d");
    // The file with statistics is counted, the other said to be left out.
    assert!(
        text.contains(
            "\n  $.a   int64 (2)      0             100.0% (10/10); 1 file without null counts\n"
        ),
        "{text}"
    );
}

#[test]
fn the_readme_shows_what_schema_prints_for_the_engine_files() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = "$ vshred schema testdata/datasets/engines\n";
    let start = readme.find(command).expect("the README runs schema") + command.len();
    // The README cuts the leaves' table short with "...".
    let shown = &readme[start..][..readme[start..].find("...\n").unwrap()];
    let printed = schema_of(root, "testdata/datasets/engines");
    assert!(
        printed.starts_with(shown),
        "README:\n{shown}\nprinted:\n{printed}"
    );
}
