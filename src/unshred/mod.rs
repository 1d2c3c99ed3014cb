//! Reconstruction: shredded columns back to Variant values or JSON text.
//!
//! [`ShreddedColumn`] checks a Variant column's Arrow layout once (by field
//! names, as the spec asks, so any writer's column order works) and then
//! rebuilds rows: as Variant bytes through a [`VariantBuilder`], or straight
//! to JSON text, merging typed fields and the residual in name order
//! without building a Variant first.
//!
//! Where a file breaks the spec, reconstruction fails with the row and the
//! path: a primitive or array with both `value` and `typed_value`, or a
//! shredded object whose `value` is not an object. One case is read rather
//! than rejected: a partially shredded object whose residual repeats a
//! shredded field (the spec calls the file invalid but lets readers use
//! `typed_value`): the shredded field wins, even when it is missing there,
//! as the spec says readers must use `typed_value` and may assume shredded
//! fields are absent from `value` (parquet-testing cases 43 and 125).

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryBuilder, GenericListArray, OffsetSizeTrait,
    RecordBatch, StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Float32Type, Float64Type,
    Int8Type, Int16Type, Int32Type, Int64Type, Time64MicrosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

mod plain;
use plain::PlainColumn;

use crate::error::{Error, ErrorKind, Result};
use crate::json::{JsonWriter, write_json, write_json_int, write_json_string};
use crate::path::PathSegment;
use crate::variant::{Metadata, PathStep, Scratch, VariantBuilder, VariantDecimal, VariantRef};

/// A Variant column (shredded or not) checked and ready to reconstruct.
pub struct ShreddedColumn<'a> {
    nulls: Option<&'a NullBuffer>,
    /// Absent when a projection left it out: then only rows that need no
    /// decoding can be read.
    metadata: Option<Binaries<'a>>,
    pub(crate) root: SlotReader<'a>,
    /// The last metadata validated, reused while rows repeat it (so rows
    /// with equal metadata get a `Metadata` over the same bytes), and the
    /// first row that had it.
    last_metadata: Cell<Option<(&'a [u8], Metadata<'a>, usize)>>,
    /// What validating the rows' values reuses.
    validation: RefCell<Validation<'a>>,
    /// Renders Variant-encoded values, keeping their keys' JSON text.
    json: RefCell<JsonWriter>,
}

/// What validating the values of a column's rows reuses from row to row.
#[derive(Default)]
struct Validation<'a> {
    /// The names' order ([`Metadata::name_order`]) of an unsorted metadata
    /// that many rows share: values are then validated without comparing
    /// names.
    name_order: Vec<u32>,
    /// Which metadata (by address) `name_order` is of.
    ordered: Option<&'a [u8]>,
    /// The validator's buffers.
    scratch: Scratch,
}

/// A row's metadata, validated only if something in the row needs it.
pub(crate) struct RowMetadata<'c, 'a> {
    column: &'c ShreddedColumn<'a>,
    row: usize,
}

impl<'a> RowMetadata<'_, 'a> {
    pub(crate) fn get(&self) -> Result<Metadata<'a>> {
        self.column.row_metadata(self.row)
    }

    /// How many rows, this one included, the run of consecutive rows that
    /// share `metadata` ([`get`](Self::get)'s) has reached: what says
    /// whether work done once for the metadata pays.
    fn run_length(&self, metadata: &Metadata<'a>) -> usize {
        match self.column.last_metadata.get() {
            Some((last, _, first_row)) if std::ptr::eq(last, metadata.as_bytes()) => {
                self.row.abs_diff(first_row) + 1
            }
            _ => 1,
        }
    }

    /// Validates `value` against `metadata`, which [`get`](Self::get)
    /// returned.
    fn validate(&self, metadata: Metadata<'a>, value: &'a [u8]) -> Result<VariantRef<'a>> {
        self.with_validation(metadata, |name_order, scratch| {
            VariantRef::try_with_name_order(
                metadata,
                value,
                crate::variant::DEFAULT_MAX_DEPTH,
                name_order,
                scratch,
            )
        })
    }

    /// Calls `f` with what validating a value under `metadata`
    /// ([`get`](Self::get)'s) reuses: the names' order, when there is one
    /// worth having, and the validator's buffers.
    fn with_validation<T>(
        &self,
        metadata: Metadata<'a>,
        f: impl FnOnce(Option<&[u32]>, &mut Scratch) -> T,
    ) -> T {
        let bytes = metadata.as_bytes();
        let validation = &mut *self.column.validation.borrow_mut();
        let of_this = |ordered: Option<&[u8]>| ordered.is_some_and(|o| std::ptr::eq(o, bytes));
        // Ordered once enough rows in a run share it to pay for the sort:
        // a row compares about as many names as the dictionary holds, the
        // sort about log2 of that many times more. Runs of a row or two
        // (rows whose key sets vary) are not worth it.
        let pays = self.run_length(&metadata) > metadata.len().max(2).ilog2() as usize + 1;
        if !of_this(validation.ordered) && pays && !metadata.is_sorted() {
            metadata.name_order(&mut validation.name_order);
            validation.ordered = Some(bytes);
        }
        let name_order = of_this(validation.ordered).then_some(&validation.name_order[..]);
        f(name_order, &mut validation.scratch)
    }
}

/// A binary column of any Arrow binary type.
#[derive(Clone, Copy)]
enum Binaries<'a> {
    Binary(&'a BinaryArray),
    Large(&'a arrow::array::LargeBinaryArray),
    View(&'a arrow::array::BinaryViewArray),
}

impl<'a> Binaries<'a> {
    fn new(array: &'a ArrayRef, path: &str) -> Result<Binaries<'a>> {
        Ok(match array.data_type() {
            DataType::Binary => Binaries::Binary(array.as_binary()),
            DataType::LargeBinary => Binaries::Large(array.as_binary()),
            DataType::BinaryView => Binaries::View(array.as_binary_view()),
            other => {
                return Err(layout_error(format!(
                    "{path} must be binary, found {other}"
                )));
            }
        })
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Binaries::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Binaries::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Binaries::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// The readers of one slot: `value` and `typed_value`, either may be absent.
pub(crate) struct SlotReader<'a> {
    path: String,
    value: Option<Binaries<'a>>,
    typed: Option<Typed<'a>>,
}

/// A `typed_value` column: its validity, checked for every row whatever
/// the type, and its reader.
struct Typed<'a> {
    nulls: Option<&'a NullBuffer>,
    reader: TypedReader<'a>,
}

impl<'a> Typed<'a> {
    fn new(array: &'a ArrayRef, path: &str) -> Result<Typed<'a>> {
        Ok(Typed {
            nulls: array.nulls(),
            reader: TypedReader::new(array, path)?,
        })
    }

    #[inline]
    fn is_valid(&self, i: usize) -> bool {
        is_valid(self.nulls, i)
    }
}

enum TypedReader<'a> {
    Boolean(&'a arrow::array::BooleanArray),
    Int8(&'a arrow::array::PrimitiveArray<Int8Type>),
    Int16(&'a arrow::array::PrimitiveArray<Int16Type>),
    Int32(&'a arrow::array::PrimitiveArray<Int32Type>),
    Int64(&'a arrow::array::PrimitiveArray<Int64Type>),
    Float(&'a arrow::array::PrimitiveArray<Float32Type>),
    Double(&'a arrow::array::PrimitiveArray<Float64Type>),
    Decimal32(&'a arrow::array::PrimitiveArray<Decimal32Type>, u8),
    Decimal64(&'a arrow::array::PrimitiveArray<Decimal64Type>, u8),
    Decimal128(&'a arrow::array::PrimitiveArray<Decimal128Type>, u8),
    Date(&'a arrow::array::PrimitiveArray<Date32Type>),
    Time(&'a arrow::array::PrimitiveArray<Time64MicrosecondType>),
    TimestampMicros(
        &'a arrow::array::PrimitiveArray<TimestampMicrosecondType>,
        bool,
    ),
    TimestampNanos(
        &'a arrow::array::PrimitiveArray<TimestampNanosecondType>,
        bool,
    ),
    Binary(Binaries<'a>),
    String(Strings<'a>),
    Uuid(&'a arrow::array::FixedSizeBinaryArray),
    Object(ObjectReader<'a>),
    List(ListReader<'a>),
}

#[derive(Clone, Copy)]
enum Strings<'a> {
    Utf8(&'a arrow::array::StringArray),
    Large(&'a arrow::array::LargeStringArray),
    View(&'a arrow::array::StringViewArray),
}

struct ObjectReader<'a> {
    /// Shredded fields, sorted by name.
    fields: Vec<(FieldName<'a>, SlotReader<'a>)>,
}

/// A field name, with its JSON text made once rather than every row.
struct FieldName<'a> {
    name: &'a str,
    /// `,"name":` (the comma is left out before the first field).
    json: Vec<u8>,
}

impl<'a> FieldName<'a> {
    fn new(name: &'a str) -> FieldName<'a> {
        let mut json = vec![b','];
        write_json_string(&mut json, name);
        json.push(b':');
        FieldName { name, json }
    }

    /// Appends the JSON text of the name, a comma first unless `first`.
    #[inline]
    fn write_json(&self, first: bool, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.json[first as usize..]);
    }
}

struct ListReader<'a> {
    /// Start and end of each row's elements.
    offsets: Offsets<'a>,
    element: Box<SlotReader<'a>>,
}

#[derive(Clone, Copy)]
enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        match self {
            Offsets::Small(o) => o[i] as usize..o[i + 1] as usize,
            Offsets::Large(o) => o[i] as usize..o[i + 1] as usize,
        }
    }
}

#[inline]
fn is_valid(nulls: Option<&NullBuffer>, i: usize) -> bool {
    nulls.is_none_or(|n| n.is_valid(i))
}

impl<'a> ShreddedColumn<'a> {
    /// Checks the layout of a Variant column: `metadata`, and `value`
    /// and/or `typed_value`, found by name, recursively.
    pub fn try_new(column: &'a StructArray) -> Result<ShreddedColumn<'a>> {
        let metadata = column
            .column_by_name("metadata")
            .map(|m| Binaries::new(m, "metadata"))
            .transpose()?;
        Ok(ShreddedColumn {
            nulls: column.nulls(),
            metadata,
            root: SlotReader::new(column, "$".into(), true)?,
            last_metadata: Cell::new(None),
            validation: RefCell::default(),
            json: RefCell::new(JsonWriter::default()),
        })
    }

    /// Whether row `row` has no Variant at all (SQL NULL).
    pub fn is_null(&self, row: usize) -> bool {
        !is_valid(self.nulls, row)
    }

    fn row_metadata(&self, row: usize) -> Result<Metadata<'a>> {
        let column = self
            .metadata
            .as_ref()
            .ok_or_else(|| row_error(row, "$", "the metadata column was not read"))?;
        let bytes = column
            .get(row)
            .ok_or_else(|| row_error(row, "$", "the metadata is null in a present row"))?;
        if let Some((last, metadata, _)) = self.last_metadata.get()
            // The same address first: views of one dictionary entry share it.
            && (std::ptr::eq(last, bytes) || last == bytes)
        {
            return Ok(metadata);
        }
        let metadata = Metadata::try_new(bytes).map_err(|e| e.with_row(row as u64))?;
        self.last_metadata.set(Some((bytes, metadata, row)));
        Ok(metadata)
    }

    /// A finder of `path` in the rows of this column.
    pub(crate) fn finder<'p>(&'p self, path: &'p [PathSegment]) -> PathFinder<'p, 'a> {
        PathFinder {
            column: self,
            path,
            resolved: Cell::new(None),
            steps: RefCell::new(Vec::new()),
            by_name: path.iter().map(PathStep::by_name).collect(),
        }
    }

    pub(crate) fn metadata_of(&self, row: usize) -> RowMetadata<'_, 'a> {
        RowMetadata { column: self, row }
    }

    /// Reconstructs row `row` into `builder` (which must be empty). A null
    /// row writes nothing and returns `false`.
    pub fn write_variant(&self, row: usize, builder: &mut VariantBuilder) -> Result<bool> {
        if self.is_null(row) {
            return Ok(false);
        }
        if !self.root.variant(row, &self.metadata_of(row), builder)? {
            // Present row, nothing stored: the spec says Variant null.
            builder.null();
        }
        Ok(true)
    }

    /// The value of row `row` of an unshredded column (one without
    /// `typed_value`), decoded; `None` for a null or missing row.
    pub fn unshredded_value(&self, row: usize) -> Result<Option<VariantRef<'a>>> {
        if self.is_null(row) {
            return Ok(None);
        }
        match self.root.value_at(row) {
            Some(bytes) => self
                .root
                .decode(row, &self.metadata_of(row), bytes)
                .map(Some),
            None => Ok(None),
        }
    }

    /// Appends row `row` as JSON text to `out`; a null row is `null`.
    pub fn write_json(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        if self.is_null(row) {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        let mut sink = JsonSink {
            out,
            writer: &mut self.json.borrow_mut(),
        };
        if !self.root.write(row, &self.metadata_of(row), &mut sink)? {
            out.extend_from_slice(b"null");
        }
        Ok(())
    }
}

/// Rebuilds a whole column as an unshredded one: `metadata` and `value`
/// binaries (null rows stay null).
///
/// ```
/// use vshred::shred::{Shredder, ShreddingSchema};
/// use vshred::unshred::unshred;
/// use vshred::variant::VariantRef;
/// use arrow::array::{Array, AsArray};
///
/// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?);
/// shredder.append_json(br#"{"a": 1, "b": [true]}"#)?;
/// let unshredded = unshred(&shredder.finish())?;
/// let m = unshredded.column_by_name("metadata").unwrap().as_binary::<i32>().value(0);
/// let v = unshredded.column_by_name("value").unwrap().as_binary::<i32>().value(0);
/// let json = vshred::json::variant_to_json_string(&VariantRef::try_new(m, v)?);
/// assert_eq!(json, r#"{"a":1,"b":[true]}"#);
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn unshred(column: &StructArray) -> Result<StructArray> {
    let reader = ShreddedColumn::try_new(column)?;
    let mut metadata = BinaryBuilder::new();
    let mut value = BinaryBuilder::new();
    let mut builder = VariantBuilder::new();
    for row in 0..column.len() {
        builder.reset();
        if reader.write_variant(row, &mut builder)? {
            let (m, v) = builder.finish();
            metadata.append_value(m);
            value.append_value(v);
        } else {
            metadata.append_value(b"");
            value.append_value(b"");
        }
    }
    let fields = vec![
        arrow::datatypes::Field::new("metadata", DataType::Binary, false),
        arrow::datatypes::Field::new("value", DataType::Binary, false),
    ];
    Ok(StructArray::new(
        fields.into(),
        vec![
            Arc::new(metadata.finish()) as ArrayRef,
            Arc::new(value.finish()) as ArrayRef,
        ],
        column.nulls().cloned(),
    ))
}

impl<'a> SlotReader<'a> {
    /// Reads the `value` and `typed_value` children of `group`.
    fn new(group: &'a StructArray, path: String, top: bool) -> Result<SlotReader<'a>> {
        let value = group
            .column_by_name("value")
            .map(|v| Binaries::new(v, &format!("{path}: value")))
            .transpose()?;
        let typed = group
            .column_by_name("typed_value")
            .map(|t| Typed::new(t, &path))
            .transpose()?;
        if value.is_none() && typed.is_none() && !top {
            return Err(layout_error(format!(
                "{path}: a shredded slot needs `value` or `typed_value`"
            )));
        }
        Ok(SlotReader { path, value, typed })
    }

    #[inline]
    fn typed_valid(&self, i: usize) -> bool {
        self.typed.as_ref().is_some_and(|t| t.is_valid(i))
    }

    fn value_at(&self, i: usize) -> Option<&'a [u8]> {
        self.value.as_ref().and_then(|v| v.get(i))
    }

    fn is_present(&self, i: usize) -> bool {
        self.typed_valid(i) || self.value_at(i).is_some()
    }

    /// Writes the slot's value at `i`; `false` when it is missing.
    pub(crate) fn variant(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        b: &mut VariantBuilder,
    ) -> Result<bool> {
        self.write(i, m, b)
    }

    /// Reconstructs the slot's value at `i` into `sink`; `false` when it is
    /// missing. Object fields come in name order, the shredded ones merged
    /// with the residual's.
    fn write<S: Sink>(&self, i: usize, m: &RowMetadata<'_, 'a>, sink: &mut S) -> Result<bool> {
        let value = self.value_at(i);
        let typed = match &self.typed {
            Some(t) if t.is_valid(i) => &t.reader,
            _ => {
                return match value {
                    Some(bytes) => {
                        sink.encoded(self, i, m, bytes)?;
                        Ok(true)
                    }
                    None => Ok(false),
                };
            }
        };
        match typed {
            TypedReader::Object(object) => {
                let residual = match value {
                    Some(bytes) => Some(self.residual_object(i, m, bytes)?),
                    None => None,
                };
                let residual_len = residual.as_ref().map_or(0, |o| o.len());
                let mut first = true;
                let mut r = 0;
                sink.begin_object();
                for (name, field) in &object.fields {
                    if let Some(res) = &residual {
                        while r < residual_len && res.field_name(r) < name.name {
                            sink.key(std::mem::take(&mut first), res.field_name(r));
                            sink.value(&res.field(r))?;
                            r += 1;
                        }
                        if r < residual_len && res.field_name(r) == name.name {
                            r += 1; // the shredded field wins, even when missing
                        }
                    }
                    if field.is_present(i) {
                        sink.field_name(std::mem::take(&mut first), name);
                        field.write(i, m, sink)?;
                    }
                }
                if let Some(res) = &residual {
                    for r in r..residual_len {
                        sink.key(std::mem::take(&mut first), res.field_name(r));
                        sink.value(&res.field(r))?;
                    }
                }
                sink.end_object().map_err(|e| e.with_row(i as u64))?;
            }
            TypedReader::List(list) => {
                self.no_conflict(i, value)?;
                sink.begin_array();
                for (k, e) in list.offsets.range(i).enumerate() {
                    sink.element(k == 0);
                    if !list.element.write(e, m, sink)? {
                        sink.value(&VariantRef::Null)?;
                    }
                }
                sink.end_array()?;
            }
            primitive => {
                self.no_conflict(i, value)?;
                sink.typed(primitive, i)?;
            }
        }
        Ok(true)
    }

    pub(crate) fn decode(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<VariantRef<'a>> {
        let metadata = m.get()?;
        self.value_context(i, m.validate(metadata, bytes))
    }

    /// `result` of reading this slot's `value` at `i`, an error naming the
    /// slot and the row.
    fn value_context<T>(&self, i: usize, result: Result<T>) -> Result<T> {
        result.map_err(|e| {
            Error::new(
                ErrorKind::InvalidVariant,
                format!("{}: value: {e}", self.path),
            )
            .with_row(i as u64)
        })
    }

    /// The residual of a partially shredded object, which must be an object.
    fn residual_object(
        &self,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<crate::variant::ObjectRef<'a>> {
        self.decode(i, m, bytes)?.as_object().ok_or_else(|| {
            row_error(
                i,
                &self.path,
                "non-object value with shredded fields (typed_value is an object)",
            )
        })
    }

    fn no_conflict(&self, i: usize, value: Option<&[u8]>) -> Result<()> {
        match value {
            Some(_) => Err(row_error(
                i,
                &self.path,
                "conflicting value and typed_value (both are set)",
            )),
            None => Ok(()),
        }
    }
}

impl<'a> ObjectReader<'a> {
    fn field(&self, name: &str) -> Option<&SlotReader<'a>> {
        self.fields
            .binary_search_by(|(n, _)| n.name.cmp(name))
            .ok()
            .map(|k| &self.fields[k].1)
    }
}

/// A primitive Arrow column read as Variant scalars: for rendering typed
/// results as JSON, comparing them, aggregating them.
pub struct ScalarColumn<'a> {
    typed: Typed<'a>,
}

impl<'a> ScalarColumn<'a> {
    /// Fails for types that have no Variant equivalent, and for nested ones.
    pub fn try_new(array: &'a ArrayRef) -> Result<ScalarColumn<'a>> {
        match Typed::new(array, "$")? {
            Typed {
                reader: TypedReader::Object(_) | TypedReader::List(_),
                ..
            } => Err(layout_error(format!(
                "{} is not a primitive type",
                array.data_type()
            ))),
            typed => Ok(ScalarColumn { typed }),
        }
    }

    /// Row `i` as a Variant scalar; `None` when null.
    pub fn get(&self, i: usize) -> Result<Option<VariantRef<'a>>> {
        if self.typed.is_valid(i) {
            self.typed.reader.scalar(i).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Appends row `i` as JSON, as [`write_json`] renders
    /// [`get`](Self::get)'s value; `null` when null.
    pub fn write_json(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        if self.typed.is_valid(i) {
            self.typed.reader.write_json(i, out)
        } else {
            out.extend_from_slice(b"null");
            Ok(())
        }
    }
}

/// The rows of a record batch as JSON objects, every column by name:
/// Variant columns reconstructed, ordinary columns as JSON (primitives as
/// their Variant equivalents, structs as objects, lists as arrays).
pub struct JsonRows<'a> {
    names: Vec<FieldName<'a>>,
    renderers: Vec<Renderer<'a>>,
}

enum Renderer<'a> {
    Variant(Box<ShreddedColumn<'a>>),
    Plain(PlainColumn<'a>),
}

impl<'a> JsonRows<'a> {
    /// Checks the columns of `batch`; those named in `variants` are Variant
    /// columns.
    pub fn try_new(batch: &'a RecordBatch, variants: &[String]) -> Result<JsonRows<'a>> {
        let mut names = Vec::with_capacity(batch.num_columns());
        let mut renderers = Vec::with_capacity(batch.num_columns());
        for (field, array) in batch.schema_ref().fields().iter().zip(batch.columns()) {
            let renderer = if variants.contains(field.name()) {
                let column = array.as_struct_opt().ok_or_else(|| {
                    layout_error(format!("Variant column {} is not a struct", field.name()))
                })?;
                Renderer::Variant(Box::new(ShreddedColumn::try_new(column)?))
            } else {
                Renderer::Plain(PlainColumn::new(array))
            };
            names.push(FieldName::new(field.name()));
            renderers.push(renderer);
        }
        Ok(JsonRows { names, renderers })
    }

    /// Appends row `row` to `out` as one JSON object (no newline).
    pub fn write_row(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        out.push(b'{');
        for (i, (name, renderer)) in self.names.iter().zip(&self.renderers).enumerate() {
            name.write_json(i == 0, out);
            match renderer {
                Renderer::Variant(c) => c.write_json(row, out)?,
                Renderer::Plain(c) => c.write_json(row, out)?,
            }
        }
        out.push(b'}');
        Ok(())
    }
}

/// Where a reconstructed value goes: a Variant builder or JSON text. The
/// walk in [`SlotReader::write`] is the same for both.
trait Sink {
    /// A whole value, already a Variant.
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()>;
    /// The Variant-encoded `value` of `slot` at `i`, not yet validated.
    fn encoded<'a>(
        &mut self,
        slot: &SlotReader<'a>,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<()> {
        self.value(&slot.decode(i, m, bytes)?)
    }
    /// The primitive at `i` of a typed column (known valid).
    fn typed(&mut self, typed: &TypedReader<'_>, i: usize) -> Result<()> {
        self.value(&typed.scalar(i)?)
    }
    fn begin_object(&mut self);
    /// The next field's name; `first` for the object's first field.
    fn key(&mut self, first: bool, name: &str);
    /// The same for a shredded field.
    fn field_name(&mut self, first: bool, name: &FieldName<'_>) {
        self.key(first, name.name)
    }
    fn end_object(&mut self) -> Result<()>;
    fn begin_array(&mut self);
    /// Before each element; `first` for the array's first.
    fn element(&mut self, first: bool);
    fn end_array(&mut self) -> Result<()>;
}

impl Sink for VariantBuilder {
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()> {
        self.append(v)
    }

    fn begin_object(&mut self) {
        VariantBuilder::begin_object(self)
    }

    fn key(&mut self, _first: bool, name: &str) {
        VariantBuilder::key(self, name)
    }

    fn end_object(&mut self) -> Result<()> {
        VariantBuilder::end_object(self)
    }

    fn begin_array(&mut self) {
        VariantBuilder::begin_array(self)
    }

    fn element(&mut self, _first: bool) {}

    fn end_array(&mut self) -> Result<()> {
        VariantBuilder::end_array(self)
    }
}

/// Compact JSON text, as [`write_json`] renders values.
struct JsonSink<'o> {
    out: &'o mut Vec<u8>,
    writer: &'o mut JsonWriter,
}

impl Sink for JsonSink<'_> {
    fn value(&mut self, v: &VariantRef<'_>) -> Result<()> {
        self.writer.write_json(v, self.out);
        Ok(())
    }

    /// Validated and rendered in one pass over the bytes.
    fn encoded<'a>(
        &mut self,
        slot: &SlotReader<'a>,
        i: usize,
        m: &RowMetadata<'_, 'a>,
        bytes: &'a [u8],
    ) -> Result<()> {
        let metadata = m.get()?;
        let written = m.with_validation(metadata, |name_order, scratch| {
            self.writer
                .validate_and_write(metadata, bytes, name_order, scratch, self.out)
        });
        slot.value_context(i, written)
    }

    fn typed(&mut self, typed: &TypedReader<'_>, i: usize) -> Result<()> {
        typed.write_json(i, self.out)
    }

    fn begin_object(&mut self) {
        self.out.push(b'{');
    }

    fn key(&mut self, first: bool, name: &str) {
        if !first {
            self.out.push(b',');
        }
        write_json_string(self.out, name);
        self.out.push(b':');
    }

    fn field_name(&mut self, first: bool, name: &FieldName<'_>) {
        name.write_json(first, self.out)
    }

    fn end_object(&mut self) -> Result<()> {
        self.out.push(b'}');
        Ok(())
    }

    fn begin_array(&mut self) {
        self.out.push(b'[');
    }

    fn element(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
    }

    fn end_array(&mut self) -> Result<()> {
        self.out.push(b']');
        Ok(())
    }
}

/// Finds one path in many rows of a column. Where the path enters a
/// Variant-encoded value, objects are searched by name (a binary search
/// of their fields) until a run of rows sharing one metadata is long
/// enough to pay for resolving the path's names to key ids (a scan of the
/// dictionary); from then on objects are searched by id, comparing no
/// names: rows that share metadata are the usual case.
pub(crate) struct PathFinder<'p, 'a> {
    column: &'p ShreddedColumn<'a>,
    path: &'p [PathSegment],
    /// The metadata `steps` were resolved against. Equal metadata in
    /// consecutive rows comes back over the same bytes
    /// ([`ShreddedColumn::row_metadata`]), and bytes borrowed for `'a`
    /// cannot change, so the address says whether to resolve again.
    resolved: Cell<Option<&'a [u8]>>,
    steps: RefCell<Vec<PathStep>>,
    /// The path's steps by name.
    by_name: Vec<PathStep>,
}

impl<'p, 'a> PathFinder<'p, 'a> {
    /// Where the path leads in row `row` (which must not be null).
    #[inline]
    pub(crate) fn find(&self, row: usize, m: &RowMetadata<'_, 'a>) -> Result<Found<'p, 'a>> {
        self.column.root.find(row, self, 0, m)
    }

    /// The bytes of the sub-value at the path's steps from `depth` on,
    /// inside `value`.
    #[inline]
    fn in_value(
        &self,
        m: &RowMetadata<'_, 'a>,
        metadata: Metadata<'a>,
        value: &'a [u8],
        depth: usize,
    ) -> Result<Option<&'a [u8]>> {
        let bytes = metadata.as_bytes();
        let mut resolved = self.steps.borrow_mut();
        // Resolving scans the dictionary once per name; a search by name
        // costs about log2 of its size comparisons per row.
        let n = metadata.len().max(2);
        let steps = if self.resolved.get().is_some_and(|r| std::ptr::eq(r, bytes)) {
            &resolved[..]
        } else if m.run_length(&metadata) < n / n.ilog2() as usize {
            &self.by_name[..]
        } else {
            metadata.resolve(self.path, &mut resolved);
            self.resolved.set(Some(bytes));
            &resolved[..]
        };
        VariantRef::try_at_path(
            metadata,
            value,
            &steps[depth..],
            crate::variant::DEFAULT_MAX_DEPTH,
        )
    }
}

/// Where a path leads in one row.
pub(crate) enum Found<'s, 'a> {
    /// Nothing there.
    Missing,
    /// A shredded slot, at this index of its arrays.
    Slot(&'s SlotReader<'a>, usize),
    /// A value inside a Variant-encoded residual: its bytes, validated,
    /// under the row's metadata ([`decode`](crate::variant::decode) reads
    /// them).
    Value(&'a [u8]),
}

impl<'a> SlotReader<'a> {
    /// Follows the finder's path from step `depth` on, from this slot at
    /// index `i`: through shredded objects and lists while they go, then
    /// into the Variant-encoded value.
    fn find<'s>(
        &'s self,
        i: usize,
        finder: &PathFinder<'_, 'a>,
        depth: usize,
        m: &RowMetadata<'_, 'a>,
    ) -> Result<Found<'s, 'a>> {
        let Some(first) = finder.path.get(depth) else {
            return Ok(if self.is_present(i) {
                Found::Slot(self, i)
            } else {
                Found::Missing
            });
        };
        let typed = self.typed.as_ref().filter(|t| t.is_valid(i));
        match (typed.map(|t| &t.reader), first) {
            (Some(TypedReader::Object(object)), PathSegment::Field(name)) => {
                if let Some(field) = object.field(name) {
                    return field.find(i, finder, depth + 1, m);
                }
            }
            (Some(TypedReader::List(list)), PathSegment::Index(k)) => {
                let range = list.offsets.range(i);
                return if *k < range.len() {
                    list.element.find(range.start + k, finder, depth + 1, m)
                } else {
                    Ok(Found::Missing)
                };
            }
            _ if typed.is_some() => return Ok(Found::Missing),
            _ => {}
        }
        // Not shredded along this step: the residual value holds it, if
        // anything; only the path through it is checked.
        let Some(bytes) = self.value_at(i) else {
            return Ok(Found::Missing);
        };
        let found = self.value_context(i, finder.in_value(m, m.get()?, bytes, depth))?;
        Ok(found.map_or(Found::Missing, Found::Value))
    }

    /// The primitive `typed_value` at `i`, if valid and not a container.
    pub(crate) fn typed_scalar(&self, i: usize) -> Result<Option<VariantRef<'a>>> {
        match &self.typed {
            Some(Typed {
                reader: TypedReader::Object(_) | TypedReader::List(_),
                ..
            })
            | None => Ok(None),
            Some(t) if t.is_valid(i) => t.reader.scalar(i).map(Some),
            Some(_) => Ok(None),
        }
    }
}

impl<'a> TypedReader<'a> {
    fn new(array: &'a ArrayRef, path: &str) -> Result<TypedReader<'a>> {
        Ok(match array.data_type() {
            DataType::Boolean => TypedReader::Boolean(array.as_boolean()),
            DataType::Int8 => TypedReader::Int8(array.as_primitive()),
            DataType::Int16 => TypedReader::Int16(array.as_primitive()),
            DataType::Int32 => TypedReader::Int32(array.as_primitive()),
            DataType::Int64 => TypedReader::Int64(array.as_primitive()),
            DataType::Float32 => TypedReader::Float(array.as_primitive()),
            DataType::Float64 => TypedReader::Double(array.as_primitive()),
            DataType::Decimal32(_, s) => {
                TypedReader::Decimal32(array.as_primitive(), scale(*s, path)?)
            }
            DataType::Decimal64(_, s) => {
                TypedReader::Decimal64(array.as_primitive(), scale(*s, path)?)
            }
            DataType::Decimal128(p, s) if *p <= 38 => {
                TypedReader::Decimal128(array.as_primitive(), scale(*s, path)?)
            }
            DataType::Date32 => TypedReader::Date(array.as_primitive()),
            DataType::Time64(TimeUnit::Microsecond) => TypedReader::Time(array.as_primitive()),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                TypedReader::TimestampMicros(array.as_primitive(), tz.is_some())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
                TypedReader::TimestampNanos(array.as_primitive(), tz.is_some())
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
                TypedReader::Binary(Binaries::new(array, path)?)
            }
            DataType::Utf8 => TypedReader::String(Strings::Utf8(array.as_string())),
            DataType::LargeUtf8 => TypedReader::String(Strings::Large(array.as_string())),
            DataType::Utf8View => TypedReader::String(Strings::View(array.as_string_view())),
            DataType::FixedSizeBinary(16) => TypedReader::Uuid(array.as_fixed_size_binary()),
            DataType::Struct(_) => {
                let group = array.as_struct();
                let mut fields = Vec::with_capacity(group.num_columns());
                for (field, child) in group.fields().iter().zip(group.columns()) {
                    let child_path = format!("{path}.{}", field.name());
                    let DataType::Struct(_) = child.data_type() else {
                        return Err(layout_error(format!(
                            "{child_path}: a shredded field must be a group of value/typed_value, found {}",
                            child.data_type()
                        )));
                    };
                    fields.push((
                        FieldName::new(field.name()),
                        SlotReader::new(child.as_struct(), child_path, false)?,
                    ));
                }
                fields.sort_by(|a, b| a.0.name.cmp(b.0.name));
                if let Some(w) = fields.windows(2).find(|w| w[0].0.name == w[1].0.name) {
                    return Err(layout_error(format!(
                        "{path}: field {:?} appears twice",
                        w[0].0.name
                    )));
                }
                TypedReader::Object(ObjectReader { fields })
            }
            DataType::List(_) => list_reader(array.as_list::<i32>(), path, |l| {
                Offsets::Small(l.value_offsets())
            })?,
            DataType::LargeList(_) => list_reader(array.as_list::<i64>(), path, |l| {
                Offsets::Large(l.value_offsets())
            })?,
            other => {
                return Err(layout_error(format!(
                    "{path}: unsupported shredded value type {other}"
                )));
            }
        })
    }

    /// Appends the primitive at `i` (known valid) as JSON: the text
    /// [`write_json`] gives for [`scalar`](Self::scalar), the commonest
    /// types written without making the Variant value first.
    fn write_json(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        match self {
            TypedReader::Int32(a) => write_json_int(out, a.value(i).into()),
            TypedReader::Int64(a) => write_json_int(out, a.value(i)),
            TypedReader::Decimal64(a, scale) => {
                VariantDecimal::try_new(a.value(i).into(), *scale)?.write_to(out)
            }
            TypedReader::Decimal128(a, scale) => {
                VariantDecimal::try_new(a.value(i), *scale)?.write_to(out)
            }
            TypedReader::String(Strings::Utf8(a)) => write_json_string(out, a.value(i)),
            other => write_json(&other.scalar(i)?, out),
        }
        Ok(())
    }

    /// The primitive at `i` (known valid) as a Variant value.
    fn scalar(&self, i: usize) -> Result<VariantRef<'a>> {
        let decimal = |unscaled: i128, scale: u8| VariantDecimal::try_new(unscaled, scale);
        Ok(match self {
            TypedReader::Boolean(a) => VariantRef::Bool(a.value(i)),
            TypedReader::Int8(a) => VariantRef::Int8(a.value(i)),
            TypedReader::Int16(a) => VariantRef::Int16(a.value(i)),
            TypedReader::Int32(a) => VariantRef::Int32(a.value(i)),
            TypedReader::Int64(a) => VariantRef::Int64(a.value(i)),
            TypedReader::Float(a) => VariantRef::Float(a.value(i)),
            TypedReader::Double(a) => VariantRef::Double(a.value(i)),
            TypedReader::Decimal32(a, s) => VariantRef::Decimal4(decimal(a.value(i) as i128, *s)?),
            TypedReader::Decimal64(a, s) => VariantRef::Decimal8(decimal(a.value(i) as i128, *s)?),
            TypedReader::Decimal128(a, s) => {
                let d = decimal(a.value(i), *s)?;
                // Keep the narrowest decimal type that holds it.
                match d.required_precision() {
                    0..=9 => VariantRef::Decimal4(d),
                    10..=18 => VariantRef::Decimal8(d),
                    _ => VariantRef::Decimal16(d),
                }
            }
            TypedReader::Date(a) => VariantRef::Date(a.value(i)),
            TypedReader::Time(a) => VariantRef::TimeNtzMicros(a.value(i)),
            TypedReader::TimestampMicros(a, true) => VariantRef::TimestampMicros(a.value(i)),
            TypedReader::TimestampMicros(a, false) => VariantRef::TimestampNtzMicros(a.value(i)),
            TypedReader::TimestampNanos(a, true) => VariantRef::TimestampNanos(a.value(i)),
            TypedReader::TimestampNanos(a, false) => VariantRef::TimestampNtzNanos(a.value(i)),
            TypedReader::Binary(b) => VariantRef::Binary(b.get(i).unwrap_or_default()),
            TypedReader::String(Strings::Utf8(a)) => VariantRef::String(a.value(i)),
            TypedReader::String(Strings::Large(a)) => VariantRef::String(a.value(i)),
            TypedReader::String(Strings::View(a)) => VariantRef::String(a.value(i)),
            TypedReader::Uuid(a) => {
                let mut u = [0u8; 16];
                u.copy_from_slice(a.value(i));
                VariantRef::Uuid(u)
            }
            TypedReader::Object(_) | TypedReader::List(_) => {
                unreachable!("containers are not scalars")
            }
        })
    }
}

fn scale(s: i8, path: &str) -> Result<u8> {
    u8::try_from(s)
        .ok()
        .filter(|&s| s <= 38)
        .ok_or_else(|| layout_error(format!("{path}: decimal scale {s} is outside 0..=38")))
}

fn list_reader<'a, O: OffsetSizeTrait>(
    list: &'a GenericListArray<O>,
    path: &str,
    offsets: impl FnOnce(&'a GenericListArray<O>) -> Offsets<'a>,
) -> Result<TypedReader<'a>> {
    let element_path = format!("{path}[]");
    let DataType::Struct(_) = list.values().data_type() else {
        return Err(layout_error(format!(
            "{element_path}: a shredded element must be a group of value/typed_value, found {}",
            list.values().data_type()
        )));
    };
    Ok(TypedReader::List(ListReader {
        offsets: offsets(list),
        element: Box::new(SlotReader::new(
            list.values().as_struct(),
            element_path,
            false,
        )?),
    }))
}

#[cold]
fn layout_error(message: String) -> Error {
    Error::new(ErrorKind::Schema, message)
}

#[cold]
fn row_error(row: usize, path: &str, message: &str) -> Error {
    Error::new(ErrorKind::InvalidVariant, format!("{path}: {message}")).with_row(row as u64)
}
