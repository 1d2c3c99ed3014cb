//! A dataset's projection read in partitions: `count` readers share its row
//! groups out, each reading its own share on the thread that calls it, so
//! that a query engine's partitions (or a distributed engine's tasks, in
//! processes of their own) read a dataset together, each row group once,
//! none waiting for another.
//!
//! The share is fixed before anything is read: the `g`-th row group of the
//! dataset (in file order, then row-group order) is partition
//! `g % count`'s. Fixed, because a partition may run where its siblings do
//! not (one task of a distributed query), so none may take work from
//! another; round robin, because a filter on a sorted column prunes a run
//! of row groups, which a split into contiguous ranges would leave to one
//! partition. A partition opens only the files holding some of its row
//! groups, and plans only those (statistics, bloom filters and page
//! indexes of the others are not read).
//!
//! Batches come in file order within a partition; there is no order
//! between partitions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

use super::{Dataset, DatasetStats, PlannedFile};
use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{FileRows, Projection, RowGroupBatches, ScanOptions, projection_of_batch};

/// One share of a dataset's row groups: the `index`-th of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    index: usize,
    count: usize,
}

impl Partition {
    /// The `index`-th of `count` partitions; `index` must be below `count`.
    pub fn new(index: usize, count: usize) -> Result<Partition> {
        if index >= count {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("there is no partition {index} of {count}"),
            ));
        }
        Ok(Partition { index, count })
    }

    /// All of a dataset, in order.
    pub fn whole() -> Partition {
        Partition { index: 0, count: 1 }
    }

    /// Its index.
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many partitions share the dataset.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the dataset's `row_group`-th row group is this partition's.
    fn holds(&self, row_group: usize) -> bool {
        row_group % self.count == self.index
    }

    /// Whether any of `row_groups` row groups from the dataset's `first`-th
    /// is this partition's.
    fn holds_any(&self, first: usize, row_groups: usize) -> bool {
        row_groups >= self.count || (first..first + row_groups).any(|g| self.holds(g))
    }
}

impl Dataset {
    /// `batch`, of `planned`, with the `key=value` directories' columns
    /// that `projection` outputs.
    fn with_projected_hive_columns(
        &self,
        projection: &Projection,
        planned: &PlannedFile,
        batch: RecordBatch,
    ) -> Result<RecordBatch> {
        self.with_hive_columns_of(planned, batch, |name| {
            projection
                .outputs
                .iter()
                .any(|(_, o)| matches!(o, crate::parquet::Projected::Column(c) if c == name))
        })
    }

    /// The files holding some row group of any of `partitions`, each with
    /// the number of its first row group: a dataset
    /// ([`Dataset::from_numbered_files`]) from which those partitions read
    /// what they read from this one, whose footers are this one's files'
    /// alone. How a distributed query sends each task its files, not all
    /// of them.
    pub fn share(&self, partitions: &[Partition]) -> Result<Dataset> {
        let footers = self.footers(&ScanOptions::default())?;
        let shared: Vec<usize> = (0..self.files.len())
            .filter(|&i| {
                let (first, row_groups) = footers.row_groups_of(i);
                partitions.iter().any(|p| p.holds_any(first, row_groups))
            })
            .collect();
        let files = shared
            .iter()
            .map(|&i| (self.files[i].clone(), footers.first_row_group[i]))
            .collect();
        Ok(Dataset::from_numbered_files(files)
            .with_expected_files(shared.iter().map(|&i| footers.identities[i]).collect())
            .with_footer_budget(self.footer_budget)
            .with_storage(self.storage.clone())
            .with_hive_columns(self.hive_columns().cloned()))
    }

    /// The batches of the whole dataset's projection, each of `schema`,
    /// in file order, read on the worker pool as [`get_with`] reads (the
    /// filter pruning row groups and pages alike); `sink` gets them in
    /// order. For a reader of whole tables, where partitions suit an
    /// engine's threads.
    ///
    /// [`get_with`]: Dataset::get_with
    pub fn project(
        &self,
        projection: &Projection,
        schema: &SchemaRef,
        options: &ScanOptions,
        sink: impl FnMut(RecordBatch) -> Result<()>,
    ) -> Result<DatasetStats> {
        self.check_projection(projection, schema)?;
        self.scan(
            options,
            &projection.filters(),
            |file| file.plan_projection(projection, |_| true),
            |planned, batch| {
                let batch = self.with_projected_hive_columns(projection, planned, batch)?;
                // The executor moves an error to the file's row; a failure
                // kept as data is not moved, so names no row.
                let path = planned.file.path();
                projection_of_batch(projection, schema, &batch, &|e| {
                    e.without_row().in_file(path)
                })
                .map_err(|e| e.in_file(path))
            },
            sink,
        )
    }

    /// The batches of `partition`'s share of the dataset, each of `schema`
    /// (see [`projection_schema`](Self::projection_schema)), read by the
    /// projection's plan of each file (a path's leaves alone, row groups
    /// and pages the filter rules out skipped) on the thread that iterates.
    /// The first error ends the iteration.
    pub fn project_partition(
        self: &Arc<Self>,
        projection: &Projection,
        schema: &SchemaRef,
        options: &ScanOptions,
        partition: Partition,
    ) -> Result<PartitionBatches> {
        self.check_projection(projection, schema)?;
        self.footers(options)?;
        Ok(PartitionBatches {
            dataset: self.clone(),
            projection: projection.clone(),
            schema: schema.clone(),
            batch_size: options.batch_size.max(1),
            partition,
            next_file: 0,
            file: None,
            stats: DatasetStats::default(),
            read_counters: Vec::new(),
            files_planned: Vec::new(),
            files_read: Vec::new(),
            ended: false,
        })
    }
}

/// The reader of a row group, with where its rows are in the file.
type RowGroupReader = (RowGroupBatches, FileRows);

/// The batches of one [`Partition`] of a dataset's projection, read as
/// they are asked for.
pub struct PartitionBatches {
    dataset: Arc<Dataset>,
    projection: Projection,
    schema: SchemaRef,
    batch_size: usize,
    partition: Partition,
    /// The next file to look at.
    next_file: usize,
    /// The file being read: its plan of this partition's row groups, the
    /// next of them to read, and the reader of the one being read with
    /// where its rows are in the file.
    file: Option<(PlannedFile, usize, Option<RowGroupReader>)>,
    stats: DatasetStats,
    read_counters: Vec<Arc<AtomicU64>>,
    files_planned: Vec<usize>,
    files_read: Vec<usize>,
    ended: bool,
}

impl PartitionBatches {
    /// What the partition read so far: of the files it planned (those
    /// holding some of its row groups), their row groups of its share.
    pub fn stats(&self) -> DatasetStats {
        let mut stats = self.stats.clone();
        stats.read.bytes_read = self
            .read_counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        stats
    }

    /// The indices (in the dataset's order) of the files the partition
    /// planned so far: those holding some of its row groups.
    pub fn files_planned(&self) -> &[usize] {
        &self.files_planned
    }

    /// The indices of the files of which the partition read some row group
    /// so far: a file that partitions planned and none read was pruned
    /// whole.
    pub fn files_read(&self) -> &[usize] {
        &self.files_read
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some((planned, next, reader)) = &mut self.file {
                let path = planned.file.path();
                if let Some((batches, rows)) = reader
                    && let Some(batch) = batches.next(path).map_err(|e| {
                        let row_group = &planned.plan.row_groups()[*next - 1];
                        planned.file.naming_the_column(&planned.plan, row_group, e)
                    })?
                {
                    let batch = self.dataset.with_projected_hive_columns(
                        &self.projection,
                        planned,
                        batch,
                    )?;
                    let place = |e| rows.in_file(e).in_file(path);
                    let projected =
                        projection_of_batch(&self.projection, &self.schema, &batch, &place)
                            .map_err(place)?;
                    rows.advance(batch.num_rows());
                    return Ok(Some(projected));
                }
                let row_groups = planned.plan.row_groups();
                *reader = match planned.plan.next_read(*next) {
                    Some(i) => {
                        *next = i + 1;
                        let plan = &planned.plan;
                        planned
                            .file
                            .row_group_batches(plan, &row_groups[i], self.batch_size)
                            .map_err(|e| e.in_file(path))?
                            .map(|batches| (batches, FileRows::of(&planned.file, &row_groups[i])))
                    }
                    None => None,
                };
                if reader.is_some() {
                    continue;
                }
            }
            if !self.open_next_file()? {
                return Ok(None);
            }
        }
    }

    /// Opens and plans the next file holding some of the partition's row
    /// groups; `false` when there is none.
    fn open_next_file(&mut self) -> Result<bool> {
        let footers = self.dataset.footers(&ScanOptions::default())?;
        while self.next_file < self.dataset.files.len() {
            let i = self.next_file;
            self.next_file += 1;
            let (first, row_groups) = footers.row_groups_of(i);
            if !self.partition.holds_any(first, row_groups) {
                continue;
            }
            let hive = self.dataset.hive_values(i)?;
            if self
                .dataset
                .ruled_out_by_directories(hive.as_ref(), &self.projection.filters())
            {
                let mine = (first..first + row_groups)
                    .filter(|&g| self.partition.holds(g))
                    .count();
                self.stats.files += 1;
                self.stats.files_skipped += 1;
                self.files_planned.push(i);
                self.stats.read.skip_by_directories(mine);
                continue;
            }
            let partition = self.partition;
            let planned = self.dataset.open_planned(footers, i, hive, |file| {
                file.plan_projection(&self.projection, |rg| partition.holds(first + rg))
            })?;
            let plan = planned.plan.stats();
            self.stats.files += 1;
            self.files_planned.push(i);
            if plan.row_groups_read == 0 {
                self.stats.files_skipped += 1;
            } else {
                self.files_read.push(i);
            }
            self.stats.read.add(plan.clone());
            self.read_counters.push(planned.file.read_counter());
            self.file = Some((planned, 0, None));
            return Ok(true);
        }
        Ok(false)
    }
}

impl Iterator for PartitionBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        let next = self.next_batch().transpose();
        self.ended = !matches!(next, Some(Ok(_)));
        next
    }
}
