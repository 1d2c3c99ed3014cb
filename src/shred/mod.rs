//! Shredding: splitting Variant values into the typed columns of a
//! [`ShreddingSchema`] and a Variant-encoded residual, as
//! `VariantShredding.md` lays them out.
//!
//! A [`Shredder`] builds the Arrow columns of one Variant column a batch at
//! a time, from Variant values ([`Shredder::append_variant`]) or straight
//! from JSON text ([`Shredder::append_json`]): there, typed fields go from
//! the parser into their typed builders and only the residual is
//! Variant-encoded.
//!
//! ```
//! use arrow::array::{Array, AsArray};
//! use arrow::datatypes::Int64Type;
//! use vshred::shred::{Shredder, ShreddingSchema};
//!
//! let schema: ShreddingSchema = r#"{"id":"int64"}"#.parse()?;
//! let mut shredder = Shredder::new(&schema);
//! shredder.append_json(br#"{"id": 1, "tag": "a"}"#)?;
//! shredder.append_json(br#"{"id": "two"}"#)?;
//! let column = shredder.finish();
//! let typed = column.column_by_name("typed_value").unwrap().as_struct();
//! let id = typed.column_by_name("id").unwrap().as_struct();
//! let id_typed = id.column_by_name("typed_value").unwrap().as_primitive::<Int64Type>();
//! assert_eq!(id_typed.value(0), 1);
//! assert!(id_typed.is_null(1)); // "two" is not an int64: it went to id.value
//! # Ok::<(), vshred::Error>(())
//! ```

mod cast;
mod schema;

use std::sync::Arc;

use arrow::array::{
    ArrayRef as ArrowArrayRef, BinaryArray, BinaryBuilder, BooleanBuilder, Date32Builder,
    Decimal128Builder, FixedSizeBinaryBuilder, Float32Builder, Float64Builder, Int8Builder,
    Int16Builder, Int32Builder, Int64Builder, ListArray, NullBufferBuilder, StringBuilder,
    StructArray, Time64MicrosecondBuilder, TimestampMicrosecondBuilder, TimestampNanosecondBuilder,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields};

pub(crate) use cast::cast_as;
pub use schema::{
    ShreddingSchema, VARIANT_EXTENSION_NAME, check_variant_shape, is_shreddable_name,
    is_variant_field, variant_field,
};

use crate::error::Result;
use crate::json::{InexactNumbers, JsonNumber, JsonParser, JsonReader, Peek};
use crate::variant::{
    DEFAULT_MAX_DEPTH, DuplicateKeys, Metadata, ObjectRef, VariantBuilder, VariantRef,
    write_object_without,
};

/// How [`parse_json_column`] reads its texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseJsonOptions {
    /// Text that is not JSON is an error naming its row; otherwise null.
    pub strict: bool,
    /// What a number that no decimal holds becomes.
    pub inexact_numbers: InexactNumbers,
    /// What an object with a key given twice becomes.
    pub duplicate_keys: DuplicateKeys,
}

/// Whether arrays of `data_type` hold texts, as JSON arrives in: strings or
/// binaries, of any offset width or view.
pub fn is_text_type(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

/// The Variant of each JSON text of `text` (a string array of any of
/// Arrow's three kinds), as one unshredded Variant column; null for null.
/// What is not JSON, or breaks `options` (a number no decimal holds, a key
/// given twice), is an error naming its row, or null unless strict.
///
/// ```
/// use arrow::array::{Array, StringArray};
/// use vshred::json::InexactNumbers;
/// use vshred::shred::{ParseJsonOptions, parse_json_column};
/// use vshred::variant::DuplicateKeys;
///
/// let text = StringArray::from(vec![r#"{"a":1}"#, r#"{"a":1,"a":2}"#, "x"]);
/// let mut options = ParseJsonOptions {
///     strict: true,
///     inexact_numbers: InexactNumbers::Error,
///     duplicate_keys: DuplicateKeys::Error,
/// };
/// let err = parse_json_column(&text, options).unwrap_err();
/// assert_eq!((err.kind(), err.row()), (vshred::ErrorKind::DuplicateKey, Some(1)));
/// options.strict = false;
/// assert_eq!(parse_json_column(&text, options)?.null_count(), 2);
/// options.duplicate_keys = DuplicateKeys::KeepLast;
/// assert_eq!(parse_json_column(&text, options)?.null_count(), 1);
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn parse_json_column(
    text: &dyn arrow::array::Array,
    options: ParseJsonOptions,
) -> Result<StructArray> {
    use arrow::array::{Array, AsArray};
    // Other types would be cast to text, and numbers so read back as
    // decimals (the double 0.1 as 0.1, -0.0 as 0.0).
    let texts = match text.data_type() {
        DataType::Dictionary(_, values) => is_text_type(values),
        t => is_text_type(t) || *t == DataType::Null,
    };
    if !texts {
        return Err(crate::error::Error::from_message(format!(
            "parse_json takes JSON texts (strings or binaries), not {}",
            text.data_type()
        )));
    }
    let utf8 = arrow::compute::cast(text, &DataType::Utf8View)
        .map_err(|e| crate::error::Error::from_message(format!("parse_json takes strings: {e}")))?;
    // Binary that is not UTF-8 casts to null: an error when strict, as
    // text that is not JSON is.
    if options.strict && utf8.logical_null_count() > text.logical_null_count() {
        let given_nulls = text.logical_nulls();
        if let Some(row) = (0..text.len())
            .find(|&i| utf8.is_null(i) && !given_nulls.as_ref().is_some_and(|n| n.is_null(i)))
        {
            return Err(
                crate::error::Error::new(crate::error::ErrorKind::Json, "not UTF-8 text")
                    .with_row(row as u64),
            );
        }
    }
    let text = utf8.as_string_view();
    let mut shredder = Shredder::new(&ShreddingSchema::Variant)
        .with_inexact_numbers(options.inexact_numbers)
        .with_duplicate_keys(options.duplicate_keys);
    // A row that fails empties the shredder of the rows appended before it
    // (`append_json`). Without `strict`, the first bad text costs those
    // rows one more parse; from then on each text is first checked by the
    // parser, which accepts what the shredder accepts, so no other row is
    // lost: each row is parsed at most twice.
    let mut check: Option<(JsonParser, VariantBuilder)> = None;
    for row in 0..text.len() {
        if text.is_null(row) {
            shredder.append_null();
            continue;
        }
        let json = text.value(row).as_bytes();
        if let Some((parser, builder)) = &mut check {
            builder.reset();
            if parser.parse(json, builder).is_err() {
                shredder.append_null();
                continue;
            }
        }
        let Err(e) = shredder.append_json_text(json) else {
            continue;
        };
        if options.strict || check.is_some() {
            // The row is the array's; a query engine's batches number
            // theirs from 0, so the text itself says which it is.
            return Err(e
                .with_row(row as u64)
                .with_note(&text_excerpt(text.value(row))));
        }
        for earlier in 0..row {
            match text.is_null(earlier) {
                true => shredder.append_null(),
                false => shredder.append_json_text(text.value(earlier).as_bytes())?,
            }
        }
        shredder.append_null();
        check = Some((
            JsonParser::new().with_inexact_numbers(options.inexact_numbers),
            VariantBuilder::new().with_duplicate_keys(options.duplicate_keys),
        ));
    }
    Ok(shredder.finish())
}

/// The first characters of a text that is not JSON, for its error.
#[cold]
fn text_excerpt(text: &str) -> String {
    const SHOWN: usize = 60;
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("the text: {:?}...", &text[..end]),
        None => format!("the text: {text:?}"),
    }
}

/// Which values may go into a typed column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShredPolicy {
    /// Only values that read back with the same type and JSON text: integers
    /// into integer columns they fit, decimals into decimal columns of the
    /// same scale, timestamps of the same unit. Everything else stays in
    /// `value`.
    #[default]
    Faithful,
    /// Any value of the same equivalence class that converts without loss,
    /// as Spark does: an integer into a decimal column, a decimal `1.5` into
    /// `decimal(18,2)` (reads back as `1.50`), micros into nanos.
    Lossless,
}

/// How a value may convert to a typed column's type: the two shredding
/// policies, and the wider casts of `variant_get`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conversion {
    /// See [`ShredPolicy::Faithful`].
    Faithful,
    /// See [`ShredPolicy::Lossless`].
    Lossless,
    /// As Spark's `variant_get` converts (see the `cast` module): strings
    /// to numbers and back, numbers rounded or truncated to fit, and more.
    Cast,
}

impl From<ShredPolicy> for Conversion {
    fn from(policy: ShredPolicy) -> Conversion {
        match policy {
            ShredPolicy::Faithful => Conversion::Faithful,
            ShredPolicy::Lossless => Conversion::Lossless,
        }
    }
}

/// Builds the shredded Arrow columns of one Variant column.
#[derive(Debug)]
pub struct Shredder {
    policy: ShredPolicy,
    max_depth: usize,
    metadata: BinaryBuilder,
    root: SlotBuilder,
    /// Row validity: a missing Variant (SQL NULL) is a null row.
    rows: NullBufferBuilder,
    builder: VariantBuilder,
    parser: JsonParser,
    /// Whether JSON rows are parsed whole before they are shredded: with
    /// [`DuplicateKeys::KeepLast`], where a typed value already appended
    /// could not be taken back when its key comes again.
    parse_whole: bool,
    /// Numbers of JSON rows stored as inexact doubles.
    inexact_numbers: u64,
    /// The names every batch's metadata dictionary starts with
    /// ([`with_names`](Self::with_names)).
    names: Arc<[String]>,
}

impl Shredder {
    /// A shredder for `schema` with the [`ShredPolicy::Faithful`] policy.
    pub fn new(schema: &ShreddingSchema) -> Shredder {
        Shredder {
            policy: ShredPolicy::default(),
            max_depth: DEFAULT_MAX_DEPTH,
            metadata: BinaryBuilder::new(),
            root: SlotBuilder::new(schema),
            rows: NullBufferBuilder::new(0),
            builder: VariantBuilder::new(),
            parser: JsonParser::new(),
            parse_whole: false,
            inexact_numbers: 0,
            names: Arc::from([]),
        }
    }

    /// Sets the names that the metadata of each batch (the rows until
    /// [`finish`](Self::finish)) starts with, in this order, before the
    /// names its rows bring. Residual values then refer to a name by the
    /// same id in every batch, and a batch's bytes depend on its rows
    /// alone: not on which batches the same shredder built before, which
    /// differ with the number of threads sharing the batches out.
    /// [`names`](Self::names) gives those of batches shredded already.
    ///
    /// ```
    /// use arrow::array::AsArray;
    /// use vshred::shred::{Shredder, ShreddingSchema};
    ///
    /// let schema = ShreddingSchema::Variant;
    /// let mut first = Shredder::new(&schema);
    /// first.append_json(br#"{"b":1,"a":2}"#)?;
    /// let names = first.names();
    /// assert_eq!(names, ["b", "a"]);
    /// // The metadata of a batch of one row.
    /// let metadata = |shredder: &mut Shredder, row: &[u8]| -> vshred::Result<Vec<u8>> {
    ///     shredder.append_json(row)?;
    ///     Ok(shredder.finish().column(0).as_binary::<i32>().value(0).to_vec())
    /// };
    /// let mut one = Shredder::new(&schema).with_names(names.clone());
    /// let mut other = Shredder::new(&schema).with_names(names);
    /// metadata(&mut other, br#"{"z":0}"#)?;
    /// // Whatever batches came before, the same bytes.
    /// assert_eq!(metadata(&mut one, br#"{"a":3}"#)?, metadata(&mut other, br#"{"a":3}"#)?);
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn with_names(mut self, names: impl Into<Arc<[String]>>) -> Shredder {
        self.names = names.into();
        self.builder.start_batch(&self.names);
        self
    }

    /// The names in the shredder's metadata dictionary now, in id order:
    /// those of [`with_names`](Self::with_names), then those the rows of
    /// the batch in progress brought.
    pub fn names(&self) -> Vec<String> {
        self.builder.names()
    }

    /// Sets which values may go into typed columns.
    pub fn with_policy(mut self, policy: ShredPolicy) -> Shredder {
        self.policy = policy;
        self
    }

    /// Sets what becomes of JSON numbers that no decimal holds
    /// ([`InexactNumbers`]; an error by default).
    pub fn with_inexact_numbers(mut self, inexact: InexactNumbers) -> Shredder {
        self.parser = self.parser.with_inexact_numbers(inexact);
        self
    }

    /// Sets what a JSON object with a key given twice does: an error (the
    /// default), or keep the last value. Keeping the last parses each JSON
    /// row whole before shredding it, which is slower.
    ///
    /// ```
    /// use vshred::shred::{Shredder, ShreddingSchema};
    /// use vshred::unshred::ShreddedColumn;
    /// use vshred::variant::DuplicateKeys;
    ///
    /// let schema: ShreddingSchema = r#"{"a":"int64"}"#.parse()?;
    /// let row = br#"{"a": 1, "a": 2}"#;
    /// assert!(Shredder::new(&schema).append_json(row).is_err());
    /// let mut shredder = Shredder::new(&schema).with_duplicate_keys(DuplicateKeys::KeepLast);
    /// shredder.append_json(row)?;
    /// let column = shredder.finish();
    /// let mut json = Vec::new();
    /// ShreddedColumn::try_new(&column)?.write_json(0, &mut json)?;
    /// assert_eq!(json, br#"{"a":2}"#);
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn with_duplicate_keys(mut self, policy: DuplicateKeys) -> Shredder {
        self.builder = VariantBuilder::new().with_duplicate_keys(policy);
        self.builder.start_batch(&self.names);
        self.parse_whole = policy == DuplicateKeys::KeepLast;
        self
    }

    /// How many numbers of the JSON rows appended so far were stored as
    /// inexact doubles (see [`with_inexact_numbers`](Self::with_inexact_numbers)).
    pub fn inexact_numbers(&self) -> u64 {
        self.inexact_numbers
    }

    /// The number of rows appended since the last [`finish`](Self::finish).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was appended since the last [`finish`](Self::finish).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends a missing Variant (a null row).
    pub fn append_null(&mut self) {
        self.metadata.append_value(b"");
        self.root.append_missing();
        self.rows.append_null();
    }

    /// Appends one Variant given as metadata and value bytes, validating
    /// them first. The output keeps this metadata, so residual values are
    /// copied, not re-encoded.
    pub fn append_variant(&mut self, metadata: &[u8], value: &[u8]) -> Result<()> {
        let m = Metadata::try_new(metadata)?;
        let v = VariantRef::try_with_metadata(m, value, self.max_depth)?;
        self.metadata.append_value(metadata);
        self.root.append_variant(&v, value, self.policy);
        self.rows.append_non_null();
        Ok(())
    }

    /// Appends one JSON value, streamed from the text into the typed
    /// builders; only what does not fit them is Variant-encoded.
    ///
    /// A row cannot be taken back out of the builders, so after an error
    /// (its position is within `text`) every row appended since the last
    /// [`finish`](Self::finish) is discarded, and the shredder is empty.
    ///
    /// ```
    /// use arrow::array::Array;
    /// use vshred::shred::{Shredder, ShreddingSchema};
    ///
    /// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?);
    /// shredder.append_json(br#"{"a":1}"#)?;
    /// let e = shredder.append_json(br#"{"a":2"#).unwrap_err();
    /// assert!(e.to_string().ends_with("; the row appended before it was discarded with it"), "{e}");
    /// assert!(shredder.is_empty());
    /// shredder.append_json(br#"{"a":3}"#)?;
    /// assert_eq!(shredder.finish().len(), 1);
    ///
    /// // The same when the last of duplicate keys is kept.
    /// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?)
    ///     .with_duplicate_keys(vshred::variant::DuplicateKeys::KeepLast);
    /// shredder.append_json(br#"{"a":1,"a":4}"#)?;
    /// assert!(shredder.append_json(br#"{"a":2"#).is_err());
    /// assert!(shredder.is_empty());
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn append_json(&mut self, text: &[u8]) -> Result<()> {
        let before = self.len();
        self.append_json_text(text).map_err(|e| match before {
            0 => e,
            1 => e.with_note("the row appended before it was discarded with it"),
            n => e.with_note(&format!(
                "the {n} rows appended before it were discarded with it"
            )),
        })
    }

    /// [`append_json`](Self::append_json), the error not saying what was
    /// discarded (for a caller that appends the rows again).
    pub(crate) fn append_json_text(&mut self, text: &[u8]) -> Result<()> {
        if self.parse_whole {
            // Nothing of the row is appended before it has parsed; the rows
            // before are discarded all the same, as documented.
            return self.append_parsed(text).inspect_err(|_| self.discard());
        }
        let mut reader = self.parser.reader(text);
        self.append_json_value(&mut reader)?;
        reader.finish().inspect_err(|_| self.discard())?;
        self.inexact_numbers += u64::from(reader.inexact_count());
        Ok(())
    }

    /// Parses `text` whole (the last of duplicate keys kept) and appends
    /// its Variant.
    fn append_parsed(&mut self, text: &[u8]) -> Result<()> {
        self.builder.start_row();
        let inexact = self.parser.parse(text, &mut self.builder)?;
        let (metadata, value) = self.builder.finish();
        let v = VariantRef::try_new(metadata, value)?;
        self.metadata.append_value(metadata);
        self.root.append_variant(&v, value, self.policy);
        self.rows.append_non_null();
        self.inexact_numbers += u64::from(inexact);
        Ok(())
    }

    /// Appends the reader's next JSON value as one row (a field of a larger
    /// JSON object, say); after an error, as [`append_json`](Self::append_json).
    /// Inexact numbers are counted by the reader.
    pub(crate) fn append_json_value(&mut self, reader: &mut JsonReader<'_>) -> Result<()> {
        self.builder.start_row();
        let mut ctx = JsonContext {
            reader,
            builder: &mut self.builder,
            parser: &self.parser,
            policy: self.policy,
            max_depth: self.max_depth,
        };
        if let Err(e) = self.root.append_json(&mut ctx, 0) {
            self.discard();
            return Err(e);
        }
        self.metadata.append_value(self.builder.write_metadata());
        self.rows.append_non_null();
        Ok(())
    }

    /// Drops every row since the last `finish`, a partial one included.
    fn discard(&mut self) {
        self.metadata = BinaryBuilder::new();
        self.root = SlotBuilder::new(&self.root.schema.clone());
        self.rows = NullBufferBuilder::new(0);
    }

    /// The column built so far, as a `StructArray` of `metadata`, `value`
    /// and `typed_value` (see [`ShreddingSchema::column_type`]); the
    /// shredder is then empty and ready for the next batch, whose metadata
    /// dictionary starts again from the names of
    /// [`with_names`](Self::with_names).
    pub fn finish(&mut self) -> StructArray {
        let DataType::Struct(fields) = self.root.schema.column_type() else {
            unreachable!("a column type is a struct")
        };
        let mut columns: Vec<ArrowArrayRef> = vec![Arc::new(self.metadata.finish())];
        columns.extend(self.root.finish());
        self.builder.start_batch(&self.names);
        let nulls = self.rows.finish();
        StructArray::new(fields, columns, nulls)
    }
}

struct JsonContext<'r, 't> {
    reader: &'r mut JsonReader<'t>,
    builder: &'r mut VariantBuilder,
    parser: &'r JsonParser,
    policy: ShredPolicy,
    max_depth: usize,
}

impl JsonContext<'_, '_> {
    /// Encodes the next JSON value as a standalone residual and appends it.
    fn residual(&mut self, value: &mut ValueBuilder, depth: usize) -> Result<()> {
        self.builder.begin_detached();
        self.parser.parse_value(self.reader, self.builder, depth)?;
        self.builder.end_detached(|bytes| value.append_value(bytes));
        Ok(())
    }
}

/// A slot's `value` column. Where values shred it is mostly null, so its
/// nulls are appended a run at a time: one by one, they took 5% of the
/// CPU time of encoding 1M event rows.
#[derive(Debug, Default)]
struct ValueBuilder {
    bytes: BinaryBuilder,
    /// Nulls not yet appended to `bytes`.
    nulls: usize,
}

impl ValueBuilder {
    fn append_null(&mut self) {
        self.nulls += 1;
    }

    fn append_nulls(&mut self, n: usize) {
        self.nulls += n;
    }

    fn append_value(&mut self, value: &[u8]) {
        self.flush_nulls();
        self.bytes.append_value(value);
    }

    /// Appends the nulls counted so far.
    fn flush_nulls(&mut self) {
        if self.nulls > 0 {
            self.bytes.append_nulls(self.nulls);
            self.nulls = 0;
        }
    }

    fn finish(&mut self) -> BinaryArray {
        self.flush_nulls();
        self.bytes.finish()
    }
}

/// The builders of one slot: `value`, and `typed_value` when typed.
#[derive(Debug)]
pub(crate) struct SlotBuilder {
    schema: ShreddingSchema,
    value: ValueBuilder,
    typed: Option<TypedBuilder>,
    /// Rows since the last value that lacked this field, not yet appended:
    /// most fields of heterogeneous rows are missing from most rows, and
    /// appended one by one (through every field of a missing object) their
    /// nulls took 4% of the instructions of encoding event rows.
    missing: usize,
}

#[derive(Debug)]
pub(crate) enum TypedBuilder {
    Boolean(BooleanBuilder),
    Int8(Int8Builder),
    Int16(Int16Builder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float(Float32Builder),
    Double(Float64Builder),
    Decimal(Decimal128Builder, u8, u8),
    Date(Date32Builder),
    Time(Time64MicrosecondBuilder),
    TimestampMicros(TimestampMicrosecondBuilder, bool),
    TimestampNanos(TimestampNanosecondBuilder, bool),
    Binary(BinaryBuilder),
    String(StringBuilder),
    Uuid(FixedSizeBinaryBuilder),
    Object(ObjectBuilder),
    Array(ArrayBuilder),
}

#[derive(Debug)]
pub(crate) struct ObjectBuilder {
    /// The fields' names, sorted as the schema lists them, and a table
    /// to find each.
    names: FieldTable,
    fields: Vec<SlotBuilder>,
    validity: NullBufferBuilder,
    /// Which fields the object being shredded had; reused.
    seen: Vec<bool>,
    /// Each field's dictionary id, with the dictionary generation it is
    /// valid for: known names are not hashed again row after row.
    ids: Vec<(u64, u32)>,
    /// The field that followed each field in the last object that had
    /// it, and at `fields.len()` the first field: rows of one kind write
    /// their keys in one order, so the next key is guessed and compared
    /// with the text as it stands, without reading it as a string.
    follows: Vec<usize>,
}

/// An object's fields by name: an open-addressing table of field indices,
/// keyed by the name's length and first and last bytes, so that a key
/// costs one comparison. A binary search, after a cache of the field at
/// each key position of the last object (which missed wherever rows of
/// different kinds differ), took 4% of the CPU time of encoding 1M event
/// rows, most of it comparing names.
#[derive(Debug)]
struct FieldTable {
    names: Vec<String>,
    /// Each name as JSON writes it, quotes included; empty for a name
    /// JSON must escape (its quote, backslash or control character).
    quoted: Vec<Vec<u8>>,
    /// Indices into `names`, `u32::MAX` where empty; at most half are
    /// used.
    slots: Vec<u32>,
}

impl FieldTable {
    fn new(names: Vec<String>) -> FieldTable {
        let mut slots = vec![u32::MAX; (2 * names.len()).next_power_of_two().max(8)];
        let mask = slots.len() - 1;
        for (i, name) in names.iter().enumerate() {
            let mut slot = signature(name) & mask;
            while slots[slot] != u32::MAX {
                slot = (slot + 1) & mask;
            }
            slots[slot] = i as u32;
        }
        let quoted = names
            .iter()
            .map(|name| {
                if name.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
                    Vec::new()
                } else {
                    [b"\"", name.as_bytes(), b"\""].concat()
                }
            })
            .collect();
        FieldTable {
            names,
            quoted,
            slots,
        }
    }

    /// The index of field `key`.
    #[inline]
    fn find(&self, key: &str) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut slot = signature(key) & mask;
        loop {
            let i = *self.slots.get(slot)?;
            if i == u32::MAX {
                return None;
            }
            if self.names.get(i as usize).is_some_and(|name| name == key) {
                return Some(i as usize);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// A hash of a name's length and first and last bytes.
#[inline]
fn signature(name: &str) -> usize {
    let bytes = name.as_bytes();
    let first = bytes.first().map_or(0, |&b| b as usize);
    let last = bytes.last().map_or(0, |&b| b as usize);
    (bytes.len().wrapping_mul(0x9e37_79b9) ^ first.wrapping_mul(0x85eb_ca6b) ^ last)
        .wrapping_mul(0x27d4_eb2f)
        >> 7
}

#[derive(Debug)]
pub(crate) struct ArrayBuilder {
    offsets: Vec<i32>,
    element: Box<SlotBuilder>,
    validity: NullBufferBuilder,
}

impl SlotBuilder {
    fn new(schema: &ShreddingSchema) -> SlotBuilder {
        let typed = TypedBuilder::new(schema);
        SlotBuilder {
            schema: schema.clone(),
            value: ValueBuilder::default(),
            typed,
            missing: 0,
        }
    }

    /// Neither `value` nor `typed_value`: a field the object does not have.
    fn append_missing(&mut self) {
        self.missing += 1;
    }

    /// Appends the missing rows counted so far; before anything else is.
    #[inline]
    fn flush_missing(&mut self) {
        if self.missing > 0 {
            let n = std::mem::take(&mut self.missing);
            self.value.append_nulls(n);
            if let Some(typed) = &mut self.typed {
                typed.append_nulls(n);
            }
        }
    }

    /// Shreds a Variant whose encoded bytes are `bytes`.
    fn append_variant(&mut self, v: &VariantRef<'_>, bytes: &[u8], policy: ShredPolicy) {
        self.flush_missing();
        let Some(typed) = &mut self.typed else {
            self.value.append_value(bytes);
            return;
        };
        match (typed, v) {
            (TypedBuilder::Object(object), VariantRef::Object(o)) => {
                object.append_object(o, policy, &mut self.value);
            }
            (TypedBuilder::Array(array), VariantRef::Array(a)) => {
                for i in 0..a.len() {
                    let element = a.element_bytes(i);
                    let value = a.get(i).unwrap_or(VariantRef::Null);
                    array.element.append_variant(&value, element, policy);
                }
                array.close(a.len());
                self.value.append_null();
            }
            (typed, v) => {
                if typed.try_append(v, policy.into()) {
                    self.value.append_null();
                } else {
                    typed.append_null();
                    self.value.append_value(bytes);
                }
            }
        }
    }

    /// Shreds the next JSON value of the reader.
    fn append_json(&mut self, ctx: &mut JsonContext<'_, '_>, depth: usize) -> Result<()> {
        self.flush_missing();
        let Some(typed) = &mut self.typed else {
            return ctx.residual(&mut self.value, depth);
        };
        let peek = ctx.reader.peek()?;
        match (typed, peek) {
            (TypedBuilder::Object(object), Peek::Object) => {
                ctx.reader.check_depth(depth, ctx.max_depth)?;
                object.append_json_object(ctx, &mut self.value, depth)
            }
            (TypedBuilder::Array(array), Peek::Array) => {
                ctx.reader.check_depth(depth, ctx.max_depth)?;
                let mut len = 0;
                let mut more = ctx.reader.first_element()?;
                while more {
                    array.element.append_json(ctx, depth + 1)?;
                    len += 1;
                    more = ctx.reader.next_element()?;
                }
                array.close(len);
                self.value.append_null();
                Ok(())
            }
            (typed, Peek::Object | Peek::Array) => {
                typed.append_null();
                ctx.residual(&mut self.value, depth)
            }
            (typed, _) => {
                let number;
                let scalar = match peek {
                    Peek::Null => {
                        ctx.reader.literal(b"null")?;
                        VariantRef::Null
                    }
                    Peek::True => {
                        ctx.reader.literal(b"true")?;
                        VariantRef::Bool(true)
                    }
                    Peek::False => {
                        ctx.reader.literal(b"false")?;
                        VariantRef::Bool(false)
                    }
                    Peek::Number => {
                        number = ctx.reader.number()?;
                        match number {
                            JsonNumber::Int(v) => VariantRef::Int64(v),
                            JsonNumber::Decimal(d) => VariantRef::Decimal16(d),
                            JsonNumber::Double(v) => VariantRef::Double(v),
                        }
                    }
                    _ => VariantRef::String(ctx.reader.string()?),
                };
                if typed.try_append(&scalar, ctx.policy.into()) {
                    self.value.append_null();
                } else {
                    typed.append_null();
                    let b = &mut *ctx.builder;
                    b.begin_detached();
                    match scalar {
                        // Numbers take their smallest encoding, as in JsonParser.
                        VariantRef::Int64(v) => b.int(v),
                        VariantRef::Decimal16(d) => b.decimal(d),
                        other => b.append(&other)?,
                    }
                    b.end_detached(|bytes| self.value.append_value(bytes));
                }
                Ok(())
            }
        }
    }

    /// The `value` and, when typed, `typed_value` arrays.
    fn finish(&mut self) -> Vec<ArrowArrayRef> {
        self.flush_missing();
        let mut arrays: Vec<ArrowArrayRef> = vec![Arc::new(self.value.finish())];
        if let Some(typed) = &mut self.typed {
            arrays.push(typed.finish(&self.schema));
        }
        arrays
    }
}

impl ObjectBuilder {
    /// Shreds an object: schema fields into their slots, the others into a
    /// residual object in `value` (null when there are none).
    fn append_object(&mut self, o: &ObjectRef<'_>, policy: ShredPolicy, value: &mut ValueBuilder) {
        self.validity.append_non_null();
        // Both sides are sorted by name: walk them together.
        let mut shredded = 0usize;
        let mut i = 0;
        for (slot, name) in self.fields.iter_mut().zip(&self.names.names) {
            while i < o.len() && o.field_name(i) < name.as_str() {
                i += 1;
            }
            if i < o.len() && o.field_name(i) == name {
                slot.append_variant(&o.field(i), o.field_bytes(i), policy);
                shredded += 1;
                i += 1;
            } else {
                slot.append_missing();
            }
        }
        if shredded == o.len() {
            value.append_null();
        } else {
            let names = &self.names;
            let mut out = Vec::new();
            write_object_without(o, |i| names.find(o.field_name(i)).is_some(), &mut out);
            value.append_value(&out);
        }
    }

    fn append_json_object(
        &mut self,
        ctx: &mut JsonContext<'_, '_>,
        value: &mut ValueBuilder,
        depth: usize,
    ) -> Result<()> {
        self.validity.append_non_null();
        self.seen.fill(false);
        let start = ctx.reader.position();
        let mut residual_open = false;
        let mut last = self.fields.len();
        let mut more = ctx.reader.open_object()?;
        while more {
            let guess = self.follows[last];
            let found = match self.names.quoted.get(guess) {
                Some(quoted) if !quoted.is_empty() && ctx.reader.key_if(quoted)? => Some(guess),
                _ => {
                    let k = ctx.reader.key()?;
                    match self.names.find(k) {
                        Some(i) => Some(i),
                        None => {
                            if !residual_open {
                                ctx.builder.begin_detached();
                                ctx.builder.begin_object();
                                residual_open = true;
                            }
                            ctx.builder.key(k);
                            ctx.parser.parse_value(ctx.reader, ctx.builder, depth + 1)?;
                            None
                        }
                    }
                }
            };
            if let Some(i) = found {
                let name = &self.names.names[i];
                if self.seen[i] {
                    return Err(ctx.reader.duplicate_key_at(ctx.reader.position(), name));
                }
                self.seen[i] = true;
                self.follows[last] = i;
                last = i;
                let generation = ctx.builder.generation();
                match self.ids[i] {
                    (g, id) if g == generation => ctx.builder.touch(id),
                    _ => self.ids[i] = (generation, ctx.builder.intern(name)),
                }
                self.fields[i].append_json(ctx, depth + 1)?;
            }
            more = ctx.reader.next_field()?;
        }
        for (slot, seen) in self.fields.iter_mut().zip(&self.seen) {
            if !seen {
                slot.append_missing();
            }
        }
        if residual_open {
            ctx.builder.end_object().map_err(|e| {
                crate::json::duplicate_key_error(ctx.reader, start, depth, ctx.max_depth, e)
            })?;
            ctx.builder.end_detached(|bytes| value.append_value(bytes));
        } else {
            value.append_null();
        }
        Ok(())
    }
}

impl ArrayBuilder {
    fn close(&mut self, len: usize) {
        let last = *self.offsets.last().unwrap_or(&0);
        self.offsets.push(last + len as i32);
        self.validity.append_non_null();
    }
}

impl TypedBuilder {
    /// The builder of a `typed_value` of this layout; `None` for Variant.
    pub(crate) fn new(schema: &ShreddingSchema) -> Option<TypedBuilder> {
        use ShreddingSchema as S;
        match schema {
            S::Variant => None,
            S::Boolean => Some(TypedBuilder::Boolean(BooleanBuilder::new())),
            S::Int8 => Some(TypedBuilder::Int8(Int8Builder::new())),
            S::Int16 => Some(TypedBuilder::Int16(Int16Builder::new())),
            S::Int32 => Some(TypedBuilder::Int32(Int32Builder::new())),
            S::Int64 => Some(TypedBuilder::Int64(Int64Builder::new())),
            S::Float => Some(TypedBuilder::Float(Float32Builder::new())),
            S::Double => Some(TypedBuilder::Double(Float64Builder::new())),
            S::Decimal { precision, scale } => Some(TypedBuilder::Decimal(
                Decimal128Builder::new(),
                *precision,
                *scale,
            )),
            S::Date => Some(TypedBuilder::Date(Date32Builder::new())),
            S::Time => Some(TypedBuilder::Time(Time64MicrosecondBuilder::new())),
            S::Timestamp { utc, nanos: false } => Some(TypedBuilder::TimestampMicros(
                TimestampMicrosecondBuilder::new(),
                *utc,
            )),
            S::Timestamp { utc, nanos: true } => Some(TypedBuilder::TimestampNanos(
                TimestampNanosecondBuilder::new(),
                *utc,
            )),
            S::Binary => Some(TypedBuilder::Binary(BinaryBuilder::new())),
            S::String => Some(TypedBuilder::String(StringBuilder::new())),
            S::Uuid => Some(TypedBuilder::Uuid(FixedSizeBinaryBuilder::new(16))),
            S::Object(fields) => {
                let names = fields.iter().map(|(n, _)| n.clone()).collect();
                Some(TypedBuilder::Object(ObjectBuilder {
                    names: FieldTable::new(names),
                    fields: fields.iter().map(|(_, f)| SlotBuilder::new(f)).collect(),
                    validity: NullBufferBuilder::new(0),
                    seen: vec![false; fields.len()],
                    ids: vec![(u64::MAX, 0); fields.len()],
                    follows: vec![0; fields.len() + 1],
                }))
            }
            S::Array(element) => Some(TypedBuilder::Array(ArrayBuilder {
                offsets: vec![0],
                element: Box::new(SlotBuilder::new(element)),
                validity: NullBufferBuilder::new(0),
            })),
        }
    }

    pub(crate) fn append_null(&mut self) {
        self.append_nulls(1);
    }

    fn append_nulls(&mut self, n: usize) {
        match self {
            TypedBuilder::Boolean(b) => b.append_nulls(n),
            TypedBuilder::Int8(b) => b.append_nulls(n),
            TypedBuilder::Int16(b) => b.append_nulls(n),
            TypedBuilder::Int32(b) => b.append_nulls(n),
            TypedBuilder::Int64(b) => b.append_nulls(n),
            TypedBuilder::Float(b) => b.append_nulls(n),
            TypedBuilder::Double(b) => b.append_nulls(n),
            TypedBuilder::Decimal(b, ..) => b.append_nulls(n),
            TypedBuilder::Date(b) => b.append_nulls(n),
            TypedBuilder::Time(b) => b.append_nulls(n),
            TypedBuilder::TimestampMicros(b, _) => b.append_nulls(n),
            TypedBuilder::TimestampNanos(b, _) => b.append_nulls(n),
            TypedBuilder::Binary(b) => b.append_nulls(n),
            TypedBuilder::String(b) => b.append_nulls(n),
            TypedBuilder::Uuid(b) => b.append_nulls(n),
            TypedBuilder::Object(o) => {
                o.validity.append_n_nulls(n);
                o.fields.iter_mut().for_each(|f| f.missing += n);
            }
            TypedBuilder::Array(a) => {
                let last = *a.offsets.last().unwrap_or(&0);
                a.offsets.extend(std::iter::repeat_n(last, n));
                a.validity.append_n_nulls(n);
            }
        }
    }

    /// Appends `v` if the conversion lets it into this typed column.
    pub(crate) fn try_append(&mut self, v: &VariantRef<'_>, conversion: Conversion) -> bool {
        if conversion == Conversion::Cast {
            return self.append_cast(v);
        }
        let faithful = conversion == Conversion::Faithful;
        // Integers of any width; under Lossless also whole decimals.
        let int = || match v {
            VariantRef::Int8(_)
            | VariantRef::Int16(_)
            | VariantRef::Int32(_)
            | VariantRef::Int64(_) => v.as_i64(),
            _ if faithful => None,
            _ => v.as_i64(),
        };
        macro_rules! put {
            ($b:expr, $x:expr) => {
                match $x {
                    Some(x) => {
                        $b.append_value(x);
                        true
                    }
                    None => false,
                }
            };
        }
        match self {
            TypedBuilder::Boolean(b) => put!(b, v.as_bool()),
            TypedBuilder::Int8(b) => put!(b, int().and_then(|x| i8::try_from(x).ok())),
            TypedBuilder::Int16(b) => put!(b, int().and_then(|x| i16::try_from(x).ok())),
            TypedBuilder::Int32(b) => put!(b, int().and_then(|x| i32::try_from(x).ok())),
            TypedBuilder::Int64(b) => put!(b, int()),
            TypedBuilder::Float(b) => match v {
                VariantRef::Float(x) => put!(b, Some(*x)),
                _ => false,
            },
            TypedBuilder::Double(b) => match v {
                VariantRef::Double(x) => put!(b, Some(*x)),
                _ => false,
            },
            TypedBuilder::Decimal(b, precision, scale) => {
                let d = match v {
                    VariantRef::Decimal4(d)
                    | VariantRef::Decimal8(d)
                    | VariantRef::Decimal16(d)
                        if faithful =>
                    {
                        (d.scale() == *scale).then_some(*d)
                    }
                    _ if faithful => None,
                    _ => v.as_decimal().and_then(|d| d.rescale(*scale)),
                };
                put!(
                    b,
                    d.filter(|d| d.precision() <= *precision)
                        .map(|d| d.unscaled())
                )
            }
            TypedBuilder::Date(b) => put!(b, v.as_date()),
            TypedBuilder::Time(b) => put!(b, v.as_time_micros()),
            TypedBuilder::TimestampMicros(b, utc) => put!(
                b,
                match (v, *utc) {
                    (VariantRef::TimestampMicros(t), true)
                    | (VariantRef::TimestampNtzMicros(t), false) => Some(*t),
                    _ if faithful => None,
                    (_, true) => v.as_timestamp_micros(),
                    (_, false) => v.as_timestamp_ntz_micros(),
                }
            ),
            TypedBuilder::TimestampNanos(b, utc) => put!(
                b,
                match (v, *utc) {
                    (VariantRef::TimestampNanos(t), true)
                    | (VariantRef::TimestampNtzNanos(t), false) => Some(*t),
                    _ if faithful => None,
                    (_, true) => v.as_timestamp_nanos(),
                    (_, false) => v.as_timestamp_ntz_nanos(),
                }
            ),
            TypedBuilder::Binary(b) => put!(b, v.as_binary()),
            TypedBuilder::String(b) => put!(b, v.as_str()),
            TypedBuilder::Uuid(b) => match v.as_uuid() {
                Some(u) => b.append_value(u).is_ok(),
                None => false,
            },
            TypedBuilder::Object(_) | TypedBuilder::Array(_) => false,
        }
    }

    pub(crate) fn finish(&mut self, schema: &ShreddingSchema) -> ArrowArrayRef {
        match self {
            TypedBuilder::Boolean(b) => Arc::new(b.finish()),
            TypedBuilder::Int8(b) => Arc::new(b.finish()),
            TypedBuilder::Int16(b) => Arc::new(b.finish()),
            TypedBuilder::Int32(b) => Arc::new(b.finish()),
            TypedBuilder::Int64(b) => Arc::new(b.finish()),
            TypedBuilder::Float(b) => Arc::new(b.finish()),
            TypedBuilder::Double(b) => Arc::new(b.finish()),
            TypedBuilder::Decimal(b, precision, scale) => Arc::new(
                b.finish()
                    .with_precision_and_scale(*precision, *scale as i8)
                    .expect("precision and scale were checked by ShreddingSchema"),
            ),
            TypedBuilder::Date(b) => Arc::new(b.finish()),
            TypedBuilder::Time(b) => Arc::new(b.finish()),
            TypedBuilder::TimestampMicros(b, utc) => {
                Arc::new(b.finish().with_timezone_opt(utc.then_some("UTC")))
            }
            TypedBuilder::TimestampNanos(b, utc) => {
                Arc::new(b.finish().with_timezone_opt(utc.then_some("UTC")))
            }
            TypedBuilder::Binary(b) => Arc::new(b.finish()),
            TypedBuilder::String(b) => Arc::new(b.finish()),
            TypedBuilder::Uuid(b) => Arc::new(b.finish()),
            TypedBuilder::Object(o) => {
                let ShreddingSchema::Object(field_schemas) = schema else {
                    unreachable!("an object builder has an object schema")
                };
                let fields: Fields = field_schemas
                    .iter()
                    .map(|(name, f)| Field::new(name, DataType::Struct(f.slot_fields()), false))
                    .collect();
                let children: Vec<ArrowArrayRef> = o
                    .fields
                    .iter_mut()
                    .zip(field_schemas)
                    .map(|(slot, (_, f))| {
                        let arrays = slot.finish();
                        Arc::new(StructArray::new(f.slot_fields(), arrays, None)) as ArrowArrayRef
                    })
                    .collect();
                Arc::new(StructArray::new(fields, children, o.validity.finish()))
            }
            TypedBuilder::Array(a) => {
                let ShreddingSchema::Array(element) = schema else {
                    unreachable!("an array builder has an array schema")
                };
                let values = StructArray::new(element.slot_fields(), a.element.finish(), None);
                let offsets = OffsetBuffer::new(std::mem::replace(&mut a.offsets, vec![0]).into());
                let nulls: Option<NullBuffer> = a.validity.finish();
                Arc::new(ListArray::new(
                    Arc::new(Field::new(
                        "element",
                        DataType::Struct(element.slot_fields()),
                        false,
                    )),
                    offsets,
                    Arc::new(values),
                    nulls,
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FieldTable;

    #[test]
    fn the_field_table_finds_names_that_share_a_signature_and_no_others() {
        // Same length, first and last bytes: one signature, one probe run.
        let mut names: Vec<String> = ["axb", "ayb", "azb", "", "b", "a_long_name"]
            .map(String::from)
            .to_vec();
        names.extend((0..40).map(|i| format!("field{i}")));
        names.sort();
        let table = FieldTable::new(names.clone());
        for (i, name) in names.iter().enumerate() {
            assert_eq!(table.find(name), Some(i), "{name:?}");
        }
        for missing in ["awb", "ax", "field40", "c", "a_long_namE"] {
            assert_eq!(table.find(missing), None, "{missing:?}");
        }
    }
}
