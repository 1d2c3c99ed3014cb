//! JSON texts given one per item as the encoder's input: a `BufRead` that
//! gathers them a block at a time, one line each. The items come from a
//! Python iterable (the interpreter taken back for each block, so that a
//! generator of any length is encoded as it yields, in memory of one
//! block) or from Arrow arrays of strings or binaries, one array or the
//! chunks of a chunked one (their values copied straight into the block:
//! no Python object per text).
//!
//! The encoder works with the interpreter released, so Python would see
//! Ctrl-C only once it has finished, its output in place. Every reader of
//! the input, a file's too ([`Interruptible`]), checks for signals once a
//! block: a signal's exception (`KeyboardInterrupt`) fails the read, the
//! encoder stops and removes its temporary file, and the exception is
//! raised as itself ([`Raised`]). The interpreter taken back once a block
//! costs nothing next to encoding the block.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayAccessor, ArrayData, ArrayRef, AsArray, make_array};
use arrow::datatypes::DataType;
use arrow_pyarrow::PyArrowType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator, PyString};
use vshred::shred::is_text_type;

use crate::exiting::Attach;

/// Bytes of JSON text gathered at a time, and of a file read at a time.
pub const BLOCK: usize = 1 << 20;

/// Where the items come from, a block at a time.
pub trait Items {
    /// Appends the next items to `block` with [`Block::push_text`] until
    /// it holds [`BLOCK`] bytes or the items run out; returns whether they
    /// ran out. On an item's error, the items before it stay in `block`.
    fn fill(&mut self, block: &mut Block) -> Result<bool, ItemError>;
}

impl<I: Items + ?Sized> Items for Box<I> {
    fn fill(&mut self, block: &mut Block) -> Result<bool, ItemError> {
        (**self).fill(block)
    }
}

/// Why an item could not be taken, and the Python exception behind it, if
/// one is (the iterator's own, raised again as itself).
pub struct ItemError {
    error: io::Error,
    exception: Option<PyErr>,
}

impl From<io::Error> for ItemError {
    fn from(error: io::Error) -> Self {
        ItemError {
            error,
            exception: None,
        }
    }
}

/// The error of item `i`: `what` it is or holds. The input was not what
/// encode takes, JSON texts: a usage error, given through the reader as
/// the core's own error, which the core gives back as it is.
fn item_error(i: usize, what: &str) -> ItemError {
    io::Error::other(vshred::Error::from_message(format!(
        "item {i} of the input {what}"
    )))
    .into()
}

/// Why a call in a thread other than the main one fails when the program
/// ends under it (`exiting.rs`).
fn exiting() -> vshred::Error {
    vshred::Error::stopped("the Python interpreter is exiting")
}

/// The texts of the items, one a line, gathered for the reader; and
/// where the latest texts that were over several lines broke them, so
/// that an error in one is placed in the text as given.
pub struct Block {
    text: Vec<u8>,
    breaks: ItemBreaks,
}

impl Block {
    fn new() -> Block {
        Block {
            text: Vec::with_capacity(BLOCK),
            breaks: ItemBreaks::default(),
        }
    }

    fn len(&self) -> usize {
        self.text.len()
    }

    /// Appends item `i`'s text and a line break, each item one line. An
    /// empty or blank text would be read as no row (the reader skips
    /// blank lines, as JSON lines allow) and shift the rows against the
    /// items, so it is refused. A text over several lines (pretty-printed)
    /// is put on one ([`join_lines`]), every byte in its place, its breaks
    /// kept for errors.
    fn push_text(&mut self, i: usize, text: &[u8]) -> Result<(), ItemError> {
        // Blank as the reader sees it: ASCII whitespace, after a byte
        // order mark at the start of the input. A text's first byte ends
        // the scan.
        let start = match i {
            0 => text.strip_prefix(vshred::json::UTF8_BOM).unwrap_or(text),
            _ => text,
        };
        if start.iter().all(u8::is_ascii_whitespace) {
            let what = match text.is_empty() {
                true => "is empty (each item is one JSON text)",
                false => "is only whitespace (each item is one JSON text)",
            };
            return Err(item_error(i, what));
        }
        let from = self.text.len();
        self.text.extend_from_slice(text);
        if text.contains(&b'\n') {
            let breaks = join_lines(&mut self.text[from..]);
            // The reader counts columns after a byte order mark.
            let mark = text.len() - start.len();
            self.breaks
                .record(i, breaks.into_iter().map(|at| at - mark).collect());
        }
        self.text.push(b'\n');
        Ok(())
    }
}

/// The line breaks of the latest items over several lines, up to
/// [`KEPT_BREAKS`] of them (an error is met a few blocks after its item
/// at most; the memory of a long pretty-printed input stays bounded).
#[derive(Default)]
struct ItemBreaks {
    /// Each item's number and the offsets of its line breaks, oldest first.
    items: VecDeque<(usize, Vec<usize>)>,
    kept: usize,
}

/// Line breaks kept for errors: 8 MiB.
const KEPT_BREAKS: usize = 1 << 20;

impl ItemBreaks {
    /// Keeps item `item`'s line breaks, at these offsets in its text.
    fn record(&mut self, item: usize, breaks: Vec<usize>) {
        self.kept += breaks.len();
        self.items.push_back((item, breaks));
        while self.kept > KEPT_BREAKS && self.items.len() > 1 {
            let (_, dropped) = self.items.pop_front().expect("more than one");
            self.kept -= dropped.len();
        }
    }

    /// The line and column (from 1) in item `item`'s own text of its
    /// byte `offset` (from 0), if the item was over several lines and is
    /// still known.
    fn locate(&self, item: usize, offset: usize) -> Option<(usize, usize)> {
        let (_, breaks) = self.items.iter().find(|(i, _)| *i == item)?;
        let line = breaks.partition_point(|&b| b < offset);
        let start = if line == 0 { 0 } else { breaks[line - 1] + 1 };
        Some((line + 1, offset - start + 1))
    }
}

/// Puts a JSON text on one line: a line break outside its strings is
/// whitespace, and becomes a space; one inside a string is not JSON, and
/// becomes a carriage return, which the reader refuses there as the
/// control character it is (a bad line, skipped as any is), where a line
/// break would end the line and make the rest another row. (No byte of a
/// UTF-8 sequence past its first is below 0x80, so bytes are scanned
/// alone.) Returns where the line breaks were.
fn join_lines(text: &mut [u8]) -> Vec<usize> {
    let (mut in_string, mut escaped) = (false, false);
    let mut breaks = Vec::new();
    for (at, byte) in text.iter_mut().enumerate() {
        match (in_string, *byte) {
            (true, b'\n') => {
                *byte = b'\r';
                escaped = false;
                breaks.push(at);
            }
            (false, b'\n') => {
                *byte = b' ';
                breaks.push(at);
            }
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (_, b'"') => in_string = !in_string,
            _ => {}
        }
    }
    breaks
}

/// The exception the iterator raised, or a signal's, if one came: raised
/// again in place of the reader's error that it ended, so that a
/// `KeyboardInterrupt` or the caller's own exception comes out as itself.
#[derive(Clone)]
pub struct Raised {
    exception: Arc<Mutex<Option<PyErr>>>,
    interpreter: Attach,
}

impl Raised {
    /// For a call from the thread calling now.
    pub fn new(py: Python<'_>) -> Raised {
        Raised {
            exception: Arc::default(),
            interpreter: Attach::new(py),
        }
    }

    /// The exception, once.
    pub fn take(&self) -> Option<PyErr> {
        self.exception.lock().ok()?.take()
    }

    fn set(&self, e: PyErr) {
        if let Ok(mut slot) = self.exception.lock() {
            *slot = Some(e);
        }
    }

    /// Fails if a signal came (Ctrl-C), its exception kept to be raised.
    /// Python runs signal handlers on its main thread only: an encode run
    /// on another thread is not stopped, as Python code there is not.
    fn check_signals(&self) -> io::Result<()> {
        // Not `ErrorKind::Interrupted`: readers retry on that.
        self.interrupted().map_err(io::Error::other)
    }

    /// As [`check_signals`](Self::check_signals), for work that is not a
    /// reader (a scan's batches).
    pub fn interrupted(&self) -> vshred::Result<()> {
        match self.interpreter.attach(|py| py.check_signals()) {
            Some(checked) => checked.map_err(|e| {
                self.set(e);
                vshred::Error::from_message("interrupted by a signal".into())
            }),
            None => Err(exiting()),
        }
    }
}

/// A reader that checks for signals before each read: under a
/// [`BufReader`](std::io::BufReader) of [`BLOCK`] bytes, once a block.
pub struct Interruptible<R> {
    inner: R,
    raised: Raised,
}

impl<R: Read> Interruptible<R> {
    /// `inner`, a signal's exception going to `raised`.
    pub fn new(inner: R, raised: Raised) -> Self {
        Interruptible { inner, raised }
    }
}

impl<R: Read> Read for Interruptible<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.raised.check_signals()?;
        self.inner.read(buf)
    }
}

/// The items of `I`, one JSON text a line.
pub struct Lines<I> {
    items: I,
    block: Block,
    /// Bytes of `block` consumed.
    at: usize,
    ended: bool,
    /// An item's error met after the block's earlier items: given once
    /// they are read, so that errors come in the order of the input.
    pending: Option<ItemError>,
    raised: Raised,
}

impl<I: Items> Lines<I> {
    pub fn new(items: I, raised: Raised) -> Self {
        Lines {
            items,
            block: Block::new(),
            at: 0,
            ended: false,
            pending: None,
            raised,
        }
    }

    /// Where an item's Python exception, or a signal's, goes once its
    /// error is given.
    pub fn raised(&self) -> Raised {
        self.raised.clone()
    }

    /// `error` placed in the text of its item, where the item was over
    /// several lines: its line there is the item's (line 3 is item 2),
    /// its column counted along the whole item. An item cut short is not
    /// a sign that the input is other than JSON Lines: the hints that say
    /// so go.
    pub fn placed_in_item(&self, error: vshred::Error) -> vshred::Error {
        let error = error.without_json_lines_hints();
        let Some(vshred::Position::Json { line, column, .. }) = error.position() else {
            return error;
        };
        let place = |n: u64| n.checked_sub(1).and_then(|n| usize::try_from(n).ok());
        let (Some(item), Some(offset)) = (place(line), place(column)) else {
            return error;
        };
        match self.block.breaks.locate(item, offset) {
            Some((line, column)) => error.with_hint(&format!(
                "line {line}, column {column} of item {item}, a text over several lines"
            )),
            None => error,
        }
    }

    fn give(&self, failure: ItemError) -> io::Error {
        if let Some(exception) = failure.exception {
            self.raised.set(exception);
        }
        failure.error
    }
}

impl<I: Items> Read for Lines<I> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<I: Items> BufRead for Lines<I> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.block.len() && !self.ended {
            if let Some(failure) = self.pending.take() {
                return Err(self.give(failure));
            }
            self.block.text.clear();
            self.at = 0;
            self.raised.check_signals()?;
            match self.items.fill(&mut self.block) {
                Ok(ended) => self.ended = ended,
                Err(failure) if self.block.text.is_empty() => return Err(self.give(failure)),
                Err(failure) => self.pending = Some(failure),
            }
        }
        Ok(&self.block.text[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.block.len());
    }
}

/// The items of a Python iterator, each a `str` or `bytes`.
pub struct PyItems {
    iterator: Py<PyIterator>,
    /// Items taken so far, for errors.
    taken: usize,
    interpreter: Attach,
}

impl PyItems {
    pub fn new(iterable: &Bound<'_, PyAny>) -> PyResult<PyItems> {
        Ok(PyItems {
            iterator: iterable.try_iter()?.unbind(),
            taken: 0,
            interpreter: Attach::new(iterable.py()),
        })
    }
}

impl Items for PyItems {
    /// Takes the interpreter for the block (short of it if the
    /// interpreter begins to exit: `exiting.rs`).
    fn fill(&mut self, block: &mut Block) -> Result<bool, ItemError> {
        let interpreter = &self.interpreter;
        let filled = interpreter.attach(|py| {
            let iterator = self.iterator.bind(py);
            while block.len() < BLOCK && !interpreter.stopping() {
                let Some(item) = iterator.clone().next() else {
                    return Ok(true);
                };
                let i = self.taken;
                self.taken += 1;
                let item = item.map_err(|e| ItemError {
                    error: io::Error::other(format!(
                        "item {i} of the input: the iterator raised {e}"
                    )),
                    exception: Some(e),
                })?;
                // Bytes as a file's are, checked as UTF-8 by the encoder.
                if let Ok(bytes) = item.cast::<PyBytes>() {
                    block.push_text(i, bytes.as_bytes())?;
                    continue;
                }
                // Of the data, as a null item is: reported in its place
                // among the lines' errors.
                let text = item.cast::<PyString>().map_err(|_| {
                    item_error(i, "is not a str or bytes (each item is one JSON text)")
                })?;
                let text = text
                    .to_cow()
                    .map_err(|e| item_error(i, &format!("is not text: {e}")))?;
                block.push_text(i, text.as_bytes())?;
            }
            Ok(false)
        });
        filled.unwrap_or_else(|| Err(io::Error::other(exiting()).into()))
    }
}

/// The values of Arrow arrays of strings or binaries (`string`,
/// `large_string`, `string_view`, `binary`, `large_binary`,
/// `binary_view`, or a dictionary of them): one array, or the chunks of a
/// chunked one, taken one at a time. Binaries' bytes are checked as UTF-8
/// by the encoder, as a file's are.
pub struct ArrowItems {
    /// The chunks not yet taken, objects with `__arrow_c_array__` (none
    /// for one array), and how to take them.
    chunks: Option<(Py<PyIterator>, Attach)>,
    /// The array being read.
    array: Option<ArrayRef>,
    /// The index of its next value.
    next: usize,
    /// Values of the chunks before it.
    before: usize,
}

impl ArrowItems {
    /// The texts of `array`.
    pub fn of_array(array: ArrayRef) -> vshred::Result<ArrowItems> {
        Ok(ArrowItems {
            chunks: None,
            array: Some(texts(array)?),
            next: 0,
            before: 0,
        })
    }

    /// The texts of the arrays `chunks` gives, in turn.
    pub fn of_chunks(chunks: &Bound<'_, PyAny>) -> PyResult<ArrowItems> {
        Ok(ArrowItems {
            chunks: Some((chunks.try_iter()?.unbind(), Attach::new(chunks.py()))),
            array: None,
            next: 0,
            before: 0,
        })
    }

    /// The next chunk's texts, if there is one.
    fn next_chunk(&mut self) -> Result<Option<ArrayRef>, ItemError> {
        let Some((chunks, interpreter)) = &self.chunks else {
            return Ok(None);
        };
        let taken = interpreter.attach(|py| {
            let Some(chunk) = chunks.bind(py).clone().next() else {
                return Ok(None);
            };
            let taken = chunk.and_then(|c| c.extract::<PyArrowType<ArrayData>>());
            let data = taken.map_err(|e| ItemError {
                error: io::Error::other(format!("a chunk of the input: {e}")),
                exception: Some(e),
            })?;
            // Every chunk is of one type: the first refused comes before
            // any line is read.
            texts(make_array(data.0)).map(Some).map_err(|e| ItemError {
                exception: Some(not_texts(&e)),
                error: io::Error::other(e),
            })
        });
        taken.unwrap_or_else(|| Err(io::Error::other(exiting()).into()))
    }
}

/// The `TypeError` of an Arrow input that [`texts`] refuses.
pub fn not_texts(e: &vshred::Error) -> PyErr {
    PyTypeError::new_err(e.message().to_string())
}

/// `array` as texts: strings and binaries as they are, a dictionary of
/// them as its values; anything else refused.
fn texts(array: ArrayRef) -> vshred::Result<ArrayRef> {
    match array.data_type() {
        t if is_text_type(t) => Ok(array),
        DataType::Dictionary(_, values) if is_text_type(values) => {
            arrow::compute::cast(&array, values)
                .map_err(|e| vshred::Error::from_message(e.to_string()))
        }
        // A table (or record batch) comes as a struct of its columns.
        DataType::Struct(fields) => {
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            // Its first column of texts, where Python writes its name as it is.
            let example = fields
                .iter()
                .find(|f| match f.data_type() {
                    DataType::Dictionary(_, values) => is_text_type(values),
                    t => is_text_type(t),
                })
                .map(|f| f.name())
                .filter(|name| {
                    name.chars()
                        .all(|c| c.is_alphanumeric() || " _-.".contains(c))
                })
                .map(|name| format!(" (`table[\"{name}\"]`)"))
                .unwrap_or_default();
            Err(vshred::Error::from_message(format!(
                "the input is a table of columns {}, not JSON texts: give one column of texts{example}",
                names.join(", "),
            )))
        }
        // A usage error, as an item that is not a text is.
        other => Err(vshred::Error::from_message(format!(
            "the input array holds {other}, not JSON texts (strings or binaries)"
        ))),
    }
}

impl Items for ArrowItems {
    fn fill(&mut self, block: &mut Block) -> Result<bool, ItemError> {
        while block.len() < BLOCK {
            let Some(array) = &self.array else {
                match self.next_chunk()? {
                    Some(chunk) => {
                        self.array = Some(chunk);
                        self.next = 0;
                        continue;
                    }
                    None => return Ok(true),
                }
            };
            if self.next == array.len() {
                self.before += array.len();
                self.array = None;
                continue;
            }
            let (next, before) = (&mut self.next, self.before);
            match array.data_type() {
                DataType::Utf8 => fill_from(array.as_string::<i32>(), next, before, block),
                DataType::LargeUtf8 => fill_from(array.as_string::<i64>(), next, before, block),
                DataType::Utf8View => fill_from(array.as_string_view(), next, before, block),
                DataType::Binary => fill_from(array.as_binary::<i32>(), next, before, block),
                DataType::LargeBinary => fill_from(array.as_binary::<i64>(), next, before, block),
                _ => fill_from(array.as_binary_view(), next, before, block),
            }?;
        }
        Ok(false)
    }
}

/// Appends the values of `array` from `*next` on until the block is full
/// or the array ends; `before` values came before the array, for errors.
fn fill_from<A: ArrayAccessor<Item: AsRef<[u8]>>>(
    array: A,
    next: &mut usize,
    before: usize,
    block: &mut Block,
) -> Result<(), ItemError> {
    while block.len() < BLOCK && *next < array.len() {
        let i = *next;
        if array.is_null(i) {
            return Err(item_error(
                before + i,
                "is null (each item is one JSON text)",
            ));
        }
        block.push_text(before + i, array.value(i).as_ref())?;
        *next += 1;
    }
    Ok(())
}
