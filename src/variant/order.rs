//! A total order over Variant values, for `min`, `max` and sorting: the
//! order Spark defines for VARIANT (SPARK-62380). Kinds come first, in
//! this order: null, boolean, number, string, binary, UUID, date and
//! timestamp, time, array, object. Within a kind:
//! - numbers by value whatever their encoding (`1 == 1.0 == 1e0`), exactly
//!   between integers and decimals; NaN above every other number;
//! - strings, binaries and UUIDs by their bytes;
//! - dates and timestamps by the instant, a date as its midnight UTC and a
//!   timestamp without time zone as if it were UTC;
//! - arrays element by element, then by length;
//! - objects field by field in name order (name, then value), then by
//!   the number of fields.

use std::cmp::Ordering;

use super::{VariantDecimal, VariantRef};

/// The kinds of Variant value, in their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The Variant null.
    Null,
    /// `true` and `false`.
    Boolean,
    /// Integers, decimals, floats and doubles.
    Number,
    /// Strings.
    String,
    /// Binary values.
    Binary,
    /// UUIDs.
    Uuid,
    /// Dates and timestamps, with or without time zone.
    Instant,
    /// Times of day.
    Time,
    /// Arrays.
    Array,
    /// Objects.
    Object,
}

impl Kind {
    /// The kind of `v`.
    pub fn of(v: &VariantRef<'_>) -> Kind {
        use VariantRef as V;
        match v {
            V::Null => Kind::Null,
            V::Bool(_) => Kind::Boolean,
            V::Int8(_)
            | V::Int16(_)
            | V::Int32(_)
            | V::Int64(_)
            | V::Double(_)
            | V::Float(_)
            | V::Decimal4(_)
            | V::Decimal8(_)
            | V::Decimal16(_) => Kind::Number,
            V::String(_) => Kind::String,
            V::Binary(_) => Kind::Binary,
            V::Uuid(_) => Kind::Uuid,
            V::Date(_)
            | V::TimestampMicros(_)
            | V::TimestampNtzMicros(_)
            | V::TimestampNanos(_)
            | V::TimestampNtzNanos(_) => Kind::Instant,
            V::TimeNtzMicros(_) => Kind::Time,
            V::Array(_) => Kind::Array,
            V::Object(_) => Kind::Object,
        }
    }

    /// The kind's name: "number", "string".
    pub fn singular(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Binary => "binary",
            Kind::Uuid => "UUID",
            Kind::Instant => "date or timestamp",
            Kind::Time => "time",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }

    /// The kind's name, in the plural: "numbers", "strings".
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Null => "nulls",
            Kind::Boolean => "booleans",
            Kind::Number => "numbers",
            Kind::String => "strings",
            Kind::Binary => "binaries",
            Kind::Uuid => "UUIDs",
            Kind::Instant => "dates or timestamps",
            Kind::Time => "times",
            Kind::Array => "arrays",
            Kind::Object => "objects",
        }
    }
}

/// How `a` compares with `b`: kinds in the order of [`Kind`], then as the
/// module's documentation says (Spark's order for VARIANT).
///
/// ```
/// use std::cmp::Ordering;
/// use vshred::json::json_to_variant;
/// use vshred::variant::{VariantRef, compare};
///
/// let parse = |text: &str| json_to_variant(text.as_bytes()).unwrap();
/// let order = |a: &str, b: &str| {
///     let ((ma, va), (mb, vb)) = (parse(a), parse(b));
///     compare(&VariantRef::try_new(&ma, &va).unwrap(), &VariantRef::try_new(&mb, &vb).unwrap())
/// };
/// assert_eq!(order("1.50", "1.5e0"), Ordering::Equal);
/// assert_eq!(order("99", "\"1\""), Ordering::Less); // numbers before strings
/// assert_eq!(order("[1, 2]", "[1, 2, 0]"), Ordering::Less);
/// ```
pub fn compare(a: &VariantRef<'_>, b: &VariantRef<'_>) -> Ordering {
    let (ka, kb) = (Kind::of(a), Kind::of(b));
    if ka != kb {
        return ka.cmp(&kb);
    }
    use VariantRef as V;
    match (a, b) {
        (V::Bool(x), V::Bool(y)) => x.cmp(y),
        (V::String(x), V::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (V::Binary(x), V::Binary(y)) => x.cmp(y),
        (V::Uuid(x), V::Uuid(y)) => x.cmp(y),
        (V::TimeNtzMicros(x), V::TimeNtzMicros(y)) => x.cmp(y),
        (V::Array(x), V::Array(y)) => {
            for i in 0..x.len().min(y.len()) {
                let (ex, ey) = (x.get(i), y.get(i));
                let ordering = match (ex, ey) {
                    (Some(ex), Some(ey)) => compare(&ex, &ey),
                    _ => Ordering::Equal,
                };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            x.len().cmp(&y.len())
        }
        (V::Object(x), V::Object(y)) => {
            for i in 0..x.len().min(y.len()) {
                let ordering = x
                    .field_name(i)
                    .as_bytes()
                    .cmp(y.field_name(i).as_bytes())
                    .then_with(|| compare(&x.field(i), &y.field(i)));
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
            x.len().cmp(&y.len())
        }
        _ if ka == Kind::Number => compare_numbers(a, b),
        _ if ka == Kind::Instant => nanos_since_epoch(a).cmp(&nanos_since_epoch(b)),
        _ => Ordering::Equal, // two nulls
    }
}

/// Numbers by value: exactly when both are integers or decimals, as
/// doubles otherwise, NaN above all.
fn compare_numbers(a: &VariantRef<'_>, b: &VariantRef<'_>) -> Ordering {
    let exact = |v: &VariantRef<'_>| -> Option<VariantDecimal> { v.as_decimal() };
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return x.cmp(&y);
    }
    let double = |v: &VariantRef<'_>| {
        v.as_f64()
            .or_else(|| v.as_decimal().map(|d| d.to_f64()))
            .unwrap_or(f64::NAN)
    };
    let (x, y) = (double(a), double(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// A date or timestamp as nanoseconds since the epoch (UTC, or as if UTC);
/// `None` for other values.
pub(crate) fn nanos_since_epoch(v: &VariantRef<'_>) -> Option<i128> {
    const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;
    Some(match *v {
        VariantRef::Date(days) => i128::from(days) * NANOS_PER_DAY,
        VariantRef::TimestampMicros(us) | VariantRef::TimestampNtzMicros(us) => {
            i128::from(us) * 1000
        }
        VariantRef::TimestampNanos(ns) | VariantRef::TimestampNtzNanos(ns) => i128::from(ns),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json_to_variant;

    fn order(a: &str, b: &str) -> Ordering {
        let (ma, va) = json_to_variant(a.as_bytes()).unwrap();
        let (mb, vb) = json_to_variant(b.as_bytes()).unwrap();
        compare(
            &VariantRef::try_new(&ma, &va).unwrap(),
            &VariantRef::try_new(&mb, &vb).unwrap(),
        )
    }

    #[test]
    fn kinds_come_in_sparks_order() {
        let ascending = [
            "null",
            "false",
            "true",
            "-5",
            "2.5",
            "1e300",
            "\"\"",
            "\"a\"",
            "[]",
            "[1]",
            "{}",
            r#"{"a":1}"#,
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(order(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn numbers_compare_by_value_across_encodings() {
        assert_eq!(order("1", "1.0"), Ordering::Equal);
        assert_eq!(order("1.5", "1.5e0"), Ordering::Equal);
        assert_eq!(
            order("9223372036854775808", "9223372036854775807"),
            Ordering::Greater
        );
        assert_eq!(order("0.1", "0.10000000000000001"), Ordering::Less);
    }

    #[test]
    fn containers_compare_element_by_element_then_by_length() {
        assert_eq!(order("[1, 3]", "[2]"), Ordering::Less);
        assert_eq!(order("[1]", "[1, 0]"), Ordering::Less);
        assert_eq!(order(r#"{"a":2}"#, r#"{"b":1}"#), Ordering::Less);
        assert_eq!(
            order(r#"{"a":1,"b":2}"#, r#"{"a":1,"b":1}"#),
            Ordering::Greater
        );
        assert_eq!(order(r#"{"a":1}"#, r#"{"a":1,"b":0}"#), Ordering::Less);
    }
}
