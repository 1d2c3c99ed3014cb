//! Row filters: comparisons of a path in the Variant column (`$.user.id`)
//! or of an ordinary column (`id`) with a JSON literal, combined with
//! `and`, `or`, `not` and parentheses:
//!
//! ```text
//! $.event == "click" and ($.price >= 9.99 or id in (1, 2, 3))
//! $.user.plan != null
//! not $.flags.beta
//! ```
//!
//! Operators: `=` (or `==`), `!=` (or `<>`), `<`, `<=`, `>`, `>=`,
//! `in (LITERAL, ...)`, `is null`, `is not null` (`== null` and `!= null`
//! say the same). A path starts with `$`; a bare name (or one in
//! backquotes, `` `odd name` ``) is a top-level column. Literals are JSON
//! scalars: numbers, strings, `true`, `false`, `null`.
//!
//! A comparison holds when the value compares so with the literal: numbers
//! by value across integer, decimal and floating types (a double with an
//! exact number as the double nearest that number, so the double `0.1`
//! equals `0.1`; NaN above every number and equal to itself, as in Spark
//! and SQL), strings by bytes,
//! booleans as `false < true`. With a value that is missing, null, or of
//! another kind, a comparison is unknown, as a comparison with SQL's null
//! is: `and`, `or` and `not` follow SQL's three-valued logic, and only a
//! row whose filter is true passes (`not $.qty != 3` passes a row whose
//! `qty` is 3, not one without a `qty`). `is null` passes a missing value,
//! a SQL null and a Variant null. A bare operand, `$.flag`, means
//! `$.flag == true`.
//!
//! A path may be read as a type, `$.price as int64 >= 5`: its value is
//! converted as [`variant_get`] converts it (`1.5` is `1`, `"12"` is `12`;
//! one that does not convert is null), as SQL's typed `variant_get` is. A
//! string compared with a path read as `date` or a timestamp type is
//! converted the same way and compares as an instant
//! (`$.ts as timestamp >= "2024-03-01"`); such comparisons skip nothing by
//! statistics.
//!
//! Row groups and pages are skipped by [`Predicate::may_match`]: the
//! reader says, for each comparison, whether the statistics of its column
//! leave room for a match ([`Comparison::may_match`] does the arithmetic),
//! and `and`, `or` combine the answers; `not` and `is null` skip nothing.

use std::cmp::Ordering;

use arrow::array::{Array, BooleanArray, RecordBatch};
use arrow::datatypes::DataType;

use crate::error::{Error, ErrorKind, Result};
use crate::get::{ResultColumn, variant_get, variant_get_natural};
use crate::path::VariantPath;
use crate::shred::ShreddingSchema;
use crate::variant::{Kind, VariantDecimal, VariantRef, nanos_since_epoch};

mod parse;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=` or `==`
    Eq,
    /// `!=` or `<>`
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

/// The right-hand side of a comparison: a JSON scalar, or an instant
/// that a string stands for beside a date or timestamp read.
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
    /// A date or timestamp: a string compared with a path read as `date`
    /// or a timestamp type (`$.ts as timestamp > "2024-03-01T12:00:00Z"`),
    /// converted as the path's values are.
    Instant {
        /// The string as written, which the filter prints.
        text: String,
        /// The instant, in nanoseconds since the epoch (UTC, or as if UTC).
        nanos: i128,
    },
}

impl Literal {
    /// `text` as an instant of `as_type` (a date or timestamp type),
    /// converted as values read as that type are (`"2024-03-01"` as
    /// `timestamp` is midnight UTC); `None` if it is not one.
    pub fn instant(text: &str, as_type: &ShreddingSchema) -> Option<Literal> {
        let nanos = crate::shred::cast_as(&VariantRef::String(text), as_type)
            .as_ref()
            .and_then(nanos_since_epoch)?;
        Some(Literal::Instant {
            text: text.to_string(),
            nanos,
        })
    }

    /// The kind of value the literal can match.
    pub fn kind(&self) -> Kind {
        match self {
            Literal::Number(_) | Literal::Double(_) => Kind::Number,
            Literal::String(_) => Kind::String,
            Literal::Bool(_) => Kind::Boolean,
            Literal::Instant { .. } => Kind::Instant,
        }
    }
}

impl std::fmt::Display for Literal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = Vec::new();
        match self {
            Literal::Number(d) => return write!(f, "{d}"),
            Literal::Double(v) => crate::json::write_json(&VariantRef::Double(*v), &mut out),
            Literal::String(s) | Literal::Instant { text: s, .. } => {
                crate::json::write_json(&VariantRef::String(s), &mut out)
            }
            Literal::Bool(b) => return write!(f, "{b}"),
        }
        f.write_str(&String::from_utf8_lossy(&out))
    }
}

/// What a comparison reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A path in the Variant column being read.
    Path(VariantPath),
    /// A path in the Variant column converted to a type as
    /// [`variant_get`] converts it (`$.price as int64`; SQL's
    /// `variant_get(v, '$.price', 'bigint')`): `1.5` is `1`, `"12"` is
    /// `12`, and a value that does not convert is null.
    PathAs(VariantPath, ShreddingSchema),
    /// A top-level column, ordinary or Variant (compared whole).
    Column(String),
}

impl Operand {
    /// The top-level column it reads.
    pub fn column(&self) -> Option<&str> {
        match self {
            Operand::Column(name) => Some(name),
            Operand::Path(_) | Operand::PathAs(..) => None,
        }
    }
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Operand::Path(p) => write!(f, "{p}"),
            Operand::PathAs(p, as_type) => write!(f, "{p} as {}", as_type.type_name()),
            // In backquotes unless a bare name (`odd name`).
            Operand::Column(c) if !c.is_empty() && c.bytes().all(parse::is_name_byte) => {
                write!(f, "{c}")
            }
            Operand::Column(c) => write!(f, "`{c}`"),
        }
    }
}

/// `OPERAND OP LITERAL`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What is compared.
    pub operand: Operand,
    /// The comparison.
    pub op: Op,
    /// The value compared with.
    pub literal: Literal,
}

impl Comparison {
    /// The warning that no row can pass it, where every value of its
    /// operand is stored as `kind` and its literal is of another kind;
    /// `None` where the literal is of that kind. One text for a file's
    /// warning and a dataset's, which a dataset's read keeps once.
    pub(crate) fn never_passes(&self, kind: Kind) -> Option<String> {
        (kind != self.literal.kind()).then(|| {
            format!(
                "no row can pass `{self}`: every value of {} is stored as {}, and {} is not (the filter compares values of one kind)",
                self.operand,
                kind.plural(),
                self.literal,
            )
        })
    }
}

impl std::fmt::Display for Comparison {
    /// In the filter syntax it parses from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self.op {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        };
        match self.literal {
            // With an exponent, so that it parses back as a double.
            Literal::Double(d) => write!(f, "{} {op} {d:e}", self.operand),
            _ => write!(f, "{} {op} {}", self.operand, self.literal),
        }
    }
}

impl Comparison {
    /// Whether `v` passes, or `None` when that is unknown (SQL's null): a
    /// Variant null, or a value of another kind than the literal.
    pub fn test(&self, v: &VariantRef<'_>) -> Option<bool> {
        compare(v, &self.literal).map(|o| self.op.holds(o))
    }

    /// Whether a value between `min` and `max` (bounds of an operand's
    /// values, from statistics) may pass; `None` for a bound not known.
    /// Bounds not comparable with the literal rule nothing out.
    pub fn may_match(&self, min: Option<&VariantRef<'_>>, max: Option<&VariantRef<'_>>) -> bool {
        let cmp = |bound: Option<&VariantRef<'_>>| bound.and_then(|b| compare(b, &self.literal));
        let (min, max) = (cmp(min), cmp(max));
        let rules_out = match self.op {
            Op::Eq => min == Some(Ordering::Greater) || max == Some(Ordering::Less),
            Op::Ne => min == Some(Ordering::Equal) && max == Some(Ordering::Equal),
            Op::Lt => matches!(min, Some(Ordering::Greater | Ordering::Equal)),
            Op::Le => min == Some(Ordering::Greater),
            Op::Gt => matches!(max, Some(Ordering::Less | Ordering::Equal)),
            Op::Ge => max == Some(Ordering::Less),
        };
        !rules_out
    }
}

/// A row filter ([the syntax](self)).
///
/// ```
/// use vshred::predicate::{Op, Predicate};
/// let p: Predicate = r#"$.price >= 9.99 and id in (1, 2)"#.parse()?;
/// let Predicate::And(parts) = &p else { panic!() };
/// let Predicate::Compare(price) = &parts[0] else { panic!() };
/// assert_eq!(price.op, Op::Ge);
/// assert_eq!(price.operand.to_string(), "$.price");
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Predicate {
    /// A comparison.
    Compare(Comparison),
    /// The operand is missing, SQL null or Variant null.
    IsNull(Operand),
    /// The negation.
    Not(Box<Predicate>),
    /// All hold.
    And(Vec<Predicate>),
    /// One holds (`in` is an `or` of `==`).
    Or(Vec<Predicate>),
}

impl Predicate {
    /// The predicate with each string compared with an ordinary column of
    /// dates or timestamps read as an instant of the column's type
    /// (`type_of` gives it, `None` for other columns), as a string
    /// compared with a path read `as date` is: `d == "2024-03-05"` on a
    /// `DATE` column. An error names a string that is not one.
    pub fn with_instant_columns(
        &self,
        type_of: &dyn Fn(&str) -> Option<DataType>,
    ) -> Result<Predicate> {
        let each = |ps: &[Predicate]| -> Result<Vec<Predicate>> {
            ps.iter().map(|p| p.with_instant_columns(type_of)).collect()
        };
        Ok(match self {
            Predicate::Compare(
                c @ Comparison {
                    operand: Operand::Column(name),
                    literal: Literal::String(text),
                    ..
                },
            ) => match type_of(name).as_ref().and_then(instant_type) {
                Some(as_type) => Predicate::Compare(Comparison {
                    literal: Literal::instant(text, &as_type).ok_or_else(|| {
                        Error::new(
                            ErrorKind::Usage,
                            format!(
                                "the filter's {}: {}",
                                c,
                                parse::not_an_instant(text, &as_type)
                            ),
                        )
                    })?,
                    ..c.clone()
                }),
                None => self.clone(),
            },
            Predicate::Compare(_) | Predicate::IsNull(_) => self.clone(),
            Predicate::Not(p) => Predicate::Not(Box::new(p.with_instant_columns(type_of)?)),
            Predicate::And(ps) => Predicate::And(each(ps)?),
            Predicate::Or(ps) => Predicate::Or(each(ps)?),
        })
    }

    /// Every comparison in it, in order.
    pub fn comparisons(&self) -> Vec<&Comparison> {
        let mut all = Vec::new();
        self.visit(&mut |p| {
            if let Predicate::Compare(c) = p {
                all.push(c)
            }
        });
        all
    }

    /// Every operand it reads, in order, each once.
    pub fn operands(&self) -> Vec<&Operand> {
        let mut all: Vec<&Operand> = Vec::new();
        self.visit(&mut |p| {
            let operand = match p {
                Predicate::Compare(c) => &c.operand,
                Predicate::IsNull(o) => o,
                _ => return,
            };
            if !all.contains(&operand) {
                all.push(operand);
            }
        });
        all
    }

    fn visit<'p>(&'p self, f: &mut impl FnMut(&'p Predicate)) {
        f(self);
        match self {
            Predicate::Not(p) => p.visit(f),
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| p.visit(f)),
            Predicate::Compare(_) | Predicate::IsNull(_) => {}
        }
    }

    /// Whether a row may pass, given for each comparison (or `in` list)
    /// whether its operand's statistics leave room for it (`leaf`): false
    /// only when the statistics rule every row out.
    pub fn may_match(&self, leaf: &mut impl FnMut(Leaf<'_>) -> bool) -> bool {
        match self {
            Predicate::Compare(c) => leaf(Leaf::Compare(c)),
            Predicate::IsNull(_) | Predicate::Not(_) => true,
            Predicate::And(ps) => ps.iter().all(|p| p.may_match(leaf)),
            Predicate::Or(ps) => match InList::of(ps) {
                Some(list) => leaf(Leaf::In(list)),
                None => ps.iter().any(|p| p.may_match(leaf)),
            },
        }
    }

    /// The rows that may pass, where known: `leaf` gives a comparison's
    /// (or an `in` list's) rows (a page selection, say; `None` when not
    /// known), and `and`, `or` combine them. `None` means every row.
    pub fn select<T>(
        &self,
        leaf: &mut impl FnMut(Leaf<'_>) -> Option<T>,
        and: &impl Fn(T, T) -> T,
        or: &impl Fn(T, T) -> T,
    ) -> Option<T> {
        match self {
            Predicate::Compare(c) => leaf(Leaf::Compare(c)),
            Predicate::IsNull(_) | Predicate::Not(_) => None,
            // Parts without a selection leave the others' rows.
            Predicate::And(ps) => ps
                .iter()
                .filter_map(|p| p.select(leaf, and, or))
                .reduce(and),
            Predicate::Or(ps) => {
                if let Some(list) = InList::of(ps) {
                    return leaf(Leaf::In(list));
                }
                let mut rows = None;
                for p in ps {
                    let part = p.select(leaf, and, or)?;
                    rows = Some(match rows {
                        Some(r) => or(r, part),
                        None => part,
                    });
                }
                rows
            }
        }
    }

    /// Evaluates the predicate on every row of `batch`, whose Variant
    /// column `variant` paths are in.
    pub fn evaluate(&self, batch: &RecordBatch, variant: &str) -> Result<BooleanArray> {
        let values = |operand: &Operand| -> Result<arrow::array::ArrayRef> {
            match operand {
                Operand::Path(path) | Operand::PathAs(path, _) => {
                    let column = batch
                        .column_by_name(variant)
                        .and_then(|c| c.as_any().downcast_ref::<arrow::array::StructArray>())
                        .ok_or_else(|| missing_column(variant))?;
                    match operand {
                        Operand::PathAs(_, as_type) => variant_get(column, path, as_type, false),
                        _ => variant_get_natural(column, path),
                    }
                }
                Operand::Column(name) => match batch.column_by_name(name) {
                    // A column a file lacks is of the Null type, which
                    // has no Variant reader: nulls of another type say
                    // the same.
                    Some(c) if c.data_type() == &arrow::datatypes::DataType::Null => Ok(
                        arrow::array::new_null_array(&arrow::datatypes::DataType::Boolean, c.len()),
                    ),
                    Some(c) => comparable(name, c),
                    None => Err(missing_column(name)),
                },
            }
        };
        let rows = batch.num_rows();
        // Whether each row's value of `operand` passes `test`.
        let each = |operand: &Operand, test: &dyn Fn(Option<VariantRef<'_>>) -> Option<bool>| {
            let array = values(operand)?;
            let values = ResultColumn::try_new(&array).map_err(|e| match operand {
                Operand::Column(name) => Error::new(
                    ErrorKind::Usage,
                    format!(
                        "the filter's column {name} is of type {}, which a filter does not compare",
                        array.data_type()
                    ),
                ),
                _ => e,
            })?;
            (0..rows)
                .map(|i| Ok(test(values.get(i)?)))
                .collect::<Result<BooleanArray>>()
        };
        Ok(match self {
            Predicate::Compare(c) => each(&c.operand, &|v| v.and_then(|v| c.test(&v)))?,
            Predicate::IsNull(operand) => each(operand, &|v| Some(v.is_none_or(|v| v.is_null())))?,
            // An `in` list reads its operand once and looks each value up.
            Predicate::Or(ps) if let Some(list) = InList::of(ps) => {
                each(list.operand, &|v| v.and_then(|v| list.contains(&v)))?
            }
            // Unknown stays unknown, as SQL's three-valued logic has it.
            Predicate::Not(p) => {
                arrow::compute::not(&p.evaluate(batch, variant)?).map_err(arrow_error)?
            }
            Predicate::And(ps) | Predicate::Or(ps) => {
                let mut result: Option<BooleanArray> = None;
                for p in ps {
                    let part = p.evaluate(batch, variant)?;
                    result = Some(match result {
                        None => part,
                        Some(r) if matches!(self, Predicate::And(_)) => {
                            arrow::compute::and_kleene(&r, &part).map_err(arrow_error)?
                        }
                        Some(r) => arrow::compute::or_kleene(&r, &part).map_err(arrow_error)?,
                    });
                }
                result.unwrap_or_else(|| BooleanArray::from(vec![true; rows]))
            }
        })
    }
}

/// The ordinary column `name` as values of a type a Variant has, so that
/// it compares as one: timestamps of seconds or milliseconds (pyarrow's,
/// Spark's `TIMESTAMP_MILLIS`) as microseconds, `Date64` as days,
/// `Time32` as microseconds (which `is null` reads: no literal is a
/// time), unsigned and half-precision numbers widened to a type that
/// holds every value, a dictionary's values. A value the Variant's type
/// cannot hold (milliseconds past the microseconds' range) is an error,
/// where Arrow's cast would make it null.
fn comparable(name: &str, column: &arrow::array::ArrayRef) -> Result<arrow::array::ArrayRef> {
    use arrow::datatypes::TimeUnit;
    let near = match column.data_type() {
        DataType::Dictionary(_, values) => values.as_ref().clone(),
        DataType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, zone) => {
            DataType::Timestamp(TimeUnit::Microsecond, zone.clone())
        }
        DataType::Time32(_) => DataType::Time64(TimeUnit::Microsecond),
        DataType::Date64 => DataType::Date32,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => DataType::Int64,
        DataType::UInt64 => DataType::Decimal128(20, 0),
        DataType::Float16 => DataType::Float32,
        _ => return Ok(column.clone()),
    };
    let exact = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    let cast = arrow::compute::cast_with_options(column, &near, &exact).map_err(|e| {
        Error::new(
            ErrorKind::OutOfRange,
            format!("the filter's column {name} holds a value that {near} does not: {e}"),
        )
    })?;
    match column.data_type() {
        // A dictionary of timestamps, say.
        DataType::Dictionary(..) => comparable(name, &cast),
        _ => Ok(cast),
    }
}

#[cold]
fn arrow_error(e: arrow::error::ArrowError) -> Error {
    Error::new(ErrorKind::Schema, e.to_string())
}

/// The shredding type whose instants the values of an ordinary column of
/// `data_type` are, for a date or timestamp.
fn instant_type(data_type: &DataType) -> Option<ShreddingSchema> {
    match data_type {
        DataType::Date32 | DataType::Date64 => Some(ShreddingSchema::Date),
        DataType::Timestamp(unit, zone) => Some(ShreddingSchema::Timestamp {
            utc: zone.is_some(),
            nanos: *unit == arrow::datatypes::TimeUnit::Nanosecond,
        }),
        _ => None,
    }
}

#[cold]
fn missing_column(name: &str) -> Error {
    Error::new(
        ErrorKind::Schema,
        format!("the filter's column {name} was not read"),
    )
}

impl std::fmt::Display for Predicate {
    /// In the filter syntax it parses from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let joined = |f: &mut std::fmt::Formatter<'_>, parts: &[Predicate], word: &str| {
            f.write_str("(")?;
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    write!(f, " {word} ")?;
                }
                write!(f, "{part}")?;
            }
            f.write_str(")")
        };
        match self {
            Predicate::Compare(c) => write!(f, "{c}"),
            Predicate::IsNull(operand) => write!(f, "{operand} is null"),
            Predicate::Not(inner) => write!(f, "not ({inner})"),
            Predicate::And(parts) => joined(f, parts, "and"),
            Predicate::Or(parts) => joined(f, parts, "or"),
        }
    }
}

impl std::str::FromStr for Predicate {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Predicate::parse(s)
    }
}

/// What [`Predicate::may_match`] and [`Predicate::select`] ask about.
pub enum Leaf<'p> {
    /// A comparison.
    Compare(&'p Comparison),
    /// An `or` of `==` on one operand: an `in` list, asked about whole.
    In(InList<'p>),
}

impl Leaf<'_> {
    /// What the comparison or list reads.
    pub fn operand(&self) -> &Operand {
        match self {
            Leaf::Compare(c) => &c.operand,
            Leaf::In(list) => list.operand,
        }
    }

    /// Whether a value within `min` and `max` (statistics; `None` when not
    /// known) may pass.
    pub fn may_match(&self, min: Option<&VariantRef<'_>>, max: Option<&VariantRef<'_>>) -> bool {
        match self {
            Leaf::Compare(c) => c.may_match(min, max),
            Leaf::In(list) => !list.within(min, max).is_empty(),
        }
    }

    /// The literals a value within `min` and `max` may equal, for a bloom
    /// filter to rule out; `None` when the leaf is not an equality.
    pub fn equal_to_within(
        &self,
        min: Option<&VariantRef<'_>>,
        max: Option<&VariantRef<'_>>,
    ) -> Option<Vec<&Literal>> {
        match self {
            Leaf::Compare(c) if c.op == Op::Eq => Some(vec![&c.literal]),
            Leaf::Compare(_) => None,
            Leaf::In(list) => Some(list.within(min, max).to_vec()),
        }
    }
}

/// The literals of an `or` of `==` comparisons on one operand, all numbers
/// or all strings, sorted: whether a range of values holds any of them is
/// two binary searches, not one comparison per literal (a join's keys are
/// thousands).
pub struct InList<'p> {
    /// What the comparisons read.
    pub operand: &'p Operand,
    literals: Vec<&'p Literal>,
}

impl<'p> InList<'p> {
    /// The literals, sorted.
    pub fn literals(&self) -> &[&'p Literal] {
        &self.literals
    }

    /// The list that `parts` of an `or` make, if they make one.
    fn of(parts: &'p [Predicate]) -> Option<InList<'p>> {
        let Some(Predicate::Compare(first)) = parts.first() else {
            return None;
        };
        let mut literals = Vec::with_capacity(parts.len());
        for part in parts {
            match part {
                Predicate::Compare(c)
                    if c.op == Op::Eq
                        && c.operand == first.operand
                        && matches!(
                            (&c.literal, &first.literal),
                            (Literal::Number(_), Literal::Number(_))
                                | (Literal::String(_), Literal::String(_))
                        ) =>
                {
                    literals.push(&c.literal)
                }
                _ => return None,
            }
        }
        if literals.len() < 2 {
            return None;
        }
        literals.sort_by(|a, b| match (a, b) {
            (Literal::Number(a), Literal::Number(b)) => a.cmp(b),
            (Literal::String(a), Literal::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            _ => Ordering::Equal,
        });
        Some(InList {
            operand: &first.operand,
            literals,
        })
    }

    /// The literals from `min` to `max` (either unknown: unbounded); all of
    /// them when a bound is of another kind, as a comparison with it rules
    /// nothing out.
    pub fn within(
        &self,
        min: Option<&VariantRef<'_>>,
        max: Option<&VariantRef<'_>>,
    ) -> &[&'p Literal] {
        let first = &self.literals[0];
        if [min, max]
            .iter()
            .flatten()
            .any(|b| compare(b, first).is_none())
        {
            return &self.literals;
        }
        let start = match min {
            Some(min) => self
                .literals
                .partition_point(|l| compare(min, l) == Some(Ordering::Greater)),
            None => 0,
        };
        let end = match max {
            Some(max) => self
                .literals
                .partition_point(|l| compare(max, l) != Some(Ordering::Less)),
            None => self.literals.len(),
        };
        &self.literals[start..end.max(start)]
    }

    /// Whether `v` is one of the literals, as the `or` of the comparisons
    /// has it: `None` (unknown) for a value of another kind or a Variant
    /// null. A binary search, where testing each comparison took a
    /// thousand literals a thousand times as long.
    pub fn contains(&self, v: &VariantRef<'_>) -> Option<bool> {
        compare(v, self.literals[0])?;
        let found = self
            .literals
            .binary_search_by(|l| compare(v, l).map_or(Ordering::Equal, Ordering::reverse));
        Some(found.is_ok())
    }
}

/// How a value compares with a literal; `None` when not comparable (a
/// value of another kind).
pub fn compare(v: &VariantRef<'_>, literal: &Literal) -> Option<Ordering> {
    match literal {
        Literal::Number(n) => match (v.as_decimal(), v.as_f64()) {
            (Some(d), _) => Some(d.cmp(n)),
            (_, Some(f)) => Some(double_cmp(f, n.to_f64())),
            _ => None,
        },
        Literal::Double(x) => match (v.as_decimal(), v.as_f64()) {
            (Some(d), _) => Some(double_cmp(d.to_f64(), *x)),
            (_, Some(f)) => Some(double_cmp(f, *x)),
            _ => None,
        },
        Literal::String(s) => v.as_str().map(|x| x.as_bytes().cmp(s.as_bytes())),
        Literal::Bool(b) => v.as_bool().map(|x| x.cmp(b)),
        Literal::Instant { nanos, .. } => nanos_since_epoch(v).map(|x| x.cmp(nanos)),
    }
}

/// Two doubles as Spark and DataFusion order them: NaN above every number
/// and equal to itself (`-0.0` equal to `0.0`).
fn double_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json_to_variant;

    #[test]
    fn numbers_compare_by_value_across_types() {
        let Predicate::Compare(p) = Predicate::parse("$ == 1.5").unwrap() else {
            panic!()
        };
        for (json, passes) in [
            ("1.50", true),
            ("1.5e0", true),
            ("2", false),
            ("\"1.5\"", false),
        ] {
            let (m, v) = json_to_variant(json.as_bytes()).unwrap();
            assert_eq!(
                p.test(&VariantRef::try_new(&m, &v).unwrap()) == Some(true),
                passes,
                "{json}"
            );
        }
    }

    #[test]
    fn an_in_list_gives_what_the_or_of_its_comparisons_gives() {
        use crate::shred::{Shredder, ShreddingSchema, variant_field};
        let mut shredder = Shredder::new(&ShreddingSchema::Variant);
        let rows = [
            r#"{"a":1}"#,
            r#"{"a":1.0}"#,
            r#"{"a":2.5e0}"#,
            r#"{"a":7}"#,
            r#"{"a":3}"#,
            r#"{"a":"1"}"#,
            r#"{"a":"x"}"#,
            r#"{"a":null}"#,
            r#"{"b":1}"#,
            r#"{"a":true}"#,
            r#"{"a":-0.0}"#,
            r#"{"a":"NaN"}"#,
            r#"{"a":[1]}"#,
        ];
        for row in rows {
            shredder.append_json(row.as_bytes()).unwrap();
        }
        shredder.append_null();
        let field = variant_field("v", &ShreddingSchema::Variant);
        let batch = RecordBatch::try_new(
            std::sync::Arc::new(arrow::datatypes::Schema::new(vec![field])),
            vec![std::sync::Arc::new(shredder.finish())],
        )
        .unwrap();
        // The `or`s written without `or` (De Morgan's, which holds in SQL's
        // three-valued logic too), so that no `in` list reads them.
        for (list, ors) in [
            (
                "$.a in (7, 1, 2.5)",
                "not (not $.a == 7 and not $.a == 1 and not $.a == 2.5)",
            ),
            (
                "$.a in (\"x\", \"1\")",
                "not (not $.a == \"x\" and not $.a == \"1\")",
            ),
            ("not $.a in (3, 0)", "not $.a == 3 and not $.a == 0"),
        ] {
            let list = Predicate::parse(list).unwrap();
            let or = match &list {
                Predicate::Not(inner) => inner.as_ref(),
                or => or,
            };
            let Predicate::Or(parts) = or else {
                unreachable!("{list} is an or")
            };
            assert!(InList::of(parts).is_some(), "{list}");
            let ors = Predicate::parse(ors).unwrap();
            assert_eq!(
                list.evaluate(&batch, "v").unwrap(),
                ors.evaluate(&batch, "v").unwrap(),
                "{list}"
            );
        }
    }

    #[test]
    fn bounds_rule_out_what_cannot_match() {
        let c = |text: &str| match Predicate::parse(text).unwrap() {
            Predicate::Compare(c) => c,
            _ => panic!(),
        };
        let (lo, hi) = (VariantRef::Int64(10), VariantRef::Int64(20));
        for (text, may) in [
            ("$.a == 15", true),
            ("$.a == 21", false),
            ("$.a == 9", false),
            ("$.a < 10", false),
            ("$.a <= 10", true),
            ("$.a > 20", false),
            ("$.a >= 20", true),
            ("$.a != 15", true),
            // Another kind: the bounds say nothing.
            ("$.a == \"x\"", true),
        ] {
            assert_eq!(c(text).may_match(Some(&lo), Some(&hi)), may, "{text}");
        }
        let one = VariantRef::Int64(7);
        assert!(!c("$.a != 7").may_match(Some(&one), Some(&one)));
        assert!(c("$.a < 5").may_match(None, None));
    }

    #[test]
    fn an_in_list_finds_the_literals_in_a_range_as_its_comparisons_would() {
        let p = Predicate::parse("$.k in (30, 10, 20, 25)").unwrap();
        let Predicate::Or(parts) = &p else {
            panic!("{p:?}")
        };
        let list = InList::of(parts).expect("an in list");
        let n = |v: i64| VariantRef::Int64(v);
        let within = |lo: Option<i64>, hi: Option<i64>| -> Vec<String> {
            let (lo, hi) = (lo.map(n), hi.map(n));
            list.within(lo.as_ref(), hi.as_ref())
                .iter()
                .map(|l| l.to_string())
                .collect()
        };
        assert_eq!(within(Some(11), Some(25)), ["20", "25"]);
        assert_eq!(within(Some(10), Some(10)), ["10"]);
        assert_eq!(within(Some(21), Some(24)), Vec::<String>::new());
        assert_eq!(within(None, Some(15)), ["10"]);
        assert_eq!(within(Some(26), None), ["30"]);
        // The same answer as each comparison's, over every range.
        for lo in 5..35 {
            for hi in lo..35 {
                let any = parts.iter().any(|c| match c {
                    Predicate::Compare(c) => c.may_match(Some(&n(lo)), Some(&n(hi))),
                    _ => unreachable!(),
                });
                assert_eq!(!within(Some(lo), Some(hi)).is_empty(), any, "{lo}..={hi}");
            }
        }
        // A bound of another kind rules nothing out.
        let s = VariantRef::String("x");
        assert_eq!(list.within(Some(&s), None).len(), 4);
        // Mixed kinds, or another operator, are not a list.
        let mixed = Predicate::parse(r#"$.k == 1 or $.k == "a""#).unwrap();
        let Predicate::Or(parts) = &mixed else {
            panic!()
        };
        assert!(InList::of(parts).is_none());
        let other = Predicate::parse("$.k == 1 or $.j == 2").unwrap();
        let Predicate::Or(parts) = &other else {
            panic!()
        };
        assert!(InList::of(parts).is_none());
    }

    #[test]
    fn and_or_combine_what_the_leaves_may_match() {
        let p = Predicate::parse("($.a == 1 or $.b == 2) and $.c == 3").unwrap();
        let leaf = |allowed: &'static [&'static str]| {
            move |l: Leaf<'_>| allowed.contains(&l.operand().to_string().as_str())
        };
        assert!(p.may_match(&mut leaf(&["$.a", "$.c"])));
        assert!(!p.may_match(&mut leaf(&["$.a", "$.b"])));
        assert!(!p.may_match(&mut leaf(&["$.c"])));
        // Nothing is known of `not`.
        assert!(
            Predicate::parse("not $.a == 1")
                .unwrap()
                .may_match(&mut |_| false)
        );
    }
}
