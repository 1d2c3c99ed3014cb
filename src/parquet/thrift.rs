//! Thrift's compact protocol, read over bytes without allocating, for the
//! parts of a footer, a page header or an offset index checked before the
//! parquet crate acts on them ([`super::page_headers`], [`schema_depth`],
//! [`first_list_fits`], [`bloom_filter_size`]).
//!
//! Every list read here is refused where it counts more elements than
//! bytes are left (each takes one at least): the parquet crate sizes two
//! of its vectors by the count before reading them (a footer's row
//! groups, an offset index's pages; it checks its others), and a count of
//! 2^30 aborted the process on a 100 GB allocation.

/// The length of the bloom filter header `bytes` begin with and the size
/// of the bitset it says follows (its field 1), if they read as one.
pub(super) fn bloom_filter_size(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut input = Compact::new(bytes);
    let mut last_id = 0;
    let mut size = None;
    while let Some((id, kind)) = input.field_header(&mut last_id)? {
        match (id, kind) {
            (1, I32) => size = usize::try_from(input.i32()?).ok(),
            _ => input.skip(kind, 0)?,
        }
    }
    Some((input.at(), size?))
}

/// Structs and lists nested deeper than this are not a footer's or a page
/// header's.
const MAX_NESTING: u32 = 16;

/// Where and why bytes stopped reading as Thrift's compact protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unreadable {
    /// A list or map whose header starts at byte `at` counts `count`
    /// elements, more than the `left` bytes after the header could hold.
    Overlong { at: u64, count: u64, left: u64 },
    /// What is at byte `at` is not what the protocol or the struct allows
    /// there (or the bytes end).
    At(u64),
}

impl Unreadable {
    /// The same, its bytes counted from `start` bytes earlier: from the
    /// start of the file the bytes read were at `start` in.
    pub(super) fn in_file_at(self, start: u64) -> Unreadable {
        match self {
            Unreadable::Overlong { at, count, left } => Unreadable::Overlong {
                at: at + start,
                count,
                left,
            },
            Unreadable::At(at) => Unreadable::At(at + start),
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Unreadable::Overlong { at, count, left } => write!(
                f,
                "a list at byte {at} counts {count} elements, more than the {left} bytes after it hold"
            ),
            Unreadable::At(at) => write!(
                f,
                "it does not read as Thrift's compact protocol at byte {at}"
            ),
        }
    }
}

/// How deep the schema of the footer `bytes` (a `FileMetaData`) nests: the
/// most names on a path from the root to a leaf; an error where the bytes
/// do not read as a footer as far as its list of row groups, a count of
/// children is negative or past 32 bits, or a list read counts more
/// elements than bytes are left (the row groups' among them). The
/// parquet crate builds the schema's tree by recursion, one call per
/// level, and a footer of a few hundred kilobytes nesting a hundred
/// thousand levels overflows its stack; this reads the flat list the tree
/// is built from.
pub(super) fn schema_depth(bytes: &[u8]) -> Result<usize, Unreadable> {
    let mut input = Compact::new(bytes);
    let depth = schema_depth_of(&mut input);
    depth.ok_or_else(|| input.unreadable())
}

fn schema_depth_of(input: &mut Compact<'_>) -> Option<usize> {
    let mut last_id = 0;
    // The schema is field 2, a list of its elements depth first, each
    // counting its children (its field 5).
    loop {
        let (id, kind) = input.field_header(&mut last_id)??;
        if (id, kind) == (2, LIST) {
            break;
        }
        input.skip(kind, 0)?;
    }
    let (elements, STRUCT) = input.list_header()? else {
        return None;
    };
    // The children each group open above the next element has yet to give.
    let mut open: Vec<u32> = Vec::new();
    let mut deepest = 0;
    for _ in 0..elements {
        let children = input.children()?;
        while open.last() == Some(&0) {
            open.pop();
        }
        if let Some(left) = open.last_mut() {
            *left -= 1;
        }
        deepest = deepest.max(open.len());
        if children > 0 {
            open.push(children);
        }
    }
    // The list of row groups (field 4, after the row count), for its
    // count: the crate checks those of the lists within and after it.
    while let Some((id, kind)) = input.field_header(&mut last_id)? {
        if (id, kind) == (4, LIST) {
            input.list_header()?;
            break;
        }
        input.skip(kind, 0)?;
    }
    Some(deepest)
}

/// Reads the first field of the struct `bytes` begin with, if it is a list
/// (an offset index's page locations), as far as its count, which must
/// not pass the bytes left. What else they hold is left to the parquet
/// crate, which checks its other lists' counts itself.
pub(super) fn first_list_fits(bytes: &[u8]) -> Result<(), Unreadable> {
    fn first_list(input: &mut Compact<'_>) -> Option<()> {
        match input.field_header(&mut 0)? {
            Some((_, LIST)) => input.list_header().map(drop),
            _ => Some(()),
        }
    }
    let mut input = Compact::new(bytes);
    first_list(&mut input).ok_or_else(|| input.unreadable())
}

/// Thrift compact protocol types.
pub(super) const BOOL_TRUE: u8 = 1;
pub(super) const BOOL_FALSE: u8 = 2;
pub(super) const BYTE: u8 = 3;
pub(super) const I16: u8 = 4;
pub(super) const I32: u8 = 5;
pub(super) const I64: u8 = 6;
pub(super) const DOUBLE: u8 = 7;
pub(super) const BINARY: u8 = 8;
pub(super) const LIST: u8 = 9;
pub(super) const SET: u8 = 10;
pub(super) const MAP: u8 = 11;
pub(super) const STRUCT: u8 = 12;
pub(super) const UUID: u8 = 13;

/// A reader of Thrift's compact protocol over bytes, skipping what it does
/// not need without allocating.
pub(super) struct Compact<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The list that counted more elements than bytes were left, if one
    /// did.
    overlong: Option<Unreadable>,
}

impl<'a> Compact<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Compact<'a> {
        Compact {
            bytes,
            at: 0,
            overlong: None,
        }
    }

    /// Where the reader is, from the start of its bytes.
    pub(super) fn at(&self) -> usize {
        self.at
    }

    /// Why the reader stopped, once a read has failed.
    fn unreadable(&self) -> Unreadable {
        self.overlong.unwrap_or(Unreadable::At(self.at as u64))
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// Skips `n` bytes; past the end, stops there (what ran out is told
    /// by where the reader stopped).
    fn advance(&mut self, n: usize) -> Option<()> {
        match self.at.checked_add(n).filter(|&e| e <= self.bytes.len()) {
            Some(end) => {
                self.at = end;
                Some(())
            }
            None => {
                self.at = self.bytes.len();
                None
            }
        }
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A zigzag-encoded integer, of any width.
    fn zigzag(&mut self) -> Option<i64> {
        let v = self.varint()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub(super) fn i32(&mut self) -> Option<i32> {
        i32::try_from(self.zigzag()?).ok()
    }

    /// The next field's id and type; `Some(None)` at the struct's end.
    pub(super) fn field_header(&mut self, last_id: &mut i16) -> Option<Option<(i16, u8)>> {
        let b = self.byte()?;
        if b == 0 {
            return Some(None);
        }
        let (delta, kind) = (b >> 4, b & 0x0f);
        *last_id = if delta == 0 {
            i16::try_from(self.zigzag()?).ok()?
        } else {
            last_id.checked_add(i16::from(delta))?
        };
        Some(Some((*last_id, kind)))
    }

    /// The first field of a struct if it is an `i32` numbered 1 (a page
    /// type's header starts with its value count), the rest skipped.
    pub(super) fn first_i32_of_struct(&mut self) -> Option<Option<i32>> {
        let mut last_id = 0;
        let mut first = None;
        let mut at_first = true;
        while let Some((id, kind)) = self.field_header(&mut last_id)? {
            if at_first && id == 1 && kind == I32 {
                first = Some(self.i32()?);
            } else {
                self.skip(kind, 1)?;
            }
            at_first = false;
        }
        Some(first)
    }

    /// A list's length and the type of its elements; `None` for a length
    /// past the bytes left.
    pub(super) fn list_header(&mut self) -> Option<(u64, u8)> {
        let header = self.at;
        let b = self.byte()?;
        let n = match b >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        self.holds(n, header)?;
        Some((n, b & 0x0f))
    }

    /// Whether `n` elements, each a byte at least, fit in the bytes left
    /// after the header at `header`; where not, stops at the end, as
    /// [`Compact::advance`] does.
    fn holds(&mut self, n: u64, header: usize) -> Option<()> {
        let left = self.bytes.len() - self.at;
        if n > left as u64 {
            self.overlong = Some(Unreadable::Overlong {
                at: header as u64,
                count: n,
                left: left as u64,
            });
            self.at = self.bytes.len();
            return None;
        }
        Some(())
    }

    /// A schema element's count of children (its field 5), the rest of it
    /// skipped; `None` for a negative count.
    fn children(&mut self) -> Option<u32> {
        let mut last_id = 0;
        let mut children = 0;
        while let Some((id, kind)) = self.field_header(&mut last_id)? {
            match (id, kind) {
                // Read as the parquet crate reads it, of any integer type.
                (5, I16 | I32 | I64) => children = u32::try_from(self.zigzag()?).ok()?,
                _ => self.skip(kind, 1)?,
            }
        }
        Some(children)
    }

    /// Skips a value of type `kind` at nesting `depth`.
    pub(super) fn skip(&mut self, kind: u8, depth: u32) -> Option<()> {
        if depth > MAX_NESTING {
            return None;
        }
        match kind {
            BOOL_TRUE | BOOL_FALSE => Some(()),
            BYTE => self.advance(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.advance(8),
            UUID => self.advance(16),
            BINARY => {
                let n = usize::try_from(self.varint()?).ok()?;
                self.advance(n)
            }
            LIST | SET => {
                let (n, element) = self.list_header()?;
                for _ in 0..n {
                    // Booleans in a list take a byte each.
                    match element {
                        BOOL_TRUE | BOOL_FALSE => self.advance(1)?,
                        _ => self.skip(element, depth + 1)?,
                    }
                }
                Some(())
            }
            MAP => {
                let header = self.at;
                let n = self.varint()?;
                self.holds(n, header)?;
                if n == 0 {
                    return Some(());
                }
                let b = self.byte()?;
                let (key, value) = (b >> 4, b & 0x0f);
                for _ in 0..n {
                    for kind in [key, value] {
                        match kind {
                            BOOL_TRUE | BOOL_FALSE => self.advance(1)?,
                            _ => self.skip(kind, depth + 1)?,
                        }
                    }
                }
                Some(())
            }
            STRUCT => {
                let mut last_id = 0;
                while let Some((_, kind)) = self.field_header(&mut last_id)? {
                    self.skip(kind, depth + 1)?;
                }
                Some(())
            }
            _ => None,
        }
    }
}
