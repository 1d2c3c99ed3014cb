//! JSON Lines read a batch at a time into one buffer, each line with where
//! it came from (row, line number, byte offset), and the tallies of bad
//! lines skipped or refused.

use std::collections::VecDeque;
use std::io::{BufRead, Read};

use super::{EncodeOptions, LineCounts};
use crate::error::{Error, ErrorKind, Result};
use crate::json::UTF8_BOM;

/// A line held in [`Lines`].
#[derive(Clone, Copy)]
pub(super) struct Line {
    /// Index among the non-blank lines, from 0.
    pub(super) row: u64,
    /// Line number in the input, from 1.
    pub(super) number: u64,
    /// Byte offset of the line in the input.
    pub(super) offset: u64,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// A batch of lines in one buffer, with where each came from.
#[derive(Default)]
pub(super) struct Lines {
    pub(super) text: Vec<u8>,
    /// Each non-blank line in `text`: where it is in the input.
    pub(super) lines: Vec<Line>,
}

impl Lines {
    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the batch holds `max_bytes` of text and at least a line: a
    /// fill stops there, short of its count.
    fn holds(&self, max_bytes: usize) -> bool {
        !self.lines.is_empty() && self.text.len() >= max_bytes
    }

    /// How many of the first `n` of these lines `batch` takes before it
    /// holds `max_bytes`.
    fn fitting(&self, n: usize, batch: &Lines, max_bytes: usize) -> usize {
        let (mut bytes, mut taken) = (batch.text.len(), batch.len());
        let mut count = 0;
        for line in &self.lines[..n] {
            if taken > 0 && bytes >= max_bytes {
                break;
            }
            bytes += line.end - line.start;
            taken += 1;
            count += 1;
        }
        count
    }

    /// Moves the first `n` lines of `from` to the end of these.
    fn move_front(&mut self, from: &mut Lines, n: usize) {
        for line in from.lines.drain(..n) {
            let start = self.text.len();
            self.text
                .extend_from_slice(&from.text[line.start..line.end]);
            self.lines.push(Line {
                start,
                end: self.text.len(),
                ..line
            });
        }
    }

    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (Line, &[u8])> + '_ {
        self.lines.iter().map(|&l| (l, &self.text[l.start..l.end]))
    }
}

/// The lines of the input still to be written: those read past the end of
/// the last file (with a byte limit), then the reader's.
pub(super) struct Source<'r> {
    reader: LineReader<'r>,
    /// Batches read and not written, in input order.
    pending: VecDeque<Lines>,
}

impl<'r> Source<'r> {
    pub(super) fn new(input: &'r mut dyn BufRead) -> Source<'r> {
        Source {
            reader: LineReader::new(input),
            pending: VecDeque::new(),
        }
    }

    /// Adds up to `n` more lines to `lines`, the pending ones first, or
    /// fewer once it holds [`MAX_BATCH_BYTES`]: a batch to encode.
    pub(super) fn fill(&mut self, lines: &mut Lines, n: usize) -> Result<()> {
        self.fill_up_to(lines, n, MAX_BATCH_BYTES)
    }

    /// Adds `n` more lines to `lines`, however long (fewer at the end of
    /// the input): the sample the columns are chosen from, which
    /// [`first_batch`](Self::first_batch) then cuts into batches.
    pub(super) fn fill_sample(&mut self, lines: &mut Lines, n: usize) -> Result<()> {
        self.fill_up_to(lines, n, usize::MAX)
    }

    fn fill_up_to(&mut self, lines: &mut Lines, n: usize, max_bytes: usize) -> Result<()> {
        let target = lines.len() + n;
        while lines.len() < target
            && !lines.holds(max_bytes)
            && let Some(front) = self.pending.front_mut()
        {
            let moved = front.fitting((target - lines.len()).min(front.len()), lines, max_bytes);
            lines.move_front(front, moved);
            if front.is_empty() {
                self.pending.pop_front();
            }
        }
        self.reader.fill(lines, target - lines.len(), max_bytes)
    }

    /// Whether no line is left to read: reads the next one, if any, to
    /// know (it stays pending).
    pub(super) fn ended(&mut self) -> Result<bool> {
        if !self.pending.is_empty() {
            return Ok(false);
        }
        let mut next = Lines::default();
        self.reader.fill(&mut next, 1, usize::MAX)?;
        if next.is_empty() {
            return Ok(true);
        }
        self.pending.push_back(next);
        Ok(false)
    }

    /// The first batch of `sample` (lines [`fill_sample`](Self::fill_sample)
    /// read whole, to choose the columns), of [`MAX_BATCH_BYTES`] at most
    /// or one line: the lines after it are pending, read again as batches,
    /// so that a sample is encoded a batch at a time as any lines are.
    pub(super) fn first_batch(&mut self, mut sample: Lines) -> Lines {
        let n = sample.fitting(sample.len(), &Lines::default(), MAX_BATCH_BYTES);
        if n == sample.len() {
            return sample;
        }
        let mut first = Lines::default();
        first.move_front(&mut sample, n);
        self.pending.push_front(sample);
        first
    }

    /// Puts batches read past the end of a file back, before the pending
    /// ones.
    pub(super) fn put_back(&mut self, batches: VecDeque<Lines>) {
        for batch in batches.into_iter().rev() {
            self.pending.push_front(batch);
        }
    }

    /// Input bytes read so far.
    pub(super) fn consumed(&self) -> u64 {
        self.reader.consumed()
    }
}

/// The longest line read: Parquet holds no value longer (nor its Variant,
/// which is no shorter), and a line without end (a device, a binary file)
/// stops here, not where memory runs out.
const MAX_LINE_BYTES: u64 = i32::MAX as u64;

/// The text a batch holds before it is cut short of its lines: a batch's
/// values go into one Arrow array each, whose offsets end at 2 GiB, and
/// encoding a batch takes a few times its text in memory. 8,192 lines of
/// 270 kB (documents with HTML or base64 bodies) failed at 9 GB.
const MAX_BATCH_BYTES: usize = 64 << 20;

/// Reads the input into [`Lines`], counting lines and bytes.
struct LineReader<'r> {
    input: &'r mut dyn BufRead,
    line_no: u64,
    /// Non-blank lines read.
    rows: u64,
    consumed: u64,
}

impl<'r> LineReader<'r> {
    fn new(input: &'r mut dyn BufRead) -> LineReader<'r> {
        LineReader {
            input,
            line_no: 0,
            rows: 0,
            consumed: 0,
        }
    }

    /// Reads up to `n` more non-blank lines into `batch`.
    fn fill(&mut self, batch: &mut Lines, n: usize, max_bytes: usize) -> Result<()> {
        let target = batch.lines.len() + n;
        while batch.lines.len() < target && !batch.holds(max_bytes) {
            let start = batch.text.len();
            let read = (&mut *self.input)
                .take(MAX_LINE_BYTES + 1)
                .read_until(b'\n', &mut batch.text)
                .map_err(Error::reading_input)?;
            if read == 0 {
                break;
            }
            if read as u64 > MAX_LINE_BYTES {
                return Err(Error::new(
                    ErrorKind::Json,
                    format!(
                        "line {} (from byte {}) is longer than 2 GiB, the most a Parquet value holds (is the input JSON Lines?)",
                        self.line_no + 1,
                        self.consumed
                    ),
                ));
            }
            let mut offset = self.consumed;
            self.consumed += read as u64;
            self.line_no += 1;
            let mut start = start;
            // A byte order mark at the start of the input is not JSON;
            // offsets still count it.
            if offset == 0 && batch.text[start..].starts_with(UTF8_BOM) {
                start += UTF8_BOM.len();
                offset += UTF8_BOM.len() as u64;
            }
            let mut end = batch.text.len();
            while end > start && matches!(batch.text[end - 1], b'\n' | b'\r') {
                end -= 1;
            }
            if batch.text[start..end].iter().all(u8::is_ascii_whitespace) {
                batch.text.truncate(batch.text.len() - read);
                continue;
            }
            self.rows += 1;
            batch.lines.push(Line {
                row: self.rows - 1,
                number: self.line_no,
                offset,
                start,
                end,
            });
        }
        Ok(())
    }

    fn consumed(&self) -> u64 {
        self.consumed
    }
}

/// What the lines of a run came to: bad lines (counted and skipped, or
/// the first turned into the error) and lines with inexact numbers.
pub(super) struct LineTallies {
    pub(super) skip: bool,
    /// Lines that are items ([`EncodeOptions::items`]).
    items: bool,
    bad: u64,
    /// The earliest bad line counted: its number, its error and the
    /// error's kind.
    first_bad: Option<(u64, String, ErrorKind)>,
    /// Bad lines of the sample, which is read again when encoding.
    pub(super) sampled: Vec<u64>,
    /// Numbers stored as inexact doubles.
    inexact: u64,
    /// The earliest line with one.
    first_inexact: Option<u64>,
}

impl LineTallies {
    /// The tallies of a run with `options`.
    pub(super) fn of(options: &EncodeOptions) -> LineTallies {
        LineTallies {
            items: options.items,
            ..LineTallies::new(options.skip_bad_lines)
        }
    }

    pub(super) fn new(skip: bool) -> LineTallies {
        LineTallies {
            skip,
            items: false,
            bad: 0,
            first_bad: None,
            sampled: Vec::new(),
            inexact: 0,
            first_inexact: None,
        }
    }

    /// A tally for an encoding thread or a batch: nothing counted yet,
    /// the same sample lines known.
    pub(super) fn for_worker(&self) -> LineTallies {
        LineTallies {
            sampled: self.sampled.clone(),
            items: self.items,
            ..LineTallies::new(self.skip)
        }
    }

    /// Bad lines counted.
    pub(super) fn bad_lines(&self) -> u64 {
        self.bad
    }

    /// The kind of error of the earliest bad line counted.
    pub(super) fn first_bad_kind(&self) -> Option<ErrorKind> {
        self.first_bad.as_ref().map(|(.., kind)| *kind)
    }

    /// What was counted, for a report.
    pub(super) fn counts(&self) -> LineCounts {
        LineCounts {
            bad_lines: self.bad,
            first_bad_line: self.first_bad.as_ref().map(|(_, e, _)| e.clone()),
            inexact_numbers: self.inexact,
            first_inexact_line: self.first_inexact,
        }
    }

    /// Adds what an encoding thread counted.
    pub(super) fn merge(&mut self, other: LineTallies) {
        self.bad += other.bad;
        if let Some(first) = other.first_bad
            && self.first_bad.as_ref().is_none_or(|f| first.0 < f.0)
        {
            self.first_bad = Some(first);
        }
        self.add_inexact(other.inexact, other.first_inexact);
    }

    /// Counts `count` inexact numbers, the first at line `first`.
    pub(super) fn add_inexact(&mut self, count: u64, first: Option<u64>) {
        self.inexact += count;
        if let Some(line) = first {
            self.first_inexact = Some(self.first_inexact.map_or(line, |f| f.min(line)));
        }
    }

    /// Records a bad line of the sample.
    pub(super) fn record_sample(&mut self, line: Line, text: &[u8], e: Error) -> Result<()> {
        self.record(line, text, e)?;
        self.sampled.push(line.number);
        Ok(())
    }

    /// Records a bad line: an error unless skipping. Lines are recorded
    /// once, though the sample lines are read twice.
    pub(super) fn record(&mut self, line: Line, text: &[u8], e: Error) -> Result<()> {
        let e = locate(e, line, text);
        if !self.skip {
            return Err(e);
        }
        // An input of another kind (arguments given the wrong way round, a
        // compressed file) would come down to the few lines that parse.
        if line.row == 0 && !self.items && crate::json::not_json_lines(text) {
            return Err(e.with_note(
                "--skip-bad-lines skips bad lines of JSON Lines, and this input is not JSON Lines",
            ));
        }
        if !self.sampled.contains(&line.number) {
            self.bad += 1;
            if self.first_bad.as_ref().is_none_or(|f| line.number < f.0) {
                self.first_bad = Some((line.number, e.to_string(), e.kind()));
            }
        }
        Ok(())
    }
}

/// Moves an error positioned within one line (`text`) to its place in the
/// input.
pub(super) fn locate(e: Error, line: Line, text: &[u8]) -> Error {
    crate::json::JsonLine {
        row: line.row,
        line: line.number,
        byte: line.offset,
        text,
    }
    .locate(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_of_long_lines_ends_at_its_bytes_and_the_next_goes_on() {
        // 70 lines of 1 MiB: 64 fill a batch, the rest come next.
        let line = format!("\"{}\"\n", "x".repeat((1 << 20) - 2));
        let text = line.repeat(70);
        let mut input = text.as_bytes();
        let mut source = Source::new(&mut input);
        let mut batch = Lines::default();
        source.fill(&mut batch, 8192).unwrap();
        assert_eq!(batch.len(), 64);
        let mut next = Lines::default();
        source.fill(&mut next, 8192).unwrap();
        assert_eq!(next.len(), 6);
        assert_eq!(next.lines[0].row, 64);
        assert_eq!(next.lines[0].offset, 64 * ((1 << 20) + 1));
        // A sample takes its lines however long, and goes out a batch at a
        // time.
        let mut input = text.as_bytes();
        let mut source = Source::new(&mut input);
        let mut sample = Lines::default();
        source.fill_sample(&mut sample, 8192).unwrap();
        assert_eq!(sample.len(), 70);
        let first = source.first_batch(sample);
        let mut rest = Lines::default();
        source.fill(&mut rest, 8192).unwrap();
        assert_eq!((first.len(), rest.len()), (64, 6));
        assert_eq!(rest.lines[0].row, 64);
        // A line longer than a batch's bytes is a batch of its own.
        let long = format!("\"{}\"\n1\n", "y".repeat(MAX_BATCH_BYTES));
        let mut input = long.as_bytes();
        let mut source = Source::new(&mut input);
        let mut batch = Lines::default();
        source.fill(&mut batch, 8192).unwrap();
        assert_eq!(batch.len(), 1);
    }
}
