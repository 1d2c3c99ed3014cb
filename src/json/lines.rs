//! JSON Lines: one JSON value per line.

use crate::error::{Error, Position};

/// Splits JSON Lines text into records, skipping blank lines and a UTF-8
/// byte order mark at the start (byte offsets still count it).
///
/// ```
/// use vshred::json::JsonLines;
/// let text = b"{\"a\":1}\n\n[2]\r\n";
/// let lines: Vec<_> = JsonLines::new(text).map(|l| (l.row, l.line, l.text)).collect();
/// assert_eq!(lines, [(0, 1, &b"{\"a\":1}"[..]), (1, 3, &b"[2]"[..])]);
/// ```
#[derive(Debug, Clone)]
pub struct JsonLines<'a> {
    text: &'a [u8],
    pos: usize,
    line: u64,
    row: u64,
}

/// One record of a [`JsonLines`] input.
#[derive(Debug, Clone, Copy)]
pub struct JsonLine<'a> {
    /// The record's index among the non-blank lines, from 0.
    pub row: u64,
    /// The line number in the input, from 1.
    pub line: u64,
    /// The byte offset of the line in the input.
    pub byte: u64,
    /// The line without its line ending.
    pub text: &'a [u8],
}

impl<'a> JsonLines<'a> {
    /// Records of `text`.
    pub fn new(text: &'a [u8]) -> JsonLines<'a> {
        JsonLines {
            text,
            pos: 0,
            line: 0,
            row: 0,
        }
    }
}

impl<'a> Iterator for JsonLines<'a> {
    type Item = JsonLine<'a>;

    fn next(&mut self) -> Option<JsonLine<'a>> {
        while self.pos < self.text.len() {
            let start = self.pos;
            let rest = &self.text[start..];
            let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.pos = start + len + 1;
            self.line += 1;
            let mut text = &rest[..len];
            let mut start = start;
            if start == 0
                && let Some(after) = text.strip_prefix(UTF8_BOM)
            {
                text = after;
                start = UTF8_BOM.len();
            }
            if let [head @ .., b'\r'] = text {
                text = head;
            }
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let row = self.row;
            self.row += 1;
            return Some(JsonLine {
                row,
                line: self.line,
                byte: start as u64,
                text,
            });
        }
        None
    }
}

/// The UTF-8 byte order mark, which some editors write at the start of a
/// file: not JSON, so it is skipped.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether the file at `path` starts with `[` (after a byte order mark and
/// whitespace): one line of it encoded as one row is, most likely, an
/// export of many records (`json.dump(rows)`) meant as a row each, which
/// the command line and the Python module warn of.
pub fn file_starts_with_an_array(path: &std::path::Path) -> bool {
    let mut start = [0; 256];
    let Ok(read) =
        std::fs::File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut start))
    else {
        return false;
    };
    let text = &start[..read];
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    text.trim_ascii_start().starts_with(b"[")
}

/// Whether an input whose first line is `first` is not JSON Lines at all,
/// whatever its other lines are: data of another kind by its first bytes
/// (compressed, Parquet, UTF-16), or one JSON document spread over lines
/// (its first line opens a bracket and leaves it open). Skipping its bad
/// lines would keep the few that happen to parse. (Not any line with a
/// zero byte: a log whose start a crash left zeroed is JSON Lines after.)
pub(crate) fn not_json_lines(first: &[u8]) -> bool {
    let text = first.trim_ascii();
    let spread = (text.starts_with(b"{") || text.starts_with(b"["))
        && text.last().is_some_and(|b| b"{[,:".contains(b));
    spread || super::reader::other_kind(first).is_some()
}

/// The hints of [`not_json_lines_hint`].
const NOT_JSON_LINES_HINTS: [&str; 3] = [
    "the input must be JSON Lines, one JSON value per line; this looks like a JSON array over many lines (`jq -c '.[]' in.json` writes its elements as JSON Lines)",
    "the input must be JSON Lines, one JSON value per line; this looks like pretty-printed JSON (`jq -c . in.json` writes it as JSON Lines)",
    "this line is an array; a JSON array of objects becomes JSON Lines with `jq -c '.[]' in.json`",
];

/// What to tell someone whose line failed with `message` (at the line's
/// end when `cut_short`) when the input is not JSON Lines at all:
/// pretty-printed JSON, or one JSON array. Only the first line (`first`)
/// can show that: a later line cut short is a line cut short (a file
/// truncated as it was copied, say), after lines that were JSON Lines.
#[cold]
pub(crate) fn not_json_lines_hint(
    text: &[u8],
    message: &str,
    cut_short: bool,
    first: bool,
) -> Option<&'static str> {
    let text = text.trim_ascii();
    // Pretty-printers break lines after an opening bracket, a comma or a
    // colon; a line cut short elsewhere (`{"id": 1, "level": "INFO"`) is
    // a record cut short, not a document spread over lines.
    let continues = text.last().is_some_and(|b| b"{[,:".contains(b));
    let cut_short = cut_short && continues;
    let [array, pretty, array_line] = NOT_JSON_LINES_HINTS;
    if cut_short && first && text.starts_with(b"[") {
        return Some(array);
    }
    if cut_short && first && text.starts_with(b"{") {
        return Some(pretty);
    }
    if message.starts_with("expected a JSON object") && text.starts_with(b"[") {
        return Some(array_line);
    }
    None
}

/// An error's text (or a message quoting one, as
/// [`LineCounts::first_bad_line`](crate::encode::LineCounts::first_bad_line))
/// without the hints that the input is not JSON Lines: for a front end
/// that was given the texts one by one (Python's iterables), where a text
/// cut short is only that.
pub fn without_json_lines_hints(text: &str) -> String {
    NOT_JSON_LINES_HINTS
        .iter()
        .fold(text.to_string(), |text, hint| {
            text.replace(&format!(" ({hint})"), "")
        })
}

impl Error {
    /// This error without the hints that the input is not JSON Lines
    /// ([`without_json_lines_hints`]).
    pub fn without_json_lines_hints(self) -> Error {
        self.map_message(without_json_lines_hints)
    }
}

impl JsonLine<'_> {
    /// Turns an error positioned within this line into one positioned
    /// within the whole input, with the row attached, and a hint when the
    /// input does not look like JSON Lines.
    #[cold]
    pub fn locate(&self, error: Error) -> Error {
        let cut_short = match error.position() {
            Some(Position::Json { byte, .. }) => byte as usize >= self.text.trim_ascii_end().len(),
            _ => false,
        };
        let first = self.row == 0;
        let error = match not_json_lines_hint(self.text, error.message(), cut_short, first) {
            Some(hint) => error.with_hint(hint),
            None => error,
        };
        let error = match error.position() {
            Some(Position::Json { column, byte, .. }) => error.at(Position::Json {
                line: self.line,
                column,
                byte: self.byte + byte,
            }),
            _ => error,
        };
        error.with_row(self.row)
    }
}
