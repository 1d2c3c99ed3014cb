//! Exact decimals as the Variant encoding stores them: an unscaled integer
//! of at most 38 digits and a scale of 0-38.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// The largest number of decimal digits a Variant decimal can hold.
pub const MAX_PRECISION: u8 = 38;

/// 10^i for i in 0..=38, as i128.
const POW10: [i128; 39] = {
    let mut table = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// An exact decimal number: `unscaled * 10^-scale`, with at most 38 digits.
///
/// Equality and ordering are by numeric value, so `1.50 == 1.5`; the scale is
/// kept as written for encoding and display (`1.50` prints as `1.50`).
///
/// ```
/// use vshred::variant::VariantDecimal;
/// let d = VariantDecimal::try_new(-1050, 3)?;
/// assert_eq!(d.to_string(), "-1.050");
/// assert_eq!(d, VariantDecimal::try_new(-105, 2)?);
/// assert_eq!(d.precision(), 4);
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct VariantDecimal {
    unscaled: i128,
    scale: u8,
}

impl VariantDecimal {
    /// A decimal `unscaled * 10^-scale`; fails when `scale > 38` or
    /// `unscaled` has more than 38 digits.
    pub fn try_new(unscaled: i128, scale: u8) -> Result<VariantDecimal> {
        if scale > MAX_PRECISION {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("decimal scale {scale} is larger than 38"),
            ));
        }
        if unscaled.unsigned_abs() >= POW10[38] as u128 {
            return Err(Error::new(
                ErrorKind::OutOfRange,
                format!("decimal {unscaled} has more than 38 digits"),
            ));
        }
        Ok(VariantDecimal { unscaled, scale })
    }

    /// The unscaled integer.
    pub fn unscaled(&self) -> i128 {
        self.unscaled
    }

    /// The number of digits after the decimal point.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The number of digits of the unscaled value (1 for zero): the spec's
    /// implied precision.
    pub fn precision(&self) -> u8 {
        digits(self.unscaled.unsigned_abs())
    }

    /// The precision of the smallest `DECIMAL(p, s)` that holds this value
    /// with its scale: `max(precision, scale)`, since `p >= s` must hold.
    /// This decides decimal4 (<= 9), decimal8 (<= 18) or decimal16.
    pub fn required_precision(&self) -> u8 {
        self.precision().max(self.scale)
    }

    /// The same number with trailing fractional zeros removed (`1.50` ->
    /// `1.5`, `2.00` -> `2`): one representative per numeric value.
    pub fn normalized(&self) -> VariantDecimal {
        let (mut unscaled, mut scale) = (self.unscaled, self.scale);
        while scale > 0 && unscaled % 10 == 0 {
            unscaled /= 10;
            scale -= 1;
        }
        VariantDecimal { unscaled, scale }
    }

    /// The value as an integer when it has no fractional part and fits.
    pub fn to_i64(&self) -> Option<i64> {
        let n = self.normalized();
        if n.scale == 0 {
            i64::try_from(n.unscaled).ok()
        } else {
            None
        }
    }

    /// The value with `scale` digits after the point, if that is exact and
    /// still fits 38 digits (`1.5` at scale 3 is `1.500`; `1.25` at scale 1
    /// is `None`).
    pub fn rescale(&self, scale: u8) -> Option<VariantDecimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(*self),
            Ordering::Greater => {
                let factor = *POW10.get((scale - self.scale) as usize)?;
                let unscaled = self.unscaled.checked_mul(factor)?;
                VariantDecimal::try_new(unscaled, scale).ok()
            }
            Ordering::Less => {
                let factor = POW10[(self.scale - scale) as usize];
                (self.unscaled % factor == 0).then_some(VariantDecimal {
                    unscaled: self.unscaled / factor,
                    scale,
                })
            }
        }
    }

    /// The value at `scale` digits after the point, rounded half away from
    /// zero where digits are dropped (as Spark and SQL round: `0.125` at
    /// scale 2 is `0.13`, `-2.5` at scale 0 is `-3`); `None` if it no longer
    /// fits 38 digits.
    pub fn round_half_up(&self, scale: u8) -> Option<VariantDecimal> {
        self.round(scale, true)
    }

    /// The value at `scale` digits after the point, the digits dropped
    /// (toward zero: `-1.9` at scale 0 is `-1`); `None` if it no longer fits
    /// 38 digits.
    pub fn truncate(&self, scale: u8) -> Option<VariantDecimal> {
        self.round(scale, false)
    }

    fn round(&self, scale: u8, half_up: bool) -> Option<VariantDecimal> {
        if scale >= self.scale {
            return self.rescale(scale);
        }
        let factor = POW10[(self.scale - scale) as usize];
        let (quotient, remainder) = (self.unscaled / factor, self.unscaled % factor);
        let away = half_up && remainder.unsigned_abs() * 2 >= factor as u128;
        let unscaled = quotient + if away { self.unscaled.signum() } else { 0 };
        VariantDecimal::try_new(unscaled, scale).ok()
    }

    /// The nearest `f64`.
    pub fn to_f64(&self) -> f64 {
        nearest_double(self.unscaled, i32::from(self.scale), &mut String::new())
    }

    /// Writes the exact decimal text (`-0.050`, `12`) to `out`.
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        if self.unscaled < 0 {
            out.push(b'-');
        }
        let mut buf = itoa::Buffer::new();
        let magnitude = self.unscaled.unsigned_abs();
        // Formatting a u64 is several times faster than a u128.
        let digits = match u64::try_from(magnitude) {
            Ok(small) => buf.format(small),
            Err(_) => buf.format(magnitude),
        }
        .as_bytes();
        let scale = self.scale as usize;
        if scale == 0 {
            out.extend_from_slice(digits);
        } else if digits.len() > scale {
            let split = digits.len() - scale;
            out.extend_from_slice(&digits[..split]);
            out.push(b'.');
            out.extend_from_slice(&digits[split..]);
        } else {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + scale - digits.len(), b'0');
            out.extend_from_slice(digits);
        }
    }
}

/// The number of decimal digits of `v` (1 for zero).
pub(crate) fn digits(v: u128) -> u8 {
    v.checked_ilog10().map_or(1, |log| log as u8 + 1)
}

impl PartialEq for VariantDecimal {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.normalized(), other.normalized());
        a.unscaled == b.unscaled && a.scale == b.scale
    }
}

impl Eq for VariantDecimal {}

impl std::hash::Hash for VariantDecimal {
    /// Of the normalized form, as equality compares it: `1.50` and `1.5`
    /// hash alike.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let n = self.normalized();
        (n.unscaled, n.scale).hash(state);
    }
}

impl Ord for VariantDecimal {
    /// By value, exactly, at any two scales: the integer parts first, then
    /// the fractions at the larger scale (a fraction of at most 38 digits
    /// fits an `i128` at any scale up to 38).
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.unscaled, other.unscaled);
        let (pa, pb) = (POW10[self.scale as usize], POW10[other.scale as usize]);
        (a / pa).cmp(&(b / pb)).then_with(|| {
            let scale = self.scale.max(other.scale) as usize;
            let fraction = |v: i128, p: i128, s: u8| (v % p) * POW10[scale - s as usize];
            fraction(a, pa, self.scale).cmp(&fraction(b, pb, other.scale))
        })
    }
}

impl PartialOrd for VariantDecimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for VariantDecimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::with_capacity(42);
        self.write_to(&mut out);
        // write_to emits only ASCII digits, '-' and '.'.
        f.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}

impl std::str::FromStr for VariantDecimal {
    type Err = Error;

    /// Decimal text: an optional sign, digits with an optional point, and
    /// an optional exponent (`-1.50`, `+12`, `.5`, `1e3`, `2.5E-2`), exactly;
    /// an error where that is not the text or its value needs more than 38
    /// digits or a scale above 38.
    fn from_str(text: &str) -> Result<VariantDecimal> {
        let invalid = || {
            Error::new(
                ErrorKind::OutOfRange,
                format!("not a decimal of at most 38 digits: {text:?}"),
            )
        };
        let text = DecimalText::parse(text).ok_or_else(invalid)?;
        let mut unscaled = text.unscaled(usize::MAX).ok_or_else(invalid)?;
        let mut scale = text.scale;
        if scale < 0 {
            // Zero at any exponent is zero; anything else fits at most 38
            // more digits.
            let factor = match usize::try_from(-scale) {
                _ if unscaled == 0 => 1,
                Ok(shift) => *POW10.get(shift).ok_or_else(invalid)?,
                Err(_) => return Err(invalid()),
            };
            unscaled = unscaled.checked_mul(factor).ok_or_else(invalid)?;
            scale = 0;
        }
        let scale = u8::try_from(scale).map_err(|_| invalid())?;
        VariantDecimal::try_new(text.signed(unscaled), scale)
    }
}

impl VariantDecimal {
    /// Decimal text (as [`FromStr`](std::str::FromStr) takes it) rounded
    /// half away from zero to `scale` digits after the point, however many
    /// digits it has: `1e-39` and `0.00000000000000000000000000000000000000001`
    /// are 0 at scale 2, where they do not parse exactly. `None` for
    /// text that is not a decimal or whose value does not fit 38 digits at
    /// that scale.
    pub fn parse_rounded(text: &str, scale: u8) -> Option<VariantDecimal> {
        let parsed = DecimalText::parse(text)?;
        let dropped = parsed.scale - i64::from(scale);
        let unscaled = if dropped <= 0 {
            // Exact: the digits moved up to `scale`.
            match parsed.unscaled(usize::MAX)? {
                0 => 0,
                digits => digits.checked_mul(*POW10.get(usize::try_from(-dropped).ok()?)?)?,
            }
        } else {
            // Digits past `scale` are dropped, the first of them rounding.
            let count = parsed.digits().count() as i64;
            let kept = usize::try_from(count - dropped).unwrap_or(0);
            let away = count >= dropped && parsed.digits().nth(kept).is_some_and(|d| d >= 5);
            parsed.unscaled(kept)?.checked_add(i128::from(away))?
        };
        VariantDecimal::try_new(parsed.signed(unscaled), scale).ok()
    }
}

/// Decimal text taken apart: an optional sign, digits with an optional
/// point, and an optional exponent.
struct DecimalText<'t> {
    negative: bool,
    whole: &'t [u8],
    fraction: &'t [u8],
    /// Where the point is: the value is `digits * 10^-scale`.
    scale: i64,
}

impl<'t> DecimalText<'t> {
    fn parse(text: &'t str) -> Option<DecimalText<'t>> {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let parsed = DecimalText {
            negative,
            whole: whole.as_bytes(),
            fraction: fraction.as_bytes(),
            scale: fraction.len() as i64 - i64::from(exponent),
        };
        let digits = || parsed.whole.iter().chain(parsed.fraction);
        (digits().next().is_some() && digits().all(u8::is_ascii_digit)).then_some(parsed)
    }

    /// The digits, whole part's and fraction's, from the first that is not
    /// zero.
    fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        let all = self.whole.iter().chain(self.fraction).map(|b| b - b'0');
        all.skip_while(|&d| d == 0)
    }

    /// The first `count` digits as an integer; `None` past 38 digits.
    fn unscaled(&self, count: usize) -> Option<i128> {
        self.digits().take(count).try_fold(0i128, |unscaled, d| {
            unscaled.checked_mul(10)?.checked_add(i128::from(d))
        })
    }

    fn signed(&self, unscaled: i128) -> i128 {
        if self.negative { -unscaled } else { unscaled }
    }
}

impl From<i64> for VariantDecimal {
    fn from(v: i64) -> Self {
        VariantDecimal {
            unscaled: v as i128,
            scale: 0,
        }
    }
}

impl TryFrom<VariantDecimal> for rust_decimal::Decimal {
    type Error = Error;

    /// `rust_decimal` holds 28 digits and scale <= 28; larger values fail.
    fn try_from(d: VariantDecimal) -> Result<rust_decimal::Decimal> {
        rust_decimal::Decimal::try_from_i128_with_scale(d.unscaled, d.scale as u32).map_err(|e| {
            Error::new(
                ErrorKind::OutOfRange,
                format!("decimal {d} does not fit rust_decimal: {e}"),
            )
        })
    }
}

impl TryFrom<rust_decimal::Decimal> for VariantDecimal {
    type Error = Error;

    fn try_from(d: rust_decimal::Decimal) -> Result<VariantDecimal> {
        VariantDecimal::try_new(d.mantissa(), d.scale() as u8)
    }
}

/// `unscaled / 10^scale` as the nearest double, rounded once (Arrow's cast
/// of a decimal rounds the unscaled integer, then its quotient): a
/// division of two exact doubles where both are (an integer of at most 53
/// bits, a power of ten up to 10^22, each converted exactly), else the
/// text `{unscaled}e{-scale}` parsed, which Rust rounds correctly, in
/// `text` (reused by a caller that converts many).
pub fn nearest_double(unscaled: i128, scale: i32, text: &mut String) -> f64 {
    if unscaled.unsigned_abs() <= 1 << 53 && (0..=22).contains(&scale) {
        return unscaled as f64 / POW10[scale as usize] as f64;
    }
    use std::fmt::Write;
    text.clear();
    write!(text, "{unscaled}e{}", -scale).expect("writing to a String does not fail");
    text.parse()
        .expect("an integer with an exponent is a number")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_parses_exactly_and_rounds_half_away_from_zero() {
        let d = |text: &str| text.parse::<VariantDecimal>().unwrap();
        assert_eq!(d("+12").to_string(), "12");
        assert_eq!(d("-1.50").to_string(), "-1.50");
        assert_eq!(d(".5").to_string(), "0.5");
        assert_eq!(d("1e3").to_string(), "1000");
        assert_eq!(d("2.5E-2").to_string(), "0.025");
        assert_eq!(d("0e2000000000").to_string(), "0");
        for bad in [
            "",
            ".",
            "1e",
            "1.2.3",
            "x",
            "1e999",
            "1e2000000000",
            &"9".repeat(39),
        ] {
            assert!(bad.parse::<VariantDecimal>().is_err(), "{bad:?}");
        }
        assert_eq!(d("0.125").round_half_up(2).unwrap().to_string(), "0.13");
        assert_eq!(d("-2.5").round_half_up(0).unwrap().to_string(), "-3");
        assert_eq!(d("-2.5").truncate(0).unwrap().to_string(), "-2");
        assert_eq!(d("1.5").round_half_up(3).unwrap().to_string(), "1.500");
    }

    fn dec(unscaled: i128, scale: u8) -> VariantDecimal {
        VariantDecimal::try_new(unscaled, scale).unwrap()
    }

    #[test]
    fn decimals_order_by_value_at_any_scales() {
        let max = POW10[38] - 1;
        for (a, b, expected) in [
            (dec(150, 2), dec(15, 1), Ordering::Equal),
            (dec(-15, 1), dec(-12, 1), Ordering::Less),
            (dec(-5, 1), dec(3, 1), Ordering::Less),
            (dec(1, 0), dec(999, 3), Ordering::Greater),
            (dec(-1, 0), dec(-999, 3), Ordering::Less),
            // Widening either to the other's scale would overflow i128.
            (dec(max, 0), dec(max, 38), Ordering::Greater),
            (dec(-max, 0), dec(max, 38), Ordering::Less),
            (dec(max, 38), dec(max - 1, 38), Ordering::Greater),
            (dec(1, 38), dec(0, 0), Ordering::Greater),
            (dec(-1, 38), dec(0, 5), Ordering::Less),
        ] {
            assert_eq!(a.cmp(&b), expected, "{a} vs {b}");
            assert_eq!(b.cmp(&a), expected.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn displays_exact_digits_and_scale() {
        for (u, s, text) in [
            (0, 0, "0"),
            (0, 1, "0.0"),
            (4320, 1, "432.0"),
            (-5, 1, "-0.5"),
            (1, 9, "0.000000001"),
            (-123456, 3, "-123.456"),
            (POW10[38] - 1, 0, "99999999999999999999999999999999999999"),
            (1, 38, "0.00000000000000000000000000000000000001"),
        ] {
            assert_eq!(dec(u, s).to_string(), text);
        }
    }

    #[test]
    fn rejects_scale_over_38_and_more_than_38_digits() {
        assert!(VariantDecimal::try_new(1, 39).is_err());
        assert!(VariantDecimal::try_new(POW10[38], 0).is_err());
        assert!(VariantDecimal::try_new(-POW10[38], 0).is_err());
        assert!(VariantDecimal::try_new(i128::MIN, 0).is_err());
    }

    #[test]
    fn equality_is_by_value_across_scales() {
        assert_eq!(dec(150, 2), dec(15, 1));
        assert_eq!(dec(100, 2), VariantDecimal::from(1));
        assert_ne!(dec(151, 2), dec(15, 1));
        assert_eq!(dec(100, 2).to_i64(), Some(1));
        assert_eq!(dec(150, 2).to_i64(), None);
    }

    #[test]
    fn text_rounds_to_a_scale_whatever_its_digits() {
        let rounded =
            |text: &str, scale| VariantDecimal::parse_rounded(text, scale).map(|d| d.to_string());
        // 39 digits after the point, the last one 5 or 4.
        let (five, four) = (
            format!("0.{}5", "0".repeat(38)),
            format!("0.{}4", "0".repeat(38)),
        );
        let (negative_five, smallest) = (format!("-{five}"), format!("0.{}1", "0".repeat(37)));
        for (text, scale, expected) in [
            ("1e-300", 2, Some("0.00")),
            ("-1e-39", 0, Some("0")),
            (
                "1.2345678901234567e-25",
                38,
                Some("0.00000000000000000000000012345678901235"),
            ),
            (&five, 40, None),
            (&five, 38, Some(smallest.as_str())),
            (&negative_five, 38, Some(&format!("-{smallest}"))),
            (&four, 38, Some(&format!("0.{}", "0".repeat(38)))),
            (
                "1.23456789012345678901234567890123456789012",
                2,
                Some("1.23"),
            ),
            ("0.005", 2, Some("0.01")),
            ("0.0049999", 2, Some("0.00")),
            ("9.995", 2, Some("10.00")),
            ("1.5", 3, Some("1.500")),
            ("12e3", 1, Some("12000.0")),
            ("99999999999999999999999999999999999999.5", 0, None),
            ("1e38", 0, None),
            ("x", 2, None),
            ("1.", 0, Some("1")),
            (".", 0, None),
            ("0e2000000000", 2, Some("0.00")),
            ("-0.000", 1, Some("0.0")),
            // Rounding up from the largest i128: past 38 digits.
            ("170141183460469231731687303715884105727.5", 0, None),
            ("-170141183460469231731687303715884105727.5", 0, None),
        ] {
            assert_eq!(
                rounded(text, scale).as_deref(),
                expected,
                "{text} at scale {scale}"
            );
        }
    }

    #[test]
    fn equal_decimals_hash_alike_so_sets_hold_one() {
        let set: std::collections::HashSet<VariantDecimal> = [
            dec(150, 2),
            dec(15, 1),
            dec(1500, 3),
            dec(0, 0),
            dec(0, 5),
            dec(-15, 1),
        ]
        .into();
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn precision_counts_digits_and_required_precision_covers_scale() {
        assert_eq!(dec(0, 0).precision(), 1);
        assert_eq!(dec(999_999_999, 0).precision(), 9);
        assert_eq!(dec(1_000_000_000, 0).precision(), 10);
        assert_eq!(dec(1, 9).required_precision(), 9);
        assert_eq!(dec(1, 38).required_precision(), 38);
    }

    #[test]
    fn rescale_is_exact_or_none() {
        assert_eq!(dec(15, 1).rescale(3).map(|d| d.unscaled()), Some(1500));
        assert_eq!(dec(125, 2).rescale(1), None);
        assert_eq!(dec(1200, 2).rescale(0).map(|d| d.unscaled()), Some(12));
        assert_eq!(dec(POW10[37], 0).rescale(2), None);
    }

    #[test]
    fn converts_to_and_from_rust_decimal() {
        let d = dec(-12345, 2);
        let r = rust_decimal::Decimal::try_from(d).unwrap();
        assert_eq!(r.to_string(), "-123.45");
        assert_eq!(VariantDecimal::try_from(r).unwrap(), d);
        assert!(rust_decimal::Decimal::try_from(dec(POW10[37], 0)).is_err());
    }
}
