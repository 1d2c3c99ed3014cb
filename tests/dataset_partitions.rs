//! A dataset's projection read in partitions: together they read every row
//! once, each its fixed share of the row groups in file order, each file
//! planned only by the partitions holding some of its row groups, and
//! their figures add up to those of the whole.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use vshred::dataset::partition::Partition;
use vshred::dataset::{Dataset, DatasetStats};
use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::get::OnFailure;
use vshred::parquet::{Projected, Projection, RowFilter, ScanOptions, WriteOptions};
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;

/// Files of these many rows, in row groups of 7; `$.n` counts on from file
/// to file, typed in every other file and left in `value` in the others.
fn dataset(dir: &Path, rows: &[usize]) -> Arc<Dataset> {
    let mut first = 0;
    let files: Vec<PathBuf> = rows
        .iter()
        .enumerate()
        .map(|(f, &rows)| {
            let text: String = (first..first + rows)
                .map(|n| format!("{{\"n\":{n},\"s\":\"r{n}\"}}\n"))
                .collect();
            first += rows;
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
        .collect();
    Arc::new(Dataset::from_files(files))
}

fn projection(filter: Option<&str>) -> Projection {
    Projection {
        outputs: vec![(
            "n".into(),
            Projected::Path {
                column: "v".into(),
                path: "$.n".parse().unwrap(),
                as_type: ShreddingSchema::Int64,
                on_failure: OnFailure::Error,
            },
        )],
        filter: filter.map(|f| ("v".into(), Predicate::parse(f).unwrap())),
        ..Projection::default()
    }
}

/// The `$.n` values of `batches`, in order.
fn values(batches: impl Iterator<Item = vshred::Result<RecordBatch>>) -> Vec<i64> {
    batches
        .collect::<vshred::Result<Vec<RecordBatch>>>()
        .unwrap()
        .iter()
        .flat_map(|b| {
            let n = b.column(0).as_primitive::<Int64Type>();
            n.iter().map(|v| v.unwrap()).collect::<Vec<_>>()
        })
        .collect()
}

/// Each partition's `$.n` values, in the order read, with its figures.
fn read(
    dataset: &Arc<Dataset>,
    projection: &Projection,
    count: usize,
) -> Vec<(Vec<i64>, DatasetStats, Vec<usize>)> {
    let schema = dataset.projection_schema(projection).unwrap();
    (0..count)
        .map(|index| {
            let partition = Partition::new(index, count).unwrap();
            let mut batches = dataset
                .project_partition(projection, &schema, &ScanOptions::new(5), partition)
                .unwrap();
            let values = values(batches.by_ref());
            (values, batches.stats(), batches.files_read().to_vec())
        })
        .collect()
}

#[test]
fn partitions_together_read_every_row_once_each_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    // 2, 1, 3, 1 and 3 row groups: ten in all.
    let rows = [10, 3, 20, 1, 15];
    let dataset = dataset(dir.path(), &rows);
    let total: i64 = rows.iter().sum::<usize>() as i64;
    for count in [1, 2, 3, 4, 10, 13] {
        let partitions = read(&dataset, &projection(None), count);
        let mut all: Vec<i64> = Vec::new();
        let mut row_groups = 0;
        for (values, stats, _) in &partitions {
            assert!(values.is_sorted(), "{count} partitions: {values:?}");
            all.extend(values);
            row_groups += stats.read.row_groups_read;
        }
        all.sort_unstable();
        assert_eq!(all, (0..total).collect::<Vec<_>>(), "{count} partitions");
        assert_eq!(row_groups, 10, "{count} partitions");
    }
}

#[test]
fn a_projection_of_the_whole_reads_in_file_order_on_the_worker_pool() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [10, 3, 20, 1, 15];
    let dataset = dataset(dir.path(), &rows);
    for threads in [1, 3] {
        let options = ScanOptions {
            threads: std::num::NonZeroUsize::new(threads),
            ..ScanOptions::new(5)
        };
        let projection = projection(Some("$.n >= 12"));
        let schema = dataset.projection_schema(&projection).unwrap();
        let mut batches = Vec::new();
        let stats = dataset
            .project(&projection, &schema, &options, |batch| {
                batches.push(Ok(batch));
                Ok(())
            })
            .unwrap();
        // The filter prunes the first file's two row groups (n up to 9,
        // typed, so with statistics); the second's, untyped, is read, and
        // so are the rest, whole and in order (an engine filters rows).
        let read = values(batches.into_iter());
        assert_eq!(read, (10..49).collect::<Vec<_>>(), "{threads} threads");
        assert_eq!(stats.read.row_groups_read, 8, "{threads} threads");
    }
}

#[test]
fn a_partition_plans_only_the_files_that_hold_its_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    // One row group per file: four partitions, one file each.
    let dataset = dataset(dir.path(), &[7, 7, 7, 7]);
    for (i, (values, stats, files_read)) in
        read(&dataset, &projection(None), 4).into_iter().enumerate()
    {
        assert_eq!(stats.files, 1, "partition {i}");
        assert_eq!(files_read, vec![i]);
        assert_eq!(
            values,
            (7 * i as i64..7 * (i as i64 + 1)).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_filter_prunes_each_share_and_the_figures_add_up_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = dataset(dir.path(), &[10, 3, 20, 1, 15]);
    // Rows 30 and up: by their typed statistics, both row groups of the
    // first file and the first two of the third (rows 13 to 26) are
    // pruned; the untyped second and fourth files have none to prune by.
    let filter = projection(Some("$.n >= 30"));
    let whole = read(&dataset, &filter, 1).remove(0);
    for count in [2, 3, 7] {
        let partitions = read(&dataset, &filter, count);
        let sum = |f: fn(&DatasetStats) -> usize| partitions.iter().map(|p| f(&p.1)).sum::<usize>();
        assert_eq!(sum(|s| s.read.row_groups), whole.1.read.row_groups);
        assert_eq!(
            sum(|s| s.read.row_groups_read),
            whole.1.read.row_groups_read
        );
        assert_eq!(
            sum(|s| s.read.skipped_by_statistics),
            whole.1.read.skipped_by_statistics
        );
        let mut files_read: Vec<usize> = partitions.iter().flat_map(|p| p.2.clone()).collect();
        files_read.sort_unstable();
        files_read.dedup();
        assert_eq!(files_read, whole.2, "{count} partitions");
        let mut values: Vec<i64> = partitions.into_iter().flat_map(|p| p.0).collect();
        values.sort_unstable();
        assert_eq!(values, whole.0, "{count} partitions");
    }
    assert_eq!(whole.2, vec![1, 2, 3, 4], "the first file is pruned whole");
    assert_eq!(whole.1.read.skipped_by_statistics, 4, "{:?}", whole.1);
    // Pruning only: the row groups read are returned whole.
    assert_eq!(whole.0, (10..13).chain(27..49).collect::<Vec<_>>());
}

#[test]
fn a_partition_beyond_the_count_is_an_error() {
    let error = Partition::new(3, 3).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments: there is no partition 3 of 3"
    );
    assert!(Partition::new(0, 0).is_err());
}

#[test]
fn a_share_of_a_dataset_reads_what_its_partitions_read_from_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = dataset(dir.path(), &[10, 3, 20, 1, 15]);
    let projection = projection(Some("$.n >= 12"));
    let schema = dataset.projection_schema(&projection).unwrap();
    let whole = read(&dataset, &projection, 6);
    // Three tasks of two partitions each: task t reads shares 2t and 2t + 1.
    for task in 0..3 {
        let shares: Vec<Partition> = (2 * task..2 * task + 2)
            .map(|p| Partition::new(p, 6).unwrap())
            .collect();
        let share = Arc::new(dataset.share(&shares).unwrap());
        assert!(share.files().len() < dataset.files().len(), "task {task}");
        // What travels: the files and their numbering, nothing else.
        let numbered: Vec<(PathBuf, usize)> = share
            .files()
            .iter()
            .cloned()
            .zip(share.numbering().unwrap().iter().copied())
            .collect();
        let sent = Arc::new(Dataset::from_numbered_files(numbered));
        for (i, partition) in shares.iter().enumerate() {
            let values = values(
                sent.project_partition(&projection, &schema, &ScanOptions::new(5), *partition)
                    .unwrap(),
            );
            assert_eq!(values, whole[2 * task + i].0, "task {task}, share {i}");
        }
    }
}

/// The output `s`, `$.s` as an `int64`: "r0", "r1", ... convert in no row.
fn s_as_int64(on_failure: OnFailure) -> (String, Projected) {
    let path = Projected::Path {
        column: "v".into(),
        path: "$.s".parse().unwrap(),
        as_type: ShreddingSchema::Int64,
        on_failure,
    };
    ("s".into(), path)
}

/// A row filter keeps its rows: the outputs it does not read are computed
/// for those rows alone, and a failure among them names its row in the
/// file, not in the rows kept.
#[test]
fn a_row_filter_keeps_its_rows_and_a_failure_names_its_row_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [10, 20];
    let dataset = dataset(dir.path(), &rows);
    let mut projection = projection(None);
    projection.outputs.push(s_as_int64(OnFailure::Defer));
    projection
        .outputs
        .push(("text".into(), Projected::Json("v".into())));
    projection.row_filter = Some(RowFilter {
        reads: vec![0],
        keep: Arc::new(|batch: &RecordBatch| {
            let n = batch.column(0).as_primitive::<Int64Type>();
            Ok(n.iter().map(|n| n.map(|n| n % 3 == 0)).collect())
        }),
    });
    let schema = dataset.projection_schema(&projection).unwrap();
    let batches: Vec<RecordBatch> = dataset
        .project_partition(
            &projection,
            &schema,
            &ScanOptions::new(5),
            Partition::new(0, 1).unwrap(),
        )
        .unwrap()
        .collect::<vshred::Result<_>>()
        .unwrap();
    let mut kept = Vec::new();
    for batch in &batches {
        let n = batch.column(0).as_primitive::<Int64Type>();
        let failures = batch.column(1).as_struct().column(1).as_string::<i32>();
        let text = batch.column(2).as_string::<i32>();
        for row in 0..batch.num_rows() {
            let n = n.value(row);
            kept.push(n);
            assert_eq!(text.value(row), format!("{{\"n\":{n},\"s\":\"r{n}\"}}"));
            let (file, in_file) = if n < 10 { (0, n) } else { (1, n - 10) };
            let failure = failures.value(row);
            assert!(
                failure.contains(&format!("part-{file:03}.parquet"))
                    && failure.contains(&format!("at row {in_file}:")),
                "n = {n}: {failure}"
            );
        }
    }
    assert_eq!(kept, (0..30).filter(|n| n % 3 == 0).collect::<Vec<i64>>());
}

/// A row filter that keeps most of a batch's rows has every row computed
/// and held (the engine's filter above drops the rest: the copy to drop
/// them cost more than it saved), yet a conversion that fails in a row it
/// drops fails nothing: the first row it keeps that fails is named.
#[test]
fn a_row_filter_keeping_most_rows_holds_them_all_and_fails_only_a_kept_row() {
    let dir = tempfile::tempdir().unwrap();
    let dataset = dataset(dir.path(), &[10]);
    let mut projection = projection(None);
    projection
        .outputs
        .push(("text".into(), Projected::Json("v".into())));
    let all_but_zero: vshred::parquet::KeepRows = Arc::new(|batch: &RecordBatch| {
        let n = batch.column(0).as_primitive::<Int64Type>();
        Ok(n.iter().map(|n| n.map(|n| n != 0)).collect())
    });
    projection.row_filter = Some(RowFilter {
        reads: vec![0],
        keep: all_but_zero.clone(),
    });
    let schema = dataset.projection_schema(&projection).unwrap();
    let read = |projection: &Projection, schema| {
        dataset
            .project_partition(
                projection,
                schema,
                &ScanOptions::new(5),
                Partition::new(0, 1).unwrap(),
            )
            .unwrap()
            .collect::<vshred::Result<Vec<RecordBatch>>>()
    };
    let rows: usize = read(&projection, &schema)
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 10);
    // Row 0 is dropped.
    projection.outputs.push(s_as_int64(OnFailure::Error));
    let schema = dataset.projection_schema(&projection).unwrap();
    let failed = read(&projection, &schema).unwrap_err().to_string();
    assert!(failed.contains("at row 1: $.s: \"r1\""), "{failed}");
}
