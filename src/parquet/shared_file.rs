//! A file that several threads read at once. Reads through `File::try_clone`
//! handles share one offset, so concurrent row-group readers would read each
//! other's bytes; positional reads (`pread`) leave no shared state.
//!
//! Its bytes come from a [`ByteSource`]: a local file ([`LocalFile`]), or
//! an object in a store, which an integration provides (the DataFusion
//! crate's over the `object_store` crate). A source is read at offsets and
//! by whole ranges, so that a store gets one request per column chunk.
//!
//! It also stops one denial of service: the parquet crate's page header
//! parser skips unknown Thrift fields without stopping at the end of its
//! bytes, so a corrupt header that declares a list of two billion elements
//! past the end would spin for minutes on empty reads (found by the
//! `parquet_file` fuzz target). A reader that keeps reading at the end of
//! the file, or of the column chunk read ahead, gets an error instead
//! ([`StopAtEnd`]).
//!
//! It checks each page header against the footer before the parquet crate
//! reads it ([`page_headers`](super::page_headers)), when it knows the
//! column chunks being read ([`SharedFile::checking`]).
//!
//! A row group's column chunks are read in one read each
//! ([`SharedFile::holding`]) and its pages served from them: the parquet
//! crate's synchronous reader would read each page header and each page by
//! itself, tens of small reads and as many fresh buffers per chunk.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::{ChunkReader, Length};

use super::page_headers::{Chunks, Found};

/// The bytes of one file, read at offsets by several threads at once.
pub trait ByteSource: Send + Sync {
    /// Its size in bytes, as it was when opened.
    fn size(&self) -> u64;

    /// When it was last modified, if known: with the length, what tells a
    /// file that changed from one that did not.
    fn modified(&self) -> Option<SystemTime>;

    /// Reads from `offset` into `buf`: as many bytes as fit and are there,
    /// 0 at the end.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Reads `range` at once (a column chunk, a footer): fewer bytes only
    /// where the source ends. Reads at offsets until done unless a source
    /// does better (a store, one request).
    fn read_range(&self, range: Range<u64>) -> io::Result<Bytes> {
        let length = usize::try_from(range.end.saturating_sub(range.start))
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a range past memory"))?;
        let mut buffer = vec![0; length];
        let mut filled = 0;
        while filled < length {
            match self.read_at(&mut buffer[filled..], range.start + filled as u64)? {
                0 => break,
                n => filled += n,
            }
        }
        buffer.truncate(filled);
        Ok(buffer.into())
    }
}

/// A local file as a [`ByteSource`], read by positional reads (`pread`).
pub struct LocalFile {
    file: File,
    length: u64,
    modified: Option<SystemTime>,
}

impl LocalFile {
    /// The file, its length and modification time taken now.
    pub fn new(file: File) -> io::Result<LocalFile> {
        let metadata = file.metadata()?;
        Ok(LocalFile {
            length: metadata.len(),
            modified: metadata.modified().ok(),
            file,
        })
    }
}

impl ByteSource for LocalFile {
    fn size(&self) -> u64 {
        self.length
    }

    fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        return std::os::unix::fs::FileExt::read_at(&self.file, buf, offset);
        #[cfg(windows)]
        return std::os::windows::fs::FileExt::seek_read(&self.file, buf, offset);
    }
}

/// A shared open file, read at explicit offsets.
#[derive(Clone)]
pub(crate) struct SharedFile {
    source: Arc<dyn ByteSource>,
    /// Bytes read so far, by every clone: what a scan reports it read.
    read: Arc<AtomicU64>,
    /// Ranges read ahead, by offset: reads within one are served from it.
    held: Arc<[Held]>,
    /// The column chunks whose page headers are checked as they are read.
    chunks: Arc<Chunks>,
}

/// Bytes of the file read ahead.
struct Held {
    offset: u64,
    bytes: Bytes,
}

impl SharedFile {
    pub(crate) fn new(source: Arc<dyn ByteSource>) -> SharedFile {
        SharedFile {
            source,
            read: Arc::new(AtomicU64::new(0)),
            held: Arc::new([]),
            chunks: Arc::default(),
        }
    }

    /// This file with the page headers of `chunks` checked as the parquet
    /// crate reads them.
    pub(crate) fn checking(mut self, chunks: Chunks) -> SharedFile {
        self.chunks = Arc::new(chunks);
        self
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
            source: self.source.clone(),
            read: self.read.clone(),
            held: held.into(),
            chunks: self.chunks.clone(),
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
        let n = self.source.read_at(buf, offset)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Empty reads at the end tolerated from one reader: a sound consumer
/// stops at the first.
const EMPTY_READS_AT_END: u32 = 16;

/// A page header's reader that fails once it is read again and again at
/// its end, which it names ("the file", "its column chunk").
pub(crate) struct StopAtEnd<R> {
    read: R,
    end: &'static str,
    empty_reads: u32,
}

impl<R> StopAtEnd<R> {
    fn new(read: R, end: &'static str) -> StopAtEnd<R> {
        StopAtEnd {
            read,
            end,
            empty_reads: 0,
        }
    }
}

impl<R: Read> Read for StopAtEnd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.read.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.empty_reads += 1;
            if self.empty_reads > EMPTY_READS_AT_END {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("a page header runs past the end of {}", self.end),
                ));
            }
        }
        Ok(n)
    }
}

/// Bytes read at a time for a page header: most fit, and a longer one
/// (statistics of long strings) takes another read.
const PAGE_HEADER_READ: usize = 1024;

/// The most read at once to check a page header longer than
/// [`PAGE_HEADER_READ`]; one longer still goes to the parquet crate
/// unchecked.
const LONG_PAGE_HEADER_READ: u64 = 1 << 20;

/// Sequential reads from an offset of a [`SharedFile`].
pub(crate) struct ReadFrom {
    file: SharedFile,
    offset: u64,
}

impl Read for ReadFrom {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

impl Length for SharedFile {
    fn len(&self) -> u64 {
        self.source.size()
    }
}

/// A page header's reader: from held bytes, or from the file.
pub(crate) enum HeaderRead {
    Held(StopAtEnd<bytes::buf::Reader<Bytes>>),
    File(BufReader<StopAtEnd<ReadFrom>>),
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
            self.chunks.check(start, &held)?;
            let held = StopAtEnd::new(bytes::Buf::reader(held), "its column chunk");
            return Ok(HeaderRead::Held(held));
        }
        let from = ReadFrom {
            file: self.clone(),
            offset: start,
        };
        let mut read = BufReader::with_capacity(PAGE_HEADER_READ, StopAtEnd::new(from, "the file"));
        if !self.chunks.is_empty() && self.chunks.check(start, read.fill_buf()?)? == Found::CutShort
        {
            // A long header (statistics of long strings): read as much as
            // its chunk holds, up to a bound.
            let end = self.chunks.chunk_end(start).unwrap_or(start);
            let length = end.saturating_sub(start).min(LONG_PAGE_HEADER_READ);
            let header = self.source.read_range(start..start + length)?;
            self.read.fetch_add(header.len() as u64, Ordering::Relaxed);
            self.chunks.check(start, &header)?;
        }
        Ok(HeaderRead::File(read))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        if let Some(held) = self.held_from(start).filter(|h| h.len() >= length) {
            let bytes = held.slice(..length);
            self.chunks.check(start, &bytes)?;
            return Ok(bytes);
        }
        // A corrupt length past the end allocates no more than the file.
        let end = start.saturating_add(length as u64).min(self.len());
        let bytes = self.source.read_range(start..end.max(start))?;
        self.read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if bytes.len() != length {
            return Err(ParquetError::EOF(format!(
                "Expected to read {length} bytes, read only {}",
                bytes.len()
            )));
        }
        self.chunks.check(start, &bytes)?;
        Ok(bytes)
    }
}
