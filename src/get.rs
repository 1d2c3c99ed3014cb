//! `variant_get`: the sub-value at a path in every row, as a typed Arrow
//! array.
//!
//! When the path runs through shredded objects to a `typed_value` and that
//! slot's `value` is all null in the batch, the typed column is the answer:
//! it is handed over whole (cast once when the requested type is a wider
//! one), with no per-row work. Otherwise each row is resolved: through the
//! shredded slots as far as they go, then into the Variant-encoded value.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayBuilder, ArrayRef, AsArray, BinaryBuilder, StructArray, make_array,
};
use arrow::buffer::NullBuffer;
use arrow::compute::{max, max_string, min, min_string};
use arrow::datatypes::{DataType, Decimal128Type, Field, Float64Type, Int64Type};

use crate::error::{Error, ErrorKind, Result};
use crate::path::{PathSegment, VariantPath};
use crate::shred::{Conversion, ShreddingSchema, TypedBuilder, is_variant_field};
use crate::unshred::{Found, ScalarColumn, ShreddedColumn};
use std::cmp::Ordering;

use crate::variant::{Kind, Metadata, VariantBuilder, VariantDecimal, VariantRef, compare, decode};

/// Extracts `path` from every row of a Variant column as `as_type`: a
/// primitive layout of [`ShreddingSchema`] (`int64`, `decimal(18,2)`,
/// `string`, ...), or [`ShreddingSchema::Variant`] for the sub-value itself
/// (a struct of `metadata` and `value`; a sub-value read from a
/// Variant-encoded value keeps its row's metadata, which may list names it
/// does not use, as the spec allows).
///
/// Values convert as Spark's `variant_get` casts them, which may drop
/// what the type cannot hold: a number to an integer is truncated toward
/// zero (`1.5` is 1), to a decimal rounded half away from zero to its
/// scale (`1.99` as `decimal(5,1)` is 2.0), and to a float or double
/// rounded; booleans are 1 and 0, strings of digits numbers, and any value
/// a string (the README's `get` section lists every rule). Strings
/// convert to dates and timestamps as Spark's
/// `CAST(s AS DATE)`, `CAST(s AS TIMESTAMP)` and `CAST(s AS TIMESTAMP_NTZ)`
/// read them (`2024-03-01`, `2024-03-01 12:30`, `2024-03-01T12:30:00.5Z`),
/// with UTC for the session time zone Spark would use: a string without a
/// zone is read as UTC. Zones are `Z`, offsets, `UTC`, `GMT` or `UT`, with no
/// region names (`Europe/Paris`), and a time without a date does not
/// convert. A timestamp converts to the date it falls on in UTC. A missing
/// path gives null; so does a value that does not convert at all (`"abc"`
/// or an object to an integer, 300 to an int8), unless `strict`, where it
/// is an error naming the row and path, as in Spark a truncated or
/// rounded number is not.
///
/// ```
/// use arrow::array::{Array, AsArray};
/// use arrow::datatypes::Int64Type;
/// use vshred::get::variant_get;
/// use vshred::shred::{Shredder, ShreddingSchema};
///
/// let mut shredder = Shredder::new(&r#"{"a":"int64"}"#.parse::<ShreddingSchema>()?);
/// for row in [r#"{"a":1}"#, r#"{"a":"x"}"#, r#"{"b":{"c":2}}"#] {
///     shredder.append_json(row.as_bytes())?;
/// }
/// let column = shredder.finish();
/// let a = variant_get(&column, &"$.a".parse()?, &ShreddingSchema::Int64, false)?;
/// assert_eq!(a.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(), [Some(1), None, None]);
/// let c = variant_get(&column, &"$.b.c".parse()?, &ShreddingSchema::Int64, false)?;
/// assert_eq!(c.as_primitive::<Int64Type>().value(2), 2);
/// assert!(variant_get(&column, &"$.a".parse()?, &ShreddingSchema::Int64, true).is_err());
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn variant_get(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
    strict: bool,
) -> Result<ArrayRef> {
    let mut failures = if strict {
        Failures::Fail
    } else {
        Failures::Null
    };
    get_with(column, path, as_type, &mut failures)
}

/// [`variant_get`] of any type, a value that does not convert as
/// `failures` says.
fn get_with(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
    failures: &mut Failures<'_>,
) -> Result<ArrayRef> {
    match as_type {
        ShreddingSchema::Object(fields) => struct_get(column, path, fields, failures),
        ShreddingSchema::Array(element) => list_get(column, path, element, failures),
        _ => primitive_get(column, path, as_type, failures),
    }
}

/// [`variant_get`], `strict`, with the failures kept as data: a struct of
/// the `value` (null where a value does not convert) and the `failure`,
/// the error's text in a row whose value does not convert
/// ([`failure_field`]). An engine that computes the value where it reads
/// the path, below a filter, fails only the rows that reach where the
/// conversion was asked for. `place` puts an error in its context (a
/// file, its row) before its text is taken. A struct's or a list's row
/// fails with the first failure of its fields or elements.
pub fn variant_get_or_failure(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
    place: &dyn Fn(Error) -> Error,
) -> Result<ArrayRef> {
    let mut failed = Vec::new();
    let value = get_with(column, path, as_type, &mut Failures::Record(&mut failed))?;
    // A struct's fields record theirs one after the other: in row order,
    // the first of each row kept.
    failed.sort_by_key(|(row, _)| *row);
    failed.dedup_by_key(|(row, _)| *row);
    let failure: ArrayRef = if failed.is_empty() {
        arrow::array::new_null_array(&DataType::Utf8, column.len())
    } else {
        let mut texts = arrow::array::StringBuilder::new();
        let mut failed = failed.into_iter().peekable();
        for row in 0..column.len() {
            match failed.next_if(|(r, _)| *r == row) {
                Some((_, e)) => texts.append_value(place(e).to_string()),
                None => texts.append_null(),
            }
        }
        Arc::new(texts.finish())
    };
    let DataType::Struct(fields) = failure_field("", as_type).data_type().clone() else {
        unreachable!("a failure field is a struct")
    };
    StructArray::try_new(fields, vec![value, failure], None)
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| Error::new(ErrorKind::Schema, format!("{path}: {e}")))
}

/// [`variant_get`] (`strict` for [`OnFailure::Error`]) or
/// [`variant_get_or_failure`], as `on_failure` says.
pub fn variant_get_on(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
    on_failure: OnFailure,
    place: &dyn Fn(Error) -> Error,
) -> Result<ArrayRef> {
    match on_failure {
        OnFailure::Null => variant_get(column, path, as_type, false),
        OnFailure::Error => variant_get(column, path, as_type, true),
        OnFailure::Defer => variant_get_or_failure(column, path, as_type, place),
    }
}

/// The Arrow field of a [`variant_get_on`] result named `name`.
pub fn result_field_on(name: &str, as_type: &ShreddingSchema, on_failure: OnFailure) -> Field {
    match on_failure {
        OnFailure::Defer => failure_field(name, as_type),
        OnFailure::Null | OnFailure::Error => result_field(name, as_type),
    }
}

/// What a `variant_get` gives where a value does not convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnFailure {
    /// Null (`try_variant_get`).
    Null,
    /// An error naming the row (`variant_get`).
    Error,
    /// Null, with the error's text beside it ([`variant_get_or_failure`]).
    Defer,
}

/// The Arrow field of a [`variant_get_or_failure`] result named `name`: a
/// struct of the `value` ([`result_field`]) and the `failure` text.
pub fn failure_field(name: &str, as_type: &ShreddingSchema) -> Field {
    let fields = vec![
        result_field("value", as_type),
        Field::new("failure", DataType::Utf8, true),
    ];
    Field::new(name, DataType::Struct(fields.into()), false)
}

/// What a value that does not convert to a primitive type gives.
enum Failures<'a> {
    /// Null.
    Null,
    /// An error, at once.
    Fail,
    /// Null, and the row's error kept, in row order.
    Record(&'a mut Vec<(usize, Error)>),
}

impl Failures<'_> {
    fn failed(&mut self, row: usize, error: impl FnOnce() -> Error) -> Result<()> {
        match self {
            Failures::Null => Ok(()),
            Failures::Fail => Err(error()),
            Failures::Record(failed) => {
                failed.push((row, error()));
                Ok(())
            }
        }
    }
}

/// [`variant_get`] of a primitive type or the sub-Variant.
fn primitive_get(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
    failures: &mut Failures<'_>,
) -> Result<ArrayRef> {
    if let Some(array) = typed_passthrough(column, path, as_type)? {
        return Ok(array);
    }
    let reader = ShreddedColumn::try_new(column)?;
    let segments = path.segments();
    // A nanosecond timestamp (SQL's TIMESTAMP in DataFusion) holds fewer
    // years than the microseconds Spark counts in.
    let range = match as_type {
        ShreddingSchema::Timestamp { nanos: true, .. } => {
            " (a nanosecond timestamp holds the years 1677 to 2262; `timestamp`, in microseconds, years 1 to 9999)"
        }
        _ => "",
    };
    let failed = |row: usize, v: &VariantRef<'_>| {
        Error::new(
            ErrorKind::Conversion,
            format!(
                "{path}: {} does not convert to {}{range}",
                crate::json::variant_to_json_string(v),
                as_type.type_name()
            ),
        )
        .with_row(row as u64)
    };
    if !as_type.is_typed() {
        return variants(column, &reader, segments);
    }
    let mut out = TypedBuilder::new(as_type).expect("a primitive layout has a typed builder");
    let finder = reader.finder(segments);
    for row in 0..column.len() {
        if reader.is_null(row) {
            out.append_null();
            continue;
        }
        let m = reader.metadata_of(row);
        // A slot inside a list is at its element's index: its errors
        // name the row.
        let at_row = |e: Error| e.with_row(row as u64);
        let value = match finder.find(row, &m)? {
            Found::Missing => None,
            Found::Value(bytes) => Some(decode(m.get()?, bytes)),
            Found::Slot(slot, i) => match slot.typed_scalar(i).map_err(at_row)? {
                Some(v) => Some(v),
                None => {
                    // A shredded container, or a Variant-encoded value.
                    let mut builder = VariantBuilder::new();
                    slot.variant(i, &m, &mut builder).map_err(at_row)?;
                    let (metadata, bytes) = builder.into_parts();
                    let v = VariantRef::try_new(&metadata, &bytes)?;
                    if out.try_append(&v, Conversion::Cast) {
                        continue;
                    }
                    // The Variant null is SQL null, never a failure.
                    if !v.is_null() {
                        failures.failed(row, || failed(row, &v))?;
                    }
                    out.append_null();
                    continue;
                }
            },
        };
        match value {
            Some(v) if out.try_append(&v, Conversion::Cast) => {}
            Some(v) => {
                if !v.is_null() {
                    failures.failed(row, || failed(row, &v))?;
                }
                out.append_null();
            }
            None => out.append_null(),
        }
    }
    Ok(out.finish(as_type))
}

/// Texts converted to `as_type`, a primitive type, as [`variant_get`]
/// converts a Variant string: Spark's `CAST` of a string, where its rules
/// are not Arrow's (a `timestamp_ntz` keeps the text's wall time and drops
/// its offset, which Arrow's cast applies). Null where a text does not
/// convert, or, when `strict`, an error naming its row.
///
/// ```
/// use arrow::array::{Array, AsArray};
/// use arrow::datatypes::TimestampMicrosecondType;
/// use vshred::get::cast_texts;
/// use vshred::shred::ShreddingSchema;
///
/// let ntz = ShreddingSchema::Timestamp { utc: false, nanos: false };
/// let times = cast_texts([Some("2024-03-01T12:30:00+01:00"), Some("noon"), None], &ntz, false)?;
/// let times = times.as_primitive::<TimestampMicrosecondType>();
/// assert_eq!(times.value(0), 1_709_296_200_000_000); // 12:30, the offset dropped
/// assert!(times.is_null(1) && times.is_null(2));
/// assert!(cast_texts([Some("noon")], &ntz, true).is_err());
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn cast_texts<'t>(
    texts: impl IntoIterator<Item = Option<&'t str>>,
    as_type: &ShreddingSchema,
    strict: bool,
) -> Result<ArrayRef> {
    let mut out = TypedBuilder::new(as_type).ok_or_else(|| {
        Error::new(
            ErrorKind::Usage,
            format!(
                "texts convert to a primitive type, not {}",
                as_type.type_name()
            ),
        )
    })?;
    for (row, text) in texts.into_iter().enumerate() {
        match text.map(VariantRef::String) {
            Some(v) if out.try_append(&v, Conversion::Cast) => {}
            Some(v) if strict => {
                return Err(Error::new(
                    ErrorKind::Conversion,
                    format!(
                        "{} does not convert to {}",
                        crate::json::variant_to_json_string(&v),
                        as_type.type_name()
                    ),
                )
                .with_row(row as u64));
            }
            _ => out.append_null(),
        }
    }
    Ok(out.finish(as_type))
}

/// The Arrow field of a [`variant_get`] result of `as_type` named `name`:
/// the primitive type, or an unshredded Variant (the `arrow.parquet.variant`
/// extension type) for [`ShreddingSchema::Variant`].
pub fn result_field(name: &str, as_type: &ShreddingSchema) -> Field {
    match as_type {
        ShreddingSchema::Object(fields) => Field::new(
            name,
            DataType::Struct(fields.iter().map(|(n, t)| result_field(n, t)).collect()),
            true,
        ),
        ShreddingSchema::Array(element) => Field::new(
            name,
            DataType::List(Arc::new(result_field("element", element))),
            true,
        ),
        _ => match as_type.typed_value_type() {
            Some(t) => Field::new(name, t, true),
            None => crate::shred::variant_field(name, &ShreddingSchema::Variant),
        },
    }
}

/// The layout whose [`variant_get`] result has the type `data_type` (the
/// inverse of [`result_field`]): a primitive type as
/// [`ShreddingSchema::typed_value_type`] gives it or another Arrow width of
/// it (`Utf8View` is a string, `Decimal64` a decimal), a struct of such
/// fields or a list of such elements. `None` for a type no layout gives.
pub fn result_layout(data_type: &DataType) -> Option<ShreddingSchema> {
    // A field or an element may be a Variant itself.
    let nested = |field: &Field| {
        if is_variant_field(field) {
            Some(ShreddingSchema::Variant)
        } else {
            result_layout(field.data_type())
        }
    };
    match data_type {
        DataType::Struct(fields) => ShreddingSchema::object(
            fields
                .iter()
                .map(|f| Some((f.name().clone(), nested(f)?)))
                .collect::<Option<Vec<_>>>()?,
        )
        .ok(),
        DataType::List(element) | DataType::LargeList(element) => {
            Some(ShreddingSchema::Array(Box::new(nested(element)?)))
        }
        primitive => ShreddingSchema::from_typed_value_type(primitive),
    }
}

/// [`variant_get`] of a struct type: each field is the `variant_get` of its
/// own path, so that a shredded field's typed column passes through whole;
/// a row is a struct where the value at `path` is an object (a missing
/// field is null), null where there is none, and null (or, `strict`, an
/// error) where it is not an object. Whether it is one is read from the
/// shredded layout where the path is typed.
fn struct_get(
    column: &StructArray,
    path: &VariantPath,
    fields: &[(String, ShreddingSchema)],
    failures: &mut Failures<'_>,
) -> Result<ArrayRef> {
    let reader = ShreddedColumn::try_new(column)?;
    let finder = reader.finder(path.segments());
    let mut valid = arrow::array::NullBufferBuilder::new(column.len());
    let strict = matches!(failures, Failures::Fail);
    let as_type = || ShreddingSchema::Object(fields.to_vec());
    let mut not_object = None;
    for row in 0..column.len() {
        let object = match reader.is_null(row) {
            true => None,
            false => {
                let m = reader.metadata_of(row);
                let found = finder.find(row, &m)?;
                // A slot inside a list is at its element's index.
                found.is_object(&m).map_err(|e| e.with_row(row as u64))?
            }
        };
        match object {
            Some(true) => valid.append_non_null(),
            // Strict: the first, named below unless a field fails earlier.
            Some(false) if strict => {
                not_object.get_or_insert(row);
                valid.append_null();
            }
            Some(false) => {
                failures.failed(row, || not_of_type(path, "an object", &as_type(), row))?;
                valid.append_null();
            }
            None => valid.append_null(),
        }
    }
    let children = fields
        .iter()
        .map(|(name, t)| {
            let field = path.join(PathSegment::Field(name.clone()));
            get_with(column, &field, t, failures)
        })
        .collect::<Result<Vec<_>>>();
    // Of a value that is not an object and one of a field that does not
    // convert, the earlier row is named.
    let children = match (not_object, children) {
        (Some(row), Err(e)) if e.row().is_some_and(|r| r < row as u64) => return Err(e),
        (Some(row), _) => return Err(not_of_type(path, "an object", &as_type(), row)),
        (None, children) => children?,
    };
    let struct_fields = fields.iter().map(|(n, t)| result_field(n, t)).collect();
    StructArray::try_new(struct_fields, children, valid.finish())
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| Error::new(ErrorKind::Schema, format!("{path}: {e}")))
}

/// [`variant_get`] of an array type: the arrays at `path` (null where there
/// is none, and null or, `strict`, an error where the value is not an
/// array), their elements each converted to `element` as [`variant_get`]
/// converts a value.
fn list_get(
    column: &StructArray,
    path: &VariantPath,
    element: &ShreddingSchema,
    failures: &mut Failures<'_>,
) -> Result<ArrayRef> {
    let as_type = || ShreddingSchema::Array(Box::new(element.clone()));
    let reader = ShreddedColumn::try_new(column)?;
    let values = variants(column, &reader, path.segments())?;
    let values = values.as_struct();
    let metadata = values.column(0).as_binary::<i32>();
    let value = values.column(1).as_binary::<i32>();
    let mut offsets: Vec<i32> = Vec::with_capacity(values.len() + 1);
    offsets.push(0);
    let mut valid = arrow::array::NullBufferBuilder::new(values.len());
    let (mut element_metadata, mut element_values) = (BinaryBuilder::new(), BinaryBuilder::new());
    for row in 0..values.len() {
        let array = match values.is_null(row) {
            true => None,
            false => match decode(Metadata::try_new(metadata.value(row))?, value.value(row)) {
                VariantRef::Array(array) => Some(array),
                VariantRef::Null => None,
                _ => {
                    failures.failed(row, || not_of_type(path, "an array", &as_type(), row))?;
                    None
                }
            },
        };
        match array {
            Some(array) => {
                for i in 0..array.len() {
                    element_metadata.append_value(metadata.value(row));
                    element_values.append_value(array.element_bytes(i));
                }
                valid.append_non_null();
            }
            None => valid.append_null(),
        }
        let end = i32::try_from(element_values.len()).map_err(|_| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("{path}: over 2^31 array elements in a batch"),
            )
        })?;
        offsets.push(end);
    }
    let elements = StructArray::new(
        ShreddingSchema::Variant.column_fields(),
        vec![
            Arc::new(element_metadata.finish()),
            Arc::new(element_values.finish()),
        ],
        None,
    );
    // An element's failure is its array's row's, noted with its index.
    let in_row = |e: Error| match e.row() {
        Some(k) => {
            let row = offsets.partition_point(|&o| o as u64 <= k) - 1;
            e.with_row(row as u64)
                .with_note(&format!("at {path}[{}]", k - offsets[row] as u64))
        }
        None => e,
    };
    let root = VariantPath::root();
    let converted = match failures {
        Failures::Record(failed) => {
            let mut of_elements = Vec::new();
            let converted = get_with(
                &elements,
                &root,
                element,
                &mut Failures::Record(&mut of_elements),
            )?;
            failed.extend(of_elements.into_iter().map(|(_, e)| {
                let e = in_row(e);
                (e.row().unwrap_or_default() as usize, e)
            }));
            converted
        }
        _ => get_with(&elements, &root, element, failures).map_err(in_row)?,
    };
    arrow::array::ListArray::try_new(
        Arc::new(result_field("element", element)),
        arrow::buffer::OffsetBuffer::new(offsets.into()),
        converted,
        valid.finish(),
    )
    .map(|a| Arc::new(a) as ArrayRef)
    .map_err(|e| Error::new(ErrorKind::Schema, format!("{path}: {e}")))
}

/// A value at `path` in `row` that is not `what` the type asks for.
fn not_of_type(path: &VariantPath, what: &str, as_type: &ShreddingSchema, row: usize) -> Error {
    Error::new(
        ErrorKind::Conversion,
        format!(
            "{path}: the value is not {what}, so does not convert to {}",
            as_type.type_name()
        ),
    )
    .with_row(row as u64)
}

/// The sub-value at `path` in its most direct form: the typed column itself
/// when the path is fully shredded and its `value` all null (no cast, no
/// per-row work), else the sub-values as an unshredded Variant struct.
pub fn variant_get_natural(column: &StructArray, path: &VariantPath) -> Result<ArrayRef> {
    let natural = shredded_slot(column, path).and_then(|(slot, _)| {
        slot.column_by_name("typed_value")
            .map(|t| t.data_type().clone())
    });
    if let Some(data_type) = natural
        && !matches!(
            data_type,
            DataType::Struct(_) | DataType::List(_) | DataType::LargeList(_)
        )
        && let Some(array) = passthrough(column, path, &data_type)?
    {
        return Ok(array);
    }
    variant_get(column, path, &ShreddingSchema::Variant, false)
}

/// Rows of a `variant_get` result (typed or Variant) as Variant values.
pub enum ResultColumn<'a> {
    /// A primitive column.
    Typed(ScalarColumn<'a>),
    /// A Variant struct.
    Variant(Box<ShreddedColumn<'a>>),
}

impl<'a> ResultColumn<'a> {
    /// Reads a result array.
    pub fn try_new(array: &'a ArrayRef) -> Result<ResultColumn<'a>> {
        Ok(match array.as_struct_opt() {
            Some(s) => ResultColumn::Variant(Box::new(ShreddedColumn::try_new(s)?)),
            None => ResultColumn::Typed(ScalarColumn::try_new(array)?),
        })
    }

    /// Row `i`; `None` when null.
    pub fn get(&self, i: usize) -> Result<Option<VariantRef<'a>>> {
        match self {
            ResultColumn::Typed(c) => c.get(i),
            ResultColumn::Variant(c) => c.unshredded_value(i),
        }
    }

    /// Appends row `i` as JSON (`null` when null).
    pub fn write_json(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        match self {
            ResultColumn::Typed(c) => c.write_json(i, out),
            ResultColumn::Variant(c) => c.write_json(i, out),
        }
    }
}

/// The sub-values themselves, as an unshredded Variant struct.
fn variants(
    column: &StructArray,
    reader: &ShreddedColumn<'_>,
    segments: &[PathSegment],
) -> Result<ArrayRef> {
    let mut metadata = BinaryBuilder::new();
    let mut value = BinaryBuilder::new();
    let mut nulls = arrow::array::NullBufferBuilder::new(column.len());
    let mut builder = VariantBuilder::new();
    let finder = reader.finder(segments);
    for row in 0..column.len() {
        let m = reader.metadata_of(row);
        let found = match reader.is_null(row) {
            true => Found::Missing,
            false => finder.find(row, &m)?,
        };
        // Bytes found inside a Variant-encoded value are a valid value
        // under the row's metadata, which may list names the sub-value
        // does not use (the spec allows that): they are copied, not
        // decoded and encoded again. A shredded slot is rebuilt.
        let found = match found {
            Found::Value(bytes) => Some((m.get()?.as_bytes(), bytes)),
            Found::Slot(slot, i) => {
                builder.reset();
                // A slot inside a list is at its element's index.
                let built = slot.variant(i, &m, &mut builder);
                built
                    .map_err(|e| e.with_row(row as u64))?
                    .then(|| builder.finish())
            }
            Found::Missing => None,
        };
        match found {
            Some((m, v)) => {
                metadata.append_value(m);
                value.append_value(v);
                nulls.append_non_null();
            }
            None => {
                metadata.append_value(b"");
                value.append_value(b"");
                nulls.append_null();
            }
        }
    }
    Ok(Arc::new(StructArray::new(
        ShreddingSchema::Variant.column_fields(),
        vec![Arc::new(metadata.finish()), Arc::new(value.finish())],
        nulls.finish(),
    )))
}

/// The slot a path reaches through shredded objects only, with the nulls
/// of every level on the way.
fn shredded_slot<'c>(
    column: &'c StructArray,
    path: &VariantPath,
) -> Option<(&'c StructArray, Option<NullBuffer>)> {
    let mut nulls = column.nulls().cloned();
    let mut slot = column;
    for segment in path.segments() {
        let PathSegment::Field(name) = segment else {
            return None;
        };
        let typed = slot.column_by_name("typed_value")?.as_struct_opt()?;
        let field = typed.column_by_name(name)?.as_struct_opt()?;
        nulls = NullBuffer::union(nulls.as_ref(), typed.nulls());
        nulls = NullBuffer::union(nulls.as_ref(), field.nulls());
        slot = field;
    }
    Some((slot, nulls))
}

/// The typed column as `as_type`, when the path is shredded all the way and
/// its `value` is all null here; `None` when rows must be resolved one by
/// one.
fn typed_passthrough(
    column: &StructArray,
    path: &VariantPath,
    as_type: &ShreddingSchema,
) -> Result<Option<ArrayRef>> {
    match as_type.typed_value_type() {
        Some(wanted) => passthrough(column, path, &wanted),
        None => Ok(None),
    }
}

fn passthrough(
    column: &StructArray,
    path: &VariantPath,
    wanted: &DataType,
) -> Result<Option<ArrayRef>> {
    let Some((slot, nulls)) = shredded_slot(column, path) else {
        return Ok(None);
    };
    if slot
        .column_by_name("value")
        .is_some_and(|v| v.null_count() != v.len())
    {
        return Ok(None);
    }
    let Some(typed) = slot.column_by_name("typed_value") else {
        return Ok(None);
    };
    let array = if typed.data_type() == wanted {
        typed.clone()
    } else if widens(typed.data_type(), wanted) {
        arrow::compute::cast(typed, wanted)
            .map_err(|e| Error::new(ErrorKind::Schema, format!("casting {path}: {e}")))?
    } else {
        return Ok(None);
    };
    let nulls = NullBuffer::union(nulls.as_ref(), array.nulls());
    if nulls.as_ref() == array.nulls() {
        return Ok(Some(array));
    }
    let data = array
        .to_data()
        .into_builder()
        .nulls(nulls)
        .build()
        .map_err(|e| Error::new(ErrorKind::Schema, format!("{path}: {e}")))?;
    Ok(Some(make_array(data)))
}

/// Casts that give exactly what the row-by-row conversion gives, so the
/// typed column can be cast whole: wider integers; integers or floats to
/// double (both round to nearest); and integers or decimals to a decimal
/// with at least as many digits on each side of the point, where every
/// value fits exactly.
fn widens(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    // Digits before and after the point that every value of a type fits.
    let digits = |t: &DataType| match t {
        Int8 => Some((3, 0)),
        Int16 => Some((5, 0)),
        Int32 => Some((10, 0)),
        Int64 => Some((19, 0)),
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) if *s >= 0 => {
            Some((i16::from(*p) - i16::from(*s), i16::from(*s)))
        }
        _ => None,
    };
    match (from, to) {
        (Int8 | Int16 | Int32, Int16 | Int32 | Int64) => digits(from) < digits(to),
        (Int8 | Int16 | Int32 | Int64 | Float32, Float64) => true,
        (_, Decimal32(..) | Decimal64(..) | Decimal128(..)) => match (digits(from), digits(to)) {
            (Some((int_from, frac_from)), Some((int_to, frac_to))) => {
                int_from <= int_to && frac_from <= frac_to
            }
            _ => false,
        },
        _ => false,
    }
}

/// An aggregate over `variant_get` results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Non-null values.
    Count,
    /// Sum of numbers: exact for integers and decimals, double once a
    /// double is seen; other values are left out and counted.
    Sum,
    /// The smallest value, in the [order of Variant values](crate::variant::compare)
    /// (Spark's): numbers by value, strings by bytes, and across kinds
    /// null < boolean < number < string < ... < array < object.
    Min,
    /// The largest value, in the same order.
    Max,
}

/// Folds values into one [`Aggregate`]; SQL nulls and Variant nulls are
/// left out, as SQL aggregates leave out nulls.
#[derive(Debug)]
pub struct Accumulator {
    aggregate: Aggregate,
    count: u64,
    /// Values a sum left out: not numbers.
    skipped: u64,
    /// Whether an exact sum passed what a decimal holds (38 digits) and
    /// went on as a double.
    inexact: bool,
    /// How many values a sum added were doubles, and whether any was an
    /// exact number (added to them as a double, so not exactly).
    doubles: u64,
    exact_values: bool,
    sum: Option<Sum>,
    /// The min or max so far, as Variant bytes (metadata, value).
    best: Option<(Vec<u8>, Vec<u8>)>,
    /// How many values of each kind a min or max saw.
    kinds: [u64; KINDS],
    builder: VariantBuilder,
}

/// The number of [`Kind`]s.
const KINDS: usize = Kind::Object as usize + 1;

#[derive(Debug, Clone, Copy)]
enum Sum {
    Exact(VariantDecimal),
    Double(f64),
}

/// What a whole column folds into: the sum so far with its values added,
/// its min or max (`None`: no value), or nothing left to add (a sum of
/// doubles, added in order).
enum Folded<'a> {
    Total(VariantDecimal),
    Best(Option<VariantRef<'a>>),
    Done,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new(aggregate: Aggregate) -> Accumulator {
        Accumulator {
            aggregate,
            count: 0,
            skipped: 0,
            inexact: false,
            doubles: 0,
            exact_values: false,
            sum: None,
            best: None,
            kinds: [0; KINDS],
            builder: VariantBuilder::new(),
        }
    }

    /// Values a sum left out, not being numbers.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Adds the first `rows` values of a result column: a whole array at
    /// a time when it holds numbers or strings (a path read `--as` a number
    /// type or a string), or for a count of any typed column; value by
    /// value otherwise. Either way the result is the same.
    pub fn add_column(&mut self, column: &ArrayRef, rows: usize) -> Result<()> {
        let column = column.slice(0, rows.min(column.len()));
        // A typed column's only nulls are SQL nulls.
        if self.aggregate == Aggregate::Count && column.as_struct_opt().is_none() {
            self.count += (column.len() - column.null_count()) as u64;
            return Ok(());
        }
        if self.fold_whole(&column)? {
            return Ok(());
        }
        let values = ResultColumn::try_new(&column)?;
        for i in 0..column.len() {
            if let Some(v) = values.get(i)? {
                self.add(&v)?;
            }
        }
        Ok(())
    }

    /// Folds a typed column of numbers (or, for a min or max, strings) at
    /// once; false for one it leaves to [`add`](Self::add) value by value:
    /// other types, floats' min and max, a sum that goes on as a double
    /// (see [`exact_sum`](Self::exact_sum)), and decimals no
    /// `VariantDecimal` holds.
    fn fold_whole(&mut self, column: &ArrayRef) -> Result<bool> {
        let widened = |to: &DataType| {
            arrow::compute::cast(column, to)
                .map_err(|e| Error::new(ErrorKind::Schema, format!("to {to}: {e}")))
        };
        let sum = self.aggregate == Aggregate::Sum;
        let present = (column.len() - column.null_count()) as u64;
        let (kind, folded) = match column.data_type() {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                let integers = widened(&DataType::Int64)?;
                let integers = integers.as_primitive::<Int64Type>();
                let folded = if sum {
                    match self.exact_sum(0, integers.iter().flatten().map(i128::from)) {
                        Some(total) => Folded::Total(total),
                        None => return Ok(false),
                    }
                } else {
                    let best = self.pick(|| min(integers), || max(integers));
                    Folded::Best(best.map(VariantRef::Int64))
                };
                (Kind::Number, folded)
            }
            DataType::Decimal128(_, scale) => {
                let Ok(scale) = u8::try_from(*scale) else {
                    return Ok(false);
                };
                let decimals = column.as_primitive::<Decimal128Type>();
                let folded = if sum {
                    match self.exact_sum(scale, decimals.iter().flatten()) {
                        Some(total) => Folded::Total(total),
                        None => return Ok(false),
                    }
                } else {
                    match self.pick(|| min(decimals), || max(decimals)) {
                        None => Folded::Best(None),
                        Some(best) => match VariantDecimal::try_new(best, scale) {
                            Ok(d) => Folded::Best(Some(VariantRef::Decimal16(d))),
                            // Value by value, it is an error.
                            Err(_) => return Ok(false),
                        },
                    }
                };
                (Kind::Number, folded)
            }
            // A float's min or max is a float, which prints as one: value
            // by value.
            DataType::Float32 if !sum => return Ok(false),
            DataType::Float32 | DataType::Float64 => {
                let doubles = widened(&DataType::Float64)?;
                let doubles = doubles.as_primitive::<Float64Type>();
                let folded = if sum {
                    // Added in order, as value by value.
                    for x in doubles.iter().flatten() {
                        self.sum_in(Sum::Double(x));
                    }
                    Folded::Done
                } else {
                    let wanted = self.wanted();
                    let better = |x: f64, best: f64| {
                        compare(&VariantRef::Double(x), &VariantRef::Double(best)) == wanted
                    };
                    let best = doubles
                        .iter()
                        .flatten()
                        .reduce(|best, x| match better(x, best) {
                            true => x,
                            false => best,
                        });
                    Folded::Best(best.map(VariantRef::Double))
                };
                (Kind::Number, folded)
            }
            DataType::Utf8 if !sum => {
                let strings = column.as_string::<i32>();
                let best = self.pick(|| min_string(strings), || max_string(strings));
                (Kind::String, Folded::Best(best.map(VariantRef::String)))
            }
            _ => return Ok(false),
        };
        self.count += present;
        match folded {
            Folded::Total(total) if present > 0 => {
                self.sum = Some(Sum::Exact(total));
                self.exact_values = true;
            }
            Folded::Best(best) => {
                self.kinds[kind as usize] += present;
                if let Some(best) = best {
                    self.consider(&best)?;
                }
            }
            Folded::Total(_) | Folded::Done => {}
        }
        Ok(true)
    }

    /// The sum so far with `values` (unscaled, at `scale`) added, exactly,
    /// as adding them one by one gives it; `None` where that goes on as a
    /// double (a partial sum past 38 digits) or starts from a sum that is
    /// a double or at another scale, for value by value to add.
    fn exact_sum(&self, scale: u8, values: impl Iterator<Item = i128>) -> Option<VariantDecimal> {
        let limit = 10u128.pow(38);
        let start = match self.sum {
            None => 0,
            Some(Sum::Exact(d)) if d.scale() == scale => d.unscaled(),
            Some(_) => return None,
        };
        let total = values.into_iter().try_fold(start, |acc, v| {
            acc.checked_add(v).filter(|t| t.unsigned_abs() < limit)
        })?;
        VariantDecimal::try_new(total, scale).ok()
    }

    /// The min or the max, as the aggregate is.
    fn pick<T>(&self, min: impl FnOnce() -> T, max: impl FnOnce() -> T) -> T {
        match self.aggregate {
            Aggregate::Min => min(),
            _ => max(),
        }
    }

    /// The ordering of a value that beats the min or max so far.
    fn wanted(&self) -> Ordering {
        match self.aggregate {
            Aggregate::Min => Ordering::Less,
            _ => Ordering::Greater,
        }
    }

    /// Adds `value` to the sum, noting when two exact numbers made a sum
    /// no decimal holds.
    fn sum_in(&mut self, value: Sum) {
        match value {
            Sum::Exact(_) => self.exact_values = true,
            Sum::Double(_) => self.doubles += 1,
        }
        let sum = match self.sum {
            None => value,
            Some(acc) => add(acc, value),
        };
        if let (Some(Sum::Exact(_)), Sum::Exact(_), Sum::Double(_)) = (self.sum, value, sum) {
            self.inexact = true;
        }
        self.sum = Some(sum);
    }

    /// Adds one value.
    pub fn add(&mut self, v: &VariantRef<'_>) -> Result<()> {
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match self.aggregate {
            Aggregate::Count => {}
            Aggregate::Sum => {
                let value = match (v.as_decimal(), v.as_f64()) {
                    (Some(d), _) => Sum::Exact(d),
                    (_, Some(f)) => Sum::Double(f),
                    _ => {
                        self.skipped += 1;
                        return Ok(());
                    }
                };
                self.sum_in(value);
            }
            Aggregate::Min | Aggregate::Max => {
                self.kinds[Kind::of(v) as usize] += 1;
                self.consider(v)?;
            }
        }
        Ok(())
    }

    /// Keeps `v` if it beats the min or max so far.
    fn consider(&mut self, v: &VariantRef<'_>) -> Result<()> {
        let replace = match &self.best {
            None => true,
            Some((m, b)) => compare(v, &VariantRef::try_new(m, b)?) == self.wanted(),
        };
        if replace {
            self.builder.reset();
            self.builder.append(v)?;
            let (m, b) = self.builder.finish();
            let best = self.best.get_or_insert_with(Default::default);
            best.0.clear();
            best.0.extend_from_slice(m);
            best.1.clear();
            best.1.extend_from_slice(b);
        }
        Ok(())
    }

    /// The result as JSON text: a bare number for counts and sums, the
    /// value for min and max, `null` when no value took part.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        match (self.aggregate, &self.sum, &self.best) {
            (Aggregate::Count, ..) => return self.count.to_string(),
            (Aggregate::Sum, Some(Sum::Exact(d)), _) => return d.to_string(),
            (Aggregate::Sum, Some(Sum::Double(f)), _) => {
                crate::json::write_json(&VariantRef::Double(*f), &mut out)
            }
            (Aggregate::Min | Aggregate::Max, _, Some((m, b))) => match VariantRef::try_new(m, b) {
                Ok(v) => crate::json::write_json(&v, &mut out),
                Err(_) => return "null".into(),
            },
            _ => return "null".into(),
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// What the result leaves unsaid: values a sum left out, a sum that
    /// went on as a double (past 38 digits, or with doubles among exact
    /// numbers), or that a min or max compared values of several kinds.
    pub fn note(&self) -> Option<String> {
        let with_doubles = self.doubles > 0 && self.exact_values;
        if self.skipped > 0 || self.inexact || with_doubles {
            let mut notes = Vec::new();
            if self.skipped > 0 {
                let values = counted(self.skipped, "value was", "values were");
                notes.push(format!("{values} not numbers and left out of the sum"));
            }
            if self.inexact {
                notes.push(
                    "the sum passed 38 digits, more than a decimal holds, and was added up as a double from there: it is not exact"
                        .to_string(),
                );
            }
            if with_doubles {
                let doubles = counted(self.doubles, "value was a double", "values were doubles");
                notes.push(format!(
                    "{doubles}, and the exact numbers were added to them as doubles: the sum may not be exact (read as a decimal, each value is converted to it and added exactly)"
                ));
            }
            return Some(notes.join("; "));
        }
        let kinds: Vec<String> = (0..KINDS)
            .filter(|&k| self.kinds[k] > 0)
            .map(|k| {
                counted(
                    self.kinds[k],
                    KIND_ORDER[k].singular(),
                    KIND_ORDER[k].plural(),
                )
            })
            .collect();
        (kinds.len() > 1).then(|| {
            format!(
                "the values were of {} kinds ({}); {} compares kinds in Spark's order for Variant values: null < boolean < number < string < binary < UUID < date/timestamp < time < array < object; reading the path as one type compares within it",
                kinds.len(),
                kinds.join(", "),
                if self.aggregate == Aggregate::Min { "min" } else { "max" }
            )
        })
    }
}

/// `n` with the words for one or for several.
fn counted(n: u64, one: &str, several: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {several}"),
    }
}

/// The kinds, by their index.
const KIND_ORDER: [Kind; KINDS] = [
    Kind::Null,
    Kind::Boolean,
    Kind::Number,
    Kind::String,
    Kind::Binary,
    Kind::Uuid,
    Kind::Instant,
    Kind::Time,
    Kind::Array,
    Kind::Object,
];

/// The sum of two numbers: exact while both are and the result has at
/// most 38 digits, a double beyond.
fn add(acc: Sum, v: Sum) -> Sum {
    let double = |s: Sum| match s {
        Sum::Exact(d) => d.to_f64(),
        Sum::Double(f) => f,
    };
    if let (Sum::Exact(a), Sum::Exact(b)) = (acc, v) {
        let scale = a.scale().max(b.scale());
        let total = a
            .rescale(scale)
            .zip(b.rescale(scale))
            .and_then(|(x, y)| x.unscaled().checked_add(y.unscaled()))
            .and_then(|t| VariantDecimal::try_new(t, scale).ok());
        if let Some(t) = total {
            return Sum::Exact(t);
        }
    }
    Sum::Double(double(acc) + double(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_layout_reads_back_every_result_type() {
        let text = r#"{"a":"boolean","b":"int8","c":"int16","d":"int32","e":"int64","f":"float","g":"double","h":"decimal(38,10)","i":"date","j":"time","k":"timestamp","l":"timestamp_ntz","m":"timestamp_nanos","n":"timestamp_ntz_nanos","o":"binary","p":"string","q":"uuid","r":"variant","s":[{"x":["int64"]}]}"#;
        let layout: ShreddingSchema = text.parse().unwrap();
        let result = result_field("v", &layout);
        assert_eq!(result_layout(result.data_type()), Some(layout));
        // Other widths of a type are read as it.
        assert_eq!(
            result_layout(&DataType::Utf8View),
            Some(ShreddingSchema::String)
        );
        assert_eq!(result_layout(&DataType::UInt32), None);
    }

    #[test]
    fn whole_column_casts_are_those_that_lose_nothing() {
        use DataType::*;
        assert!(widens(&Int8, &Int64));
        assert!(!widens(&Int64, &Int32));
        assert!(widens(&Int32, &Float64));
        assert!(widens(&Decimal128(4, 1), &Decimal128(18, 1)));
        assert!(widens(&Decimal32(4, 1), &Decimal128(18, 3)));
        assert!(widens(&Int32, &Decimal128(10, 0)));
        // A digit after the point would be lost, or one before it.
        assert!(!widens(&Decimal128(4, 1), &Decimal128(18, 0)));
        assert!(!widens(&Decimal128(18, 1), &Decimal128(18, 2)));
        assert!(!widens(&Int64, &Decimal128(18, 0)));
        assert!(!widens(&Decimal128(4, 1), &Float64));
    }
}
