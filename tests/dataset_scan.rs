//! A dataset is read by one scan over all its files: rows in path order,
//! then file order, on any number of threads, whether its footers were
//! kept from the first pass or read again, and a file that changes or
//! breaks between the passes is an error naming it.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::AsArray;
use arrow::datatypes::Int64Type;

use vshred::dataset::Dataset;
use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::parquet::{GetRequest, ScanOptions, WriteOptions};
use vshred::shred::ShreddingSchema;

/// `files` files of `rows` rows each, in row groups of 7 rows; the files
/// alternate between a layout with `$.n` typed and one without shredding,
/// and `$.n` counts on from file to file.
fn dataset(dir: &Path, files: usize, rows: usize) -> Vec<PathBuf> {
    (0..files)
        .map(|f| {
            let text: String = (0..rows)
                .map(|r| format!("{{\"n\":{},\"s\":\"f{f}r{r}\"}}\n", f * rows + r))
                .collect();
            let path = dir.join(format!("part-{f:03}.parquet"));
            let shred = if f % 2 == 0 {
                ShredMode::Schema(r#"{"n":"int64"}"#.parse().unwrap())
            } else {
                ShredMode::None
            };
            let options = EncodeOptions {
                shred,
                write: WriteOptions {
                    row_group_rows: 7,
                    ..WriteOptions::default()
                },
                ..EncodeOptions::default()
            };
            encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
            path
        })
        .collect()
}

fn sum_request() -> GetRequest {
    GetRequest {
        column: "v".into(),
        path: "$.n".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        strict: true,
        filter: None,
    }
}

/// Every `$.n` the dataset gives, in order.
fn values(dataset: &Dataset, options: &ScanOptions) -> vshred::Result<Vec<i64>> {
    values_of(dataset, &sum_request(), options)
}

/// Every value (an int64, never null) `request` gives, in order.
fn values_of(
    dataset: &Dataset,
    request: &GetRequest,
    options: &ScanOptions,
) -> vshred::Result<Vec<i64>> {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    let mut all = Vec::new();
    dataset.get_with(request, &[], options, |values, _| {
        all.extend(
            values
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.unwrap()),
        );
        Ok(())
    })?;
    Ok(all)
}

fn options(threads: usize, batch_size: usize) -> ScanOptions {
    ScanOptions {
        batch_size,
        threads: NonZeroUsize::new(threads),
    }
}

#[test]
fn rows_come_in_file_order_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 24, 30);
    let expected: Vec<i64> = (0..24 * 30).collect();
    for threads in [1, 2, 5] {
        for batch_size in [1, 4, 8192] {
            let found = values(
                &Dataset::from_files(files.clone()),
                &options(threads, batch_size),
            );
            assert_eq!(
                found.unwrap(),
                expected,
                "{threads} threads, batches of {batch_size}"
            );
        }
    }
}

#[test]
fn footers_read_again_give_the_same_rows_as_footers_kept() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 9, 20);
    let kept = values(&Dataset::from_files(files.clone()), &options(2, 8192)).unwrap();
    let reread = Dataset::from_files(files).with_footer_budget(0);
    assert_eq!(values(&reread, &options(2, 8192)).unwrap(), kept);
}

#[test]
fn cat_of_a_dataset_is_cat_of_each_file_in_turn() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 6, 10);
    let lines = |dataset: &Dataset| {
        let mut text = Vec::new();
        dataset
            .json_lines(None, &options(2, 3), |block| {
                text.extend(block);
                Ok(())
            })
            .unwrap();
        String::from_utf8(text).unwrap()
    };
    let each: String = files
        .iter()
        .map(|f| lines(&Dataset::from_files(vec![f.clone()])))
        .collect();
    let all = lines(&Dataset::from_files(files));
    assert_eq!(all.lines().count(), 60);
    assert_eq!(all, each);
}

#[test]
fn a_file_cut_short_after_its_footer_was_read_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 5, 20);
    let dataset = Dataset::from_files(files.clone());
    dataset.columns().unwrap(); // the first pass reads and keeps the footers
    let victim = &files[3];
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(victim)
        .unwrap();
    file.set_len(64).unwrap();
    let e = values(&dataset, &options(2, 8192)).unwrap_err();
    assert_eq!(e.file(), Some(victim.as_path()), "{e}");
    assert!(e.to_string().contains("not a Parquet file"), "{e}");
}

/// A file one worker cannot open (its permissions, its disk) while the
/// others can: the error says which worker.
#[test]
fn a_file_that_does_not_open_where_it_is_read_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.parquet");
    let e = Dataset::from_files(vec![missing.clone()])
        .read_on("worker 10.0.0.5:7400".into())
        .rows()
        .unwrap_err();
    assert_eq!(e.file(), Some(missing.as_path()), "{e}");
    assert!(
        e.to_string()
            .contains("No such file or directory (os error 2); on worker 10.0.0.5:7400"),
        "{e}"
    );
}

#[test]
fn a_file_replaced_after_its_footer_was_read_is_read_as_it_is_now() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 4, 20);
    let dataset = Dataset::from_files(files.clone());
    dataset.columns().unwrap();
    // Another file of other rows (longer, so that its length differs),
    // renamed over the second.
    let other = tempfile::tempdir().unwrap();
    let replacement = &self::dataset(other.path(), 1, 45)[0];
    std::fs::rename(replacement, &files[1]).unwrap();
    let found = values(&dataset, &options(2, 8192)).unwrap();
    let expected: Vec<i64> = (0..20).chain(0..45).chain(40..80).collect();
    assert_eq!(found, expected);
}

/// A file replaced by one whose `v` is no Variant column is an error
/// naming it: its rows read as nulls (`get`) or as integers (`cat`).
#[test]
fn a_file_replaced_by_one_of_other_column_types_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 4, 20);
    let dataset = Dataset::from_files(files.clone());
    dataset.columns().unwrap();
    let other = tempfile::tempdir().unwrap();
    let replacement = other.path().join("v.parquet");
    let v: arrow::array::ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![1, 2, 3]));
    let batch = arrow::array::RecordBatch::try_from_iter([("v", v)]).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&replacement).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::rename(&replacement, &files[2]).unwrap();
    for threads in [1, 2] {
        let e = values(&dataset, &options(threads, 8192)).unwrap_err();
        assert_eq!(e.file(), Some(files[2].as_path()), "{e}");
        assert!(
            e.to_string().contains(
                "the file changed while the dataset was read: its column \"v\" is Int64 now, where the dataset's is variant"
            ),
            "{e}"
        );
    }
}

#[test]
fn a_file_that_is_not_parquet_in_the_middle_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 5, 20);
    std::fs::write(&files[2], "{\"n\": 1}\n").unwrap();
    for threads in [1, 2] {
        let e = values(&Dataset::from_files(files.clone()), &options(threads, 8192)).unwrap_err();
        assert_eq!(e.file(), Some(files[2].as_path()), "{e}");
        assert!(e.to_string().contains("not a Parquet file"), "{e}");
    }
}

#[test]
fn a_sink_that_stops_ends_the_scan_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = Dataset::from_files(dataset(dir.path(), 12, 30));
    let (mut seen, mut calls_after_stop) = (0, 0);
    let e = dataset
        .get_with(&sum_request(), &[], &options(2, 5), |values, _| {
            if seen >= 40 {
                calls_after_stop += 1;
            }
            seen += values.len();
            if seen >= 40 {
                return Err(vshred::Error::from_message("enough".into()));
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.message(), "enough");
    assert_eq!(calls_after_stop, 0);
    assert!(seen < 12 * 30);
}

/// `dir/name`, encoded from `text` with its field `v` a Variant column
/// and the others ordinary columns.
fn with_variant_v(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    let options = EncodeOptions {
        variant_fields: vec!["v".into()],
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    path
}

/// `a.parquet` in `dir`: the ordinary `columns` (of 10 rows) beside a
/// Variant `v` whose `$.n` is the row's number, typed.
fn with_columns_beside_n(dir: &Path, columns: Vec<(&str, arrow::array::ArrayRef)>) -> PathBuf {
    use arrow::array::{ArrayRef, RecordBatch};
    use arrow::datatypes::{Field, Schema};
    use vshred::shred::Shredder;
    let layout: ShreddingSchema = r#"{"n":"int64"}"#.parse().unwrap();
    let mut shredder = Shredder::new(&layout);
    for i in 0..10 {
        shredder
            .append_json(format!("{{\"n\":{i}}}").as_bytes())
            .unwrap();
    }
    let v: ArrayRef = Arc::new(shredder.finish());
    let mut fields: Vec<Field> = columns
        .iter()
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    fields.push(vshred::parquet::variant_field("v", &layout).with_data_type(v.data_type().clone()));
    let schema = Arc::new(Schema::new(fields));
    let mut arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, c)| c).collect();
    arrays.push(v);
    let path = dir.join("a.parquet");
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    writer
        .write(&RecordBatch::try_new(schema, arrays).unwrap())
        .unwrap();
    writer.close().unwrap();
    path
}

/// The rows' `$.n` that pass `filter` in `dataset`, and its warnings.
fn passing(dataset: &Dataset, filter: &str) -> (Vec<i64>, Vec<String>) {
    let request = GetRequest {
        filter: Some(filter.parse().unwrap()),
        ..sum_request()
    };
    let mut values = Vec::new();
    let stats = dataset
        .get_with(&request, &[], &options(2, 1024), |found, _| {
            values.extend(found.as_primitive::<Int64Type>().iter().map(|v| v.unwrap()));
            Ok(())
        })
        .unwrap();
    (values, stats.read.warnings)
}

/// Reading `id`, as a column beside the values, in a filter or among a
/// `cat`'s columns, fails naming both files; reading `v` alone does not
/// (it failed too, whatever was read).
#[test]
fn a_column_the_files_disagree_on_fails_its_reads_and_the_others_read() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| with_variant_v(dir.path(), name, text);
    let files = vec![
        write("a.parquet", "{\"id\":1,\"v\":{\"n\":1}}\n"),
        write("b.parquet", "{\"id\":\"one\",\"v\":{\"n\":2}}\n"),
    ];
    let dataset = Dataset::from_files(files);
    assert_eq!(values(&dataset, &options(2, 8192)).unwrap(), vec![1, 2]);
    let names_both = |e: vshred::Error| {
        let message = e.to_string();
        assert!(message.contains("column \"id\" is Int64 in"), "{message}");
        assert!(
            message.contains("a.parquet") && message.contains("b.parquet"),
            "{message}"
        );
    };
    let with_id = dataset.get_with(&sum_request(), &["id".into()], &options(2, 8192), |_, _| {
        Ok(())
    });
    names_both(with_id.unwrap_err());
    let filtered = GetRequest {
        filter: Some("id is null".parse().unwrap()),
        ..sum_request()
    };
    names_both(values_of(&dataset, &filtered, &options(2, 8192)).unwrap_err());
    let lines =
        |columns: Option<&[String]>| dataset.json_lines(columns, &options(2, 8192), |_| Ok(()));
    names_both(lines(None).unwrap_err());
    names_both(lines(Some(&["id".to_string()])).unwrap_err());
    lines(Some(&["v".to_string()])).unwrap();
}

/// `--where` compares a date or timestamp column with an ISO-8601 string,
/// as it does a path read `as date` or `as timestamp`, in a file and
/// beside one without the column (no row passed: strings never equal
/// numbers); a number is no date, which a warning says for the dataset.
#[test]
fn a_date_or_timestamp_column_compares_with_iso_strings() {
    use arrow::array::{ArrayRef, Date32Array, TimestampMicrosecondArray};
    let dir = tempfile::tempdir().unwrap();
    // 2024-03-01 and the days after; its midnight (UTC) and the hours after.
    let first_day = 19783;
    let d: ArrayRef = Arc::new(Date32Array::from_iter_values(
        (0..10).map(|i| first_day + i),
    ));
    let ts: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from_iter_values(
            (0..10).map(|i| (i64::from(first_day) * 86_400 + i * 3_600) * 1_000_000),
        )
        .with_timezone("UTC"),
    );
    let path = with_columns_beside_n(dir.path(), vec![("d", d), ("ts", ts)]);
    let without = with_variant_v(dir.path(), "b.parquet", "{\"v\":{\"n\":100}}\n");
    let dataset = Dataset::from_files(vec![path, without]);
    let passed = |filter: &str| passing(&dataset, filter);
    for (filter, expected) in [
        ("d == \"2024-03-05\"", vec![4]),
        ("d >= \"2024-03-08\"", vec![7, 8, 9]),
        ("d in (\"2024-03-01\", \"2024-03-10\")", vec![0, 9]),
        ("not d < \"2024-03-09\"", vec![8, 9]),
        ("ts >= \"2024-03-01T07:00:00Z\"", vec![7, 8, 9]),
        ("ts < \"2024-03-01T02:00:00+01:00\"", vec![0]),
        ("ts == \"2024-03-01\"", vec![0]),
    ] {
        assert_eq!(passed(filter), (expected, vec![]), "{filter}");
    }
    // A file read alone (as from a pipe) converts by its own types.
    let file = vshred::parquet::ParquetFile::open(&dir.path().join("a.parquet")).unwrap();
    let request = GetRequest {
        filter: Some("d == \"2024-03-05\"".parse().unwrap()),
        ..sum_request()
    };
    let mut alone = Vec::new();
    file.get_with(&request, &[], &options(2, 1024), |found, _| {
        alone.extend(found.as_primitive::<Int64Type>().iter().map(|v| v.unwrap()));
        Ok(())
    })
    .unwrap();
    assert_eq!(alone, [4]);
    let (values, warnings) = passed("d == 19787");
    assert!(values.is_empty());
    assert_eq!(
        warnings,
        [
            "no row can pass `d == 19787`: every value of d is stored as dates or timestamps, and 19787 is not (the filter compares values of one kind)"
        ]
    );
    let request = GetRequest {
        filter: Some("d == \"soon\"".parse().unwrap()),
        ..sum_request()
    };
    let refused = dataset.get_with(&request, &[], &options(2, 1024), |_, _| Ok(()));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "invalid arguments: the filter's d == \"soon\": \"soon\" is not a date (as an ISO-8601 string such as \"2024-03-01\" or \"2024-03-01T12:30:00Z\")"
    );
}

/// Columns of types no Variant value has compare by their values:
/// pyarrow's millisecond timestamps, unsigned integers past `int64`,
/// dictionary-encoded strings (each was refused as "unsupported").
#[test]
fn ordinary_columns_of_types_a_variant_lacks_compare_by_value() {
    use arrow::array::{ArrayRef, DictionaryArray, TimestampMillisecondArray, UInt64Array};
    use arrow::datatypes::Int32Type;
    let dir = tempfile::tempdir().unwrap();
    // 2024-03-01T00:00 and the hours after, in milliseconds, with no zone.
    let ms: ArrayRef = Arc::new(TimestampMillisecondArray::from_iter_values(
        (0..10).map(|i| (19783 * 86_400 + i * 3_600) * 1_000),
    ));
    let big: ArrayRef = Arc::new(UInt64Array::from_iter_values((0..10).map(|i| u64::MAX - i)));
    let tag: ArrayRef = Arc::new(
        (0..10)
            .map(|i| ["even", "odd"][i % 2])
            .collect::<DictionaryArray<Int32Type>>(),
    );
    let path = with_columns_beside_n(dir.path(), vec![("ms", ms), ("big", big), ("tag", tag)]);
    let without = with_variant_v(dir.path(), "b.parquet", "{\"v\":{\"n\":100}}\n");
    let dataset = Dataset::from_files(vec![path, without]);
    for (filter, expected) in [
        ("ms >= \"2024-03-01T07:00:00\"", vec![7, 8, 9]),
        ("ms == \"2024-03-01T03:00:00\"", vec![3]),
        ("big > 18446744073709551612", vec![0, 1, 2]),
        ("big == 18446744073709551615", vec![0]),
        ("tag == \"odd\" and $.n < 5", vec![1, 3]),
        ("tag in (\"even\")", vec![0, 2, 4, 6, 8]),
    ] {
        assert_eq!(passing(&dataset, filter), (expected, vec![]), "{filter}");
    }
    // A value past what the Variant's type holds is an error (the cast
    // made it null, so `is null` passed it), and so is a type no filter
    // compares (its message spoke of a shredding schema).
    let other = tempfile::tempdir().unwrap();
    let far: ArrayRef = Arc::new(TimestampMillisecondArray::from_iter_values(
        (0..10).map(|i| if i == 9 { 1 << 62 } else { i }),
    ));
    let nanos: ArrayRef = Arc::new(arrow::array::Time64NanosecondArray::from_iter_values(0..10));
    let path = with_columns_beside_n(other.path(), vec![("far", far), ("nanos", nanos)]);
    let dataset = Dataset::from_files(vec![path]);
    for (filter, message) in [
        (
            "far is null",
            "the filter's column far holds a value that Timestamp(µs) does not",
        ),
        (
            "nanos is null",
            "the filter's column nanos is of type Time64(ns), which a filter does not compare",
        ),
    ] {
        let request = GetRequest {
            filter: Some(filter.parse().unwrap()),
            ..sum_request()
        };
        let error = dataset
            .get_with(&request, &[], &options(2, 1024), |_, _| Ok(()))
            .unwrap_err();
        assert!(error.to_string().contains(message), "{filter}: {error}");
    }
}

/// A filter on a column that some files lack reads it as null there, as
/// SQL does: `name is null` passes those files' rows, `name == "a"` none
/// of them (both failed on the file without it, "unsupported shredded
/// value type Null").
#[test]
fn a_filter_on_a_column_some_files_lack_reads_it_as_null_there() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| with_variant_v(dir.path(), name, text);
    let files = vec![
        write(
            "a.parquet",
            "{\"name\":\"a\",\"v\":{\"n\":1}}\n{\"name\":\"b\",\"v\":{\"n\":2}}\n",
        ),
        write("b.parquet", "{\"v\":{\"n\":3}}\n"),
    ];
    let dataset = Dataset::from_files(files);
    for (filter, expected) in [("name is null", vec![3]), ("name == \"a\"", vec![1])] {
        let request = GetRequest {
            filter: Some(filter.parse().unwrap()),
            ..sum_request()
        };
        let passed = values_of(&dataset, &request, &options(2, 1024)).unwrap();
        assert_eq!(passed, expected, "{filter}");
    }
}

/// A path that is not there is an error when the dataset is found,
/// naming it (it was found as a dataset of one file, and the scan failed).
#[test]
fn a_path_that_is_not_there_is_an_error_when_found() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.parquet");
    let e = Dataset::find(&missing).unwrap_err();
    assert_eq!(e.file(), Some(missing.as_path()), "{e}");
    assert!(e.to_string().contains("No such file or directory"), "{e}");
}

/// A share's files must be those whose footers it was planned with: one
/// of another size, or of the same size with another footer (other
/// values), is an error naming the file and the place that read it (a
/// worker, on a cluster), where it read other rows without a word.
#[test]
fn a_shares_file_other_than_the_planners_is_an_error_naming_where_it_was_read() {
    use vshred::dataset::partition::Partition;
    let dir = tempfile::tempdir().unwrap();
    let files = dataset(dir.path(), 2, 20);
    let whole = Dataset::from_files(files.clone());
    let share = || whole.share(&[Partition::new(0, 1).unwrap()]).unwrap();
    let planned = share().read_on("worker 127.0.0.1:7401".into());
    assert_eq!(values(&planned, &options(2, 8192)).unwrap().len(), 40);
    let size = std::fs::metadata(&files[1]).unwrap().len();
    // The same rows but for one letter of each string: the same size.
    let other: String = (20..40)
        .map(|n| format!("{{\"n\":{n},\"s\":\"g1r{}\"}}\n", n - 20))
        .collect();
    let as_file_1 = EncodeOptions {
        shred: ShredMode::None,
        write: WriteOptions {
            row_group_rows: 7,
            ..WriteOptions::default()
        },
        ..EncodeOptions::default()
    };
    encode(&mut other.as_bytes(), &files[1], &as_file_1, &mut |_| {}).unwrap();
    assert_eq!(
        std::fs::metadata(&files[1]).unwrap().len(),
        size,
        "the same size"
    );
    let error = values(&planned, &options(2, 8192)).unwrap_err().to_string();
    assert!(
        error.contains("part-001.parquet: incompatible files: the file's footer on worker 127.0.0.1:7401 is not the one where the query was planned"),
        "{error}"
    );
    // Another size, read here.
    std::fs::write(&files[1], b"PAR1").unwrap();
    let error = values(&share(), &options(2, 8192)).unwrap_err().to_string();
    assert!(
        error.contains("the file is 4 bytes here but was"),
        "{error}"
    );
}
