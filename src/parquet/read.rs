//! Reading Parquet files with Variant columns: finding them, and reading
//! only the leaves a path needs, a row group at a time, skipping row groups
//! that statistics or bloom filters rule out.

use std::fs::File;
use std::path::{Path, PathBuf};

use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection,
};
use ::parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use ::parquet::file::metadata::{PageIndexPolicy, RowGroupMetaData};
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;
use ::parquet::file::statistics::Statistics;
use ::parquet::schema::types::{SchemaDescriptor, Type};
use arrow::array::{ArrayRef, AsArray, RecordBatch};

use crate::error::{Error, ErrorKind, Result};
use crate::get::variant_get;
use crate::parquet::schema::is_variant_field;
use crate::parquet::shared_file::SharedFile;
use crate::path::{PathSegment, VariantPath};
use crate::predicate::{Comparison, Literal, Op, Operand, Predicate};
use crate::shred::ShreddingSchema;
use crate::variant::{Kind, VariantDecimal, VariantRef};

/// The most results a worker of [`ParquetFile::map_row_groups`] holds
/// before the consumer takes them: the batches of a row group as vshred
/// writes them (128Ki rows), with room to spare.
const MAX_AHEAD: usize = 32;

/// `schema` with the binary leaves of the `variants` columns read as
/// [`DataType::BinaryView`](arrow::datatypes::DataType::BinaryView).
fn binaries_as_views(
    schema: &arrow::datatypes::SchemaRef,
    variants: &[String],
) -> arrow::datatypes::SchemaRef {
    use arrow::datatypes::{DataType, Field, Schema};
    fn view(field: &Field) -> Field {
        let data_type = match field.data_type() {
            DataType::Binary => DataType::BinaryView,
            DataType::Struct(fields) => DataType::Struct(fields.iter().map(|f| view(f)).collect()),
            DataType::List(element) => DataType::List(view(element).into()),
            DataType::LargeList(element) => DataType::LargeList(view(element).into()),
            other => other.clone(),
        };
        field.clone().with_data_type(data_type)
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            if variants.iter().any(|v| v == f.name()) {
                view(f)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    std::sync::Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// An open Parquet file.
pub struct ParquetFile {
    path: PathBuf,
    file: SharedFile,
    metadata: ArrowReaderMetadata,
}

/// What a [`ParquetFile::get`] read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Row groups in the file.
    pub row_groups: usize,
    /// Row groups actually read (the others were skipped).
    pub row_groups_read: usize,
    /// Rows read: those of the row groups read, less the pages the column
    /// index ruled out.
    pub rows_read: u64,
    /// Pages of the filter's column that its column index ruled out, in
    /// the row groups that statistics did not.
    pub pages_skipped: usize,
    /// What the reader found worth saying: a filter no row can pass.
    pub warnings: Vec<String>,
}

/// The rows of a row group whose pages a filter may match.
struct PageSelection {
    selection: RowSelection,
    rows: u64,
    pages_skipped: usize,
}

impl PageSelection {
    /// With `rows` counted from the selection.
    fn counted(mut self) -> PageSelection {
        self.rows = self.selection.row_count() as u64;
        self
    }
}

/// A filter with where each of its operands is in a file.
struct FilterPlan<'p> {
    filter: &'p Predicate,
    operands: Vec<(&'p Operand, OperandLeaves)>,
}

impl FilterPlan<'_> {
    fn leaves_of(&self, operand: &Operand) -> &OperandLeaves {
        &self
            .operands
            .iter()
            .find(|(o, _)| *o == operand)
            .expect("every operand is planned")
            .1
    }

    /// Whether a comparison may skip pages: one reads a single typed leaf.
    fn may_skip_pages(&self, schema: &SchemaDescriptor) -> bool {
        self.operands.iter().any(|(_, leaves)| match leaves {
            OperandLeaves::Path(target) => target.typed_leaf(schema).is_some(),
            OperandLeaves::Column(root) => column_leaf(schema, *root).is_some(),
        })
    }
}

/// Where an operand's values are.
enum OperandLeaves {
    /// A path in the Variant column.
    Path(Target),
    /// A top-level column, by its index among the roots.
    Column(usize),
}

impl OperandLeaves {
    /// The leaves to read in a row group.
    fn leaves(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Vec<usize> {
        match self {
            OperandLeaves::Path(target) => target.leaves(schema, meta, false),
            OperandLeaves::Column(root) => (0..schema.num_columns())
                .filter(|&leaf| schema.get_column_root_idx(leaf) == *root)
                .collect(),
        }
    }

    /// The leaf whose statistics hold every value of the operand in the
    /// row group, if one does.
    fn skippable_leaf(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Option<usize> {
        match self {
            OperandLeaves::Path(target) => target.skippable_leaf(schema, meta),
            OperandLeaves::Column(root) => column_leaf(schema, *root),
        }
    }
}

/// The leaf of an ordinary top-level column that is a primitive.
fn column_leaf(schema: &SchemaDescriptor, root: usize) -> Option<usize> {
    let mut leaves = (0..schema.num_columns()).filter(|&l| schema.get_column_root_idx(l) == root);
    match (leaves.next(), leaves.next()) {
        (Some(leaf), None) if schema.column(leaf).path().parts().len() == 1 => Some(leaf),
        _ => None,
    }
}

/// The kind of value a typed leaf holds, where a literal can be of it.
fn leaf_kind(descr: &::parquet::schema::types::ColumnDescriptor) -> Option<Kind> {
    match (descr.physical_type(), descr.logical_type_ref()) {
        (_, Some(LogicalType::String | LogicalType::Enum | LogicalType::Json)) => {
            Some(Kind::String)
        }
        (_, Some(LogicalType::Decimal { .. })) => Some(Kind::Number),
        (_, Some(LogicalType::Date | LogicalType::Timestamp { .. })) => Some(Kind::Instant),
        (_, Some(LogicalType::Time { .. })) => Some(Kind::Time),
        (_, Some(LogicalType::Uuid)) => Some(Kind::Uuid),
        (PhysicalType::BOOLEAN, _) => Some(Kind::Boolean),
        (
            PhysicalType::INT32 | PhysicalType::INT64 | PhysicalType::FLOAT | PhysicalType::DOUBLE,
            _,
        ) => Some(Kind::Number),
        (PhysicalType::BYTE_ARRAY, None) if descr.converted_type() == ConvertedType::UTF8 => {
            Some(Kind::String)
        }
        _ => None,
    }
}

/// The size of one leaf column of a file ([`ParquetFile::leaf_sizes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafSize {
    /// Its path from the root: `["v", "typed_value", "f0", "typed_value"]`.
    pub path: Vec<String>,
    /// Bytes in the file, after compression.
    pub compressed: u64,
    /// Bytes before compression.
    pub uncompressed: u64,
    /// Values, nulls included (one per row, or per element inside lists).
    pub values: u64,
    /// Nulls among them, when every row group's statistics say.
    pub nulls: Option<u64>,
    /// The encodings of its pages, as the footer names them
    /// (`RLE_DICTIONARY`, `PLAIN`, ...), in the order first seen.
    pub encodings: Vec<String>,
}

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
    /// Opens `path` and reads its footer.
    pub fn open(path: &Path) -> Result<ParquetFile> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        ParquetFile::from_file(file, path)
    }

    /// Reads the footer of an open file (standard input redirected from a
    /// file, say); `name` is how errors refer to it.
    pub fn from_file(file: File, name: &Path) -> Result<ParquetFile> {
        let length = file.metadata().map_err(|e| Error::io(name, e))?.len();
        let file = SharedFile::new(file);
        check_magic(&file, length).map_err(|e| e.in_file(name))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| Error::parquet_in(name, e))?;
        check_chunks(metadata.metadata(), length)
            .map_err(|e| Error::new(ErrorKind::Parquet, e).in_file(name))?;
        let mut opened = ParquetFile {
            path: name.to_path_buf(),
            file,
            metadata,
        };
        // Variant binaries are read as views: a view points into the
        // decompressed page (or the dictionary) instead of copying each
        // value into one buffer, and repeated metadata keeps one address.
        let views = binaries_as_views(opened.arrow_schema(), &opened.variant_columns());
        opened.metadata = ArrowReaderMetadata::try_new(
            opened.metadata.metadata().clone(),
            ArrowReaderOptions::new().with_schema(views),
        )
        .map_err(|e| opened.error(e))?;
        Ok(opened)
    }

    /// The file's Parquet schema.
    pub fn parquet_schema(&self) -> &SchemaDescriptor {
        self.metadata.metadata().file_metadata().schema_descr()
    }

    /// The file's metadata (row groups, column chunks, statistics).
    pub fn metadata(&self) -> &::parquet::file::metadata::ParquetMetaData {
        self.metadata.metadata()
    }

    /// The file's schema as Arrow reads it.
    pub fn arrow_schema(&self) -> &arrow::datatypes::SchemaRef {
        self.metadata.schema()
    }

    /// The Variant column a command works on: `requested` if given (it must
    /// be one), else the only one, else one named `v`.
    pub fn choose_variant_column(&self, requested: Option<&str>) -> Result<String> {
        if let Some(name) = requested {
            return self.variant_column(name).map(|_| name.to_string());
        }
        let variants = self.variant_columns();
        match variants.as_slice() {
            [only] => Ok(only.clone()),
            _ if variants.iter().any(|c| c == "v") => Ok("v".into()),
            [] => Err(Error::new(
                ErrorKind::Usage,
                "this file has no Variant column",
            )),
            _ => Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "choose a Variant column with --column (this file has: {})",
                    variants.join(", ")
                ),
            )),
        }
    }

    /// The names of the top-level Variant columns: groups annotated
    /// `VARIANT`, or, when a writer left the annotation out, fields with the
    /// Arrow extension type or the `metadata` + `value`/`typed_value` shape.
    pub fn variant_columns(&self) -> Vec<String> {
        let annotated = self
            .parquet_schema()
            .root_schema()
            .get_fields()
            .iter()
            .filter(|f| {
                matches!(
                    f.get_basic_info().logical_type_ref(),
                    Some(LogicalType::Variant(_))
                )
            })
            .map(|f| f.name().to_string());
        let shaped = self
            .metadata
            .schema()
            .fields()
            .iter()
            .filter(|f| is_variant_field(f))
            .map(|f| f.name().to_string());
        let mut names: Vec<String> = annotated.chain(shaped).collect();
        names.sort();
        names.dedup();
        names
    }

    /// The size of each leaf column, summed over the row groups, in schema
    /// order.
    pub fn leaf_sizes(&self) -> Vec<LeafSize> {
        let descr = self.parquet_schema();
        (0..descr.num_columns())
            .map(|leaf| {
                let mut size = LeafSize {
                    path: descr.column(leaf).path().parts().to_vec(),
                    compressed: 0,
                    uncompressed: 0,
                    values: 0,
                    nulls: Some(0),
                    encodings: Vec::new(),
                };
                for rg in self.metadata().row_groups() {
                    let chunk = rg.column(leaf);
                    size.compressed += chunk.compressed_size().max(0) as u64;
                    size.uncompressed += chunk.uncompressed_size().max(0) as u64;
                    size.values += chunk.num_values().max(0) as u64;
                    let nulls = chunk.statistics().and_then(|s| s.null_count_opt());
                    size.nulls = size.nulls.zip(nulls).map(|(a, b)| a + b);
                    for encoding in chunk.encodings() {
                        let name = encoding.to_string();
                        if !size.encodings.contains(&name) {
                            size.encodings.push(name);
                        }
                    }
                }
                size
            })
            .collect()
    }

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
    /// batch into a `T` with `map` on worker threads (up to one per core,
    /// each reading its own row groups), and hands the results to `sink` on
    /// this thread in file order. Stops at the first error, from `map` or
    /// `sink`.
    pub fn map_batches<T: Send>(
        &self,
        batch_size: usize,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        self.map_columns(None, batch_size, map, sink)
    }

    /// [`map_batches`](Self::map_batches) over the top-level columns named
    /// in `columns` (all when `None`), in the file's order.
    fn map_columns<T: Send>(
        &self,
        columns: Option<&[String]>,
        batch_size: usize,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        let mask = match columns {
            Some(names) => ProjectionMask::roots(self.parquet_schema(), self.root_indices(names)?),
            None => ProjectionMask::all(),
        };
        let row_groups: Vec<usize> = (0..self.metadata().num_row_groups()).collect();
        self.map_row_groups(
            &row_groups,
            batch_size,
            |rg| self.row_group_reader(&self.metadata, rg, batch_size, mask.clone(), None),
            map,
            sink,
        )
    }

    /// Every row as one JSON object per line, every column by name and
    /// Variants reconstructed ([`JsonRows`](crate::unshred::JsonRows)):
    /// rendered a batch at a time on the reader's worker threads, each
    /// batch's lines handed to `sink` as one block, in file order. What
    /// `vshred cat` prints. `columns` chooses the top-level columns (all
    /// when `None`); they come in the file's order.
    pub fn json_lines(
        &self,
        columns: Option<&[String]>,
        batch_size: usize,
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
        self.map_columns(columns, batch_size, render, sink)
    }

    /// Reads `row_groups` with the readers `open` makes, spread over up to
    /// one worker thread per core, each batch turned into a `T` by `map`
    /// there; `sink` gets the results on this thread, in the order of
    /// `row_groups`. A worker holds up to one row group of results (batches
    /// of `batch_size` rows) ahead of `sink`, so that it reads its next row
    /// group while `sink` takes the current one from another worker; at
    /// most [`MAX_AHEAD`] batches, which bounds memory.
    fn map_row_groups<T: Send>(
        &self,
        row_groups: &[usize],
        batch_size: usize,
        open: impl Fn(usize) -> Result<ParquetRecordBatchReader> + Sync,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        mut sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        enum Message<T> {
            Batch(T),
            /// The row group is done, or failed.
            End(Result<()>),
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, row_groups.len().max(1));
        let ahead = if workers == 1 {
            2 // nobody else to wait for: only decoding overlaps writing
        } else {
            row_groups
                .iter()
                .map(|&rg| self.metadata().row_group(rg).num_rows().max(0) as usize)
                .max()
                .unwrap_or(0)
                .div_ceil(batch_size.max(1))
                .clamp(2, MAX_AHEAD)
        };
        let read = |rg: usize, send: &dyn Fn(T) -> bool| -> Result<()> {
            let mut reader = open(rg)?;
            while let Some(batch) = next_batch(&self.path, &mut reader)? {
                if !send(map(batch)?) {
                    break; // sink stopped
                }
            }
            Ok(())
        };
        std::thread::scope(|scope| {
            let (receivers, handles): (Vec<_>, Vec<_>) = (0..workers)
                .map(|w| {
                    let (tx, rx) = std::sync::mpsc::sync_channel(ahead);
                    let read = &read;
                    let handle = scope.spawn(move || {
                        for &rg in row_groups.iter().skip(w).step_by(workers) {
                            let ended = read(rg, &|t| tx.send(Message::Batch(t)).is_ok());
                            if tx.send(Message::End(ended)).is_err() {
                                return;
                            }
                        }
                    });
                    (rx, handle)
                })
                .unzip();
            let mut outcome = Ok(());
            'row_groups: for k in 0..row_groups.len() {
                loop {
                    let step = match receivers[k % workers].recv() {
                        Ok(Message::Batch(t)) => sink(t),
                        Ok(Message::End(Ok(()))) => continue 'row_groups,
                        Ok(Message::End(Err(e))) => Err(e),
                        // The worker panicked: re-raised below.
                        Err(_) => break 'row_groups,
                    };
                    if let Err(e) = step {
                        outcome = Err(e);
                        break 'row_groups;
                    }
                }
            }
            // Unblocks the workers still sending, so that they stop.
            drop(receivers);
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            outcome
        })
    }

    fn builder(&self) -> Result<ParquetRecordBatchReaderBuilder<SharedFile>> {
        self.builder_with(&self.metadata)
    }

    /// A reader of row group `rg`: the leaves of `mask`, the rows of
    /// `selection` (all when `None`).
    fn row_group_reader(
        &self,
        metadata: &ArrowReaderMetadata,
        rg: usize,
        batch_size: usize,
        mask: ProjectionMask,
        selection: Option<RowSelection>,
    ) -> Result<ParquetRecordBatchReader> {
        let mut builder = self
            .builder_with(metadata)?
            .with_row_groups(vec![rg])
            .with_projection(mask)
            .with_batch_size(batch_size);
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        builder.build().map_err(|e| self.error(e))
    }

    fn builder_with(
        &self,
        metadata: &ArrowReaderMetadata,
    ) -> Result<ParquetRecordBatchReaderBuilder<SharedFile>> {
        Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.file.clone(),
            metadata.clone(),
        ))
    }

    /// The footer again, with the column and offset indexes (where the
    /// writer wrote them).
    fn with_page_index(&self) -> Result<ArrowReaderMetadata> {
        let options = ArrowReaderOptions::new()
            .with_schema(self.arrow_schema().clone())
            .with_page_index_policy(PageIndexPolicy::Optional);
        guarded(&self.path, || {
            ArrowReaderMetadata::load(&self.file, options).map_err(|e| self.error(e))
        })?
    }

    #[cold]
    fn error(&self, e: impl std::fmt::Display) -> Error {
        Error::parquet("reading", e).in_file(&self.path)
    }

    /// Runs a `variant_get` over the file: reads only the leaves the path
    /// (and the filter) need, skips row groups the filter rules out, and
    /// hands each batch's result (filtered) to `sink`, in file order. The
    /// row groups are read and resolved on worker threads
    /// ([`map_batches`](Self::map_batches)).
    pub fn get(
        &self,
        request: &GetRequest,
        batch_size: usize,
        mut sink: impl FnMut(&ArrayRef) -> Result<()>,
    ) -> Result<ReadStats> {
        self.get_with(request, &[], batch_size, |values, _| sink(values))
    }

    /// [`get`](Self::get), with the top-level columns named in `with` read
    /// too and handed to `sink` beside each batch's result, for the same
    /// rows (the row's `id`, say).
    pub fn get_with(
        &self,
        request: &GetRequest,
        with: &[String],
        batch_size: usize,
        mut sink: impl FnMut(&ArrayRef, &RecordBatch) -> Result<()>,
    ) -> Result<ReadStats> {
        let with_roots = self.root_indices(with)?;
        let schema = self.parquet_schema();
        let column = self.variant_column(&request.column)?;
        let target = resolve(column, &request.path);
        let filter = request
            .filter
            .as_ref()
            .map(|f| self.filter_plan(f, column))
            .transpose()?;
        let row_groups = self.metadata().num_row_groups();
        let mut stats = ReadStats {
            row_groups,
            warnings: filter
                .as_ref()
                .map(|f| self.never_matching(f))
                .unwrap_or_default(),
            ..ReadStats::default()
        };
        // The page index is read only when a filter may use it; a file
        // whose index cannot be read is still read, without page skipping.
        let paged = match &filter {
            Some(f) if f.may_skip_pages(schema) => self.with_page_index().ok(),
            _ => None,
        };
        let reading = paged.as_ref().unwrap_or(&self.metadata);
        let mut read = Vec::new();
        let mut selections: Vec<Option<RowSelection>> = vec![None; row_groups];
        for (rg, selection) in selections.iter_mut().enumerate() {
            let rg_meta = self.metadata().row_group(rg);
            let mut pages = None;
            if let Some(filter) = &filter {
                if !self.may_match(rg, rg_meta, filter)? {
                    continue;
                }
                pages = paged
                    .as_ref()
                    .and_then(|p| self.page_selection(p.metadata(), rg, filter));
                if let Some(p) = &pages {
                    stats.pages_skipped += p.pages_skipped;
                    if p.rows == 0 {
                        continue;
                    }
                }
            }
            read.push(rg);
            stats.row_groups_read += 1;
            match pages {
                Some(p) => {
                    stats.rows_read += p.rows;
                    *selection = Some(p.selection);
                }
                None => stats.rows_read += rg_meta.num_rows() as u64,
            }
        }
        let open = |rg: usize| {
            let rg_meta = self.metadata().row_group(rg);
            let mut leaves = target.leaves(schema, rg_meta, request.as_type.is_typed());
            if let Some(filter) = &filter {
                for (_, operand) in &filter.operands {
                    leaves.extend(operand.leaves(schema, rg_meta));
                }
            }
            leaves.extend(
                (0..schema.num_columns())
                    .filter(|&leaf| with_roots.contains(&schema.get_column_root_idx(leaf))),
            );
            leaves.sort_unstable();
            leaves.dedup();
            self.row_group_reader(
                reading,
                rg,
                batch_size,
                ProjectionMask::leaves(schema, leaves),
                selections[rg].clone(),
            )
        };
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
        self.map_row_groups(&read, batch_size, open, resolve_batch, |(values, with)| {
            sink(&values, &with)
        })?;
        Ok(stats)
    }

    /// The indices of top-level columns by name, in the order given.
    fn root_indices(&self, names: &[String]) -> Result<Vec<usize>> {
        let roots = self.parquet_schema().root_schema().get_fields();
        names
            .iter()
            .map(|name| {
                roots.iter().position(|f| f.name() == name).ok_or_else(|| {
                    let all: Vec<&str> = roots.iter().map(|f| f.name()).collect();
                    Error::new(
                        ErrorKind::Usage,
                        format!("no column {name:?} (the columns: {})", all.join(", ")),
                    )
                    .in_file(&self.path)
                })
            })
            .collect()
    }

    /// The Parquet group of a top-level Variant column.
    fn variant_column(&self, name: &str) -> Result<&Type> {
        let root = self.parquet_schema().root_schema();
        let field = root
            .get_fields()
            .iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Usage,
                    format!(
                        "no column {name:?} (Variant columns: {})",
                        self.variant_columns().join(", ")
                    ),
                )
            })?;
        if !self.variant_columns().iter().any(|c| c == name) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("column {name:?} is not a Variant column"),
            ));
        }
        Ok(field)
    }

    /// Where each operand of `filter` is in this file: a path in the
    /// Variant column `column`, or a top-level column.
    fn filter_plan<'p>(&self, filter: &'p Predicate, column: &Type) -> Result<FilterPlan<'p>> {
        let operands = filter
            .operands()
            .into_iter()
            .map(|operand| {
                let found = match operand {
                    Operand::Path(path) => OperandLeaves::Path(resolve(column, path)),
                    Operand::Column(name) => {
                        OperandLeaves::Column(self.root_indices(std::slice::from_ref(name))?[0])
                    }
                };
                Ok((operand, found))
            })
            .collect::<Result<_>>()?;
        Ok(FilterPlan { filter, operands })
    }

    /// Warnings for comparisons that no row can pass: the operand's
    /// values are all of one kind (a typed column that nothing escapes)
    /// and the literal is of another, as `$.delay == "5"` on an int64
    /// column.
    fn never_matching(&self, filter: &FilterPlan<'_>) -> Vec<String> {
        let schema = self.parquet_schema();
        let mut warnings = Vec::new();
        for comparison in filter.filter.comparisons() {
            let leaves = filter.leaves_of(&comparison.operand);
            let every_row_group = |leaf: &dyn Fn(&RowGroupMetaData) -> Option<usize>| {
                let mut found = None;
                for meta in self.metadata().row_groups() {
                    let this = leaf(meta)?;
                    if found.is_some_and(|f| f != this) {
                        return None;
                    }
                    found = Some(this);
                }
                found
            };
            let Some(leaf) = every_row_group(&|meta| leaves.skippable_leaf(schema, meta)) else {
                continue;
            };
            let descr = schema.column(leaf);
            let Some(kind) = leaf_kind(&descr) else {
                continue;
            };
            if kind != comparison.literal.kind() {
                warnings.push(format!(
                    "no row can pass `{} {}`: every value of {} is stored as {}, and {} is not (the filter compares values of one kind)",
                    comparison.operand,
                    comparison.literal,
                    comparison.operand,
                    kind.plural(),
                    comparison.literal,
                ));
            }
        }
        warnings
    }

    /// Whether row group `rg` may hold a row that passes the filter: each
    /// comparison asks the statistics of its operand's skippable leaf
    /// ([`OperandLeaves::skippable_leaf`]), and its bloom filter for
    /// equality.
    fn may_match(
        &self,
        rg: usize,
        meta: &RowGroupMetaData,
        filter: &FilterPlan<'_>,
    ) -> Result<bool> {
        let schema = self.parquet_schema();
        let mut failed = None;
        let may = filter.filter.may_match(&mut |comparison| {
            let Some(leaf) = filter
                .leaves_of(&comparison.operand)
                .skippable_leaf(schema, meta)
            else {
                return true;
            };
            let chunk = meta.column(leaf);
            let Some(statistics) = chunk.statistics() else {
                return true;
            };
            if statistics.null_count_opt() == Some(chunk.num_values() as u64) {
                // No value at all: no comparison can hold.
                return false;
            }
            let descr = schema.column(leaf);
            let min = bound(&descr, statistics_bound(statistics, true));
            let max = bound(&descr, statistics_bound(statistics, false));
            if !comparison.may_match(min.as_ref(), max.as_ref()) {
                return false;
            }
            if comparison.op != Op::Eq {
                return true;
            }
            self.bloom_may_contain(rg, leaf, &descr, &comparison.literal)
                .unwrap_or_else(|e| {
                    failed = Some(e);
                    true
                })
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(may),
        }
    }

    /// The pages of row group `rg` that the column index cannot rule out
    /// for the filter, as a row selection: each comparison's pages where
    /// its skippable leaf ([`OperandLeaves::skippable_leaf`], the rule
    /// for row groups) is not repeated, intersected for `and` and joined
    /// for `or`. `None` when no index applies or one is missing or
    /// malformed.
    fn page_selection(
        &self,
        metadata: &::parquet::file::metadata::ParquetMetaData,
        rg: usize,
        filter: &FilterPlan<'_>,
    ) -> Option<PageSelection> {
        let rows = usize::try_from(metadata.row_group(rg).num_rows()).ok()?;
        let combine = |how: fn(&RowSelection, &RowSelection) -> RowSelection| {
            move |a: PageSelection, b: PageSelection| {
                PageSelection {
                    selection: how(&a.selection, &b.selection),
                    rows: 0,
                    pages_skipped: a.pages_skipped + b.pages_skipped,
                }
                .counted()
            }
        };
        filter.filter.select(
            &mut |comparison| self.comparison_pages(metadata, rg, rows, filter, comparison),
            &combine(RowSelection::intersection),
            &combine(RowSelection::union),
        )
    }

    /// The pages of one comparison's leaf that the column index leaves.
    fn comparison_pages(
        &self,
        metadata: &::parquet::file::metadata::ParquetMetaData,
        rg: usize,
        rows: usize,
        filter: &FilterPlan<'_>,
        comparison: &Comparison,
    ) -> Option<PageSelection> {
        let schema = self.parquet_schema();
        let meta = metadata.row_group(rg);
        let typed = filter
            .leaves_of(&comparison.operand)
            .skippable_leaf(schema, meta)?;
        let descr = schema.column(typed);
        if descr.max_rep_level() > 0 {
            return None;
        }
        let page_index = metadata.page_index_for_row_group(rg);
        let index = page_index.column_index(typed)?;
        let locations = page_index.offset_index(typed)?.page_locations();
        let mut kept = Vec::with_capacity(locations.len());
        let mut pages_skipped = 0;
        for (page, location) in locations.iter().enumerate() {
            let start = usize::try_from(location.first_row_index).ok()?;
            let end = match locations.get(page + 1) {
                Some(next) => usize::try_from(next.first_row_index).ok()?,
                None => rows,
            };
            if start > end || end > rows || page as u64 >= index.num_pages() {
                return None;
            }
            let empty = index.is_null_page(page);
            let min = bound(&descr, page_bound(index, page, true));
            let max = bound(&descr, page_bound(index, page, false));
            if empty || !comparison.may_match(min.as_ref(), max.as_ref()) {
                pages_skipped += 1;
            } else {
                kept.push(start..end);
            }
        }
        Some(
            PageSelection {
                selection: RowSelection::from_consecutive_ranges(kept.into_iter(), rows),
                rows: 0,
                pages_skipped,
            }
            .counted(),
        )
    }

    /// False only when the column chunk's bloom filter proves `lit` absent.
    fn bloom_may_contain(
        &self,
        rg: usize,
        leaf: usize,
        descr: &::parquet::schema::types::ColumnDescriptor,
        lit: &Literal,
    ) -> Result<bool> {
        if self
            .metadata()
            .row_group(rg)
            .column(leaf)
            .bloom_filter_offset()
            .is_none()
        {
            return Ok(true);
        }
        let builder = self.builder()?;
        let Some(bloom) = builder
            .get_row_group_column_bloom_filter(rg, leaf)
            .map_err(|e| self.error(e))?
        else {
            return Ok(true);
        };
        Ok(match (descr.physical_type(), lit) {
            (PhysicalType::BYTE_ARRAY, Literal::String(s)) => bloom.check(s.as_str()),
            (PhysicalType::INT64, Literal::Number(d)) if d.scale() == 0 || is_decimal(descr) => {
                match exact_unscaled(d, descr) {
                    Some(v) => i64::try_from(v).map_or(true, |v| bloom.check(&v)),
                    None => true,
                }
            }
            (PhysicalType::INT32, Literal::Number(d)) => match exact_unscaled(d, descr) {
                Some(v) => i32::try_from(v).map_or(true, |v| bloom.check(&v)),
                None => true,
            },
            _ => true,
        })
    }
}

/// Runs `f`, turning a panic into an error: the parquet crate asserts on
/// some malformed pages and indexes, and a corrupt file must not take the
/// program down.
fn guarded<T>(path: &Path, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into());
        Error::new(ErrorKind::Parquet, format!("corrupt data: {what}")).in_file(path)
    })
}

/// The reader's next batch, with its errors and panics as our errors.
fn next_batch(path: &Path, reader: &mut ParquetRecordBatchReader) -> Result<Option<RecordBatch>> {
    guarded(path, || reader.next())?
        .transpose()
        .map_err(|e| Error::parquet("reading", &e).in_file(path).with_source(e))
}

/// Fails unless the file starts and ends with Parquet's magic bytes, so
/// that any other file is "not a Parquet file" rather than a corrupt one.
fn check_magic(file: &SharedFile, length: u64) -> Result<()> {
    use ::parquet::file::reader::ChunkReader;
    const MAGIC: &[u8] = b"PAR1";
    let magic_at = |at: u64| file.get_bytes(at, 4).is_ok_and(|b| b == MAGIC);
    let head = length >= 4 && magic_at(0);
    // The smallest file: magic, an empty footer's length, magic.
    if length >= 12 && head && magic_at(length - 4) {
        return Ok(());
    }
    let why = if length == 0 {
        "the file is empty".to_string()
    } else if head {
        "it starts as one but does not end with the PAR1 footer magic (cut short?)".to_string()
    } else {
        format!("it does not start with the PAR1 magic bytes ({length} bytes)")
    };
    Err(Error::new(
        ErrorKind::Parquet,
        format!("not a Parquet file: {why}"),
    ))
}

/// Checks that every column chunk lies inside the file, which the parquet
/// crate assumes (it panics on negative offsets).
fn check_chunks(
    metadata: &::parquet::file::metadata::ParquetMetaData,
    length: u64,
) -> std::result::Result<(), String> {
    for (rg, group) in metadata.row_groups().iter().enumerate() {
        for chunk in group.columns() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            if start < 0 || size < 0 || (start as u64).saturating_add(size as u64) > length {
                return Err(format!(
                    "row group {rg}, column {}: chunk at byte {start} of {size} bytes lies outside the file ({length} bytes)",
                    chunk.column_path()
                ));
            }
        }
    }
    Ok(())
}

fn is_decimal(descr: &::parquet::schema::types::ColumnDescriptor) -> bool {
    matches!(descr.logical_type_ref(), Some(LogicalType::Decimal(_)))
        || descr.converted_type() == ConvertedType::DECIMAL
}

/// The unscaled integer a literal has in this integer or decimal column,
/// when that is exact; `None` otherwise (then the bloom filter is not
/// asked).
fn exact_unscaled(
    d: &VariantDecimal,
    descr: &::parquet::schema::types::ColumnDescriptor,
) -> Option<i128> {
    let scale = if is_decimal(descr) {
        descr.type_scale().max(0) as u8
    } else {
        0
    };
    d.rescale(scale).map(|d| d.unscaled())
}

/// Whether a leaf is null in every row of the row group.
fn all_null(meta: &RowGroupMetaData, leaf: usize) -> bool {
    let chunk = meta.column(leaf);
    chunk
        .statistics()
        .and_then(|s| s.null_count_opt())
        .is_some_and(|n| n == chunk.num_values() as u64)
}

/// A min or max as the footer stores it, before it is read in the terms
/// of the leaf's logical type.
#[derive(Clone, Copy)]
enum RawBound<'a> {
    Bool(bool),
    Int(i128),
    Float(f64),
    Bytes(&'a [u8]),
}

/// A bound of a typed leaf, from its row group statistics or its column
/// index, as a Variant value: integers and decimals as exact numbers,
/// strings as strings (`None` for bytes that are not UTF-8).
fn bound<'a>(
    descr: &::parquet::schema::types::ColumnDescriptor,
    raw: Option<RawBound<'a>>,
) -> Option<VariantRef<'a>> {
    let decimal = is_decimal(descr);
    let scale = if decimal {
        descr.type_scale().max(0) as u8
    } else {
        0
    };
    let number = |v: i128| {
        VariantDecimal::try_new(v, scale)
            .ok()
            .map(VariantRef::Decimal16)
    };
    match raw? {
        RawBound::Bool(b) => Some(VariantRef::Bool(b)),
        RawBound::Int(v) => number(v),
        RawBound::Float(v) => Some(VariantRef::Double(v)),
        RawBound::Bytes(bytes) => match descr.physical_type() {
            PhysicalType::BYTE_ARRAY if !decimal => {
                std::str::from_utf8(bytes).ok().map(VariantRef::String)
            }
            PhysicalType::FIXED_LEN_BYTE_ARRAY if decimal => {
                if bytes.is_empty() || bytes.len() > 16 {
                    return None;
                }
                // Big-endian two's complement, sign-extended to 16 bytes.
                let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0 };
                let mut full = [fill; 16];
                full[16 - bytes.len()..].copy_from_slice(bytes);
                number(i128::from_be_bytes(full))
            }
            _ => None,
        },
    }
}

/// The min (or max) of a row group's statistics.
fn statistics_bound(statistics: &Statistics, is_min: bool) -> Option<RawBound<'_>> {
    macro_rules! pick {
        ($s:expr) => {
            if is_min { $s.min_opt() } else { $s.max_opt() }
        };
    }
    match statistics {
        Statistics::Boolean(s) => pick!(s).map(|b| RawBound::Bool(*b)),
        Statistics::Int32(s) => pick!(s).map(|v| RawBound::Int(*v as i128)),
        Statistics::Int64(s) => pick!(s).map(|v| RawBound::Int(*v as i128)),
        Statistics::Float(s) => pick!(s).map(|v| RawBound::Float(*v as f64)),
        Statistics::Double(s) => pick!(s).map(|v| RawBound::Float(*v)),
        Statistics::ByteArray(s) => pick!(s).map(|v| RawBound::Bytes(v.data())),
        Statistics::FixedLenByteArray(s) => pick!(s).map(|v| RawBound::Bytes(v.data())),
        Statistics::Int96(_) => None,
    }
}

/// The min (or max) of one page in a column index.
fn page_bound(index: &ColumnIndexMetaData, page: usize, is_min: bool) -> Option<RawBound<'_>> {
    macro_rules! pick {
        ($ix:expr) => {
            if is_min {
                $ix.min_value(page)
            } else {
                $ix.max_value(page)
            }
        };
    }
    match index {
        ColumnIndexMetaData::BOOLEAN(ix) => pick!(ix).map(|b| RawBound::Bool(*b)),
        ColumnIndexMetaData::INT32(ix) => pick!(ix).map(|v| RawBound::Int(*v as i128)),
        ColumnIndexMetaData::INT64(ix) => pick!(ix).map(|v| RawBound::Int(*v as i128)),
        ColumnIndexMetaData::FLOAT(ix) => pick!(ix).map(|v| RawBound::Float(*v as f64)),
        ColumnIndexMetaData::DOUBLE(ix) => pick!(ix).map(|v| RawBound::Float(*v)),
        ColumnIndexMetaData::BYTE_ARRAY(ix) | ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(ix) => {
            pick!(ix).map(RawBound::Bytes)
        }
        _ => None,
    }
}

/// Where a path leads in a Variant column's Parquet group.
struct Target {
    /// Leaf path prefix of the slot where resolution stopped.
    slot: Vec<String>,
    /// Whether every segment went through shredded groups.
    complete: bool,
}

impl Target {
    fn prefix_leaves(&self, schema: &SchemaDescriptor, suffix: &[&str]) -> Vec<usize> {
        let mut prefix = self.slot.clone();
        prefix.extend(suffix.iter().map(|s| s.to_string()));
        (0..schema.num_columns())
            .filter(|&i| schema.column(i).path().parts().starts_with(&prefix))
            .collect()
    }

    /// The leaves to read in a row group: the slot's subtree when the path
    /// is complete (without an all-null `value`), else the slot's residual;
    /// `metadata` whenever a Variant-encoded value may need decoding.
    fn leaves(
        &self,
        schema: &SchemaDescriptor,
        meta: &RowGroupMetaData,
        typed_result: bool,
    ) -> Vec<usize> {
        let value = self.prefix_leaves(schema, &["value"]);
        let value_needed = value.iter().any(|&v| !all_null(meta, v));
        let mut leaves = if self.complete {
            let mut l = self.prefix_leaves(schema, &["typed_value"]);
            if value_needed || l.is_empty() {
                l.extend(&value);
            }
            l
        } else {
            value
        };
        if value_needed || !self.complete || !typed_result {
            let column = &self.slot[0];
            leaves.extend((0..schema.num_columns()).filter(|&i| {
                schema.column(i).path().parts() == [column.clone(), "metadata".into()]
            }));
        }
        leaves
    }

    /// The single primitive `typed_value` leaf of a complete path.
    fn typed_leaf(&self, schema: &SchemaDescriptor) -> Option<usize> {
        if !self.complete {
            return None;
        }
        let leaves = self.prefix_leaves(schema, &["typed_value"]);
        let mut path = self.slot.clone();
        path.push("typed_value".into());
        match leaves.as_slice() {
            [one] if schema.column(*one).path().parts() == path.as_slice() => Some(*one),
            _ => None,
        }
    }

    fn value_leaf(&self, schema: &SchemaDescriptor) -> Option<usize> {
        self.prefix_leaves(schema, &["value"]).first().copied()
    }

    /// The typed leaf whose statistics (of the row group, or of its pages)
    /// may rule rows out, as the spec's Data Skipping section allows: the
    /// single primitive `typed_value` of a complete path, where the slot's
    /// `value` is all null in the row group, so that no value escapes it.
    fn skippable_leaf(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Option<usize> {
        let typed = self.typed_leaf(schema)?;
        match self.value_leaf(schema) {
            Some(value) if !all_null(meta, value) => None,
            _ => Some(typed),
        }
    }
}

/// Follows `path` through the shredded groups of a Variant column.
fn resolve(column: &Type, path: &VariantPath) -> Target {
    let mut slot = vec![column.name().to_string()];
    let mut group = column;
    for segment in path.segments() {
        let Some(typed) = child(group, "typed_value").filter(|t| t.is_group()) else {
            return Target {
                slot,
                complete: false,
            };
        };
        let next = match segment {
            PathSegment::Field(name) if !is_list(typed) => {
                child(typed, name).map(|f| (f, vec![name.clone()]))
            }
            PathSegment::Index(_) if is_list(typed) => child(typed, "list")
                .and_then(|l| l.get_fields().first().map(|e| (l, e)))
                .map(|(l, e)| (e.as_ref(), vec![l.name().to_string(), e.name().to_string()])),
            _ => None,
        };
        let Some((next, names)) = next else {
            return Target {
                slot,
                complete: false,
            };
        };
        slot.push("typed_value".into());
        slot.extend(names);
        group = next;
    }
    Target {
        slot,
        complete: true,
    }
}

fn child<'t>(t: &'t Type, name: &str) -> Option<&'t Type> {
    if !t.is_group() {
        return None;
    }
    t.get_fields()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.as_ref())
}

fn is_list(t: &Type) -> bool {
    matches!(
        t.get_basic_info().logical_type_ref(),
        Some(LogicalType::List)
    ) || t.get_basic_info().converted_type() == ConvertedType::LIST
}
