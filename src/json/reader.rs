//! A pull reader over JSON text: the caller asks for the next token it
//! expects, strings are borrowed unless they hold escapes, and numbers come
//! back as their text so that no digit is lost on the way.

use crate::error::{Error, ErrorKind, Result};
use crate::variant::VariantDecimal;

/// What the next value is, judged by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peek {
    Null,
    True,
    False,
    Number,
    String,
    Object,
    Array,
}

/// A JSON number, classified the way the Variant encoding wants it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JsonNumber {
    /// An integer in `i64` range.
    Int(i64),
    /// A number without exponent and with at most 38 significant digits and
    /// 38 fractional digits, exactly; integers beyond `i64` have scale 0.
    Decimal(VariantDecimal),
    /// A number with an exponent, or (with [`InexactNumbers::Double`]) one
    /// with too many digits for a decimal.
    Double(f64),
}

/// What becomes of a number written without an exponent that no decimal
/// holds: more than 38 significant digits, or more than 38 after the point
/// (`999999999999999999999999999999999999999`, a 400-digit fraction).
///
/// Such a number is never stored inexactly in silence. By default it is an
/// error naming its line and column: vshred keeps every digit or says so.
/// `Double` stores it as the nearest double, as Spark's `parse_json` does,
/// and counts it, so that a caller can say how many lost digits. A number
/// beyond the range of a double is an error either way, and so is one
/// written with an exponent that overflows (`1e400`); numbers written with
/// an exponent are doubles by their form (`1.5e3`) and are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InexactNumbers {
    /// An error at the number.
    #[default]
    Error,
    /// The nearest double, counted.
    Double,
}

impl std::str::FromStr for InexactNumbers {
    type Err = Error;

    /// `error` or `double`, as the command line, SQL and Python take it.
    fn from_str(s: &str) -> Result<InexactNumbers> {
        match s {
            "error" => Ok(InexactNumbers::Error),
            "double" => Ok(InexactNumbers::Double),
            other => Err(Error::from_message(format!(
                "{other:?} is not error or double"
            ))),
        }
    }
}

impl std::fmt::Display for InexactNumbers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InexactNumbers::Error => "error",
            InexactNumbers::Double => "double",
        })
    }
}

pub(crate) struct JsonReader<'a> {
    text: &'a [u8],
    /// The longest UTF-8 prefix of `text`, found when the first string is
    /// read: strings inside it need no check of their own, which took 6%
    /// of the CPU time of encoding 1M event rows (a call per key).
    utf8: Option<&'a str>,
    pos: usize,
    /// Unescaped strings are built here.
    scratch: String,
    inexact: InexactNumbers,
    /// Numbers stored as inexact doubles so far.
    inexact_count: u32,
}

/// Whether `text` starts with `prefix`, a key with its quotes: from 4 to
/// 16 bytes compared inline as two overlapping words, where `starts_with`
/// calls `memcmp`, whose calls took 2.7% of the CPU of encoding event
/// rows.
#[inline]
fn starts_with_short(text: &[u8], prefix: &[u8]) -> bool {
    let n = prefix.len();
    let Some(text) = text.get(..n) else {
        return false;
    };
    #[inline]
    fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
        let mut word = [0; N];
        word.copy_from_slice(&bytes[at..at + N]);
        word
    }
    match n {
        8..=16 => {
            word::<8>(text, 0) == word::<8>(prefix, 0)
                && word::<8>(text, n - 8) == word::<8>(prefix, n - 8)
        }
        4..=7 => {
            word::<4>(text, 0) == word::<4>(prefix, 0)
                && word::<4>(text, n - 4) == word::<4>(prefix, n - 4)
        }
        _ => text == prefix,
    }
}

/// The longest prefix of `text` that is UTF-8.
fn utf8_prefix(text: &[u8]) -> &str {
    match std::str::from_utf8(text) {
        Ok(all) => all,
        Err(e) => std::str::from_utf8(&text[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// The first byte from `from` that ends a string's plain run: a quote, a
/// backslash or a control character (or the end of `text`). Eight bytes
/// at a time, as one integer: a byte's flag can only be raised wrongly by
/// a borrow from a matching byte below it, so the lowest flag is exact.
#[inline]
fn plain_run_end(text: &[u8], from: usize) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let mut i = from;
    while let Some(Ok(chunk)) = text.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let x = u64::from_le_bytes(chunk);
        let quote = x ^ (ONES * b'"' as u64);
        let backslash = x ^ (ONES * b'\\' as u64);
        let found = (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | x.wrapping_sub(ONES * 0x20) & !x)
            & HIGHS;
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = text.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        i += 1;
    }
    i
}

/// Where a number's parts are in the text.
#[derive(Clone, Copy)]
struct NumberText {
    start: usize,
    end: usize,
    negative: bool,
    int_start: usize,
    int_end: usize,
    /// The end of the fraction's digits; `int_end` without a fraction.
    frac_end: usize,
    has_exponent: bool,
}

impl<'a> JsonReader<'a> {
    pub(crate) fn new(text: &'a [u8], inexact: InexactNumbers) -> JsonReader<'a> {
        JsonReader {
            text,
            utf8: None,
            pos: 0,
            scratch: String::new(),
            inexact,
            inexact_count: 0,
        }
    }

    /// How many numbers were stored as inexact doubles
    /// ([`InexactNumbers::Double`]).
    pub(crate) fn inexact_count(&self) -> u32 {
        self.inexact_count
    }

    /// Moves to byte `pos` of the text, e.g. back to the start of a value.
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    pub(crate) fn text(&self) -> &'a [u8] {
        self.text
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    #[cold]
    pub(crate) fn error_at(&self, pos: usize, message: impl Into<String>) -> Error {
        Error::json(self.text, pos, message)
    }

    /// A key given twice in one object, at `pos`.
    #[cold]
    pub(crate) fn duplicate_key_at(&self, pos: usize, name: &str) -> Error {
        let e = Error::duplicate_key(name);
        self.error_at(pos, e.message()).of_kind(e.kind())
    }

    #[cold]
    fn unexpected(&self, expected: &str) -> Error {
        match self.text.get(self.pos) {
            None => self.error_at(
                self.pos,
                format!("unexpected end of input, expected {expected}"),
            ),
            Some(&b) => {
                let found = if b.is_ascii_graphic() {
                    format!("'{}'", b as char)
                } else {
                    format!("byte 0x{b:02x}")
                };
                // What a file of another kind starts with, named.
                let kind = other_kind(&self.text[self.pos..]).unwrap_or("");
                self.error_at(
                    self.pos,
                    format!("expected {expected}, found {found}{kind}"),
                )
            }
        }
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(&b) = self.text.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.pos += 1;
        }
    }

    /// The kind of the next value, after whitespace.
    #[inline]
    pub(crate) fn peek(&mut self) -> Result<Peek> {
        self.skip_whitespace();
        Ok(match self.text.get(self.pos) {
            Some(b'{') => Peek::Object,
            Some(b'[') => Peek::Array,
            Some(b'"') => Peek::String,
            Some(b'-' | b'0'..=b'9') => Peek::Number,
            Some(b't') => Peek::True,
            Some(b'f') => Peek::False,
            Some(b'n') => Peek::Null,
            _ => return Err(self.unexpected("a JSON value")),
        })
    }

    /// Consumes the literal `null`, `true` or `false` that `peek` announced.
    pub(crate) fn literal(&mut self, word: &'static [u8]) -> Result<()> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error_at(
                self.pos,
                format!(
                    "expected '{}'",
                    std::str::from_utf8(word).unwrap_or("literal")
                ),
            ))
        }
    }

    #[inline]
    fn expect_byte(&mut self, byte: u8, expected: &str) -> Result<()> {
        self.skip_whitespace();
        if self.text.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Consumes `{` and returns the first key, or `None` for `{}`.
    #[inline]
    pub(crate) fn first_key(&mut self) -> Result<Option<&str>> {
        if self.open_object()? {
            self.key().map(Some)
        } else {
            Ok(None)
        }
    }

    /// After a field's value: consumes `,` and returns the next key, or
    /// consumes `}` and returns `None`.
    #[inline]
    pub(crate) fn next_key(&mut self) -> Result<Option<&str>> {
        if self.next_field()? {
            self.key().map(Some)
        } else {
            Ok(None)
        }
    }

    /// Consumes `{` and says whether a key follows; consumes the `}` of
    /// `{}`.
    #[inline]
    pub(crate) fn open_object(&mut self) -> Result<bool> {
        self.pos += 1; // '{', seen by peek
        self.skip_whitespace();
        if self.text.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After a field's value: consumes `,` (a key follows) or `}`.
    #[inline]
    pub(crate) fn next_field(&mut self) -> Result<bool> {
        self.skip_whitespace();
        match self.text.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.unexpected("',' or '}'")),
        }
    }

    /// Consumes the next key and its `:` if the text writes it as
    /// `quoted`, a name with its quotes that holds no quote, backslash or
    /// control character; otherwise consumes nothing but whitespace. A
    /// caller that can guess the key saves reading it as a string.
    #[inline]
    pub(crate) fn key_if(&mut self, quoted: &[u8]) -> Result<bool> {
        self.skip_whitespace();
        if !starts_with_short(&self.text[self.pos..], quoted) {
            return Ok(false);
        }
        self.pos += quoted.len();
        self.expect_byte(b':', "':'")?;
        Ok(true)
    }

    #[inline]
    pub(crate) fn key(&mut self) -> Result<&str> {
        self.skip_whitespace();
        if self.text.get(self.pos) != Some(&b'"') {
            return Err(self.unexpected_key());
        }
        let range = self.string_range()?;
        self.expect_byte(b':', "':'")?;
        Ok(self.str_of(range))
    }

    #[cold]
    fn unexpected_key(&self) -> Error {
        self.error_at(self.pos, "expected '\"' to start a key")
    }

    /// Consumes `[` and says whether an element follows.
    #[inline]
    pub(crate) fn first_element(&mut self) -> Result<bool> {
        self.pos += 1; // '[', seen by peek
        self.skip_whitespace();
        if self.text.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(false);
        }
        Ok(true)
    }

    /// After an element: consumes `,` (true) or `]` (false).
    #[inline]
    pub(crate) fn next_element(&mut self) -> Result<bool> {
        self.skip_whitespace();
        match self.text.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.unexpected("',' or ']'")),
        }
    }

    /// Consumes a string that `peek` announced.
    #[inline]
    pub(crate) fn string(&mut self) -> Result<&str> {
        let range = self.string_range()?;
        Ok(self.str_of(range))
    }

    fn str_of<'s>(&'s self, range: StrRange<'a>) -> &'s str {
        match range {
            StrRange::Borrowed(s) => s,
            StrRange::Scratch => &self.scratch,
        }
    }

    /// Reads a string starting at its opening quote; unescaped strings stay
    /// in the text, escaped ones are decoded into `scratch`.
    #[inline]
    fn string_range(&mut self) -> Result<StrRange<'a>> {
        let start = self.pos + 1;
        let text = self.text;
        let i = plain_run_end(text, start);
        let run = self.check_utf8(start, i)?;
        match text.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                Ok(StrRange::Borrowed(run))
            }
            Some(b'\\') => {
                self.scratch.clear();
                self.scratch.push_str(run);
                self.pos = i;
                self.escaped_rest()?;
                Ok(StrRange::Scratch)
            }
            Some(_) => Err(self.error_at(i, "control character in string (must be escaped)")),
            None => Err(self.error_at(self.pos, "unterminated string")),
        }
    }

    /// The text between `start` and `end` as a `str`, if it is UTF-8.
    #[inline]
    fn check_utf8(&mut self, start: usize, end: usize) -> Result<&'a str> {
        let text = self.text;
        let utf8 = *self.utf8.get_or_insert_with(|| utf8_prefix(text));
        if let Some(run) = utf8.get(start..end) {
            return Ok(run);
        }
        std::str::from_utf8(&self.text[start..end])
            .map_err(|e| self.error_at(start + e.valid_up_to(), "invalid UTF-8 in string"))
    }

    /// Decodes the rest of a string from a backslash at `pos`.
    #[cold]
    fn escaped_rest(&mut self) -> Result<()> {
        let text = self.text;
        loop {
            match text.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let (c, len) = decode_escape(&text[self.pos..])
                        .map_err(|(at, what)| self.error_at(self.pos + at, what))?;
                    self.scratch.push(c);
                    self.pos += len;
                }
                Some(&b) if b < 0x20 => {
                    return Err(
                        self.error_at(self.pos, "control character in string (must be escaped)")
                    );
                }
                Some(_) => {
                    let start = self.pos;
                    let i = plain_run_end(text, start);
                    let run = self.check_utf8(start, i)?;
                    self.scratch.push_str(run);
                    self.pos = i;
                }
                None => return Err(self.error_at(self.pos, "unterminated string")),
            }
        }
    }

    /// Consumes a number that `peek` announced and classifies it.
    #[inline]
    pub(crate) fn number(&mut self) -> Result<JsonNumber> {
        if let Some(v) = self.short_int() {
            return Ok(JsonNumber::Int(v));
        }
        let n = self.scan_number()?;
        self.classify(n)
    }

    /// Consumes an integer of at most 18 digits, without a leading zero
    /// (but `0`), fraction or exponent, read in one pass: most numbers in
    /// JSON are such. `None` leaves anything else to the general reading.
    #[inline]
    fn short_int(&mut self) -> Option<i64> {
        let text = self.text;
        let negative = text.get(self.pos) == Some(&b'-');
        let start = self.pos + negative as usize;
        let mut i = start;
        let mut v = 0u64;
        while let Some(&d) = text.get(i).filter(|d| d.is_ascii_digit()) {
            // Wraps past 19 digits, whose value is not used.
            v = v.wrapping_mul(10).wrapping_add((d - b'0') as u64);
            i += 1;
        }
        let digits = i - start;
        if digits == 0
            || digits > 18
            || (digits > 1 && text[start] == b'0')
            || matches!(text.get(i), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        self.pos = i;
        Some(if negative { -(v as i64) } else { v as i64 })
    }

    /// Consumes a number that `peek` announced, checking its grammar.
    #[inline]
    fn scan_number(&mut self) -> Result<NumberText> {
        let text = self.text;
        let start = self.pos;
        let mut i = start;
        let negative = text[i] == b'-';
        i += negative as usize;
        let int_start = i;
        match text.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while text.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return Err(self.error_at(i, "expected a digit")),
        }
        let int_end = i;
        let mut frac_end = i;
        if text.get(i) == Some(&b'.') {
            i += 1;
            let frac_start = i;
            while text.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == frac_start {
                return Err(self.error_at(i, "expected a digit after '.'"));
            }
            frac_end = i;
        }
        let has_exponent = matches!(text.get(i), Some(b'e' | b'E'));
        if has_exponent {
            i += 1;
            if matches!(text.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_start = i;
            while text.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == exp_start {
                return Err(self.error_at(i, "expected a digit in the exponent"));
            }
        }
        self.pos = i;
        Ok(NumberText {
            start,
            end: i,
            negative,
            int_start,
            int_end,
            frac_end,
            has_exponent,
        })
    }

    /// The number's value in the smallest exact form.
    #[inline]
    fn classify(&mut self, n: NumberText) -> Result<JsonNumber> {
        let text = self.text;
        if n.has_exponent {
            return self.double(n.start, n.end);
        }
        let int_digits = &text[n.int_start..n.int_end];
        if n.frac_end == n.int_end {
            if int_digits.len() <= 18 {
                let v = digits_u64(int_digits) as i64;
                return Ok(JsonNumber::Int(if n.negative { -v } else { v }));
            }
            if int_digits.len() <= 38 {
                let v = digits_u128(int_digits.iter()) as i128;
                let v = if n.negative { -v } else { v };
                return Ok(match i64::try_from(v) {
                    Ok(v) => JsonNumber::Int(v),
                    Err(_) => JsonNumber::Decimal(decimal(v, 0)),
                });
            }
            return self.inexact(n, format!("{} digits", int_digits.len()));
        }
        let frac_digits = &text[n.int_end + 1..n.frac_end];
        let scale = frac_digits.len();
        // Significant digits: the integer part (unless it is "0") and the
        // fraction, without leading zeros.
        let all = int_digits.iter().chain(frac_digits.iter());
        let leading_zeros = all.clone().take_while(|&&d| d == b'0').count();
        let significant = int_digits.len() + scale - leading_zeros;
        if scale > 38 {
            return self.inexact(n, format!("{scale} digits after the point"));
        }
        if significant > 38 {
            return self.inexact(n, format!("{significant} significant digits"));
        }
        let unscaled = if significant <= 19 {
            all.skip(leading_zeros)
                .fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64) as i128
        } else {
            digits_u128(all.skip(leading_zeros)) as i128
        };
        let unscaled = if n.negative { -unscaled } else { unscaled };
        Ok(JsonNumber::Decimal(decimal(unscaled, scale as u8)))
    }

    /// A number without an exponent that no decimal holds (it has `what`):
    /// an error, or a counted double ([`InexactNumbers`]).
    #[cold]
    fn inexact(&mut self, n: NumberText, what: String) -> Result<JsonNumber> {
        match self.inexact {
            // Each front end adds its own way to store the double (a
            // flag, a setting, an argument) as a hint: only for a number a
            // double holds, else it is out of range whatever is asked.
            InexactNumbers::Error => {
                self.double(n.start, n.end)?;
                Err(self
                    .error_at(
                        n.start,
                        format!(
                            "number with {what}: no decimal holds more than 38, and a double would lose digits"
                        ),
                    )
                    .of_kind(ErrorKind::InexactNumber))
            }
            InexactNumbers::Double => {
                let number = self.double(n.start, n.end)?;
                self.inexact_count += 1;
                Ok(number)
            }
        }
    }

    fn double(&self, start: usize, end: usize) -> Result<JsonNumber> {
        // The grammar was checked above, so the text is ASCII.
        let text = std::str::from_utf8(&self.text[start..end]).unwrap_or_default();
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(JsonNumber::Double(v)),
            _ => Err(self.error_at(start, "number out of range for a double")),
        }
    }

    /// Skips one value whose start `peek` announced; `depth` as in parsing.
    pub(crate) fn skip_value(&mut self, depth: usize, max_depth: usize) -> Result<()> {
        match self.peek()? {
            Peek::Null => self.literal(b"null"),
            Peek::True => self.literal(b"true"),
            Peek::False => self.literal(b"false"),
            Peek::Number => self.scan_number().map(|_| ()),
            Peek::String => self.string().map(|_| ()),
            Peek::Object => {
                self.check_depth(depth, max_depth)?;
                let mut key = self.first_key()?.is_some();
                while key {
                    self.skip_value(depth + 1, max_depth)?;
                    key = self.next_key()?.is_some();
                }
                Ok(())
            }
            Peek::Array => {
                self.check_depth(depth, max_depth)?;
                let mut more = self.first_element()?;
                while more {
                    self.skip_value(depth + 1, max_depth)?;
                    more = self.next_element()?;
                }
                Ok(())
            }
        }
    }

    /// Fails when a container at `depth` would exceed `max_depth`.
    #[inline]
    pub(crate) fn check_depth(&self, depth: usize, max_depth: usize) -> Result<()> {
        if depth >= max_depth {
            return Err(self.error_at(
                self.pos,
                format!("nested deeper than the limit of {max_depth}"),
            ));
        }
        Ok(())
    }

    /// Fails unless only whitespace is left.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.skip_whitespace();
        if self.pos < self.text.len() {
            return Err(self.unexpected("the end of input"));
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum StrRange<'a> {
    Borrowed(&'a str),
    Scratch,
}

fn digits_u64(digits: &[u8]) -> u64 {
    digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64)
}

fn digits_u128<'d>(digits: impl Iterator<Item = &'d u8>) -> u128 {
    digits.fold(0u128, |acc, &d| acc * 10 + (d - b'0') as u128)
}

/// At most 38 digits and scale <= 38 were checked by the caller.
fn decimal(unscaled: i128, scale: u8) -> VariantDecimal {
    VariantDecimal::try_new(unscaled, scale).unwrap_or(VariantDecimal::from(0))
}

/// The character of the JSON escape at the start of `bytes` (a backslash
/// and what follows; a surrogate pair is two `\\u` escapes) and the bytes
/// it takes; or where in `bytes` it goes wrong, and how.
pub(crate) fn decode_escape(
    bytes: &[u8],
) -> std::result::Result<(char, usize), (usize, &'static str)> {
    let c = match bytes.get(1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(bytes),
        _ => return Err((0, "invalid escape in string")),
    };
    Ok((c, 2))
}

/// Decodes `\\uXXXX` (and its low surrogate, for a pair) at the start of
/// `bytes`.
fn unicode_escape(bytes: &[u8]) -> std::result::Result<(char, usize), (usize, &'static str)> {
    let high = hex4(bytes, 2)?;
    let code = if (0xD800..0xDC00).contains(&high) {
        if bytes.get(6..8) != Some(b"\\u") {
            return Err((0, "unpaired surrogate in \\u escape"));
        }
        let low = hex4(bytes, 8)?;
        if !(0xDC00..0xE000).contains(&low) {
            return Err((6, "invalid low surrogate in \\u escape"));
        }
        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    } else {
        high
    };
    let len = if code > 0xFFFF { 12 } else { 6 };
    char::from_u32(code)
        .map(|c| (c, len))
        .ok_or((0, "unpaired surrogate in \\u escape"))
}

/// The four hex digits at `at` in `bytes`.
fn hex4(bytes: &[u8], at: usize) -> std::result::Result<u32, (usize, &'static str)> {
    let digits = bytes.get(at..at + 4).ok_or((at, "truncated \\u escape"))?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char)
            .to_digit(16)
            .ok_or((at, "invalid hex digit in \\u escape"))?;
        Ok(acc * 16 + v)
    })
}

/// What a file of another kind than JSON text starts with (`rest`), named
/// with what to do: compressed data, a Parquet file, UTF-16 text.
pub(crate) fn other_kind(rest: &[u8]) -> Option<&'static str> {
    Some(if rest.starts_with(&[0x1f, 0x8b]) {
        " (gzip-compressed data: decompress it first, as zcat does)"
    } else if rest.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        " (zstd-compressed data: decompress it first, as zstdcat does)"
    } else if rest.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        " (xz-compressed data: decompress it first, as xzcat does)"
    } else if rest.starts_with(b"BZh") && rest.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)) {
        " (bzip2-compressed data: decompress it first, as bzcat does)"
    } else if rest.starts_with(b"PAR1") {
        " (a Parquet file, which is read, not encoded)"
    } else if rest.starts_with(&[0xff, 0xfe])
        || rest.starts_with(&[0xfe, 0xff])
        || (rest.first() == Some(&0) && rest.get(1).is_some_and(u8::is_ascii_graphic))
    {
        // A byte order mark, or ASCII with a zero byte beside each
        // character, as Windows tools write text.
        " (UTF-16 text: convert it to UTF-8 first, as iconv -f UTF-16 -t UTF-8 does)"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::{plain_run_end, starts_with_short};

    #[test]
    fn a_short_prefix_matches_as_starts_with_does_whatever_byte_differs() {
        let text: Vec<u8> = (b'a'..=b'z').collect();
        for n in 0..=20usize {
            for len in [n.saturating_sub(1), n, text.len()] {
                let prefix = &text[..n];
                let text = &text[..len.min(text.len())];
                assert_eq!(starts_with_short(text, prefix), text.starts_with(prefix));
                for differing in 0..n {
                    let mut other = prefix.to_vec();
                    other[differing] = b'-';
                    assert!(!starts_with_short(text, &other), "{n} bytes, {differing}");
                }
            }
        }
    }

    /// The byte-by-byte scan that `plain_run_end` does eight at a time.
    fn one_by_one(text: &[u8], from: usize) -> usize {
        (from..text.len())
            .find(|&i| matches!(text[i], b'"' | b'\\' | 0..=0x1f))
            .unwrap_or(text.len())
    }

    #[test]
    fn a_plain_run_ends_where_the_byte_by_byte_scan_ends_it() {
        // Runs of plain ASCII and UTF-8 bytes (0x20-0xff but the two
        // specials) with an ending byte, or none, at every offset.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..40 {
            for _ in 0..50 {
                let mut text: Vec<u8> = (0..len)
                    .map(|_| match (next() % 224) as u8 + 0x20 {
                        b'"' | b'\\' => b'a',
                        b => b,
                    })
                    .collect();
                if len > 0 && next() % 4 > 0 {
                    let at = (next() % len as u64) as usize;
                    text[at] = [b'"', b'\\', 0x00, 0x1f, b'\n'][(next() % 5) as usize];
                }
                for from in 0..=text.len() {
                    assert_eq!(
                        plain_run_end(&text, from),
                        one_by_one(&text, from),
                        "{text:?} from {from}"
                    );
                }
            }
        }
    }
}
