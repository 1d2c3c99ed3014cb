//! JSON text -> Variant, streamed from the reader into the builder.

use crate::error::{Error, ErrorKind, Result};
use crate::json::reader::{InexactNumbers, JsonNumber, JsonReader, Peek};
use crate::variant::{DEFAULT_MAX_DEPTH, VariantBuilder};

/// Parses JSON text into a Variant; reusable across many texts.
///
/// Numbers keep their exact value: integers become the smallest of
/// int8..int64; integers beyond `i64` become decimal16 (up to 38 digits);
/// numbers with a fraction and no exponent become the smallest decimal that
/// holds their digits with their scale (`432.0` stays scale 1); numbers
/// with an exponent become doubles. A number without an exponent that no
/// decimal holds (more than 38 digits) is an error, unless the parser is
/// told to store it as a double ([`InexactNumbers`]).
///
/// ```
/// use vshred::json::JsonParser;
/// use vshred::variant::{VariantBuilder, VariantRef, VariantType};
///
/// let mut parser = JsonParser::new();
/// let mut builder = VariantBuilder::new();
/// parser.parse(br#"{"price": 432.0, "qty": 3}"#, &mut builder)?;
/// let (metadata, value) = builder.finish();
/// let object = VariantRef::try_new(metadata, value)?.as_object().unwrap();
/// let price = object.get("price").unwrap();
/// assert_eq!(price.variant_type(), VariantType::Decimal4);
/// assert_eq!(price.as_decimal().unwrap().to_string(), "432.0");
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct JsonParser {
    max_depth: usize,
    inexact_numbers: InexactNumbers,
}

impl Default for JsonParser {
    fn default() -> Self {
        JsonParser::new()
    }
}

impl JsonParser {
    /// A parser with the [default depth limit](DEFAULT_MAX_DEPTH).
    pub fn new() -> JsonParser {
        JsonParser {
            max_depth: DEFAULT_MAX_DEPTH,
            inexact_numbers: InexactNumbers::default(),
        }
    }

    /// Sets what becomes of numbers that no decimal holds: an error (the
    /// default) or the nearest double, counted.
    ///
    /// ```
    /// use vshred::json::{InexactNumbers, JsonParser};
    /// use vshred::variant::VariantBuilder;
    ///
    /// let forty_nines = "9".repeat(40);
    /// let mut builder = VariantBuilder::new();
    /// let err = JsonParser::new().parse(forty_nines.as_bytes(), &mut builder).unwrap_err();
    /// assert_eq!(err.kind(), vshred::ErrorKind::InexactNumber);
    /// assert!(err.to_string().starts_with("inexact number at line 1, column 1 (byte 0): number with 40 digits"));
    ///
    /// let lenient = JsonParser::new().with_inexact_numbers(InexactNumbers::Double);
    /// builder.reset();
    /// assert_eq!(lenient.parse(forty_nines.as_bytes(), &mut builder)?, 1);
    /// # Ok::<(), vshred::Error>(())
    /// ```
    pub fn with_inexact_numbers(mut self, inexact: InexactNumbers) -> JsonParser {
        self.inexact_numbers = inexact;
        self
    }

    /// What becomes of numbers that no decimal holds.
    pub fn inexact_numbers(&self) -> InexactNumbers {
        self.inexact_numbers
    }

    /// Sets how many objects and arrays may nest; deeper input is an error.
    ///
    /// Each level takes stack, here and in whatever reads the value after:
    /// the default, [`DEFAULT_MAX_DEPTH`](crate::variant::DEFAULT_MAX_DEPTH),
    /// fits any thread's stack, while a depth of thousands needs a thread
    /// with a stack to match (vshred's own threads have 32 MiB), or the
    /// process aborts on a stack overflow, which no error can report.
    pub fn with_max_depth(mut self, max_depth: usize) -> JsonParser {
        self.max_depth = max_depth;
        self
    }

    /// Parses `text`, which must hold exactly one JSON value, into
    /// `builder` (which must be empty; call [`VariantBuilder::reset`]
    /// between values). Duplicate keys follow the builder's
    /// [`DuplicateKeys`](crate::variant::DuplicateKeys) policy.
    ///
    /// Returns how many numbers were stored as inexact doubles (none
    /// unless [`InexactNumbers::Double`]). Errors give the line, column and
    /// byte offset in `text`.
    pub fn parse(&self, text: &[u8], builder: &mut VariantBuilder) -> Result<u32> {
        assert!(
            builder.is_empty(),
            "JsonParser::parse needs an empty builder"
        );
        let mut reader = self.reader(text);
        self.parse_value(&mut reader, builder, 0)?;
        reader.finish()?;
        Ok(reader.inexact_count())
    }

    /// A reader of `text` with this parser's number rule.
    pub(crate) fn reader<'t>(&self, text: &'t [u8]) -> JsonReader<'t> {
        JsonReader::new(text, self.inexact_numbers)
    }

    /// Parses the reader's next value into the builder; `depth` is the
    /// number of containers around it.
    pub(crate) fn parse_value(
        &self,
        r: &mut JsonReader<'_>,
        b: &mut VariantBuilder,
        depth: usize,
    ) -> Result<()> {
        match r.peek()? {
            Peek::Null => {
                r.literal(b"null")?;
                b.null();
            }
            Peek::True => {
                r.literal(b"true")?;
                b.bool(true);
            }
            Peek::False => {
                r.literal(b"false")?;
                b.bool(false);
            }
            Peek::Number => match r.number()? {
                JsonNumber::Int(v) => b.int(v),
                JsonNumber::Decimal(d) => b.decimal(d),
                JsonNumber::Double(v) => b.double(v),
            },
            Peek::String => b.string(r.string()?),
            Peek::Object => {
                r.check_depth(depth, self.max_depth)?;
                let start = r.position();
                b.begin_object();
                let mut key = r.first_key()?;
                while let Some(k) = key {
                    b.key(k);
                    self.parse_value(r, b, depth + 1)?;
                    key = r.next_key()?;
                }
                b.end_object()
                    .map_err(|e| duplicate_key_error(r, start, depth, self.max_depth, e))?;
            }
            Peek::Array => {
                r.check_depth(depth, self.max_depth)?;
                b.begin_array();
                let mut more = r.first_element()?;
                while more {
                    self.parse_value(r, b, depth + 1)?;
                    more = r.next_element()?;
                }
                b.end_array()
                    .map_err(|e| r.error_at(r.position(), e.message().to_string()))?;
            }
        }
        Ok(())
    }
}

/// Builds the error for an object that `end_object` refused, pointing at the
/// second occurrence of the duplicate key: the object is scanned again from
/// `start`, which costs nothing on the path without errors.
#[cold]
pub(crate) fn duplicate_key_error(
    r: &JsonReader<'_>,
    start: usize,
    depth: usize,
    max_depth: usize,
    e: Error,
) -> Error {
    if e.kind() != ErrorKind::DuplicateKey {
        return r.error_at(r.position(), e.message().to_string());
    }
    // Skipping values classifies no number.
    let mut scan = JsonReader::new(r.text(), InexactNumbers::Error);
    let mut seen = std::collections::HashSet::new();
    let found = (|| -> Result<Option<usize>> {
        scan.seek(start);
        let mut at = scan.position();
        let mut key = scan.first_key()?.map(str::to_owned);
        while let Some(k) = key {
            if !seen.insert(k) {
                return Ok(Some(at));
            }
            scan.skip_value(depth + 1, max_depth)?;
            at = scan.position();
            key = scan.next_key()?.map(str::to_owned);
        }
        Ok(None)
    })();
    let at = match found {
        Ok(Some(at)) => at,
        _ => start,
    };
    // `at` is before the ',' or at '{': point at the key's opening quote.
    let text = r.text();
    let quote = text[at..]
        .iter()
        .position(|&c| c == b'"')
        .map_or(at, |i| at + i);
    r.error_at(quote, e.message()).of_kind(e.kind())
}

/// Parses one JSON value into a new Variant and returns its
/// `(metadata, value)` bytes; duplicate keys are an error.
///
/// ```
/// let (metadata, value) = vshred::json::json_to_variant(br#"[1, "two", 3.0]"#)?;
/// let variant = vshred::variant::VariantRef::try_new(&metadata, &value)?;
/// assert_eq!(vshred::json::variant_to_json_string(&variant), r#"[1,"two",3.0]"#);
/// # Ok::<(), vshred::Error>(())
/// ```
pub fn json_to_variant(text: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut builder = VariantBuilder::new();
    JsonParser::new().parse(text, &mut builder)?;
    Ok(builder.into_parts())
}
