//! The type Spark's `schema_of_variant` gives a Variant value, and the
//! merge `schema_of_variant_agg` folds rows with, printed in Spark's syntax
//! (`OBJECT<a: BIGINT, b: ARRAY<STRING>>`).
//!
//! The rules are Spark 4's: every integer is `BIGINT`; a decimal's
//! precision and scale are the value's own, trailing zeros dropped
//! (`1.50` is `DECIMAL(2,1)`); an
//! array's element type is the merge of its elements' types. Two types
//! merge to the wider number (`BIGINT` and `DECIMAL(p,s)` to a decimal
//! holding both, `DOUBLE` past 38 digits), the wider time (`DATE` and
//! `TIMESTAMP` to `TIMESTAMP`), objects field by field, arrays element by
//! element, `VOID` (null) with anything to the other, and anything else to
//! `VARIANT`. Spark has no case for a time of day or a nanosecond
//! timestamp; they are `TIME` and the microsecond timestamp types here.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::variant::VariantRef;

/// A Spark type of a Variant value.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // Spark's names
pub enum SparkType {
    Void,
    Boolean,
    BigInt,
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    String,
    Binary,
    Date,
    Time,
    Timestamp,
    TimestampNtz,
    Uuid,
    Variant,
    Array(Box<SparkType>),
    /// Fields sorted by name (code points).
    Object(Vec<(String, SparkType)>),
}

/// The most digits a Spark decimal holds.
const MAX_PRECISION: u32 = 38;

impl SparkType {
    /// The type of `value`.
    pub fn of(value: &VariantRef<'_>) -> SparkType {
        use VariantRef as V;
        match value {
            V::Null => SparkType::Void,
            V::Bool(_) => SparkType::Boolean,
            V::Int8(_) | V::Int16(_) | V::Int32(_) | V::Int64(_) => SparkType::BigInt,
            V::Float(_) => SparkType::Float,
            V::Double(_) => SparkType::Double,
            V::Decimal4(d) | V::Decimal8(d) | V::Decimal16(d) => {
                let (mut unscaled, mut scale) = (d.unscaled(), d.scale());
                while scale > 0 && unscaled % 10 == 0 {
                    unscaled /= 10;
                    scale -= 1;
                }
                let digits = if unscaled == 0 {
                    1
                } else {
                    unscaled.unsigned_abs().ilog10() as u8 + 1
                };
                SparkType::Decimal {
                    precision: digits.max(scale).max(1),
                    scale,
                }
            }
            V::String(_) => SparkType::String,
            V::Binary(_) => SparkType::Binary,
            V::Date(_) => SparkType::Date,
            V::TimeNtzMicros(_) => SparkType::Time,
            V::TimestampMicros(_) | V::TimestampNanos(_) => SparkType::Timestamp,
            V::TimestampNtzMicros(_) | V::TimestampNtzNanos(_) => SparkType::TimestampNtz,
            V::Uuid(_) => SparkType::Uuid,
            V::Array(items) => SparkType::Array(Box::new(
                items
                    .iter()
                    .fold(SparkType::Void, |t, item| t.merge(SparkType::of(&item))),
            )),
            // Object fields are stored sorted by name.
            V::Object(fields) => SparkType::Object(
                fields
                    .iter()
                    .map(|(name, v)| (name.to_string(), SparkType::of(&v)))
                    .collect(),
            ),
        }
    }

    /// The type of values of either type, as Spark's `schema_of_variant_agg`
    /// merges them.
    pub fn merge(self, other: SparkType) -> SparkType {
        use SparkType as T;
        match (self, other) {
            (a, b) if a == b => a,
            (T::Void, t) | (t, T::Void) => t,
            (T::BigInt, T::Float) | (T::Float, T::BigInt) => T::Float,
            (T::BigInt | T::Float | T::Decimal { .. }, T::Double)
            | (T::Double, T::BigInt | T::Float | T::Decimal { .. })
            | (T::Decimal { .. }, T::Float)
            | (T::Float, T::Decimal { .. }) => T::Double,
            (T::BigInt, d @ T::Decimal { .. }) | (d @ T::Decimal { .. }, T::BigInt) => {
                wider_decimal(
                    d,
                    T::Decimal {
                        precision: 20,
                        scale: 0,
                    },
                )
            }
            (a @ T::Decimal { .. }, b @ T::Decimal { .. }) => wider_decimal(a, b),
            (T::Timestamp, T::TimestampNtz | T::Date)
            | (T::TimestampNtz | T::Date, T::Timestamp) => T::Timestamp,
            (T::Date, T::TimestampNtz) | (T::TimestampNtz, T::Date) => T::TimestampNtz,
            (T::Array(a), T::Array(b)) => T::Array(Box::new(a.merge(*b))),
            (T::Object(a), T::Object(b)) => T::Object(merge_fields(a, b)),
            _ => T::Variant,
        }
    }
}

/// A decimal holding the integer digits and the scale of both, or a double
/// when that is over 38 digits.
fn wider_decimal(a: SparkType, b: SparkType) -> SparkType {
    let (
        SparkType::Decimal {
            precision: p1,
            scale: s1,
        },
        SparkType::Decimal {
            precision: p2,
            scale: s2,
        },
    ) = (a, b)
    else {
        unreachable!("called with two decimals")
    };
    let scale = s1.max(s2);
    let integer = (p1 - s1).max(p2 - s2);
    if integer as u32 + scale as u32 > MAX_PRECISION {
        SparkType::Double
    } else {
        SparkType::Decimal {
            precision: integer + scale,
            scale,
        }
    }
}

/// The fields of both objects, in name order; a name in both has the merge
/// of its types.
fn merge_fields(
    a: Vec<(String, SparkType)>,
    b: Vec<(String, SparkType)>,
) -> Vec<(String, SparkType)> {
    let mut merged = Vec::with_capacity(a.len().max(b.len()));
    let mut b = b.into_iter().peekable();
    for (name, t) in a {
        while let Some(next) = b.next_if(|(n, _)| *n < name) {
            merged.push(next);
        }
        match b.next_if(|(n, _)| *n == name) {
            Some((_, other)) => merged.push((name, t.merge(other))),
            None => merged.push((name, t)),
        }
    }
    merged.extend(b);
    merged
}

impl fmt::Display for SparkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SparkType::Void => f.write_str("VOID"),
            SparkType::Boolean => f.write_str("BOOLEAN"),
            SparkType::BigInt => f.write_str("BIGINT"),
            SparkType::Float => f.write_str("FLOAT"),
            SparkType::Double => f.write_str("DOUBLE"),
            SparkType::Decimal { precision, scale } => write!(f, "DECIMAL({precision},{scale})"),
            SparkType::String => f.write_str("STRING"),
            SparkType::Binary => f.write_str("BINARY"),
            SparkType::Date => f.write_str("DATE"),
            SparkType::Time => f.write_str("TIME"),
            SparkType::Timestamp => f.write_str("TIMESTAMP"),
            SparkType::TimestampNtz => f.write_str("TIMESTAMP_NTZ"),
            SparkType::Uuid => f.write_str("UUID"),
            SparkType::Variant => f.write_str("VARIANT"),
            SparkType::Array(element) => write!(f, "ARRAY<{element}>"),
            SparkType::Object(fields) => {
                f.write_str("OBJECT<")?;
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    let bare = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if bare {
                        write!(f, "{name}: {t}")?;
                    } else {
                        write!(f, "`{}`: {t}", name.replace('`', "``"))?;
                    }
                }
                f.write_str(">")
            }
        }
    }
}

impl std::str::FromStr for SparkType {
    type Err = Error;

    /// Reads the syntax [`Display`](fmt::Display) writes.
    fn from_str(text: &str) -> Result<SparkType> {
        let mut parser = TypeParser { text, pos: 0 };
        let t = parser.parse()?;
        if parser.pos != text.len() {
            return Err(parser.error("unexpected text after the type"));
        }
        Ok(t)
    }
}

struct TypeParser<'t> {
    text: &'t str,
    pos: usize,
}

impl TypeParser<'_> {
    fn error(&self, what: &str) -> Error {
        Error::new(
            ErrorKind::Schema,
            format!("{what} at byte {} of {:?}", self.pos, self.text),
        )
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.text[self.pos..].starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {token:?}")))
        }
    }

    fn number(&mut self) -> Result<u8> {
        let digits = self.text[self.pos..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let n = self.text[self.pos..self.pos + digits]
            .parse()
            .map_err(|_| self.error("expected a number"))?;
        self.pos += digits;
        Ok(n)
    }

    fn name(&mut self) -> Result<String> {
        if self.eat("`") {
            let mut name = String::new();
            loop {
                let rest = &self.text[self.pos..];
                let end = rest.find('`').ok_or_else(|| self.error("unclosed `"))?;
                name.push_str(&rest[..end]);
                self.pos += end + 1;
                if !self.eat("`") {
                    return Ok(name);
                }
                name.push('`');
            }
        }
        let len = self.text[self.pos..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.text.len() - self.pos);
        if len == 0 {
            return Err(self.error("expected a field name"));
        }
        self.pos += len;
        Ok(self.text[self.pos - len..self.pos].to_string())
    }

    fn parse(&mut self) -> Result<SparkType> {
        // Longer names first where one is a prefix of another.
        for (name, t) in [
            ("VOID", SparkType::Void),
            ("BOOLEAN", SparkType::Boolean),
            ("BIGINT", SparkType::BigInt),
            ("FLOAT", SparkType::Float),
            ("DOUBLE", SparkType::Double),
            ("STRING", SparkType::String),
            ("BINARY", SparkType::Binary),
            ("DATE", SparkType::Date),
            ("TIMESTAMP_NTZ", SparkType::TimestampNtz),
            ("TIMESTAMP", SparkType::Timestamp),
            ("TIME", SparkType::Time),
            ("UUID", SparkType::Uuid),
            ("VARIANT", SparkType::Variant),
        ] {
            if self.eat(name) {
                return Ok(t);
            }
        }
        if self.eat("DECIMAL(") {
            let precision = self.number()?;
            self.expect(",")?;
            let scale = self.number()?;
            self.expect(")")?;
            return Ok(SparkType::Decimal { precision, scale });
        }
        if self.eat("ARRAY<") {
            let element = self.parse()?;
            self.expect(">")?;
            return Ok(SparkType::Array(Box::new(element)));
        }
        if self.eat("OBJECT<") {
            let mut fields = Vec::new();
            while !self.eat(">") {
                if !fields.is_empty() {
                    self.expect(", ")?;
                }
                let name = self.name()?;
                self.expect(": ")?;
                fields.push((name, self.parse()?));
            }
            return Ok(SparkType::Object(fields));
        }
        Err(self.error("expected a type"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json_to_variant;

    fn type_of(json: &str) -> String {
        let (m, v) = json_to_variant(json.as_bytes()).unwrap();
        SparkType::of(&VariantRef::try_new(&m, &v).unwrap()).to_string()
    }

    fn agg(rows: &[&str]) -> String {
        let t = rows.iter().fold(SparkType::Void, |t, row| {
            let (m, v) = json_to_variant(row.as_bytes()).unwrap();
            t.merge(SparkType::of(&VariantRef::try_new(&m, &v).unwrap()))
        });
        t.to_string()
    }

    /// The expectations of Spark's own tests (`VariantEndToEndSuite`).
    #[test]
    fn types_are_spark_s() {
        for (json, expected) in [
            ("null", "VOID"),
            ("0.01", "DECIMAL(2,2)"),
            ("10.00", "DECIMAL(2,0)"),
            ("9999999999999999999.9999999999999999999", "DECIMAL(38,19)"),
            (
                r#"{"b": {"c": "c"}, "a":["a"]}"#,
                "OBJECT<a: ARRAY<STRING>, b: OBJECT<c: STRING>>",
            ),
            ("[]", "ARRAY<VOID>"),
            ("[null, 1, 1.0]", "ARRAY<DECIMAL(20,0)>"),
            ("[null, 1, 1.1]", "ARRAY<DECIMAL(21,1)>"),
            ("[123456.789, 123.456789]", "ARRAY<DECIMAL(12,6)>"),
            (
                "[1, 11111111111111111111111111111111111111]",
                "ARRAY<DECIMAL(38,0)>",
            ),
            (
                "[1.1, 11111111111111111111111111111111111111]",
                "ARRAY<DOUBLE>",
            ),
            (r#"[1, "1"]"#, "ARRAY<VARIANT>"),
            ("[{}, true]", "ARRAY<VARIANT>"),
            (
                r#"[{"c": ""}, {"a": null}, {"b": 1}]"#,
                "ARRAY<OBJECT<a: VOID, b: BIGINT, c: STRING>>",
            ),
            (
                r#"[{"a": 1, "b": null}, {"b": true, "a": 1E0}]"#,
                "ARRAY<OBJECT<a: DOUBLE, b: BOOLEAN>>",
            ),
        ] {
            assert_eq!(type_of(json), expected, "{json}");
        }
    }

    #[test]
    fn rows_merge_as_spark_s_aggregate_merges_them() {
        assert_eq!(
            agg(&[r#"{"a": [1, 2, 3]}"#, r#"{"a": "banana"}"#]),
            "OBJECT<a: VARIANT>"
        );
        assert_eq!(
            agg(&[r#"{"a": "banana"}"#, r#"{"b": "apple"}"#]),
            "OBJECT<a: STRING, b: STRING>"
        );
        assert_eq!(agg(&[]), "VOID");
        assert_eq!(
            agg(&[
                r#"{"hi":[]}"#,
                r#"{"hi":[{},{}]}"#,
                r#"{"hi":[{"it's":[{"me":[{"a": 1}]}]}]}"#
            ]),
            "OBJECT<hi: ARRAY<OBJECT<`it's`: ARRAY<OBJECT<me: ARRAY<OBJECT<a: BIGINT>>>>>>>"
        );
    }

    #[test]
    fn the_printed_type_parses_back() {
        for text in [
            "VOID",
            "TIMESTAMP_NTZ",
            "OBJECT<`a``b`: ARRAY<DECIMAL(12,6)>, b: OBJECT<>, c: TIME>",
        ] {
            let t: SparkType = text.parse().unwrap();
            assert_eq!(t.to_string(), text);
        }
        assert!("ARRAY<".parse::<SparkType>().is_err());
    }
}
