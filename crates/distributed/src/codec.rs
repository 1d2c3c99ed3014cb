//! How our nodes travel in a task's plan, a [`VariantScanExec`] and a
//! [`WritePartitionsExec`], and how a worker checks one it receives: the
//! bytes come from the network, so nothing in them is trusted.
//!
//! A scan is its files, its projection (each output a column, a column as
//! JSON, or a path as a type, all in their text forms), the filter it
//! prunes by (in the filter syntax), its partitions, its task's share, and
//! its output schema (an Arrow IPC stream with no batches). On the wire:
//! the JSON of the rest, its length first (4 bytes, little-endian), then
//! the schema. The text forms are parsed back on arrival, so a scan that
//! would not come back the same is refused when it is sent: an output
//! must come back equal, and a filter that would not is left out (it only
//! prunes, so the answer is the same). Joins' runtime filters travel as
//! DataFusion's protobuf of the expression, through the plan's own
//! converter: on arrival the converter gives the scan the very filter the
//! join in the same task updates (a broadcast join's, say), so it prunes
//! there as in one process. A filter whose join is in another stage stays
//! empty, which prunes nothing.
//!
//! A write is its directory, its files' prefix and its `COPY` options as
//! they were given (parsed again on arrival); the worker adds its task's
//! number to the prefix, so that tasks write files of their own.
//!
//! On arrival, besides parsing: the sizes are bounded (files, outputs,
//! partitions, tasks, nesting of the texts), and every file must be, once
//! its symlinks are resolved, beneath one of the worker's data roots: the
//! files a scan reads, and a write's directory (its nearest existing
//! ancestor resolved, the rest without `..`) and schema file, if any.
//!
//! A scan's files may be URLs of an object store ([`StoreFiles`]): the
//! worker reads them from the store its own session registered for that
//! URL, never one the plan describes. A `file://` URL is checked as the
//! path it names; another must be beneath a data root given as a URL of
//! the same store (`s3://bucket/logs/`), segment by segment, with no `.`
//! or `..` segment.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::DistributedTaskContext;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::PhysicalExprNode;
use prost::Message as _;
use serde::{Deserialize, Serialize};
use vshred::dataset::hive::{HiveColumns, HiveType};
use vshred::dataset::{Dataset, FileIdentity};
use vshred::encode::ShredMode;
use vshred::get::OnFailure;
use vshred::parquet::{Projected, Projection};
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;
use vshred_datafusion::copy::{CopyOptions, OUR_OPTIONS, SHARED_OPTIONS};
use vshred_datafusion::scan::VariantScanExec;
use vshred_datafusion::store::{StoreFiles, store_url};
use vshred_datafusion::write_partitions::WritePartitionsExec;

use crate::data_roots::DataRoots;

/// The codec of our plans: the coordinator's (which sends) and a
/// worker's (which checks what it receives against its data roots).
#[derive(Debug, Clone, Default)]
pub struct VariantCodec {
    /// Where a worker reads; `None` on the coordinator, which reads what
    /// its user names.
    data_roots: Option<Arc<DataRoots>>,
}

/// Most files, outputs, partitions and tasks a scan may have.
const MAX_FILES: usize = 1 << 20;
const MAX_OUTPUTS: usize = 1 << 16;
const MAX_PARTITIONS: usize = 1 << 12;
const MAX_TASKS: usize = 1 << 16;
/// Deepest nesting of brackets in a path, type or filter text: the
/// parsers recurse.
const MAX_NESTING: usize = 64;
/// Most runtime filters a scan may carry, and bytes of each.
const MAX_RUNTIME_FILTERS: usize = 16;
const MAX_RUNTIME_FILTER_BYTES: usize = 1 << 20;
/// Longest file name prefix of a write.
const MAX_PREFIX: usize = 64;
/// The wire format's version. 3: a write gives each file's staged name,
/// for the coordinator to rename (version 2's workers renamed their own).
/// 4: a scan's files carry their footers' fingerprints with their sizes.
const VERSION: u32 = 4;

impl VariantCodec {
    /// The coordinator's codec.
    pub fn new() -> VariantCodec {
        VariantCodec::default()
    }

    /// A worker's codec: scans of files outside `roots` are refused. A
    /// root is a directory, which must exist, or the URL of a prefix in
    /// an object store (`s3://bucket/logs/`; `file://` names a directory).
    pub fn with_data_roots(roots: &[PathBuf]) -> Result<VariantCodec> {
        Ok(VariantCodec::with_roots(Arc::new(DataRoots::new(roots)?)))
    }

    /// A worker's codec, of roots its stores share.
    pub(crate) fn with_roots(roots: Arc<DataRoots>) -> VariantCodec {
        VariantCodec {
            data_roots: Some(roots),
        }
    }

    /// Fails unless `file` is beneath a data root (on a worker).
    fn check_file(&self, file: &Path) -> Result<()> {
        match &self.data_roots {
            Some(roots) => roots.check_file(file).map_err(refused),
            None => Ok(()),
        }
    }

    /// Fails unless a write may make `dir` (on a worker).
    fn check_dir(&self, dir: &Path) -> Result<()> {
        match &self.data_roots {
            Some(roots) => roots.check_dir(dir).map_err(refused),
            None => Ok(()),
        }
    }
}

/// A scan's file as a message names it: a local path made absolute, as
/// this process finds it (a worker would take a relative one from its own
/// working directory, a file of the same name elsewhere); a URL as it is.
fn sent_file(file: &Path) -> Result<String> {
    if store_url(&file.to_string_lossy()).is_some() {
        return sent_path(file);
    }
    let absolute = std::path::absolute(file).map_err(|e| {
        DataFusionError::Plan(format!(
            "{}: cannot be sent to a worker: {e}",
            file.display()
        ))
    })?;
    sent_path(&absolute)
}

/// `path` as the text a message carries.
fn sent_path(path: &Path) -> Result<String> {
    path.to_str().map(str::to_string).ok_or_else(|| {
        DataFusionError::Plan(format!(
            "{} cannot be sent to a worker: its name is not UTF-8",
            path.display()
        ))
    })
}

/// A plan the worker will not run. Not a planning error: the coordinator
/// planned it, and prints the refusal as it is.
fn refused(message: String) -> DataFusionError {
    DataFusionError::External(format!("refused: {message}").into())
}

/// A node on the wire, its kind in `node`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "snake_case")]
enum Message {
    Scan(ScanMessage),
    Write(WriteMessage),
}

#[derive(Serialize, Deserialize)]
struct WriteMessage {
    version: u32,
    dir: String,
    prefix: String,
    options: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
struct ScanMessage {
    version: u32,
    files: Vec<String>,
    outputs: Vec<OutputMessage>,
    /// The Variant column and the filter, in the filter syntax.
    filter: Option<(String, String)>,
    partitions: usize,
    task: (usize, usize),
    /// Each a `PhysicalExprNode`'s protobuf.
    #[serde(default)]
    runtime_filters: Vec<Vec<u8>>,
    /// The filter the scan runs on its rows, a `PhysicalExprNode`'s
    /// protobuf.
    #[serde(default)]
    row_filter: Option<Vec<u8>>,
    /// Of a task's share of a dataset, the number of each file's first
    /// row group in the whole.
    #[serde(default)]
    numbering: Option<Vec<usize>>,
    /// Of a share, each file's size and footer's fingerprint where the
    /// query was planned, which the worker's must have.
    #[serde(default)]
    expected_files: Option<Vec<(u64, Option<u64>)>>,
    /// The columns of the dataset's `key=value` directories: the root
    /// they are counted from, and each one's name and type (`int64`,
    /// `string`); each file's path gives its values.
    #[serde(default)]
    hive: Option<(String, Vec<(String, String)>)>,
}

#[derive(Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum OutputMessage {
    Column {
        name: String,
        column: String,
    },
    Json {
        name: String,
        column: String,
    },
    Explode {
        name: String,
        column: String,
        outer: bool,
    },
    Path {
        name: String,
        column: String,
        path: String,
        as_type: String,
        on_failure: OnFailureMessage,
    },
}

/// [`OnFailure`], as a message spells it.
#[derive(Serialize, Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum OnFailureMessage {
    Null,
    Error,
    Defer,
}

impl OutputMessage {
    fn of(name: &str, output: &Projected) -> OutputMessage {
        let name = name.to_string();
        match output {
            Projected::Column(column) => OutputMessage::Column {
                name,
                column: column.clone(),
            },
            Projected::Json(column) => OutputMessage::Json {
                name,
                column: column.clone(),
            },
            Projected::Explode { column, outer } => OutputMessage::Explode {
                name,
                column: column.clone(),
                outer: *outer,
            },
            Projected::Path {
                column,
                path,
                as_type,
                on_failure,
            } => OutputMessage::Path {
                name,
                column: column.clone(),
                path: path.to_string(),
                as_type: as_type.type_name(),
                on_failure: match on_failure {
                    OnFailure::Null => OnFailureMessage::Null,
                    OnFailure::Error => OnFailureMessage::Error,
                    OnFailure::Defer => OnFailureMessage::Defer,
                },
            },
        }
    }

    fn parse(self) -> Result<(String, Projected)> {
        Ok(match self {
            OutputMessage::Column { name, column } => (name, Projected::Column(column)),
            OutputMessage::Json { name, column } => (name, Projected::Json(column)),
            OutputMessage::Explode {
                name,
                column,
                outer,
            } => (name, Projected::Explode { column, outer }),
            OutputMessage::Path {
                name,
                column,
                path,
                as_type,
                on_failure,
            } => {
                nested_at_most(&path)?;
                nested_at_most(&as_type)?;
                let path = path.parse().map_err(|e| refused(format!("path: {e}")))?;
                let as_type = ShreddingSchema::parse_type_name(&as_type)
                    .map_err(|e| refused(format!("type: {e}")))?;
                (
                    name,
                    Projected::Path {
                        column,
                        path,
                        as_type,
                        on_failure: match on_failure {
                            OnFailureMessage::Null => OnFailure::Null,
                            OnFailureMessage::Error => OnFailure::Error,
                            OnFailureMessage::Defer => OnFailure::Defer,
                        },
                    },
                )
            }
        })
    }
}

/// Fails when brackets in `text` nest deeper than [`MAX_NESTING`].
fn nested_at_most(text: &str) -> Result<()> {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' | '[' | '<' | '{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' | ']' | '>' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_NESTING {
        return Err(refused(format!(
            "a text nests {deepest} deep (at most {MAX_NESTING})"
        )));
    }
    Ok(())
}

fn schema_bytes(schema: &SchemaRef) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, schema)?;
    writer.finish()?;
    drop(writer);
    Ok(bytes)
}

/// The schema of `bytes`. arrow-ipc panics on some malformed schemas (an
/// integer of a crafted bit width, found by this crate's proptest), so a
/// panic is an error too.
fn schema_of(bytes: &[u8]) -> Result<SchemaRef> {
    let read = std::panic::catch_unwind(|| arrow_ipc::reader::StreamReader::try_new(bytes, None));
    match read {
        Ok(Ok(reader)) => Ok(reader.schema()),
        Ok(Err(e)) => Err(refused(format!("the scan's schema: {e}"))),
        Err(_) => Err(refused("the scan's schema is malformed".into())),
    }
}

impl VariantCodec {
    /// The bytes of `scan`, without its runtime filters and row filter.
    pub fn encode_scan(&self, scan: &VariantScanExec) -> Result<Vec<u8>> {
        self.encode_scan_with(scan, ScanExprs::default())
    }

    /// The bytes of `scan`, with its expressions' protobufs.
    fn encode_scan_with(&self, scan: &VariantScanExec, exprs: ScanExprs) -> Result<Vec<u8>> {
        let (dataset, projection, partitions, task) = scan.parts();
        let files = dataset
            .files()
            .iter()
            .map(|f| sent_file(f))
            .collect::<Result<Vec<_>>>()?;
        let mut outputs = Vec::with_capacity(projection.outputs.len());
        for (name, output) in &projection.outputs {
            let message = OutputMessage::of(name, output);
            // What the worker will parse must be what we have.
            let back = OutputMessage::of(name, output).parse()?;
            if &back.1 != output {
                return Err(DataFusionError::Plan(format!(
                    "the output {name} ({output:?}) does not survive its text form"
                )));
            }
            outputs.push(message);
        }
        let filter = projection.filter.as_ref().and_then(|(column, predicate)| {
            let text = predicate.to_string();
            // It only prunes: left out rather than sent changed.
            (Predicate::parse(&text).ok().as_ref() == Some(predicate))
                .then(|| (column.clone(), text))
        });
        let message = Message::Scan(ScanMessage {
            version: VERSION,
            files,
            outputs,
            filter,
            partitions,
            task,
            runtime_filters: exprs.runtime_filters,
            row_filter: exprs.row_filter,
            numbering: dataset.numbering().map(<[usize]>::to_vec),
            expected_files: dataset
                .expected_files()
                .map(|files| files.iter().map(|f| (f.size, f.fingerprint)).collect()),
            hive: match dataset.hive_columns() {
                Some(hive) => {
                    let columns = hive.columns().iter();
                    let columns = columns.map(|(name, t)| (name.clone(), t.name().to_string()));
                    // Sent as the files are, so that they are beneath it.
                    Some((sent_file(hive.root())?, columns.collect()))
                }
                None => None,
            },
        });
        framed(&message, &schema_bytes(&scan.schema())?)
    }

    /// The scan of `bytes`, checked, without its runtime filters and row
    /// filter; files in an object store are read from the store of
    /// `context`'s session.
    pub fn decode_scan(&self, bytes: &[u8], context: &TaskContext) -> Result<VariantScanExec> {
        self.decode_scan_with(bytes, context).map(|(scan, _)| scan)
    }

    /// The scan of `bytes`, checked, and its expressions' protobufs.
    fn decode_scan_with(
        &self,
        bytes: &[u8],
        context: &TaskContext,
    ) -> Result<(VariantScanExec, ScanExprs)> {
        let (message, schema) = unframed(bytes)?;
        let Message::Scan(message) = message else {
            return Err(refused("a node that is not a scan".into()));
        };
        check_version(message.version)?;
        let (task, tasks) = message.task;
        if message.runtime_filters.len() > MAX_RUNTIME_FILTERS
            || message
                .runtime_filters
                .iter()
                .chain(&message.row_filter)
                .any(|f| f.len() > MAX_RUNTIME_FILTER_BYTES)
        {
            return Err(refused(format!(
                "a scan of {} runtime filters (at most {MAX_RUNTIME_FILTERS} of at most {MAX_RUNTIME_FILTER_BYTES} bytes)",
                message.runtime_filters.len()
            )));
        }
        let numbered = message.numbering.as_ref().map(Vec::len);
        let sized = message.expected_files.as_ref().map(Vec::len);
        if (message.files.is_empty() && numbered.is_none())
            || numbered.is_some_and(|n| n != message.files.len())
            || sized.is_some_and(|n| n != message.files.len())
            || message.files.len() > MAX_FILES
            || message.outputs.len() > MAX_OUTPUTS
            || !(1..=MAX_PARTITIONS).contains(&message.partitions)
            || !(1..=MAX_TASKS).contains(&tasks)
            || task >= tasks
        {
            return Err(refused(format!(
                "a scan of {} files, {} outputs, {} partitions, task {task} of {tasks}",
                message.files.len(),
                message.outputs.len(),
                message.partitions
            )));
        }
        let files: Vec<PathBuf> = message.files.into_iter().map(PathBuf::from).collect();
        for file in &files {
            self.check_file(file)?;
        }
        let outputs = message
            .outputs
            .into_iter()
            .map(OutputMessage::parse)
            .collect::<Result<Vec<_>>>()?;
        let filter = match message.filter {
            Some((column, text)) => {
                nested_at_most(&text)?;
                let predicate =
                    Predicate::parse(&text).map_err(|e| refused(format!("filter: {e}")))?;
                Some((column, predicate))
            }
            None => None,
        };
        let schema = schema_of(schema)?;
        if schema.fields().len() != outputs.len() {
            return Err(refused(format!(
                "a scan of {} outputs and a schema of {} columns",
                outputs.len(),
                schema.fields().len()
            )));
        }
        let projection = Projection {
            outputs,
            filter,
            ..Projection::default()
        };
        let storage = storage_of(&files, context)?;
        let dataset = match message.numbering {
            Some(numbering) => {
                Dataset::from_numbered_files(files.into_iter().zip(numbering).collect())
            }
            None => Dataset::from_files(files),
        };
        let dataset = match storage {
            Some(storage) => dataset.with_storage(Arc::new(storage)),
            None => dataset,
        };
        let hive = match message.hive {
            Some((root, columns)) => {
                let columns = columns
                    .into_iter()
                    .map(|(name, t)| match HiveType::from_name(&t) {
                        Some(t) => Ok((name, t)),
                        None => Err(refused(format!("a directory column of type {t:?}"))),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let hive = HiveColumns::new(PathBuf::from(root), columns)
                    .map_err(|e| refused(format!("directory columns: {e}")))?;
                Some(hive)
            }
            None => None,
        };
        let mut dataset = dataset.with_hive_columns(hive);
        if let Some(files) = message.expected_files {
            let files = files
                .into_iter()
                .map(|(size, fingerprint)| FileIdentity { size, fingerprint });
            dataset = dataset.with_expected_files(files.collect());
        }
        // A file other than the planner's is named with the worker seeing it.
        if let Some(worker) = self.data_roots.as_deref().and_then(DataRoots::worker) {
            dataset = dataset.read_on(format!("worker {worker}"));
        }
        let scan = VariantScanExec::from_parts(
            Arc::new(dataset),
            projection,
            schema,
            message.partitions,
            (task, tasks),
        )?;
        let exprs = ScanExprs {
            runtime_filters: message.runtime_filters,
            row_filter: message.row_filter,
        };
        Ok((scan, exprs))
    }
}

/// The protobufs of a scan's expressions: its runtime filters and its row
/// filter.
#[derive(Default)]
struct ScanExprs {
    runtime_filters: Vec<Vec<u8>>,
    row_filter: Option<Vec<u8>>,
}

impl VariantCodec {
    /// The bytes of `write`.
    pub fn encode_write(&self, write: &WritePartitionsExec) -> Result<Vec<u8>> {
        let (dir, prefix, options) = write.parts();
        let message = Message::Write(WriteMessage {
            version: VERSION,
            dir: sent_path(dir)?,
            prefix: prefix.to_string(),
            options: options.given().clone(),
        });
        framed(&message, &[])
    }

    /// The write of `bytes` over `input`, checked, its files named for
    /// the task of `context`.
    pub fn decode_write(
        &self,
        bytes: &[u8],
        input: Arc<dyn ExecutionPlan>,
        context: &TaskContext,
    ) -> Result<WritePartitionsExec> {
        let (message, rest) = unframed(bytes)?;
        let Message::Write(message) = message else {
            return Err(refused("a node that is not a write".into()));
        };
        check_version(message.version)?;
        if !rest.is_empty() {
            return Err(refused(format!("a write with {} more bytes", rest.len())));
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if message.prefix.is_empty()
            || message.prefix.len() > MAX_PREFIX
            || !message.prefix.chars().all(plain)
        {
            return Err(refused(format!(
                "a write of files named {:?} (at most {MAX_PREFIX} letters, digits, _ and -)",
                message.prefix
            )));
        }
        if message.options.len() > OUR_OPTIONS.len() + SHARED_OPTIONS.len() {
            return Err(refused(format!(
                "a write of {} options",
                message.options.len()
            )));
        }
        let dir = PathBuf::from(&message.dir);
        self.check_dir(&dir)?;
        let shred = CopyOptions::shred_choice(&message.options);
        if !ShredMode::PRESETS.contains(&shred) {
            // A schema file, read where the task runs.
            self.check_file(Path::new(shred))?;
        }
        let options = CopyOptions::parse(message.options)
            .map_err(|e| refused(format!("a write's options: {e}")))?;
        let task = context
            .session_config()
            .get_extension::<DistributedTaskContext>()
            .map_or(0, |t| t.task_index);
        Ok(WritePartitionsExec::new(
            input,
            dir,
            format!("{}_{task}", message.prefix),
            options,
        ))
    }
}

/// The store a scan's `files` are read from when they are URLs (of one
/// store, all of them), as the worker's session registered it.
fn storage_of(files: &[PathBuf], context: &TaskContext) -> Result<Option<StoreFiles>> {
    let Some(first) = files.first() else {
        return Ok(None);
    };
    let Some(store) = StoreFiles::of_location(&first.to_string_lossy(), &context.runtime_env())?
    else {
        if let Some(url) = files
            .iter()
            .find(|f| store_url(&f.to_string_lossy()).is_some())
        {
            return Err(refused(format!(
                "a scan of local files and {}",
                url.display()
            )));
        }
        return Ok(None);
    };
    for file in files {
        store
            .location(file)
            .map_err(|e| refused(format!("a scan's file {}: {e}", file.display())))?;
    }
    Ok(Some(store))
}

/// `message` as JSON, its length first (4 bytes, little-endian), then
/// `rest`.
fn framed(message: &Message, rest: &[u8]) -> Result<Vec<u8>> {
    let json = serde_json::to_vec(message).map_err(|e| DataFusionError::External(e.into()))?;
    let mut bytes = Vec::with_capacity(4 + json.len() + rest.len());
    bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(rest);
    Ok(bytes)
}

/// The message of `bytes`, and the bytes after it.
fn unframed(bytes: &[u8]) -> Result<(Message, &[u8])> {
    let Some((length, rest)) = bytes.split_first_chunk::<4>() else {
        return Err(refused("a node of fewer than 4 bytes".into()));
    };
    let length = u32::from_le_bytes(*length) as usize;
    if length > rest.len() {
        return Err(refused(format!(
            "a node's message says {length} bytes, {} are there",
            rest.len()
        )));
    }
    let (json, rest) = rest.split_at(length);
    let message =
        serde_json::from_slice(json).map_err(|e| refused(format!("a node's message: {e}")))?;
    Ok((message, rest))
}

/// Refuses a row filter that is not a condition on the scan's outputs.
fn checked_row_filter(filter: &Arc<dyn PhysicalExpr>, schema: &SchemaRef) -> Result<()> {
    let outputs = schema.fields().len();
    let beyond = collect_columns(filter).iter().any(|c| c.index() >= outputs);
    let condition = filter
        .data_type(schema)
        .is_ok_and(|t| t == arrow::datatypes::DataType::Boolean);
    if beyond || !condition {
        return Err(refused(format!(
            "a row filter that is not a condition on the scan's {outputs} outputs"
        )));
    }
    Ok(())
}

fn check_version(version: u32) -> Result<()> {
    if version != VERSION {
        return Err(refused(format!(
            "a node of version {version} (this worker reads version {VERSION})"
        )));
    }
    Ok(())
}

impl PhysicalExtensionCodec for VariantCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match inputs {
            [] => {
                let (scan, exprs) = self.decode_scan_with(buf, ctx)?;
                let schema = scan.schema();
                let context = PhysicalPlanDecodeContext::new(ctx, self);
                let decoded = |bytes: &Vec<u8>, what: &str| {
                    let node = PhysicalExprNode::decode(bytes.as_slice())
                        .map_err(|e| refused(format!("{what}: {e}")))?;
                    // The parsers of expressions are DataFusion's, not
                    // written for strangers' bytes.
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        proto_converter.proto_to_physical_expr(&node, &schema, &context)
                    }))
                    .map_err(|_| refused(format!("{what} is malformed")))?
                    .map_err(|e| refused(format!("{what}: {e}")))
                };
                let filters = exprs
                    .runtime_filters
                    .iter()
                    .map(|bytes| decoded(bytes, "a runtime filter"))
                    .collect::<Result<Vec<_>>>()?;
                let row_filter = match &exprs.row_filter {
                    Some(bytes) => {
                        let filter = decoded(bytes, "a row filter")?;
                        checked_row_filter(&filter, &schema)?;
                        Some(filter)
                    }
                    None => None,
                };
                Ok(Arc::new(
                    scan.with_runtime_filters(filters)
                        .with_row_filter(row_filter)?,
                ))
            }
            [input] => Ok(Arc::new(self.decode_write(buf, input.clone(), ctx)?)),
            _ => Err(refused(format!("a node of {} inputs", inputs.len()))),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let bytes = if let Some(scan) = node.downcast_ref::<VariantScanExec>() {
            let encoded = |f: &Arc<dyn PhysicalExpr>| {
                proto_converter
                    .physical_expr_to_proto(f, self)
                    .map(|node| node.encode_to_vec())
            };
            let exprs = ScanExprs {
                runtime_filters: scan
                    .runtime_filters()
                    .iter()
                    .map(encoded)
                    .collect::<Result<Vec<_>>>()?,
                // One too large to send is left behind: the filter
                // above the scan, sent whole, keeps the same rows.
                row_filter: scan
                    .row_filter()
                    .map(encoded)
                    .transpose()?
                    .filter(|bytes| bytes.len() <= MAX_RUNTIME_FILTER_BYTES),
            };
            self.encode_scan_with(scan, exprs)?
        } else if let Some(write) = node.downcast_ref::<WritePartitionsExec>() {
            self.encode_write(write)?
        } else {
            return Err(DataFusionError::NotImplemented(format!(
                "{} cannot be sent to a worker",
                node.name()
            )));
        };
        buf.extend_from_slice(&bytes);
        Ok(())
    }
}
