//! Reads built on a [plan](super::plan) and the [executor](super::scan):
//! `variant_get` over a file (what `vshred get` does), whole rows as JSON
//! lines (what `vshred cat` does), whole rows as batches.

use arrow::array::{ArrayRef, AsArray, RecordBatch};

use crate::error::{Error, ErrorKind, Result};
use crate::get::variant_get;
use crate::parquet::ParquetFile;
use crate::parquet::plan::ReadStats;
use crate::parquet::scan::{ScanOptions, next_batch};
use crate::path::VariantPath;
use crate::predicate::Predicate;
use crate::shred::ShreddingSchema;

/// A `variant_get` over a file.
#[derive(Clone, Debug)]
pub struct GetRequest {
    /// The Variant column.
    pub column: String,
    /// The path inside it.
    pub path: VariantPath,
    /// The result type ([`ShreddingSchema::Variant`] for the sub-value).
    pub as_type: ShreddingSchema,
    /// Fail on values that do not convert instead of returning null.
    pub strict: bool,
    /// Only rows where this holds.
    pub filter: Option<Predicate>,
}
impl ParquetFile {
    /// Reads whole rows, in file order, a batch at a time.
    pub fn batches(&self, batch_size: usize) -> Result<impl Iterator<Item = Result<RecordBatch>>> {
        let reader = self
            .builder()?
            .with_batch_size(batch_size)
            .build()
            .map_err(|e| self.error(e))?;
        let path = self.path.clone();
        let mut reader = reader;
        Ok(std::iter::from_fn(move || {
            next_batch(&path, &mut reader).transpose()
        }))
    }

    /// Reads whole rows like [`batches`](Self::batches), but turns each
    /// batch into a `T` with `map` on worker threads ([`scan`](Self::scan)),
    /// and hands the results to `sink` on this thread in file order. Stops
    /// at the first error, from `map` or `sink`.
    pub fn map_batches<T: Send>(
        &self,
        batch_size: usize,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        let plan = self.plan_columns(None)?;
        self.scan(&plan, &ScanOptions::new(batch_size), map, sink)
    }

    /// Every row as one JSON object per line, every column by name and
    /// Variants reconstructed ([`JsonRows`](crate::unshred::JsonRows)):
    /// rendered a batch at a time on the executor's worker threads, each
    /// batch's lines handed to `sink` as one block, in file order. What
    /// `vshred cat` prints. `columns` chooses the top-level columns (all
    /// when `None`); they come in the file's order.
    pub fn json_lines(
        &self,
        columns: Option<&[String]>,
        options: &ScanOptions,
        sink: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let variants = self.variant_columns();
        let render = |batch: RecordBatch| {
            let rows = crate::unshred::JsonRows::try_new(&batch, &variants)?;
            let mut text = Vec::new();
            for row in 0..batch.num_rows() {
                rows.write_row(row, &mut text)?;
                text.push(b'\n');
            }
            Ok(text)
        };
        let plan = self.plan_columns(columns)?;
        self.scan(&plan, options, render, sink)
    }

    /// Runs a `variant_get` over the file: reads only the leaves the path
    /// (and the filter) need, skips row groups the filter rules out
    /// ([`plan_get`](Self::plan_get)), and hands each batch's result
    /// (filtered) to `sink`, in file order. The row groups are read and
    /// resolved on worker threads ([`scan`](Self::scan)).
    pub fn get(
        &self,
        request: &GetRequest,
        batch_size: usize,
        mut sink: impl FnMut(&ArrayRef) -> Result<()>,
    ) -> Result<ReadStats> {
        let options = ScanOptions::new(batch_size);
        self.get_with(request, &[], &options, |values, _| sink(values))
    }

    /// [`get`](Self::get), with the top-level columns named in `with` read
    /// too and handed to `sink` beside each batch's result, for the same
    /// rows (the row's `id`, say).
    pub fn get_with(
        &self,
        request: &GetRequest,
        with: &[String],
        options: &ScanOptions,
        mut sink: impl FnMut(&ArrayRef, &RecordBatch) -> Result<()>,
    ) -> Result<ReadStats> {
        let plan = self.plan_get(request, with)?;
        let resolve_batch = |batch: RecordBatch| {
            let Some(struct_column) = batch
                .column_by_name(&request.column)
                .and_then(|c| c.as_struct_opt())
            else {
                return Err(self.error(format!("column {} was not read", request.column)));
            };
            let result = variant_get(
                struct_column,
                &request.path,
                &request.as_type,
                request.strict,
            )?;
            let with_batch = batch
                .project(
                    &with
                        .iter()
                        .filter_map(|name| batch.schema_ref().index_of(name).ok())
                        .collect::<Vec<_>>(),
                )
                .map_err(|e| self.error(e))?;
            match &request.filter {
                Some(filter) => {
                    let keep = filter.evaluate(&batch, &request.column)?;
                    let filtered = arrow::compute::filter(&result, &keep)
                        .and_then(|r| {
                            arrow::compute::filter_record_batch(&with_batch, &keep).map(|w| (r, w))
                        })
                        .map_err(|e| Error::new(ErrorKind::Schema, e.to_string()))?;
                    Ok(filtered)
                }
                None => Ok((result, with_batch)),
            }
        };
        self.scan(&plan, options, resolve_batch, |(values, with)| {
            sink(&values, &with)
        })?;
        Ok(plan.stats().clone())
    }
}
