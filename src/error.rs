//! The crate's one error type: what went wrong, and where.
//!
//! Errors are built on the cold path only: the hot loops carry byte offsets
//! and the line/column of a JSON error is derived when the error is made.

use std::fmt;
use std::path::{Path, PathBuf};

/// Everything that can go wrong in `vshred`, with its position.
///
/// `Error` is one pointer wide so that `Result<T, Error>` stays small on the
/// hot paths. [`Error::kind`] says which family the error belongs to,
/// [`Error::file`], [`Error::row`] and [`Error::position`] where it
/// happened; `Display` prints them on one line, where first, and
/// [`source`](std::error::Error::source) gives the I/O or Parquet error
/// underneath, if any:
///
/// ```
/// let err = vshred::json::json_to_variant(b"{\"a\":1,}").unwrap_err();
/// assert_eq!(err.to_string(), "invalid JSON at line 1, column 8 (byte 7): expected '\"' to start a key");
/// ```
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: String,
    file: Option<PathBuf>,
    position: Option<Position>,
    row: Option<u64>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The family an [`Error`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// JSON text that is malformed or that the Variant encoding cannot hold.
    Json,
    /// A number written without an exponent that no decimal holds and a
    /// double would change (see [`InexactNumbers`](crate::json::InexactNumbers)).
    InexactNumber,
    /// Variant metadata or value bytes that break `VariantEncoding.md`.
    InvalidVariant,
    /// An object given the same key twice (see
    /// [`DuplicateKeys`](crate::variant::DuplicateKeys)).
    DuplicateKey,
    /// Reading or writing a file failed.
    Io,
    /// The parquet crate reported an error, or a Parquet file breaks the spec.
    Parquet,
    /// Arguments that do not fit together.
    Usage,
    /// A path (`$.a.b[0]`) that does not parse.
    Path,
    /// A filter (`$.price > 10 and $.tags[0] == "a"`) that does not parse.
    Filter,
    /// A shredding schema that is malformed or does not fit the data.
    Schema,
    /// A value that is valid but exceeds what can be built, e.g. a decimal
    /// with more than 38 digits.
    OutOfRange,
    /// A value that a strict `variant_get` cannot convert to the type asked
    /// for: of another type (`"x"` as `int64`), or out of its range (`300`
    /// as `int8`).
    Conversion,
    /// Files of one dataset that disagree on what a column is (an `int64`
    /// column in one, a `string` one in another).
    Incompatible,
    /// A directory to write a new dataset into that holds Parquet files
    /// already: each front end says how to add to them instead
    /// (`--append`, `append=True`).
    DatasetExists,
    /// Another run began writing the same new dataset at the same time:
    /// their files would have mixed into one dataset.
    WriterConflict,
    /// Several Variant columns, and none chosen: each front end says how
    /// to choose one (`--column`, `column=`).
    AmbiguousColumn,
    /// A line of the input, valid JSON, that the ordinary columns the
    /// sample chose do not hold: a text in an `int64` column, or a
    /// top-level field without a column.
    ColumnMismatch,
    /// A call stopped before its end, its output left unwritten, by no
    /// fault of its arguments or input: the Python interpreter exiting
    /// under a daemon thread's call.
    Stopped,
}

/// Which of the two Variant byte strings an offset refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantPart {
    /// The metadata (the key dictionary).
    Metadata,
    /// The value.
    Value,
}

/// Where an [`Error`] happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Position {
    /// A position in JSON text; `line` and `column` count from 1, `column`
    /// in bytes, `byte` from 0.
    Json {
        /// Line, from 1.
        line: u64,
        /// Column in bytes, from 1.
        column: u64,
        /// Byte offset, from 0.
        byte: u64,
    },
    /// A byte offset from the start of the Variant metadata or value.
    Variant {
        /// Metadata or value.
        part: VariantPart,
        /// Byte offset into that part, from 0.
        byte: usize,
    },
}

impl Error {
    #[cold]
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            file: None,
            position: None,
            row: None,
            source: None,
        }))
    }

    /// Keeps `source` as the error underneath (its text is in the message).
    #[cold]
    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        self.0.source = Some(Box::new(source));
        self
    }

    #[cold]
    pub(crate) fn at(mut self, position: Position) -> Error {
        self.0.position = Some(position);
        self
    }

    /// An error in JSON text at byte `offset` of `text`.
    #[cold]
    pub(crate) fn json(text: &[u8], offset: usize, message: impl Into<String>) -> Error {
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count() as u64;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let column = (offset - line_start) as u64 + 1;
        Error::new(ErrorKind::Json, message).at(Position::Json {
            line,
            column,
            byte: offset as u64,
        })
    }

    /// The same error, of another family.
    #[cold]
    pub(crate) fn of_kind(mut self, kind: ErrorKind) -> Error {
        self.0.kind = kind;
        self
    }

    /// An error in Variant bytes at `byte` of `part`.
    #[cold]
    pub(crate) fn variant(part: VariantPart, byte: usize, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidVariant, message).at(Position::Variant { part, byte })
    }

    /// An error of the input's reader: the reader's own account, if it gave
    /// one (a reader of items, not bytes, names the item that is not a JSON
    /// text), else an I/O error.
    #[cold]
    pub(crate) fn reading_input(e: std::io::Error) -> Error {
        match e.downcast::<Error>() {
            Ok(own) => own,
            Err(e) => Error::new(ErrorKind::Io, format!("reading input: {e}")).with_source(e),
        }
    }

    /// An error about how the library was asked to work, for tools built on
    /// it.
    #[cold]
    pub fn from_message(message: String) -> Error {
        Error::new(ErrorKind::Usage, message)
    }

    /// A call stopped by what goes on around it ([`ErrorKind::Stopped`]),
    /// `why`: for front ends.
    #[cold]
    pub fn stopped(why: &str) -> Error {
        Error::new(ErrorKind::Stopped, why)
    }

    /// Attach the (0-based) row number of a multi-row input.
    #[cold]
    pub fn with_row(mut self, row: u64) -> Error {
        self.0.row = Some(row);
        self
    }

    /// Drops the row: for a caller that ran a kernel on a batch whose place
    /// in its input it does not know (a SQL function), where the row of
    /// the batch would mislead.
    #[cold]
    pub fn without_row(mut self) -> Error {
        self.0.row = None;
        self
    }

    /// Adds what the reader can do about it, in parentheses after the
    /// message: a front end names its own way out (an
    /// [`InexactNumber`](ErrorKind::InexactNumber) is a flag of the command
    /// line, a setting in SQL).
    #[cold]
    pub fn with_hint(mut self, hint: &str) -> Error {
        self.0.message = format!("{} ({hint})", self.0.message);
        self
    }

    /// Moves the row the error names, if it names one: from a batch's rows
    /// to its file's, say.
    #[cold]
    pub(crate) fn map_row(mut self, f: impl FnOnce(u64) -> u64) -> Error {
        self.0.row = self.0.row.map(f);
        self
    }

    /// Adds what else came of it, after the message and a semicolon
    /// (`...; 3 complete files were written to out/`).
    #[cold]
    pub(crate) fn with_note(mut self, note: &str) -> Error {
        self.0.message = format!("{}; {note}", self.0.message);
        self
    }

    /// The same error, its message rewritten.
    #[cold]
    pub(crate) fn map_message(mut self, f: impl FnOnce(&str) -> String) -> Error {
        self.0.message = f(&self.0.message);
        self
    }

    /// Names the file the error is about, unless it names one already: a
    /// caller that knows which file it was reading adds it on the way out.
    #[cold]
    pub fn in_file(mut self, file: impl AsRef<Path>) -> Error {
        if self.0.file.is_none() {
            self.0.file = Some(file.as_ref().to_path_buf());
        }
        self
    }

    /// The file the error is about, when known.
    pub fn file(&self) -> Option<&Path> {
        self.0.file.as_deref()
    }

    /// The family of this error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Where the error happened, when known.
    pub fn position(&self) -> Option<Position> {
        self.0.position
    }

    /// The row of a multi-row input, when known.
    pub fn row(&self) -> Option<u64> {
        self.0.row
    }

    /// What went wrong, without the position.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.0.kind {
            ErrorKind::Json => "invalid JSON",
            ErrorKind::InexactNumber => "inexact number",
            ErrorKind::InvalidVariant => "invalid Variant",
            ErrorKind::DuplicateKey => "duplicate key",
            ErrorKind::Io => "I/O error",
            ErrorKind::Parquet => "Parquet error",
            ErrorKind::Usage => "invalid arguments",
            ErrorKind::Path => "invalid path",
            ErrorKind::Filter => "invalid filter",
            ErrorKind::Schema => "invalid shredding schema",
            ErrorKind::OutOfRange => "out of range",
            ErrorKind::Conversion => "conversion failed",
            ErrorKind::Incompatible => "incompatible files",
            ErrorKind::DatasetExists => "dataset exists",
            ErrorKind::WriterConflict => "another writer",
            ErrorKind::AmbiguousColumn => "several Variant columns",
            ErrorKind::ColumnMismatch => "valid JSON that its columns do not hold",
            ErrorKind::Stopped => "stopped",
        };
        if let Some(file) = &self.0.file {
            write!(f, "{}: ", file.display())?;
        }
        f.write_str(what)?;
        if let Some(row) = self.0.row {
            write!(f, " at row {row}")?;
        }
        match self.0.position {
            Some(Position::Json { line, column, byte }) => {
                let join = if self.0.row.is_some() { "," } else { " at" };
                write!(f, "{join} line {line}, column {column} (byte {byte})")?
            }
            Some(Position::Variant { part, byte }) => {
                let part = match part {
                    VariantPart::Metadata => "metadata",
                    VariantPart::Value => "value",
                };
                write!(f, " {part} at byte {byte}")?
            }
            None => {}
        }
        write!(f, ": {}", self.0.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("file", &self.0.file)
            .field("position", &self.0.position)
            .field("row", &self.0.row)
            .field("message", &self.0.message)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl Error {
    /// An I/O error on `path` (a file, or a URL of a store), the error its
    /// source.
    #[cold]
    pub fn io(path: &Path, e: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, e.to_string())
            .in_file(path)
            .with_source(e)
    }

    /// A key given twice in one object, under
    /// [`DuplicateKeys::Error`](crate::variant::DuplicateKeys::Error).
    #[cold]
    pub(crate) fn duplicate_key(name: &str) -> Error {
        Error::new(
            ErrorKind::DuplicateKey,
            format!("{name:?} appears twice in one object"),
        )
    }

    /// A parquet crate error, with what we were doing.
    #[cold]
    pub(crate) fn parquet(context: &str, e: impl fmt::Display) -> Error {
        let text = parquet_text(&e);
        let message = match names_its_row_group(&text) {
            true => text,
            false => format!("{context}: {text}"),
        };
        Error::new(ErrorKind::Parquet, message)
    }

    /// Whether the message names the row group and column it is about:
    /// one of our own checks' errors, raised inside the parquet crate's
    /// reads.
    pub(crate) fn names_its_row_group(&self) -> bool {
        names_its_row_group(&self.0.message)
    }

    /// A parquet crate error met while reading or writing `file`.
    #[cold]
    pub(crate) fn parquet_in(file: &Path, e: ::parquet::errors::ParquetError) -> Error {
        Error::new(ErrorKind::Parquet, parquet_text(&e))
            .in_file(file)
            .with_source(e)
    }
}

/// Whether `text` is one of our own checks' errors, which begin with the
/// row group and column they are about (`row group 0, column "v.x": ...`).
fn names_its_row_group(text: &str) -> bool {
    text.starts_with("row group ")
}

/// The parquet crate's text for an error, without the "Parquet error: "
/// it starts with, which ours says already.
fn parquet_text(e: &impl fmt::Display) -> String {
    // The crate wraps its errors in each other, each with its prefix:
    // "Parquet argument error: Parquet error: ..." says one thing.
    let text = e.to_string();
    let mut rest = text.as_str();
    while let Some(inner) = ["Parquet error: ", "Parquet argument error: "]
        .iter()
        .find_map(|prefix| rest.strip_prefix(prefix))
    {
        rest = inner;
    }
    // parquet 59 leaves the first message's placeholders unfilled, and
    // the second says what differs, not what it means here.
    [
        (
            "expected {levels_to_read}, got {levels_read}",
            "fewer than its page header counts values",
        ),
        (
            "Not all children array length are the same!",
            "the columns of a group read as different numbers of values (a damaged page, holding more or fewer than its header counts?)",
        ),
    ]
    .iter()
    .fold(rest.to_string(), |text, (theirs, ours)| text.replace(theirs, ours))
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_position_counts_lines_and_columns_from_one() {
        let err = Error::json(b"{\n  \"a\": x}", 9, "expected a value");
        assert_eq!(
            err.position(),
            Some(Position::Json {
                line: 2,
                column: 8,
                byte: 9
            })
        );
        assert_eq!(
            err.to_string(),
            "invalid JSON at line 2, column 8 (byte 9): expected a value"
        );
        assert_eq!(
            err.with_row(4).to_string(),
            "invalid JSON at row 4, line 2, column 8 (byte 9): expected a value"
        );
    }

    #[test]
    fn a_readers_own_error_is_given_back_as_it_is_and_any_other_is_an_io_error() {
        let own = Error::from_message("item 2 of the input is null".into());
        let given = Error::reading_input(std::io::Error::other(own));
        assert_eq!(given.kind(), ErrorKind::Usage);
        assert_eq!(
            given.to_string(),
            "invalid arguments: item 2 of the input is null"
        );
        let other = Error::reading_input(std::io::Error::other("disk on fire"));
        assert_eq!(other.kind(), ErrorKind::Io);
        assert_eq!(other.to_string(), "I/O error: reading input: disk on fire");
        let source = std::error::Error::source(&other).expect("the reader's error");
        assert_eq!(source.to_string(), "disk on fire");
    }

    #[test]
    fn error_is_one_pointer_wide() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }
}
