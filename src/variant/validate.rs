//! Validation: every byte of a value checked against `VariantEncoding.md`
//! once, so that decoding never has to, optionally reporting what it checks
//! to a [`Visit`]or (the JSON renderer validates and writes in one pass).

use crate::error::{Error, Result, VariantPart};
use crate::variant::decode::{
    ContainerHeader, decode_primitive, fixed, fixed_size, primitive_type, read_decimal,
};
use crate::variant::metadata::{Metadata, PathStep};
use crate::variant::value::{MICROS_PER_DAY, VariantRef, VariantType};
use crate::variant::{ascending_in_java_order, basic_type, find_name, read_uint, type_id};

/// Where the parts of a container lie, its sizes checked.
struct Bounds {
    len: usize,
    ids_at: usize,
    offsets_at: usize,
    data_at: usize,
    data_len: usize,
    id_size: u8,
    offset_size: u8,
}

impl Bounds {
    /// Offset `i` (of `len + 1`), relative to the values.
    fn offset(&self, value: &[u8], i: usize) -> usize {
        read_uint(
            value,
            self.offsets_at + i * self.offset_size as usize,
            self.offset_size,
        )
    }

    /// Where the child starting at offset `start` must end: the next child
    /// in byte order, or the end of the values.
    fn child_end(&self, value: &[u8], start: usize) -> usize {
        let offsets =
            &value[self.offsets_at..self.offsets_at + self.len * self.offset_size as usize];
        let after = |o: usize| (o > start).then_some(o);
        // Runs over every field of each object on a path, in every row:
        // values under 256 bytes, the common case, get a loop of their own.
        match self.offset_size {
            1 => offsets.iter().filter_map(|&o| after(o as usize)).min(),
            w => offsets
                .chunks_exact(w as usize)
                .filter_map(|o| after(read_uint(o, 0, w)))
                .min(),
        }
        .unwrap_or(self.data_len)
    }
}

/// What validation reports of a value as it checks it, in the order of a
/// walk of the value (object fields in name order): so that a renderer
/// reads the bytes once, checking and writing together, instead of
/// validating first and walking the value again. Each call comes once the
/// part it reports is checked; a value found invalid part-way stops the
/// calls, and what was written must be discarded.
pub(crate) trait Visit {
    /// Whether the calls are wanted: validation alone (`()`) skips
    /// decoding the scalars it would pass.
    const ACTIVE: bool = true;
    /// A primitive or string value.
    fn scalar(&mut self, v: VariantRef<'_>);
    fn begin_object(&mut self);
    /// The key of an object's next field: dictionary id `id`; `first` for
    /// the object's first field.
    fn key(&mut self, metadata: &Metadata<'_>, id: usize, first: bool);
    fn end_object(&mut self);
    fn begin_array(&mut self);
    /// Before each element; `first` for the array's first.
    fn element(&mut self, first: bool);
    fn end_array(&mut self);
}

/// Validation alone.
impl Visit for () {
    const ACTIVE: bool = false;
    fn scalar(&mut self, _: VariantRef<'_>) {}
    fn begin_object(&mut self) {}
    fn key(&mut self, _: &Metadata<'_>, _: usize, _: bool) {}
    fn end_object(&mut self) {}
    fn begin_array(&mut self) {}
    fn element(&mut self, _: bool) {}
    fn end_array(&mut self) {}
}

/// Validates `value` against `metadata` as
/// [`try_with_name_order`](VariantRef::try_with_name_order) does, telling
/// `visit` what it holds as it goes.
pub(crate) fn validate_with(
    metadata: Metadata<'_>,
    value: &[u8],
    max_depth: usize,
    name_order: Option<&[u32]>,
    scratch: &mut Scratch,
    visit: &mut impl Visit,
) -> Result<()> {
    let mut validator = Validator::new(&metadata, name_order, value, max_depth, visit, scratch);
    let size = validator.value(0, value.len(), 0)?;
    if size != value.len() {
        return Err(err(
            size,
            format!("{} bytes after the end of the value", value.len() - size),
        ));
    }
    Ok(())
}

/// Checks one value tree against the spec, once, so that decoding never has
/// to. Work is linear in the bytes: child values of a container may not
/// overlap, which also rules out crafted inputs that reuse one subtree
/// many times over.
pub(super) struct Validator<'m, 'a, V> {
    metadata: &'m Metadata<'a>,
    /// Each id's place in name order, for an unsorted dictionary.
    name_order: Option<&'m [u32]>,
    value: &'a [u8],
    max_depth: usize,
    visit: &'m mut V,
    scratch: &'m mut Scratch,
}

/// Buffers that validation reuses from value to value, for containers
/// whose children are not stored in field order.
#[derive(Default)]
pub(crate) struct Scratch {
    /// For sorting such a container's children by where they start:
    /// `(offset, index)`.
    by_offset: Vec<(usize, usize)>,
    /// Where each child of such containers must end, by index: a stack,
    /// each container's below its children's.
    limits: Vec<usize>,
}

impl<'m, 'a, V: Visit> Validator<'m, 'a, V> {
    pub(super) fn new(
        metadata: &'m Metadata<'a>,
        name_order: Option<&'m [u32]>,
        value: &'a [u8],
        max_depth: usize,
        visit: &'m mut V,
        scratch: &'m mut Scratch,
    ) -> Self {
        // A value that failed validation may have left limits behind.
        scratch.limits.clear();
        Validator {
            metadata,
            name_order,
            value,
            max_depth,
            visit,
            scratch,
        }
    }

    /// Validates the value starting at `at`, which must end by `end`;
    /// returns its size.
    pub(super) fn value(&mut self, at: usize, end: usize, depth: usize) -> Result<usize> {
        let header = self.header(at, end)?;
        match header & 0b11 {
            basic_type::PRIMITIVE => self.primitive(at, end, header >> 2),
            basic_type::SHORT_STRING => {
                let len = (header >> 2) as usize;
                self.need(at + 1, len, end, "short string")?;
                let s = self.check_utf8(at + 1, len)?;
                self.visit.scalar(VariantRef::String(s));
                Ok(1 + len)
            }
            basic_type::OBJECT => {
                self.container(at, end, depth, ContainerHeader::object(header), true)
            }
            _ => self.container(at, end, depth, ContainerHeader::array(header), false),
        }
    }

    fn primitive(&mut self, at: usize, end: usize, id: u8) -> Result<usize> {
        let data = at + 1;
        let t =
            primitive_type(id).ok_or_else(|| err(at, format!("unknown primitive type id {id}")))?;
        match fixed_size(t) {
            None => {
                self.need(data, 4, end, t.name())?;
                let len = read_uint(self.value, data, 4);
                self.need(data + 4, len, end, t.name())?;
                if t == VariantType::String {
                    let s = self.check_utf8(data + 4, len)?;
                    self.visit.scalar(VariantRef::String(s));
                } else {
                    let bytes = &self.value[data + 4..data + 4 + len];
                    self.visit.scalar(VariantRef::Binary(bytes));
                }
                Ok(1 + 4 + len)
            }
            Some(size) => {
                self.need(data, size, end, t.name())?;
                let bytes = &self.value[data..data + size];
                match id {
                    type_id::DECIMAL4 | type_id::DECIMAL8 | type_id::DECIMAL16 => {
                        read_decimal(id, bytes).map_err(|e| err(data, e.message().to_string()))?;
                    }
                    type_id::TIME_NTZ_MICROS => {
                        let t = i64::from_le_bytes(fixed(bytes));
                        if !(0..MICROS_PER_DAY).contains(&t) {
                            return Err(err(
                                data,
                                format!("time {t} is outside 0..86400000000 microseconds"),
                            ));
                        }
                    }
                    _ => {}
                }
                if V::ACTIVE {
                    self.visit.scalar(decode_primitive(id, bytes));
                }
                Ok(1 + size)
            }
        }
    }

    /// Follows `path` from the top-level value, checking each container on
    /// the way; returns where the sub-value starts and the end it must fit
    /// before.
    pub(super) fn locate(&mut self, path: &[PathStep]) -> Result<Option<(usize, usize)>> {
        let (mut at, mut end) = (0, self.value.len());
        for (depth, step) in path.iter().enumerate() {
            let header = self.header(at, end)?;
            let h = match (header & 0b11, step) {
                (basic_type::ARRAY, PathStep::Index(_)) => ContainerHeader::array(header),
                (basic_type::OBJECT, PathStep::Index(_)) | (basic_type::ARRAY, _) => {
                    return Ok(None);
                }
                (basic_type::OBJECT, _) => ContainerHeader::object(header),
                _ => return Ok(None),
            };
            let c = self.container_bounds(at, end, depth, &h)?;
            let index = match step {
                PathStep::Key(id) => self.find_field(&c, |i| i == *id)?,
                PathStep::Absent => self.find_field(&c, |_| false)?,
                PathStep::Name(name) => find_name(
                    c.len,
                    |i| Ok(self.metadata.name(self.field_id(&c, i)?)),
                    name,
                )?,
                PathStep::Index(k) => (*k < c.len).then_some(*k),
            };
            let Some(i) = index else {
                return Ok(None);
            };
            let start = self.child_offset(&c, i)?;
            (at, end) = (
                c.data_at + start,
                c.data_at + c.child_end(self.value, start),
            );
        }
        Ok(Some((at, end)))
    }

    /// The first field of object `c` whose key id satisfies `is`; every id
    /// up to it is checked against the dictionary.
    #[inline]
    fn find_field(&self, c: &Bounds, is: impl Fn(usize) -> bool) -> Result<Option<usize>> {
        for i in 0..c.len {
            if is(self.field_id(c, i)?) {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The header byte at `at`, which must lie before `end`.
    #[inline]
    fn header(&self, at: usize, end: usize) -> Result<u8> {
        self.value
            .get(at)
            .copied()
            .filter(|_| at < end)
            .ok_or_else(|| err(at, "truncated: expected a value header byte"))
    }

    /// Checks a container's depth, count, ids and offsets lie within
    /// `at..end`, and says where its parts are.
    #[inline(always)]
    fn container_bounds(
        &self,
        at: usize,
        end: usize,
        depth: usize,
        h: &ContainerHeader,
    ) -> Result<Bounds> {
        let what = if h.id_size > 0 { "object" } else { "array" };
        if depth >= self.max_depth {
            return Err(err(
                at,
                format!("{what} nested deeper than the limit of {}", self.max_depth),
            ));
        }
        let count_at = at + 1;
        self.need(count_at, h.count_size(), end, "element count")?;
        let len = read_uint(self.value, count_at, h.count_size() as u8);
        let ids_at = count_at + h.count_size();
        let id_bytes = len * h.id_size as usize;
        // len < 2^32, sizes <= 4: no overflow on 64-bit targets.
        let offset_bytes = (len + 1) * h.offset_size as usize;
        self.need(ids_at, id_bytes + offset_bytes, end, what)?;
        let mut bounds = Bounds {
            len,
            ids_at,
            offsets_at: ids_at + id_bytes,
            data_at: ids_at + id_bytes + offset_bytes,
            data_len: 0,
            id_size: h.id_size,
            offset_size: h.offset_size,
        };
        bounds.data_len = bounds.offset(self.value, len);
        self.need(bounds.data_at, bounds.data_len, end, "container values")?;
        Ok(bounds)
    }

    /// The dictionary id of field `i`, checked against the dictionary.
    #[inline(always)]
    fn field_id(&self, c: &Bounds, i: usize) -> Result<usize> {
        let id_at = c.ids_at + i * c.id_size as usize;
        let id = read_uint(self.value, id_at, c.id_size);
        let dict_len = self.metadata.len();
        if id >= dict_len {
            return Err(err(
                id_at,
                format!("field id {id} out of range (dictionary has {dict_len} names)"),
            ));
        }
        Ok(id)
    }

    /// The offset of child `i`, checked to start inside the values.
    #[inline(always)]
    fn child_offset(&self, c: &Bounds, i: usize) -> Result<usize> {
        let o = c.offset(self.value, i);
        if o >= c.data_len {
            return Err(err(
                c.offsets_at + i * c.offset_size as usize,
                format!(
                    "offset {o} of element {i} is past the end of the values ({} bytes)",
                    c.data_len
                ),
            ));
        }
        Ok(o)
    }

    fn container(
        &mut self,
        at: usize,
        end: usize,
        depth: usize,
        h: ContainerHeader,
        is_object: bool,
    ) -> Result<usize> {
        let what = if is_object { "object" } else { "array" };
        let c = self.container_bounds(at, end, depth, &h)?;
        let data_end = c.data_at + c.data_len;
        if is_object {
            // In a sorted dictionary (unique names, ascending) ids order as
            // their names do; else their places in name order, if known.
            let before = |p: usize, id: usize| match self.name_order {
                _ if self.metadata.is_sorted() => p < id,
                Some(order) => order[p] < order[id],
                None => self.metadata.name(p).as_bytes() < self.metadata.name(id).as_bytes(),
            };
            let mut prev = None;
            // The first field out of order: its index, the id before it, its id.
            let mut unsorted = None;
            for i in 0..c.len {
                let id = self.field_id(&c, i)?;
                if let Some(p) = prev
                    && !before(p, id)
                    && unsorted.is_none()
                {
                    unsorted = Some((i, p, id));
                }
                prev = Some(id);
            }
            if let Some((i, p, id)) = unsorted {
                let ids = (0..c.len)
                    .map(|i| self.field_id(&c, i))
                    .collect::<Result<Vec<_>>>()?;
                if !ascending_in_java_order(ids.iter().map(|&id| self.metadata.name(id))) {
                    let (p, name) = (self.metadata.name(p), self.metadata.name(id));
                    let problem = if p == name { "duplicate" } else { "unsorted" };
                    return Err(err(
                        c.ids_at + i * c.id_size as usize,
                        format!(
                            "{problem} field name {name:?} after {p:?} (names must be unique and ascending)"
                        ),
                    ));
                }
            }
        }

        // Children, in field order: each starts at its offset and must end
        // before the next child in byte order starts.
        let mut in_order = true;
        let mut last_start = 0;
        for i in 0..c.len {
            let o = self.child_offset(&c, i)?;
            in_order &= i == 0 || o > last_start;
            last_start = o;
        }
        let limits_at = self.scratch.limits.len();
        if !in_order {
            self.child_limits(&c, what)?;
        }
        if is_object {
            self.visit.begin_object();
        } else {
            self.visit.begin_array();
        }
        for i in 0..c.len {
            let start = c.offset(self.value, i);
            let limit = if !in_order {
                self.scratch.limits[limits_at + i]
            } else if i + 1 < c.len {
                c.offset(self.value, i + 1)
            } else {
                c.data_len
            };
            // Validation alone reads no ids here (the reads could panic,
            // so the compiler would keep them).
            if V::ACTIVE {
                if is_object {
                    let id = read_uint(self.value, c.ids_at + i * c.id_size as usize, c.id_size);
                    self.visit.key(self.metadata, id, i == 0);
                } else {
                    self.visit.element(i == 0);
                }
            }
            self.value(c.data_at + start, c.data_at + limit, depth + 1)?;
        }
        self.scratch.limits.truncate(limits_at);
        if is_object {
            self.visit.end_object();
        } else {
            self.visit.end_array();
        }
        Ok(data_end - at)
    }

    /// Pushes onto `limits` where each child of `c` (whose offsets are not
    /// in field order) must end: where the next child in byte order
    /// starts. Two children may not start at one offset.
    fn child_limits(&mut self, c: &Bounds, what: &str) -> Result<()> {
        let Scratch { by_offset, limits } = &mut *self.scratch;
        let at = limits.len();
        limits.resize(at + c.len, 0);
        by_offset.clear();
        by_offset.extend((0..c.len).map(|i| (c.offset(self.value, i), i)));
        by_offset.sort_unstable();
        for (k, &(o, i)) in by_offset.iter().enumerate() {
            let limit = by_offset.get(k + 1).map_or(c.data_len, |&(next, _)| next);
            if limit == o {
                return Err(err(
                    c.offsets_at + i * c.offset_size as usize,
                    format!("{what} element {i} shares offset {o} with another element"),
                ));
            }
            limits[at + i] = limit;
        }
        Ok(())
    }

    /// Checks that `len` bytes from `at` lie before `end`.
    #[inline]
    fn need(&self, at: usize, len: usize, end: usize, what: &str) -> Result<()> {
        if at.checked_add(len).is_none_or(|stop| stop > end) {
            return Err(err(
                at,
                format!(
                    "truncated: {what} needs {len} bytes, {} are left",
                    end.saturating_sub(at)
                ),
            ));
        }
        Ok(())
    }

    fn check_utf8(&self, at: usize, len: usize) -> Result<&'a str> {
        std::str::from_utf8(&self.value[at..at + len])
            .map_err(|e| err(at + e.valid_up_to(), "string is not valid UTF-8"))
    }
}

#[cold]
pub(super) fn err(byte: usize, message: impl Into<String>) -> Error {
    Error::variant(VariantPart::Value, byte, message)
}
