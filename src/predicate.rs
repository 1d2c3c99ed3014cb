//! Row filters: `PATH OP LITERAL`, e.g. `$.user.id == 42` or
//! `$.event = "click"`.

use std::cmp::Ordering;

use arrow::array::{Array, BooleanArray, StructArray};

use crate::error::{Error, ErrorKind, Result};
use crate::get::{ResultColumn, variant_get_natural};
use crate::json::json_to_variant;
use crate::path::VariantPath;
use crate::variant::{VariantDecimal, VariantRef};

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=` or `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    fn holds(self, ordering: Ordering) -> bool {
        match self {
            Op::Eq => ordering == Ordering::Equal,
            Op::Ne => ordering != Ordering::Equal,
            Op::Lt => ordering == Ordering::Less,
            Op::Le => ordering != Ordering::Greater,
            Op::Gt => ordering == Ordering::Greater,
            Op::Ge => ordering != Ordering::Less,
        }
    }
}

/// The right-hand side of a predicate: a JSON scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer, or a number with a fraction and no exponent (exact).
    Number(VariantDecimal),
    /// A number with an exponent.
    Double(f64),
    /// A string.
    String(String),
    /// A boolean.
    Bool(bool),
}

/// `PATH OP LITERAL`: true for rows whose value at the path compares so
/// with the literal. Numbers compare by value across integer, decimal and
/// floating types; strings by bytes; a missing or null value, or one of
/// another kind, never passes.
///
/// ```
/// use vshred::predicate::{Op, Predicate};
/// let p: Predicate = "$.price >= 9.99".parse()?;
/// assert_eq!(p.op, Op::Ge);
/// assert_eq!(p.path.to_string(), "$.price");
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Predicate {
    /// The path compared.
    pub path: VariantPath,
    /// The comparison.
    pub op: Op,
    /// The value compared with.
    pub literal: Literal,
}

impl Predicate {
    /// Parses `PATH OP LITERAL`; the literal is JSON (`42`, `1.5`,
    /// `"text"`, `true`).
    pub fn parse(text: &str) -> Result<Predicate> {
        let err = |m: &str| Error::new(ErrorKind::Path, format!("predicate {text:?}: {m}"));
        let (at, op_len, op) = ["==", "!=", "<=", ">=", "=", "<", ">"]
            .iter()
            .filter_map(|o| text.find(o).map(|i| (i, *o)))
            .min_by_key(|&(i, o)| (i, std::cmp::Reverse(o.len())))
            .map(|(i, o)| {
                let op = match o {
                    "==" | "=" => Op::Eq,
                    "!=" => Op::Ne,
                    "<=" => Op::Le,
                    ">=" => Op::Ge,
                    "<" => Op::Lt,
                    _ => Op::Gt,
                };
                (i, o.len(), op)
            })
            .ok_or_else(|| err("expected an operator: = == != < <= > >="))?;
        let path = VariantPath::parse(text[..at].trim())?;
        let literal_text = text[at + op_len..].trim();
        let (m, v) = json_to_variant(literal_text.as_bytes())
            .map_err(|e| err(&format!("the literal must be JSON ({e})")))?;
        let v = VariantRef::try_new(&m, &v)?;
        let literal = if let Some(d) = v.as_decimal() {
            Literal::Number(d)
        } else if let Some(f) = v.as_f64() {
            Literal::Double(f)
        } else if let Some(s) = v.as_str() {
            Literal::String(s.to_string())
        } else if let Some(b) = v.as_bool() {
            Literal::Bool(b)
        } else {
            return Err(err("the literal must be a number, a string or a boolean"));
        };
        Ok(Predicate { path, op, literal })
    }

    /// Whether `v` passes.
    pub fn matches(&self, v: &VariantRef<'_>) -> bool {
        compare(v, &self.literal).is_some_and(|o| self.op.holds(o))
    }

    /// Evaluates the predicate on every row of a Variant column.
    pub fn evaluate(&self, column: &StructArray) -> Result<BooleanArray> {
        let values = variant_get_natural(column, &self.path)?;
        let values = ResultColumn::try_new(&values)?;
        (0..column.len())
            .map(|i| Ok(Some(values.get(i)?.is_some_and(|v| self.matches(&v)))))
            .collect()
    }
}

impl std::str::FromStr for Predicate {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Predicate::parse(s)
    }
}

/// How a value compares with a literal; `None` when not comparable.
pub fn compare(v: &VariantRef<'_>, literal: &Literal) -> Option<Ordering> {
    match literal {
        Literal::Number(n) => match (v.as_decimal(), v.as_f64()) {
            (Some(d), _) => Some(d.cmp(n)),
            (_, Some(f)) => f.partial_cmp(&n.to_f64()),
            _ => None,
        },
        Literal::Double(x) => match (v.as_decimal(), v.as_f64()) {
            (Some(d), _) => d.to_f64().partial_cmp(x),
            (_, Some(f)) => f.partial_cmp(x),
            _ => None,
        },
        Literal::String(s) => v.as_str().map(|x| x.as_bytes().cmp(s.as_bytes())),
        Literal::Bool(b) => v.as_bool().map(|x| x.cmp(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_operators_and_literals() {
        for (text, op, literal) in [
            ("$.a == 1", Op::Eq, Literal::Number(VariantDecimal::from(1))),
            (
                "$.a=1.50",
                Op::Eq,
                Literal::Number(VariantDecimal::try_new(150, 2).unwrap()),
            ),
            ("a != \"x y\"", Op::Ne, Literal::String("x y".into())),
            ("$.a <= 1e3", Op::Le, Literal::Double(1000.0)),
            ("$.a>=true", Op::Ge, Literal::Bool(true)),
            (
                "$.a < -2",
                Op::Lt,
                Literal::Number(VariantDecimal::from(-2)),
            ),
            ("$.a > 0", Op::Gt, Literal::Number(VariantDecimal::from(0))),
        ] {
            let p = Predicate::parse(text).unwrap();
            assert_eq!((p.op, p.literal), (op, literal), "{text}");
        }
    }

    #[test]
    fn bad_predicates_say_why() {
        for (text, message) in [
            ("$.a 1", "expected an operator"),
            ("$.a == x", "the literal must be JSON"),
            ("$.a == [1]", "must be a number, a string or a boolean"),
            ("$. == 1", "expected a field name"),
        ] {
            let err = Predicate::parse(text).unwrap_err();
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn numbers_compare_by_value_across_types() {
        let p = Predicate::parse("$ == 1.5").unwrap();
        for (json, passes) in [
            ("1.50", true),
            ("1.5e0", true),
            ("2", false),
            ("\"1.5\"", false),
        ] {
            let (m, v) = json_to_variant(json.as_bytes()).unwrap();
            assert_eq!(
                p.matches(&VariantRef::try_new(&m, &v).unwrap()),
                passes,
                "{json}"
            );
        }
    }
}
