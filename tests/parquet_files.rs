//! Writing shredded Variant columns to Parquet and reading them back.

use std::fs::File;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Encoding, LogicalType, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use vshred::parquet::{ColumnSpec, DecimalMode, ParquetWriter, WriteOptions};
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::unshred::ShreddedColumn;

const ROWS: &[&str] = &[
    r#"{"f0":1,"f2":104.8,"nested":{"a":5,"z":"q"},"tags":["x","y"],"extra":true}"#,
    r#"{"f0":"one","f2":3.25,"nested":"flat","tags":[1,null]}"#,
    r#"{"f2":-0.5,"nested":{"a":null}}"#,
    r#"[1,2]"#,
    r#"null"#,
];

fn write(path: &std::path::Path, schema: &ShreddingSchema, decimals: DecimalMode) {
    let columns = [
        ColumnSpec::Plain(Field::new("id", DataType::Int64, false)),
        ColumnSpec::Variant {
            name: "v".into(),
            schema: schema.clone(),
        },
    ];
    let options = WriteOptions {
        decimals,
        row_group_rows: 2,
        ..WriteOptions::default()
    };
    let mut writer = ParquetWriter::create(path, &columns, &options).unwrap();
    let mut shredder = Shredder::new(schema);
    for row in ROWS {
        shredder.append_json(row.as_bytes()).unwrap();
    }
    shredder.append_null();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..ROWS.len() as i64 + 1));
    let batch = RecordBatch::try_new(
        writer.schema().clone(),
        vec![ids, Arc::new(shredder.finish())],
    )
    .unwrap();
    writer.write(&batch).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(summary.rows, ROWS.len() as u64 + 1);
    assert_eq!(summary.row_groups, 3);
}

fn read_json(path: &std::path::Path) -> Vec<String> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let column = batch.column_by_name("v").unwrap().as_struct();
        let variant = ShreddedColumn::try_new(column).unwrap();
        for row in 0..batch.num_rows() {
            let mut out = Vec::new();
            variant.write_json(row, &mut out).unwrap();
            rows.push(String::from_utf8(out).unwrap());
        }
    }
    rows
}

fn expected() -> Vec<String> {
    let mut rows: Vec<String> = ROWS
        .iter()
        .map(|r| {
            let (m, v) = vshred::json::json_to_variant(r.as_bytes()).unwrap();
            vshred::json::variant_to_json_string(
                &vshred::variant::VariantRef::try_new(&m, &v).unwrap(),
            )
        })
        .collect();
    rows.push("null".into());
    rows
}

#[test]
fn shredded_file_reads_back_the_same_values_in_both_decimal_modes() {
    let dir = tempfile::tempdir().unwrap();
    let schema: ShreddingSchema =
        r#"{"f0":"int64","f2":"decimal(9,2)","nested":{"a":"int64"},"tags":["string"]}"#
            .parse()
            .unwrap();
    for mode in [DecimalMode::Int, DecimalMode::Flba] {
        let path = dir.path().join(format!("{mode:?}.parquet"));
        write(&path, &schema, mode);
        assert_eq!(read_json(&path), expected(), "{mode:?}");
        let reader =
            parquet::file::reader::SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let parquet_schema = parquet::file::reader::FileReader::metadata(&reader)
            .file_metadata()
            .schema_descr_ptr();
        let v = &parquet_schema.root_schema().get_fields()[1];
        assert_eq!(
            v.get_basic_info().logical_type_ref(),
            Some(&LogicalType::variant(Some(1)))
        );
        let decimal_leaf = parquet_schema
            .columns()
            .iter()
            .find(|c| c.path().string() == "v.typed_value.f2.typed_value")
            .unwrap();
        let physical = decimal_leaf.physical_type();
        match mode {
            DecimalMode::Int => assert_eq!(physical, PhysicalType::INT32),
            DecimalMode::Flba => {
                assert_eq!(physical, PhysicalType::FIXED_LEN_BYTE_ARRAY);
                assert_eq!(decimal_leaf.type_length(), 4);
            }
        }
    }
}

#[test]
fn unshredded_file_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.parquet");
    write(&path, &ShreddingSchema::Variant, DecimalMode::Int);
    assert_eq!(read_json(&path), expected());
}

#[test]
fn a_writer_dropped_before_finish_leaves_no_file_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.parquet");
    std::fs::write(&path, b"PAR1, old contents").unwrap();
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: ShreddingSchema::Variant,
    }];
    let writer = ParquetWriter::create(&path, &columns, &WriteOptions::default()).unwrap();
    drop(writer);
    assert_eq!(std::fs::read(&path).unwrap(), b"PAR1, old contents");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.parquet"], "no temporary file is left behind");
}

/// 20,000 rows of `{"id", "kind", "session"}`: a sequential id, one of 3
/// kinds and a hashed session key.
fn event_rows() -> Vec<String> {
    (0..20_000)
        .map(|i: u64| {
            format!(
                r#"{{"id": {}, "kind": "k{}", "session": "{:016x}"}}"#,
                1_000_000 + i,
                i % 3,
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            )
        })
        .collect()
}

/// Writes `rows` of `{"id", "session", "kind"}` with the Variant column
/// shredded, the first batch being `first` rows; returns each typed leaf's
/// compressed size and whether it was dictionary-encoded, by field name.
fn write_events(
    path: &std::path::Path,
    first: &[String],
    rows: &[String],
    options: &WriteOptions,
) -> Vec<(String, i64, bool)> {
    let schema: ShreddingSchema = r#"{"id":"int64","kind":"string","session":"string"}"#
        .parse()
        .unwrap();
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: schema.clone(),
    }];
    let mut writer = ParquetWriter::create(path, &columns, options).unwrap();
    for batch in [first, rows] {
        let mut shredder = Shredder::new(&schema);
        for row in batch {
            shredder.append_json(row.as_bytes()).unwrap();
        }
        let batch =
            RecordBatch::try_new(writer.schema().clone(), vec![Arc::new(shredder.finish())])
                .unwrap();
        writer.write(&batch).unwrap();
    }
    writer.finish().unwrap();
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let chunks = reader.metadata().row_group(0).columns().to_vec();
    chunks
        .iter()
        .filter(|c| c.column_path().parts().last().unwrap() == "typed_value")
        .map(|c| {
            let parts = c.column_path().parts();
            (
                parts[parts.len() - 2].clone(),
                c.compressed_size(),
                c.encodings().any(|e| e == Encoding::RLE_DICTIONARY),
            )
        })
        .collect()
}

#[test]
fn mostly_distinct_leaves_are_written_without_a_dictionary() {
    let rows = event_rows();
    let dir = tempfile::tempdir().unwrap();
    let decided = write_events(
        &dir.path().join("a.parquet"),
        &rows[..5000],
        &rows[5000..],
        &WriteOptions::default(),
    );
    assert_eq!(
        decided
            .iter()
            .map(|(n, _, d)| (n.as_str(), *d))
            .collect::<Vec<_>>(),
        [("id", false), ("kind", true), ("session", false)],
        "{decided:?}"
    );
    // The same rows after a first batch with no values: every leaf keeps
    // its dictionary until it overflows, and the unique ones are larger.
    let kept = write_events(
        &dir.path().join("b.parquet"),
        &["{}".into()],
        &rows,
        &WriteOptions::default(),
    );
    assert!(
        kept.iter().all(|(_, _, dictionary)| *dictionary),
        "{kept:?}"
    );
    for ((name, plain, _), (_, dictionary, _)) in decided.iter().zip(&kept) {
        if name != "kind" {
            assert!(plain < dictionary, "{name}: {plain} >= {dictionary}");
        }
    }
}

#[test]
fn residuals_of_distinct_values_are_plain_and_repeated_ones_keep_their_dictionary() {
    let variant = ShreddingSchema::Variant;
    let distinct = dictionary_encoded(&variant, &|i| {
        format!(r#"{{"at": [{}.5, {}.25]}}"#, i, i * 7)
    });
    assert_eq!(
        distinct,
        [
            ("v.metadata".to_string(), true),
            ("v.value".to_string(), false)
        ]
    );
    let repeated = dictionary_encoded(&variant, &|i| format!(r#"{{"kind": "k{}"}}"#, i % 5));
    assert_eq!(
        repeated,
        [
            ("v.metadata".to_string(), true),
            ("v.value".to_string(), true)
        ]
    );
}

#[test]
fn residuals_with_no_values_in_the_first_batch_have_no_dictionary() {
    let schema: ShreddingSchema = r#"{"kind": "string", "n": "int64"}"#.parse().unwrap();
    let leaves = dictionary_encoded(&schema, &|i| {
        format!(r#"{{"kind": "k{}", "n": {}}}"#, i % 5, i % 7)
    });
    assert_eq!(
        leaves,
        [
            ("v.metadata".to_string(), true),
            ("v.value".to_string(), false),
            ("v.typed_value.kind.value".to_string(), false),
            ("v.typed_value.kind.typed_value".to_string(), true),
            ("v.typed_value.n.value".to_string(), false),
            ("v.typed_value.n.typed_value".to_string(), true),
        ]
    );
}

#[test]
fn variant_metadata_has_no_statistics_and_every_other_leaf_counts_its_nulls() {
    let schema: ShreddingSchema = r#"{"n": "int64"}"#.parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.parquet");
    let rows = (0..100).map(|i| {
        if i % 4 == 0 {
            r#"{"n": "x"}"#.to_string()
        } else {
            format!(r#"{{"n": {i}}}"#)
        }
    });
    write_one_batch(&path, &schema, rows);
    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    let nulls: Vec<(String, Option<u64>)> = reader
        .metadata()
        .row_group(0)
        .columns()
        .iter()
        .map(|c| {
            let nulls = c.statistics().and_then(|s| s.null_count_opt());
            (c.column_path().string(), nulls)
        })
        .collect();
    let expected = [
        ("v.metadata", None),
        ("v.value", Some(100)),
        ("v.typed_value.n.value", Some(75)),
        ("v.typed_value.n.typed_value", Some(25)),
    ];
    assert_eq!(
        nulls,
        expected.map(|(path, nulls)| (path.to_string(), nulls))
    );
    // The typed share, which report prints, is still known.
    let file = vshred::parquet::ParquetFile::open(&path).unwrap();
    let typed = vshred::parquet::TypedValues::of_leaves(&file.leaf_sizes()).unwrap();
    assert_eq!((typed.typed, typed.residual), (75, 25));
}

/// Writes `rows` as one Variant column `v` shredded by `schema`, in one
/// batch, with the default options.
fn write_one_batch(
    path: &std::path::Path,
    schema: &ShreddingSchema,
    rows: impl IntoIterator<Item = String>,
) {
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: schema.clone(),
    }];
    let mut writer = ParquetWriter::create(path, &columns, &WriteOptions::default()).unwrap();
    let mut shredder = Shredder::new(schema);
    for row in rows {
        shredder.append_json(row.as_bytes()).unwrap();
    }
    let batch =
        RecordBatch::try_new(writer.schema().clone(), vec![Arc::new(shredder.finish())]).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
}

/// Each leaf of `rows(0..20_000)` shredded by `schema` and written in one
/// batch, and whether it is dictionary-encoded.
fn dictionary_encoded(
    schema: &ShreddingSchema,
    rows: &dyn Fn(usize) -> String,
) -> Vec<(String, bool)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.parquet");
    write_one_batch(&path, schema, (0..20_000).map(rows));
    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    reader
        .metadata()
        .row_group(0)
        .columns()
        .iter()
        .map(|c| {
            let dictionary = c.encodings().any(|e| e == Encoding::RLE_DICTIONARY);
            (c.column_path().string(), dictionary)
        })
        .collect()
}

#[test]
fn leaves_are_encoded_as_inference_priced_them_whatever_the_first_batch_holds() {
    use vshred::infer::LeafEncoding;
    let rows = event_rows();
    let leaf = |field: &str| {
        ["v", "typed_value", field, "typed_value"]
            .map(String::from)
            .to_vec()
    };
    // The opposite of what the first rows call for.
    let options = WriteOptions {
        leaf_encodings: vec![
            (leaf("id"), LeafEncoding::Dictionary),
            (leaf("kind"), LeafEncoding::Plain),
        ],
        ..WriteOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let priced = write_events(
        &dir.path().join("a.parquet"),
        &rows[..5000],
        &rows[5000..],
        &options,
    );
    assert_eq!(
        priced
            .iter()
            .map(|(n, _, d)| (n.as_str(), *d))
            .collect::<Vec<_>>(),
        [("id", true), ("kind", false), ("session", false)],
        "{priced:?}"
    );
}

#[test]
fn mostly_distinct_integers_and_prefixed_strings_are_deltas_in_ordinary_and_variant_columns() {
    let schema: ShreddingSchema = r#"{"n":"int64","k":"int64","s":"string","c":"string"}"#
        .parse()
        .unwrap();
    let columns = [
        ColumnSpec::Plain(Field::new("id", DataType::Int64, false)),
        ColumnSpec::Plain(Field::new("bucket", DataType::Int64, false)),
        ColumnSpec::Plain(Field::new("key", DataType::Utf8, false)),
        ColumnSpec::Plain(Field::new("page", DataType::Utf8, false)),
        ColumnSpec::Variant {
            name: "v".into(),
            schema: schema.clone(),
        },
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deltas.parquet");
    let mut writer = ParquetWriter::create(&path, &columns, &WriteOptions::default()).unwrap();
    let rows = 10_000i64;
    let mut shredder = Shredder::new(&schema);
    for i in 0..rows {
        let text = format!(
            r#"{{"n": {}, "k": {}, "s": "session-{:08}", "c": "kind-{}"}}"#,
            i * 7,
            i % 5,
            i * 31,
            i % 3
        );
        shredder.append_json(text.as_bytes()).unwrap();
    }
    let batch = RecordBatch::try_new(
        writer.schema().clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef,
            Arc::new(Int64Array::from_iter_values((0..rows).map(|i| i % 4))),
            // Hashed, without shared prefixes: plain. Pages (and the
            // Variant's `s`) share their neighbours' prefixes: deltas.
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|i| format!("{:x}", i * 2654435761 % 1_000_003)),
            )),
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|i| format!("/catalog/items/{:07}", i * 13)),
            )),
            Arc::new(shredder.finish()),
        ],
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
    let encodings: Vec<(String, Option<Encoding>, bool)> = reader
        .metadata()
        .row_group(0)
        .columns()
        .iter()
        .filter(|c| {
            let path = c.column_path().string();
            !path.starts_with("v.") || path.ends_with(".typed_value")
        })
        .map(|c| {
            let delta = [Encoding::DELTA_BINARY_PACKED, Encoding::DELTA_BYTE_ARRAY]
                .into_iter()
                .find(|&d| c.encodings().any(|x| x == d));
            let dictionary = c.encodings().any(|x| x == Encoding::RLE_DICTIONARY);
            (c.column_path().string(), delta, dictionary)
        })
        .collect();
    let expected = [
        ("id", Some(Encoding::DELTA_BINARY_PACKED), false),
        ("bucket", None, true),
        ("key", None, false),
        ("page", Some(Encoding::DELTA_BYTE_ARRAY), false),
        ("v.typed_value.c.typed_value", None, true),
        ("v.typed_value.k.typed_value", None, true),
        (
            "v.typed_value.n.typed_value",
            Some(Encoding::DELTA_BINARY_PACKED),
            false,
        ),
        (
            "v.typed_value.s.typed_value",
            Some(Encoding::DELTA_BYTE_ARRAY),
            false,
        ),
    ];
    assert_eq!(
        encodings
            .iter()
            .map(|(p, d, r)| (p.as_str(), *d, *r))
            .collect::<Vec<_>>(),
        expected
    );
    // And they read back as written.
    let read: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
    let read = arrow::compute::concat_batches(&read[0].schema(), &read).unwrap();
    for (i, written) in batch.columns().iter().enumerate() {
        assert_eq!(read.column(i).to_data(), written.to_data(), "column {i}");
    }
}

/// The rows of the file at `path` as `vshred cat` prints them.
fn json_lines(path: &std::path::Path) -> String {
    let mut text = Vec::new();
    let file = vshred::parquet::ParquetFile::open(path).unwrap();
    file.json_lines(None, &vshred::parquet::ScanOptions::new(5), |chunk| {
        text.extend_from_slice(&chunk);
        Ok(())
    })
    .unwrap();
    String::from_utf8(text).unwrap()
}

/// An object `depth` levels deep: `{"a":{"a":...1...}}`.
fn nested_objects(depth: usize) -> String {
    "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth) + "\n"
}

#[test]
fn a_layout_too_deep_to_embed_as_an_arrow_schema_is_written_without_one_and_reads_back() {
    use vshred::encode::{EncodeOptions, ShredMode, encode};
    use vshred::infer::{InferOptions, Preset};
    // Shredded 40 deep, the Arrow schema nests 80 structs: past the 64
    // levels the parquet crate's flatbuffer verifier allows its hint.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deep.parquet");
    let text = nested_objects(40);
    let options = EncodeOptions {
        shred: ShredMode::Infer(InferOptions::new(Preset::Spark)),
        ..EncodeOptions::default()
    };
    let report = encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap();
    let ColumnSpec::Variant { schema, .. } = &report.columns[0] else {
        panic!("a Variant column")
    };
    assert!(
        schema.to_string().contains(r#"{"a":{"a":{"a":"#),
        "{schema}"
    );
    // Any reader built on the parquet crate opens it ...
    ParquetRecordBatchReaderBuilder::try_new(File::open(&out).unwrap()).unwrap();
    // ... and it reads back.
    let expected = format!("{{\"v\":{}}}\n", text.trim_end());
    assert_eq!(json_lines(&out), expected);
}

#[test]
fn a_file_whose_embedded_arrow_schema_does_not_verify_is_read_by_its_parquet_schema() {
    // A debug build's frames need more than a test thread's 2 MiB for a
    // schema 64 deep.
    let test = std::thread::Builder::new().stack_size(64 << 20).spawn(|| {
        use parquet::arrow::ArrowWriter;
        // The parquet crate's own writer embeds the hint of a struct 64 deep,
        // which its reader then refuses to open; ours reads the file.
        let mut array: ArrayRef = Arc::new(Int64Array::from(vec![7, 8]));
        for _ in 0..64 {
            let field = Arc::new(Field::new("a", array.data_type().clone(), true));
            array = Arc::new(arrow::array::StructArray::from(vec![(field, array)]));
        }
        let batch = RecordBatch::try_from_iter([("s", array)]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep-hint.parquet");
        let mut writer =
            ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        assert!(ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).is_err());
        let text = json_lines(&path);
        assert_eq!(text.lines().count(), 2);
        assert!(
            text.starts_with(&format!("{{\"s\":{}7", "{\"a\":".repeat(64))),
            "{text}"
        );
    });
    test.unwrap().join().unwrap();
}

/// Variant bytes that are not a valid Variant are refused by the writer,
/// naming the column and the row, and nothing is written: the file was
/// written, and no reader could read it back.
#[test]
fn the_writer_refuses_invalid_variant_bytes_naming_the_column_and_row() {
    use arrow::array::{BinaryArray, StructArray};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.parquet");
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: ShreddingSchema::Variant,
    }];
    let mut writer = ParquetWriter::create(&path, &columns, &WriteOptions::default()).unwrap();
    let DataType::Struct(fields) = writer.schema().field(0).data_type().clone() else {
        panic!("a Variant column is a struct");
    };
    let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![&[1u8, 0, 0][..]; 2]));
    // An int8 and then a decimal4 with its bytes missing.
    let value: ArrayRef = Arc::new(BinaryArray::from(vec![&[3u8 << 2, 7][..], &[8 << 2][..]]));
    let column = StructArray::new(fields, vec![metadata, value], None);
    let batch = RecordBatch::try_new(writer.schema().clone(), vec![Arc::new(column)]).unwrap();
    let e = writer.write(&batch).unwrap_err();
    assert_eq!(e.row(), Some(1), "{e}");
    assert!(
        e.to_string().contains("in Variant column v; not written"),
        "{e}"
    );
    drop(writer);
    assert!(!path.exists());
}

/// A batch size of 0 reads batches of one row, as `get` does (it read no
/// rows at all, without a word).
#[test]
fn batches_of_size_zero_read_every_row_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.parquet");
    write(&path, &ShreddingSchema::Variant, DecimalMode::Int);
    let file = vshred::parquet::ParquetFile::open(&path).unwrap();
    let sizes: Vec<usize> = file
        .batches(0)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .collect();
    assert_eq!(sizes, vec![1; ROWS.len() + 1]);
}

/// Two columns of one name are refused: the rows read back as objects
/// with a name twice, which no JSON reader takes.
#[test]
fn two_columns_of_one_name_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let columns = [
        ColumnSpec::Plain(Field::new("id", DataType::Int64, false)),
        ColumnSpec::Plain(Field::new("id", DataType::Utf8, true)),
    ];
    let e = ParquetWriter::create(
        dir.path().join("twice.parquet"),
        &columns,
        &WriteOptions::default(),
    )
    .err()
    .expect("refused");
    assert!(e.to_string().contains("two columns are named id"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// A row group is written out once it holds `row_group_bytes`, whatever
/// its rows: rows of long texts held a whole row group of them in memory
/// (10 kB rows: 1.2 GB at the default 131,072 rows).
#[test]
fn a_row_group_is_cut_at_its_bytes_before_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    // Letters that do not compress away.
    let mut seed = 1u64;
    let mut letters = |n: usize| -> String {
        (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b'a' + (seed >> 59) as u8 % 26)
            })
            .collect()
    };
    let text: String = (0..200)
        .map(|i| format!("{{\"id\":{i},\"body\":\"{}\"}}\n", letters(20_000)))
        .collect();
    let row_groups = |bytes: usize| {
        let path = dir.path().join(format!("cut-{bytes}.parquet"));
        let options = vshred::encode::EncodeOptions {
            write: WriteOptions {
                row_group_bytes: bytes,
                ..WriteOptions::default()
            },
            batch_rows: 10,
            sample_rows: 10,
            shred: vshred::encode::ShredMode::Schema(
                r#"{"id":"int64","body":"string"}"#.parse().unwrap(),
            ),
            ..vshred::encode::EncodeOptions::default()
        };
        vshred::encode::encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
        let file = vshred::parquet::ParquetFile::open(&path).unwrap();
        assert_eq!(file.metadata().file_metadata().num_rows(), 200);
        file.metadata().num_row_groups()
    };
    assert_eq!(row_groups(WriteOptions::default().row_group_bytes), 1);
    // 200 rows of 20 kB, 4 MB before compression: cut at 1 MB, about 4.
    let cut = row_groups(1 << 20);
    assert!((3..=8).contains(&cut), "{cut} row groups");
}

/// A Variant column's values counted as arrays, before writing, are what
/// its file's statistics count: values under a null object, list or row,
/// or in an empty list, are not counted.
#[test]
fn typed_values_counted_on_arrays_are_those_of_the_written_file() {
    let schema: ShreddingSchema =
        r#"{"f0":"int64","nested":{"a":"int64"},"tags":["string"],"items":[{"k":"int64"}]}"#
            .parse()
            .unwrap();
    let rows = ROWS.iter().map(|r| r.to_string()).chain([
        r#"{"items":[{"k":1},{"k":"x"},null,{}],"tags":[]}"#.to_string(),
        r#"{"items":null,"nested":null,"tags":["a","b","c"]}"#.to_string(),
        r#"{"items":[],"f0":null}"#.to_string(),
    ]);
    let rows: Vec<String> = rows.collect();
    let mut shredder = Shredder::new(&schema);
    for row in &rows {
        shredder.append_json(row.as_bytes()).unwrap();
    }
    shredder.append_null();
    let column = shredder.finish();
    let counted = vshred::parquet::TypedValues::of_variant_arrays([&column]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.parquet");
    write_one_batch(&path, &schema, rows.iter().cloned());
    let file = vshred::parquet::ParquetFile::open(&path).unwrap();
    let written = vshred::parquet::TypedValues::of_leaves(&file.leaf_sizes()).unwrap();
    // The file has no SQL NULL row: the array's last row is one, and adds
    // nothing.
    assert_eq!(counted, written);
    assert!(counted.typed > 0 && counted.residual > 0, "{counted:?}");
    // A slice, whose lists' offsets do not start at 0, counts its rows.
    let sliced = column.slice(1, column.len() - 2);
    let path = dir.path().join("sliced.parquet");
    write_one_batch(&path, &schema, rows[1..].iter().cloned());
    let file = vshred::parquet::ParquetFile::open(&path).unwrap();
    let written = vshred::parquet::TypedValues::of_leaves(&file.leaf_sizes()).unwrap();
    assert_eq!(
        vshred::parquet::TypedValues::of_variant_arrays([&sliced]),
        written
    );
}
