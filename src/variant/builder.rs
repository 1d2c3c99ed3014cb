//! Writing Variants: one reusable value buffer, a stack of open containers,
//! and a dictionary of field names.

use crate::error::{Error, ErrorKind, Result};
use crate::hash::BytesHasher;
use crate::variant::decimal::VariantDecimal;
use crate::variant::value::{ObjectRef, VariantRef};
use crate::variant::{MAX_SHORT_STRING, basic_type, type_id, width_for, write_uint};

/// What to do when an object gets the same key twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DuplicateKeys {
    /// Fail: the spec forbids duplicate keys, and silently dropping data is
    /// worse than stopping.
    #[default]
    Error,
    /// Keep the value given last, as most JSON parsers do.
    KeepLast,
}

impl std::str::FromStr for DuplicateKeys {
    type Err = Error;

    /// `error` or `last`, as SQL and Python take it.
    fn from_str(s: &str) -> Result<DuplicateKeys> {
        match s {
            "error" => Ok(DuplicateKeys::Error),
            "last" => Ok(DuplicateKeys::KeepLast),
            other => Err(Error::from_message(format!(
                "{other:?} is not error or last"
            ))),
        }
    }
}

impl std::fmt::Display for DuplicateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DuplicateKeys::Error => "error",
            DuplicateKeys::KeepLast => "last",
        })
    }
}

/// Writes one Variant at a time: values are appended in document order and
/// each container is closed with its header placed in front of its children.
///
/// The builder always picks the smallest encoding: int8..int64 and
/// decimal4/8/16 by magnitude (through [`int`](Self::int) and
/// [`decimal`](Self::decimal)), short strings below 64 bytes, and the
/// narrowest field id, offset and count widths per container. Containers
/// are closed in O(size of their children) with one `memmove`; the buffers
/// are reused across [`reset`](Self::reset), so building many values
/// allocates nothing once the buffers have grown.
///
/// The dictionary lists names in first-use order; it is marked sorted when
/// that order happens to be sorted.
///
/// # Panics
/// Calls out of order are bugs in the caller and panic: a value inside an
/// object without a [`key`](Self::key) before it, `end_*` without a matching
/// `begin_*`, or [`finish`](Self::finish) with a container still open or no
/// value written.
#[derive(Debug, Default)]
pub struct VariantBuilder {
    value: Vec<u8>,
    metadata: Vec<u8>,
    dict: Dictionary,
    /// Open containers, innermost last.
    frames: Vec<Frame>,
    /// Fields of all open objects, innermost last.
    fields: Vec<Field>,
    /// Element start offsets of all open arrays, innermost last.
    elements: Vec<u32>,
    /// A key given but whose value is not yet written.
    pending_key: Option<u32>,
    duplicate_keys: DuplicateKeys,
    /// Holds the kept values while an object with duplicate keys is compacted.
    scratch: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: FrameKind,
    /// Where the container's children (or the detached value) start in `value`.
    start: usize,
    /// Where its entries start in `fields` or `elements`.
    first: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Object,
    Array,
    /// A value written apart from the open containers, to be taken out
    /// whole: a shredded slot's residual while a residual object is open.
    Detached,
}

#[derive(Debug, Clone, Copy)]
struct Field {
    id: u32,
    /// Offset of the value from the start of the object's children.
    offset: u32,
}

impl VariantBuilder {
    /// An empty builder that rejects duplicate keys.
    pub fn new() -> VariantBuilder {
        VariantBuilder::default()
    }

    /// Sets what [`end_object`](Self::end_object) does with duplicate keys.
    pub fn with_duplicate_keys(mut self, policy: DuplicateKeys) -> VariantBuilder {
        self.duplicate_keys = policy;
        self
    }

    /// Clears everything written, keeping the buffers for the next value.
    pub fn reset(&mut self) {
        self.clear_value();
        self.dict.clear();
    }

    fn clear_value(&mut self) {
        self.value.clear();
        self.frames.clear();
        self.fields.clear();
        self.elements.clear();
        self.pending_key = None;
    }

    /// Starts the next of many values (rows of a column), like
    /// [`reset`](Self::reset) but keeping the dictionary while it is small
    /// or rows keep using most of it: rows with the same keys then get the
    /// same metadata bytes (written once, and dictionary-encoded by
    /// Parquet) and their names are not hashed again. A row's metadata may list names the row
    /// does not use, which the spec allows; use `reset` for metadata with
    /// exactly the row's names.
    ///
    /// ```
    /// use vshred::json::JsonParser;
    /// use vshred::variant::VariantBuilder;
    /// let (parser, mut builder) = (JsonParser::new(), VariantBuilder::new());
    /// let mut first = Vec::new();
    /// for line in [r#"{"a":1,"b":2}"#, r#"{"a":3,"b":4}"#] {
    ///     builder.start_row();
    ///     parser.parse(line.as_bytes(), &mut builder)?;
    ///     let (metadata, _value) = builder.finish();
    ///     if first.is_empty() {
    ///         first = metadata.to_vec();
    ///     }
    ///     assert_eq!(metadata, first.as_slice()); // the same bytes, written once
    /// }
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn start_row(&mut self) {
        self.clear_value();
        self.dict.start_row();
    }

    /// Starts a batch of rows: clears everything, as [`reset`](Self::reset),
    /// and enters `names` in the dictionary in this order, as if a row
    /// had used them. Rows that [`start_row`](Self::start_row) then find
    /// their names at the same ids in every batch that starts so, whatever
    /// rows came before.
    pub(crate) fn start_batch(&mut self, names: &[String]) {
        self.reset();
        for name in names {
            self.dict.lookup_or_insert(name);
        }
    }

    /// The dictionary's names, in id order.
    pub(crate) fn names(&self) -> Vec<String> {
        (0..self.dict.len() as u32)
            .map(|id| self.dict.name(id).to_owned())
            .collect()
    }

    /// Changes whenever the dictionary is cleared: ids cached by a caller
    /// are valid while it stays the same.
    pub(crate) fn generation(&self) -> u64 {
        self.dict.generation
    }

    /// Starts the next value: records its position in the enclosing
    /// container.
    #[inline]
    fn begin_value(&mut self) {
        if let Some(frame) = self.frames.last() {
            let offset = (self.value.len() - frame.start) as u32;
            match frame.kind {
                FrameKind::Object => {
                    let id = self
                        .pending_key
                        .take()
                        .expect("VariantBuilder: a value inside an object needs a key first");
                    self.fields.push(Field { id, offset });
                }
                FrameKind::Array => self.elements.push(offset),
                FrameKind::Detached => {}
            }
        } else {
            assert!(
                self.value.is_empty(),
                "VariantBuilder: only one top-level value; call reset() to start another"
            );
        }
    }

    #[inline]
    fn primitive(&mut self, id: u8, data: &[u8]) {
        self.begin_value();
        self.value.push(id << 2 | basic_type::PRIMITIVE);
        self.value.extend_from_slice(data);
    }

    /// Sets the key of the next value inside an object.
    #[inline]
    pub fn key(&mut self, name: &str) {
        assert!(
            matches!(self.frames.last(), Some(f) if f.kind == FrameKind::Object),
            "VariantBuilder::key outside an object"
        );
        self.pending_key = Some(self.dict.intern(name));
    }

    /// Writes the Variant null.
    pub fn null(&mut self) {
        self.primitive(type_id::NULL, &[]);
    }

    /// Writes a boolean.
    pub fn bool(&mut self, v: bool) {
        self.primitive(if v { type_id::TRUE } else { type_id::FALSE }, &[]);
    }

    /// Writes an integer as the smallest of int8, int16, int32, int64.
    #[inline]
    pub fn int(&mut self, v: i64) {
        if let Ok(v) = i8::try_from(v) {
            self.int8(v)
        } else if let Ok(v) = i16::try_from(v) {
            self.int16(v)
        } else if let Ok(v) = i32::try_from(v) {
            self.int32(v)
        } else {
            self.int64(v)
        }
    }

    /// Writes an int8.
    pub fn int8(&mut self, v: i8) {
        self.primitive(type_id::INT8, &v.to_le_bytes());
    }

    /// Writes an int16.
    pub fn int16(&mut self, v: i16) {
        self.primitive(type_id::INT16, &v.to_le_bytes());
    }

    /// Writes an int32.
    pub fn int32(&mut self, v: i32) {
        self.primitive(type_id::INT32, &v.to_le_bytes());
    }

    /// Writes an int64.
    pub fn int64(&mut self, v: i64) {
        self.primitive(type_id::INT64, &v.to_le_bytes());
    }

    /// Writes a double.
    pub fn double(&mut self, v: f64) {
        self.primitive(type_id::DOUBLE, &v.to_le_bytes());
    }

    /// Writes a float.
    pub fn float(&mut self, v: f32) {
        self.primitive(type_id::FLOAT, &v.to_le_bytes());
    }

    /// Writes a decimal as the smallest of decimal4, decimal8, decimal16 that
    /// holds its digits and scale (`max(precision, scale)` <= 9, 18, 38).
    #[inline]
    pub fn decimal(&mut self, d: VariantDecimal) {
        match d.required_precision() {
            0..=9 => self.decimal4(d),
            10..=18 => self.decimal8(d),
            _ => self.decimal16(d),
        }
    }

    /// Writes a decimal4.
    ///
    /// # Panics
    ///
    /// If the unscaled value does not fit 32 bits: a caller's mistake,
    /// which [`decimal`](Self::decimal), choosing the width, cannot make.
    pub fn decimal4(&mut self, d: VariantDecimal) {
        let unscaled = i32::try_from(d.unscaled()).expect("decimal4 needs a 32-bit unscaled value");
        self.decimal_bytes(type_id::DECIMAL4, d.scale(), &unscaled.to_le_bytes());
    }

    /// Writes a decimal8.
    ///
    /// # Panics
    ///
    /// If the unscaled value does not fit 64 bits (see
    /// [`decimal4`](Self::decimal4)).
    pub fn decimal8(&mut self, d: VariantDecimal) {
        let unscaled = i64::try_from(d.unscaled()).expect("decimal8 needs a 64-bit unscaled value");
        self.decimal_bytes(type_id::DECIMAL8, d.scale(), &unscaled.to_le_bytes());
    }

    /// Writes a decimal16.
    pub fn decimal16(&mut self, d: VariantDecimal) {
        self.decimal_bytes(type_id::DECIMAL16, d.scale(), &d.unscaled().to_le_bytes());
    }

    fn decimal_bytes(&mut self, id: u8, scale: u8, unscaled: &[u8]) {
        self.begin_value();
        self.value.push(id << 2 | basic_type::PRIMITIVE);
        self.value.push(scale);
        self.value.extend_from_slice(unscaled);
    }

    /// Writes a date, in days since 1970-01-01.
    pub fn date(&mut self, days: i32) {
        self.primitive(type_id::DATE, &days.to_le_bytes());
    }

    /// Writes a time of day in microseconds since midnight; fails outside
    /// `0..86_400_000_000`.
    pub fn time_micros(&mut self, micros: i64) -> Result<()> {
        if !(0..crate::variant::value::MICROS_PER_DAY).contains(&micros) {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("time {micros} is outside 0..86400000000 microseconds"),
            ));
        }
        self.primitive(type_id::TIME_NTZ_MICROS, &micros.to_le_bytes());
        Ok(())
    }

    /// Writes a UTC timestamp in microseconds since the epoch.
    pub fn timestamp_micros(&mut self, micros: i64) {
        self.primitive(type_id::TIMESTAMP_MICROS, &micros.to_le_bytes());
    }

    /// Writes a timestamp without time zone, in microseconds.
    pub fn timestamp_ntz_micros(&mut self, micros: i64) {
        self.primitive(type_id::TIMESTAMP_NTZ_MICROS, &micros.to_le_bytes());
    }

    /// Writes a UTC timestamp in nanoseconds since the epoch.
    pub fn timestamp_nanos(&mut self, nanos: i64) {
        self.primitive(type_id::TIMESTAMP_NANOS, &nanos.to_le_bytes());
    }

    /// Writes a timestamp without time zone, in nanoseconds.
    pub fn timestamp_ntz_nanos(&mut self, nanos: i64) {
        self.primitive(type_id::TIMESTAMP_NTZ_NANOS, &nanos.to_le_bytes());
    }

    /// Writes a UUID from its 16 big-endian bytes.
    pub fn uuid(&mut self, bytes: [u8; 16]) {
        self.primitive(type_id::UUID, &bytes);
    }

    /// Writes a binary value.
    pub fn binary(&mut self, bytes: &[u8]) {
        self.begin_value();
        self.value
            .push(type_id::BINARY << 2 | basic_type::PRIMITIVE);
        self.value
            .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        self.value.extend_from_slice(bytes);
    }

    /// Writes a string: a short string below 64 bytes, else a long one.
    #[inline]
    pub fn string(&mut self, s: &str) {
        self.begin_value();
        if s.len() <= MAX_SHORT_STRING {
            self.value
                .push((s.len() as u8) << 2 | basic_type::SHORT_STRING);
        } else {
            self.value
                .push(type_id::STRING << 2 | basic_type::PRIMITIVE);
            self.value
                .extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
        self.value.extend_from_slice(s.as_bytes());
    }

    /// Opens an object; give each field as [`key`](Self::key) then a value.
    pub fn begin_object(&mut self) {
        self.begin_container(FrameKind::Object);
    }

    /// Opens an array; its elements are the values written until
    /// [`end_array`](Self::end_array).
    pub fn begin_array(&mut self) {
        self.begin_container(FrameKind::Array);
    }

    fn begin_container(&mut self, kind: FrameKind) {
        self.begin_value();
        let first = match kind {
            FrameKind::Object => self.fields.len(),
            _ => self.elements.len(),
        };
        self.frames.push(Frame {
            kind,
            start: self.value.len(),
            first,
        });
    }

    /// Starts a value that belongs to no open container; its names still go
    /// to this builder's dictionary. Write exactly one value, then take it
    /// with [`end_detached`](Self::end_detached).
    pub(crate) fn begin_detached(&mut self) {
        self.frames.push(Frame {
            kind: FrameKind::Detached,
            start: self.value.len(),
            first: 0,
        });
    }

    /// Hands the value written since [`begin_detached`](Self::begin_detached)
    /// to `sink` and removes it from the buffer.
    pub(crate) fn end_detached<R>(&mut self, sink: impl FnOnce(&[u8]) -> R) -> R {
        let frame = self
            .frames
            .pop()
            .expect("VariantBuilder::end_detached without begin_detached");
        assert!(
            frame.kind == FrameKind::Detached,
            "VariantBuilder::end_detached closes a container"
        );
        let result = sink(&self.value[frame.start..]);
        self.value.truncate(frame.start);
        result
    }

    /// Writes the dictionary as metadata, for values taken out detached.
    /// Unchanged dictionaries reuse the bytes written last time.
    pub(crate) fn write_metadata(&mut self) -> &[u8] {
        if self.dict.written != Some(self.dict.len()) {
            self.metadata.clear();
            self.dict.write_metadata(&mut self.metadata);
            self.dict.written = Some(self.dict.len());
        }
        &self.metadata
    }

    /// Adds `name` to the dictionary (a shredded field's name must be in
    /// the metadata even when no residual mentions it) and returns its id.
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        self.dict.intern(name)
    }

    /// Marks an id obtained in this generation as used by the current row.
    #[inline]
    pub(crate) fn touch(&mut self, id: u32) {
        self.dict.touch(id);
    }

    /// Closes the innermost object: sorts its fields by name and writes its
    /// header. Fails on a duplicate key under [`DuplicateKeys::Error`]; the
    /// error's message names the key.
    pub fn end_object(&mut self) -> Result<()> {
        let frame = self
            .frames
            .pop()
            .expect("VariantBuilder::end_object without begin_object");
        assert!(
            frame.kind == FrameKind::Object,
            "VariantBuilder::end_object closes an array"
        );
        assert!(
            self.pending_key.is_none(),
            "VariantBuilder: key without a value"
        );
        let dict = &self.dict;
        let fields = &mut self.fields[frame.first..];
        if !fields.is_sorted_by(|a, b| dict.cmp_names(a.id, b.id).is_lt()) {
            // Stable, so that among equal keys the last given stays last.
            fields.sort_by(|a, b| dict.cmp_names(a.id, b.id));
            if let Some(pos) = fields.windows(2).position(|w| w[0].id == w[1].id) {
                match self.duplicate_keys {
                    DuplicateKeys::Error => {
                        let name = dict.name(fields[pos].id).to_string();
                        self.fields.truncate(frame.first);
                        return Err(Error::duplicate_key(&name));
                    }
                    DuplicateKeys::KeepLast => self.drop_shadowed_fields(frame),
                }
            }
        }
        let fields = &self.fields[frame.first..];
        let data_len = self.value.len() - frame.start;
        check_size(data_len)?;
        let max_id = fields.iter().map(|f| f.id).max().unwrap_or(0);
        let layout = ContainerLayout::object(fields.len(), max_id as usize, data_len);
        let h = make_room(&mut self.value, frame.start, layout.header_len());
        layout.write(
            h,
            fields.iter().map(|f| f.id as usize),
            fields.iter().map(|f| f.offset as usize),
            data_len,
        );
        self.fields.truncate(frame.first);
        Ok(())
    }

    /// Removes all but the last of each run of equal keys (fields are sorted
    /// stably by name) and rewrites the object's children without the
    /// dropped values. Rare, so it may copy.
    #[cold]
    fn drop_shadowed_fields(&mut self, frame: Frame) {
        let fields = &self.fields[frame.first..];
        // Field values in the order they were written, to find each one's end.
        let mut starts: Vec<u32> = fields.iter().map(|f| f.offset).collect();
        starts.sort_unstable();
        let data_len = (self.value.len() - frame.start) as u32;
        let end_of = |offset: u32| {
            let i = starts.partition_point(|&s| s <= offset);
            starts.get(i).copied().unwrap_or(data_len)
        };
        let mut kept = Vec::with_capacity(fields.len());
        self.scratch.clear();
        for (i, f) in fields.iter().enumerate() {
            if fields.get(i + 1).is_some_and(|next| next.id == f.id) {
                continue;
            }
            let (start, end) = (f.offset as usize, end_of(f.offset) as usize);
            kept.push(Field {
                id: f.id,
                offset: self.scratch.len() as u32,
            });
            self.scratch
                .extend_from_slice(&self.value[frame.start + start..frame.start + end]);
        }
        self.value.truncate(frame.start);
        self.value.extend_from_slice(&self.scratch);
        self.fields.truncate(frame.first);
        self.fields.extend(kept);
    }

    /// Closes the innermost array and writes its header.
    pub fn end_array(&mut self) -> Result<()> {
        let frame = self
            .frames
            .pop()
            .expect("VariantBuilder::end_array without begin_array");
        assert!(
            frame.kind == FrameKind::Array,
            "VariantBuilder::end_array closes an object"
        );
        let elements = &self.elements[frame.first..];
        let data_len = self.value.len() - frame.start;
        check_size(data_len)?;
        let layout = ContainerLayout::array(elements.len(), data_len);
        let h = make_room(&mut self.value, frame.start, layout.header_len());
        layout.write(
            h,
            std::iter::empty(),
            elements.iter().map(|&o| o as usize),
            data_len,
        );
        self.elements.truncate(frame.first);
        Ok(())
    }

    /// Copies a value, possibly from another Variant with other metadata,
    /// re-interning its field names here.
    pub fn append(&mut self, v: &VariantRef<'_>) -> Result<()> {
        match *v {
            VariantRef::Null => self.null(),
            VariantRef::Bool(b) => self.bool(b),
            VariantRef::Int8(x) => self.int8(x),
            VariantRef::Int16(x) => self.int16(x),
            VariantRef::Int32(x) => self.int32(x),
            VariantRef::Int64(x) => self.int64(x),
            VariantRef::Double(x) => self.double(x),
            VariantRef::Decimal4(d) => self.decimal4(d),
            VariantRef::Decimal8(d) => self.decimal8(d),
            VariantRef::Decimal16(d) => self.decimal16(d),
            VariantRef::Date(x) => self.date(x),
            VariantRef::TimestampMicros(x) => self.timestamp_micros(x),
            VariantRef::TimestampNtzMicros(x) => self.timestamp_ntz_micros(x),
            VariantRef::Float(x) => self.float(x),
            VariantRef::Binary(b) => self.binary(b),
            VariantRef::String(s) => self.string(s),
            VariantRef::TimeNtzMicros(x) => self.time_micros(x)?,
            VariantRef::TimestampNanos(x) => self.timestamp_nanos(x),
            VariantRef::TimestampNtzNanos(x) => self.timestamp_ntz_nanos(x),
            VariantRef::Uuid(u) => self.uuid(u),
            VariantRef::Object(o) => {
                self.begin_object();
                for (name, value) in o.iter() {
                    self.key(name);
                    self.append(&value)?;
                }
                self.end_object()?;
            }
            VariantRef::Array(a) => {
                self.begin_array();
                for value in a.iter() {
                    self.append(&value)?;
                }
                self.end_array()?;
            }
        }
        Ok(())
    }

    /// Completes the Variant: writes the metadata (or reuses the bytes of
    /// the last value when the dictionary did not change) and returns
    /// `(metadata, value)`. Call [`reset`](Self::reset) or
    /// [`start_row`](Self::start_row) before the next one.
    pub fn finish(&mut self) -> (&[u8], &[u8]) {
        assert!(
            self.frames.is_empty(),
            "VariantBuilder::finish with an open container"
        );
        assert!(
            !self.value.is_empty(),
            "VariantBuilder::finish without a value"
        );
        self.write_metadata();
        (&self.metadata, &self.value)
    }

    /// Completes the Variant and returns `(metadata, value)` as owned buffers.
    pub fn into_parts(mut self) -> (Vec<u8>, Vec<u8>) {
        self.finish();
        (self.metadata, self.value)
    }

    /// Whether nothing has been written since the last reset.
    pub(crate) fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
}

/// Writes object `o` without the fields for which `drop(i)` holds. Field ids
/// and values are copied as they are, so the result uses `o`'s metadata.
pub(crate) fn write_object_without(
    o: &ObjectRef<'_>,
    drop: impl Fn(usize) -> bool,
    out: &mut Vec<u8>,
) {
    let kept = || (0..o.len()).filter(|&i| !drop(i));
    let data_len: usize = kept().map(|i| o.field_bytes(i).len()).sum();
    let max_id = kept().map(|i| o.field_id(i)).max().unwrap_or(0);
    let layout = ContainerLayout::object(kept().count(), max_id, data_len);
    let start = out.len();
    out.resize(start + layout.header_len(), 0);
    let offsets = kept().scan(0, |at, i| {
        let offset = *at;
        *at += o.field_bytes(i).len();
        Some(offset)
    });
    layout.write(
        &mut out[start..],
        kept().map(|i| o.field_id(i)),
        offsets,
        data_len,
    );
    for i in kept() {
        out.extend_from_slice(o.field_bytes(i));
    }
}

/// The header of an object or array: the narrowest widths for its sizes.
pub(crate) struct ContainerLayout {
    basic_type: u8,
    len: usize,
    /// 0 for arrays.
    id_size: u8,
    offset_size: u8,
}

impl ContainerLayout {
    pub(crate) fn object(len: usize, max_id: usize, data_len: usize) -> ContainerLayout {
        ContainerLayout {
            basic_type: basic_type::OBJECT,
            len,
            id_size: width_for(max_id),
            offset_size: width_for(data_len),
        }
    }

    pub(crate) fn array(len: usize, data_len: usize) -> ContainerLayout {
        ContainerLayout {
            basic_type: basic_type::ARRAY,
            len,
            id_size: 0,
            offset_size: width_for(data_len),
        }
    }

    fn count_size(&self) -> usize {
        if self.len > u8::MAX as usize { 4 } else { 1 }
    }

    pub(crate) fn header_len(&self) -> usize {
        1 + self.count_size()
            + self.len * self.id_size as usize
            + (self.len + 1) * self.offset_size as usize
    }

    /// Writes the header into `h` (`header_len()` bytes): the header byte,
    /// the count, the field ids (objects), the offsets and the data length.
    pub(crate) fn write(
        &self,
        h: &mut [u8],
        ids: impl Iterator<Item = usize>,
        offsets: impl Iterator<Item = usize>,
        data_len: usize,
    ) {
        let is_large = (self.count_size() == 4) as u8;
        let offset_bits = (self.offset_size - 1) << 2;
        h[0] = self.basic_type
            | offset_bits
            | if self.basic_type == basic_type::OBJECT {
                is_large << 6 | (self.id_size - 1) << 4
            } else {
                is_large << 4
            };
        let count_size = self.count_size();
        write_uint(&mut h[1..], self.len, count_size as u8);
        let mut at = 1 + count_size;
        for id in ids {
            write_uint(&mut h[at..], id, self.id_size);
            at += self.id_size as usize;
        }
        for offset in offsets.chain(std::iter::once(data_len)) {
            write_uint(&mut h[at..], offset, self.offset_size);
            at += self.offset_size as usize;
        }
    }
}

/// Offsets in containers are at most 4 bytes wide.
fn check_size(len: usize) -> Result<()> {
    if len > u32::MAX as usize {
        return Err(Error::new(
            ErrorKind::OutOfRange,
            format!("container of {len} bytes exceeds the 4 GiB the encoding allows"),
        ));
    }
    Ok(())
}

/// Inserts `len` bytes at `at`, moving what follows, and returns them.
fn make_room(buf: &mut Vec<u8>, at: usize, len: usize) -> &mut [u8] {
    let old = buf.len();
    buf.resize(old + len, 0);
    buf.copy_within(at..old, at + len);
    &mut buf[at..at + len]
}

/// The names a dictionary keeps however few of them a row uses. Optional
/// keys (a few dozen names, each row using some) then end in one dictionary
/// that every row shares, whose metadata bytes stop changing: clearing it
/// whenever a row used less than half made a new metadata value at every
/// rebuild, and on 1M synthetic event rows (65 names, 7 to 25 a row) the
/// metadata column took 7.5 MB against 39 kB kept (Spark's, exact names per
/// row, 0.9 MB). Beyond this, rows whose keys keep changing (maps) would
/// make each new value as long as the dictionary: on the real-data bench,
/// 1 kB took the least in total (npm manifests 131 kB, against 137 kB
/// cleared as before and 173 kB with 4 kB).
const KEPT_NAME_BYTES: usize = 1024;

/// Name bytes a row's metadata may carry beyond those of the names the
/// row before it used: past [`KEPT_NAME_BYTES`] the dictionary is cleared
/// by its count of names, which a few long keys do not reach, and rows of
/// one distinct 10 kB key each carried the keys of up to 17 rows before
/// them (a metadata column of 420 MB for 40 MB of input).
const CARRIED_NAME_BYTES: usize = 16 << 10;

/// Names used by one row alone that a dictionary carries, where they are
/// most of it and hold more than four times the bytes of the names the
/// last row used: keys that change from row to row (a map keyed by ids,
/// hashes or dates) were carried by every row after theirs, unused, until
/// the dictionary reached [`KEPT_NAME_BYTES`]. 100,000 rows of one
/// 12-digit key each carried about 40 (a metadata column of 1.38 MB
/// compressed, 62 MB before; Spark's 0.75 MB), and take 1.02 MB (6.8 MB
/// before); CLDR's locale names 0.4% less in all. Without the bytes the
/// row used, wide rows of some keys of their own (GitHub's webhook
/// payloads) wrote a file 37% larger: each row its own metadata.
const SINGLE_ROW_NAMES: usize = 4;

/// The first eight bytes of `name` as a big-endian integer, zeros after a
/// shorter name: if two prefixes differ, the names compare as they do.
fn name_prefix(name: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let n = name.len().min(8);
    bytes[..n].copy_from_slice(&name.as_bytes()[..n]);
    u64::from_be_bytes(bytes)
}

/// Field names in first-use order, with an open-addressing hash index so
/// that looking up a name allocates nothing.
#[derive(Debug, Default)]
struct Dictionary {
    /// All names, concatenated.
    names: String,
    /// End of each name in `names`.
    ends: Vec<u32>,
    /// Each name's first eight bytes as a big-endian integer (zeros after
    /// a shorter name): names compare as these do unless these are equal,
    /// so sorting an object's keys rarely reads the names (sorting the keys
    /// of wide objects took 19% of the instructions of encoding GitHub's
    /// webhook payloads).
    prefixes: Vec<u64>,
    /// Slots hold id + 1; 0 is empty. Length is a power of two.
    slots: Vec<u32>,
    /// Bumped whenever names are cleared.
    generation: u64,
    /// The dictionary length the builder's metadata bytes were written for.
    written: Option<usize>,
    /// Rows seen since the last clear, and the last row that used each id.
    row: u32,
    last_used: Vec<u32>,
    /// Distinct names the current row used.
    row_names: usize,
    /// Whether each name was used by more than one row.
    reused: Vec<bool>,
    /// Names used by one row alone.
    single_row: usize,
    hasher: BytesHasher,
}

impl Dictionary {
    fn len(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    fn name(&self, id: u32) -> &str {
        let id = id as usize;
        let start = if id == 0 {
            0
        } else {
            self.ends[id - 1] as usize
        };
        &self.names[start..self.ends[id] as usize]
    }

    /// The order of two names, by their ids.
    #[inline]
    fn cmp_names(&self, a: u32, b: u32) -> std::cmp::Ordering {
        self.prefixes[a as usize]
            .cmp(&self.prefixes[b as usize])
            .then_with(|| self.name(a).cmp(self.name(b)))
    }

    fn clear(&mut self) {
        if self.ends.is_empty() {
            // Already empty: the metadata written for it (if any) stays
            // valid, which saves rewriting it for every keyless value.
            return;
        }
        self.generation += 1;
        self.written = None;
        self.row = 0;
        self.row_names = 0;
        self.last_used.clear();
        self.reused.clear();
        self.single_row = 0;
        self.names.clear();
        self.ends.clear();
        self.prefixes.clear();
        // Keep the table small so that clearing stays cheap per value.
        if self.slots.len() > 256 {
            self.slots = Vec::new();
        } else {
            self.slots.fill(0);
        }
    }

    /// Starts a row; clears the dictionary when it has grown past
    /// [`KEPT_NAME_BYTES`] and the last row used fewer than half its names,
    /// or when it holds [`CARRIED_NAME_BYTES`] more than the names the
    /// last row used (keys that vary from row to row would otherwise pile
    /// up in every row's metadata).
    fn start_row(&mut self) {
        if (self.names.len() > KEPT_NAME_BYTES
            && (self.len() > 2 * self.row_names + 16
                || (self.names.len() > CARRIED_NAME_BYTES
                    && self.names.len() > self.row_name_bytes() + CARRIED_NAME_BYTES)))
            || (self.single_row > SINGLE_ROW_NAMES
                && 4 * self.single_row > 3 * self.len()
                && self.names.len() > 4 * self.row_name_bytes())
        {
            self.clear();
        }
        self.row += 1;
        self.row_names = 0;
    }

    /// The bytes of the names the last row used (called as the next one
    /// starts): counted only for a dictionary past [`CARRIED_NAME_BYTES`],
    /// not as each key is met.
    fn row_name_bytes(&self) -> usize {
        (0..self.len() as u32)
            .filter(|&id| self.last_used[id as usize] == self.row)
            .map(|id| self.name(id).len())
            .sum()
    }

    #[inline]
    fn touch(&mut self, id: u32) {
        let used = &mut self.last_used[id as usize];
        if *used != self.row {
            if *used != u32::MAX && !self.reused[id as usize] {
                self.reused[id as usize] = true;
                self.single_row -= 1;
            }
            *used = self.row;
            self.row_names += 1;
        }
    }

    #[inline]
    fn intern(&mut self, name: &str) -> u32 {
        let id = self.lookup_or_insert(name);
        self.touch(id);
        id
    }

    #[inline]
    fn lookup_or_insert(&mut self, name: &str) -> u32 {
        if self.slots.len() < 2 * (self.len() + 1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.hasher.hash(name.as_bytes()) as usize & mask;
        loop {
            match self.slots[i] {
                0 => break,
                s if self.name(s - 1) == name => return s - 1,
                _ => i = (i + 1) & mask,
            }
        }
        let id = self.ends.len() as u32;
        self.names.push_str(name);
        self.ends.push(self.names.len() as u32);
        self.prefixes.push(name_prefix(name));
        // Never equal to a row number, so the first touch counts.
        self.last_used.push(u32::MAX);
        self.reused.push(false);
        self.single_row += 1;
        self.slots[i] = id + 1;
        id
    }

    #[cold]
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        self.slots.clear();
        self.slots.resize(size, 0);
        let mask = size - 1;
        for id in 0..self.len() as u32 {
            let mut i = self.hasher.hash(self.name(id).as_bytes()) as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = id + 1;
        }
    }

    fn write_metadata(&self, out: &mut Vec<u8>) {
        let n = self.len();
        let offset_size = width_for(self.names.len().max(n));
        let sorted = (1..n).all(|i| self.cmp_names(i as u32 - 1, i as u32).is_lt());
        out.push(1 | (sorted as u8) << 4 | (offset_size - 1) << 6);
        let start = out.len();
        out.resize(start + (n + 2) * offset_size as usize, 0);
        let w = offset_size as usize;
        write_uint(&mut out[start..], n, offset_size);
        for (i, &end) in self.ends.iter().enumerate() {
            write_uint(&mut out[start + (i + 2) * w..], end as usize, offset_size);
        }
        out.extend_from_slice(self.names.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of each row: objects with `keys(row)` as their keys.
    fn row_metadata(rows: usize, keys: impl Fn(usize) -> Vec<String>) -> Vec<Vec<u8>> {
        let mut builder = VariantBuilder::new();
        (0..rows)
            .map(|row| {
                builder.start_row();
                builder.begin_object();
                for key in keys(row) {
                    builder.key(&key);
                    builder.null();
                }
                builder.end_object().unwrap();
                builder.finish().0.to_vec()
            })
            .collect()
    }

    #[test]
    fn rows_drawing_on_a_few_optional_keys_end_up_sharing_one_metadata() {
        // 40 keys, each row 5 of them: the rule this replaced cleared the
        // dictionary at every row that used less than half of it.
        let metadata = row_metadata(2_000, |row| {
            (0..5)
                .map(|k| format!("key{}", (row * 7 + k * 13) % 40))
                .collect()
        });
        let distinct: std::collections::HashSet<&Vec<u8>> = metadata.iter().collect();
        assert!(distinct.len() <= 40, "{} distinct metadata", distinct.len());
        assert!(metadata[1_000..].windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn keys_that_never_repeat_do_not_pile_up_in_the_metadata() {
        let metadata = row_metadata(2_000, |row| {
            (0..3).map(|k| format!("id{row}-{k}")).collect()
        });
        // Kept, the 6,000 names would take 54 kB.
        let longest = metadata.iter().map(Vec::len).max().unwrap();
        assert!(longest < 2_048, "metadata of {longest} bytes");
    }

    #[test]
    fn a_map_s_keys_are_not_carried_by_the_rows_after_theirs() {
        // Two keys every row uses, and a 12-digit one of its own (a map
        // keyed by ids): carried until the dictionary held 1 kB, each row
        // listed 40 such keys on average.
        let metadata = row_metadata(2_000, |row| {
            vec!["id".into(), "attrs".into(), format!("{:012x}", row * 7919)]
        });
        let mean = metadata.iter().map(Vec::len).sum::<usize>() / metadata.len();
        assert!(mean < 200, "metadata of {mean} bytes a row");
    }

    #[test]
    fn long_keys_that_never_repeat_do_not_pile_up_in_the_metadata() {
        // One distinct 10 kB key a row: too few names for the count to
        // clear the dictionary, which carried 17 rows' keys.
        let metadata = row_metadata(200, |row| vec![format!("{row:05}{}", "k".repeat(10_000))]);
        let longest = metadata.iter().map(Vec::len).max().unwrap();
        assert!(longest < 3 * 10_005 + 64, "metadata of {longest} bytes");
    }

    #[test]
    fn many_names_in_one_object_intern_to_distinct_ids() {
        let mut dictionary = Dictionary::default();
        let names: Vec<String> = (0..100_000).map(|i| format!("k{i:07}")).collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(dictionary.intern(name), i as u32);
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(dictionary.intern(name), i as u32, "{name}");
        }
    }

    proptest::proptest! {
        /// Keys that share their first eight bytes, that are prefixes of
        /// one another, or that hold NUL or non-ASCII bytes sort as their
        /// bytes do: in the object, and in the metadata's sorted flag.
        #[test]
        fn keys_sort_as_their_bytes_do(
            keys in proptest::collection::btree_set("[ab\u{0}\u{e9}]{0,11}", 1..12),
            rotation in 0usize..12,
        ) {
            // Given in sorted order turned by `rotation`, so often unsorted.
            let sorted: Vec<&str> = keys.iter().map(String::as_str).collect();
            let mut given = sorted.clone();
            let turn = rotation % given.len();
            given.rotate_left(turn);
            let mut builder = VariantBuilder::new();
            builder.begin_object();
            for key in &given {
                builder.key(key);
                builder.null();
            }
            builder.end_object().unwrap();
            let (metadata, value) = builder.finish();
            let VariantRef::Object(object) = VariantRef::try_new(metadata, value).unwrap() else {
                panic!("an object");
            };
            let names: Vec<&str> = object.iter().map(|(name, _)| name).collect();
            proptest::prop_assert_eq!(names, sorted);
            let metadata = crate::variant::Metadata::try_new(metadata).unwrap();
            proptest::prop_assert_eq!(metadata.is_sorted(), given.is_sorted());
        }
    }
}
