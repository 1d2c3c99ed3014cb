//! A projection: the columns a query engine asks of a file, each a whole
//! top-level column or one path of a Variant column as a type, and a
//! filter that may rule row groups and pages out. Its plan reads the union
//! of the outputs' leaves (a path's alone, never its whole Variant column);
//! each batch read becomes one Arrow batch of the projection's schema,
//! whatever the file's layout, so that the files of a dataset stream as one
//! table.
//!
//! The filter only prunes: rows of the row groups and pages read are all
//! returned, for the engine to filter.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions, new_null_array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, ErrorKind, Result};
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
                Projected::Column(name) | Projected::Json(name) => {
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
/// columns and paths the file lacks null.
pub(crate) fn projection_of_batch(
    projection: &Projection,
    schema: &SchemaRef,
    batch: &RecordBatch,
    place: &dyn Fn(Error) -> Error,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let variant = |name: &str| match batch.column_by_name(name).and_then(|c| c.as_struct_opt()) {
        Some(column) => column.clone(),
        None => null_variants(rows),
    };
    let columns = projection
        .outputs
        .iter()
        .zip(schema.fields())
        .map(|((_, output), field)| {
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
            };
            if array.data_type() == field.data_type() {
                Ok(array)
            } else {
                arrow::compute::cast(&array, field.data_type())
                    .map_err(|e| Error::new(ErrorKind::Schema, format!("{}: {e}", field.name())))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
    .map_err(|e| Error::new(ErrorKind::Schema, e.to_string()))
}
