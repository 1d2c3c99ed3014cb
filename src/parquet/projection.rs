//! A projection: the columns a query engine asks of a file, each a whole
//! top-level column or one path of a Variant column as a type, and a
//! filter that may rule row groups and pages out. Its plan reads the union
//! of the outputs' leaves (a path's alone, never its whole Variant column);
//! each batch read becomes one Arrow batch of the projection's schema,
//! whatever the file's layout, so that the files of a dataset stream as one
//! table.
//!
//! The filter only prunes: rows of the row groups and pages read are all
//! returned, for the engine to filter. An engine may also hand over its
//! own filter of rows ([`RowFilter`]), so that the outputs it does not read
//! are computed for the rows it keeps alone: a Variant rebuilt or rendered
//! as JSON for every row read, only for the filter above to drop most of
//! them, was most of such a query's time.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, new_null_array,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, ErrorKind, Result};
use crate::explode::{exploded_type, variant_explode, variant_explode_outer};
use crate::get::{OnFailure, result_field_on, variant_get_on};
use crate::parquet::ScanPlan;
use crate::parquet::file::ParquetFile;
use crate::parquet::plan::{resolve, root_leaves};
use crate::parquet::read::null_variants;
use crate::parquet::schema::{VARIANT_EXTENSION_NAME, variant_field};
use crate::path::VariantPath;
use crate::predicate::Predicate;
use crate::shred::ShreddingSchema;
use crate::unshred::{json_strings, unshred};

/// One output column of a [`Projection`].
#[derive(Clone, Debug, PartialEq)]
pub enum Projected {
    /// A top-level column as it is: an ordinary column in its type, a
    /// Variant column unshredded (`metadata` and `value`).
    Column(String),
    /// `variant_get(column, path, as_type)`: only the path's leaves are
    /// read.
    Path {
        /// The Variant column.
        column: String,
        /// The path in it.
        path: VariantPath,
        /// The type of the result ([`ShreddingSchema::Variant`]: the
        /// sub-value).
        as_type: ShreddingSchema,
        /// What a value that does not convert gives.
        on_failure: OnFailure,
    },
    /// A Variant column as JSON text, rendered from its shredded columns
    /// as `cat` renders them (no Variant is rebuilt).
    Json(String),
    /// `variant_explode(column)` (`variant_explode_outer` when `outer`):
    /// each row's fields or elements, split where its shredded columns
    /// store them, with no row rebuilt whole.
    Explode {
        /// The Variant column.
        column: String,
        /// Whether a row without fields or elements gives an entry of
        /// nulls.
        outer: bool,
    },
}

/// The outputs a reader returns, and what rules row groups out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Projection {
    /// The output columns, in order, with their names.
    pub outputs: Vec<(String, Projected)>,
    /// A filter on paths of a Variant column (named first) and on
    /// top-level columns, that prunes row groups and pages; rows are not
    /// filtered.
    pub filter: Option<(String, Predicate)>,
    /// A filter known only once the query runs (the keys of a join's
    /// other side), likewise: it prunes what `filter` leaves, and what it
    /// prunes is counted apart ([`SkipReason::RuntimeFilter`]).
    ///
    /// [`SkipReason::RuntimeFilter`]: crate::parquet::SkipReason::RuntimeFilter
    pub runtime_filter: Option<(String, Predicate)>,
    /// The engine's filter of rows, if it hands one over.
    pub row_filter: Option<RowFilter>,
}

/// An engine's filter of a batch's rows, run between the outputs it reads
/// and the others: those it reads are computed for every row and given to
/// `keep` (as a batch of those outputs alone, in the order of `reads`);
/// the others are computed for the rows `keep` keeps (true; false and null
/// drop a row), and the batch holds those rows alone. Where it keeps more
/// than half of a batch's rows, all of them are computed and held, for the
/// engine's filter to drop (so a `RowFilter` is for an engine that filters
/// the rows again); a failure among them still fails only a row it keeps.
#[derive(Clone)]
pub struct RowFilter {
    /// The outputs `keep` reads, by index, in increasing order.
    pub reads: Vec<usize>,
    /// Which rows to keep.
    pub keep: KeepRows,
}

/// Which of a batch's rows to keep (see [`RowFilter`]).
pub type KeepRows = Arc<dyn Fn(&RecordBatch) -> Result<BooleanArray> + Send + Sync>;

impl std::fmt::Debug for RowFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowFilter")
            .field("reads", &self.reads)
            .finish_non_exhaustive()
    }
}

/// The same filter: the same outputs read by the same function.
impl PartialEq for RowFilter {
    fn eq(&self, other: &RowFilter) -> bool {
        self.reads == other.reads && Arc::ptr_eq(&self.keep, &other.keep)
    }
}

impl Projection {
    /// Its filters: the filter, then the runtime filter.
    pub fn filters(&self) -> Vec<&Predicate> {
        [&self.filter, &self.runtime_filter]
            .into_iter()
            .flatten()
            .map(|(_, p)| p)
            .collect()
    }

    /// The schema of the batches: `types` gives each ordinary column's type
    /// (`None` for a Variant column).
    pub fn schema(&self, types: impl Fn(&str) -> Option<DataType>) -> SchemaRef {
        let fields: Vec<Field> = self
            .outputs
            .iter()
            .map(|(name, output)| match output {
                Projected::Column(column) => match types(column) {
                    Some(t) => Field::new(name, t, true),
                    None => variant_field(name, &ShreddingSchema::Variant),
                },
                Projected::Path {
                    as_type,
                    on_failure,
                    ..
                } => result_field_on(name, as_type, *on_failure),
                Projected::Json(_) => Field::new(name, DataType::Utf8, true),
                Projected::Explode { outer, .. } => Field::new(name, exploded_type(*outer), false),
            })
            .collect();
        Arc::new(Schema::new(fields))
    }
}

impl ParquetFile {
    /// The plan of a projection over this file: the leaves of each output
    /// it has (the others read as null) and of the filter, row groups and
    /// pages the filter rules out skipped; of the row groups `wanted` takes.
    pub(crate) fn plan_projection(
        &self,
        projection: &Projection,
        wanted: impl Fn(usize) -> bool,
    ) -> Result<ScanPlan> {
        let schema = self.parquet_schema();
        let mut roots = Vec::new();
        let mut targets = Vec::new();
        for (_, output) in &projection.outputs {
            match output {
                Projected::Column(name)
                | Projected::Json(name)
                | Projected::Explode { column: name, .. } => {
                    roots.extend(self.present_roots(std::slice::from_ref(name)))
                }
                Projected::Path {
                    column,
                    path,
                    as_type,
                    ..
                } => {
                    if let Ok(group) = self.variant_column(column) {
                        // A primitive may be read from its typed leaf alone;
                        // a struct or list needs the residuals below it too.
                        let typed = as_type.is_typed()
                            && !matches!(
                                as_type,
                                ShreddingSchema::Object(_) | ShreddingSchema::Array(_)
                            );
                        targets.push((resolve(group, path), typed));
                    }
                }
            }
        }
        let filter = projection
            .filter
            .as_ref()
            .map(|(column, f)| (f, self.variant_column(column).ok()));
        let runtime = projection
            .runtime_filter
            .as_ref()
            .map(|(column, f)| (f, self.variant_column(column).ok()));
        self.plan(
            filter,
            runtime,
            |meta| {
                let mut leaves: Vec<usize> = root_leaves(schema, &roots).collect();
                for (target, typed) in &targets {
                    leaves.extend(target.leaves(schema, meta, *typed));
                }
                leaves
            },
            wanted,
        )
    }
}

/// The projection's outputs of one batch read by its plan, in `schema`
/// ([`Projection::schema`]): ordinary columns cast to the dataset's type,
/// columns and paths the file lacks null; of the rows its
/// [`RowFilter`] keeps, if it has one.
pub(crate) fn projection_of_batch(
    projection: &Projection,
    schema: &SchemaRef,
    batch: &RecordBatch,
    place: &dyn Fn(Error) -> Error,
) -> Result<RecordBatch> {
    let output = |i: usize, batch: &RecordBatch, place: &dyn Fn(Error) -> Error| {
        output_of_batch(&projection.outputs[i].1, schema.field(i), batch, place)
    };
    let all = 0..projection.outputs.len();
    let Some(filter) = &projection.row_filter else {
        let columns = all
            .map(|i| output(i, batch, place))
            .collect::<Result<_>>()?;
        return batch_of(schema, columns, batch.num_rows());
    };
    let read: Vec<ArrayRef> = filter
        .reads
        .iter()
        .map(|&i| output(i, batch, place))
        .collect::<Result<_>>()?;
    let read_schema = Arc::new(schema.project(&filter.reads).map_err(schema_error)?);
    let keep = (filter.keep)(&batch_of(&read_schema, read.clone(), batch.num_rows())?)?;
    if keep.len() != batch.num_rows() {
        return Err(Error::new(
            ErrorKind::Schema,
            format!(
                "a row filter gave {} answers for {} rows",
                keep.len(),
                batch.num_rows()
            ),
        ));
    }
    let kept_rows: Vec<u64> = (0..keep.len())
        .filter(|&r| keep.is_valid(r) && keep.value(r))
        .map(|r| r as u64)
        .collect();
    // Most rows kept: the copy of the columns read, to drop the others,
    // costs more than computing the outputs for every row (a third more
    // time at nine rows in ten), and an engine's filter above drops them.
    // A failure there is taken again over the rows kept, below: only a kept
    // row fails.
    if kept_rows.len() * 2 > batch.num_rows() {
        let mut read = read.iter().cloned();
        let columns = all
            .clone()
            .map(|i| match filter.reads.binary_search(&i) {
                Ok(_) => Ok(read.next().expect("one array per output read")),
                Err(_) => output(i, batch, place),
            })
            .collect::<Result<_>>();
        if let Ok(columns) = columns {
            return batch_of(schema, columns, batch.num_rows());
        }
    }
    let keep = match keep.null_count() {
        0 => keep,
        _ => arrow::compute::prep_null_mask_filter(&keep),
    };
    let kept = arrow::compute::filter_record_batch(batch, &keep).map_err(schema_error)?;
    // A row of `kept` is named by its row in `batch`.
    let in_batch = |e: Error| e.map_row(|r| kept_rows.get(r as usize).copied().unwrap_or(r));
    let place_kept = |e: Error| place(in_batch(e));
    let mut read = read.into_iter();
    let columns = all
        .map(|i| match filter.reads.binary_search(&i) {
            Ok(_) => {
                let array = read.next().expect("one array per output read");
                arrow::compute::filter(&array, &keep).map_err(schema_error)
            }
            Err(_) => output(i, &kept, &place_kept).map_err(in_batch),
        })
        .collect::<Result<_>>()?;
    batch_of(schema, columns, kept_rows.len())
}

/// `output` of one batch read by its plan, as `field` types it.
fn output_of_batch(
    output: &Projected,
    field: &Field,
    batch: &RecordBatch,
    place: &dyn Fn(Error) -> Error,
) -> Result<ArrayRef> {
    let rows = batch.num_rows();
    let variant = |name: &str| match batch.column_by_name(name).and_then(|c| c.as_struct_opt()) {
        Some(column) => column.clone(),
        None => null_variants(rows),
    };
    let array: ArrayRef = match output {
        Projected::Column(name) => match batch.column_by_name(name) {
            None => new_null_array(field.data_type(), rows),
            Some(_) if field.extension_type_name() == Some(VARIANT_EXTENSION_NAME) => {
                Arc::new(unshred(&variant(name))?)
            }
            Some(column) => column.clone(),
        },
        Projected::Path {
            column,
            path,
            as_type,
            on_failure,
        } => variant_get_on(&variant(column), path, as_type, *on_failure, place)?,
        Projected::Json(column) => Arc::new(json_strings(&variant(column))?),
        Projected::Explode { column, outer } => {
            let variant = variant(column);
            Arc::new(match outer {
                false => variant_explode(&variant)?,
                true => variant_explode_outer(&variant)?,
            })
        }
    };
    if array.data_type() == field.data_type() {
        Ok(array)
    } else {
        arrow::compute::cast(&array, field.data_type())
            .map_err(|e| Error::new(ErrorKind::Schema, format!("{}: {e}", field.name())))
    }
}

fn batch_of(schema: &SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(schema_error)
}

fn schema_error(e: arrow::error::ArrowError) -> Error {
    Error::new(ErrorKind::Schema, e.to_string())
}
