//! The Parquet and Arrow schema of Variant columns.

use std::sync::Arc;

use ::parquet::basic::{ConvertedType, LogicalType, Repetition, TimeUnit, Type as PhysicalType};
use ::parquet::schema::types::{Type, TypePtr};
use arrow::datatypes::{DataType, Field};

use crate::error::{Error, ErrorKind, Result};
use crate::shred::{ShreddingSchema, check_variant_shape};
pub use crate::shred::{VARIANT_EXTENSION_NAME, is_variant_field, variant_field};

/// How typed decimal columns are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DecimalMode {
    /// The spec's default: INT32 for precision <= 9, INT64 for <= 18,
    /// FIXED_LEN_BYTE_ARRAY above.
    #[default]
    Int,
    /// FIXED_LEN_BYTE_ARRAY of the minimal length for every precision, as
    /// Spark's legacy format and Hudi write them.
    Flba,
}

impl std::str::FromStr for DecimalMode {
    type Err = Error;

    /// `int` or `flba`.
    fn from_str(s: &str) -> Result<DecimalMode> {
        match s {
            "int" => Ok(DecimalMode::Int),
            "flba" => Ok(DecimalMode::Flba),
            other => Err(Error::from_message(format!("{other:?} is not int or flba"))),
        }
    }
}

/// The Parquet group of a Variant column, annotated `VARIANT(1)`:
///
/// ```text
/// optional group NAME (VARIANT(1)) {
///   required binary metadata;
///   required binary value;          -- optional when shredded
///   optional ... typed_value;       -- when shredded
/// }
/// ```
pub fn variant_group(
    name: &str,
    schema: &ShreddingSchema,
    decimals: DecimalMode,
) -> Result<TypePtr> {
    let mut fields = vec![binary("metadata", Repetition::REQUIRED)?];
    let value_repetition = if schema.is_typed() {
        Repetition::OPTIONAL
    } else {
        Repetition::REQUIRED
    };
    fields.push(binary("value", value_repetition)?);
    if let Some(typed) = typed_value(schema, decimals)? {
        fields.push(typed);
    }
    group(
        name,
        Repetition::OPTIONAL,
        Some(LogicalType::variant(Some(1))),
        fields,
    )
}

/// `converted`, the parquet crate's type for ordinary column `field`, with
/// each Variant nested in it (a struct's field, a list's element, a map's
/// value: `COPY (SELECT named_struct('s', v))`) annotated `VARIANT(1)` as
/// a top-level Variant column's group is. The parquet crate converts the
/// Arrow extension type to a plain group, which other engines would read
/// as a struct of two binaries. `path` names the column in errors.
pub fn annotate_nested_variants(field: &Field, converted: TypePtr, path: &str) -> Result<TypePtr> {
    if !converted.is_group() {
        return Ok(converted);
    }
    let info = converted.get_basic_info();
    // By shape too: SQL's struct and list functions drop their fields'
    // extension types.
    let variant = is_variant_field(field);
    if variant {
        check_variant_shape(path, field.data_type())?;
    }
    // The Arrow fields the group's fields were converted from, in order,
    // with the names errors give them: a list's group holds one repeated
    // group of the element, a map's the repeated group of its entries.
    let children: Vec<(Field, String)> = match field.data_type() {
        DataType::Struct(fields) => fields
            .iter()
            .map(|f| (f.as_ref().clone(), format!("{path}.{}", f.name())))
            .collect(),
        DataType::List(element)
        | DataType::LargeList(element)
        | DataType::FixedSizeList(element, _) => {
            let repeated = DataType::Struct(vec![element.clone()].into());
            vec![(Field::new("list", repeated, false), path.to_string())]
        }
        DataType::Map(entries, _) => vec![(entries.as_ref().clone(), path.to_string())],
        _ => return Ok(converted),
    };
    let fields = converted.get_fields();
    if fields.len() != children.len() {
        // Not a shape the parquet crate converts to; left as converted.
        return Ok(converted);
    }
    let fields = fields
        .iter()
        .zip(&children)
        .map(|(child, (arrow, path))| annotate_nested_variants(arrow, child.clone(), path))
        .collect::<Result<Vec<_>>>()?;
    let logical = match variant {
        true => Some(LogicalType::variant(Some(1))),
        false => info.logical_type_ref().cloned(),
    };
    let mut group = Type::group_type_builder(info.name())
        .with_repetition(info.repetition())
        .with_converted_type(if variant {
            ConvertedType::NONE
        } else {
            info.converted_type()
        })
        .with_logical_type(logical)
        .with_fields(fields);
    if info.has_id() {
        group = group.with_id(Some(info.id()));
    }
    build(group.build())
}

/// `value` and `typed_value` of an object field or array element.
fn slot(name: &str, schema: &ShreddingSchema, decimals: DecimalMode) -> Result<TypePtr> {
    let mut fields = vec![binary("value", Repetition::OPTIONAL)?];
    if let Some(typed) = typed_value(schema, decimals)? {
        fields.push(typed);
    }
    group(name, Repetition::REQUIRED, None, fields)
}

fn typed_value(schema: &ShreddingSchema, decimals: DecimalMode) -> Result<Option<TypePtr>> {
    use ShreddingSchema as S;
    const NAME: &str = "typed_value";
    let primitive = |physical, logical: Option<LogicalType>| -> Result<TypePtr> {
        build(
            Type::primitive_type_builder(NAME, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build(),
        )
    };
    let int = |bits| Some(LogicalType::integer(bits, true));
    Ok(Some(match schema {
        S::Variant => return Ok(None),
        S::Boolean => primitive(PhysicalType::BOOLEAN, None)?,
        S::Int8 => primitive(PhysicalType::INT32, int(8))?,
        S::Int16 => primitive(PhysicalType::INT32, int(16))?,
        S::Int32 => primitive(PhysicalType::INT32, None)?,
        S::Int64 => primitive(PhysicalType::INT64, None)?,
        S::Float => primitive(PhysicalType::FLOAT, None)?,
        S::Double => primitive(PhysicalType::DOUBLE, None)?,
        S::Decimal { precision, scale } => {
            let (physical, length) = match (decimals, precision) {
                (DecimalMode::Int, 1..=9) => (PhysicalType::INT32, -1),
                (DecimalMode::Int, 10..=18) => (PhysicalType::INT64, -1),
                _ => (
                    PhysicalType::FIXED_LEN_BYTE_ARRAY,
                    decimal_length(*precision) as i32,
                ),
            };
            build(
                Type::primitive_type_builder(NAME, physical)
                    .with_repetition(Repetition::OPTIONAL)
                    .with_length(length)
                    .with_precision(*precision as i32)
                    .with_scale(*scale as i32)
                    .with_logical_type(Some(LogicalType::decimal(*scale as i32, *precision as i32)))
                    .build(),
            )?
        }
        S::Date => primitive(PhysicalType::INT32, Some(LogicalType::Date))?,
        S::Time => primitive(
            PhysicalType::INT64,
            Some(LogicalType::time(false, TimeUnit::MICROS)),
        )?,
        S::Timestamp { utc, nanos } => primitive(
            PhysicalType::INT64,
            Some(LogicalType::timestamp(
                *utc,
                if *nanos {
                    TimeUnit::NANOS
                } else {
                    TimeUnit::MICROS
                },
            )),
        )?,
        S::Binary => primitive(PhysicalType::BYTE_ARRAY, None)?,
        S::String => primitive(PhysicalType::BYTE_ARRAY, Some(LogicalType::String))?,
        S::Uuid => build(
            Type::primitive_type_builder(NAME, PhysicalType::FIXED_LEN_BYTE_ARRAY)
                .with_repetition(Repetition::OPTIONAL)
                .with_length(16)
                .with_logical_type(Some(LogicalType::Uuid))
                .build(),
        )?,
        S::Object(fields) => group(
            NAME,
            Repetition::OPTIONAL,
            None,
            fields
                .iter()
                .map(|(name, f)| slot(name, f, decimals))
                .collect::<Result<_>>()?,
        )?,
        S::Array(element) => {
            let list = group(
                "list",
                Repetition::REPEATED,
                None,
                vec![slot("element", element, decimals)?],
            )?;
            group(
                NAME,
                Repetition::OPTIONAL,
                Some(LogicalType::List),
                vec![list],
            )?
        }
    }))
}

/// The fewest bytes of a two's complement FIXED_LEN_BYTE_ARRAY that hold
/// every `precision`-digit number.
pub(crate) fn decimal_length(precision: u8) -> usize {
    (1..=16)
        .find(|&n| {
            // The largest value of n bytes is 2^(8n-1) - 1.
            let max = (1u128 << (8 * n - 1)) - 1;
            max >= 10u128.pow(precision as u32) - 1
        })
        .unwrap_or(16)
}

fn binary(name: &str, repetition: Repetition) -> Result<TypePtr> {
    build(
        Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
            .with_repetition(repetition)
            .build(),
    )
}

fn group(
    name: &str,
    repetition: Repetition,
    logical: Option<LogicalType>,
    fields: Vec<TypePtr>,
) -> Result<TypePtr> {
    build(
        Type::group_type_builder(name)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .with_fields(fields)
            .build(),
    )
}

fn build(t: ::parquet::errors::Result<Type>) -> Result<TypePtr> {
    t.map(Arc::new)
        .map_err(|e| Error::new(ErrorKind::Schema, format!("Parquet schema: {e}")))
}

/// The Parquet leaf path of a Variant path's shredded `typed_value`, e.g.
/// `v` + `["a", "b"]` -> `v.typed_value.a.typed_value.b.typed_value`.
pub fn typed_value_path(column: &str, fields: &[&str]) -> Vec<String> {
    let mut path = vec![column.to_string(), "typed_value".to_string()];
    for f in fields {
        path.push(f.to_string());
        path.push("typed_value".to_string());
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::parquet::schema::printer::print_schema;

    fn printed(schema: &str, mode: DecimalMode) -> String {
        let schema: ShreddingSchema = schema.parse().unwrap();
        let group = variant_group("v", &schema, mode).unwrap();
        let mut out = Vec::new();
        print_schema(&mut out, &group);
        String::from_utf8(out).unwrap()
    }

    /// The parquet crate's type for ordinary column `column`.
    fn converted(column: &Field) -> TypePtr {
        let schema = arrow::datatypes::Schema::new(vec![column.clone()]);
        let converted = ::parquet::arrow::ArrowSchemaConverter::new().convert(&schema);
        converted.unwrap().root_schema().get_fields()[0].clone()
    }

    #[test]
    fn variants_nested_in_structs_lists_and_maps_are_annotated_as_top_level_ones_are() {
        let variant = || variant_field("item", &"\"variant\"".parse().unwrap());
        let entries = Field::new(
            "entries",
            DataType::Struct(
                vec![
                    Field::new("key", DataType::Utf8, false),
                    variant().with_name("value"),
                ]
                .into(),
            ),
            false,
        );
        // Not a Variant: its value is not binary.
        let lookalike = Field::new(
            "look",
            DataType::Struct(
                vec![
                    Field::new("metadata", DataType::Binary, false),
                    Field::new("value", DataType::Int64, false),
                ]
                .into(),
            ),
            true,
        );
        let column = Field::new(
            "t",
            DataType::Struct(
                vec![
                    variant().with_name("s"),
                    Field::new("l", DataType::List(variant().into()), true),
                    Field::new("m", DataType::Map(entries.into(), false), true),
                    lookalike,
                ]
                .into(),
            ),
            true,
        );
        let converted = converted(&column);
        let annotated = annotate_nested_variants(&column, converted, "t").unwrap();
        let mut out = Vec::new();
        print_schema(&mut out, &annotated);
        let text = String::from_utf8(out).unwrap();
        for group in ["s", "item", "value"] {
            assert!(
                text.contains(&format!("group {group} (VARIANT(Some(1))) {{")),
                "{group}: {text}"
            );
        }
        assert_eq!(text.matches("VARIANT").count(), 3, "{text}");
        assert!(text.contains("group l (LIST)"), "{text}");
        assert!(text.contains("group m (MAP)"), "{text}");
    }

    #[test]
    fn a_nested_variant_of_the_wrong_shape_is_named() {
        let stray = Field::new(
            "s",
            DataType::Struct(
                vec![
                    Field::new("metadata", DataType::Binary, false),
                    Field::new("value", DataType::Binary, false),
                    Field::new("extra", DataType::Int8, true),
                ]
                .into(),
            ),
            true,
        )
        .with_metadata(
            variant_field("s", &"\"variant\"".parse().unwrap())
                .metadata()
                .clone(),
        );
        let column = Field::new("t", DataType::Struct(vec![stray].into()), true);
        let converted = converted(&column);
        let error = annotate_nested_variants(&column, converted, "t").unwrap_err();
        assert!(error.to_string().contains("t.s.extra"), "{error}");
    }

    #[test]
    fn decimal_length_is_minimal() {
        for (precision, bytes) in [
            (1, 1),
            (2, 1),
            (3, 2),
            (4, 2),
            (9, 4),
            (10, 5),
            (18, 8),
            (19, 9),
            (38, 16),
        ] {
            assert_eq!(decimal_length(precision), bytes, "precision {precision}");
        }
    }

    #[test]
    fn decimals_follow_the_mode() {
        let int = printed(
            r#"{"a":"decimal(9,1)","b":"decimal(18,1)","c":"decimal(38,2)"}"#,
            DecimalMode::Int,
        );
        assert!(
            int.contains("OPTIONAL INT32 typed_value (DECIMAL(9,1))"),
            "{int}"
        );
        assert!(
            int.contains("OPTIONAL INT64 typed_value (DECIMAL(18,1))"),
            "{int}"
        );
        assert!(
            int.contains("OPTIONAL FIXED_LEN_BYTE_ARRAY (16) typed_value (DECIMAL(38,2))"),
            "{int}"
        );
        let flba = printed(r#"{"b":"decimal(18,1)"}"#, DecimalMode::Flba);
        assert!(
            flba.contains("OPTIONAL FIXED_LEN_BYTE_ARRAY (8) typed_value (DECIMAL(18,1))"),
            "{flba}"
        );
    }

    #[test]
    fn group_is_annotated_and_laid_out_as_the_spec_says() {
        let text = printed(r#"{"a":"int8","t":["string"]}"#, DecimalMode::Int);
        assert!(text.contains("OPTIONAL group v (VARIANT"), "{text}");
        assert!(text.contains("REQUIRED BYTE_ARRAY metadata;"), "{text}");
        assert!(text.contains("OPTIONAL BYTE_ARRAY value;"), "{text}");
        assert!(text.contains("REQUIRED group a {"), "{text}");
        assert!(
            text.contains("OPTIONAL INT32 typed_value (INTEGER(8,true));"),
            "{text}"
        );
        assert!(
            text.contains("OPTIONAL group typed_value (LIST) {"),
            "{text}"
        );
        assert!(text.contains("REPEATED group list {"), "{text}");
        assert!(text.contains("REQUIRED group element {"), "{text}");
        let unshredded = printed(r#""variant""#, DecimalMode::Int);
        assert!(
            unshredded.contains("REQUIRED BYTE_ARRAY value;"),
            "{unshredded}"
        );
    }
}
