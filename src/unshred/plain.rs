//! Ordinary (not Variant) Arrow columns as JSON: what `vshred cat` prints
//! beside the Variant columns. Primitives render as their Variant
//! equivalents do; structs as objects, lists as arrays, maps as objects
//! (keys as their JSON text when they are not strings); a Variant inside
//! them (a struct's field, a list's element: `variant_explode`'s `value`)
//! as its JSON; types without a JSON form (intervals, durations) as their
//! display text, quoted.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field};

use super::{FieldName, Offsets, ScalarColumn, ShreddedColumn, is_valid};
use crate::error::Result;
use crate::json::write_json_string;
use crate::shred::is_variant_field;

/// What JSON text gives a struct's field that is SQL null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullFields {
    /// `"a":null`, as `vshred cat` prints a row.
    Written,
    /// Left out, as Spark's `to_json` leaves it (`ignoreNullFields`).
    Omitted,
}

/// A reader of one ordinary column, nested or not, as JSON.
pub(crate) enum PlainColumn<'a> {
    Scalar(ScalarColumn<'a>),
    Struct {
        nulls: Option<&'a NullBuffer>,
        fields: Vec<(FieldName<'a>, PlainColumn<'a>)>,
    },
    List {
        nulls: Option<&'a NullBuffer>,
        offsets: ListOffsets<'a>,
        elements: Box<PlainColumn<'a>>,
    },
    Map {
        nulls: Option<&'a NullBuffer>,
        offsets: &'a [i32],
        keys: Box<PlainColumn<'a>>,
        /// Keys that are strings are object keys as they are; others are
        /// rendered as JSON first, then quoted.
        string_keys: bool,
        values: Box<PlainColumn<'a>>,
    },
    /// Numbers with no Variant type (unsigned integers, half floats),
    /// rendered as JSON numbers from their text; a half float that is not
    /// finite as a string.
    Number(&'a ArrayRef),
    /// Any other type, as a JSON string of its text.
    Text(&'a ArrayRef),
    /// A column of nulls only (Arrow's `Null` type, which has no null
    /// buffer to ask).
    Null,
    /// A Variant nested in a struct or a list.
    Variant(Box<ShreddedColumn<'a>>),
}

/// Where each row's elements are in a list's values.
pub(crate) enum ListOffsets<'a> {
    Variable(Offsets<'a>),
    Fixed(usize),
}

impl ListOffsets<'_> {
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        match self {
            ListOffsets::Variable(o) => o.range(i),
            ListOffsets::Fixed(n) => i * n..(i + 1) * n,
        }
    }
}

impl<'a> PlainColumn<'a> {
    pub(crate) fn new(array: &'a ArrayRef) -> Result<PlainColumn<'a>> {
        if let Ok(scalar) = ScalarColumn::try_new(array) {
            return Ok(PlainColumn::Scalar(scalar));
        }
        let nulls = array.nulls();
        Ok(match array.data_type() {
            DataType::Struct(fields) => PlainColumn::Struct {
                nulls,
                fields: fields
                    .iter()
                    .zip(array.as_struct().columns())
                    .map(|(f, c)| Ok((FieldName::new(f.name()), PlainColumn::of(f, c)?)))
                    .collect::<Result<_>>()?,
            },
            DataType::List(element) => {
                let list = array.as_list::<i32>();
                PlainColumn::List {
                    nulls,
                    offsets: ListOffsets::Variable(Offsets::Small(list.value_offsets())),
                    elements: Box::new(PlainColumn::of(element, list.values())?),
                }
            }
            DataType::LargeList(element) => {
                let list = array.as_list::<i64>();
                PlainColumn::List {
                    nulls,
                    offsets: ListOffsets::Variable(Offsets::Large(list.value_offsets())),
                    elements: Box::new(PlainColumn::of(element, list.values())?),
                }
            }
            DataType::FixedSizeList(element, n) => {
                let list = array.as_fixed_size_list();
                PlainColumn::List {
                    nulls,
                    // Sliced, the values are sliced too: row 0 starts at 0.
                    offsets: ListOffsets::Fixed(*n as usize),
                    elements: Box::new(PlainColumn::of(element, list.values())?),
                }
            }
            DataType::Map(entries, _) => {
                let map = array.as_map();
                let values = match entries.data_type() {
                    DataType::Struct(entry) if entry.len() == 2 => {
                        PlainColumn::of(&entry[1], map.values())?
                    }
                    _ => PlainColumn::new(map.values())?,
                };
                PlainColumn::Map {
                    nulls,
                    offsets: map.value_offsets(),
                    keys: Box::new(PlainColumn::new(map.keys())?),
                    string_keys: matches!(
                        map.key_type(),
                        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                    ),
                    values: Box::new(values),
                }
            }
            DataType::Null => PlainColumn::Null,
            DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float16 => PlainColumn::Number(array),
            _ => PlainColumn::Text(array),
        })
    }

    /// The column of a struct's `field` or a list's element: a Variant
    /// there is rendered as one.
    pub(crate) fn of(field: &Field, array: &'a ArrayRef) -> Result<PlainColumn<'a>> {
        // A struct of `metadata` and `value` that is not a Variant's layout
        // (a user's own) stays a struct.
        if let Some(variants) = array.as_struct_opt()
            && is_variant_field(field)
            && let Ok(column) = ShreddedColumn::try_new(variants)
        {
            return Ok(PlainColumn::Variant(Box::new(column)));
        }
        PlainColumn::new(array)
    }

    /// Appends row `i` as JSON, a struct's null fields written as `null`.
    pub(crate) fn write_json(&self, i: usize, out: &mut Vec<u8>) -> Result<()> {
        self.write_json_with(i, out, NullFields::Written)
    }

    /// Whether row `i` is SQL null.
    fn is_null(&self, i: usize) -> bool {
        match self {
            PlainColumn::Scalar(c) => !c.typed.is_valid(i),
            PlainColumn::Struct { nulls, .. }
            | PlainColumn::List { nulls, .. }
            | PlainColumn::Map { nulls, .. } => !is_valid(*nulls, i),
            PlainColumn::Number(array) | PlainColumn::Text(array) => array.is_null(i),
            PlainColumn::Null => true,
            PlainColumn::Variant(c) => c.is_null(i),
        }
    }

    /// Appends row `i` as JSON, a struct's null fields as `null_fields`
    /// says.
    pub(crate) fn write_json_with(
        &self,
        i: usize,
        out: &mut Vec<u8>,
        null_fields: NullFields,
    ) -> Result<()> {
        match self {
            PlainColumn::Scalar(c) => c.write_json(i, out)?,
            PlainColumn::Struct { nulls, .. }
            | PlainColumn::List { nulls, .. }
            | PlainColumn::Map { nulls, .. }
                if !is_valid(*nulls, i) =>
            {
                out.extend_from_slice(b"null")
            }
            PlainColumn::Struct { fields, .. } => {
                out.push(b'{');
                let mut first = true;
                for (name, field) in fields {
                    if null_fields == NullFields::Omitted && field.is_null(i) {
                        continue;
                    }
                    name.write_json(first, out);
                    field.write_json_with(i, out, null_fields)?;
                    first = false;
                }
                out.push(b'}');
            }
            PlainColumn::List {
                offsets, elements, ..
            } => {
                out.push(b'[');
                for (k, e) in offsets.range(i).enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    elements.write_json_with(e, out, null_fields)?;
                }
                out.push(b']');
            }
            PlainColumn::Map {
                offsets,
                keys,
                string_keys,
                values,
                ..
            } => {
                out.push(b'{');
                let mut key = Vec::new();
                for (k, e) in (offsets[i] as usize..offsets[i + 1] as usize).enumerate() {
                    if k > 0 {
                        out.push(b',');
                    }
                    if *string_keys {
                        keys.write_json(e, out)?;
                    } else {
                        key.clear();
                        keys.write_json(e, &mut key)?;
                        write_json_string(out, &String::from_utf8_lossy(&key));
                    }
                    out.push(b':');
                    values.write_json_with(e, out, null_fields)?;
                }
                out.push(b'}');
            }
            PlainColumn::Null => out.extend_from_slice(b"null"),
            PlainColumn::Variant(c) => c.write_json(i, out)?,
            PlainColumn::Number(array) | PlainColumn::Text(array) if array.is_null(i) => {
                out.extend_from_slice(b"null")
            }
            PlainColumn::Number(array) => {
                let text =
                    arrow::util::display::array_value_to_string(array, i).unwrap_or_default();
                match text.parse::<f64>() {
                    Ok(x) if x.is_finite() => out.extend_from_slice(text.as_bytes()),
                    _ => write_json_string(out, &text),
                }
            }
            PlainColumn::Text(array) => {
                let text =
                    arrow::util::display::array_value_to_string(array, i).unwrap_or_default();
                write_json_string(out, &text);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        Int32Array, Int64Builder, ListBuilder, MapBuilder, StringArray, StringBuilder, StructArray,
    };
    use arrow::datatypes::{DataType, Field};

    use super::*;

    fn render(array: &ArrayRef) -> Vec<String> {
        let column = PlainColumn::new(array).unwrap();
        (0..array.len())
            .map(|i| {
                let mut out = Vec::new();
                column.write_json(i, &mut out).unwrap();
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    #[test]
    fn lists_are_arrays_and_structs_are_objects() {
        let mut tags = ListBuilder::new(StringBuilder::new());
        tags.values().append_value("x");
        tags.values().append_value("y \"q\"");
        tags.append(true);
        tags.append(false);
        tags.append(true);
        let tags: ArrayRef = Arc::new(tags.finish());
        assert_eq!(render(&tags), [r#"["x","y \"q\""]"#, "null", "[]"]);

        let point: ArrayRef = Arc::new(StructArray::from(vec![
            (
                Arc::new(Field::new("x", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("tags", tags.data_type().clone(), true)),
                tags.clone(),
            ),
        ]));
        assert_eq!(
            render(&point),
            [
                r#"{"x":1,"tags":["x","y \"q\""]}"#,
                r#"{"x":null,"tags":null}"#,
                r#"{"x":3,"tags":[]}"#
            ]
        );
    }

    /// Unsigned integers and half floats have no Variant type: numbers
    /// still (they were strings, `"3000"`), all 64 bits of a `u64`.
    #[test]
    fn unsigned_integers_and_half_floats_are_numbers() {
        let unsigned: ArrayRef = Arc::new(arrow::array::UInt64Array::from(vec![
            Some(3000),
            None,
            Some(u64::MAX),
        ]));
        assert_eq!(render(&unsigned), ["3000", "null", "18446744073709551615"]);
        let small: ArrayRef = Arc::new(arrow::array::UInt8Array::from(vec![255]));
        assert_eq!(render(&small), ["255"]);
        type F16 = <arrow::datatypes::Float16Type as arrow::datatypes::ArrowPrimitiveType>::Native;
        let half: ArrayRef = Arc::new(arrow::array::Float16Array::from(vec![
            F16::from_f32(1.5),
            F16::NAN,
            F16::INFINITY,
        ]));
        assert_eq!(render(&half), ["1.5", r#""NaN""#, r#""inf""#]);
    }

    #[test]
    fn maps_are_objects_with_keys_quoted_when_not_strings() {
        let mut by_name = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        by_name.keys().append_value("a");
        by_name.values().append_value(1);
        by_name.append(true).unwrap();
        let by_name: ArrayRef = Arc::new(by_name.finish());
        assert_eq!(render(&by_name), [r#"{"a":1}"#]);

        let mut by_number = MapBuilder::new(None, Int64Builder::new(), StringBuilder::new());
        by_number.keys().append_value(7);
        by_number.values().append_value("seven");
        by_number.append(true).unwrap();
        by_number.append(false).unwrap();
        let by_number: ArrayRef = Arc::new(by_number.finish());
        assert_eq!(render(&by_number), [r#"{"7":"seven"}"#, "null"]);
    }

    #[test]
    fn strings_stay_strings() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
        assert_eq!(render(&s), [r#""a""#, "null"]);
    }
}
