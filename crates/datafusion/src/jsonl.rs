//! `read_jsonl('in.jsonl')`: JSON Lines as a table of one Variant column
//! `v`, each line one row, read by the core's encoder (so
//! `SELECT variant_get(v, '$.a', 'bigint') FROM read_jsonl('in.jsonl')`
//! queries JSON text without writing it first). A line that is not JSON
//! is an error naming its line and column.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, plan_err};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use vshred::encode::VariantLines;
use vshred::get::result_field;
use vshred::shred::ShreddingSchema;

use crate::functions::external;

/// Opens `path`, an error naming it if it cannot be.
fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| {
        external(vshred::Error::from_message(format!(
            "{}: {e}",
            path.display()
        )))
    })
}

/// The `read_jsonl` table function.
#[derive(Debug, Default)]
pub struct ReadJsonl;

impl TableFunctionImpl for ReadJsonl {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let [Expr::Literal(path, _)] = args.exprs() else {
            return plan_err!("read_jsonl takes one argument, the path of a JSON Lines file");
        };
        let Some(Some(path)) = path.try_as_str() else {
            return plan_err!("read_jsonl: the path must be a constant string");
        };
        let path = PathBuf::from(path);
        // Checked here, so that a missing file fails at planning, naming it.
        open(&path)?;
        let schema: SchemaRef = Arc::new(Schema::new(vec![result_field(
            "v",
            &ShreddingSchema::Variant,
        )]));
        let lines = Arc::new(JsonLinesPartition {
            path,
            schema: schema.clone(),
        });
        Ok(Arc::new(StreamingTable::try_new(schema, vec![lines])?))
    }
}

/// The one partition of a `read_jsonl` table: the file, read in order.
#[derive(Debug)]
struct JsonLinesPartition {
    path: PathBuf,
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
        let batch_rows = context.session_config().batch_size();
        builder.spawn_blocking(move || {
            let in_file = |e: vshred::Error| external(e.in_file(&path));
            let mut input = BufReader::with_capacity(1 << 20, open(&path)?);
            let mut lines = VariantLines::new(&mut input, batch_rows);
            while let Some(column) = lines.next_batch().map_err(in_file)? {
                let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(column)])?;
                if tx.blocking_send(Ok(batch)).is_err() {
                    // The query stopped reading (a LIMIT was reached).
                    break;
                }
            }
            Ok(())
        });
        builder.build()
    }
}
