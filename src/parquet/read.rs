//! Reads built on a [plan](super::plan) and the [executor](super::scan):
//! `variant_get` over a file (what `vshred get` does), whole rows as JSON
//! lines (what `vshred cat` does), whole rows as batches.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, RecordBatch, RecordBatchOptions, StructArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Error, ErrorKind, Result};
use crate::get::variant_get;
use crate::parquet::ParquetFile;
use crate::parquet::plan::{ReadStats, ScanPlan};
use crate::parquet::scan::ScanOptions;
use crate::path::VariantPath;
use crate::predicate::Predicate;
use crate::shred::{Shredder, ShreddingSchema};

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

impl GetRequest {
    /// The request with its filter's strings compared with date or
    /// timestamp columns (`type_of` gives a column's Arrow type) read as
    /// dates and instants ([`Predicate::with_instant_columns`]).
    pub(crate) fn with_instant_columns(
        &self,
        type_of: &dyn Fn(&str) -> Option<arrow::datatypes::DataType>,
    ) -> Result<GetRequest> {
        Ok(GetRequest {
            filter: match &self.filter {
                Some(filter) => Some(filter.with_instant_columns(type_of)?),
                None => None,
            },
            ..self.clone()
        })
    }
}
impl ParquetFile {
    /// Reads whole rows, in file order, a batch at a time (of at least one
    /// row, as [`get`](Self::get) reads: a size of 0 read nothing), on this
    /// thread. An error names the row group and, where the parquet crate's
    /// does not, the column; it ends the rows.
    pub fn batches(
        &self,
        batch_size: usize,
    ) -> Result<impl Iterator<Item = Result<RecordBatch>> + '_> {
        let plan = self.plan_columns(None)?;
        let batch_size = batch_size.max(1);
        let mut row_groups = 0..plan.row_groups().len();
        let mut reading = None;
        Ok(std::iter::from_fn(move || {
            loop {
                let (i, reader) = match &mut reading {
                    Some(read) => read,
                    None => {
                        let i = row_groups.next()?;
                        match self.row_group_batches(&plan, &plan.row_groups()[i], batch_size) {
                            Ok(Some(reader)) => reading.insert((i, reader)),
                            Ok(None) => continue,
                            Err(e) => {
                                row_groups = 0..0;
                                return Some(Err(e));
                            }
                        }
                    }
                };
                let row_group = &plan.row_groups()[*i];
                match reader.next(&self.path) {
                    Ok(Some(batch)) => return Some(Ok(batch)),
                    Ok(None) => reading = None,
                    Err(e) => {
                        (row_groups, reading) = (0..0, None);
                        return Some(Err(self.naming_the_column(&plan, row_group, e)));
                    }
                }
            }
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
        let plan = self.plan_columns(columns)?;
        self.render_json(&plan, None, options, sink)
    }

    /// Runs `plan` and renders its batches as JSON lines, with the columns
    /// of `order` (nulls for those not read) when given.
    fn render_json(
        &self,
        plan: &ScanPlan,
        order: Option<&[String]>,
        options: &ScanOptions,
        sink: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let variants = self.variant_columns();
        self.scan(
            plan,
            options,
            |batch| json_lines_of_batch(batch, order, &variants),
            sink,
        )
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
        sink: impl FnMut(&ArrayRef, &RecordBatch) -> Result<()>,
    ) -> Result<ReadStats> {
        let schema = self.arrow_schema();
        let type_of = |name: &str| Some(schema.field_with_name(name).ok()?.data_type().clone());
        let request = &request.with_instant_columns(&type_of)?;
        let plan = self.plan_get(request, with)?;
        self.run_get(&plan, request, with, options, sink)
    }

    /// Runs the plan of a `variant_get`: each batch's result, filtered, with
    /// the `with` columns beside it.
    fn run_get(
        &self,
        plan: &ScanPlan,
        request: &GetRequest,
        with: &[String],
        options: &ScanOptions,
        mut sink: impl FnMut(&ArrayRef, &RecordBatch) -> Result<()>,
    ) -> Result<ReadStats> {
        self.scan(
            plan,
            options,
            |batch| get_of_batch(request, with, &batch),
            |(values, with)| sink(&values, &with),
        )?;
        Ok(plan.stats().clone())
    }
}

/// The rows of `batch` as JSON lines, one block: its columns, or those of
/// `order` (null where the batch lacks one), with the `variants` columns
/// reconstructed.
pub(crate) fn json_lines_of_batch(
    batch: RecordBatch,
    order: Option<&[String]>,
    variants: &[String],
) -> Result<Vec<u8>> {
    let batch = match order {
        Some(names) => with_columns(&batch, names)?,
        None => batch,
    };
    let rows = crate::unshred::JsonRows::try_new(&batch, variants)?;
    let mut text = Vec::new();
    for row in 0..batch.num_rows() {
        rows.write_row(row, &mut text)?;
        text.push(b'\n');
    }
    Ok(text)
}

/// A `variant_get` over one batch: its result, filtered, and the `with`
/// columns beside it for the same rows. A column the batch lacks is null,
/// the Variant column included.
pub(crate) fn get_of_batch(
    request: &GetRequest,
    with: &[String],
    batch: &RecordBatch,
) -> Result<(ArrayRef, RecordBatch)> {
    let variant = match batch
        .column_by_name(&request.column)
        .and_then(|c| c.as_struct_opt())
    {
        Some(column) => column.clone(),
        // Not in this file: every row is null.
        None => null_variants(batch.num_rows()),
    };
    let with_batch = with_columns(batch, with)?;
    let get = |variant: &StructArray| {
        variant_get(variant, &request.path, &request.as_type, request.strict)
    };
    let Some(filter) = &request.filter else {
        return Ok((get(&variant)?, with_batch));
    };
    let mut names: Vec<String> = filter
        .operands()
        .into_iter()
        .filter_map(|o| o.column().map(str::to_string))
        .collect();
    let mut read = with_columns(batch, &names)?;
    names.push(request.column.clone());
    let columns: Vec<ArrayRef> = read
        .columns()
        .iter()
        .cloned()
        .chain([Arc::new(variant.clone()) as ArrayRef])
        .collect();
    read = record_batch(&names, columns, batch.num_rows())?;
    let keep = filter.evaluate(&read, &request.column)?;
    let filter_error = |e: arrow::error::ArrowError| Error::new(ErrorKind::Schema, e.to_string());
    let with_batch =
        arrow::compute::filter_record_batch(&with_batch, &keep).map_err(filter_error)?;
    if request.strict {
        // A value that does not convert fails a row the filter keeps, not
        // one it leaves out: the rows are filtered first, and an error's
        // row is moved back to the batch's.
        let kept = arrow::compute::filter(&variant, &keep).map_err(filter_error)?;
        let result = get(kept.as_struct()).map_err(|e| {
            e.map_row(|r| {
                let mut kept_rows = keep.iter().enumerate().filter(|(_, k)| *k == Some(true));
                kept_rows.nth(r as usize).map_or(r, |(row, _)| row as u64)
            })
        })?;
        return Ok((result, with_batch));
    }
    let result = arrow::compute::filter(&get(&variant)?, &keep).map_err(filter_error)?;
    Ok((result, with_batch))
}

/// The columns `names` of `batch`, in that order; one it does not have is
/// null.
fn with_columns(batch: &RecordBatch, names: &[String]) -> Result<RecordBatch> {
    let columns = names
        .iter()
        .map(|name| match batch.column_by_name(name) {
            Some(c) => c.clone(),
            None => arrow::array::new_null_array(&DataType::Null, batch.num_rows()),
        })
        .collect();
    record_batch(names, columns, batch.num_rows())
}

/// A batch of these columns, named so.
fn record_batch(names: &[String], columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let fields: Vec<Field> = names
        .iter()
        .zip(&columns)
        .map(|(name, c)| Field::new(name, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::new(ErrorKind::Schema, e.to_string()))
}

/// An unshredded Variant column of `rows` null rows.
pub(super) fn null_variants(rows: usize) -> StructArray {
    let mut shredder = Shredder::new(&ShreddingSchema::Variant);
    for _ in 0..rows {
        shredder.append_null();
    }
    shredder.finish()
}
