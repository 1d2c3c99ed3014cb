//! JSON texts given one per item as the encoder's input: a `BufRead` that
//! gathers them a block at a time, one line each. The items come from a
//! Python iterable (the interpreter taken back for each block, so that a
//! generator of any length is encoded as it yields, in memory of one
//! block) or from an Arrow array of strings or binaries (its values copied
//! straight into the block: no Python object per text).

use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayAccessor, ArrayRef, AsArray};
use arrow::datatypes::DataType;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyString};

/// Bytes of JSON text gathered at a time.
const BLOCK: usize = 1 << 20;

/// Where the items come from, a block at a time.
pub trait Items {
    /// Appends the next items to `block` with [`push_text`] until it holds
    /// [`BLOCK`] bytes or the items run out; returns whether they ran out.
    fn fill(&mut self, block: &mut Vec<u8>) -> io::Result<bool>;
}

/// Appends item `i`'s text and a line break; a text that breaks its line
/// would be read as two rows, so it is refused.
fn push_text(block: &mut Vec<u8>, i: usize, text: &[u8]) -> io::Result<()> {
    if text.contains(&b'\n') {
        return Err(io::Error::other(format!(
            "item {i} of the input holds a line break (each item is one JSON text on one line)"
        )));
    }
    block.extend_from_slice(text);
    block.push(b'\n');
    Ok(())
}

/// The items of `I`, one JSON text a line.
pub struct Lines<I> {
    items: I,
    block: Vec<u8>,
    /// Bytes of `block` consumed.
    at: usize,
    ended: bool,
}

impl<I: Items> Lines<I> {
    pub fn new(items: I) -> Self {
        Lines {
            items,
            block: Vec::with_capacity(BLOCK),
            at: 0,
            ended: false,
        }
    }

    pub fn items(&self) -> &I {
        &self.items
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
            self.block.clear();
            self.at = 0;
            self.ended = self.items.fill(&mut self.block)?;
        }
        Ok(&self.block[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.block.len());
    }
}

/// The exception the iterator raised, if it did: raised again in place of
/// the reader's error that it ended, so that a `KeyboardInterrupt` or the
/// caller's own exception comes out as itself.
#[derive(Clone, Default)]
pub struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    /// The exception, once.
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().ok()?.take()
    }

    fn set(&self, e: PyErr) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(e);
        }
    }
}

/// The items of a Python iterator, each a `str`.
pub struct PyItems {
    iterator: Py<PyIterator>,
    raised: Raised,
    /// Items taken so far, for errors.
    taken: usize,
}

impl PyItems {
    pub fn new(iterable: &Bound<'_, PyAny>) -> PyResult<PyItems> {
        Ok(PyItems {
            iterator: iterable.try_iter()?.unbind(),
            raised: Raised::default(),
            taken: 0,
        })
    }

    /// Where the iterator's exception goes, if it raises one.
    pub fn raised(&self) -> Raised {
        self.raised.clone()
    }
}

impl Items for PyItems {
    /// Takes the interpreter for the block.
    fn fill(&mut self, block: &mut Vec<u8>) -> io::Result<bool> {
        Python::attach(|py| {
            let iterator = self.iterator.bind(py);
            while block.len() < BLOCK {
                let Some(item) = iterator.clone().next() else {
                    return Ok(true);
                };
                let i = self.taken;
                self.taken += 1;
                let item = item.map_err(|e| {
                    let error =
                        io::Error::other(format!("item {i} of the input: the iterator raised {e}"));
                    self.raised.set(e);
                    error
                })?;
                let text = item.cast::<PyString>().map_err(|_| {
                    io::Error::other(format!(
                        "item {i} of the input is not a str (each item is one JSON text)"
                    ))
                })?;
                let text = text
                    .to_cow()
                    .map_err(|e| io::Error::other(format!("item {i} of the input: {e}")))?;
                push_text(block, i, text.as_bytes())?;
            }
            Ok(false)
        })
    }
}

/// The values of an Arrow array of strings or binaries (`string`,
/// `large_string`, `string_view`, `binary`, `large_binary`,
/// `binary_view`); binaries' bytes are checked as UTF-8 by the encoder,
/// as a file's are.
pub struct ArrowItems {
    array: ArrayRef,
    /// The next value's index.
    next: usize,
}

impl ArrowItems {
    /// The texts of `array`, refused unless it holds strings or binaries.
    pub fn new(array: ArrayRef) -> Result<ArrowItems, String> {
        match array.data_type() {
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView => Ok(ArrowItems { array, next: 0 }),
            other => Err(format!(
                "the input array holds {other}, not JSON texts (strings or binaries)"
            )),
        }
    }
}

impl Items for ArrowItems {
    fn fill(&mut self, block: &mut Vec<u8>) -> io::Result<bool> {
        let array = &self.array;
        match array.data_type() {
            DataType::Utf8 => fill_from(array.as_string::<i32>(), &mut self.next, block),
            DataType::LargeUtf8 => fill_from(array.as_string::<i64>(), &mut self.next, block),
            DataType::Utf8View => fill_from(array.as_string_view(), &mut self.next, block),
            DataType::Binary => fill_from(array.as_binary::<i32>(), &mut self.next, block),
            DataType::LargeBinary => fill_from(array.as_binary::<i64>(), &mut self.next, block),
            _ => fill_from(array.as_binary_view(), &mut self.next, block),
        }
    }
}

/// [`Items::fill`] from the values of `array` from `*next` on.
fn fill_from<A: ArrayAccessor<Item: AsRef<[u8]>>>(
    array: A,
    next: &mut usize,
    block: &mut Vec<u8>,
) -> io::Result<bool> {
    while block.len() < BLOCK {
        let i = *next;
        if i == array.len() {
            return Ok(true);
        }
        if array.is_null(i) {
            return Err(io::Error::other(format!(
                "item {i} of the input is null (each item is one JSON text)"
            )));
        }
        push_text(block, i, array.value(i).as_ref())?;
        *next += 1;
    }
    Ok(false)
}
