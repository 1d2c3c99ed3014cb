//! JSON Lines read into record batches as `encode` would write them: each
//! line a row, its top-level fields columns (the named Variant fields
//! Variant columns, the others typed by the sample), or each whole line one
//! Variant column `v`. What a query engine's `read_jsonl` scans. Errors say
//! where (line, column, byte offset), as `encode`'s do.

use std::io::BufRead;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};

use super::lines::{LineTallies, Lines, Source};
use super::rows::RowEncoder;
use super::{EncodeOptions, ShredMode, plan_first_sample};
use crate::error::{Error, ErrorKind, Result};
use crate::parquet::ColumnSpec;

/// Reads JSON Lines as record batches of the columns `encode` would
/// choose, chosen from the first lines (the sample, `sample_rows` of the
/// options); Variant columns come unshredded (`metadata` and `value`),
/// whatever [`EncodeOptions::shred`] says.
///
/// ```
/// use arrow::array::{Array, AsArray};
/// use arrow::datatypes::Int64Type;
/// use vshred::encode::{EncodeOptions, JsonRecords};
///
/// let mut input = &b"{\"id\": 1, \"payload\": {\"a\": [1]}}\n{\"id\": 2, \"payload\": 7}\n"[..];
/// let options = EncodeOptions { variant_fields: vec!["payload".into()], ..EncodeOptions::default() };
/// let mut records = JsonRecords::new(&mut input, &options)?;
/// assert_eq!(records.schema().field(0).name(), "id");
/// let batch = records.next_batch()?.expect("one batch");
/// assert_eq!(batch.column(0).as_primitive::<Int64Type>().values(), &[1, 2]);
/// assert!(records.next_batch()?.is_none());
///
/// // A line that is not JSON is named.
/// let mut bad = &b"{\"a\": 1}\n{\"a\": }\n"[..];
/// let Err(err) = JsonRecords::new(&mut bad, &EncodeOptions::default()) else { panic!() };
/// assert!(err.to_string().contains("line 2"), "{err}");
/// # Ok::<(), vshred::Error>(())
/// ```
pub struct JsonRecords<'r> {
    source: Source<'r>,
    /// The sample, the first batch handed out.
    sample: Option<Lines>,
    lines: Lines,
    columns: Vec<ColumnSpec>,
    schema: SchemaRef,
    encoder: RowEncoder,
    tallies: LineTallies,
    batch_rows: usize,
}

impl<'r> JsonRecords<'r> {
    /// Reads the sample of `input` and chooses the columns; batches are of
    /// up to `batch_rows` of the options' lines (blank lines skipped).
    pub fn new(input: &'r mut dyn BufRead, options: &EncodeOptions) -> Result<JsonRecords<'r>> {
        let options = EncodeOptions {
            shred: ShredMode::None,
            ..options.clone()
        };
        let mut source = Source::new(input);
        let mut tallies = LineTallies::of(&options);
        let (sample, plan) = plan_first_sample(&mut source, &options, &mut tallies)?;
        let columns = plan.columns;
        let schema = Arc::new(Schema::new(
            columns.iter().map(ColumnSpec::field).collect::<Vec<_>>(),
        ));
        let names = RowEncoder::starting_names(&sample, &columns, &options);
        let sample = source.first_batch(sample);
        Ok(JsonRecords {
            source,
            sample: Some(sample),
            lines: Lines::default(),
            encoder: RowEncoder::new(&columns, &options, &names),
            columns,
            schema,
            tallies: LineTallies::of(&options),
            batch_rows: options.batch_rows.max(1),
        })
    }

    /// The columns chosen from the sample.
    pub fn columns(&self) -> &[ColumnSpec] {
        &self.columns
    }

    /// The schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The next batch, `None` at the end of the input.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let lines = match self.sample.take() {
            Some(sample) => {
                self.lines = sample;
                &self.lines
            }
            None => {
                self.lines.clear();
                self.source.fill(&mut self.lines, self.batch_rows)?;
                &self.lines
            }
        };
        if lines.is_empty() {
            return Ok(None);
        }
        let arrays = self.encoder.encode_batch(lines, &mut self.tallies)?;
        RecordBatch::try_new(self.schema.clone(), arrays)
            .map(Some)
            .map_err(|e| Error::new(ErrorKind::Schema, format!("building a batch: {e}")))
    }
}
