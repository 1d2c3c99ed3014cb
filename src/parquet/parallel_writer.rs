//! The parquet crate's Arrow writer with its leaves encoded on every core.
//!
//! [`ArrowWriter`] encodes a batch one leaf column after another on the
//! thread that calls it. A shredded Variant column has many leaves (47 on
//! event rows), each with its own levels, dictionary, pages and zstd
//! stream, independent of the others until the row group is written out;
//! an encode's shredding threads run in parallel, and this one thread
//! became the slowest step: on 1M event rows it was busy 90% of the time
//! while the cores had a tenth of theirs to spare.
//!
//! [`ParallelWriter`] does what [`ArrowWriter`] does, built from its parts
//! ([`ArrowWriter::into_serialized_writer`]): a batch's levels are worked
//! out on the calling thread ([`compute_leaves`]), and its leaves are
//! written and, at the end of a row group, closed by that thread and
//! helpers together, each taking the next leaf not yet taken. Column
//! chunks are written out in schema order, so the file is the same byte
//! for byte as [`ArrowWriter`]'s.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use ::parquet::arrow::ArrowWriter;
use ::parquet::arrow::arrow_writer::{
    ArrowColumnChunk, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory,
    ArrowWriterOptions, compute_leaves,
};
use ::parquet::errors::{ParquetError, Result};
use ::parquet::file::metadata::ParquetMetaData;
use ::parquet::file::writer::SerializedFileWriter;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

/// Batches of fewer rows are written on the calling thread alone: starting
/// a helper costs about as much as writing a few hundred values to each of
/// a few dozen leaves.
const MIN_PARALLEL_ROWS: usize = 1024;

/// Writes record batches into row groups of at most a set number of rows,
/// like [`ArrowWriter`], encoding a batch's leaves on up to `threads`
/// threads. Of [`ArrowWriter`]'s ways to cut row groups it keeps the row
/// limit alone: properties with a byte limit or content-defined chunking
/// are refused.
pub(super) struct ParallelWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The row group in progress, if any.
    row_group: Option<RowGroup>,
    /// Rows per row group, at most.
    max_rows: usize,
    /// The parquet crate's estimate of a row group's bytes past which it
    /// is written out, if any.
    max_bytes: Option<usize>,
    threads: usize,
}

/// A row group's column writers, one per leaf, and its rows so far.
struct RowGroup {
    writers: Vec<ArrowColumnWriter>,
    rows: usize,
}

impl<W: Write + Send> ParallelWriter<W> {
    /// A writer of a file with `schema` into `out`, as
    /// [`ArrowWriter::try_new_with_options`] makes it.
    pub(super) fn try_new(
        out: W,
        schema: SchemaRef,
        options: ArrowWriterOptions,
        threads: usize,
    ) -> Result<Self> {
        let writer = ArrowWriter::try_new_with_options(out, schema.clone(), options)?;
        let (file, factory) = writer.into_serialized_writer()?;
        // vshred does not set it.
        let properties = file.properties();
        if properties.content_defined_chunking().is_some() {
            return Err(ParquetError::NYI(
                "content-defined chunking in the parallel writer".into(),
            ));
        }
        let max_bytes = properties.max_row_group_bytes();
        let max_rows = properties
            .max_row_group_row_count()
            .unwrap_or(usize::MAX)
            .max(1);
        Ok(ParallelWriter {
            file,
            factory,
            schema,
            row_group: None,
            max_rows,
            max_bytes,
            threads: threads.max(1),
        })
    }

    /// Writes `batch`, cutting row groups where they reach their rows, or
    /// after the part of it that takes one past its bytes.
    pub(super) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut batch = batch.clone();
        while batch.num_rows() > 0 {
            let row_group = match &mut self.row_group {
                Some(row_group) => row_group,
                empty => empty.insert(RowGroup {
                    writers: self
                        .factory
                        .create_column_writers(self.file.flushed_row_groups().len())?,
                    rows: 0,
                }),
            };
            let rows = batch.num_rows().min(self.max_rows - row_group.rows);
            let part = batch.slice(0, rows);
            batch = batch.slice(rows, batch.num_rows() - rows);
            let mut leaves = Vec::with_capacity(row_group.writers.len());
            for (field, column) in self.schema.fields().iter().zip(part.columns()) {
                leaves.extend(compute_leaves(field, column)?);
            }
            let threads = if rows < MIN_PARALLEL_ROWS {
                1
            } else {
                self.threads
            };
            in_parallel(
                row_group.writers.iter_mut().zip(&leaves),
                threads,
                |(writer, leaf): (&mut ArrowColumnWriter, &ArrowLeafColumn)| writer.write(leaf),
            )?;
            row_group.rows += rows;
            if row_group.rows >= self.max_rows
                || self
                    .max_bytes
                    .is_some_and(|max| self.in_progress_size() >= max)
            {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes out the row group in progress, if any.
    pub(super) fn flush(&mut self) -> Result<()> {
        let Some(row_group) = self.row_group.take() else {
            return Ok(());
        };
        // Closing a leaf compresses its last page: worth sharing too. The
        // chunks are written out in schema order.
        let chunks = Mutex::new(Vec::with_capacity(row_group.writers.len()));
        in_parallel(
            row_group.writers.into_iter().enumerate(),
            self.threads,
            |(leaf, writer): (usize, ArrowColumnWriter)| {
                let chunk = writer.close()?;
                lock(&chunks).push((leaf, chunk));
                Ok(())
            },
        )?;
        let mut chunks: Vec<(usize, ArrowColumnChunk)> =
            chunks.into_inner().unwrap_or_else(PoisonError::into_inner);
        chunks.sort_unstable_by_key(|(leaf, _)| *leaf);
        let mut row_group_writer = self.file.next_row_group()?;
        for (_, chunk) in chunks {
            chunk.append_to_row_group(&mut row_group_writer)?;
        }
        row_group_writer.close()?;
        Ok(())
    }

    /// The parquet crate's estimate of the row group in progress, in bytes
    /// once written ([`ArrowWriter::in_progress_size`]).
    pub(super) fn in_progress_size(&self) -> usize {
        self.row_group.as_ref().map_or(0, |row_group| {
            row_group
                .writers
                .iter()
                .map(ArrowColumnWriter::get_estimated_total_bytes)
                .sum()
        })
    }

    /// Rows in the row group in progress.
    pub(super) fn in_progress_rows(&self) -> usize {
        self.row_group
            .as_ref()
            .map_or(0, |row_group| row_group.rows)
    }

    /// Bytes written out so far.
    pub(super) fn bytes_written(&self) -> usize {
        self.file.bytes_written()
    }

    /// Writes out the row group in progress and the footer.
    pub(super) fn finish(&mut self) -> Result<ParquetMetaData> {
        self.flush()?;
        self.file.finish()
    }
}

/// Runs `job` on every item of `items`, on this thread and up to
/// `threads - 1` helpers, each taking the next item not yet taken. The
/// first error stops the others taking more and is returned.
fn in_parallel<I, F>(items: I, threads: usize, job: F) -> Result<()>
where
    I: Iterator + Send,
    F: Fn(I::Item) -> Result<()> + Sync,
{
    let items = Mutex::new(items);
    let work = || -> Result<()> {
        loop {
            // The lock is held only to take an item, not while working it.
            let next = lock(&items).next();
            match next {
                Some(item) => {
                    if let Err(e) = job(item) {
                        // Nothing more to take: the others stop too.
                        lock(&items).by_ref().for_each(drop);
                        return Err(e);
                    }
                }
                None => return Ok(()),
            }
        }
    };
    if threads <= 1 {
        return work();
    }
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| crate::threads::spawn_scoped(scope, work))
            .collect();
        let mut result = work();
        for helper in helpers {
            let helped = helper.join().unwrap_or_else(|_| {
                Err(ParquetError::General(
                    "a thread writing column chunks panicked".into(),
                ))
            });
            result = result.and(helped);
        }
        result
    })
}

/// A lock that a panicking holder left behind is still usable: the
/// iterator or list it guards stays whole (the panic is reported when
/// the thread is joined).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ::parquet::file::properties::WriterProperties;
    use arrow::array::{
        Array, ArrayRef, Int32Array, Int64Array, Int64Builder, LargeListArray, ListBuilder,
        MapBuilder, StringArray, StringBuilder, StructArray,
    };
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    use arrow::datatypes::{DataType, Field, Fields, Schema};

    use super::*;

    /// A column of nested structs, lists of structs and a map, with nulls
    /// at every level.
    fn nested_schema() -> SchemaRef {
        let point = Fields::from(vec![
            Field::new("x", DataType::Int32, true),
            Field::new("y", DataType::Utf8, true),
        ]);
        let inner = Fields::from(vec![Field::new(
            "points",
            DataType::LargeList(Arc::new(Field::new("item", DataType::Struct(point), true))),
            true,
        )]);
        let map = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new())
            .finish()
            .data_type()
            .clone();
        let fields = Fields::from(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new_list("tags", Field::new_list_field(DataType::Utf8, true), true),
            Field::new("counts", map, true),
            Field::new("inner", DataType::Struct(inner), true),
        ]);
        Arc::new(Schema::new(vec![Field::new(
            "s",
            DataType::Struct(fields),
            true,
        )]))
    }

    /// Batches of [`nested_schema`], some of them across row group limits.
    fn batches(schema: &SchemaRef) -> Vec<RecordBatch> {
        [5000, 1, 2500, 7000, 0, 3000]
            .into_iter()
            .enumerate()
            .map(|(b, rows)| {
                let n = |i: usize| (b * 10_000 + i) as i64;
                let some = |i: usize, every: usize| !(n(i) as usize).is_multiple_of(every);
                let ids = Int64Array::from_iter((0..rows).map(|i| some(i, 7).then(|| n(i))));
                let names = StringArray::from_iter(
                    (0..rows).map(|i| some(i, 5).then(|| format!("name {}", n(i) % 97))),
                );
                let mut tags = ListBuilder::new(StringBuilder::new());
                let mut counts = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
                for i in 0..rows {
                    for t in 0..n(i) % 4 {
                        tags.values()
                            .append_option(some(i + t as usize, 3).then(|| format!("t{t}")));
                        counts.keys().append_value(format!("k{t}"));
                        counts.values().append_option(some(i, 2).then_some(t));
                    }
                    tags.append(some(i, 9));
                    counts.append(some(i, 6)).unwrap();
                }
                let DataType::Struct(fields) = schema.field(0).data_type() else {
                    unreachable!()
                };
                let DataType::Struct(inner_fields) = fields[4].data_type() else {
                    unreachable!()
                };
                let DataType::LargeList(point) = inner_fields[0].data_type() else {
                    unreachable!()
                };
                let DataType::Struct(point_fields) = point.data_type() else {
                    unreachable!()
                };
                let lengths: Vec<usize> = (0..rows).map(|i| n(i) as usize % 3).collect();
                let points = lengths.iter().sum::<usize>();
                let point_values = StructArray::new(
                    point_fields.clone(),
                    vec![
                        Arc::new(Int32Array::from_iter(
                            (0..points).map(|p| some(p, 4).then_some(p as i32)),
                        )),
                        Arc::new(StringArray::from_iter(
                            (0..points).map(|p| some(p, 3).then(|| format!("y{}", p % 10))),
                        )),
                    ],
                    Some(NullBuffer::from_iter((0..points).map(|p| some(p, 8)))),
                );
                let points = LargeListArray::new(
                    point.clone(),
                    OffsetBuffer::from_lengths(lengths),
                    Arc::new(point_values),
                    Some(NullBuffer::from_iter((0..rows).map(|i| some(i, 10)))),
                );
                let inner = StructArray::new(
                    inner_fields.clone(),
                    vec![Arc::new(points) as ArrayRef],
                    Some(NullBuffer::from_iter((0..rows).map(|i| some(i, 11)))),
                );
                let column = StructArray::new(
                    fields.clone(),
                    vec![
                        Arc::new(ids) as ArrayRef,
                        Arc::new(names),
                        Arc::new(tags.finish()),
                        Arc::new(counts.finish()),
                        Arc::new(inner),
                    ],
                    Some(NullBuffer::from_iter((0..rows).map(|i| some(i, 13)))),
                );
                RecordBatch::try_new(schema.clone(), vec![Arc::new(column)]).unwrap()
            })
            .collect()
    }

    #[test]
    fn files_are_the_same_bytes_as_the_arrow_writers_on_any_number_of_threads() {
        let schema = nested_schema();
        let properties = || {
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(4096))
                .build()
        };
        let mut expected =
            ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties())).unwrap();
        for batch in batches(&schema) {
            expected.write(&batch).unwrap();
        }
        let expected = expected.into_inner().unwrap();
        for threads in [1, 2, 3] {
            let options = ArrowWriterOptions::new().with_properties(properties());
            let mut writer =
                ParallelWriter::try_new(Vec::new(), schema.clone(), options, threads).unwrap();
            for batch in batches(&schema) {
                writer.write(&batch).unwrap();
                assert!(writer.in_progress_rows() < 4096);
            }
            let metadata = writer.finish().unwrap();
            assert_eq!(metadata.num_row_groups(), 5); // 17,501 rows
            assert_eq!(metadata.file_metadata().schema_descr().num_columns(), 7);
            assert_eq!(writer.file.inner(), &expected, "{threads} threads");
        }
    }

    #[test]
    fn content_defined_chunking_it_would_not_keep_is_refused() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let properties = WriterProperties::builder()
            .set_content_defined_chunking(Some(Default::default()))
            .build();
        let options = ArrowWriterOptions::new().with_properties(properties);
        let error = ParallelWriter::try_new(Vec::new(), schema, options, 2)
            .err()
            .expect("refused");
        assert!(
            error.to_string().contains("content-defined chunking"),
            "{error}"
        );
    }

    /// A row group byte limit (it was refused) cuts a row group after the
    /// part of a batch that takes it past the limit.
    #[test]
    fn a_row_group_is_cut_after_the_batch_that_passes_its_bytes() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let properties = WriterProperties::builder()
            .set_max_row_group_bytes(Some(100_000))
            .set_dictionary_enabled(false)
            .build();
        let options = ArrowWriterOptions::new().with_properties(properties);
        let mut writer = ParallelWriter::try_new(Vec::new(), schema.clone(), options, 2).unwrap();
        // Ten batches of 50 kB (distinct texts, no dictionary).
        for batch in 0..10 {
            let texts: Vec<String> = (0..50)
                .map(|i| format!("{batch:04}{i:04}{}", "x".repeat(992)))
                .collect();
            let column: ArrayRef = Arc::new(arrow::array::StringArray::from(texts));
            writer
                .write(&RecordBatch::try_new(schema.clone(), vec![column]).unwrap())
                .unwrap();
        }
        let metadata = writer.finish().unwrap();
        let groups: Vec<i64> = metadata.row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups.iter().sum::<i64>(), 500);
        assert!(
            groups.len() >= 4 && groups.iter().all(|&rows| rows % 50 == 0),
            "{groups:?}"
        );
    }

    #[test]
    fn an_error_of_a_job_on_a_helper_or_this_thread_is_returned() {
        for failing in [0, 10, 999] {
            let result = in_parallel(0..1000, 2, |i| {
                if i == failing {
                    return Err(ParquetError::General(format!("item {i}")));
                }
                Ok(())
            });
            let message = result.unwrap_err().to_string();
            assert_eq!(message, format!("Parquet error: item {failing}"));
        }
    }
}
