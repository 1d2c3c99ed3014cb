//! Column access: a Variant column's Arrow layout checked once
//! ([`ShreddedColumn`], [`SlotReader`] per slot), its rows' metadata
//! validated once per distinct value and cached, typed columns read as
//! Variant scalars ([`ScalarColumn`]).

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, GenericListArray, OffsetSizeTrait, StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    DataType, Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Float32Type, Float64Type,
    Int8Type, Int16Type, Int32Type, Int64Type, Time64MicrosecondType, TimeUnit,
    TimestampMicrosecondType, TimestampNanosecondType,
};
use std::cell::{Cell, RefCell};

use crate::error::{Error, ErrorKind, Result};
use crate::json::{JsonWriter, write_json, write_json_int, write_json_string};
use crate::variant::{Metadata, Scratch, VariantDecimal, VariantRef};

/// A Variant column (shredded or not) checked and ready to reconstruct.
pub struct ShreddedColumn<'a> {
    pub(super) nulls: Option<&'a NullBuffer>,
    /// Absent when a projection left it out: then only rows that need no
    /// decoding can be read.
    pub(super) metadata: Option<Binaries<'a>>,
    pub(crate) root: SlotReader<'a>,
    /// The last metadata validated, reused while rows repeat it (so rows
    /// with equal metadata get a `Metadata` over the same bytes), and the
    /// first row that had it.
    pub(super) last_metadata: Cell<Option<(&'a [u8], Metadata<'a>, usize)>>,
    /// What validating the rows' values reuses.
    pub(super) validation: RefCell<Validation<'a>>,
    /// Renders Variant-encoded values, keeping their keys' JSON text.
    pub(super) json: RefCell<JsonWriter>,
}

/// What validating the values of a column's rows reuses from row to row.
#[derive(Default)]
pub(super) struct Validation<'a> {
    /// The names' order ([`Metadata::name_order`]) of an unsorted metadata
    /// that many rows share: values are then validated without comparing
    /// names.
    pub(super) name_order: Vec<u32>,
    /// Which metadata (by address) `name_order` is of.
    pub(super) ordered: Option<&'a [u8]>,
    /// The validator's buffers.
    pub(super) scratch: Scratch,
}

/// A row's metadata, validated only if something in the row needs it.
pub(crate) struct RowMetadata<'c, 'a> {
    pub(super) column: &'c ShreddedColumn<'a>,
    pub(super) row: usize,
}

impl<'a> RowMetadata<'_, 'a> {
    pub(crate) fn get(&self) -> Result<Metadata<'a>> {
        self.column.row_metadata(self.row)
    }

    /// How many rows, this one included, the run of consecutive rows that
    /// share `metadata` ([`get`](Self::get)'s) has reached: what says
    /// whether work done once for the metadata pays.
    pub(super) fn run_length(&self, metadata: &Metadata<'a>) -> usize {
        match self.column.last_metadata.get() {
            Some((last, _, first_row)) if std::ptr::eq(last, metadata.as_bytes()) => {
                self.row.abs_diff(first_row) + 1
            }
            _ => 1,
        }
    }

    /// Validates `value` against `metadata`, which [`get`](Self::get)
    /// returned.
    pub(super) fn validate(
        &self,
        metadata: Metadata<'a>,
        value: &'a [u8],
    ) -> Result<VariantRef<'a>> {
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
    pub(super) fn with_validation<T>(
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
pub(super) enum Binaries<'a> {
    Binary(&'a BinaryArray),
    Large(&'a arrow::array::LargeBinaryArray),
    View(&'a arrow::array::BinaryViewArray),
}

impl<'a> Binaries<'a> {
    pub(super) fn new(array: &'a ArrayRef, path: &str) -> Result<Binaries<'a>> {
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
    pub(super) fn get(&self, i: usize) -> Option<&'a [u8]> {
        match self {
            Binaries::Binary(a) => a.is_valid(i).then(|| a.value(i)),
            Binaries::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Binaries::View(a) => a.is_valid(i).then(|| a.value(i)),
        }
    }
}

/// The readers of one slot: `value` and `typed_value`, either may be absent.
pub(crate) struct SlotReader<'a> {
    pub(super) path: String,
    pub(super) value: Option<Binaries<'a>>,
    pub(super) typed: Option<Typed<'a>>,
}

/// A `typed_value` column: its validity, checked for every row whatever
/// the type, and its reader.
pub(super) struct Typed<'a> {
    pub(super) nulls: Option<&'a NullBuffer>,
    pub(super) reader: TypedReader<'a>,
}

impl<'a> Typed<'a> {
    pub(super) fn new(array: &'a ArrayRef, path: &str) -> Result<Typed<'a>> {
        Ok(Typed {
            nulls: array.nulls(),
            reader: TypedReader::new(array, path)?,
        })
    }

    #[inline]
    pub(super) fn is_valid(&self, i: usize) -> bool {
        is_valid(self.nulls, i)
    }
}

pub(super) enum TypedReader<'a> {
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
pub(super) enum Strings<'a> {
    Utf8(&'a arrow::array::StringArray),
    Large(&'a arrow::array::LargeStringArray),
    View(&'a arrow::array::StringViewArray),
}

pub(super) struct ObjectReader<'a> {
    /// Shredded fields, sorted by name.
    pub(super) fields: Vec<(FieldName<'a>, SlotReader<'a>)>,
}

/// A field name, with its JSON text made once rather than every row.
pub(super) struct FieldName<'a> {
    pub(super) name: &'a str,
    /// `,"name":` (the comma is left out before the first field).
    pub(super) json: Vec<u8>,
}

impl<'a> FieldName<'a> {
    pub(super) fn new(name: &'a str) -> FieldName<'a> {
        let mut json = vec![b','];
        write_json_string(&mut json, name);
        json.push(b':');
        FieldName { name, json }
    }

    /// Appends the JSON text of the name, a comma first unless `first`.
    #[inline]
    pub(super) fn write_json(&self, first: bool, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.json[first as usize..]);
    }
}

pub(super) struct ListReader<'a> {
    /// Start and end of each row's elements.
    pub(super) offsets: Offsets<'a>,
    pub(super) element: Box<SlotReader<'a>>,
}

#[derive(Clone, Copy)]
pub(super) enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

impl Offsets<'_> {
    pub(super) fn range(&self, i: usize) -> std::ops::Range<usize> {
        match self {
            Offsets::Small(o) => o[i] as usize..o[i + 1] as usize,
            Offsets::Large(o) => o[i] as usize..o[i + 1] as usize,
        }
    }
}

#[inline]
pub(super) fn is_valid(nulls: Option<&NullBuffer>, i: usize) -> bool {
    nulls.is_none_or(|n| n.is_valid(i))
}

impl<'a> ShreddedColumn<'a> {
    /// Checks the layout of a Variant column: `metadata`, and `value`
    /// and/or `typed_value`, found by name, recursively.
    pub fn try_new(column: &'a StructArray) -> Result<ShreddedColumn<'a>> {
        // Without either, every row would read as a missing value.
        if column.column_by_name("value").is_none()
            && column.column_by_name("typed_value").is_none()
        {
            return Err(layout_error(
                "a Variant column has a value or a typed_value field, and this struct has neither"
                    .into(),
            ));
        }
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

    pub(super) fn row_metadata(&self, row: usize) -> Result<Metadata<'a>> {
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

    pub(crate) fn metadata_of(&self, row: usize) -> RowMetadata<'_, 'a> {
        RowMetadata { column: self, row }
    }
}

impl<'a> SlotReader<'a> {
    /// Reads the `value` and `typed_value` children of `group`.
    pub(super) fn new(group: &'a StructArray, path: String, top: bool) -> Result<SlotReader<'a>> {
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
    pub(super) fn typed_valid(&self, i: usize) -> bool {
        self.typed.as_ref().is_some_and(|t| t.is_valid(i))
    }

    pub(super) fn value_at(&self, i: usize) -> Option<&'a [u8]> {
        self.value.as_ref().and_then(|v| v.get(i))
    }

    pub(super) fn is_present(&self, i: usize) -> bool {
        self.typed_valid(i) || self.value_at(i).is_some()
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
    pub(super) fn value_context<T>(&self, i: usize, result: Result<T>) -> Result<T> {
        result.map_err(|e| {
            Error::new(
                ErrorKind::InvalidVariant,
                format!("{}: value: {e}", self.path),
            )
            .with_row(i as u64)
        })
    }
}

impl<'a> ObjectReader<'a> {
    pub(super) fn field(&self, name: &str) -> Option<&SlotReader<'a>> {
        self.fields
            .binary_search_by(|(n, _)| n.name.cmp(name))
            .ok()
            .map(|k| &self.fields[k].1)
    }
}

/// A primitive Arrow column read as Variant scalars: for rendering typed
/// results as JSON, comparing them, aggregating them.
pub struct ScalarColumn<'a> {
    pub(super) typed: Typed<'a>,
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

impl<'a> TypedReader<'a> {
    pub(super) fn new(array: &'a ArrayRef, path: &str) -> Result<TypedReader<'a>> {
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
    pub(super) fn write_json(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
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
    pub(super) fn scalar(&self, i: usize) -> Result<VariantRef<'a>> {
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

pub(super) fn scale(s: i8, path: &str) -> Result<u8> {
    u8::try_from(s)
        .ok()
        .filter(|&s| s <= 38)
        .ok_or_else(|| layout_error(format!("{path}: decimal scale {s} is outside 0..=38")))
}

pub(super) fn list_reader<'a, O: OffsetSizeTrait>(
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
pub(super) fn layout_error(message: String) -> Error {
    Error::new(ErrorKind::Schema, message)
}

#[cold]
pub(super) fn row_error(row: usize, path: &str, message: &str) -> Error {
    Error::new(ErrorKind::InvalidVariant, format!("{path}: {message}")).with_row(row as u64)
}
