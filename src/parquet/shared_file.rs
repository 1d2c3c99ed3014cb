//! A file that several threads read at once. Reads through `File::try_clone`
//! handles share one offset, so concurrent row-group readers would read each
//! other's bytes; positional reads (`pread`) leave no shared state.

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
        self.0.len()
    }
}

impl ChunkReader for SharedFile {
    type T = BufReader<ReadFrom>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        Ok(BufReader::new(ReadFrom {
            file: self.clone(),
            offset: start,
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        let mut buffer = Vec::with_capacity(length);
        let from = ReadFrom {
            file: self.clone(),
            offset: start,
        };
        let read = from.take(length as u64).read_to_end(&mut buffer)?;
        if read != length {
            return Err(ParquetError::EOF(format!(
                "Expected to read {length} bytes, read only {read}"
            )));
        }
        Ok(buffer.into())
    }
}
