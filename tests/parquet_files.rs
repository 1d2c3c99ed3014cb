//! Writing shredded Variant columns to Parquet and reading them back.

use std::fs::File;
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{LogicalType, Type as PhysicalType};
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
    std::fs::write(&path, b"old contents").unwrap();
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: ShreddingSchema::Variant,
    }];
    let writer = ParquetWriter::create(&path, &columns, &WriteOptions::default()).unwrap();
    drop(writer);
    assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.parquet"], "no temporary file is left behind");
}
