//! Predicates skip pages by the column index, where that is safe.

use arrow::array::{Array, AsArray};
use arrow::datatypes::Int64Type;
use vshred::encode::{EncodeOptions, encode};
use vshred::parquet::{GetRequest, ParquetFile, ReadStats, WriteOptions};
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;

const ROWS: u64 = 100_000;

/// One row group of `ROWS` rows, `$.id` ascending; with `odd_id` one row's
/// id is a string, so `$.id` has a residual and its statistics say nothing
/// about the rows.
fn file(dir: &std::path::Path, odd_id: Option<u64>) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 0..ROWS {
        if Some(i) == odd_id {
            text.push_str(&format!("{{\"id\":\"{i}\",\"x\":{}}}\n", i % 7));
        } else {
            text.push_str(&format!("{{\"id\":{i},\"x\":{}}}\n", i % 7));
        }
    }
    let path = dir.join(format!("ids-{odd_id:?}.parquet"));
    let options = EncodeOptions {
        shred: vshred::encode::ShredMode::Schema(r#"{"id":"int64","x":"int64"}"#.parse().unwrap()),
        write: WriteOptions {
            row_group_rows: ROWS as usize,
            ..WriteOptions::default()
        },
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    path
}

/// The sum and count of `$.x` where `filter` holds, and what was read.
fn sum_x(path: &std::path::Path, filter: &str) -> (i64, usize, ReadStats) {
    let file = ParquetFile::open(path).unwrap();
    let request = GetRequest {
        column: "v".into(),
        path: "$.x".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        strict: false,
        filter: Some(Predicate::parse(filter).unwrap()),
    };
    let (mut sum, mut count) = (0, 0);
    let stats = file
        .get(&request, 4096, |array| {
            let values = array.as_primitive::<Int64Type>();
            sum += values.iter().flatten().sum::<i64>();
            count += values.len() - values.null_count();
            Ok(())
        })
        .unwrap();
    (sum, count, stats)
}

fn expected(keep: impl Fn(u64) -> bool) -> (i64, usize) {
    let kept: Vec<u64> = (0..ROWS).filter(|&i| keep(i)).collect();
    (kept.iter().map(|i| (i % 7) as i64).sum(), kept.len())
}

#[test]
fn pages_that_cannot_match_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), None);
    let (sum, count, stats) = sum_x(&path, "$.id >= 95000");
    assert_eq!((sum, count), expected(|i| i >= 95_000));
    assert_eq!(stats.row_groups_read, 1);
    assert!(stats.pages_skipped >= 2, "{stats:?}");
    assert!(stats.rows_read < ROWS / 2, "{stats:?}");

    let (sum, count, stats) = sum_x(&path, "$.id == 50123");
    assert_eq!((sum, count), expected(|i| i == 50_123));
    assert!(stats.rows_read < ROWS / 2, "{stats:?}");

    // Every page may hold a match: nothing skipped, everything right.
    let (sum, count, stats) = sum_x(&path, "$.x == 3");
    assert_eq!((sum, count), expected(|i| i % 7 == 3));
    assert_eq!((stats.pages_skipped, stats.rows_read), (0, ROWS));
}

#[test]
fn pages_are_not_skipped_where_values_escape_the_typed_column() {
    let dir = tempfile::tempdir().unwrap();
    // Row 99990's id is the string "99990": in `value`, outside the
    // statistics of `typed_value`, and it does not compare equal to a number.
    let path = file(dir.path(), Some(99_990));
    let (sum, count, stats) = sum_x(&path, "$.id >= 95000");
    assert_eq!((sum, count), expected(|i| i >= 95_000 && i != 99_990));
    assert_eq!((stats.pages_skipped, stats.rows_read), (0, ROWS));
}

/// An error names the row of the file, however many row groups, pages
/// and batches were skipped or read before it, and only a row the filter
/// keeps can fail.
#[test]
fn an_error_names_the_files_row_after_skipped_pages_and_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..ROWS {
        match i {
            97_000 => text.push_str(&format!("{{\"id\":{i},\"x\":\"seven\"}}\n")),
            _ => text.push_str(&format!("{{\"id\":{i},\"x\":{}}}\n", i % 7)),
        }
    }
    for row_group_rows in [ROWS as usize, 30_000] {
        let path = dir.path().join(format!("x-{row_group_rows}.parquet"));
        let options = EncodeOptions {
            shred: vshred::encode::ShredMode::Schema(
                r#"{"id":"int64","x":"int64"}"#.parse().unwrap(),
            ),
            write: WriteOptions {
                row_group_rows,
                ..WriteOptions::default()
            },
            ..EncodeOptions::default()
        };
        encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
        let file = ParquetFile::open(&path).unwrap();
        let request = |path: &str, filter: Option<&str>| GetRequest {
            column: "v".into(),
            path: path.parse().unwrap(),
            as_type: ShreddingSchema::Int64,
            strict: true,
            filter: filter.map(|f| Predicate::parse(f).unwrap()),
        };
        for filter in [None, Some("$.id >= 95000"), Some("$.id >= 10")] {
            let err = file
                .get(&request("$.x", filter), 4096, |_| Ok(()))
                .unwrap_err();
            assert_eq!(err.row(), Some(97_000), "{filter:?}: {err}");
        }
        // A row the filter leaves out does not fail, though it is read.
        for filter in ["$.id != 97000", "$.id < 97000 or $.id > 97000"] {
            let mut rows = 0;
            file.get(&request("$.x", Some(filter)), 4096, |values| {
                rows += values.len();
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{filter}: {e}"));
            assert_eq!(rows, ROWS as usize - 1, "{filter}");
        }
        // That filter skips pages of one row group, row groups of several.
        let stats = file
            .get(&request("$.id", Some("$.id >= 95000")), 4096, |_| Ok(()))
            .unwrap();
        assert!(
            stats.pages_skipped + stats.skipped_by_statistics >= 2,
            "{stats:?}"
        );
    }
}
