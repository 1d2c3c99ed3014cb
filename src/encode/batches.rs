//! Record batches holding Variant columns -> one shredded Parquet file:
//! what SQL's `COPY ... TO` writes. The first rows are the inference
//! sample, as [`encode`](super::encode)'s first lines are; they are held
//! (as the batches they came in) until the layout is chosen, then every
//! batch is shredded by [`Shredder::append_variant`], which copies each
//! residual's bytes rather than re-encoding them.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray};
use arrow::datatypes::{DataType, SchemaRef};

use super::plan::{FieldPlan, MEASURED_BYTES, MeasuredLayouts, ShredSample, leaf_encodings};
use super::{EncodeOptions, ShredMode, given_layout, sample_size, write_options};
use crate::error::{Error, ErrorKind, Result};
use crate::infer::LeafEstimate;
use crate::output::{Completion, OpenOutput, Output};
use crate::parquet::{
    ColumnSpec, ParquetWriter, WriteOptions, WriteSummary, is_variant_field, open_output,
};
use crate::shred::{Shredder, ShreddingSchema};
use crate::unshred::unshred;
use crate::variant::VariantRef;

/// Writes record batches to one Parquet file, shredding their Variant
/// columns (fields with the `arrow.parquet.variant` extension type, or of
/// its shape) by a layout inferred from the first rows, by
/// [`EncodeOptions::shred`]. Other columns are written as they are.
///
/// Of [`EncodeOptions`], `shred`, `write`, `sample_rows` and
/// `bloom_filters` apply; the others are about JSON text, and the batches
/// hold Variants already. Errors name the row (from 0, over all the
/// batches) and the column.
///
/// ```
/// use vshred::encode::{BatchEncoder, EncodeOptions, JsonRecords, ShredMode};
/// use vshred::infer::{InferOptions, Preset};
///
/// // Each line one Variant `v`.
/// let mut lines: &[u8] = b"{\"id\": 1, \"tag\": \"a\"}\n{\"id\": 2}\n";
/// let mut records = JsonRecords::new(&mut lines, &EncodeOptions::default())?;
/// let (schema, batch) = (records.schema(), records.next_batch()?.unwrap());
///
/// let dir = tempfile::tempdir().unwrap();
/// // Spark's inference, which shreds a sample this small.
/// let options = EncodeOptions {
///     shred: ShredMode::Infer(InferOptions::new(Preset::Spark)),
///     ..EncodeOptions::default()
/// };
/// let mut encoder = BatchEncoder::new(schema, dir.path().join("out.parquet"), &options)?;
/// encoder.write(&batch)?;
/// let written = encoder.finish()?;
/// let layout = match &written.columns[0] {
///     vshred::parquet::ColumnSpec::Variant { schema, .. } => schema.to_string(),
///     plain => panic!("{plain:?}"),
/// };
/// assert_eq!(layout, r#"{"id":"int64","tag":"string"}"#);
/// assert_eq!(written.summary.rows, 2);
/// # Ok::<(), vshred::Error>(())
/// ```
pub struct BatchEncoder {
    input: SchemaRef,
    options: EncodeOptions,
    /// Until the layout is chosen: the sample, and the output to open the
    /// writer on.
    sampling: Option<(Vec<RecordBatch>, OpenOutput)>,
    writing: Option<Writing>,
    /// Rows taken so far: where the next batch starts, for errors.
    rows: u64,
}

/// The file being written, with a shredder per Variant column.
struct Writing {
    writer: ParquetWriter,
    columns: Vec<ColumnSpec>,
    shredders: Vec<Option<Shredder>>,
}

/// What [`BatchEncoder::finish`] wrote.
#[derive(Clone, Debug)]
pub struct BatchesWritten {
    /// The columns, with the layout chosen for each Variant column.
    pub columns: Vec<ColumnSpec>,
    /// The file.
    pub summary: WriteSummary,
}

impl BatchEncoder {
    /// An encoder of batches of `schema` into `output`, opened at once (so
    /// an output that cannot be written fails before any work); a path
    /// appears only once [`finish`](Self::finish) succeeds.
    pub fn new(
        schema: SchemaRef,
        output: impl Into<Output>,
        options: &EncodeOptions,
    ) -> Result<BatchEncoder> {
        Ok(BatchEncoder {
            input: schema,
            options: options.clone(),
            sampling: Some((Vec::new(), open_output(output.into())?)),
            writing: None,
            rows: 0,
        })
    }

    /// Takes the next batch: held while the sample fills, written after.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        // Names and types: engines differ on nullability and metadata.
        let same = |a: &arrow::datatypes::Field, b: &arrow::datatypes::Field| {
            a.name() == b.name() && a.data_type() == b.data_type()
        };
        let fields = batch.schema_ref().fields();
        if fields.len() != self.input.fields().len()
            || !fields
                .iter()
                .zip(self.input.fields())
                .all(|(a, b)| same(a, b))
        {
            return Err(Error::new(
                ErrorKind::Schema,
                format!(
                    "a batch of schema {} where the encoder takes {}",
                    batch.schema(),
                    self.input
                ),
            ));
        }
        let start = self.rows;
        self.rows += batch.num_rows() as u64;
        if let Some(writing) = &mut self.writing {
            return writing.write(batch, start);
        }
        let (sample, _) = self.sampling.as_mut().expect("sampling until writing");
        sample.push(batch.clone());
        // A sample that ends with the input is weighed as the whole file:
        // past it, the input is longer.
        if self.rows > sample_size(&self.options) as u64 {
            self.start_writing(false)?;
        }
        Ok(())
    }

    /// Writes what is held and completes the file.
    pub fn finish(self) -> Result<BatchesWritten> {
        let (written, completion) = self.finish_staged()?;
        completion.complete()?;
        Ok(written)
    }

    /// Writes what is held and the rest of the file, and leaves a path's
    /// file staged beside it: the [`Completion`] moves it into place, or,
    /// dropped, removes it. For a writer that learns only after the last
    /// byte whether the file is wanted (a cancelled query's is not).
    pub fn finish_staged(mut self) -> Result<(BatchesWritten, Completion)> {
        if self.writing.is_none() {
            self.start_writing(true)?;
        }
        let writing = self.writing.take().expect("writing after start_writing");
        let (summary, completion) = writing.writer.finish_staged()?;
        let written = BatchesWritten {
            summary,
            columns: writing.columns,
        };
        Ok((written, completion))
    }

    /// Chooses the layout from the sample (`whole`: all the file will
    /// hold), opens the writer and writes the sample.
    fn start_writing(&mut self, whole: bool) -> Result<()> {
        let (sample, output) = self.sampling.take().expect("sampling until writing");
        let mut columns = Vec::with_capacity(self.input.fields().len());
        let mut priced = Vec::new();
        let variant_columns: Vec<&str> = self
            .input
            .fields()
            .iter()
            .filter(|f| is_variant_field(f))
            .map(|f| f.name().as_str())
            .collect();
        for (i, field) in self.input.fields().iter().enumerate() {
            columns.push(if is_variant_field(field) {
                let variants = sample
                    .iter()
                    .scan(0u64, |start, batch| {
                        let first = *start;
                        *start += batch.num_rows() as u64;
                        Some(variant_column(batch.column(i), field.name(), first))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let (schema, mut leaves) =
                    self.layout(field.name(), &variant_columns, &variants, whole)?;
                priced.append(&mut leaves);
                ColumnSpec::Variant {
                    schema,
                    name: field.name().clone(),
                }
            } else {
                ColumnSpec::Plain(field.as_ref().clone())
            });
        }
        let write = WriteOptions {
            leaf_encodings: leaf_encodings(&priced),
            ..write_options(&columns, &self.options, None)?
        };
        let mut writing = Writing {
            writer: ParquetWriter::new(output, &columns, &write)?,
            shredders: columns
                .iter()
                .map(|c| match c {
                    ColumnSpec::Variant { schema, .. } => Some(shredder(schema, &self.options)),
                    ColumnSpec::Plain(_) => None,
                })
                .collect(),
            columns,
        };
        let mut start = 0;
        for batch in &sample {
            writing.write(batch, start)?;
            start += batch.num_rows() as u64;
        }
        self.writing = Some(writing);
        Ok(())
    }

    /// The layout of Variant column `name`, from its sampled values, and
    /// its leaves as inference priced them, by their paths in the file.
    fn layout(
        &self,
        name: &str,
        variant_columns: &[&str],
        sample: &[StructArray],
        whole: bool,
    ) -> Result<(ShreddingSchema, Vec<LeafEstimate>)> {
        let infer = match &self.options.shred {
            ShredMode::Infer(infer) => infer,
            ShredMode::None => return Ok((ShreddingSchema::Variant, Vec::new())),
            ShredMode::Schema(schema) => {
                return Ok((given_layout(schema, name, variant_columns), Vec::new()));
            }
        };
        let mut plan = FieldPlan::new(name.to_string(), Some(infer), &self.options.bloom_filters);
        // The rows measured, SQL nulls as `None`: up to MEASURED_BYTES of
        // Variant bytes.
        let mut measured = Vec::new();
        let mut bytes = 0;
        let mut row = 0;
        let mut whole = whole;
        'sample: for column in sample {
            let (metadata, value) = variant_bytes(column);
            for i in 0..column.len() {
                if row >= sample_size(&self.options) {
                    whole = false;
                    break 'sample;
                }
                // A row past the measured bytes is not weighed.
                let measurable = bytes < MEASURED_BYTES;
                whole &= measurable;
                if column.is_null(i) {
                    plan.add_null();
                    if measurable {
                        measured.push(None);
                    }
                } else {
                    let (m, v) = (metadata.value(i), value.value(i));
                    let variant =
                        VariantRef::try_new(m, v).map_err(|e| locate(e, name, row as u64))?;
                    plan.add(&variant);
                    if measurable {
                        bytes += m.len() + v.len();
                        measured.push(Some((m, v)));
                    }
                }
                row += 1;
            }
        }
        let options = &self.options;
        let shred_sample = |schema: &ShreddingSchema| -> Result<StructArray> {
            let mut shredder = shredder(schema, options);
            for row in &measured {
                match *row {
                    Some((m, v)) => shredder.append_variant(m, v)?,
                    None => shredder.append_null(),
                }
            }
            Ok(shredder.finish())
        };
        let chosen = plan.layout(
            &self.options.write,
            measured
                .iter()
                .any(Option::is_some)
                .then_some(&shred_sample as &ShredSample<'_>),
            whole,
            &mut MeasuredLayouts::default(),
        )?;
        let priced = plan.priced_leaves(&chosen);
        Ok((chosen.schema, priced))
    }
}

impl Writing {
    /// Shreds the Variant columns of `batch`, whose first row is row
    /// `start` of the input, and writes it.
    fn write(&mut self, batch: &RecordBatch, start: u64) -> Result<()> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
        for ((column, spec), shredder) in batch
            .columns()
            .iter()
            .zip(&self.columns)
            .zip(&mut self.shredders)
        {
            let (Some(shredder), ColumnSpec::Variant { name, .. }) = (shredder, spec) else {
                arrays.push(column.clone());
                continue;
            };
            let variants = variant_column(column, name, start)?;
            let (metadata, value) = variant_bytes(&variants);
            for row in 0..variants.len() {
                if variants.is_null(row) {
                    shredder.append_null();
                } else if let Err(e) =
                    shredder.append_variant(metadata.value(row), value.value(row))
                {
                    // The rows appended so far are dropped with the batch.
                    shredder.finish();
                    return Err(locate(e, name, start + row as u64));
                }
            }
            arrays.push(Arc::new(shredder.finish()));
        }
        let shredded = RecordBatch::try_new(self.writer.schema().clone(), arrays)
            .map_err(|e| Error::new(ErrorKind::Schema, format!("building a batch: {e}")))?;
        self.writer.write_made(&shredded)
    }
}

/// A shredder by `schema` with the policy of the options' preset.
fn shredder(schema: &ShreddingSchema, options: &EncodeOptions) -> Shredder {
    let policy = match &options.shred {
        ShredMode::Infer(infer) => infer.preset().policy(),
        _ => crate::infer::Preset::Default.policy(),
    };
    Shredder::new(schema).with_policy(policy)
}

/// A Variant column as `metadata` and `value` binaries: as it is when it
/// is so already, else rebuilt (from shredded columns, or other binary
/// types).
fn variant_column(column: &ArrayRef, name: &str, start: u64) -> Result<StructArray> {
    let Some(variants) = column.as_struct_opt() else {
        return Err(Error::new(
            ErrorKind::Schema,
            format!(
                "Variant column {name} is a {}, not a struct",
                column.data_type()
            ),
        ));
    };
    let unshredded = variants.num_columns() == 2
        && [
            variants.column_by_name("metadata"),
            variants.column_by_name("value"),
        ]
        .iter()
        .all(|c| c.is_some_and(|c| c.data_type() == &DataType::Binary));
    if unshredded {
        Ok(variants.clone())
    } else {
        unshred(variants).map_err(|e| locate(e, name, start))
    }
}

/// The `metadata` and `value` of a [`variant_column`].
fn variant_bytes(column: &StructArray) -> (&arrow::array::BinaryArray, &arrow::array::BinaryArray) {
    let binary = |name| {
        column
            .column_by_name(name)
            .expect("a Variant column")
            .as_binary::<i32>()
    };
    (binary("metadata"), binary("value"))
}

/// Names the row and column of an error about a Variant value.
fn locate(e: Error, column: &str, row: u64) -> Error {
    let row = e.row().map_or(row, |r| row + r);
    e.with_row(row).with_note(&format!("in column {column}"))
}
