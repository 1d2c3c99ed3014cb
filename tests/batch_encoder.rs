//! `BatchEncoder` writes record batches of Variants as `encode` writes
//! JSON Lines: shredded by a layout inferred from the first rows, read back
//! as the same JSON, with other columns as they came and SQL NULLs kept.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, Int64Array, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use vshred::encode::{BatchEncoder, EncodeOptions, JsonRecords, ShredMode};
use vshred::infer::{InferOptions, Preset};
use vshred::parquet::{ColumnSpec, ParquetFile, ScanOptions, variant_field};
use vshred::shred::{Shredder, ShreddingSchema};

/// The Variants of these JSON lines, as an unshredded column.
fn variants(lines: &[&str]) -> StructArray {
    let text = lines.join("\n");
    let mut input = text.as_bytes();
    let mut records = JsonRecords::new(&mut input, &EncodeOptions::default()).unwrap();
    records
        .next_batch()
        .unwrap()
        .unwrap()
        .column(0)
        .as_struct()
        .clone()
}

/// Options whose inference (Spark's, which shreds small samples too)
/// samples the first `rows` rows.
fn sampling(rows: usize) -> EncodeOptions {
    EncodeOptions {
        shred: ShredMode::Infer(InferOptions::new(Preset::Spark).with_sample_rows(rows)),
        sample_rows: rows,
        ..EncodeOptions::default()
    }
}

/// A schema of an `id` column and a Variant column `v`.
fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        variant_field("v", &ShreddingSchema::Variant),
    ]))
}

fn batch(ids: std::ops::Range<i64>, v: StructArray) -> RecordBatch {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(ids));
    RecordBatch::try_new(schema(), vec![ids, Arc::new(v)]).unwrap()
}

/// The file's rows as JSON lines.
fn lines_of(path: &std::path::Path) -> Vec<String> {
    let mut text = Vec::new();
    let file = ParquetFile::open(path).unwrap();
    file.json_lines(None, &ScanOptions::new(1), |chunk| {
        text.extend_from_slice(&chunk);
        Ok(())
    })
    .unwrap();
    String::from_utf8(text)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn layout(columns: &[ColumnSpec], name: &str) -> String {
    columns
        .iter()
        .find_map(|c| match c {
            ColumnSpec::Variant { name: n, schema } if n == name => Some(schema.to_string()),
            _ => None,
        })
        .expect("a Variant column")
}

#[test]
fn batches_are_shredded_by_the_sample_and_read_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let options = sampling(3);
    let mut encoder = BatchEncoder::new(schema(), &out, &options).unwrap();
    // The sample (3 rows) ends inside the second batch; the third comes
    // after the layout is chosen, with a value that does not fit it.
    encoder
        .write(&batch(
            0..2,
            variants(&[r#"{"a":1,"b":"x"}"#, r#"{"a":2}"#]),
        ))
        .unwrap();
    encoder
        .write(&batch(2..4, variants(&[r#"{"a":3,"b":"y"}"#, r#"[1,2]"#])))
        .unwrap();
    encoder
        .write(&batch(4..5, variants(&[r#"{"a":"four","c":1.50}"#])))
        .unwrap();
    assert!(!out.exists(), "the file appears only when finished");
    let written = encoder.finish().unwrap();
    assert_eq!(written.summary.rows, 5);
    assert_eq!(
        layout(&written.columns, "v"),
        r#"{"a":"int64","b":"string"}"#
    );
    assert_eq!(
        lines_of(&out),
        [
            r#"{"id":0,"v":{"a":1,"b":"x"}}"#,
            r#"{"id":1,"v":{"a":2}}"#,
            r#"{"id":2,"v":{"a":3,"b":"y"}}"#,
            r#"{"id":3,"v":[1,2]}"#,
            r#"{"id":4,"v":{"a":"four","c":1.50}}"#,
        ]
    );
}

#[test]
fn sql_nulls_stay_null_and_variant_nulls_stay_variant_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let v = variants(&[r#"{"a":1}"#, "null", r#"{"a":2}"#]);
    let (fields, arrays, _) = v.into_parts();
    let v = StructArray::new(fields, arrays, Some(vec![true, true, false].into()));
    let mut encoder = BatchEncoder::new(schema(), &out, &EncodeOptions::default()).unwrap();
    encoder.write(&batch(0..3, v)).unwrap();
    encoder.finish().unwrap();
    let file = std::fs::File::open(&out).unwrap();
    let read = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1024)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let v = read.column_by_name("v").unwrap();
    assert_eq!(
        (0..3).map(|row| v.is_null(row)).collect::<Vec<_>>(),
        [false, false, true]
    );
    assert_eq!(lines_of(&out)[1], r#"{"id":1,"v":null}"#, "a Variant null");
}

#[test]
fn a_shredded_input_column_is_rewritten_by_the_new_layout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let by_b: ShreddingSchema = r#"{"b":"string"}"#.parse().unwrap();
    let mut shredder = Shredder::new(&by_b);
    shredder.append_json(br#"{"a":1,"b":"x"}"#).unwrap();
    shredder.append_json(br#"{"a":2,"b":"y"}"#).unwrap();
    let shredded = shredder.finish();
    let schema = Arc::new(Schema::new(vec![variant_field("v", &by_b)]));
    let input = RecordBatch::try_new(schema.clone(), vec![Arc::new(shredded)]).unwrap();
    let options = EncodeOptions {
        shred: ShredMode::Schema(r#"{"a":"int64"}"#.parse().unwrap()),
        ..EncodeOptions::default()
    };
    let mut encoder = BatchEncoder::new(schema, &out, &options).unwrap();
    encoder.write(&input).unwrap();
    let written = encoder.finish().unwrap();
    assert_eq!(layout(&written.columns, "v"), r#"{"a":"int64"}"#);
    assert_eq!(
        lines_of(&out),
        [r#"{"v":{"a":1,"b":"x"}}"#, r#"{"v":{"a":2,"b":"y"}}"#]
    );
}

#[test]
fn shred_none_writes_an_unshredded_column() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let options = EncodeOptions {
        shred: ShredMode::None,
        ..EncodeOptions::default()
    };
    let mut encoder = BatchEncoder::new(schema(), &out, &options).unwrap();
    encoder
        .write(&batch(0..1, variants(&[r#"{"a":1}"#])))
        .unwrap();
    let written = encoder.finish().unwrap();
    assert_eq!(layout(&written.columns, "v"), r#""variant""#);
    assert_eq!(lines_of(&out), [r#"{"id":0,"v":{"a":1}}"#]);
}

#[test]
fn a_bad_variant_is_named_by_row_and_column_and_no_file_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    std::fs::write(&out, b"PAR1, what was there").unwrap();
    let good = variants(&[r#"{"a":1}"#, r#"{"a":2}"#]);
    let metadata = good.column_by_name("metadata").unwrap().clone();
    // Row 1's value is a header byte with no value after it.
    let value: ArrayRef = Arc::new(BinaryArray::from_iter_values([&[0x0c, 1][..], &[0x0c][..]]));
    let bad = StructArray::new(good.fields().clone(), vec![metadata, value], None);
    let options = sampling(1);
    let mut encoder = BatchEncoder::new(schema(), &out, &options).unwrap();
    encoder.write(&batch(0..2, good)).unwrap();
    let err = encoder.write(&batch(2..4, bad)).unwrap_err();
    assert_eq!(err.row(), Some(3), "{err}");
    assert!(err.to_string().contains("in column v"), "{err}");
    drop(encoder);
    assert_eq!(std::fs::read(&out).unwrap(), b"PAR1, what was there");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

#[test]
fn a_batch_of_another_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut encoder = BatchEncoder::new(
        schema(),
        dir.path().join("out.parquet"),
        &EncodeOptions::default(),
    )
    .unwrap();
    let other = Arc::new(Schema::new(vec![variant_field(
        "w",
        &ShreddingSchema::Variant,
    )]));
    let batch = RecordBatch::try_new(other, vec![Arc::new(variants(&["1"])) as ArrayRef]).unwrap();
    let err = encoder.write(&batch).unwrap_err();
    assert!(err.to_string().contains("schema"), "{err}");
}

#[test]
fn batches_that_end_within_the_sample_are_weighed_as_the_whole_file() {
    // 150 rows of four small fields: written whole, the typed columns'
    // footer entries outweigh what they save, and `auto` leaves them
    // unshredded; the same rows as the first 100 sampled of a longer run
    // are weighed without the footer, as a file of many rows, and shred.
    let lines: Vec<String> = (0..150)
        .map(|i| {
            format!(
                r#"{{"n":{},"s":"s-{}","d":{}.{},"nested":{{"a":{}}}}}"#,
                i * 7919 % 1000,
                i * 104_729 % 997,
                100 + i % 89,
                i % 10,
                i % 100
            )
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    let auto = |rows: usize| EncodeOptions {
        shred: ShredMode::Infer(InferOptions::default().with_sample_rows(rows)),
        sample_rows: rows,
        ..EncodeOptions::default()
    };
    let none = EncodeOptions {
        shred: ShredMode::None,
        ..EncodeOptions::default()
    };
    let written = |name: &str, options: &EncodeOptions| {
        let out = dir.path().join(name);
        let mut encoder = BatchEncoder::new(schema(), &out, options).unwrap();
        for (start, chunk) in (0..).step_by(50).zip(lines.chunks(50)) {
            let end = start + chunk.len() as i64;
            encoder.write(&batch(start..end, variants(chunk))).unwrap();
        }
        let written = encoder.finish().unwrap();
        assert_eq!(lines_of(&out).len(), 150);
        (layout(&written.columns, "v"), written.summary.bytes)
    };
    let (whole, whole_bytes) = written("whole.parquet", &auto(4096));
    let (_, none_bytes) = written("none.parquet", &none);
    assert_eq!((whole.as_str(), whole_bytes), ("\"variant\"", none_bytes));
    let (first_rows, _) = written("first.parquet", &auto(100));
    assert!(first_rows.contains("\"nested\""), "{first_rows}");
    // A sample that the input fills exactly is the whole file too.
    let (exact, _) = written("exact.parquet", &auto(150));
    assert_eq!(exact, "\"variant\"");
}

#[test]
fn sql_nulls_are_weighed_with_the_rows_they_fill() {
    // 4,000 rows of which one in five holds a Variant and the rest SQL
    // NULL, ending within the sample: the whole file is weighed, each
    // typed column's levels for the nulls too. Weighed on the 800 values
    // alone, a layout looked smaller that made the file larger.
    let values: Vec<String> = (0..800)
        .map(|i| {
            let tags = ["a", "b", "c"][..i % 4 % 3].join("\",\"");
            format!(
                r#"{{"id":{},"name":"user-{}","score":{}.{:02},"tags":["{tags}"],"nested":{{"a":{},"b":"{}"}}}}"#,
                i * 5,
                i * 7919 % 501,
                i * 31 % 100,
                i * 17 % 100,
                i * 13 % 101,
                ["x", "y", "z"][i % 3]
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let written = |name: &str, shred: ShredMode| {
        let out = dir.path().join(name);
        let options = EncodeOptions {
            shred,
            ..EncodeOptions::default()
        };
        let mut encoder = BatchEncoder::new(schema(), &out, &options).unwrap();
        for (n, chunk) in values.chunks(100).enumerate() {
            // Each value followed by four SQL NULLs.
            let lines: Vec<&str> = chunk
                .iter()
                .flat_map(|v| std::iter::once(v.as_str()).chain(["null"; 4]))
                .collect();
            let (fields, arrays, _) = variants(&lines).into_parts();
            let valid = (0..lines.len()).map(|i| i % 5 == 0).collect::<Vec<_>>();
            let v = StructArray::new(fields, arrays, Some(valid.into()));
            let start = n as i64 * 500;
            encoder.write(&batch(start..start + 500, v)).unwrap();
        }
        encoder.finish().unwrap().summary.bytes
    };
    let auto = written("auto.parquet", ShredMode::Infer(InferOptions::default()));
    let none = written("none.parquet", ShredMode::None);
    assert!(auto <= none, "auto {auto} against unshredded {none}");
}
