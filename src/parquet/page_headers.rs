//! Page headers checked against the footer before the parquet crate acts
//! on them.
//!
//! The parquet crate reserves the uncompressed size a page header declares
//! before it decompresses the page, and a dictionary's decoder room for the
//! values its header counts (apache/arrow-rs#10734, open): a damaged header
//! asks for gigabytes, and a 24 KB file took 16.5 GB of memory or aborted
//! the process. The footer bounds both. No page holds more than its column
//! chunk's uncompressed bytes, and a dictionary's values are PLAIN-encoded,
//! each taking at least its type's width ([`min_value_bits`]), so its
//! bytes bound its count. A file made to lie in its footer too is held to
//! its bytes where the codec allows: snappy, LZ4, gzip and zstd expand what
//! they compress by at most a known factor ([`max_expansion`]).
//!
//! A reader that knows the column chunks it reads ([`Chunks`]) parses each
//! header where the crate is about to read one (see
//! [`SharedFile`](super::shared_file::SharedFile)), before the crate does,
//! and refuses one past those bounds, naming its column and byte. Only
//! where a header starts for certain: a chunk's start, a page the offset
//! index places, or where the last header checked says the next one is;
//! the crate also reads from a page's data through the same call, after
//! it has peeked at the header. A header this parser cannot read is left
//! to the crate, whose own error is as good.
//!
//! The chunk's bound takes the footer's `total_uncompressed_size` to count
//! every page, its dictionary's too, as the format says. A writer that left
//! the dictionary out of it (fastparquet before 2018, dask/fastparquet#305)
//! also got `total_compressed_size` wrong, which the parquet crate already
//! refuses.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use ::parquet::arrow::ProjectionMask;
use ::parquet::basic::{Compression, Type as PhysicalType};
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::ParquetMetaData;

use super::thrift::{Compact, I32, STRUCT};

/// The column chunks a reader reads, by position in the file.
#[derive(Default)]
pub(crate) struct Chunks {
    /// Sorted by start.
    chunks: Vec<Chunk>,
}

/// One column chunk: where it lies and what bounds its pages.
struct Chunk {
    bytes: Range<u64>,
    /// Its dotted path, for errors.
    column: String,
    row_group: usize,
    /// `total_uncompressed_size` from the footer: its pages and headers.
    uncompressed: i64,
    /// The fewest bits a PLAIN value of its type takes.
    value_bits: u64,
    /// Its codec, and the most it expands what it compresses, if bounded.
    codec: Compression,
    expansion: Option<u64>,
    /// Where its pages start, from the offset index, the dictionary page
    /// first (a reader that reads a page with its header at once, as the
    /// crate does by the index, starts at one of these).
    pages: Vec<u64>,
    /// Where the next page's header starts, as the last header checked
    /// says (at first, the chunk's start; [`UNKNOWN`] past a header that
    /// did not read).
    next_header: AtomicU64,
}

const UNKNOWN: u64 = u64::MAX;

/// What was found at an offset.
#[derive(Debug, PartialEq)]
pub(crate) enum Found {
    /// A header, within bounds; or no header is known to start there.
    Checked,
    /// A header longer than the bytes given: more are needed to check it.
    CutShort,
}

impl Chunks {
    /// The chunks of the leaves in `mask`, in `row_groups`.
    pub(crate) fn of(
        metadata: &ParquetMetaData,
        row_groups: impl IntoIterator<Item = usize>,
        mask: &ProjectionMask,
    ) -> Chunks {
        let mut chunks = Vec::new();
        for rg in row_groups {
            let offsets = metadata.offset_index().and_then(|o| o.get(rg));
            for (leaf, meta) in metadata.row_group(rg).columns().iter().enumerate() {
                if !mask.leaf_included(leaf) {
                    continue;
                }
                let (start, length) = meta.byte_range();
                let mut pages = vec![start];
                if let Some(locations) = offsets.and_then(|o| o.get(leaf)) {
                    pages.extend(
                        locations
                            .page_locations()
                            .iter()
                            .filter_map(|p| u64::try_from(p.offset).ok()),
                    );
                }
                pages.sort_unstable();
                pages.dedup();
                let descr = meta.column_descr();
                chunks.push(Chunk {
                    bytes: start..start.saturating_add(length),
                    column: meta.column_path().string(),
                    row_group: rg,
                    uncompressed: meta.uncompressed_size(),
                    value_bits: min_value_bits(descr.physical_type(), descr.type_length()),
                    codec: meta.compression(),
                    expansion: max_expansion(meta.compression()),
                    pages,
                    next_header: AtomicU64::new(start),
                });
            }
        }
        chunks.sort_by_key(|c| c.bytes.start);
        Chunks { chunks }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    fn containing(&self, offset: u64) -> Option<&Chunk> {
        let after = self.chunks.partition_point(|c| c.bytes.start <= offset);
        let chunk = &self.chunks[after.checked_sub(1)?];
        chunk.bytes.contains(&offset).then_some(chunk)
    }

    /// Checks the page header at `offset`, whose bytes (as many as are at
    /// hand) `bytes` begins with, if a header starts there for certain (see
    /// the module's documentation).
    pub(crate) fn check(&self, offset: u64, bytes: &[u8]) -> Result<Found, ParquetError> {
        match self.containing(offset) {
            Some(chunk)
                if chunk.next_header.load(Ordering::Relaxed) == offset
                    || chunk.pages.binary_search(&offset).is_ok() =>
            {
                chunk.check(offset, bytes)
            }
            _ => Ok(Found::Checked),
        }
    }

    /// The end of the chunk holding `offset`, if one does.
    pub(crate) fn chunk_end(&self, offset: u64) -> Option<u64> {
        self.containing(offset).map(|c| c.bytes.end)
    }
}

impl Chunk {
    fn check(&self, offset: u64, bytes: &[u8]) -> Result<Found, ParquetError> {
        let (header, length) = match PageHeader::parse(bytes) {
            Ok(parsed) => parsed,
            Err(Unread::CutShort) => return Ok(Found::CutShort),
            Err(Unread::Invalid) => {
                self.next_header.store(UNKNOWN, Ordering::Relaxed);
                return Ok(Found::Checked);
            }
        };
        let refuse = |what: String| {
            ParquetError::General(format!(
                "row group {}, column \"{}\": the page header at byte {offset} declares {what}",
                self.row_group, self.column
            ))
        };
        let size = i64::from(header.uncompressed_size);
        if size < 0 || size > self.uncompressed {
            return Err(refuse(format!(
                "{size} bytes uncompressed, where its column chunk holds {}",
                self.uncompressed
            )));
        }
        let compressed = u64::try_from(header.compressed_size).unwrap_or(0);
        if let Some(factor) = self.expansion
            && size as u64 > compressed.saturating_mul(factor) + EXPANSION_SLACK
        {
            return Err(refuse(format!(
                "{size} bytes uncompressed from {compressed}, more than {:?} expands to",
                self.codec
            )));
        }
        if let Some(values) = header.dictionary_values {
            let fits = u64::try_from(values)
                .ok()
                .filter(|&v| v.saturating_mul(self.value_bits) <= size as u64 * 8);
            if fits.is_none() {
                return Err(refuse(format!(
                    "a dictionary of {values} values in {size} bytes"
                )));
            }
        }
        let next = offset
            .saturating_add(length as u64)
            .saturating_add(compressed);
        self.next_header.store(next, Ordering::Relaxed);
        Ok(Found::Checked)
    }
}

/// The fewest bits a PLAIN-encoded value of a type takes: a byte array's
/// length alone takes 4 bytes.
fn min_value_bits(physical: PhysicalType, type_length: i32) -> u64 {
    match physical {
        PhysicalType::BOOLEAN => 1,
        PhysicalType::INT32 | PhysicalType::FLOAT | PhysicalType::BYTE_ARRAY => 32,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 64,
        PhysicalType::INT96 => 96,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 8 * u64::try_from(type_length).unwrap_or(0),
    }
}

/// The most `codec` expands what it compresses, where that is bounded and
/// the parquet crate allocates for it: a snappy copy writes at most 64
/// bytes for 3, an LZ4 sequence 255 for each byte of its length, deflate
/// 258 for a code of 2 bits, and a zstd block at most 128 KiB for the 4
/// bytes of the smallest (a run: its 3-byte header and the byte repeated).
/// Uncompressed pages are not copied; brotli has no useful bound.
fn max_expansion(codec: Compression) -> Option<u64> {
    match codec {
        Compression::SNAPPY => Some(32),
        Compression::LZ4 | Compression::LZ4_RAW => Some(256),
        Compression::GZIP(_) => Some(1040),
        Compression::ZSTD(_) => Some(32 * 1024),
        _ => None,
    }
}

/// Bytes past [`max_expansion`]'s factor a page may hold: a stream's
/// headers, and what rounding loses on a tiny page.
const EXPANSION_SLACK: u64 = 64;

/// What a page header says that bounds what reading its page allocates.
#[derive(Debug, PartialEq)]
struct PageHeader {
    uncompressed_size: i32,
    compressed_size: i32,
    /// The value count of a dictionary page.
    dictionary_values: Option<i32>,
}

/// Why bytes did not read as a page header.
#[derive(Debug, PartialEq)]
enum Unread {
    /// They end before it does.
    CutShort,
    /// They are not one.
    Invalid,
}

impl PageHeader {
    /// The header `bytes` begins with, in Thrift's compact protocol, and
    /// its length. Every field read takes at least a byte, so this ends
    /// within `bytes`, whatever they are.
    fn parse(bytes: &[u8]) -> Result<(PageHeader, usize), Unread> {
        let mut input = Compact::new(bytes);
        let header = Self::read(&mut input);
        match header {
            Some(header) => Ok((header, input.at())),
            None if input.at() >= bytes.len() => Err(Unread::CutShort),
            None => Err(Unread::Invalid),
        }
    }

    fn read(input: &mut Compact<'_>) -> Option<PageHeader> {
        let mut uncompressed_size = None;
        let mut compressed_size = None;
        let mut dictionary_values = None;
        let mut last_id = 0;
        while let Some((id, kind)) = input.field_header(&mut last_id)? {
            match (id, kind) {
                (2, I32) => uncompressed_size = Some(input.i32()?),
                (3, I32) => compressed_size = Some(input.i32()?),
                (7, STRUCT) => dictionary_values = input.first_i32_of_struct()?,
                _ => input.skip(kind, 0)?,
            }
        }
        Some(PageHeader {
            uncompressed_size: uncompressed_size?,
            compressed_size: compressed_size?,
            dictionary_values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::thrift::{BINARY, BOOL_FALSE, BOOL_TRUE, DOUBLE, LIST, MAP};

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A zigzag `i32` field `delta` after the last.
    fn i32_field(delta: u8, v: i32, out: &mut Vec<u8>) {
        out.push(delta << 4 | I32);
        varint(u64::from(((v << 1) ^ (v >> 31)) as u32), out);
    }

    /// A dictionary page's header, with a CRC, and, where a data page's
    /// header would be, a struct of a list of structs and a map: fields
    /// of every kind to skip.
    fn dictionary_header(uncompressed: i32, compressed: i32, values: i32) -> Vec<u8> {
        let mut out = Vec::new();
        i32_field(1, 2, &mut out);
        i32_field(1, uncompressed, &mut out);
        i32_field(1, compressed, &mut out);
        i32_field(1, -12345678, &mut out);
        // Field 5: a struct holding a list of two structs and a map.
        out.push(1 << 4 | STRUCT);
        out.push(1 << 4 | LIST);
        out.push(2 << 4 | STRUCT);
        out.extend([1 << 4 | BINARY, 3, b'a', b'b', b'c', 0]);
        out.extend([1 << 4 | BOOL_TRUE, 0]);
        out.push(1 << 4 | MAP);
        varint(1, &mut out);
        out.push(BINARY << 4 | DOUBLE);
        out.extend([1, b'k']);
        out.extend(1.5f64.to_le_bytes());
        out.push(0);
        // Field 7, the dictionary page's header.
        out.push(2 << 4 | STRUCT);
        i32_field(1, values, &mut out);
        i32_field(1, 0, &mut out);
        out.extend([1 << 4 | BOOL_FALSE, 0]);
        out.push(0);
        out
    }

    #[test]
    fn a_header_reads_past_fields_it_does_not_need() {
        let header = dictionary_header(16000, 8010, 2000);
        assert_eq!(
            PageHeader::parse(&header),
            Ok((
                PageHeader {
                    uncompressed_size: 16000,
                    compressed_size: 8010,
                    dictionary_values: Some(2000),
                },
                header.len()
            ))
        );
        // What follows a header is not read.
        let mut followed = header.clone();
        followed.extend([0xff; 8]);
        assert_eq!(PageHeader::parse(&followed), PageHeader::parse(&header));
    }

    #[test]
    fn a_header_cut_short_or_declaring_more_than_its_bytes_does_not_read() {
        let header = dictionary_header(16000, 8010, 2000);
        for end in 0..header.len() {
            assert_eq!(
                PageHeader::parse(&header[..end]),
                Err(Unread::CutShort),
                "{end} bytes"
            );
        }
        // A list of 2^32 - 1 integers in four bytes.
        let mut list = Vec::new();
        i32_field(2, 100, &mut list);
        list.push(1 << 4 | LIST);
        list.push(15 << 4 | I32);
        varint(u64::from(u32::MAX), &mut list);
        list.extend([2, 4, 6, 8]);
        assert_eq!(PageHeader::parse(&list), Err(Unread::CutShort));
        // Structs nested past any page header's depth.
        let mut deep = vec![1 << 4 | STRUCT; 64];
        deep.extend([0; 65]);
        assert_eq!(PageHeader::parse(&deep), Err(Unread::Invalid));
        // A field of no type Thrift has.
        assert_eq!(PageHeader::parse(&[0x1e, 0, 0]), Err(Unread::Invalid));
    }

    fn chunk(codec: Compression, uncompressed: i64) -> Chunk {
        Chunk {
            bytes: 100..20_000,
            column: "v.typed_value.s.typed_value".into(),
            row_group: 3,
            uncompressed,
            value_bits: min_value_bits(PhysicalType::BYTE_ARRAY, -1),
            codec,
            expansion: max_expansion(codec),
            pages: vec![100],
            next_header: AtomicU64::new(100),
        }
    }

    #[test]
    fn a_page_is_held_to_its_chunk_its_codec_and_its_values_widths() {
        let snappy = chunk(Compression::SNAPPY, 1 << 30);
        let check = |chunk: &Chunk, header: Vec<u8>| {
            chunk
                .check(120, &header)
                .map(drop)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            check(&snappy, dictionary_header(32 * 100 + 64, 100, 10)),
            Ok(())
        );
        let error = check(&snappy, dictionary_header(32 * 100 + 65, 100, 10)).unwrap_err();
        assert!(
            error.contains("row group 3, column \"v.typed_value.s.typed_value\": the page header at byte 120 declares 3265 bytes uncompressed from 100, more than SNAPPY expands to"),
            "{error}"
        );
        // Zstd expands at most 32,768 times; a page within that is held to
        // its chunk.
        let zstd = chunk(Compression::ZSTD(Default::default()), 1 << 30);
        assert_eq!(
            check(&zstd, dictionary_header(32_768 * 10 + 64, 10, 10)),
            Ok(())
        );
        let error = check(&zstd, dictionary_header(32_768 * 10 + 65, 10, 10)).unwrap_err();
        assert!(
            error.contains("declares 327745 bytes uncompressed from 10, more than ZSTD"),
            "{error}"
        );
        let zstd = chunk(Compression::ZSTD(Default::default()), 5000);
        assert_eq!(check(&zstd, dictionary_header(5000, 10, 10)), Ok(()));
        let error = check(&zstd, dictionary_header(5001, 10, 10)).unwrap_err();
        assert!(
            error.contains("declares 5001 bytes uncompressed, where its column chunk holds 5000"),
            "{error}"
        );
        let error = check(&zstd, dictionary_header(-1, 10, 10)).unwrap_err();
        assert!(error.contains("declares -1 bytes uncompressed"), "{error}");
        // Byte arrays take 4 bytes each at least; a zero-width FLBA none.
        assert_eq!(check(&zstd, dictionary_header(400, 10, 100)), Ok(()));
        let error = check(&zstd, dictionary_header(400, 10, 101)).unwrap_err();
        assert!(
            error.contains("declares a dictionary of 101 values in 400 bytes"),
            "{error}"
        );
        let error = check(&zstd, dictionary_header(400, 10, -1)).unwrap_err();
        assert!(
            error.contains("declares a dictionary of -1 values"),
            "{error}"
        );
        let empty = Chunk {
            value_bits: min_value_bits(PhysicalType::FIXED_LEN_BYTE_ARRAY, 0),
            ..chunk(Compression::ZSTD(Default::default()), 5000)
        };
        assert_eq!(check(&empty, dictionary_header(0, 10, 1000)), Ok(()));
        // What does not read as a header is left to the parquet crate.
        assert_eq!(check(&zstd, vec![0xff, 0xff]), Ok(()));
    }

    #[test]
    fn only_where_a_header_starts_for_certain_is_it_checked() {
        let chunks = Chunks {
            chunks: vec![chunk(Compression::ZSTD(Default::default()), 100_000)],
        };
        let too_big = dictionary_header(200_000, 10, 10);
        // Outside the chunk, or inside it where no header is known to start.
        for offset in [99, 20_000, 150] {
            assert_eq!(chunks.check(offset, &too_big).ok(), Some(Found::Checked));
        }
        assert!(chunks.check(100, &too_big).is_err());
        // The first header says where the next starts: after its page.
        let first = dictionary_header(5000, 1000, 10);
        assert_eq!(chunks.check(100, &first).ok(), Some(Found::Checked));
        let next = 100 + first.len() as u64 + 1000;
        // The crate reads from the page's data after peeking at its header:
        // those bytes are not a header.
        let data = 100 + first.len() as u64;
        assert_eq!(chunks.check(data, &too_big).ok(), Some(Found::Checked));
        assert!(chunks.check(next, &too_big).is_err());
        // A header longer than the bytes at hand asks for more.
        assert_eq!(chunks.check(next, &first[..4]).ok(), Some(Found::CutShort));
    }
}
