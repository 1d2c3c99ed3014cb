//! Corrupt or truncated Parquet files: every read path returns an error,
//! never panics.

use std::path::Path;

use arrow::array::Array;

use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::infer::{InferOptions, Preset};
use vshred::parquet::{GetRequest, ParquetFile};
use vshred::shred::ShreddingSchema;
use vshred::unshred::ShreddedColumn;

/// Reads everything the command line would: schema, every row, one path.
fn read_all(path: &Path) -> vshred::Result<()> {
    let file = ParquetFile::open(path)?;
    let variants = file.variant_columns();
    for batch in file.batches(64)? {
        let batch = batch?;
        for name in &variants {
            if let Some(column) = batch
                .column_by_name(name)
                .and_then(|c| arrow::array::AsArray::as_struct_opt(c.as_ref()).cloned())
            {
                let reader = ShreddedColumn::try_new(&column)?;
                let mut out = Vec::new();
                for row in 0..column.len() {
                    out.clear();
                    reader.write_json(row, &mut out)?;
                }
            }
        }
    }
    if let Some(column) = variants.first() {
        let request = GetRequest {
            column: column.clone(),
            path: "$.user.id".parse()?,
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: Some("$.id > 2".parse()?),
        };
        file.get(&request, 64, |_| Ok(()))?;
    }
    Ok(())
}

#[test]
fn mutated_and_truncated_files_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("events.parquet");
    let events = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/events.jsonl"
    ))
    .unwrap();
    let options = EncodeOptions {
        shred: ShredMode::Infer(InferOptions::new(Preset::Spark)),
        ..EncodeOptions::default()
    };
    encode(&mut &events[..], &source, &options, &mut |_| {}).unwrap();
    let good = std::fs::read(&source).unwrap();
    read_all(&source).expect("the original reads");
    let target = dir.path().join("mutated.parquet");
    let mut panics = Vec::new();
    let mut errors = 0;
    // Truncations and flipped bytes (3 patterns) across the whole file, in
    // steps that keep the test to a few thousand reads.
    let mut cases: Vec<Vec<u8>> = (0..good.len())
        .step_by(37)
        .map(|n| good[..n].to_vec())
        .collect();
    for at in (0..good.len()).step_by(13) {
        for pattern in [0xFFu8, 0x80, 0x01] {
            let mut bytes = good.clone();
            bytes[at] ^= pattern;
            cases.push(bytes);
        }
    }
    for (i, bytes) in cases.iter().enumerate() {
        std::fs::write(&target, bytes).unwrap();
        match std::panic::catch_unwind(|| read_all(&target)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                errors += 1;
                assert!(!e.to_string().is_empty());
            }
            Err(_) => panics.push(i),
        }
    }
    assert!(errors > 0, "some mutations must be detected");
    assert!(
        panics.is_empty(),
        "{} of {} cases panicked, e.g. case {}",
        panics.len(),
        cases.len(),
        panics[0]
    );
}

/// A file cut short after it was opened (copied over, or truncated, as
/// it was read) is an error naming the row group it could not read, where
/// it said "reading: EOF: ...".
#[test]
fn a_file_cut_short_while_read_names_the_row_group() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.parquet");
    let text: String = (0..3000)
        .map(|i| format!("{{\"id\":{i},\"s\":\"s{}\"}}\n", i * 7919 % 3001))
        .collect();
    let options = EncodeOptions {
        write: vshred::parquet::WriteOptions {
            row_group_rows: 1000,
            ..Default::default()
        },
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let second = file.metadata().row_group(1).columns()[0].byte_range().0;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(second)
        .unwrap();
    let e = file
        .batches(64)
        .unwrap()
        .find_map(Result::err)
        .expect("the second row group is gone");
    assert!(e.to_string().contains("reading row group 1: "), "{e}");
}

/// Found by the `parquet_file` fuzz target (`fuzz/README.md`), each still
/// an error:
/// - a page header whose unknown field is a list of about two billion
///   elements, running past the end of the file: the parquet crate's Thrift
///   reader skips it element by element on empty reads (40 s for this
///   872-byte file, unbounded with nested lists) unless the reader stops
///   at the end of the file;
/// - a footer whose skipped fields make that reader loop (0.8 s in release
///   for 2 KB) before it reports a missing field; the time is the parquet
///   crate's;
/// - a row group of -3 rows, which the parquet crate adds to the others
///   as a `usize` (an overflow panic with overflow checks, a wrong count
///   without).
#[test]
fn files_the_fuzzer_and_byte_flips_found_are_errors() {
    for (file, message) in [
        (
            "page-header-list-past-eof.parquet",
            "reading row group 0, column \"var.metadata\": External: a page header runs past the end of its column chunk",
        ),
        // Where in the file: the parquet crate's message names no place.
        (
            "footer-long-list-of-skipped-fields.parquet",
            "its footer (bytes 166 to 2044 of 2052): Required field codec is missing",
        ),
        ("negative-row-count.parquet", "row group 0 claims -3 rows"),
        // Three bytes flipped in a page of an uncompressed file: the
        // parquet crate's "Not all children array length are the same!"
        // says what differs, not what it means here.
        (
            "columns-of-a-group-disagreeing.parquet",
            "reading row group 0: the columns of a group read as different numbers of values (a damaged page",
        ),
        // Found by a probe: a footer whose row group says 1 row over
        // chunks of 3 values was read as 3 rows unfiltered, 1 when a
        // filter read statistics.
        (
            "row-count-below-values.parquet",
            "row group 0, column \"v.metadata\": 3 values for 1 rows",
        ),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/corrupt")
            .join(file);
        let error = read_all(&path).expect_err("the file is corrupt");
        assert!(error.to_string().contains(message), "{file}: {error}");
    }
}

/// Found by the `parquet_file` fuzz target: a column index of page
/// locations alone, without bounds (`ColumnIndexMetaData::NONE`), whose
/// accessors the parquet crate panics on. A filter on that leaf prunes no
/// page, and the rows read as they are.
#[test]
fn a_page_index_without_bounds_prunes_nothing() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/corrupt/page-index-without-bounds.parquet");
    let file = ParquetFile::open(&path).unwrap();
    let request = GetRequest {
        column: "var".into(),
        path: "$".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: Some("$ < 5".parse().unwrap()),
    };
    let mut values = Vec::new();
    file.get(&request, 64, |batch| {
        values.push(batch.clone());
        Ok(())
    })
    .unwrap();
    let values: Vec<Option<i64>> = values
        .iter()
        .flat_map(|v| {
            arrow::array::AsArray::as_primitive::<arrow::datatypes::Int64Type>(v.as_ref())
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(values, [Some(-1234)]);
}

/// Found by the `parquet_file` fuzz target: an offset index whose page
/// locations overflow when added up. The pages a filter keeps are read
/// ahead by their locations, which must then not be added (the parquet
/// crate's `scan_ranges` adds them unchecked): the reader reports them.
#[test]
fn an_overflowing_offset_index_is_an_error() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/corrupt/offset-index-overflowing.parquet");
    let file = ParquetFile::open(&path).unwrap();
    let request = GetRequest {
        column: "v".into(),
        path: "$".parse().unwrap(),
        as_type: ShreddingSchema::Variant,
        strict: false,
        filter: Some("$.id > 2".parse().unwrap()),
    };
    let error = file.get(&request, 64, |_| Ok(())).unwrap_err().to_string();
    assert!(
        error.contains("offset-index-overflowing.parquet") && error.contains("Integer overflow"),
        "{error}"
    );
}

/// The parquet crate reserves what a page header declares before it reads
/// the page (apache/arrow-rs#10734): up to 2 GB a page, from a damaged
/// header. Each file is a good one with one varint of a dictionary page's
/// header raised, still the same length: its uncompressed size to 1 MB
/// (the crate allocated it, then found the size wrong), or its value count
/// to 8,127 (the crate read the file as if it were sound). Both are
/// refused before the crate reads the page, by whole reads and by a
/// filter's reads through the offset index, naming the column and byte.
#[test]
fn page_headers_past_their_footers_bounds_are_refused() {
    let chunk = "row group 0, column \"v.typed_value.s.typed_value\": the page header at byte 230";
    for (file, declares) in [
        (
            "page-header-declares-more-than-its-chunk.parquet",
            "declares 1040319 bytes uncompressed, where its column chunk holds 18802",
        ),
        (
            "dictionary-page-header-declares-too-many-values.parquet",
            "declares a dictionary of 8127 values in 15000 bytes",
        ),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/corrupt")
            .join(file);
        let whole = read_all(&path)
            .expect_err("the file is corrupt")
            .to_string();
        let request = GetRequest {
            column: "v".into(),
            path: "$.s".parse().unwrap(),
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: Some(r#"$.s = "value-00007""#.parse().unwrap()),
        };
        let file_ = ParquetFile::open(&path).unwrap();
        let filtered = file_.get(&request, 64, |_| Ok(())).unwrap_err().to_string();
        for error in [whole, filtered] {
            assert!(
                error.contains(file) && error.contains(chunk) && error.contains(declares),
                "{file}: {error}"
            );
        }
    }
}

/// An `ARROW:schema` hint whose field has no type (NONE): arrow-ipc 59
/// panics converting it, so the hint is dropped and the file read with the
/// types of its Parquet schema.
#[test]
fn a_malformed_arrow_schema_hint_is_ignored() {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow_ipc::{FieldBuilder, MessageBuilder, MessageHeader, MetadataVersion, SchemaBuilder};
    use base64::Engine;
    use parquet::arrow::{ArrowWriter, arrow_writer::ArrowWriterOptions};
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let name = fbb.create_string("id");
    let mut field = FieldBuilder::new(&mut fbb);
    field.add_name(name);
    field.add_nullable(true);
    let field = field.finish();
    let fields = fbb.create_vector(&[field]);
    let mut schema = SchemaBuilder::new(&mut fbb);
    schema.add_fields(fields);
    let schema = schema.finish();
    let mut message = MessageBuilder::new(&mut fbb);
    message.add_version(MetadataVersion::V5);
    message.add_header_type(MessageHeader::Schema);
    message.add_header(schema.as_union_value());
    let message = message.finish();
    fbb.finish(message, None);
    let hint = base64::engine::general_purpose::STANDARD.encode(fbb.finished_data());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hinted.parquet");
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    let properties = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new("ARROW:schema".into(), hint)]))
        .build();
    let options = ArrowWriterOptions::new()
        .with_properties(properties)
        .with_skip_arrow_metadata(true);
    let mut writer = ArrowWriter::try_new_with_options(
        std::fs::File::create(&path).unwrap(),
        schema.clone(),
        options,
    )
    .unwrap();
    let ids = Int64Array::from(vec![1, 2, 3]);
    writer
        .write(&RecordBatch::try_new(schema, vec![Arc::new(ids)]).unwrap())
        .unwrap();
    writer.close().unwrap();

    let file = ParquetFile::open(&path).expect("the file opens");
    assert_eq!(file.arrow_schema().field(0).data_type(), &DataType::Int64);
    read_all(&path).expect("the file reads");
}

/// Writes `column` as the file's one column, `v`, with the parquet crate.
fn write_column(path: &Path, column: arrow::array::StructArray) {
    use std::sync::Arc;

    use arrow::array::RecordBatch;
    use arrow::datatypes::{Field, Schema};
    use parquet::arrow::ArrowWriter;

    let schema = Arc::new(Schema::new(vec![Field::new(
        "v",
        column.data_type().clone(),
        true,
    )]));
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema.clone(), None).unwrap();
    writer
        .write(&RecordBatch::try_new(schema, vec![Arc::new(column)]).unwrap())
        .unwrap();
    writer.close().unwrap();
}

/// A Variant value that is not valid, read from a file by path, is an
/// error naming the file (with its row and path), as a dataset's read
/// names it.
#[test]
fn an_invalid_variant_in_a_file_is_an_error_naming_the_file() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, StructArray};
    use arrow::datatypes::{DataType, Field};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("invalid.parquet");
    let fields = vec![
        Field::new("metadata", DataType::Binary, false),
        Field::new("value", DataType::Binary, true),
    ];
    let metadata: ArrayRef = Arc::new(BinaryArray::from(vec![&[1u8, 0, 0][..]; 2]));
    // An int8, then a decimal4 without its bytes.
    let value: ArrayRef = Arc::new(BinaryArray::from(vec![&[3u8 << 2, 7][..], &[8 << 2][..]]));
    let column = StructArray::new(fields.into(), vec![metadata, value], None);
    write_column(&path, column);

    let file = ParquetFile::open(&path).unwrap();
    let request = GetRequest {
        column: "v".into(),
        path: "$".parse().unwrap(),
        as_type: ShreddingSchema::Variant,
        strict: false,
        filter: None,
    };
    let e = file.get(&request, 64, |_| Ok(())).unwrap_err();
    assert_eq!(e.file(), Some(path.as_path()), "{e}");
    assert_eq!(e.row(), Some(1), "{e}");
}

/// A shredded field's group whose `typed_value` is misnamed (one flipped
/// bit in a footer can do it) was read as if the field were missing from
/// every row: the file is refused, naming the stray column.
#[test]
fn a_shredded_group_with_a_stray_child_is_an_error_naming_it() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, Int64Array, StructArray};
    use arrow::datatypes::{DataType, Field};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stray.parquet");
    let binary = |values: Vec<Option<&[u8]>>| Arc::new(BinaryArray::from(values)) as ArrayRef;
    // Field `a`'s int64 stored under `typed_valu`.
    let field_a = StructArray::from(vec![
        (
            Arc::new(Field::new("value", DataType::Binary, true)),
            binary(vec![None]),
        ),
        (
            Arc::new(Field::new("typed_valu", DataType::Int64, true)),
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
        ),
    ]);
    let typed = StructArray::from(vec![(
        Arc::new(Field::new("a", field_a.data_type().clone(), false)),
        Arc::new(field_a) as ArrayRef,
    )]);
    let column = StructArray::from(vec![
        (
            Arc::new(Field::new("metadata", DataType::Binary, false)),
            binary(vec![Some(&[1u8, 1, 0, 1, b'a'][..])]),
        ),
        (
            Arc::new(Field::new("value", DataType::Binary, true)),
            binary(vec![None]),
        ),
        (
            Arc::new(Field::new("typed_value", typed.data_type().clone(), true)),
            Arc::new(typed) as ArrayRef,
        ),
    ]);
    write_column(&path, column);

    let Err(e) = ParquetFile::open(&path) else {
        panic!("the file is refused")
    };
    assert_eq!(e.file(), Some(path.as_path()), "{e}");
    assert!(
        e.to_string()
            .contains("v.typed_value.a.typed_valu is not a part of a shredded Variant"),
        "{e}"
    );
}

/// Spark stores each page's CRC: a flipped bit in a page is an error, not
/// a value read otherwise (here a field left out of every row).
#[test]
fn a_page_whose_checksum_fails_is_an_error() {
    let spark =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/datasets/engines/spark.parquet");
    let mut bytes = std::fs::read(&spark).unwrap();
    read_all(&spark).expect("the original reads");
    bytes[472] ^= 0x10;
    let dir = tempfile::tempdir().unwrap();
    let flipped = dir.path().join("flipped.parquet");
    std::fs::write(&flipped, &bytes).unwrap();
    let e = read_all(&flipped).expect_err("the page's checksum fails");
    assert!(
        e.to_string()
            .contains("Parquet error: reading row group 0, column \"v.typed_value.n.value\": Page CRC checksum mismatch"),
        "{e}"
    );
    assert_eq!(e.file(), Some(flipped.as_path()), "{e}");
}

/// A footer whose min is above its max (one random byte in Spark's
/// statistics) ruled out the row group holding every answer: such bounds
/// rule nothing out.
#[test]
fn statistics_whose_min_is_above_their_max_rule_nothing_out() {
    let count = |name: &str| {
        let file = ParquetFile::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap();
        let request = GetRequest {
            column: "v".into(),
            path: "$.price".parse().unwrap(),
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: Some("$.price < 20".parse().unwrap()),
        };
        let mut rows = 0;
        let stats = file
            .get(&request, 64, |values| {
                rows += values.len();
                Ok(())
            })
            .unwrap();
        (rows, stats.skipped_by_statistics)
    };
    let original = count("testdata/datasets/engines/spark.parquet");
    assert_eq!(original, (10, 0));
    assert_eq!(
        count("testdata/corrupt/statistics-min-above-max.parquet"),
        original
    );
}

/// A directory given as a file is named as one, not as a file that does
/// not start with Parquet's magic bytes.
#[test]
fn a_directory_opened_as_a_file_is_named_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let e = ParquetFile::open(dir.path()).unwrap_err();
    assert_eq!(e.file(), Some(dir.path()), "{e}");
    assert!(e.to_string().contains("is a directory"), "{e}");
}

/// A valid file whose page data reads as a page header that declares too
/// much is read: the parquet crate peeks at a list column's next page
/// header, then reads from the page's data through the same call, and only
/// where a header starts for certain is one checked (found by a review:
/// this file was refused). The second page's repetition levels, packed
/// uncompressed into a V2 page, begin with the bytes of the damaged header
/// above (`15 .. fe fe 7e`).
#[test]
fn page_data_that_reads_as_a_header_is_not_checked_as_one() {
    use arrow::array::{Int32Array, Int64Array, ListArray, RecordBatch};
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use std::sync::Arc;

    let element = Arc::new(Field::new("item", DataType::Int32, false));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("l", DataType::List(element.clone()), false),
    ]));
    let batch = |lengths: &[usize], first_id: i64| {
        let values: usize = lengths.iter().sum();
        let list = ListArray::new(
            element.clone(),
            OffsetBuffer::from_lengths(lengths.iter().copied()),
            Arc::new(Int32Array::from_iter_values(0..values as i32)),
            None,
        );
        let ids = Int64Array::from_iter_values((0..lengths.len() as i64).map(|i| i + first_id));
        RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(list)]).unwrap()
    };
    // Repetition levels whose bit-packed run is these bytes.
    let mut packed = vec![0xfe, 0xfe, 0x7e, 0x15, 0x02];
    packed.extend([0x11; 13]);
    let mut levels: Vec<u8> = packed
        .iter()
        .flat_map(|b| (0..8).map(move |i| (b >> i) & 1))
        .collect();
    levels.extend([0; 9]);
    levels.extend([1, 0, 1, 1, 0, 1]);
    let mut lengths: Vec<usize> = Vec::new();
    for level in levels {
        match (level, lengths.last_mut()) {
            (1, Some(last)) => *last += 1,
            _ => lengths.push(1),
        }
    }
    let properties = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_compression(parquet::basic::Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .set_data_page_row_count_limit(3)
        .set_write_batch_size(100_000)
        .build();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lists.parquet");
    let out = std::fs::File::create(&path).unwrap();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(properties)).unwrap();
    writer.write(&batch(&[2, 3, 1], 0)).unwrap();
    writer.write(&batch(&lengths, 3)).unwrap();
    writer.close().unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let mut rows = 0;
    for batch in file.batches(1024).unwrap() {
        rows += batch.unwrap().num_rows();
    }
    assert_eq!(rows, 3 + lengths.len());
}

/// A page that does not decode is named by its column: the parquet
/// crate's errors name none, and a reader reads every leaf of a row group
/// at once, so each is read again alone to find it. Here the middle of a
/// string leaf's compressed data page is zeroed.
#[test]
fn a_page_that_does_not_decode_is_named_by_its_column() {
    use parquet::file::reader::{FileReader, SerializedFileReader};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.parquet");
    let text: String = (0..3000)
        .map(|i| format!("{{\"id\":{i},\"s\":\"value-{:05}\"}}\n", i * 7 % 3000))
        .collect();
    let options = EncodeOptions {
        shred: ShredMode::Schema(r#"{"id":"int64","s":"string"}"#.parse().unwrap()),
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let footer = SerializedFileReader::new(bytes::Bytes::from(bytes.clone())).unwrap();
    let chunk = footer
        .metadata()
        .row_group(0)
        .columns()
        .iter()
        .find(|c| c.column_path().string() == "v.typed_value.s.typed_value")
        .unwrap()
        .clone();
    let data = chunk.data_page_offset() as usize;
    let end = (chunk.byte_range().0 + chunk.byte_range().1) as usize;
    let middle = data + (end - data) / 2;
    bytes[middle - 8..middle + 8].fill(0);
    std::fs::write(&path, &bytes).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    for request_path in ["$.s", "$"] {
        let request = GetRequest {
            column: "v".into(),
            path: request_path.parse().unwrap(),
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: None,
        };
        let error = file
            .get(&request, 1024, |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("reading row group 0, column \"v.typed_value.s.typed_value\": "),
            "{request_path}: {error}"
        );
    }
}

/// Found by a review that damaged footers and page headers by hand:
/// each of these read as fewer rows or values than the file holds, with
/// no error (every command returned nothing for the first).
#[test]
fn counts_that_disagree_are_errors_naming_what_disagrees() {
    let corrupt = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corrupt");
    let error = read_all(&corrupt.join("footer-row-count-below-row-groups.parquet"))
        .expect_err("the footer counts 0 rows");
    assert!(
        error
            .to_string()
            .contains("the footer counts 0 rows in the file and 3000 in its row groups"),
        "{error}"
    );
    // A page of `$.id`'s leaf says it holds 999 values of its row
    // group's 1000: read alone, the leaf ended early.
    let file =
        ParquetFile::open(&corrupt.join("page-holding-fewer-values-than-its-row-group.parquet"))
            .unwrap();
    let request = GetRequest {
        column: "v".into(),
        path: "$.id".parse().unwrap(),
        as_type: ShreddingSchema::Variant,
        strict: false,
        filter: None,
    };
    let error = file
        .get(&request, 64, |_| Ok(()))
        .expect_err("a page is short");
    assert!(
        error.to_string().contains(
            "reading row group 1, column \"v.typed_value.id.typed_value\": 999 rows where the footer counts 1000"
        ),
        "{error}"
    );
}

/// A bloom filter whose footer length is a byte short of its header's
/// size was read with fewer blocks, and ruled out a row group holding
/// the value: such a filter is not used.
#[test]
fn a_bloom_filter_of_another_size_than_its_header_says_rules_nothing_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/corrupt/bloom-filter-length-one-short.parquet");
    let file = ParquetFile::open(&path).unwrap();
    let values = |filter: Option<&str>| {
        let request = GetRequest {
            column: "v".into(),
            path: "$.user.id".parse().unwrap(),
            as_type: ShreddingSchema::Variant,
            strict: false,
            filter: filter.map(|f| f.parse().unwrap()),
        };
        let mut ids = Vec::new();
        file.get(&request, 64, |values| {
            let values = arrow::array::AsArray::as_struct(values.as_ref());
            let column = ShreddedColumn::try_new(values)?;
            for row in 0..values.len() {
                let mut json = Vec::new();
                column.write_json(row, &mut json)?;
                ids.push(String::from_utf8(json).unwrap());
            }
            Ok(())
        })
        .unwrap();
        ids
    };
    let all = values(None);
    let with_1005 = all.iter().filter(|id| *id == "1005").count();
    assert!(with_1005 > 10, "{with_1005}");
    assert_eq!(values(Some("$.user.id == 1005")).len(), with_1005);
}

/// A footer whose schema nests `depth` groups above one leaf, and whose
/// list of row groups counts `row_groups` but holds none, written by
/// hand (no writer nests so deep): `PAR1`, the footer in Thrift's compact
/// protocol, its length, `PAR1`.
fn nested_schema_file(depth: usize, row_groups: u64) -> Vec<u8> {
    // A schema element: (field delta << 4 | type, value) pairs then a stop;
    // i32s zigzag-encoded, one byte each here.
    fn element(out: &mut Vec<u8>, physical: Option<u8>, children: Option<u8>) {
        let mut last = 0;
        let mut field = |out: &mut Vec<u8>, id: u8, kind: u8| {
            out.push((id - last) << 4 | kind);
            last = id;
        };
        if let Some(t) = physical {
            field(out, 1, 5);
            out.push(t << 1);
        }
        field(out, 3, 5); // repetition: optional
        out.push(1 << 1);
        field(out, 4, 8); // name
        out.extend([1, b'g']);
        if let Some(n) = children {
            field(out, 5, 5);
            out.push(n << 1);
        }
        out.push(0);
    }
    let mut footer = vec![0x15, 2]; // field 1, version: 1
    let elements = depth + 2;
    footer.push(0x19); // field 2, schema: a list
    footer.push(0xfc); // of structs, its length as a varint
    varint(&mut footer, elements as u64);
    element(&mut footer, None, Some(1));
    for _ in 0..depth {
        element(&mut footer, None, Some(1));
    }
    element(&mut footer, Some(1), None);
    footer.extend([0x16, 0]); // field 3, num_rows: 0
    footer.extend([0x19, 0xfc]); // field 4, row_groups: structs
    varint(&mut footer, row_groups);
    footer.push(0);
    let mut file = b"PAR1".to_vec();
    file.extend(&footer);
    file.extend((footer.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A footer nesting a hundred thousand groups overflowed the parquet
/// crate's stack as it built the schema (the process aborted); one
/// nesting 5,000 overflowed Arrow's. Past 256 levels a file is refused
/// before either reads it; below, it reads, on a test's 2 MiB stack.
#[test]
fn a_schema_nested_past_256_levels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.parquet");
    std::fs::write(&path, nested_schema_file(100_000, 0)).unwrap();
    let error = ParquetFile::open(&path).map(drop).expect_err("too deep");
    assert!(
        error
            .to_string()
            .contains("its schema nests 100001 levels deep, more than the 256 vshred reads"),
        "{error}"
    );
    std::fs::write(&path, nested_schema_file(254, 0)).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    assert_eq!(file.parquet_schema().column(0).path().parts().len(), 255);
    read_all(&path).unwrap();
}

/// The parquet crate reserves room for as many row groups as the footer
/// counts before it reads them: 2^30 aborted the process on a 100 GB
/// allocation. A list counting more elements than bytes are left is
/// refused first, naming where it is.
#[test]
fn a_footer_list_counting_more_elements_than_bytes_left_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("row-groups.parquet");
    let file = nested_schema_file(1, 1 << 30);
    std::fs::write(&path, &file).unwrap();
    let error = ParquetFile::open(&path).map(drop).expect_err("refused");
    // The list's header (a byte, then 2^30 in a varint of 5) starts 6
    // bytes before the footer's last byte, its stop.
    let header = file.len() - 8 - 1 - 6;
    assert!(
        error.to_string().contains(&format!(
            "a list at byte {header} counts 1073741824 elements, more than the 1 bytes after it hold"
        )),
        "{error}"
    );
}

/// As the footer's row groups, an offset index's page locations are
/// reserved by their count: 2^31 - 1 of them aborted a filtered read on a
/// 51 GB allocation. Such an index is not used (as any page index that
/// does not read): the filter keeps the rows it kept with a sound one.
#[test]
fn an_offset_index_counting_more_pages_than_its_bytes_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("offset-index.parquet");
    let text: String = (0..3000).map(|i| format!("{{\"id\": {i}}}\n")).collect();
    let options = EncodeOptions {
        shred: ShredMode::Schema(r#"{"id":"int64"}"#.parse().unwrap()),
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    let ids = |path: &Path| {
        let file = ParquetFile::open(path).unwrap();
        let request = GetRequest {
            column: "v".into(),
            path: "$.id".parse().unwrap(),
            as_type: ShreddingSchema::Int64,
            strict: false,
            filter: Some("$.id >= 2990".parse().unwrap()),
        };
        let mut ids = Vec::new();
        file.get(&request, 64, |values| {
            let values = values
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap();
            ids.extend(values.iter().flatten());
            Ok(())
        })
        .unwrap();
        ids
    };
    let expected: Vec<i64> = (2990..3000).collect();
    assert_eq!(ids(&path), expected);
    let mut bytes = std::fs::read(&path).unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let chunk = file.metadata().row_group(0).column(0);
    let at = chunk.offset_index_offset().expect("an offset index") as usize;
    // Field 1, a list of structs whose count, 2^31 - 1 as a varint,
    // overwrites the first location: the index keeps its length.
    assert_eq!(bytes[at], 0x19, "an offset index starts with its list");
    bytes[at + 1..at + 7].copy_from_slice(&[0xfc, 0xff, 0xff, 0xff, 0xff, 0x07]);
    let damaged = dir.path().join("damaged.parquet");
    std::fs::write(&damaged, &bytes).unwrap();
    assert_eq!(ids(&damaged), expected);
}

/// The spec makes an array element's group required; arrow-rs writes it
/// optional, and its files read (a check of the spec's rule refused them).
#[test]
fn an_optional_element_group_as_arrow_rs_writes_it_reads() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, Int64Array, ListArray, StructArray};
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{DataType, Field};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arrow-rs.parquet");
    let element = StructArray::from(vec![
        (
            Arc::new(Field::new("value", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![None::<&[u8]>, None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("typed_value", DataType::Int64, true)),
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        ),
    ]);
    let element_field = Arc::new(Field::new("element", element.data_type().clone(), true));
    let list = ListArray::new(
        element_field,
        OffsetBuffer::new(vec![0, 2].into()),
        Arc::new(element),
        None,
    );
    let column = StructArray::from(vec![
        (
            Arc::new(Field::new("metadata", DataType::Binary, false)),
            Arc::new(BinaryArray::from(vec![&[1u8, 0, 0][..]])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("value", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![None::<&[u8]>])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("typed_value", list.data_type().clone(), true)),
            Arc::new(list) as ArrayRef,
        ),
    ]);
    write_column(&path, column);

    let file = ParquetFile::open(&path).unwrap();
    let mut rows = Vec::new();
    for batch in file.batches(64).unwrap() {
        let batch = batch.unwrap();
        let v = arrow::array::AsArray::as_struct(batch.column(0).as_ref());
        let reader = ShreddedColumn::try_new(v).unwrap();
        let mut json = Vec::new();
        reader.write_json(0, &mut json).unwrap();
        rows.push(String::from_utf8(json).unwrap());
    }
    assert_eq!(rows, ["[1,2]"]);
}

/// pyarrow writes a dictionary array's Arrow type into the file: a Variant
/// group without the annotation, whose `metadata` it hints is a
/// dictionary of binaries, is still a Variant column by its shape (it was
/// read as a plain struct of bytes).
#[test]
fn a_variant_whose_metadata_is_hinted_a_dictionary_reads_as_a_variant() {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, DictionaryArray, Int32Array, StructArray};
    use arrow::datatypes::{DataType, Field};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pyarrow.parquet");
    let (metadata, value) = vshred::json::json_to_variant(br#"{"a": [1, "x"]}"#).unwrap();
    let dictionary = DictionaryArray::new(
        Int32Array::from(vec![0, 0]),
        Arc::new(BinaryArray::from(vec![metadata.as_slice()])),
    );
    let column = StructArray::from(vec![
        (
            Arc::new(Field::new(
                "metadata",
                dictionary.data_type().clone(),
                false,
            )),
            Arc::new(dictionary) as ArrayRef,
        ),
        (
            Arc::new(Field::new("value", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![value.as_slice(); 2])) as ArrayRef,
        ),
    ]);
    write_column(&path, column);

    let file = ParquetFile::open(&path).unwrap();
    assert_eq!(file.variant_columns(), ["v"]);
    let mut rows = Vec::new();
    for batch in file.batches(64).unwrap() {
        let batch = batch.unwrap();
        let v = arrow::array::AsArray::as_struct(batch.column(0).as_ref());
        let reader = ShreddedColumn::try_new(v).unwrap();
        for row in 0..v.len() {
            let mut json = Vec::new();
            reader.write_json(row, &mut json).unwrap();
            rows.push(String::from_utf8(json).unwrap());
        }
    }
    assert_eq!(rows, [r#"{"a":[1,"x"]}"#; 2]);
}

/// A batch that fails at a row hands on the rows before it first, and
/// where those fail at an earlier row (a filter's operand fails late, the
/// path early), that row is the error and the rows before it go: a read
/// stops where its data went bad.
#[test]
fn a_batch_that_fails_hands_on_the_rows_before_its_first_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ten.parquet");
    let lines: String = (0..10).map(|i| format!("{{\"id\":{i}}}\n")).collect();
    encode(
        &mut lines.as_bytes(),
        &path,
        &EncodeOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    let file = ParquetFile::open(&path).unwrap();
    let plan = file.plan_columns(None).unwrap();
    let options = vshred::parquet::ScanOptions::new(64);
    // As a filter that fails at row 8 of the batch, before the path that
    // fails at row 4 is read: rows 0 to 3 are good.
    let map = |batch: arrow::array::RecordBatch| match batch.num_rows() {
        n if n > 8 => Err(vshred::Error::from_message("late".into()).with_row(8)),
        n if n > 4 => Err(vshred::Error::from_message("early".into()).with_row(4)),
        n => Ok(n),
    };
    let mut handed = Vec::new();
    let e = file
        .scan(&plan, &options, map, |rows| {
            handed.push(rows);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(handed, [4]);
    assert_eq!((e.row(), e.message()), (Some(4), "early"), "{e}");
    // A consumer that stops within them (a limit) stops the read with
    // its own word, not the bad row's.
    let mut wanted = 0;
    let stopped = file
        .scan(&plan, &options, map, |rows| {
            wanted += rows;
            Err(vshred::Error::from_message("enough".into()))
        })
        .unwrap_err();
    assert_eq!((wanted, stopped.message()), (4, "enough"));
}
