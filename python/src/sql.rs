//! `vshred.Session` and `vshred.sql`: a DataFusion session with the
//! Variant functions and tables of `vshred-datafusion`, as `vshred sql`
//! has it, whose results are pyarrow tables.
//!
//! Statements run on one multi-threaded tokio runtime for the process,
//! the interpreter released. The caller's thread waits for the result in
//! short steps, checking for signals between them, so that Ctrl-C stops a
//! long query (its task is dropped, and DataFusion's with it) as it stops
//! any Python code.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::ffi_stream::ArrowArrayStreamReader;
use arrow_pyarrow::{PyArrowType, Table};
use datafusion::common::TableReference;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;
use tokio::runtime::Runtime;
use vshred_datafusion::functions::error_message;
use vshred_datafusion::process_runtime::ProcessRuntime;
use vshred_datafusion::statements::{execute, in_statement, parse_statements};
use vshred_datafusion::table::VariantTable;

use crate::{exiting, failed};

/// How long the caller's thread waits for a statement between checks
/// for signals.
const SIGNAL_CHECKS: Duration = Duration::from_millis(50);

/// The runtime every session's statements run on, made by the first in
/// each process (a forked child makes its own: [`ProcessRuntime`]).
fn runtime() -> PyResult<&'static Runtime> {
    static RUNTIME: ProcessRuntime = ProcessRuntime::new(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("vshred-sql")
            .thread_stack_size(vshred::threads::STACK_BYTES)
            .enable_all()
            .build()
    });
    RUNTIME.get().map_err(failed)
}

/// Runs `work` on the runtime to its end, the interpreter released; a
/// signal's exception (KeyboardInterrupt) drops it and is raised instead.
fn run<T: Send + 'static>(
    py: Python<'_>,
    work: impl Future<Output = Result<T>> + Send + 'static,
) -> PyResult<T> {
    let (done, mut result) = channel();
    let task = runtime()?.spawn(async move {
        // The caller may have stopped waiting.
        let _ = done.send(work.await);
    });
    loop {
        // The receiver is not `Sync`: it goes to the waiting closure and back.
        let outcome;
        (result, outcome) = exiting::detach(py, move || {
            let outcome = result.recv_timeout(SIGNAL_CHECKS);
            (result, outcome)
        });
        match outcome {
            Ok(outcome) => return outcome.map_err(|e| failed(error_message(&e))),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(interrupted) = py.check_signals() {
                    task.abort();
                    return Err(interrupted);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(failed("the statement's task ended without a result"));
            }
        }
    }
}

/// A SQL session: tables registered by name, then statements run in it.
// `subclass`: the Python package documents it in a class of its own.
#[pyclass(module = "vshred._vshred", frozen, subclass)]
pub struct Session {
    ctx: SessionContext,
}

#[pymethods]
impl Session {
    /// A session with the Variant functions and tables; `settings` are
    /// DataFusion's (`{"datafusion.execution.batch_size": 8192}`).
    #[new]
    #[pyo3(signature = (settings = None))]
    fn new(settings: Option<HashMap<String, Bound<'_, PyAny>>>) -> PyResult<Session> {
        // SHOW and information_schema, as `vshred sql` has them.
        let mut config = vshred_datafusion::session_config().with_information_schema(true);
        for (key, value) in settings.unwrap_or_default() {
            // DataFusion spells booleans in lower case.
            let text = match value.cast::<PyBool>() {
                Ok(flag) => flag.is_true().to_string(),
                Err(_) => value.str()?.to_string(),
            };
            config
                .options_mut()
                .set(&key, &text)
                .map_err(|e| failed(format!("setting {key}: {e}")))?;
        }
        let _entered = runtime()?.enter();
        Ok(Session {
            ctx: vshred_datafusion::context(config),
        })
    }

    /// Makes `source` the table `name`: a Parquet file, directory, glob or
    /// object store URL (read as `FROM 'path'` reads it), or any Arrow
    /// table or stream of record batches (an object with
    /// `__arrow_c_stream__`: pyarrow, polars, DuckDB), read once, into
    /// memory.
    fn register(&self, py: Python<'_>, name: &str, source: &Bound<'_, PyAny>) -> PyResult<()> {
        if name.trim().is_empty() {
            return Err(failed("a table's name is empty"));
        }
        let table: Arc<dyn datafusion::catalog::TableProvider> = if let Ok(location) =
            source.extract::<std::path::PathBuf>()
        {
            let runtime = self.ctx.runtime_env();
            let location = location.to_string_lossy().into_owned();
            Arc::new(
                exiting::detach(py, || VariantTable::open_location(&location, &runtime))
                    .map_err(failed)?,
            )
        } else if source.hasattr("__arrow_c_stream__")? {
            // A stream of one array (a polars Series, a chunked array) has
            // no columns: Arrow's reader refuses its schema with a
            // ValueError, and a capsule that is not a stream's with a
            // TypeError. Anything else its producer raised is its own.
            let taken = source.extract::<PyArrowType<ArrowArrayStreamReader>>();
            let PyArrowType(stream) = taken.map_err(|e| {
                match e.is_instance_of::<PyValueError>(py) || e.is_instance_of::<PyTypeError>(py) {
                    true => not_a_source(name, source, &format!(": {}", e.value(py))),
                    false => e,
                }
            })?;
            let schema = stream.schema();
            // arrow-rs 59 panics importing some slices of nested arrays
            // (apache/arrow-rs#9235; the module copies pyarrow's first):
            // an error, not a PanicException.
            let collected = exiting::detach(py, || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    stream.collect::<Result<Vec<RecordBatch>, _>>()
                }))
            });
            let batches = collected
                .map_err(|_| {
                    failed(format!(
                        "table {name}: its Arrow batches could not be imported (a slice of a nested array, which arrow-rs 59 imports wrongly: pass a copy)"
                    ))
                })?
                .map_err(|e| failed(format!("table {name}: {e}")))?;
            Arc::new(MemTable::try_new(schema, vec![batches]).map_err(failed)?)
        } else {
            return Err(not_a_source(name, source, ""));
        };
        // A name with a dot is that name (`"a.b"` in the query), not a
        // schema and a table; others as SQL reads them (`Events` is
        // `events`, as `FROM Events` looks it up).
        let reference = match name.contains('.') {
            true => TableReference::bare(name),
            false => TableReference::from(name),
        };
        // Registered again, the name is the new source's.
        self.ctx
            .deregister_table(reference.clone())
            .map_err(failed)?;
        self.ctx.register_table(reference, table).map_err(failed)?;
        Ok(())
    }

    /// Runs the statements of `query` (separated by `;`) in turn; the rows
    /// of the last, as a `pyarrow.Table`.
    fn sql(&self, py: Python<'_>, query: String) -> PyResult<PyArrowType<Table>> {
        let ctx = self.ctx.clone();
        let (batches, schema) = run(py, async move {
            let mut last = (Vec::new(), Arc::new(Schema::empty()));
            let statements = parse_statements(&ctx, &query)?;
            let count = statements.len();
            for (index, statement) in statements.into_iter().enumerate() {
                last = async {
                    let rows = execute(&ctx, statement).await?;
                    let schema: SchemaRef = Arc::new(rows.schema().as_arrow().clone());
                    Ok::<_, DataFusionError>((rows.collect().await?, schema))
                }
                .await
                .map_err(|e| in_statement(e, index, count))?;
            }
            Ok(last)
        })?;
        Ok(PyArrowType(table(batches, schema)?))
    }
}

/// The error of table `name`'s `source`, which is none of those a table
/// is made of; `detail` follows.
fn not_a_source(name: &str, source: &Bound<'_, PyAny>, detail: &str) -> PyErr {
    let given = source
        .get_type()
        .name()
        .map_or_else(|_| "this".into(), |n| n.to_string());
    failed(format!(
        "table {name}: a source is a path, a URL or an Arrow table (an object whose \
         __arrow_c_stream__ gives record batches: a pyarrow Table, a polars DataFrame), \
         not {given}{detail}"
    ))
}

/// A table of `batches`, in their own schema when there are some (which
/// may carry metadata the plan's schema lacks).
fn table(batches: Vec<RecordBatch>, planned: SchemaRef) -> PyResult<Table> {
    let schema = batches.first().map_or(planned, RecordBatch::schema);
    let batches = batches
        .into_iter()
        .map(|batch| match batch.schema() == schema {
            true => Ok(batch),
            false => RecordBatch::try_new(schema.clone(), batch.columns().to_vec()),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    Table::try_new(batches, schema).map_err(failed)
}
