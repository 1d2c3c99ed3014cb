//! A file that several threads read at once. Reads through `File::try_clone`
//! handles share one offset, so concurrent row-group readers would read each
//! other's bytes; positional reads (`pread`) leave no shared state.
//!
//! It also stops one denial of service: the parquet crate's page header
//! parser skips unknown Thrift fields without stopping at the end of the
//! file, so a corrupt header that declares a list of two billion elements
//! past the end would spin for minutes on empty reads (found by the
//! `parquet_file` fuzz target). A reader that keeps reading at the end of
//! the file gets an error instead.
//!
//! A row group's column chunks are read in one read each
//! ([`SharedFile::holding`]) and its pages served from them: the parquet
//! crate's synchronous reader would read each page header and each page by
//! itself, tens of small reads and as many fresh buffers per chunk.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::{ChunkReader, Length};

/// A shared open file, read at explicit offsets.
#[derive(Clone)]
pub(crate) struct SharedFile {
    file: Arc<File>,
    /// Bytes read so far, by every clone: what a scan reports it read.
    read: Arc<AtomicU64>,
    /// Ranges read ahead, by offset: reads within one are served from it.
    held: Arc<[Held]>,
}

/// Bytes of the file read ahead.
struct Held {
    offset: u64,
    bytes: Bytes,
}

impl SharedFile {
    pub(crate) fn new(file: File) -> SharedFile {
        SharedFile {
            file: Arc::new(file),
            read: Arc::new(AtomicU64::new(0)),
            held: Arc::new([]),
        }
    }

    /// This file with `ranges` read ahead, one read each, and reads within
    /// them served from memory. A range past the end of the file (a corrupt
    /// footer) is not read ahead: the reads within it fail as they would.
    pub(crate) fn holding(
        &self,
        ranges: impl IntoIterator<Item = Range<u64>>,
    ) -> Result<SharedFile> {
        let length = self.len();
        let mut held = Vec::new();
        for range in ranges {
            if range.start >= range.end || range.end > length {
                continue;
            }
            let bytes = self.get_bytes(range.start, (range.end - range.start) as usize)?;
            held.push(Held {
                offset: range.start,
                bytes,
            });
        }
        held.sort_by_key(|h| h.offset);
        Ok(SharedFile {
            file: self.file.clone(),
            read: self.read.clone(),
            held: held.into(),
        })
    }

    /// The held bytes from `start` to the end of the range holding it.
    fn held_from(&self, start: u64) -> Option<Bytes> {
        let after = self.held.partition_point(|h| h.offset <= start);
        let held = &self.held[after.checked_sub(1)?];
        let skip = usize::try_from(start - held.offset).ok()?;
        (skip < held.bytes.len()).then(|| held.bytes.slice(skip..))
    }

    /// The bytes read from the file so far.
    pub(crate) fn bytes_read(&self) -> Arc<AtomicU64> {
        self.read.clone()
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(&*self.file, buf, offset)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(&*self.file, buf, offset)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Empty reads at the end of the file tolerated from one reader: a sound
/// consumer stops at the first.
const EMPTY_READS_AT_EOF: u32 = 16;

/// Bytes read at a time for a page header: most fit, and a longer one
/// (statistics of long strings) takes another read.
const PAGE_HEADER_READ: usize = 1024;

/// Sequential reads from an offset of a [`SharedFile`].
pub(crate) struct ReadFrom {
    file: SharedFile,
    offset: u64,
    empty_reads: u32,
}

impl ReadFrom {
    fn new(file: &SharedFile, offset: u64) -> ReadFrom {
        ReadFrom {
            file: file.clone(),
            offset,
            empty_reads: 0,
        }
    }
}

impl Read for ReadFrom {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        if n == 0 && !buf.is_empty() {
            self.empty_reads += 1;
            if self.empty_reads > EMPTY_READS_AT_EOF {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "a page header runs past the end of the file",
                ));
            }
        }
        Ok(n)
    }
}

impl Length for SharedFile {
    fn len(&self) -> u64 {
        self.file.len()
    }
}

/// A page header's reader: from held bytes, or from the file.
pub(crate) enum HeaderRead {
    Held(bytes::buf::Reader<Bytes>),
    File(BufReader<ReadFrom>),
}

impl Read for HeaderRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            HeaderRead::Held(held) => held.read(buf),
            HeaderRead::File(file) => file.read(buf),
        }
    }
}

impl ChunkReader for SharedFile {
    type T = HeaderRead;

    /// The parquet crate reads page headers (tens of bytes) through this,
    /// then the page by [`get_bytes`](Self::get_bytes): a default 8 KB
    /// buffer read many times what small pages hold.
    fn get_read(&self, start: u64) -> Result<Self::T> {
        if let Some(held) = self.held_from(start) {
            return Ok(HeaderRead::Held(bytes::Buf::reader(held)));
        }
        Ok(HeaderRead::File(BufReader::with_capacity(
            PAGE_HEADER_READ,
            ReadFrom::new(self, start),
        )))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        if let Some(held) = self.held_from(start).filter(|h| h.len() >= length) {
            return Ok(held.slice(..length));
        }
        let mut buffer = Vec::with_capacity(length);
        let from = ReadFrom::new(self, start);
        let read = from.take(length as u64).read_to_end(&mut buffer)?;
        if read != length {
            return Err(ParquetError::EOF(format!(
                "Expected to read {length} bytes, read only {read}"
            )));
        }
        Ok(buffer.into())
    }
}
