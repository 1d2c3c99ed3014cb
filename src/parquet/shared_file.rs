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

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::Arc;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::reader::{ChunkReader, Length};

/// A shared open file, read at explicit offsets.
#[derive(Clone)]
pub(crate) struct SharedFile(Arc<File>);

impl SharedFile {
    pub(crate) fn new(file: File) -> SharedFile {
        SharedFile(Arc::new(file))
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        return std::os::unix::fs::FileExt::read_at(&*self.0, buf, offset);
        #[cfg(windows)]
        return std::os::windows::fs::FileExt::seek_read(&*self.0, buf, offset);
    }
}

/// Empty reads at the end of the file tolerated from one reader: a sound
/// consumer stops at the first.
const EMPTY_READS_AT_EOF: u32 = 16;

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
        self.0.len()
    }
}

impl ChunkReader for SharedFile {
    type T = BufReader<ReadFrom>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        Ok(BufReader::new(ReadFrom::new(self, start)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
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
