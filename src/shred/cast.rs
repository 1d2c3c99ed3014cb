//! Spark's cast of a Variant value to a typed column's type: how
//! [`variant_get`](crate::get::variant_get) converts (Spark's
//! `VariantGet.cast`, an ANSI cast of the value's own type that gives null
//! where it fails).
//!
//! - to a string: any value; numbers as Spark prints them (doubles as
//!   Java does, `1.0E10`), dates and timestamps as `2024-03-01 12:30:00.5`
//!   (UTC), binary as UTF-8, objects and arrays as JSON text;
//! - to an integer: integers in range, decimals and doubles truncated
//!   toward zero, booleans as 1 and 0, strings of digits (surrounding
//!   spaces ignored), timestamps as whole seconds since the epoch;
//! - to a decimal: numbers, booleans and decimal strings (`1e3` too),
//!   rounded half away from zero to the scale, within the precision;
//! - to a double or float: numbers (rounded), booleans, numeric strings
//!   (`NaN`, `Infinity`);
//! - to a boolean: numbers (not zero), strings `true`/`t`/`yes`/`y`/`1`
//!   and `false`/`f`/`no`/`n`/`0` in any case;
//! - to a timestamp: ISO-8601 strings, dates (at midnight), timestamps
//!   with or without a zone (the same instant in UTC), and (with a time
//!   zone only) numbers as seconds since the epoch; to a date, those
//!   strings and timestamps (their day in UTC);
//! - to binary: binary and strings (their UTF-8 bytes).
//!
//! `testdata/spark-casts.jsonl` holds what Spark 4.3 gives for each JSON
//! value and type, and `tests/spark_casts.rs` checks these against it.

use std::fmt::Write;

use arrow::array::StringBuilder;

use super::{Conversion, ShreddingSchema, TypedBuilder};
use crate::json::variant_to_json_string;
use crate::variant::time::{self, MICROS_PER_SECOND, NANOS_PER_SECOND, civil_from_days};
use crate::variant::{VariantDecimal, VariantRef};

/// `v` converted to the scalar type `to` as
/// [`variant_get`](crate::get::variant_get) converts it (a narrower
/// integer as an `Int64`, range unchecked): for bounds of numbers that are
/// converted (each conversion of a number to a number keeps the order),
/// and for a filter's literal compared with converted values (a string
/// read as a timestamp).
pub(crate) fn cast_as<'a>(v: &VariantRef<'a>, to: &ShreddingSchema) -> Option<VariantRef<'a>> {
    TypedBuilder::new(to)?.cast_value(v)
}

impl TypedBuilder {
    /// Appends `v` converted as Spark's cast converts it; false where it
    /// does not convert (and for the Variant null), nothing appended.
    pub(crate) fn append_cast(&mut self, v: &VariantRef<'_>) -> bool {
        if v.is_null() {
            return false;
        }
        if let TypedBuilder::String(builder) = self {
            append_string(builder, v);
            return true;
        }
        match self.cast_value(v) {
            Some(converted) => self.try_append(&converted, Conversion::Lossless),
            None => false,
        }
    }

    /// `v` as a value of this column's own type (or one that converts to
    /// it exactly, range permitting: an `Int64` for a narrower integer).
    fn cast_value<'a>(&self, v: &VariantRef<'a>) -> Option<VariantRef<'a>> {
        use VariantRef as V;
        Some(match self {
            TypedBuilder::Boolean(_) => V::Bool(match v {
                V::Bool(b) => *b,
                V::String(s) => spark_bool(s)?,
                _ => number(v)? != 0.0,
            }),
            TypedBuilder::Int8(_)
            | TypedBuilder::Int16(_)
            | TypedBuilder::Int32(_)
            | TypedBuilder::Int64(_) => V::Int64(match v {
                V::Bool(b) => i64::from(*b),
                // Whole seconds since the epoch, rounded down.
                V::TimestampMicros(t) => t.div_euclid(i64::from(MICROS_PER_SECOND)),
                V::String(s) => trimmed(s).parse().ok()?,
                V::Float(x) => truncated(f64::from(*x))?,
                V::Double(x) => truncated(*x)?,
                V::Decimal4(d) | V::Decimal8(d) | V::Decimal16(d) => d.truncate(0)?.to_i64()?,
                _ => v.as_i64()?,
            }),
            TypedBuilder::Float(_) => V::Float(match v {
                V::Bool(b) => f32::from(u8::from(*b)),
                V::String(s) => java_number(s)?,
                V::Float(x) => *x,
                _ => (seconds(v).or_else(|| number(v)))? as f32,
            }),
            TypedBuilder::Double(_) => V::Double(match v {
                V::Bool(b) => f64::from(u8::from(*b)),
                V::String(s) => java_number(s)?,
                _ => seconds(v).or_else(|| number(v))?,
            }),
            TypedBuilder::Decimal(_, _, scale) => V::Decimal16(match v {
                V::Bool(b) => VariantDecimal::from(i64::from(*b)).round_half_up(*scale)?,
                // Text is rounded as it is read, since it may hold more
                // digits than a decimal (`1e-39` is 0.00 at scale 2).
                V::String(s) => VariantDecimal::parse_rounded(trimmed(s), *scale)?,
                // Through the shortest text that reads back as the double,
                // as Spark's `Decimal(double)` does.
                V::Double(x) => VariantDecimal::parse_rounded(&shortest(*x)?, *scale)?,
                // Widened to a double first, as Spark does (1.1 is
                // 1.100000023841858).
                V::Float(x) => VariantDecimal::parse_rounded(&shortest(f64::from(*x))?, *scale)?,
                // Seconds since the epoch, to the microsecond.
                V::TimestampMicros(t) => VariantDecimal::try_new(i128::from(*t), 6)
                    .ok()?
                    .round_half_up(*scale)?,
                _ => v.as_decimal()?.round_half_up(*scale)?,
            }),
            TypedBuilder::Date(_) => V::Date(match v {
                V::String(s) => time::parse_date(s)?,
                V::TimestampMicros(t) | V::TimestampNtzMicros(t) => {
                    time::day_of(*t, MICROS_PER_SECOND)?
                }
                V::TimestampNanos(t) | V::TimestampNtzNanos(t) => {
                    time::day_of(*t, NANOS_PER_SECOND)?
                }
                _ => v.as_date()?,
            }),
            TypedBuilder::TimestampMicros(_, utc) => {
                let micros = since_epoch(v, *utc, MICROS_PER_SECOND)?;
                if *utc {
                    V::TimestampMicros(micros)
                } else {
                    V::TimestampNtzMicros(micros)
                }
            }
            TypedBuilder::TimestampNanos(_, utc) => {
                let nanos = since_epoch(v, *utc, NANOS_PER_SECOND)?;
                if *utc {
                    V::TimestampNanos(nanos)
                } else {
                    V::TimestampNtzNanos(nanos)
                }
            }
            TypedBuilder::Binary(_) => V::Binary(match v {
                V::String(s) => s.as_bytes(),
                _ => v.as_binary()?,
            }),
            TypedBuilder::String(_)
            | TypedBuilder::Time(_)
            | TypedBuilder::Uuid(_)
            | TypedBuilder::Object(_)
            | TypedBuilder::Array(_) => *v,
        })
    }
}

/// Appends the text of `v` (not null) as Spark's cast to a string writes it.
fn append_string(builder: &mut StringBuilder, v: &VariantRef<'_>) {
    // Writing to a StringBuilder cannot fail; `append_value("")` ends the
    // row that the writes began.
    let _ = write_string(builder, v);
    builder.append_value("");
}

fn write_string(out: &mut impl Write, v: &VariantRef<'_>) -> std::fmt::Result {
    use VariantRef as V;
    match v {
        V::Null => Ok(()),
        V::Bool(b) => write!(out, "{b}"),
        V::Int8(_) | V::Int16(_) | V::Int32(_) | V::Int64(_) => {
            write!(out, "{}", v.as_i64().unwrap_or_default())
        }
        // Spark's text of a Variant decimal has no trailing zeros, whatever
        // scale it was stored at (`19.90` and a DECIMAL(18,2) `20.00` are
        // `19.9` and `20`), so that equal numbers are equal strings.
        V::Decimal4(d) | V::Decimal8(d) | V::Decimal16(d) => write!(out, "{}", d.normalized()),
        V::Double(x) => write_java(out, *x, shortest(*x)),
        V::Float(x) => write_java(out, f64::from(*x), shortest(*x)),
        V::String(s) => out.write_str(s),
        V::Binary(bytes) => out.write_str(&String::from_utf8_lossy(bytes)),
        V::Date(days) => write_date(out, i64::from(*days)),
        V::TimestampMicros(t) | V::TimestampNtzMicros(t) => {
            write_timestamp(out, *t, MICROS_PER_SECOND, 6)
        }
        V::TimestampNanos(t) | V::TimestampNtzNanos(t) => {
            write_timestamp(out, *t, NANOS_PER_SECOND, 9)
        }
        V::TimeNtzMicros(t) => write_time(out, *t, MICROS_PER_SECOND, 6),
        V::Uuid(bytes) => {
            for (i, b) in bytes.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    out.write_char('-')?;
                }
                write!(out, "{b:02x}")?;
            }
            Ok(())
        }
        V::Object(_) | V::Array(_) => out.write_str(&variant_to_json_string(v)),
    }
}

/// Spark's string forms of the booleans, in any case, spaces ignored.
fn spark_bool(s: &str) -> Option<bool> {
    let s = trimmed(s);
    let is = |words: &[&str]| words.iter().any(|w| s.eq_ignore_ascii_case(w));
    if is(&["true", "t", "yes", "y", "1"]) {
        Some(true)
    } else if is(&["false", "f", "no", "n", "0"]) {
        Some(false)
    } else {
        None
    }
}

/// A string without the spaces and control characters around it, as
/// Spark reads a number or boolean from it.
fn trimmed(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// A string as a double or float, as Spark's cast reads one: Java's
/// `parseDouble` takes a type suffix after the digits (`1d`, `1.5F`).
fn java_number<T: std::str::FromStr>(s: &str) -> Option<T> {
    let s = trimmed(s);
    // Java spells its two words one way alone (`nan` and `inf` are not
    // numbers), and its NaN has no sign: `-NaN` is NaN, one value (Rust's
    // keeps the sign, and a second NaN grouped apart from the first).
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    if unsigned.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return match unsigned {
            "NaN" => unsigned.parse().ok(),
            "Infinity" => s.parse().ok(),
            _ => None,
        };
    }
    // Digits alone here (the words are above), so a suffix is never
    // taken off `Infinity` or `NaN`, which Java gives none.
    s.parse()
        .ok()
        .or_else(|| s.strip_suffix(['d', 'D', 'f', 'F'])?.parse().ok())
}

/// A timestamp with a zone as seconds since the epoch, as Spark reads one
/// as a number.
fn seconds(v: &VariantRef<'_>) -> Option<f64> {
    match v {
        VariantRef::TimestampMicros(t) => Some(*t as f64 / f64::from(MICROS_PER_SECOND)),
        _ => None,
    }
}

/// `v` as a timestamp (`utc`: with a zone) in ticks of `per_second` a
/// second since the epoch (microseconds or nanoseconds).
fn since_epoch(v: &VariantRef<'_>, utc: bool, per_second: u32) -> Option<i64> {
    use VariantRef as V;
    let per_second_i64 = i64::from(per_second);
    Some(match v {
        V::String(s) => time::parse_timestamp(s, utc)?.ticks(per_second)?,
        // Midnight, and the same instant with or without a zone (vshred's
        // session time zone is UTC).
        V::Date(days) => i64::from(*days).checked_mul(86_400 * per_second_i64)?,
        V::TimestampMicros(t) | V::TimestampNtzMicros(t) => {
            t.checked_mul(per_second_i64 / i64::from(MICROS_PER_SECOND))?
        }
        // In microseconds, the one a nanosecond falls in, as DataFusion's
        // casts cut nanoseconds (a timestamp_nanos to `TIMESTAMP(6)`).
        V::TimestampNanos(t) | V::TimestampNtzNanos(t) => {
            t.div_euclid(i64::from(NANOS_PER_SECOND) / per_second_i64)
        }
        // Seconds since the epoch, to a timestamp with a zone only.
        V::Int8(_) | V::Int16(_) | V::Int32(_) | V::Int64(_) if utc => {
            v.as_i64()?.checked_mul(per_second_i64)?
        }
        V::Decimal4(d) | V::Decimal8(d) | V::Decimal16(d) if utc => {
            i64::try_from(d.truncate(per_second.ilog10() as u8)?.unscaled()).ok()?
        }
        V::Double(_) | V::Float(_) if utc => truncated(number(v)? * f64::from(per_second))?,
        _ => return None,
    })
}

/// Any number as a double: exact numerics rounded, floats widened.
fn number(v: &VariantRef<'_>) -> Option<f64> {
    v.as_f64().or_else(|| v.as_decimal().map(|d| d.to_f64()))
}

/// `x` without its fraction, if that fits an `i64`.
fn truncated(x: f64) -> Option<i64> {
    let t = x.trunc();
    // 2^63 is exact as a double; the finite values below it fit.
    (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0)
        .contains(&t)
        .then_some(t as i64)
}

/// The shortest decimal text that reads back as the same float, in
/// scientific form (`1.5e300`, `1e-5`), for a finite value.
fn shortest<F: std::fmt::LowerExp + Into<f64> + Copy>(x: F) -> Option<String> {
    x.into().is_finite().then(|| format!("{x:e}"))
}

/// Writes a float as Java's `Double.toString` does (Spark's cast to a
/// string): `NaN`, `Infinity`, plain digits with at least one after the
/// point from 10^-3 up to 10^7 (`100.0`, `0.001`), and otherwise one digit,
/// the point, and `E` with the exponent (`1.0E10`, `1.5E-5`). `scientific`
/// is the shortest text of the value (`None` for NaN and infinities).
fn write_java(out: &mut impl Write, x: f64, scientific: Option<String>) -> std::fmt::Result {
    let Some(scientific) = scientific else {
        return out.write_str(match x {
            x if x.is_nan() => "NaN",
            x if x > 0.0 => "Infinity",
            _ => "-Infinity",
        });
    };
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let (first, rest) = digits.split_at(1);
    out.write_str(sign)?;
    if x == 0.0 {
        return out.write_str("0.0");
    }
    if (-3..7).contains(&exponent) {
        if exponent < 0 {
            let zeros = "0".repeat((-exponent - 1) as usize);
            return write!(out, "0.{zeros}{digits}");
        }
        let whole_digits = exponent as usize + 1;
        if digits.len() <= whole_digits {
            let zeros = "0".repeat(whole_digits - digits.len());
            write!(out, "{digits}{zeros}.0")
        } else {
            let (whole, fraction) = digits.split_at(whole_digits);
            write!(out, "{whole}.{fraction}")
        }
    } else {
        let rest = if rest.is_empty() { "0" } else { rest };
        write!(out, "{first}.{rest}E{exponent}")
    }
}

fn write_date(out: &mut impl Write, days: i64) -> std::fmt::Result {
    let (year, month, day) = civil_from_days(days);
    write!(out, "{year:04}-{month:02}-{day:02}")
}

/// `2024-03-01 12:30:00`, with the fraction of a second where there is
/// one, without trailing zeros (`.5`).
fn write_timestamp(
    out: &mut impl Write,
    ticks: i64,
    per_second: u32,
    digits: usize,
) -> std::fmt::Result {
    let per_day = i64::from(per_second) * 86_400;
    write_date(out, ticks.div_euclid(per_day))?;
    out.write_char(' ')?;
    write_time(out, ticks.rem_euclid(per_day), per_second, digits)
}

/// `12:30:00`, and the fraction as [`write_timestamp`] writes it.
fn write_time(
    out: &mut impl Write,
    ticks: i64,
    per_second: u32,
    digits: usize,
) -> std::fmt::Result {
    let per_second = i64::from(per_second);
    let seconds = ticks / per_second;
    let fraction = ticks % per_second;
    write!(
        out,
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )?;
    if fraction != 0 {
        let text = format!("{fraction:0digits$}");
        write!(out, ".{}", text.trim_end_matches('0'))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java(x: f64) -> String {
        let mut out = String::new();
        write_java(&mut out, x, shortest(x)).unwrap();
        out
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java(100.0), "100.0");
        assert_eq!(java(0.001), "0.001");
        assert_eq!(java(0.000_99), "9.9E-4");
        assert_eq!(java(1_234_567.5), "1234567.5");
        assert_eq!(java(1e7), "1.0E7");
        assert_eq!(java(-1.5e300), "-1.5E300");
        assert_eq!(java(-0.0), "-0.0");
        assert_eq!(java(f64::NAN), "NaN");
        assert_eq!(java(f64::NEG_INFINITY), "-Infinity");
    }

    /// What Spark 4.3 gives for these strings cast to a double (and to a
    /// float): Java's number syntax, a type suffix included.
    #[test]
    fn strings_read_as_numbers_with_javas_suffixes() {
        for (text, want) in [
            ("1d", Some(1.0)),
            ("1f", Some(1.0)),
            (" 1.5F ", Some(1.5)),
            ("2.D", Some(2.0)),
            ("1e3d", Some(1000.0)),
            ("1dd", None),
            ("d", None),
            ("Infinityd", None),
            ("1x", None),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("+Infinity", Some(f64::INFINITY)),
            ("inf", None),
            ("-nan", None),
            ("NAN", None),
        ] {
            assert_eq!(java_number::<f64>(text), want, "{text}");
            assert_eq!(java_number::<f32>(text), want.map(|x| x as f32), "{text}");
        }
        // One NaN, without a sign, however the text signs it.
        for text in ["NaN", "-NaN", "+NaN", " NaN "] {
            let x = java_number::<f64>(text).unwrap();
            assert!(x.is_nan() && x.is_sign_positive(), "{text}");
        }
    }

    #[test]
    fn timestamps_print_without_trailing_zeros() {
        let mut out = String::new();
        // 2024-03-01 12:30:00.5 UTC, and a second before the epoch.
        write_timestamp(&mut out, 1_709_296_200_500_000, MICROS_PER_SECOND, 6).unwrap();
        out.push('|');
        write_timestamp(&mut out, -1_000_000, MICROS_PER_SECOND, 6).unwrap();
        assert_eq!(out, "2024-03-01 12:30:00.5|1969-12-31 23:59:59");
    }
}
