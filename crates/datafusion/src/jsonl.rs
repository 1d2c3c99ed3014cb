//! `read_jsonl('in.jsonl')`: JSON Lines as a table of one Variant column
//! `v`, each line one row, read by the core's encoder (so
//! `SELECT variant_get(v, '$.a', 'bigint') FROM read_jsonl('in.jsonl')`
//! queries JSON text without writing it first). With field names after the
//! path, `read_jsonl('in.jsonl', 'payload')`, each line is an object whose
//! named fields are Variant columns and whose others are typed columns, as
//! `encode --variant-field` makes them (their types chosen from the first
//! lines, read when the query is planned). A line that is not JSON is an
//! error naming its line and column.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use vshred::encode::{EncodeOptions, JsonRecords};

use crate::functions::external;
use crate::settings::VshredSettings;

/// Opens `path`, an error naming it if it cannot be. Only a regular file:
/// the file is read once to plan (its first lines make the columns) and
/// again to run, and a pipe read twice would give its rows to the plan
/// and none to the query (or wait for a second writer).
fn open(path: &Path) -> Result<File> {
    let metadata = std::fs::metadata(path).map_err(|e| external(vshred::Error::io(path, e)))?;
    if !metadata.is_file() {
        return Err(external(
            vshred::Error::from_message(
                "read_jsonl reads a regular file, which it reads twice (to plan, then to run); not a pipe, a device or a directory".into(),
            )
            .in_file(path),
        ));
    }
    File::open(path).map_err(|e| external(vshred::Error::io(path, e)))
}

/// The `read_jsonl` table function.
#[derive(Debug, Default)]
pub struct ReadJsonl;

impl TableFunctionImpl for ReadJsonl {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let usage = "read_jsonl takes the path of a JSON Lines file, then optionally the names of its Variant fields";
        let mut constants = Vec::with_capacity(args.exprs().len());
        for arg in args.exprs() {
            match arg {
                Expr::Literal(value, _) => match value.try_as_str() {
                    Some(Some(text)) => constants.push(text.to_string()),
                    _ => return plan_err!("{usage}, as constant strings"),
                },
                _ => return plan_err!("{usage}, as constant strings"),
            }
        }
        let Some((path, variant_fields)) = constants.split_first() else {
            return plan_err!("{usage}");
        };
        let path = PathBuf::from(path);
        let settings = VshredSettings::of(args.session().config_options());
        let options = EncodeOptions {
            variant_fields: variant_fields.to_vec(),
            inexact_numbers: settings.inexact_numbers.0,
            duplicate_keys: settings.duplicate_keys.0,
            ..EncodeOptions::default()
        };
        // The columns, from the first lines: a missing file or a bad line
        // among them fails at planning, naming it.
        let schema = records(&path, &options, |records| Ok(records.schema()))?;
        let lines = Arc::new(JsonLinesPartition {
            path,
            options,
            schema: schema.clone(),
        });
        Ok(Arc::new(StreamingTable::try_new(schema, vec![lines])?))
    }
}

/// Runs `f` on the [`JsonRecords`] of the file at `path`.
fn records<T>(
    path: &Path,
    options: &EncodeOptions,
    f: impl FnOnce(&mut JsonRecords<'_>) -> Result<T>,
) -> Result<T> {
    let mut input = BufReader::with_capacity(1 << 20, open(path)?);
    let mut records =
        JsonRecords::new(&mut input, options).map_err(|e| external(e.in_file(path)))?;
    f(&mut records)
}

/// The one partition of a `read_jsonl` table: the file, read in order.
#[derive(Debug)]
struct JsonLinesPartition {
    path: PathBuf,
    options: EncodeOptions,
    schema: SchemaRef,
}

impl PartitionStream for JsonLinesPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, context: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        let path = self.path.clone();
        let schema = self.schema.clone();
        let options = EncodeOptions {
            batch_rows: context.session_config().batch_size(),
            ..self.options.clone()
        };
        builder.spawn_blocking(move || {
            records(&path, &options, |records| {
                if records.schema().fields() != schema.fields() {
                    return plan_err!(
                        "{} changed since the query was planned: its first lines now make other columns",
                        path.display()
                    );
                }
                while let Some(batch) = records
                    .next_batch()
                    .map_err(|e| external(e.in_file(&path)))?
                {
                    if tx.blocking_send(Ok(batch)).is_err() {
                        // The query stopped reading (a LIMIT was reached).
                        break;
                    }
                }
                Ok(())
            })
        });
        builder.build()
    }
}
