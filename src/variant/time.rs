//! Calendar arithmetic over the day counts of Variant dates and timestamps,
//! and the date and timestamp strings that Spark's `CAST` reads, for the
//! casts of `variant_get`.
//!
//! The strings follow `stringToDate` and `parseTimestampString` in Spark's
//! `SparkDateTimeUtils.scala`, with a session time zone of UTC (vshred has
//! no session). Two things differ: a zone must be `Z`, an offset, or `UTC`,
//! `GMT` or `UT` with or without an offset (Spark also takes region names
//! such as `Europe/Paris`, which need a time-zone database); and a time
//! without a date (`12:30:00`), which Spark puts on the current day,
//! converts to nothing, so that a result does not depend on when it is
//! read.

/// Seconds in a day.
const SECONDS_PER_DAY: i64 = 86_400;
/// Microseconds in a second.
pub(crate) const MICROS_PER_SECOND: u32 = 1_000_000;
/// Nanoseconds in a second.
pub(crate) const NANOS_PER_SECOND: u32 = 1_000_000_000;

/// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + (month <= 2) as i64;
    (year, month, day)
}

/// The day count since 1970-01-01 of a proleptic Gregorian date, if the
/// month and day exist in that year (Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i64> {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    if !(1..=days_in_month).contains(&day) {
        return None;
    }
    // Years start in March, so that a leap day is the last of its year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = 365 * yoe + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The day since 1970-01-01 that a timestamp of `per_second` ticks a
/// second falls on in UTC: Spark's cast of a timestamp to a date.
pub(crate) fn day_of(ticks: i64, per_second: u32) -> Option<i32> {
    i32::try_from(ticks.div_euclid(SECONDS_PER_DAY * i64::from(per_second))).ok()
}

/// A string as Spark's `CAST(s AS DATE)` reads it, in days since
/// 1970-01-01: `yyyy`, `yyyy-[m]m` or `yyyy-[m]m-[d]d`, the year of 4 to 7
/// digits after an optional sign; after a full date, a `T` or a space and
/// then anything. Whitespace and control bytes around it are ignored.
pub(crate) fn parse_date(s: &str) -> Option<i32> {
    let mut c = Cursor::new(s);
    let days = c.date(7)?;
    // Spark reads no further than the date: `2024-03-01T25:99` is a date.
    if c.rest.is_empty() || c.eat(b'T') || c.eat(b' ') {
        i32::try_from(days).ok()
    } else {
        None
    }
}

/// A string as Spark's `CAST(s AS TIMESTAMP)` (with `utc`) or
/// `CAST(s AS TIMESTAMP_NTZ)` reads it: a date as [`parse_date`] takes it
/// (the year of 4 to 6 digits) and, after a `T` or a space,
/// `[h]h[:[m]m[:[s]s[.fraction][zone]]]`; the fraction may have any number
/// of digits, those beyond the unit's precision are dropped. With `utc`,
/// the time is read in the zone the string gives, or in UTC when it gives
/// none; without, the zone is checked and then ignored, as Spark does.
pub(crate) fn parse_timestamp(s: &str, utc: bool) -> Option<Timestamp> {
    let mut c = Cursor::new(s);
    let mut seconds = c.date(6)? * SECONDS_PER_DAY;
    let mut nanos = 0;
    if c.eat(b'T') || c.eat(b' ') {
        let hour = c.number(1, 2)?;
        let (mut minute, mut second, mut offset) = (0, 0, 0);
        if c.eat(b':') {
            minute = c.number(1, 2)?;
            // Spark takes a zone only after the seconds.
            if c.eat(b':') {
                second = c.number(1, 2)?;
                if c.eat(b'.') {
                    nanos = c.fraction();
                }
                if !c.rest.is_empty() {
                    offset = zone_offset(trim(c.rest))?;
                    c.rest = &[];
                }
            }
        }
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        seconds += i64::from(hour * 3600 + minute * 60 + second);
        if utc {
            seconds -= offset;
        }
    }
    c.rest.is_empty().then_some(Timestamp { seconds, nanos })
}

/// A date and time read from a string: whole seconds since
/// 1970-01-01T00:00 and nanoseconds into the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timestamp {
    seconds: i64,
    nanos: u32,
}

impl Timestamp {
    /// Ticks of `per_second` a second (a divisor of a billion) since
    /// 1970-01-01, if an `i64` holds them (nanoseconds: years 1677 to 2262).
    pub(crate) fn ticks(self, per_second: u32) -> Option<i64> {
        // In i128: the whole seconds of the earliest micros,
        // -290308-12-21T19:59:05.224192Z, are below i64::MIN until the
        // fraction is added.
        let whole = i128::from(self.seconds) * i128::from(per_second);
        let fraction = self.nanos / (NANOS_PER_SECOND / per_second);
        i64::try_from(whole + i128::from(fraction)).ok()
    }
}

/// A string's bytes being read, trimmed as Spark trims them.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor {
            rest: trim(s.as_bytes()),
        }
    }

    /// Whether the next byte is `b`, consumed if so.
    fn eat(&mut self, b: u8) -> bool {
        match self.rest.split_first() {
            Some((&first, rest)) if first == b => {
                self.rest = rest;
                true
            }
            _ => false,
        }
    }

    /// The run of digits here, if it has `min..=max` of them. The whole run
    /// counts, as in Spark: `2024-003-01` has no month.
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let digits = self.digits();
        // At most 7 digits are asked for: a u32 holds them.
        (min..=max)
            .contains(&digits.len())
            .then(|| digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    }

    /// The run of digits here as nanoseconds: the first nine, padded.
    fn fraction(&mut self) -> u32 {
        let digits = self.digits();
        (0..9).fold(0, |n, i| {
            n * 10 + digits.get(i).map_or(0, |d| u32::from(d - b'0'))
        })
    }

    fn digits(&mut self) -> &'a [u8] {
        let n = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let (digits, rest) = self.rest.split_at(n);
        self.rest = rest;
        digits
    }

    /// `[+-]yyyy[-[m]m[-[d]d]]` as days since 1970-01-01, the year of 4 to
    /// `max_year_digits` digits, month and day 1 when left out. Only a full
    /// date may have more after it.
    fn date(&mut self, max_year_digits: usize) -> Option<i64> {
        let sign = if self.eat(b'-') {
            -1
        } else {
            self.eat(b'+');
            1
        };
        let year = sign * i64::from(self.number(4, max_year_digits)?);
        let mut month = 1;
        if self.eat(b'-') {
            month = self.number(1, 2)?;
            if self.eat(b'-') {
                let day = self.number(1, 2)?;
                return days_from_civil(year, month, day);
            }
        }
        // `yyyy` and `yyyy-[m]m` are the whole string or no date.
        if !self.rest.is_empty() {
            return None;
        }
        days_from_civil(year, month, 1)
    }
}

/// `s` without the whitespace and control bytes around it (Spark's
/// `UTF8String.isWhitespaceOrISOControl`).
fn trim(s: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b <= b' ' || *b == 0x7f;
    let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !blank(b)).map_or(start, |i| i + 1);
    &s[start..end]
}

/// Seconds east of UTC of a zone as Spark's `getZoneId` reads it: `Z`;
/// `UTC`, `GMT` or `UT`, alone or followed by an offset; or an offset.
fn zone_offset(zone: &[u8]) -> Option<i64> {
    if zone == b"Z" {
        return Some(0);
    }
    const PREFIXES: [&[u8]; 3] = [b"UTC", b"GMT", b"UT"];
    match PREFIXES
        .iter()
        .find_map(|prefix| zone.strip_prefix(*prefix))
    {
        Some([]) => Some(0),
        Some(offset) => utc_offset(offset),
        None => utc_offset(zone),
    }
}

/// Seconds east of UTC of `+h`, `+hh`, `+hhmm`, `+hh:mm`, `+hhmmss` or
/// `+hh:mm:ss` (Java's `ZoneOffset.of`), or of `+h:mm`, `+hh:m`, `+h:m` or
/// `+h:mm:ss`, which Spark pads to those; `-` for west; at most 18 hours.
fn utc_offset(offset: &[u8]) -> Option<i64> {
    let (sign, rest) = match offset.split_first()? {
        (b'+', rest) => (1, rest),
        (b'-', rest) => (-1, rest),
        _ => return None,
    };
    const ZERO: [u8; 2] = *b"00";
    // The forms with a colon first: `1:30` is not `hhmm`.
    let (h, m, s) = match *rest {
        [h1, h2, b':', m1, m2, b':', s1, s2] => ([h1, h2], [m1, m2], [s1, s2]),
        [h, b':', m1, m2, b':', s1, s2] => ([b'0', h], [m1, m2], [s1, s2]),
        [h1, h2, b':', m1, m2] => ([h1, h2], [m1, m2], ZERO),
        [h, b':', m1, m2] => ([b'0', h], [m1, m2], ZERO),
        [h1, h2, b':', m] => ([h1, h2], [b'0', m], ZERO),
        [h, b':', m] => ([b'0', h], [b'0', m], ZERO),
        [h1, h2, m1, m2, s1, s2] => ([h1, h2], [m1, m2], [s1, s2]),
        [h1, h2, m1, m2] => ([h1, h2], [m1, m2], ZERO),
        [h1, h2] => ([h1, h2], ZERO, ZERO),
        [h] => ([b'0', h], ZERO, ZERO),
        _ => return None,
    };
    let two = |[a, b]: [u8; 2]| {
        (a.is_ascii_digit() && b.is_ascii_digit()).then(|| i64::from((a - b'0') * 10 + (b - b'0')))
    };
    let (h, m, s) = (two(h)?, two(m)?, two(s)?);
    let seconds = h * 3600 + m * 60 + s;
    (m < 60 && s < 60 && seconds <= 18 * 3600).then_some(sign * seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_from_civil_inverts_civil_from_days() {
        // Every day from year -2000 to 6000, leap days and century years
        // among them.
        for days in -1_450_000..1_475_000 {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(days_from_civil(year, month, day), Some(days), "{days}");
        }
    }

    #[test]
    fn days_from_civil_takes_only_days_the_month_has() {
        for (date, want) in [
            ((1970, 1, 1), Some(0)),
            ((1969, 12, 31), Some(-1)),
            ((2024, 2, 29), Some(19_782)),
            ((2000, 2, 29), Some(11_016)),
            ((1, 1, 1), Some(-719_162)),
            ((2023, 2, 29), None),
            ((1900, 2, 29), None),
            ((2024, 4, 31), None),
            ((2024, 1, 32), None),
            ((2024, 13, 1), None),
            ((2024, 0, 1), None),
            ((2024, 1, 0), None),
        ] {
            let (year, month, day) = date;
            assert_eq!(days_from_civil(year, month, day), want, "{date:?}");
        }
    }

    #[test]
    fn dates_read_as_spark_casts_them() {
        for (s, want) in [
            ("2015-01-28", Some(16_463)),
            ("2015", Some(16_436)),
            ("2015-03", Some(16_495)),
            ("2015-3-8", Some(16_502)),
            (" 2015-03-18 ", Some(16_512)),
            ("\t2015-03-18\n", Some(16_512)),
            ("02015-03-18", Some(16_512)),
            ("2015-03-18T", Some(16_512)),
            ("2015-03-18 123142", Some(16_512)),
            ("2015-03-18T25:99 anything", Some(16_512)),
            ("2024-03-01T12:30:00+05:00", Some(19_783)),
            ("2024-02-29", Some(19_782)),
            ("2000-02-29", Some(11_016)),
            ("0001-01-01", Some(-719_162)),
            // The ends of Date32.
            ("5881580-7-11", Some(i32::MAX)),
            ("5881580-7-12", None),
            ("-5877641-6-23", Some(i32::MIN)),
            ("-5877641-6-22", None),
            ("2023-02-29", None),
            ("1900-02-29", None),
            ("2015-04-31", None),
            ("2015-13-01", None),
            ("2015-03-18X", None),
            ("2015-03-18Z", None),
            ("2015/03/18", None),
            ("2015.03.18", None),
            ("20150318", None),
            ("2015-031-8", None),
            ("015-03-18", None),
            ("1999 08 01", None),
            ("1999-08 01", None),
            ("1999 08", None),
            ("2015-03-", None),
            ("12:30:00", None),
            ("", None),
            ("   ", None),
            ("+", None),
            ("-", None),
        ] {
            assert_eq!(parse_date(s), want, "{s:?}");
        }
    }

    /// 2015-03-18T12:03:17Z in seconds.
    const T: i64 = 1_426_680_197;

    fn micros(s: &str) -> Option<i64> {
        parse_timestamp(s, true).and_then(|t| t.ticks(MICROS_PER_SECOND))
    }

    #[test]
    fn timestamps_read_as_spark_casts_them() {
        let m = |seconds: i64| Some(seconds * 1_000_000);
        for (s, want) in [
            ("2015-03-18T12:03:17Z", m(T)),
            ("2015-03-18 12:03:17Z", m(T)),
            ("2015-03-18T12:03:17", m(T)), // no zone: UTC
            (" 2015-03-18T12:03:17 ", m(T)),
            ("2015-3-18T12:3:17", m(T)),
            ("2015-03-18T12:03", m(T - 17)),
            ("2015-03-18T12", m(T - 3 * 60 - 17)),
            ("2015-03-18", m(16_512 * 86_400)),
            ("2015-03-18 ", m(16_512 * 86_400)),
            ("2015-03", m(16_495 * 86_400)),
            ("2015", m(16_436 * 86_400)),
            ("2024-02-29T00:00:00Z", m(1_709_164_800)),
            // Fractions: any number of digits, those past micros dropped.
            ("2015-03-18T12:03:17.1", Some(T * 1_000_000 + 100_000)),
            ("2015-03-18T12:03:17.123456", Some(T * 1_000_000 + 123_456)),
            (
                "2015-03-18T12:03:17.123456789Z",
                Some(T * 1_000_000 + 123_456),
            ),
            ("2015-03-18T12:03:17.", m(T)),
            ("1969-12-31T23:59:59.5Z", Some(-500_000)),
            // Zones.
            ("2015-03-18T12:03:17+01:00", m(T - 3600)),
            ("2015-03-18T12:03:17+0100", m(T - 3600)),
            ("2015-03-18T12:03:17+01", m(T - 3600)),
            ("2015-03-18T12:03:17+1", m(T - 3600)),
            ("2015-03-18T12:03:17-1:0", m(T + 3600)),
            ("2015-03-18T12:03:17-13:53", m(T + 13 * 3600 + 53 * 60)),
            ("2015-03-18T12:03:17+7:30", m(T - 7 * 3600 - 30 * 60)),
            ("2015-03-18T12:03:17+07:3", m(T - 7 * 3600 - 3 * 60)),
            (
                "2015-03-18T12:03:17+07:30:15",
                m(T - 7 * 3600 - 30 * 60 - 15),
            ),
            ("2015-03-18T12:03:17+073015", m(T - 7 * 3600 - 30 * 60 - 15)),
            ("2015-03-18T12:03:17+18:00", m(T - 18 * 3600)),
            ("2015-03-18T12:03:17 +01:00", m(T - 3600)),
            ("2015-03-18T12:03:17UTC", m(T)),
            ("2015-03-18T12:03:17 UTC", m(T)),
            ("2015-03-18T12:03:17.5 GMT", Some(T * 1_000_000 + 500_000)),
            ("2015-03-18T12:03:17 UT", m(T)),
            ("2015-03-18T12:03:17GMT+07:30", m(T - 7 * 3600 - 30 * 60)),
            ("2015-03-18T12:03:17 UTC-1", m(T + 3600)),
            ("2015-03-18T12:03:17 UT+0", m(T)),
            // The ends of i64 micros.
            ("294247-01-10T04:00:54.775807Z", Some(i64::MAX)),
            ("294247-01-10T04:00:54.775808Z", None),
            ("-290308-12-21T19:59:05.224192Z", Some(i64::MIN)),
            ("-290308-12-21T19:59:05.224191Z", None),
        ] {
            assert_eq!(micros(s), want, "{s:?}");
        }
    }

    #[test]
    fn strings_spark_does_not_cast_to_timestamps_give_none() {
        for s in [
            // Days and times that do not exist.
            "2023-02-29",
            "2024-04-31",
            "2024-13-01",
            "2024-00-10",
            "2024-03-01T24:00",
            "2024-03-01T23:60",
            "2024-03-01T23:59:60",
            // A zone only after the seconds; none on a date alone.
            "2024-03-01T12:30Z",
            "2024-03-01T12Z",
            "2024-03-01Z",
            "2024-03-01 UTC",
            // A separator must have a time after it (SPARK-36286).
            "2024-03-01T",
            "2024-03-01T12:",
            "2024-03-01T12:30:",
            "2024-03-01  12:30",
            // Offsets Java's ZoneOffset refuses, and names it has no rules for.
            "2015-03-18T12:03:17+18:01",
            "2015-03-18T12:03:17+19",
            "2015-03-18T12:03:17-0:70",
            "2015-03-18T12:03:17+1:0:0",
            "2015-03-18T12:03:17+123",
            "2015-03-18T12:03:17+01:00:0",
            "2015-03-18T12:03:17z",
            "2015-03-18T12:03:17UTC01",
            "2015-03-18T12:03:17 Europe/Paris",
            "2015-03-18T12:03:17.123.4",
            // No date: Spark would take the current day.
            "12:30:00",
            "T12:30:00",
            // Dates Spark does not read; years past 6 digits.
            "0002015-03-18",
            "20150318",
            "2015/03/18",
            "015-03-18",
            "2015-031-8",
            "2015-03-18X",
            "2015 03",
            "2021-01-01T12:30:4294967297",
            "",
            "    ",
            "+",
        ] {
            assert_eq!(parse_timestamp(s, true), None, "{s:?}");
        }
    }

    #[test]
    fn timestamp_ntz_ignores_the_zone_after_checking_it() {
        let ntz = |s| parse_timestamp(s, false).and_then(|t| t.ticks(MICROS_PER_SECOND));
        for (s, want) in [
            ("2015-03-18T12:03:17", Some(T * 1_000_000)),
            ("2015-03-18T12:03:17+01:00", Some(T * 1_000_000)),
            (
                "2015-03-18T12:03:17.5 UTC-07:00",
                Some(T * 1_000_000 + 500_000),
            ),
            ("2015-03-18T12:03:17+25:00", None),
            ("2015-03-18T12:03:17 Europe/Paris", None),
        ] {
            assert_eq!(ntz(s), want, "{s:?}");
        }
    }

    #[test]
    fn nanos_keep_nine_digits_and_the_range_of_i64() {
        let nanos = |s| parse_timestamp(s, true).and_then(|t| t.ticks(NANOS_PER_SECOND));
        for (s, want) in [
            (
                "2015-03-18T12:03:17.123456789Z",
                Some(T * 1_000_000_000 + 123_456_789),
            ),
            (
                "2015-03-18T12:03:17.1234567891Z",
                Some(T * 1_000_000_000 + 123_456_789),
            ),
            (
                "2015-03-18T12:03:17.5",
                Some(T * 1_000_000_000 + 500_000_000),
            ),
            ("1677-09-21T00:12:43.145224192Z", Some(i64::MIN)),
            ("1677-09-21T00:12:43.145224191Z", None),
            ("2262-04-11T23:47:16.854775807Z", Some(i64::MAX)),
            ("2262-04-12", None),
        ] {
            assert_eq!(nanos(s), want, "{s:?}");
        }
    }
}
