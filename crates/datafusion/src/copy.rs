//! `COPY ... TO` with Variant columns: shredded by our inference, through
//! the core's writer.
//!
//! DataFusion plans `COPY (query) TO 'out.parquet'` (or `TO 'dir/' STORED
//! AS PARQUET`, partitioned or not; [`parquet_by_default`] makes `STORED
//! AS PARQUET` the default for a directory) by the file format registered for
//! `parquet`. [`VariantParquetFactory`] is registered in its place: it
//! makes DataFusion's own [`ParquetFormat`] for everything, except that a
//! write whose input has Variant columns (the `arrow.parquet.variant`
//! extension type), or Variants nested in a struct, list or map, goes to
//! [`VariantParquetSink`], which annotates nested ones as top-level ones. DataFusion's demuxer
//! still decides the files (one, a directory of several, or a Hive
//! partition per value); each file is a core [`BatchEncoder`], which
//! infers the layout from the file's first rows, so files may differ as a
//! dataset's may. The encoder runs on a blocking thread and hands its bytes
//! to the object store's writer; no file is completed before every file is
//! written and the query has ended well, so a failed `COPY` leaves no
//! file, and a local target that is not Parquet is refused.
//!
//! Options, after `OPTIONS (...)`:
//! - `shred`: `auto` (the default), `spark`, `none`, a layout in the JSON
//!   form `vshred infer` prints, or a schema file, as `vshred encode
//!   --shred` takes.
//! - `sample_rows`: rows inspected to choose the layout (4096).
//! - `decimal`: `int` (the default) or `flba`, the physical type of typed
//!   decimals.
//! - `bloom_filter`: shredded paths (`$.id`, `v.user.id`) or ordinary
//!   columns given a bloom filter, separated by commas.
//! - `compression` (by default the core's: zstd at level 1, Variant
//!   `metadata` and `value` leaves at 3; `zstd(N)`, `snappy`,
//!   `uncompressed`) and `max_row_group_size`, DataFusion's names.
//!
//! Other Parquet writer options are DataFusion's writer's; with Variant
//! columns they are refused rather than ignored.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Write;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::config::ConfigOptions;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::utils::quote_identifier;
use datafusion::common::{GetExt, Result, plan_err};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::{ParquetFormat, ParquetFormatFactory};
use datafusion::datasource::file_format::write::ObjectWriterBuilder;
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::error::DataFusionError;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::object_store::ObjectStore;
use datafusion::optimizer::AnalyzerRule;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, SendableRecordBatchStream,
};
use datafusion::sql::parser::Statement;
use tokio::io::AsyncWriteExt;
use vshred::dataset::storage::is_dataset_file;
use vshred::encode::{BatchEncoder, EncodeOptions, ShredMode};
use vshred::infer::InferOptions;
use vshred::output::Output;
use vshred::parquet::{Compression, is_variant_field, magic_of, starts_as_parquet};

use crate::compare::holds_variant;
use crate::functions::external;
use crate::whole_files::{CopyWrites, PlanWriter, SessionFormat, WholeFilesWriter};

/// Makes a `COPY` to a path with no file extension and no `STORED AS`
/// (`COPY (...) TO 'out/'`) write Parquet, which DataFusion would refuse
/// as a format it cannot tell, `EXPLAIN`ed too: for tools that parse
/// statements before planning them, as [`statements`](crate::statements)
/// does.
pub fn parquet_by_default(statement: &mut Statement) {
    match statement {
        Statement::CopyTo(copy)
            if copy.stored_as.is_none()
                && std::path::Path::new(&copy.target).extension().is_none() =>
        {
            copy.stored_as = Some("PARQUET".into());
        }
        Statement::Explain(explain) => parquet_by_default(&mut explain.statement),
        _ => {}
    }
}

/// Reads a `PARTITIONED BY` column in double quotes or backquotes
/// (`("Event")`, for a name in capitals or with a space) as the name it
/// quotes: DataFusion 55 looks the text up with its quotes (`No field
/// named """Event"""`).
pub fn unquote_partition_columns(statement: &mut Statement) {
    match statement {
        Statement::CopyTo(copy) => {
            for name in &mut copy.partitioned_by {
                // The parser gives the name back quoted, a lone quote
                // inside doubled but a doubled one kept: `"a""b"` (a"b)
                // and `"a""""b"` (a""b) both come as `"a""b"`, read as
                // a""b. A name with a lone quote in it is not found.
                let quoted = ['"', '`'].into_iter().find_map(|quote| {
                    name.strip_prefix(quote)?
                        .strip_suffix(quote)
                        .filter(|quoted| !quoted.is_empty())
                });
                if let Some(quoted) = quoted {
                    *name = quoted.to_string();
                }
            }
        }
        Statement::Explain(explain) => unquote_partition_columns(&mut explain.statement),
        _ => {}
    }
}

/// The `parquet` file format of a session: DataFusion's, with Variant
/// columns written shredded (see the [module](self)).
#[derive(Debug, Default)]
pub struct VariantParquetFactory;

impl GetExt for VariantParquetFactory {
    fn get_ext(&self) -> String {
        ParquetFormatFactory::new().get_ext()
    }
}

impl FileFormatFactory for VariantParquetFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        let mut theirs = HashMap::new();
        let mut ours = HashMap::new();
        for (key, value) in format_options {
            let name = key.strip_prefix("format.").unwrap_or(key);
            if OUR_OPTIONS.contains(&name) {
                ours.insert(name.to_string(), value.clone());
            } else {
                theirs.insert(key.clone(), value.clone());
            }
        }
        let inner = ParquetFormatFactory::new().create(state, &theirs)?;
        let refused = theirs
            .keys()
            .filter(|k| {
                k.starts_with("format.") && !SHARED_OPTIONS.contains(&&k["format.".len()..])
            })
            .cloned()
            .collect();
        for shared in SHARED_OPTIONS {
            if let Some(value) = theirs.get(&format!("format.{shared}")) {
                ours.insert(shared.to_string(), value.clone());
            }
        }
        Ok(Arc::new(SessionFormat {
            inner,
            writer: VariantParquetWriter {
                options: CopyOptions::parse(ours.into_iter().collect())?,
                refused,
            },
        }))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(SessionFormat {
            inner: Arc::new(ParquetFormat::default()),
            writer: VariantParquetWriter {
                options: CopyOptions::default(),
                refused: Vec::new(),
            },
        })
    }
}

/// The options only our writer takes.
pub const OUR_OPTIONS: [&str; 4] = ["shred", "sample_rows", "decimal", "bloom_filter"];

/// DataFusion's Parquet options our writer honours too.
pub const SHARED_OPTIONS: [&str; 2] = ["compression", "max_row_group_size"];

/// The options of a `COPY` that our writer takes, as they were given
/// (ours, and DataFusion's that we honour, by their names without
/// `format.`), and what they make.
#[derive(Debug, Clone, Default)]
pub struct CopyOptions {
    given: BTreeMap<String, String>,
    encode: EncodeOptions,
}

impl CopyOptions {
    /// Parses options named as [`OUR_OPTIONS`] and [`SHARED_OPTIONS`] are;
    /// a name that is neither is an error.
    pub fn parse(given: BTreeMap<String, String>) -> Result<CopyOptions> {
        let bad = |option: &str, e: vshred::Error| {
            DataFusionError::Plan(format!("COPY option {option}: {}", e.message()))
        };
        if let Some(unknown) = given
            .keys()
            .find(|k| !OUR_OPTIONS.contains(&k.as_str()) && !SHARED_OPTIONS.contains(&k.as_str()))
        {
            return plan_err!("COPY option {unknown} is not one of vshred's writer");
        }
        let sample_rows = match given.get("sample_rows") {
            Some(n) => match n.parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return plan_err!(
                        "COPY option sample_rows: {n:?} is not a whole number of at least 1"
                    );
                }
            },
            None => EncodeOptions::default().sample_rows,
        };
        let mut options = EncodeOptions {
            shred: ShredMode::from_choice(
                CopyOptions::shred_choice(&given),
                InferOptions::default().with_sample_rows(sample_rows),
            )
            .map_err(|e| bad("shred", e))?,
            sample_rows,
            bloom_filters: given
                .get("bloom_filter")
                .map(|paths| paths.split(',').map(|p| p.trim().to_string()).collect())
                .unwrap_or_default(),
            ..EncodeOptions::default()
        };
        if let Some(decimal) = given.get("decimal") {
            options.write.decimals = decimal.parse().map_err(|e| bad("decimal", e))?;
        }
        if let Some(codec) = given.get("compression") {
            let lower = codec.to_ascii_lowercase();
            let ours = match lower.as_str() {
                "uncompressed" => "none".to_string(),
                other => match other
                    .strip_prefix("zstd(")
                    .and_then(|l| l.strip_suffix(')'))
                {
                    Some(level) => format!("zstd:{level}"),
                    None => other.to_string(),
                },
            };
            options.write.compression = ours.parse::<Compression>().map_err(|e| {
                // A zstd level out of range is named as such; another codec
                // is one our writer does not offer.
                let why = match ours.starts_with("zstd:") {
                    true => e.message().to_string(),
                    false => "not written with Variant columns (zstd(N), snappy or uncompressed)"
                        .to_string(),
                };
                DataFusionError::Plan(format!("COPY option compression: {codec:?}: {why}"))
            })?;
        }
        if let Some(rows) = given.get("max_row_group_size") {
            match rows.parse::<usize>() {
                Ok(n) if n >= 1 => options.write.row_group_rows = n,
                _ => {
                    return plan_err!(
                        "COPY option max_row_group_size: {rows:?} is not a whole number of at least 1"
                    );
                }
            }
        }
        Ok(CopyOptions {
            given,
            encode: options,
        })
    }

    /// The `shred` option given (`auto` when none was): a preset, a layout
    /// as JSON, or the path of a schema file.
    pub fn shred_choice(given: &BTreeMap<String, String>) -> &str {
        given.get("shred").map_or("auto", String::as_str)
    }

    /// The options as they were given, which [`CopyOptions::parse`] takes
    /// back.
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.given
    }

    /// What the options make of the core's encoder.
    pub fn encode(&self) -> &EncodeOptions {
        &self.encode
    }
}

/// The writer of DataFusion's [`ParquetFormat`], whose writes of Variant
/// columns go to [`VariantParquetSink`].
#[derive(Debug)]
pub struct VariantParquetWriter {
    options: CopyOptions,
    /// DataFusion writer options given, which ours does not take.
    refused: Vec<String>,
}

#[async_trait]
impl PlanWriter for VariantParquetWriter {
    async fn plan_writer(
        &self,
        inner: &dyn FileFormat,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // A local file that is not Parquet is not replaced, as `encode`
        // does not replace it (`TO 'in.jsonl'` would lose the input),
        // whichever writer writes the columns.
        for target in &conf.table_paths {
            if target.scheme() == "file"
                && let Ok(local) = target.get_url().to_file_path()
                && magic_of(&local).is_some_and(|m| !m.is_empty() && !starts_as_parquet(&m))
            {
                return plan_err!(
                    "{}: the COPY target is not a Parquet file, and writing would replace it (remove it first, or choose another target)",
                    local.display()
                );
            }
        }
        refuse_a_dataset_in_place(state, &conf).await?;
        // A Variant nested in a struct or a list too: DataFusion's writer
        // would write it as a struct of two binaries, without the
        // annotation that tells other engines it is a Variant.
        if !conf
            .output_schema()
            .fields()
            .iter()
            .any(|f| holds_variant(f))
        {
            // Ours would be left unused without a word.
            if let Some(option) = OUR_OPTIONS
                .iter()
                .find(|o| self.options.given().contains_key(**o))
            {
                return plan_err!(
                    "COPY option {option} is for Variant columns, and the query has none (DataFusion's Parquet writer writes it)"
                );
            }
            return WholeFilesWriter
                .plan_writer(inner, input, state, conf, order_requirements)
                .await;
        }
        if let Some(option) = self.refused.first() {
            return plan_err!(
                "COPY option {} is DataFusion's Parquet writer's; Variant columns are written by vshred's, which takes shred, sample_rows, decimal, bloom_filter, compression and max_row_group_size",
                option.trim_start_matches("format.")
            );
        }
        let sink = VariantParquetSink {
            config: conf,
            options: self.options.clone(),
        };
        Ok(Arc::new(DataSinkExec::new(
            input,
            Arc::new(sink),
            order_requirements,
        )))
    }
}

/// Writes each file DataFusion's demuxer makes with a [`BatchEncoder`].
#[derive(Debug)]
pub struct VariantParquetSink {
    config: FileSinkConfig,
    options: CopyOptions,
}

impl VariantParquetSink {
    /// The options the `COPY` was given.
    pub fn options(&self) -> &CopyOptions {
        &self.options
    }

    /// The schema of the batches each file gets: without the partition
    /// columns, unless they are kept.
    fn file_schema(&self) -> SchemaRef {
        let config = &self.config;
        if config.keep_partition_by_columns || config.table_partition_cols.is_empty() {
            return config.output_schema().clone();
        }
        let partitioned = |name: &str| config.table_partition_cols.iter().any(|(p, _)| p == name);
        Arc::new(Schema::new_with_metadata(
            config
                .output_schema()
                .fields()
                .iter()
                .filter(|f| !partitioned(f.name()))
                .cloned()
                .collect::<Vec<_>>(),
            config.output_schema().metadata().clone(),
        ))
    }
}

impl DisplayAs for VariantParquetSink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, "VariantParquetSink(path={})", self.config.original_url)
            }
            DisplayFormatType::TreeRender => write!(f, "path={}", self.config.original_url),
        }
    }
}

#[async_trait]
impl DataSink for VariantParquetSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let data = refuse_unreadable_partition_values(data, &self.config);
        FileSink::write_all(self, data, context).await
    }
}

/// Refuses a `COPY` to a directory that holds Parquet files already, as
/// `encode` refuses it: its files would mix with them, and a `COPY` run
/// twice would hold every row twice. Files a reader skips
/// ([`is_dataset_file`]: names that begin with `.` or `_`, but for
/// `_key=value` directories) do not count.
async fn refuse_a_dataset_in_place(state: &dyn Session, conf: &FileSinkConfig) -> Result<()> {
    let Some(target) = conf.table_paths.first() else {
        return Ok(());
    };
    // One file (DataFusion makes a partitioned target a directory).
    if conf.file_output_mode.single_file_output(target) {
        return Ok(());
    }
    let store = state.runtime_env().object_store(&conf.object_store_url)?;
    let mut listed = store.list(Some(target.prefix()));
    while let Some(object) = futures::StreamExt::next(&mut listed).await {
        use datafusion::object_store::Error as StoreError;
        let location = match object {
            Ok(object) => object.location,
            // A directory not made yet holds nothing; credentials that may
            // write but not list (S3 without `s3:ListBucket`) cannot tell,
            // and write as before.
            Err(
                StoreError::NotFound { .. }
                | StoreError::PermissionDenied { .. }
                | StoreError::Unauthenticated { .. },
            ) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let Some(beneath) = location.prefix_match(target.prefix()) else {
            continue;
        };
        let relative = beneath
            .map(|part| part.as_ref().to_string())
            .collect::<Vec<_>>()
            .join("/");
        // A file a reader of the directory reads, as `encode` counts them.
        if is_dataset_file(&relative) {
            return plan_err!(
                "{}: the COPY target holds Parquet files already (such as {relative}): new files would mix with them; remove them first, or choose another directory",
                conf.original_url
            );
        }
    }
    Ok(())
}

/// `data`, failing at the first value of a `PARTITIONED BY` column that
/// would not come back from its directory: a null, which DataFusion 55's
/// demuxer writes as the type's zero (`n=0`, `b=false`; a string's as
/// `k=`), as DataFusion refuses since apache/datafusion#24951; and the
/// texts of [`unreadable_text`].
pub(crate) fn refuse_unreadable_partition_values(
    data: SendableRecordBatchStream,
    config: &FileSinkConfig,
) -> SendableRecordBatchStream {
    let columns: Vec<String> = config
        .table_partition_cols
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    if columns.is_empty() {
        return data;
    }
    let schema = data.schema();
    let checked = futures::StreamExt::map(data, move |batch| {
        let batch = batch?;
        for name in &columns {
            let Some(column) = batch.column_by_name(name) else {
                continue;
            };
            if column.logical_null_count() > 0 {
                return Err(DataFusionError::Execution(format!(
                    "COPY ... PARTITIONED BY ({name}): {name} is null in some row, which DataFusion 55 would write under {name}=0 (a string under {name}=), not as a null; filter those rows out, or COALESCE({name}, ...) gives them a value"
                )));
            }
            if let Some(why) = unreadable_text(column)? {
                return Err(DataFusionError::Execution(format!(
                    "COPY ... PARTITIONED BY ({name}): in some row, {name} is {why}; filter those rows out, or give them another value"
                )));
            }
        }
        Ok(batch)
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, checked))
}

/// Why a string of `column` would not come back from its directory, if
/// one would not: readers take an empty value and Hive's null as null,
/// and DataFusion 55 writes `{name}={value}` with `=` unescaped, which
/// DuckDB cannot read.
fn unreadable_text(column: &arrow::array::ArrayRef) -> Result<Option<&'static str>> {
    use arrow::array::AsArray;
    use arrow::datatypes::DataType;
    let strings =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let is_text = match column.data_type() {
        DataType::Dictionary(_, values) => strings(values),
        t => strings(t),
    };
    if !is_text {
        return Ok(None);
    }
    let texts = arrow::compute::cast(column, &DataType::Utf8View)?;
    Ok(texts
        .as_string_view()
        .iter()
        .flatten()
        .find_map(|text| match text {
            "" => Some("the empty string, which reads back as null (DuckDB's reading: '')"),
            "__HIVE_DEFAULT_PARTITION__" => Some("Hive's name for null, which reads back as null"),
            t if t.contains('=') => Some(
                "a text with '=', which DataFusion 55 writes unescaped and DuckDB then cannot read",
            ),
            _ => None,
        }))
}

#[async_trait]
impl FileSink for VariantParquetSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = self.file_schema();
        let writes = CopyWrites::begin(&self.config, object_store);
        let store = writes.store();
        // Parts of the size DataFusion's own writer uploads.
        let part_bytes = context
            .session_config()
            .options()
            .execution
            .objectstore_writer_buffer_size;
        let mut files = tokio::task::JoinSet::new();
        while let Some((path, mut batches)) = file_stream_rx.recv().await {
            let mut upload =
                ObjectWriterBuilder::new(FileCompressionType::UNCOMPRESSED, &path, store.clone())
                    .with_buffer_size(Some(part_bytes))
                    .build()?;
            let (chunks_out, mut chunks) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
            let (schema, options) = (schema.clone(), self.options.encode().clone());
            let name = format!("{}{path}", self.config.object_store_url.as_str());
            let encoding = tokio::task::spawn_blocking(move || -> vshred::Result<u64> {
                let out = ChunkWriter {
                    chunk: Vec::with_capacity(CHUNK_BYTES),
                    chunks: chunks_out,
                };
                let mut encoder =
                    BatchEncoder::new(schema, Output::Stream(Box::new(out)), &options)?;
                while let Some(batch) = batches.blocking_recv() {
                    encoder.write(&batch)?;
                }
                Ok(encoder.finish()?.summary.rows)
            });
            files.spawn(async move {
                let uploading = async {
                    while let Some(chunk) = chunks.recv().await {
                        if let Err(e) = upload.write_all(&chunk).await {
                            // The encoder may be waiting to send its next
                            // chunk (a full disk left it waiting for ever):
                            // closed, the channel tells it the upload stopped.
                            chunks.close();
                            return Err(e);
                        }
                    }
                    Ok::<_, std::io::Error>(())
                };
                let writing = |e: &dyn std::fmt::Display| {
                    DataFusionError::Execution(format!("writing {name}: {e}"))
                };
                let (encoded, uploaded) = tokio::join!(encoding, uploading);
                // A failed upload stops the encoder: its error is the cause.
                uploaded.map_err(|e| writing(&e))?;
                let rows = encoded
                    .map_err(|e| writing(&e))?
                    .map_err(|e| external(e.in_file(&name)))?;
                // Held by the store until every file is written.
                upload.shutdown().await.map_err(|e| writing(&e))?;
                Ok::<_, DataFusionError>(rows)
            });
        }
        // A file's rows end where its input's end, or where the query
        // failed upstream (a value that does not convert, say): only the
        // demuxer's result tells the two apart. So the store completes no
        // file before every file is written and the demuxer has ended
        // well; on any error it aborts them all, the directories the COPY
        // made go, and nothing appears at any path (an existing file there
        // stays as it was).
        let mut rows = 0;
        let mut failed = None;
        while let Some(file) = files.join_next().await {
            match file.map_err(|e| DataFusionError::External(Box::new(e))) {
                Ok(Ok(written)) => rows += written,
                Ok(Err(e)) | Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        let demuxed = demux_task
            .join_unwind()
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)));
        // A file's own error says more than the demuxer's about the
        // channel that file closed.
        if let Some(e) = failed.or_else(|| demuxed.and_then(|ended| ended).err()) {
            writes.abort().await;
            return Err(e);
        }
        writes.commit().await?;
        Ok(rows)
    }
}

/// The bytes an encoder hands over at a time.
const CHUNK_BYTES: usize = 1 << 20;

/// The encoder's output: chunks of bytes sent to the upload.
struct ChunkWriter {
    chunk: Vec<u8>,
    chunks: tokio::sync::mpsc::Sender<Vec<u8>>,
}

impl ChunkWriter {
    fn send(&mut self) -> std::io::Result<()> {
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_BYTES));
        self.chunks
            .blocking_send(chunk)
            .map_err(|_| std::io::Error::other("the upload stopped"))
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.chunk.extend_from_slice(bytes);
        if self.chunk.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.chunk.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}

/// `name` in double quotes, as SQL quotes it.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Refuses the `COPY ... TO`s of a Variant column (or one holding one)
/// that DataFusion would write wrongly or refuse in its own terms: to JSON
/// or CSV, whose writers would write its encoding, its `metadata` and
/// `value` bytes (in hex), where its JSON text is meant, as `vshred sql
/// --format json` prints it (an Arrow IPC file keeps the column as the
/// Arrow extension type it is); and `PARTITIONED BY` a Variant column,
/// which DataFusion does not write ("not yet supported ... with datatype
/// Struct"), where a value taken from it is what is meant. Names are
/// quoted as SQL quotes them, so that the statement suggested runs.
#[derive(Debug)]
pub struct VariantCopyChecks;

impl VariantCopyChecks {
    /// The rule's name, which its refusals need not say.
    pub const NAME: &str = "variant_copy_checks";
}

impl AnalyzerRule for VariantCopyChecks {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let mut refused = None;
        plan.apply(|node| {
            if let LogicalPlan::Copy(copy) = node {
                let schema = copy.input.schema();
                let format = copy.file_type.get_ext().to_lowercase();
                let variant = schema.fields().iter().find(|f| holds_variant(f));
                // A struct holding one DataFusion refuses as a struct.
                let partition = copy.partition_by.iter().find(|name| {
                    schema
                        .fields()
                        .iter()
                        .any(|f| f.name() == *name && is_variant_field(f))
                });
                refused = match (format.as_str(), variant, partition) {
                    (_, _, Some(name)) => Some(format!(
                        "COPY cannot be PARTITIONED BY the Variant column {}: a directory is named by a value, so select one from it, as variant_get({}, '$.a', 'string') AS a, and partition by that",
                        quoted(name),
                        quote_identifier(name)
                    )),
                    ("json" | "csv", Some(field), None) => Some(format!(
                        "COPY to {format} would write the Variant column {} as its encoding (its metadata and value bytes): write to_json({}) for its JSON text, or COPY to Parquet",
                        quoted(field.name()),
                        quote_identifier(field.name())
                    )),
                    _ => None,
                };
                if refused.is_some() {
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        match refused {
            Some(why) => plan_err!("{why}"),
            None => Ok(plan),
        }
    }
}
