//! JSON Lines read into batches of one unshredded Variant column: what a
//! query engine's `read_jsonl` scans. Errors say where (line, column, byte
//! offset), as `encode`'s do.

use std::io::BufRead;

use arrow::array::StructArray;

use crate::encode::{LineReader, Lines, locate};
use crate::error::Result;
use crate::json::InexactNumbers;
use crate::shred::{Shredder, ShreddingSchema};
use crate::variant::DuplicateKeys;

/// Reads JSON Lines as batches of Variants, each line one row.
///
/// ```
/// use arrow::array::Array;
/// use vshred::encode::VariantLines;
///
/// let text = b"{\"a\": 1}\n\n[true]\n";
/// let mut input = &text[..];
/// let mut lines = VariantLines::new(&mut input, 1024);
/// let batch = lines.next_batch()?.expect("one batch");
/// assert_eq!(batch.len(), 2);
/// assert!(lines.next_batch()?.is_none());
///
/// let mut bad = &b"{\"a\": 1}\n{\"a\": }\n"[..];
/// let err = VariantLines::new(&mut bad, 1024).next_batch().unwrap_err();
/// assert!(err.to_string().contains("line 2"), "{err}");
/// # Ok::<(), vshred::Error>(())
/// ```
pub struct VariantLines<'r> {
    reader: LineReader<'r>,
    lines: Lines,
    batch_rows: usize,
    inexact_numbers: InexactNumbers,
    duplicate_keys: DuplicateKeys,
}

impl<'r> VariantLines<'r> {
    /// Batches of up to `batch_rows` lines of `input`; blank lines are
    /// skipped.
    pub fn new(input: &'r mut dyn BufRead, batch_rows: usize) -> VariantLines<'r> {
        VariantLines {
            reader: LineReader::new(input),
            lines: Lines::default(),
            batch_rows: batch_rows.max(1),
            inexact_numbers: InexactNumbers::default(),
            duplicate_keys: DuplicateKeys::default(),
        }
    }

    /// What numbers that no decimal holds become, as `encode` takes it.
    pub fn with_inexact_numbers(mut self, inexact: InexactNumbers) -> VariantLines<'r> {
        self.inexact_numbers = inexact;
        self
    }

    /// What a key given twice does, as `encode` takes it.
    pub fn with_duplicate_keys(mut self, policy: DuplicateKeys) -> VariantLines<'r> {
        self.duplicate_keys = policy;
        self
    }

    /// The next batch, `None` at the end of the input.
    pub fn next_batch(&mut self) -> Result<Option<StructArray>> {
        self.lines.clear();
        self.reader.fill(&mut self.lines, self.batch_rows)?;
        if self.lines.lines.is_empty() {
            return Ok(None);
        }
        let mut shredder = Shredder::new(&ShreddingSchema::Variant)
            .with_inexact_numbers(self.inexact_numbers)
            .with_duplicate_keys(self.duplicate_keys);
        for line in &self.lines.lines {
            let text = &self.lines.text[line.start..line.end];
            shredder
                .append_json(text)
                .map_err(|e| locate(e, *line, text))?;
        }
        Ok(Some(shredder.finish()))
    }
}
