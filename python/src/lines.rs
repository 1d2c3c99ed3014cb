//! An iterable of JSON texts as the encoder's input: a `BufRead` that
//! takes the interpreter back for each block of items, so that a generator
//! of any length is encoded as it yields, in memory of one block.

use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyIterator;

/// Bytes of JSON text gathered from the iterator at a time.
const BLOCK: usize = 1 << 20;

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

/// The items of a Python iterator, one JSON text a line.
pub struct PyLines {
    items: Py<PyIterator>,
    raised: Raised,
    block: Vec<u8>,
    /// Bytes of `block` consumed.
    at: usize,
    /// Items taken so far, for errors.
    taken: usize,
    ended: bool,
}

impl PyLines {
    /// The lines of `iterable`'s items.
    pub fn new(iterable: &Bound<'_, PyAny>) -> PyResult<PyLines> {
        Ok(PyLines {
            items: iterable.try_iter()?.unbind(),
            raised: Raised::default(),
            block: Vec::with_capacity(BLOCK),
            at: 0,
            taken: 0,
            ended: false,
        })
    }

    /// Gathers the next block of items, the interpreter held meanwhile.
    fn next_block(&mut self) -> io::Result<()> {
        self.block.clear();
        self.at = 0;
        Python::attach(|py| {
            let items = self.items.bind(py);
            while self.block.len() < BLOCK {
                let Some(item) = items.clone().next() else {
                    self.ended = true;
                    return Ok(());
                };
                let i = self.taken;
                self.taken += 1;
                let item = item.map_err(|e| {
                    let error =
                        io::Error::other(format!("item {i} of the input: the iterator raised {e}"));
                    self.raised.set(e);
                    error
                })?;
                let text = item.cast::<pyo3::types::PyString>().map_err(|_| {
                    io::Error::other(format!(
                        "item {i} of the input is not a str (each item is one JSON text)"
                    ))
                })?;
                let text = text
                    .to_cow()
                    .map_err(|e| io::Error::other(format!("item {i} of the input: {e}")))?;
                if text.contains('\n') {
                    return Err(io::Error::other(format!(
                        "item {i} of the input holds a line break (each item is one JSON text on one line)"
                    )));
                }
                self.block.extend_from_slice(text.as_bytes());
                self.block.push(b'\n');
            }
            Ok(())
        })
    }
}

impl PyLines {
    /// Where the iterator's exception goes, if it raises one.
    pub fn raised(&self) -> Raised {
        self.raised.clone()
    }
}

impl Read for PyLines {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PyLines {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.block.len() && !self.ended {
            self.next_block()?;
        }
        Ok(&self.block[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.block.len());
    }
}
