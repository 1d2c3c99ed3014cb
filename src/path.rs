//! Paths into a Variant: `$.a.b[0]`, `$['key.with.dots']`.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// One step of a [`VariantPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSegment {
    /// An object field, by name.
    Field(String),
    /// An array element, from 0.
    Index(usize),
}

/// A path from the root of a Variant to a sub-value.
///
/// Syntax: `$` is the root; `.name` is a field whose name is an identifier
/// (letters, digits, `_`, `-`, `@`, `$`); `['any name']` or `["any name"]` is any field
/// (with `\'`, `\"` and `\\` escapes); `[N]` is an array element. The
/// leading `$` may be left out.
///
/// ```
/// use vshred::path::{PathSegment, VariantPath};
/// let path: VariantPath = "$.a['b.c'][2]".parse()?;
/// assert_eq!(
///     path.segments(),
///     [PathSegment::Field("a".into()), PathSegment::Field("b.c".into()), PathSegment::Index(2)]
/// );
/// assert_eq!(path.to_string(), "$.a['b.c'][2]");
/// # Ok::<(), vshred::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VariantPath {
    segments: Vec<PathSegment>,
}

impl VariantPath {
    /// The root.
    pub fn root() -> VariantPath {
        VariantPath::default()
    }

    /// A path of these segments.
    pub fn new(segments: Vec<PathSegment>) -> VariantPath {
        VariantPath { segments }
    }

    /// This path and one more step.
    pub fn join(&self, step: PathSegment) -> VariantPath {
        let mut segments = self.segments.clone();
        segments.push(step);
        VariantPath { segments }
    }

    /// The steps, root first.
    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Result<VariantPath> {
        let error = |at: usize, message: &str| {
            Error::new(
                ErrorKind::Path,
                format!(
                    "{text:?} at character {}: {message}",
                    character_at(text, at)
                ),
            )
        };
        let (path, end) = VariantPath::parse_prefix(text).map_err(|(at, m)| error(at, m))?;
        if end < text.len() {
            // Spark's paths take any character but `.` and `[` after a
            // `.`; here a name of other characters is quoted, which says
            // where it ends (a path in a `--where` filter ends at a space).
            // The name the error cut, after the last `.`.
            let cut = text[..end]
                .rfind('.')
                .filter(|&dot| dot + 1 < end && text[dot + 1..end].bytes().all(is_identifier));
            let Some(dot) = cut else {
                return Err(error(end, "expected '.' or '['"));
            };
            let (before, start) = (&text[..dot], dot + 1);
            let rest = &text[start..];
            let (name, after) = rest.split_at(rest.find(['.', '[']).unwrap_or(rest.len()));
            let quoted = VariantPath::new(vec![PathSegment::Field(name.to_string())]);
            return Err(error(
                end,
                &format!(
                    "expected '.' or '[' (a name with other characters is quoted: {before}{}{after})",
                    &quoted.to_string()[1..]
                ),
            ));
        }
        Ok(path)
    }

    /// Parses the path at the start of `text`, up to the first character
    /// that cannot continue it (a space, an operator); returns it and the
    /// byte length it took, or the byte offset of a syntax error and what
    /// it is, for the caller to report within its own text.
    pub(crate) fn parse_prefix(
        text: &str,
    ) -> std::result::Result<(VariantPath, usize), (usize, &'static str)> {
        let bytes = text.as_bytes();
        let err = |at: usize, message: &'static str| (at, message);
        // As Spark's: `a.b` could mean the key "a.b" as well as `$.a.b`.
        if bytes.first() != Some(&b'$') {
            return Err(err(
                0,
                "a path starts with $ (the whole value; $.a.b, $.a[0], $['a.b'])",
            ));
        }
        let mut i = 1;
        let mut segments = Vec::new();
        while i < bytes.len() {
            match bytes[i] {
                b'.' => {
                    let start = i + 1;
                    let mut end = start;
                    while end < bytes.len() && is_identifier(bytes[end]) {
                        end += 1;
                    }
                    if end == start {
                        return Err(err(start, "expected a field name after '.'"));
                    }
                    segments.push(PathSegment::Field(text[start..end].to_string()));
                    i = end;
                }
                b'[' => match bytes.get(i + 1) {
                    Some(&quote @ (b'\'' | b'"')) => {
                        let mut name = String::new();
                        let mut j = i + 2;
                        loop {
                            match bytes.get(j) {
                                None => return Err(err(i, "unterminated quoted field name")),
                                Some(b'\\') => {
                                    let (c, len) = escape(&bytes[j..])
                                        .ok_or(err(j, "invalid escape in field name"))?;
                                    name.push(c);
                                    j += len;
                                }
                                Some(&c) if c == quote => break,
                                Some(_) => {
                                    let ch = text[j..].chars().next().unwrap_or_default();
                                    name.push(ch);
                                    j += ch.len_utf8();
                                }
                            }
                        }
                        if bytes.get(j + 1) != Some(&b']') {
                            return Err(err(j + 1, "expected ']' after the quoted name"));
                        }
                        segments.push(PathSegment::Field(name));
                        i = j + 2;
                    }
                    _ => {
                        let start = i + 1;
                        let mut end = start;
                        while end < bytes.len() && bytes[end].is_ascii_digit() {
                            end += 1;
                        }
                        if bytes.get(start) == Some(&b'*') {
                            return Err(err(
                                start,
                                "[*] (each element, as `schema` lists an array's) is not one value: ask for the array, or one element as [0]",
                            ));
                        }
                        if end == start {
                            return Err(err(start, "expected an index or a quoted name in [...]"));
                        }
                        if bytes.get(end) != Some(&b']') {
                            return Err(err(end, "expected ']' after the index"));
                        }
                        let index = text[start..end]
                            .parse()
                            .map_err(|_| err(start, "index too large"))?;
                        segments.push(PathSegment::Index(index));
                        i = end + 1;
                    }
                },
                _ => break,
            }
        }
        Ok((VariantPath { segments }, i))
    }
}

/// The character of the escape at the start of `bytes` (a backslash and
/// what follows: a quote, or one of JSON's escapes, `\\n` or `\\u0000`)
/// and the bytes it takes.
fn escape(bytes: &[u8]) -> Option<(char, usize)> {
    match bytes.get(1) {
        Some(b'\'') => Some(('\'', 2)),
        _ => crate::json::decode_escape(bytes).ok(),
    }
}

/// Characters a path prints as JSON escapes, which parse back: those that
/// print as nothing, as a line break or as a space that is not one
/// (controls, line separators, spaces other than ' ', and Unicode's
/// default-ignorable characters: the byte order mark, zero-width, joiner
/// and direction marks, variation selectors, fillers, tags), so that a key
/// can be told from its look-alikes and typed back.
fn unseen(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff0}'..='\u{fffb}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// Which character of `text` (from 1) its byte `at` is in: what an
/// error's "at character N" counts, so that `é` is one.
pub(crate) fn character_at(text: &str, at: usize) -> usize {
    text.char_indices().take_while(|&(i, _)| i < at).count() + 1
}

/// The name `text` stands for, its escapes (as in a quoted name of a path:
/// `\\'`, `\\\\`, JSON's `\\n` and `\\u0000`) read: the name of a step
/// written elsewhere than in a path's text (SQL's `v:['a\\u0000']`).
pub fn unescape_name(text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut name = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(ch) = text[at..].chars().next() {
        if ch == '\\' {
            let (c, len) = escape(&bytes[at..]).ok_or_else(|| {
                Error::new(
                    ErrorKind::Path,
                    format!(
                        "{text:?} at character {}: invalid escape in field name",
                        character_at(text, at)
                    ),
                )
            })?;
            name.push(c);
            at += len;
        } else {
            name.push(ch);
            at += ch.len_utf8();
        }
    }
    Ok(name)
}

/// Whether `b` may be in a name after `.`: Logstash's `@timestamp` and
/// MongoDB's `$oid` are names, as in Spark's paths.
fn is_identifier(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'@' | b'$') || b >= 0x80
}

impl std::str::FromStr for VariantPath {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        VariantPath::parse(s)
    }
}

impl fmt::Display for VariantPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for s in &self.segments {
            match s {
                PathSegment::Field(name)
                    if !name.is_empty()
                        && name.bytes().all(is_identifier)
                        && !name.chars().any(unseen) =>
                {
                    write!(f, ".{name}")?
                }
                PathSegment::Field(name) => {
                    f.write_str("['")?;
                    for c in name.chars() {
                        match c {
                            '\\' | '\'' => write!(f, "\\{c}")?,
                            // Characters one cannot see or type
                            // ([`unseen`]) as JSON escapes, which parse
                            // back; beyond the BMP, as JSON writes them,
                            // a surrogate pair.
                            c if unseen(c) => {
                                for unit in c.encode_utf16(&mut [0; 2]) {
                                    write!(f, "\\u{unit:04x}")?
                                }
                            }
                            c => write!(f, "{c}")?,
                        }
                    }
                    f.write_str("']")?
                }
                PathSegment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy as _;

    fn field(name: &str) -> PathSegment {
        PathSegment::Field(name.into())
    }

    #[test]
    fn parses_every_form() {
        for (text, segments) in [
            ("$", vec![]),
            ("$.a", vec![field("a")]),
            ("$['a.b']", vec![field("a.b")]),
            (r#"$["it's"]"#, vec![field("it's")]),
            (r"$['it\'s']", vec![field("it's")]),
            ("$['é']", vec![field("é")]),
            (r"$['\u0000\n\t\/']", vec![field("\0\n\t/")]),
            (r"$['\ud83d\ude00']", vec![field("😀")]),
            ("$.tags[10]", vec![field("tags"), PathSegment::Index(10)]),
            ("$.@timestamp", vec![field("@timestamp")]),
            ("$._id.$oid", vec![field("_id"), field("$oid")]),
            (
                "$[0][1]",
                vec![PathSegment::Index(0), PathSegment::Index(1)],
            ),
        ] {
            assert_eq!(
                VariantPath::parse(text).unwrap().segments(),
                segments,
                "{text}"
            );
        }
    }

    proptest::proptest! {
        /// Any path prints as text that parses back to it, and a key of
        /// characters that print as nothing or as another (a control, a
        /// byte order mark, a zero-width mark, a space other than ' ')
        /// prints escaped, so that what is seen is what is typed.
        #[test]
        fn any_path_prints_as_text_that_parses_back(
            steps in proptest::collection::vec(
                proptest::prop_oneof![
                    (0usize..100).prop_map(PathSegment::Index),
                    "\\PC{0,6}|[\\x00-\\x1f\\u{a0}\\u{200b}-\\u{200f}\\u{2028}\\u{fe0f}\\u{feff}\\u{1d173}\\u{e0061}a.' ]{0,4}"
                        .prop_map(PathSegment::Field),
                ],
                0..5,
            )
        ) {
            let path = VariantPath { segments: steps };
            let text = path.to_string();
            proptest::prop_assert_eq!(VariantPath::parse(&text).unwrap(), path.clone(), "{}", text);
            let invisible = |c: char| {
                c.is_control()
                    || matches!(c, '\u{a0}' | '\u{200b}'..='\u{200f}' | '\u{2028}' | '\u{fe0f}' | '\u{feff}' | '\u{1d173}' | '\u{e0061}')
            };
            proptest::prop_assert!(!text.chars().any(invisible), "{}", text);
        }
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "$",
            "$.a.b",
            "$['a.b'][3]",
            r"$['it\'s']",
            "$['']",
            "$.@t.$oid",
            r"$['\u0000a\u001f']",
            r"$['\u007f\u0085\u2028']",
            r"$['\ufeff']",
            r"$['a\u200bb\u00a0\u3000\u202e']",
            r"$['vs\ufe0f\ud834\udd73\udb40\udc61']",
        ] {
            assert_eq!(VariantPath::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn errors_say_where() {
        for (text, message) in [
            ("$.", "character 3: expected a field name"),
            ("$[", "character 3: expected an index"),
            ("$['a", "unterminated quoted field name"),
            ("$['a'x", "expected ']' after the quoted name"),
            ("$a", "character 2: expected '.' or '['"),
            (
                "$.a.b c.d",
                "character 6: expected '.' or '[' (a name with other characters is quoted: $.a['b c'].d)",
            ),
            ("$[1] c", "character 5: expected '.' or '['"),
            // As in Spark: `a.b` could be the key "a.b" as well as `$.a.b`.
            ("a.b", "character 1: a path starts with $"),
            ("", "character 1: a path starts with $"),
            (".a", "character 1: a path starts with $"),
            ("$[-1]", "expected an index"),
            ("$.tags[*]", "character 8: [*] (each element"),
            ("$.ééé[*]", "character 7: [*] (each element"),
            ("$.é[x]", "character 5: expected an index"),
            ("$.a[0][1", "character 9: expected ']' after the index"),
            (r"$['\x']", "character 4: invalid escape"),
            (r"$['\u12']", "character 4: invalid escape"),
            (r"$['\ud83d']", "character 4: invalid escape"),
            (r"$['\u+041']", "character 4: invalid escape"),
        ] {
            let err = VariantPath::parse(text).unwrap_err();
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
        // `$a` is no name to quote.
        let err = VariantPath::parse("$a b").unwrap_err().to_string();
        assert!(err.ends_with("character 2: expected '.' or '['"), "{err}");
    }
}
