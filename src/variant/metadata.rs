//! The metadata: a header byte, then a dictionary of field names.

use std::convert::Infallible;

use crate::error::{Error, Result, VariantPart};
use crate::path::PathSegment;
use crate::variant::{ascending_in_java_order, find_name, read_uint};

const VERSION: u8 = 1;
const SORTED_STRINGS: u8 = 0b1_0000;

/// A validated, zero-copy view of Variant metadata bytes.
///
/// Construction checks the whole dictionary once (header, offsets, UTF-8,
/// order when it claims to be sorted); afterwards every lookup is infallible.
///
/// ```
/// use vshred::variant::Metadata;
/// // version 1, sorted, 1-byte offsets; 2 names: "a", "bc"
/// let bytes = [0b0001_0001, 2, 0, 1, 3, b'a', b'b', b'c'];
/// let metadata = Metadata::try_new(&bytes)?;
/// assert_eq!(metadata.len(), 2);
/// assert_eq!(metadata.get(1), Some("bc"));
/// assert_eq!(metadata.find("bc"), Some(1));
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Metadata<'a> {
    bytes: &'a [u8],
    /// All names, concatenated; valid UTF-8.
    names: &'a str,
    len: u32,
    offset_size: u8,
    sorted: bool,
}

impl<'a> Metadata<'a> {
    /// Validates `bytes` as one complete metadata.
    pub fn try_new(bytes: &'a [u8]) -> Result<Metadata<'a>> {
        let (metadata, used) = Self::parse_prefix(bytes)?;
        if used != bytes.len() {
            return Err(err(
                used,
                format!("{} bytes after the end of the metadata", bytes.len() - used),
            ));
        }
        Ok(metadata)
    }

    /// Validates the metadata at the start of `bytes`, returning it and its
    /// length: for inputs that store metadata and value back to back.
    pub fn parse_prefix(bytes: &'a [u8]) -> Result<(Metadata<'a>, usize)> {
        let &header = bytes
            .first()
            .ok_or_else(|| err(0, "empty metadata: a header byte is required"))?;
        let version = header & 0x0F;
        if version != VERSION {
            return Err(err(
                0,
                format!("unsupported metadata version {version} (expected 1)"),
            ));
        }
        let offset_size = (header >> 6) + 1;
        let sorted = header & SORTED_STRINGS != 0;
        let w = offset_size as usize;
        need(bytes, 1 + w, "the dictionary size")?;
        let len = read_uint(bytes, 1, offset_size);
        let offsets_at = 1 + w;
        let names_at = len
            .checked_add(1)
            .and_then(|n| n.checked_mul(w))
            .and_then(|n| n.checked_add(offsets_at))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                err(
                    offsets_at,
                    format!(
                        "truncated: {len} dictionary offsets of {w} bytes do not fit in {} bytes",
                        bytes.len()
                    ),
                )
            })?;
        let offset = |i: usize| read_uint(bytes, offsets_at + i * w, offset_size);
        if offset(0) != 0 {
            return Err(err(offsets_at, "the first dictionary offset must be 0"));
        }
        let names_len = offset(len);
        let end = names_at + names_len;
        if end > bytes.len() {
            return Err(err(
                offsets_at + len * w,
                format!(
                    "truncated: dictionary strings end at byte {end}, metadata has {} bytes",
                    bytes.len()
                ),
            ));
        }
        let names = std::str::from_utf8(&bytes[names_at..end]).map_err(|e| {
            err(
                names_at + e.valid_up_to(),
                "dictionary string is not valid UTF-8",
            )
        })?;
        let mut prev_end = 0;
        let mut prev_name: Option<&str> = None;
        // The first name out of byte order, with where it starts and the
        // one before.
        let mut unsorted = None;
        for i in 1..=len {
            let at = offsets_at + i * w;
            let o = offset(i);
            if o < prev_end || o > names_len {
                return Err(err(
                    at,
                    format!("dictionary offset {o} out of order or out of bounds"),
                ));
            }
            if !names.is_char_boundary(o) {
                return Err(err(
                    names_at + o,
                    format!("dictionary offset {o} splits a UTF-8 character"),
                ));
            }
            let name = &names[prev_end..o];
            if sorted {
                if let Some(p) = prev_name
                    && p >= name
                    && unsorted.is_none()
                {
                    unsorted = Some((names_at + prev_end, p, name));
                }
                prev_name = Some(name);
            }
            prev_end = o;
        }
        if let Some((at, p, name)) = unsorted {
            let names = (0..len).map(|i| &names[offset(i)..offset(i + 1)]);
            if !ascending_in_java_order(names) {
                return Err(err(
                    at,
                    format!(
                        "dictionary is marked sorted but {name:?} follows {p:?} (strings must be unique and ascending)"
                    ),
                ));
            }
        }
        let metadata = Metadata {
            bytes: &bytes[..end],
            names,
            len: len as u32,
            offset_size,
            sorted,
        };
        Ok((metadata, end))
    }

    /// The number of names in the dictionary.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the names are unique and sorted (the `sorted_strings` bit).
    pub fn is_sorted(&self) -> bool {
        self.sorted
    }

    /// The metadata bytes this view was made from.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The name with dictionary id `id`.
    pub fn get(&self, id: usize) -> Option<&'a str> {
        (id < self.len()).then(|| self.name(id))
    }

    /// The name with dictionary id `id`; `id` is known to be in range.
    #[inline]
    pub(crate) fn name(&self, id: usize) -> &'a str {
        let w = self.offset_size as usize;
        let at = 1 + w + id * w;
        let start = read_uint(self.bytes, at, self.offset_size);
        let end = read_uint(self.bytes, at + w, self.offset_size);
        // Validated at construction: in bounds, ordered, on char boundaries.
        &self.names[start..end]
    }

    /// The id of `name`: by binary search on a sorted dictionary, by a scan
    /// otherwise.
    pub fn find(&self, name: &str) -> Option<usize> {
        if self.sorted {
            let Ok(found) = find_name(self.len(), |i| Ok::<_, Infallible>(self.name(i)), name);
            found
        } else {
            (0..self.len()).find(|&i| self.name(i) == name)
        }
    }

    /// Fills `order` (cleared first) with each id's place among the names
    /// in byte order, equal names sharing one: then comparing two ids'
    /// places compares their names. Worth it for an unsorted dictionary
    /// that many values share.
    pub(crate) fn name_order(&self, order: &mut Vec<u32>) {
        let mut ids: Vec<usize> = (0..self.len()).collect();
        ids.sort_unstable_by(|&a, &b| self.name(a).cmp(self.name(b)));
        order.clear();
        order.resize(self.len(), 0);
        let mut place = 0;
        for (k, &id) in ids.iter().enumerate() {
            if k > 0 && self.name(ids[k - 1]) != self.name(id) {
                place += 1;
            }
            order[id] = place;
        }
    }

    /// Resolves `path` against this dictionary into `steps` (cleared
    /// first): each field name becomes its id, so that objects are searched
    /// by comparing ids rather than names. Resolve once per distinct
    /// metadata and reuse the steps for every value that shares it.
    pub(crate) fn resolve(&self, path: &[PathSegment], steps: &mut Vec<PathStep>) {
        steps.clear();
        steps.extend(path.iter().map(|segment| match segment {
            PathSegment::Index(k) => PathStep::Index(*k),
            PathSegment::Field(name) if self.sorted => match self.find(name) {
                Some(id) => PathStep::Key(id),
                None => PathStep::Absent,
            },
            // An unsorted dictionary may repeat a name under two ids:
            // then only comparing names finds every field.
            PathSegment::Field(name) => {
                let mut ids = (0..self.len()).filter(|&i| self.name(i) == name);
                match (ids.next(), ids.next()) {
                    (Some(id), None) => PathStep::Key(id),
                    (None, _) => PathStep::Absent,
                    (Some(_), Some(_)) => PathStep::Name(name.clone()),
                }
            }
        }));
    }

    /// The names in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + '_ {
        (0..self.len()).map(|i| self.name(i))
    }
}

/// One step of a path, resolved against a metadata dictionary by
/// [`Metadata::resolve`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PathStep {
    /// The object field whose key has this id.
    Key(usize),
    /// An object field whose name is not in the dictionary: no object of a
    /// value under this metadata has it.
    Absent,
    /// An object field found by its name: one the dictionary holds more
    /// than once, or any, where the path was not resolved.
    Name(String),
    /// The array element at this index.
    Index(usize),
}

impl PathStep {
    /// The step for `segment` under any metadata: a field by its name.
    pub(crate) fn by_name(segment: &PathSegment) -> PathStep {
        match segment {
            PathSegment::Field(name) => PathStep::Name(name.clone()),
            PathSegment::Index(k) => PathStep::Index(*k),
        }
    }
}

fn need(bytes: &[u8], n: usize, what: &str) -> Result<()> {
    if bytes.len() < n {
        return Err(err(
            bytes.len(),
            format!(
                "truncated: {what} needs {n} bytes, metadata has {}",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

#[cold]
fn err(byte: usize, message: impl Into<String>) -> Error {
    Error::variant(VariantPart::Metadata, byte, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Position;

    fn error_at(bytes: &[u8]) -> (usize, String) {
        let e = Metadata::try_new(bytes).unwrap_err();
        match e.position() {
            Some(Position::Variant {
                part: VariantPart::Metadata,
                byte,
            }) => (byte, e.message().to_string()),
            other => panic!("unexpected position {other:?}"),
        }
    }

    #[test]
    fn reads_every_offset_width() {
        for offset_size in 1..=4u8 {
            let mut bytes = vec![0x01 | ((offset_size - 1) << 6)];
            let push = |bytes: &mut Vec<u8>, v: u32| {
                bytes.extend_from_slice(&v.to_le_bytes()[..offset_size as usize])
            };
            push(&mut bytes, 2);
            for o in [0, 3, 5] {
                push(&mut bytes, o);
            }
            bytes.extend_from_slice(b"zoeab");
            let m = Metadata::try_new(&bytes).unwrap();
            assert!(!m.is_sorted());
            assert_eq!(m.iter().collect::<Vec<_>>(), ["zoe", "ab"]);
            assert_eq!(m.find("ab"), Some(1));
            assert_eq!(m.find("x"), None);
        }
    }

    #[test]
    fn sorted_lookup_uses_binary_search_order() {
        let mut bytes = vec![0x11, 4, 0, 1, 2, 4, 5];
        bytes.extend_from_slice(b"abcdz");
        let m = Metadata::try_new(&bytes).unwrap();
        assert!(m.is_sorted());
        for (i, name) in ["a", "b", "cd", "z"].iter().enumerate() {
            assert_eq!(m.find(name), Some(i));
        }
        assert_eq!(m.find("c"), None);
    }

    #[test]
    fn resolve_turns_names_into_ids_unless_a_name_repeats() {
        let path = crate::path::VariantPath::parse("$.ab[2].x.zoe").unwrap();
        let mut steps = Vec::new();
        // Unsorted, unique: "zoe", "ab".
        let unique = [0x01, 2, 0, 3, 5, b'z', b'o', b'e', b'a', b'b'];
        Metadata::try_new(&unique)
            .unwrap()
            .resolve(path.segments(), &mut steps);
        use PathStep::*;
        assert_eq!(steps, [Key(1), Index(2), Absent, Key(0)]);
        // Sorted: "a", "ab", "zoe" (binary search).
        let sorted = [0x11, 3, 0, 1, 3, 6, b'a', b'a', b'b', b'z', b'o', b'e'];
        Metadata::try_new(&sorted)
            .unwrap()
            .resolve(path.segments(), &mut steps);
        assert_eq!(steps, [Key(1), Index(2), Absent, Key(2)]);
        // Unsorted with "ab" twice: that step compares names.
        let repeated = [
            0x01, 3, 0, 2, 5, 7, b'a', b'b', b'z', b'o', b'e', b'a', b'b',
        ];
        Metadata::try_new(&repeated)
            .unwrap()
            .resolve(path.segments(), &mut steps);
        assert_eq!(steps, [Name("ab".into()), Index(2), Absent, Key(1)]);
    }

    #[test]
    fn name_order_ranks_ids_by_name_with_ties_for_repeats() {
        // Unsorted: "zoe", "ab", "b", "ab".
        let bytes = [
            0x01, 4, 0, 3, 5, 6, 8, b'z', b'o', b'e', b'a', b'b', b'b', b'a', b'b',
        ];
        let mut order = Vec::new();
        Metadata::try_new(&bytes).unwrap().name_order(&mut order);
        assert_eq!(order, [2, 0, 1, 0]);
    }

    #[test]
    fn rejects_bad_metadata_with_offsets() {
        let cases: &[(&[u8], usize, &str)] = &[
            (&[], 0, "empty metadata"),
            (&[0x02, 0, 0], 0, "unsupported metadata version 2"),
            (&[0x01], 1, "truncated: the dictionary size"),
            (&[0x01, 2, 0, 1], 2, "truncated: 2 dictionary offsets"),
            (
                &[0x01, 1, 1, 1, b'a'],
                2,
                "the first dictionary offset must be 0",
            ),
            (
                &[0x01, 1, 0, 2, b'a'],
                3,
                "truncated: dictionary strings end",
            ),
            (&[0x01, 1, 0, 1, 0xFF], 4, "not valid UTF-8"),
            (
                &[0x01, 2, 0, 2, 1, b'a', b'b'],
                3,
                "dictionary offset 2 out of order",
            ),
            (
                &[0x11, 2, 0, 1, 2, b'b', b'a'],
                6,
                "marked sorted but \"a\" follows \"b\"",
            ),
            (&[0x11, 2, 0, 1, 2, b'a', b'a'], 6, "marked sorted"),
            (&[0x01, 1, 0, 1, b'a', 0], 5, "1 bytes after the end"),
        ];
        for (bytes, at, msg) in cases {
            let (byte, message) = error_at(bytes);
            assert_eq!(byte, *at, "{bytes:?}: {message}");
            assert!(message.contains(msg), "{bytes:?}: {message}");
        }
    }

    #[test]
    fn rejects_offset_inside_a_utf8_character() {
        // "é" is two bytes; an offset of 1 splits it.
        let bytes = [0x01, 2, 0, 1, 2, 0xC3, 0xA9];
        let (_, message) = error_at(&bytes);
        assert!(message.contains("splits a UTF-8 character"), "{message}");
    }

    #[test]
    fn reserved_bit_is_ignored() {
        let m = Metadata::try_new(&[0x21, 0, 0]).unwrap();
        assert!(m.is_empty());
    }
}
