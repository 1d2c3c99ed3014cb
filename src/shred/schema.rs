//! The shredding schema: which parts of a Variant get typed columns.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, TimeUnit};

use crate::error::{Error, ErrorKind, Result};

/// The Arrow extension name of a Variant column (the canonical extension
/// type), so other Arrow tools recognise it.
pub const VARIANT_EXTENSION_NAME: &str = "arrow.parquet.variant";

/// The Arrow field of a Variant column: a struct of `metadata`, `value` and
/// `typed_value`, tagged with the `arrow.parquet.variant` extension type.
pub fn variant_field(name: &str, schema: &ShreddingSchema) -> Field {
    Field::new(name, schema.column_type(), true).with_metadata(HashMap::from([
        (
            "ARROW:extension:name".to_string(),
            VARIANT_EXTENSION_NAME.to_string(),
        ),
        ("ARROW:extension:metadata".to_string(), String::new()),
    ]))
}

/// Whether an Arrow field is a Variant column: by its extension type, or,
/// when a writer left that out, by the shape: a binary `metadata` and a
/// binary `value` or a `typed_value` (a struct of a string `metadata` and
/// a number `value` is not one).
pub fn is_variant_field(field: &Field) -> bool {
    let binary = |children: &arrow::datatypes::Fields, name: &str| {
        children.find(name).is_some_and(|(_, f)| {
            matches!(
                f.data_type(),
                DataType::Binary | DataType::LargeBinary | DataType::BinaryView
            )
        })
    };
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == VARIANT_EXTENSION_NAME)
        || matches!(field.data_type(), DataType::Struct(children)
            if binary(children, "metadata")
                && (binary(children, "value") || children.find("typed_value").is_some())
                && children.iter().all(|c| VARIANT_PARTS.contains(&c.name().as_str())))
}

/// The children of a Variant column's group.
const VARIANT_PARTS: [&str; 3] = ["metadata", "value", "typed_value"];

/// Checks that a Variant column `name` of this Arrow type has the shape
/// `VariantShredding.md` gives it: its group holds `metadata`, and it and
/// every object field's and array element's group hold `value` and
/// `typed_value` and nothing else (a reader that looked for `typed_value`
/// by name would read a field stored under any other name as missing).
/// The error names the first child out of place.
pub fn check_variant_shape(name: &str, data_type: &DataType) -> Result<()> {
    let DataType::Struct(children) = data_type else {
        return Err(shape_error(format!(
            "{name} is a {data_type}, not a group of metadata, value and typed_value"
        )));
    };
    if children.find("metadata").is_none() {
        return Err(shape_error(format!("{name} has no metadata")));
    }
    check_slot(name, children, &VARIANT_PARTS)
}

/// Checks a group of `value` and `typed_value` (and, for the column's own,
/// `metadata`) at `path`.
fn check_slot(path: &str, children: &Fields, parts: &[&str]) -> Result<()> {
    if let Some(stray) = children
        .iter()
        .find(|c| !parts.contains(&c.name().as_str()))
    {
        return Err(shape_error(format!(
            "{path}.{} is not a part of a shredded Variant (its groups hold value and typed_value)",
            stray.name()
        )));
    }
    let typed = children.find("typed_value");
    if typed.is_none() && children.find("value").is_none() {
        return Err(shape_error(format!(
            "{path} has neither value nor typed_value"
        )));
    }
    let Some((_, typed)) = typed else {
        return Ok(());
    };
    let slot = |path: String, t: &DataType| match t {
        DataType::Struct(children) => check_slot(&path, children, &["value", "typed_value"]),
        other => Err(shape_error(format!(
            "{path} is a {other}, not a group of value and typed_value"
        ))),
    };
    match typed.data_type() {
        DataType::Struct(fields) => fields
            .iter()
            .try_for_each(|f| slot(format!("{path}.typed_value.{}", f.name()), f.data_type())),
        DataType::List(element) | DataType::LargeList(element) => slot(
            format!("{path}.typed_value.list.{}", element.name()),
            element.data_type(),
        ),
        _ => Ok(()),
    }
}

fn shape_error(message: String) -> Error {
    Error::new(
        ErrorKind::Parquet,
        format!("not a shredded Variant column: {message}"),
    )
}

/// The `typed_value` layout of one Variant slot (a column, an object field
/// or an array element), as `VariantShredding.md` defines it.
///
/// [`ShreddingSchema::Variant`] means no `typed_value`: the slot keeps every
/// value in its Variant-encoded `value` column. Object fields are kept in
/// name order and are unique.
///
/// The schema has a small JSON form that users can keep in a file:
///
/// ```
/// use vshred::shred::ShreddingSchema;
/// let schema: ShreddingSchema =
///     r#"{"f0":"int64","f2":"decimal(18,1)","nested":{"a":"int64"},"tags":["string"]}"#.parse()?;
/// assert_eq!(schema.field("f2"), Some(&ShreddingSchema::Decimal { precision: 18, scale: 1 }));
/// assert_eq!(
///     schema.to_string(),
///     r#"{"f0":"int64","f2":"decimal(18,1)","nested":{"a":"int64"},"tags":["string"]}"#
/// );
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShreddingSchema {
    /// No typed column: values stay Variant-encoded in `value`.
    Variant,
    /// BOOLEAN.
    Boolean,
    /// INT32 annotated INT(8, true).
    Int8,
    /// INT32 annotated INT(16, true).
    Int16,
    /// INT32.
    Int32,
    /// INT64.
    Int64,
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(precision, scale), `1 <= precision <= 38`, `scale <= precision`.
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// DATE (INT32 days).
    Date,
    /// TIME(false, MICROS).
    Time,
    /// TIMESTAMP(utc, MICROS or NANOS).
    Timestamp {
        /// Adjusted to UTC (a Variant `timestamp`) or not (`timestamp_ntz`).
        utc: bool,
        /// Nanoseconds rather than microseconds.
        nanos: bool,
    },
    /// BYTE_ARRAY.
    Binary,
    /// BYTE_ARRAY annotated STRING.
    String,
    /// FIXED_LEN_BYTE_ARRAY(16) annotated UUID.
    Uuid,
    /// A group of shredded fields, in name order.
    Object(Vec<(String, ShreddingSchema)>),
    /// A LIST whose elements have this layout.
    Array(Box<ShreddingSchema>),
}

/// Whether a field called `name` may have a column of its own: not `""`,
/// which would name a Parquet column with nothing, a file DuckDB 2.0
/// refuses to read.
pub fn is_shreddable_name(name: &str) -> bool {
    !name.is_empty()
}

impl ShreddingSchema {
    /// An object layout from fields in any order; fails on a duplicate name,
    /// on no fields (Parquet has no empty group) and on a field named `""`
    /// ([`is_shreddable_name`]).
    pub fn object(fields: impl IntoIterator<Item = (String, ShreddingSchema)>) -> Result<Self> {
        let mut fields: Vec<_> = fields.into_iter().collect();
        if fields.is_empty() {
            return Err(no_fields_error());
        }
        if fields.iter().any(|(name, _)| !is_shreddable_name(name)) {
            return Err(schema_error(
                "a field named \"\" is not shredded: DuckDB reads no Parquet column without a name (its values stay in `value`)".into(),
            ));
        }
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = fields.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(schema_error(format!("field {:?} appears twice", w[0].0)));
        }
        Ok(ShreddingSchema::Object(fields))
    }

    /// Whether an object of the layout has two fields whose names are
    /// equal but for case (`id`, `ID`), which DuckDB 2.0 reads as one.
    pub fn has_fields_equal_but_for_case(&self) -> bool {
        match self {
            ShreddingSchema::Object(fields) => {
                let mut names: Vec<String> = fields.iter().map(|(n, _)| n.to_lowercase()).collect();
                names.sort_unstable();
                names.windows(2).any(|w| w[0] == w[1])
                    || fields
                        .iter()
                        .any(|(_, f)| f.has_fields_equal_but_for_case())
            }
            ShreddingSchema::Array(element) => element.has_fields_equal_but_for_case(),
            _ => false,
        }
    }

    /// Whether there is a typed column at all.
    pub fn is_typed(&self) -> bool {
        !matches!(self, ShreddingSchema::Variant)
    }

    /// The layout of object field `name`, if this is an object that has it.
    pub fn field(&self, name: &str) -> Option<&ShreddingSchema> {
        match self {
            ShreddingSchema::Object(fields) => fields
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .ok()
                .map(|i| &fields[i].1),
            _ => None,
        }
    }

    /// The number of Parquet leaf columns this slot takes, `value` included.
    pub fn leaf_count(&self) -> usize {
        1 + match self {
            ShreddingSchema::Variant => 0,
            ShreddingSchema::Object(fields) => fields.iter().map(|(_, f)| f.leaf_count()).sum(),
            ShreddingSchema::Array(element) => element.leaf_count(),
            _ => 1,
        }
    }

    /// The Arrow type of `typed_value`; `None` for [`ShreddingSchema::Variant`].
    pub fn typed_value_type(&self) -> Option<DataType> {
        use ShreddingSchema as S;
        Some(match self {
            S::Variant => return None,
            S::Boolean => DataType::Boolean,
            S::Int8 => DataType::Int8,
            S::Int16 => DataType::Int16,
            S::Int32 => DataType::Int32,
            S::Int64 => DataType::Int64,
            S::Float => DataType::Float32,
            S::Double => DataType::Float64,
            S::Decimal { precision, scale } => DataType::Decimal128(*precision, *scale as i8),
            S::Date => DataType::Date32,
            S::Time => DataType::Time64(TimeUnit::Microsecond),
            S::Timestamp { utc, nanos } => DataType::Timestamp(
                if *nanos {
                    TimeUnit::Nanosecond
                } else {
                    TimeUnit::Microsecond
                },
                utc.then(|| Arc::from("UTC")),
            ),
            S::Binary => DataType::Binary,
            S::String => DataType::Utf8,
            S::Uuid => DataType::FixedSizeBinary(16),
            S::Object(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|(name, f)| Field::new(name, DataType::Struct(f.slot_fields()), false))
                    .collect(),
            ),
            S::Array(element) => DataType::List(Arc::new(Field::new(
                "element",
                DataType::Struct(element.slot_fields()),
                false,
            ))),
        })
    }

    /// The children of a slot's group: `value`, then `typed_value` if typed.
    pub(crate) fn slot_fields(&self) -> Fields {
        let mut fields = vec![Field::new("value", DataType::Binary, true)];
        if let Some(t) = self.typed_value_type() {
            fields.push(Field::new("typed_value", t, true));
        }
        Fields::from(fields)
    }

    /// The Arrow type of a whole Variant column with this layout, a
    /// struct of its [`column_fields`](Self::column_fields).
    pub fn column_type(&self) -> DataType {
        DataType::Struct(self.column_fields())
    }

    /// The fields of a whole Variant column with this layout: `metadata`,
    /// `value`, and `typed_value` when typed. `value` is nullable only when
    /// shredded: an unshredded column stores every present row in `value`,
    /// as the spec's `required binary value`.
    pub fn column_fields(&self) -> Fields {
        let mut fields = vec![Field::new("metadata", DataType::Binary, false)];
        fields.extend(self.slot_fields().iter().map(|f| {
            let nullable = f.name() != "value" || self.is_typed();
            f.as_ref().clone().with_nullable(nullable)
        }));
        Fields::from(fields)
    }

    /// The layout of an Arrow Variant column as any writer laid it out (the
    /// inverse of [`column_type`](Self::column_type)): fields are found by
    /// name, and every Arrow width of a type maps to it (`Decimal32` and
    /// `Decimal128` are both decimals, `Utf8View` is a string). `None` when
    /// the type is not a Variant column's.
    pub fn from_column_type(data_type: &DataType) -> Option<ShreddingSchema> {
        match data_type {
            DataType::Struct(fields) if fields.find("metadata").is_some() => {
                Self::from_slot_type(data_type)
            }
            _ => None,
        }
    }

    /// The layout of a slot (a struct of `value` and/or `typed_value`).
    fn from_slot_type(data_type: &DataType) -> Option<ShreddingSchema> {
        let DataType::Struct(fields) = data_type else {
            return None;
        };
        match fields.find("typed_value") {
            None if fields.find("value").is_some() => Some(ShreddingSchema::Variant),
            None => None,
            Some((_, typed)) => Self::from_typed_value_type(typed.data_type()),
        }
    }

    /// The layout a `typed_value` of this Arrow type stands for.
    pub(crate) fn from_typed_value_type(data_type: &DataType) -> Option<ShreddingSchema> {
        use ShreddingSchema as S;
        Some(match data_type {
            DataType::Boolean => S::Boolean,
            DataType::Int8 => S::Int8,
            DataType::Int16 => S::Int16,
            DataType::Int32 => S::Int32,
            DataType::Int64 => S::Int64,
            DataType::Float32 => S::Float,
            DataType::Float64 => S::Double,
            DataType::Decimal32(p, s)
            | DataType::Decimal64(p, s)
            | DataType::Decimal128(p, s)
            | DataType::Decimal256(p, s) => S::Decimal {
                precision: *p,
                scale: u8::try_from(*s).ok()?,
            },
            DataType::Date32 => S::Date,
            DataType::Time64(TimeUnit::Microsecond) => S::Time,
            DataType::Timestamp(unit @ (TimeUnit::Microsecond | TimeUnit::Nanosecond), tz) => {
                S::Timestamp {
                    utc: tz.is_some(),
                    nanos: *unit == TimeUnit::Nanosecond,
                }
            }
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => S::Binary,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => S::String,
            DataType::FixedSizeBinary(16) => S::Uuid,
            DataType::Struct(fields) => {
                let fields = fields
                    .iter()
                    .map(|f| Some((f.name().clone(), Self::from_slot_type(f.data_type())?)))
                    .collect::<Option<Vec<_>>>()?;
                return S::object(fields).ok();
            }
            DataType::List(element) | DataType::LargeList(element) => {
                S::Array(Box::new(Self::from_slot_type(element.data_type())?))
            }
            _ => return None,
        })
    }

    /// Parses the JSON form: a type name (`"int64"`, `"decimal(18,1)"`,
    /// `"variant"` for no typed column, ...), an object of at least one
    /// field, or a one-element array for an array's element layout.
    pub fn from_json(text: &str) -> Result<ShreddingSchema> {
        // serde_json keeps the last of a key given twice, in silence.
        if let Err(e) = crate::json::json_to_variant(text.as_bytes())
            && e.kind() == crate::ErrorKind::DuplicateKey
            && let Some(crate::Position::Json { line, column, .. }) = e.position()
        {
            return Err(schema_error(format!(
                "a field given twice in one object, at line {line}, column {column}"
            )));
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            // serde_json's text ends with the place, which this gives first.
            let text = e.to_string();
            let what = text.split(" at line ").next().unwrap_or(&text);
            let (line, column) = (e.line(), e.column());
            match what {
                "recursion limit exceeded" => schema_error(format!(
                    "nested more than 128 levels deep at line {line}, column {column}: deeper than a file may be (shred fewer levels)"
                )),
                _ => schema_error(format!("not JSON at line {line}, column {column}: {what}")),
            }
        })?;
        from_json_value(&value, "$")
    }

    fn write_json(&self, out: &mut String) {
        match self {
            ShreddingSchema::Object(fields) => {
                out.push('{');
                for (i, (name, f)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(name.as_str()).to_string());
                    out.push(':');
                    f.write_json(out);
                }
                out.push('}');
            }
            ShreddingSchema::Array(element) => {
                out.push('[');
                element.write_json(out);
                out.push(']');
            }
            other => {
                out.push('"');
                out.push_str(&other.type_name());
                out.push('"');
            }
        }
    }

    /// The name of a primitive layout in the JSON form (of an object or
    /// array, Spark's `struct<...>` or `array<...>`), as
    /// [`parse_type_name`](Self::parse_type_name) reads it.
    pub fn type_name(&self) -> String {
        use ShreddingSchema as S;
        match self {
            S::Variant => "variant".into(),
            S::Boolean => "boolean".into(),
            S::Int8 => "int8".into(),
            S::Int16 => "int16".into(),
            S::Int32 => "int32".into(),
            S::Int64 => "int64".into(),
            S::Float => "float".into(),
            S::Double => "double".into(),
            S::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            S::Date => "date".into(),
            S::Time => "time".into(),
            S::Timestamp { utc, nanos } => match (utc, nanos) {
                (true, false) => "timestamp",
                (false, false) => "timestamp_ntz",
                (true, true) => "timestamp_nanos",
                (false, true) => "timestamp_ntz_nanos",
            }
            .into(),
            S::Binary => "binary".into(),
            S::String => "string".into(),
            S::Uuid => "uuid".into(),
            // As Spark names them, for result types of `variant_get`.
            S::Object(fields) => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|(n, t)| format!("{n}:{}", t.type_name()))
                    .collect();
                format!("struct<{}>", fields.join(","))
            }
            S::Array(element) => format!("array<{}>", element.type_name()),
        }
    }

    /// Parses a primitive type name: the JSON form's (`int64`,
    /// `decimal(18,2)`, `timestamp_ntz`, ...), or as Spark and SQL name
    /// them (`bigint`, `int`, `tinyint`, `str`, `varchar`, `json` for the
    /// sub-value itself), in any case; and Spark's nested types,
    /// `struct<a:bigint,b:array<string>>` and `array<bigint>`, as result
    /// types of `variant_get` (a struct's fields keep the order given).
    ///
    /// ```
    /// use vshred::shred::ShreddingSchema;
    /// let user = ShreddingSchema::parse_type_name("struct<name:string, id:bigint>")?;
    /// assert_eq!(
    ///     user,
    ///     ShreddingSchema::Object(vec![
    ///         ("name".into(), ShreddingSchema::String),
    ///         ("id".into(), ShreddingSchema::Int64),
    ///     ])
    /// );
    /// assert_eq!(ShreddingSchema::parse_type_name("BIGINT")?, ShreddingSchema::Int64);
    /// assert_eq!(ShreddingSchema::parse_type_name("str")?, ShreddingSchema::String);
    /// assert_eq!(
    ///     ShreddingSchema::parse_type_name("dec(5)")?,
    ///     ShreddingSchema::Decimal { precision: 5, scale: 0 }
    /// );
    /// let err = ShreddingSchema::parse_type_name("decimal(40,2)").unwrap_err();
    /// assert!(err.message().contains("precision 40 is over 38"), "{err}");
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn parse_type_name(name: &str) -> Result<ShreddingSchema> {
        use ShreddingSchema as S;
        let lower = name.trim().to_ascii_lowercase();
        if let Some(nested) = nested_type(name.trim()) {
            return nested;
        }
        Ok(match lower.as_str() {
            "variant" | "json" => S::Variant,
            "boolean" | "bool" => S::Boolean,
            "int8" | "tinyint" | "byte" => S::Int8,
            "int16" | "smallint" | "short" => S::Int16,
            "int32" | "int" | "integer" => S::Int32,
            "int64" | "bigint" | "long" => S::Int64,
            "float" | "float32" | "real" => S::Float,
            "double" | "float64" => S::Double,
            "date" => S::Date,
            "time" => S::Time,
            "timestamp" | "timestamp_ltz" | "timestamptz" => S::Timestamp {
                utc: true,
                nanos: false,
            },
            "timestamp_ntz" => S::Timestamp {
                utc: false,
                nanos: false,
            },
            "timestamp_nanos" => S::Timestamp {
                utc: true,
                nanos: true,
            },
            "timestamp_ntz_nanos" => S::Timestamp {
                utc: false,
                nanos: true,
            },
            "binary" | "bytes" | "blob" => S::Binary,
            "string" | "str" | "text" | "varchar" => S::String,
            "uuid" => S::Uuid,
            // Spark's default decimal.
            "decimal" | "numeric" | "dec" => S::Decimal {
                precision: 10,
                scale: 0,
            },
            other => decimal_type(other).ok_or_else(|| {
                schema_error(format!(
                    "unknown type {name:?} (expected e.g. int64 or bigint, double, decimal(18,2), string, timestamp, variant)"
                ))
            })??,
        })
    }
}

/// Spark's `struct<name:type, ...>` (names as given, or in backquotes)
/// and `array<type>`, if `text` is one of them.
fn nested_type(text: &str) -> Option<Result<ShreddingSchema>> {
    let inner = |prefix: &str| {
        let head = text.get(..prefix.len())?;
        head.eq_ignore_ascii_case(prefix)
            .then(|| {
                text[prefix.len()..]
                    .trim_start()
                    .strip_prefix('<')?
                    .strip_suffix('>')
            })
            .flatten()
    };
    if let Some(element) = inner("array") {
        return Some(
            ShreddingSchema::parse_type_name(element).map(|e| ShreddingSchema::Array(Box::new(e))),
        );
    }
    let fields = inner("struct")?;
    let mut parsed: Vec<(String, ShreddingSchema)> = Vec::new();
    for field in split_top_level(fields) {
        let field = field.trim();
        let (name, type_name) = match field.strip_prefix('`') {
            Some(quoted) => match quoted.split_once('`') {
                Some((name, rest)) => (name.to_string(), rest.trim_start().strip_prefix(':')),
                None => (String::new(), None),
            },
            None => match field.split_once(':') {
                Some((name, rest)) => (name.trim().to_string(), Some(rest)),
                None => (String::new(), None),
            },
        };
        let Some(type_name) = type_name.filter(|_| !name.is_empty()) else {
            return Some(Err(schema_error(format!(
                "struct field {field:?} in {text:?} is not name:type"
            ))));
        };
        if parsed.iter().any(|(n, _)| *n == name) {
            return Some(Err(schema_error(format!(
                "struct field {name:?} is given twice in {text:?}"
            ))));
        }
        match ShreddingSchema::parse_type_name(type_name) {
            Ok(t) => parsed.push((name, t)),
            Err(e) => return Some(Err(e)),
        }
    }
    if parsed.is_empty() {
        return Some(Err(schema_error(format!(
            "{text:?} has no fields; Parquet has no empty group"
        ))));
    }
    Some(Ok(ShreddingSchema::Object(parsed)))
}

fn no_fields_error() -> Error {
    schema_error("an object layout needs at least one field (Parquet has no empty group)".into())
}

/// The parts of `text` between commas outside `<...>` and `(...)`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() || !parts.is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

/// `decimal(P,S)` (or `numeric(P,S)`, `dec(P,S)`; `decimal(P)` is
/// `decimal(P,0)`, as in Spark): `None` when the text is not of that form,
/// an error when P or S is out of range.
fn decimal_type(text: &str) -> Option<Result<ShreddingSchema>> {
    let args = ["decimal", "numeric", "dec"]
        .iter()
        .find_map(|name| text.strip_prefix(name))?
        .trim_start()
        .strip_prefix('(')?
        .strip_suffix(')')?;
    // `decimal(5)` has no digits after the point, as in Spark.
    let (p, s) = args.split_once(',').unwrap_or((args, "0"));
    let precision: u32 = p.trim().parse().ok()?;
    let scale: u32 = s.trim().parse().ok()?;
    Some(match (precision, scale) {
        (0, _) => Err(schema_error(format!(
            "decimal({precision},{scale}): a precision is at least 1"
        ))),
        (39.., _) => Err(schema_error(format!(
            "decimal({precision},{scale}): precision {precision} is over 38, the most a decimal holds"
        ))),
        (p, s) if s > p => Err(schema_error(format!(
            "decimal({precision},{scale}): the scale {scale} is larger than the precision {precision}"
        ))),
        (p, s) => Ok(ShreddingSchema::Decimal {
            precision: p as u8,
            scale: s as u8,
        }),
    })
}

fn from_json_value(value: &serde_json::Value, path: &str) -> Result<ShreddingSchema> {
    match value {
        serde_json::Value::String(name) => ShreddingSchema::parse_type_name(name)
            .map_err(|e| schema_error(format!("{path}: {}", e.message()))),
        serde_json::Value::Object(fields) if fields.is_empty() => Err(schema_error(format!(
            "{path}: an object of no fields (Parquet has no empty group)"
        ))),
        serde_json::Value::Object(fields) => ShreddingSchema::object(
            fields
                .iter()
                .map(|(name, f)| Ok((name.clone(), from_json_value(f, &format!("{path}.{name}"))?)))
                .collect::<Result<Vec<_>>>()?,
        ),
        serde_json::Value::Array(items) if items.len() == 1 => Ok(ShreddingSchema::Array(
            Box::new(from_json_value(&items[0], &format!("{path}[]"))?),
        )),
        other => Err(schema_error(format!(
            "{path}: expected a type name, an object of fields or a one-element array, found {other}"
        ))),
    }
}

impl std::str::FromStr for ShreddingSchema {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        ShreddingSchema::from_json(s)
    }
}

impl fmt::Display for ShreddingSchema {
    /// The JSON form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write_json(&mut out);
        f.write_str(&out)
    }
}

#[cold]
fn schema_error(message: String) -> Error {
    Error::new(ErrorKind::Schema, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_column_holds_value_and_typed_value_and_nothing_else() {
        let layout: ShreddingSchema = r#"{"a":"int64","tags":[{"x":"string"}]}"#.parse().unwrap();
        assert!(check_variant_shape("v", &layout.column_type()).is_ok());
        // The element's group of `tags`, with a stray child.
        let text = layout.column_type().to_string();
        let strayed: DataType = match layout.column_type() {
            DataType::Struct(top) => {
                let mut top: Vec<Field> = top.iter().map(|f| f.as_ref().clone()).collect();
                let DataType::Struct(fields) = top[2].data_type().clone() else {
                    panic!("{text}")
                };
                let mut fields: Vec<Field> = fields.iter().map(|f| f.as_ref().clone()).collect();
                let element = Field::new(
                    "element",
                    DataType::Struct(Fields::from(vec![Field::new(
                        "typed",
                        DataType::Utf8,
                        true,
                    )])),
                    false,
                );
                let tags = Field::new("typed_value", DataType::List(Arc::new(element)), true);
                let tags_group =
                    Field::new("tags", DataType::Struct(Fields::from(vec![tags])), false);
                fields[1] = tags_group;
                top[2] = Field::new("typed_value", DataType::Struct(Fields::from(fields)), true);
                DataType::Struct(Fields::from(top))
            }
            other => panic!("{other}"),
        };
        let e = check_variant_shape("v", &strayed).unwrap_err();
        assert!(
            e.to_string()
                .contains("v.typed_value.tags.typed_value.list.element.typed is not a part"),
            "{e}"
        );
        let bare = DataType::Struct(Fields::from(vec![Field::new(
            "metadata",
            DataType::Binary,
            false,
        )]));
        let e = check_variant_shape("v", &bare).unwrap_err();
        assert!(
            e.to_string()
                .contains("v has neither value nor typed_value"),
            "{e}"
        );
    }

    #[test]
    fn json_form_round_trips_every_type() {
        let text = r#"{"a":"boolean","b":"int8","c":"int16","d":"int32","e":"int64","f":"float","g":"double","h":"decimal(38,10)","i":"date","j":"time","k":"timestamp","l":"timestamp_ntz","m":"timestamp_nanos","n":"timestamp_ntz_nanos","o":"binary","p":"string","q":"uuid","r":"variant","s":[{"x":["int64"]}]}"#;
        let schema: ShreddingSchema = text.parse().unwrap();
        assert_eq!(schema.to_string(), text);
    }

    #[test]
    fn fields_are_sorted_by_name() {
        let schema: ShreddingSchema = r#"{"b":"int64","a":"string"}"#.parse().unwrap();
        assert_eq!(schema.to_string(), r#"{"a":"string","b":"int64"}"#);
        assert_eq!(schema.field("b"), Some(&ShreddingSchema::Int64));
        assert_eq!(schema.field("c"), None);
    }

    #[test]
    fn bad_json_forms_say_where() {
        for (text, message) in [
            (r#"{"a":"int65"}"#, "$.a: unknown type \"int65\""),
            (
                r#"{"a":{"b":"decimal(3,4)"}}"#,
                "$.a.b: decimal(3,4): the scale 4 is larger than the precision 3",
            ),
            (
                r#"{"a":"decimal(39,0)"}"#,
                "$.a: decimal(39,0): precision 39 is over 38",
            ),
            (
                r#"{"a":"int64",
  "a":"string"}"#,
                "a field given twice in one object, at line 2, column 3",
            ),
            (r#"{"a":["int64","string"]}"#, "$.a: expected a type name"),
            (r#"{"a":1}"#, "$.a: expected a type name"),
            (r#"{"a":{}}"#, "$.a: an object of no fields"),
            (r#"{}"#, "$: an object of no fields"),
            (r#"[{"a":{}}]"#, "$[].a: an object of no fields"),
            (
                r#"{"a":"#,
                "not JSON at line 1, column 5: EOF while parsing",
            ),
            (
                &format!("{}\"int64\"{}", r#"{"a":"#.repeat(140), "}".repeat(140)),
                "nested more than 128 levels deep at line 1, column 636",
            ),
        ] {
            let err = ShreddingSchema::from_json(text).unwrap_err();
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn an_object_of_no_fields_is_refused_in_every_form() {
        for name in ["struct<>", "array<struct< >>"] {
            let err = ShreddingSchema::parse_type_name(name).unwrap_err();
            assert!(err.to_string().contains("has no fields"), "{name}: {err}");
        }
        let err = ShreddingSchema::object(Vec::new()).unwrap_err();
        assert!(err.to_string().contains("at least one field"), "{err}");
    }

    #[test]
    fn layouts_come_back_from_their_arrow_types() {
        let schema: ShreddingSchema = r#"{"a":"int8","b":"decimal(18,1)","c":["string"],"d":{"e":"timestamp_ntz_nanos","f":"variant"},"g":"uuid","h":"date","i":"binary"}"#
            .parse()
            .unwrap();
        assert_eq!(
            ShreddingSchema::from_column_type(&schema.column_type()),
            Some(schema)
        );
        assert_eq!(
            ShreddingSchema::from_column_type(&ShreddingSchema::Variant.column_type()),
            Some(ShreddingSchema::Variant)
        );
        // Other writers' widths: a Decimal32 and a view string are the same layout.
        let other = DataType::Struct(Fields::from(vec![
            Field::new("metadata", DataType::BinaryView, false),
            Field::new(
                "typed_value",
                DataType::Struct(Fields::from(vec![
                    Field::new(
                        "p",
                        DataType::Struct(Fields::from(vec![Field::new(
                            "typed_value",
                            DataType::Decimal32(4, 1),
                            true,
                        )])),
                        false,
                    ),
                    Field::new(
                        "s",
                        DataType::Struct(Fields::from(vec![Field::new(
                            "typed_value",
                            DataType::Utf8View,
                            true,
                        )])),
                        false,
                    ),
                ])),
                true,
            ),
        ]));
        assert_eq!(
            ShreddingSchema::from_column_type(&other),
            Some(r#"{"p":"decimal(4,1)","s":"string"}"#.parse().unwrap())
        );
        assert_eq!(ShreddingSchema::from_column_type(&DataType::Int64), None);
    }

    #[test]
    fn arrow_types_follow_the_spec_layout() {
        let schema: ShreddingSchema = r#"{"a":"int64","t":["string"]}"#.parse().unwrap();
        let DataType::Struct(column) = schema.column_type() else {
            panic!("a struct")
        };
        let names: Vec<_> = column.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["metadata", "value", "typed_value"]);
        assert!(!column[0].is_nullable());
        let DataType::Struct(fields) = column[2].data_type() else {
            panic!("typed_value of an object is a struct")
        };
        assert_eq!(fields[0].name(), "a");
        assert!(!fields[0].is_nullable(), "field groups are required");
        assert_eq!(schema.leaf_count(), 1 + 2 + 3);
    }
}
