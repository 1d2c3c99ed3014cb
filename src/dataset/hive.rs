//! Hive-style `key=value` directories read as columns.
//!
//! A dataset written by Spark's `partitionBy`, by DuckDB's `PARTITION_BY`
//! or by a `COPY ... PARTITIONED BY` (ours, DataFusion's) keeps a column
//! out of its files and in their directories' names:
//! `logs/day=2024-03-01/region=eu/part-0.parquet`. Read as a dataset from
//! above those directories, its files get the columns back, last, in the
//! order the directories nest: `day` and `region`, each file's rows with
//! the values of its path.
//!
//! The directories counted are those between the dataset's root (the
//! directory named, or a glob's directory before its first wildcard) and
//! each file; a file named alone has none. Every file under such
//! directories must be under the same keys in the same order, as Spark and
//! DuckDB require: a dataset whose files disagree is refused, naming two of
//! them. A file under none (beside them, in the root) reads them as null,
//! as a file that lacks a column does; so does a directory of the same
//! key above the root, which is no part of the dataset. Names and values
//! are percent-decoded (`a%2Fb` is `a/b`), as writers encode them; an
//! empty value and Hive's `__HIVE_DEFAULT_PARTITION__` are null; a name
//! that is not UTF-8 is refused. A column is an `int64` where every value
//! is an integer written as such (`7`, not `07`, so that each prints back
//! as its directory spells it), and otherwise (all null too) a `string`. Dates stay strings, unlike Spark's: a filter
//! compares a string literal with strings (`day >= "2024-03-01"`, in
//! order as ISO dates are), where a date column would compare with none.
//!
//! A filter on such a column rules out whole files by their paths: no
//! row group of theirs is read (their footers are, with every file's, to
//! know the dataset's columns), and their row groups count as skipped by
//! directories; the rows of the files it leaves are filtered as ever.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::datatypes::DataType;

use super::storage::without_leading_dot;
use crate::error::{Error, ErrorKind, Result};
use crate::predicate::{Operand, Predicate};
use crate::variant::{Kind, VariantRef};

/// The directory above the `key=value` directories that `dir` ends in, if
/// it ends in one (`logs` for `logs/day=2024-03-01/region=eu/`, `.` for
/// `day=1`): the root of the dataset that `dir` is part of.
pub fn partition_root(dir: &Path) -> Option<&Path> {
    let (root, keys) = key_chain(dir)?;
    (!keys.is_empty()).then_some(root)
}

/// The keys of the `key=value` directories that `dir` ends in, topmost
/// first and percent-decoded (`day`, `region` for
/// `logs/day=2024-03-01/region=eu/`): those of the files written there.
pub fn keys_of(dir: &Path) -> Vec<String> {
    key_chain(dir).map(|(_, keys)| keys).unwrap_or_default()
}

/// The directory above the `key=value` directories that `dir` ends in
/// (`.` for none above them), and their decoded keys, topmost first.
fn key_chain(dir: &Path) -> Option<(&Path, Vec<String>)> {
    let mut root = dir;
    let mut keys = Vec::new();
    while let Some(key) = (root.file_name().and_then(|n| n.to_str()))
        .filter(|name| is_key_value(name))
        .and_then(|name| name.split_once('='))
        .map(|(key, _)| key)
    {
        keys.push(decoded(key).unwrap_or_else(|| key.to_string()));
        root = root.parent()?;
    }
    keys.reverse();
    let root = match root.as_os_str().is_empty() {
        true => Path::new("."),
        false => root,
    };
    Some((root, keys))
}

/// Whether a directory of this name is a `key=value` one, which readers
/// take as a column (not `_tmp=1` or `.x=1`, which they skip).
pub(crate) fn is_key_value(name: &str) -> bool {
    name.split_once('=')
        .is_some_and(|(key, _)| !key.is_empty() && !key.starts_with(['_', '.']))
}

/// The value Hive and Spark write for a null.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The type of a column of `key=value` directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HiveType {
    /// Every value an integer written as one.
    Int64,
    /// Any other values.
    String,
}

impl HiveType {
    /// Its name: `int64` or `string`.
    pub fn name(self) -> &'static str {
        match self {
            HiveType::Int64 => "int64",
            HiveType::String => "string",
        }
    }

    /// The type [`name`](Self::name)d so.
    pub fn from_name(name: &str) -> Option<HiveType> {
        [HiveType::Int64, HiveType::String]
            .into_iter()
            .find(|t| t.name() == name)
    }

    /// Its Arrow type.
    pub fn data_type(self) -> DataType {
        match self {
            HiveType::Int64 => DataType::Int64,
            HiveType::String => DataType::Utf8,
        }
    }

    /// The kind of value it holds, as a filter's literal is of one.
    fn kind(self) -> Kind {
        match self {
            HiveType::Int64 => Kind::Number,
            HiveType::String => Kind::String,
        }
    }
}

/// The columns a dataset's `key=value` directories hold, beneath its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiveColumns {
    /// The directory the keys are counted from.
    root: PathBuf,
    /// The keys, outermost first, with their types.
    columns: Vec<(String, HiveType)>,
}

impl HiveColumns {
    /// The columns of `files`, beneath `root`: `None` when no file is
    /// under a `key=value` directory. Fails when the files disagree on
    /// their keys, or one repeats a key.
    pub fn find(root: &Path, files: &[impl AsRef<Path>]) -> Result<Option<HiveColumns>> {
        // The first file under keys, and its keys, which every other file
        // under keys must have.
        let mut first: Option<(&Path, Vec<String>)> = None;
        let mut values: Vec<Vec<Option<String>>> = Vec::new();
        for file in files {
            let file = file.as_ref();
            let pairs =
                match dirs_below(root, file).and_then(|dirs| pairs_of(&dirs.unwrap_or_default())) {
                    Ok(pairs) => pairs,
                    Err(e) => return Err(e.in_file(file)),
                };
            let keys: Vec<String> = pairs.iter().map(|(k, _)| k.clone()).collect();
            if keys.is_empty() {
                continue;
            }
            match &first {
                None => {
                    if let Some(twice) = keys
                        .iter()
                        .enumerate()
                        .find(|(i, k)| keys[..*i].contains(k))
                    {
                        return Err(Error::new(
                            ErrorKind::Usage,
                            format!("the key {:?} names two directories of one path", twice.1),
                        )
                        .in_file(file));
                    }
                    values = pairs.iter().map(|_| Vec::new()).collect();
                    first = Some((file, keys));
                }
                Some((first_file, first_keys)) if *first_keys != keys => {
                    return Err(disagree(first_file, first_keys, file, &keys));
                }
                Some(_) => {}
            }
            for (column, (_, value)) in values.iter_mut().zip(pairs) {
                column.push(value);
            }
        }
        let Some((_, names)) = first else {
            return Ok(None);
        };
        let columns = names
            .into_iter()
            .zip(&values)
            .map(|(name, values)| (name, type_of(values)))
            .collect();
        Ok(Some(HiveColumns {
            root: root.to_path_buf(),
            columns,
        }))
    }

    /// Columns of these names and types beneath `root`, as a distributed
    /// scan sends them: at least one, each name given once and not empty.
    pub fn new(root: PathBuf, columns: Vec<(String, HiveType)>) -> Result<HiveColumns> {
        let refused = |why: String| Err(Error::new(ErrorKind::Usage, why));
        if columns.is_empty() {
            return refused("no directory columns".into());
        }
        for (i, (name, _)) in columns.iter().enumerate() {
            if name.is_empty() || columns[..i].iter().any(|(n, _)| n == name) {
                return refused(format!("{name:?} names no directory column, or two"));
            }
        }
        Ok(HiveColumns { root, columns })
    }

    /// The directory the keys are counted from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The columns' names and types, outermost directory first.
    pub fn columns(&self) -> &[(String, HiveType)] {
        &self.columns
    }

    /// Whether `file` is under the keys' directories (not beside them).
    pub(crate) fn holds(&self, file: &Path) -> bool {
        dirs_below(&self.root, file)
            .and_then(|dirs| pairs_of(&dirs.unwrap_or_default()))
            .is_ok_and(|pairs| !pairs.is_empty())
    }

    /// The values of `file`'s columns, from its directories below the
    /// root; null for a file under none of them.
    pub(crate) fn values(&self, file: &Path) -> Result<HiveValues> {
        let pairs = dirs_below(&self.root, file)
            .and_then(|dirs| pairs_of(&dirs.unwrap_or_default()))
            .map_err(|e| e.in_file(file))?;
        if pairs.is_empty() {
            return Ok(HiveValues(
                self.columns.iter().map(|(_, t)| Value::null(*t)).collect(),
            ));
        }
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| n.as_str()).collect();
        if keys != names {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "this file is under directories {}=..., the dataset's are {}=...",
                    keys.join("=.../"),
                    names.join("=.../")
                ),
            )
            .in_file(file));
        }
        self.columns
            .iter()
            .zip(pairs)
            .map(|((name, hive_type), (_, text))| {
                Value::parse(text.as_deref(), *hive_type).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Usage,
                        format!(
                            "{name}={} is not an integer, as the dataset's other {name}=... directories are",
                            text.as_deref().unwrap_or("")
                        ),
                    )
                    .in_file(file)
                })
            })
            .collect::<Result<_>>()
            .map(HiveValues)
    }

    /// Warnings for comparisons of a column here that no row can pass: a
    /// literal of another kind than the column's values (`n == "7"` where
    /// `n` is an integer), as a file's reader warns of its own columns.
    pub(crate) fn never_matching(&self, filter: &Predicate) -> Vec<String> {
        let mut warnings = Vec::new();
        for comparison in filter.comparisons() {
            let Operand::Column(name) = &comparison.operand else {
                continue;
            };
            let Some((_, hive_type)) = self.columns.iter().find(|(n, _)| n == name) else {
                continue;
            };
            if hive_type.kind() != comparison.literal.kind() {
                warnings.push(format!(
                    "no row can pass `{comparison}`: {name}, from the dataset's {name}=... directories, holds {}, and {} is not one (the filter compares values of one kind)",
                    hive_type.kind().plural(),
                    comparison.literal,
                ));
            }
        }
        warnings
    }
}

/// The values of one file's directory columns, in the columns' order.
pub(crate) struct HiveValues(Vec<Value>);

impl HiveValues {
    /// Each of `columns` that `wanted` asks for, `rows` long: the names
    /// and arrays to add to the file's batches.
    pub(crate) fn arrays(
        &self,
        columns: &HiveColumns,
        rows: usize,
        wanted: impl Fn(&str) -> bool,
    ) -> Vec<(String, ArrayRef)> {
        columns
            .columns
            .iter()
            .zip(&self.0)
            .filter(|((name, _), _)| wanted(name))
            .map(|((name, _), value)| {
                let array: ArrayRef = match value {
                    Value::Int64(v) => Arc::new(Int64Array::from(vec![*v; rows])),
                    // One copy of the text per row, no String each.
                    Value::String(v) => Arc::new(StringArray::from_iter(std::iter::repeat_n(
                        v.as_deref(),
                        rows,
                    ))),
                };
                (name.clone(), array)
            })
            .collect()
    }

    /// Whether `filter` can pass no row of the file by these values: its
    /// parts on `columns` have one value in every row, and with them no
    /// outcome of the others makes it true.
    pub(crate) fn rules_out(&self, columns: &HiveColumns, filter: &Predicate) -> bool {
        !self.outcomes(columns, filter).may_be_true()
    }

    /// What `filter` may come to in the file's rows, in SQL's
    /// three-valued logic: one outcome where it reads only `columns`, any
    /// where it reads the rows.
    fn outcomes(&self, columns: &HiveColumns, filter: &Predicate) -> Outcomes {
        let value = |operand: &Operand| {
            let Operand::Column(name) = operand else {
                return None;
            };
            let i = columns.columns.iter().position(|(n, _)| n == name)?;
            Some(self.0[i].as_variant())
        };
        match filter {
            Predicate::Compare(c) => match value(&c.operand) {
                // A null value's comparison is unknown, as a row's is.
                Some(v) => Outcomes::of(c.test(&v)),
                None => Outcomes::ANY,
            },
            Predicate::IsNull(operand) => match value(operand) {
                Some(v) => Outcomes::of(Some(v.is_null())),
                None => Outcomes::ANY,
            },
            Predicate::Not(p) => self.outcomes(columns, p).not(),
            Predicate::And(ps) => ps
                .iter()
                .map(|p| self.outcomes(columns, p))
                .fold(Outcomes::of(Some(true)), Outcomes::and),
            Predicate::Or(ps) => ps
                .iter()
                .map(|p| self.outcomes(columns, p))
                .fold(Outcomes::of(Some(false)), Outcomes::or),
        }
    }
}

/// The outcomes a filter may have: true, false and unknown (SQL's null),
/// a bit each.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Outcomes(u8);

impl Outcomes {
    const TRUE: u8 = 1;
    const FALSE: u8 = 2;
    const UNKNOWN: u8 = 4;
    const ANY: Outcomes = Outcomes(Self::TRUE | Self::FALSE | Self::UNKNOWN);

    fn of(outcome: Option<bool>) -> Outcomes {
        Outcomes(match outcome {
            Some(true) => Self::TRUE,
            Some(false) => Self::FALSE,
            None => Self::UNKNOWN,
        })
    }

    fn may_be_true(self) -> bool {
        self.0 & Self::TRUE != 0
    }

    /// Each outcome as one, for combining them.
    fn each(self) -> impl Iterator<Item = Option<bool>> {
        [Some(true), Some(false), None]
            .into_iter()
            .filter(move |o| self.0 & Outcomes::of(*o).0 != 0)
    }

    /// Every outcome of `op` on one of each.
    fn combine(
        self,
        other: Outcomes,
        op: impl Fn(Option<bool>, Option<bool>) -> Option<bool>,
    ) -> Outcomes {
        let mut all = 0;
        for a in self.each() {
            for b in other.each() {
                all |= Outcomes::of(op(a, b)).0;
            }
        }
        Outcomes(all)
    }

    fn not(self) -> Outcomes {
        self.combine(Outcomes::of(Some(true)), |a, _| a.map(|a| !a))
    }

    fn and(self, other: Outcomes) -> Outcomes {
        self.combine(other, |a, b| match (a, b) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        })
    }

    fn or(self, other: Outcomes) -> Outcomes {
        self.combine(other, |a, b| match (a, b) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        })
    }
}

/// A directory's value, of its column's type.
enum Value {
    Int64(Option<i64>),
    String(Option<String>),
}

impl Value {
    fn null(hive_type: HiveType) -> Value {
        match hive_type {
            HiveType::Int64 => Value::Int64(None),
            HiveType::String => Value::String(None),
        }
    }

    /// `text` read as `hive_type`; `None` when it is not one.
    fn parse(text: Option<&str>, hive_type: HiveType) -> Option<Value> {
        Some(match (hive_type, text) {
            (_, None) => Value::null(hive_type),
            (HiveType::Int64, Some(t)) => Value::Int64(Some(integer(t)?)),
            (HiveType::String, Some(t)) => Value::String(Some(t.to_string())),
        })
    }

    fn as_variant(&self) -> VariantRef<'_> {
        match self {
            Value::Int64(Some(v)) => VariantRef::Int64(*v),
            Value::String(Some(v)) => VariantRef::String(v),
            _ => VariantRef::Null,
        }
    }
}

/// An integer written as one: no sign but `-`, no leading zero.
fn integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    canonical.then(|| text.parse().ok()).flatten()
}

/// The narrowest type every value reads as: a string where none is
/// known.
fn type_of(values: &[Option<String>]) -> HiveType {
    let mut present = values.iter().flatten().peekable();
    match present.peek().is_some() && present.all(|v| integer(v).is_some()) {
        true => HiveType::Int64,
        false => HiveType::String,
    }
}

/// The names of the directories of `file` below `root` (not its own
/// name), if it is beneath it. In an object store's URL (a root with
/// `://`) a name is percent-encoded as the URL's path is, so it is decoded
/// here, before the directory's own encoding is. An error names no file:
/// the caller knows which it is.
fn dirs_below(root: &Path, file: &Path) -> Result<Option<Vec<String>>> {
    let url = root.to_string_lossy().contains("://");
    let names = |path: &Path| -> Result<Vec<String>> {
        without_leading_dot(path)
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .map(|name| {
                let name = name
                    .to_str()
                    .ok_or_else(|| refused(name, "named in UTF-8"))?;
                match url {
                    true => decoded(name).ok_or_else(|| refused(name, "a URL's UTF-8")),
                    false => Ok(name.to_string()),
                }
            })
            .collect()
    };
    let (root, mut file) = (names(root)?, names(file)?);
    if !file.starts_with(&root) {
        return Ok(None);
    }
    file.pop();
    Ok(Some(file.split_off(root.len().min(file.len()))))
}

#[cold]
fn refused(dir: &(impl AsRef<std::ffi::OsStr> + ?Sized), what: &str) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!("the directory {:?} is not {what}", dir.as_ref()),
    )
}

/// The `key=value` directories among `dirs`, decoded, outermost first.
fn pairs_of(dirs: &[String]) -> Result<Vec<(String, Option<String>)>> {
    let mut pairs = Vec::new();
    for dir in dirs {
        let Some((key, value)) = dir.split_once('=') else {
            continue;
        };
        if key.is_empty() {
            continue;
        }
        let decode = |text: &str| {
            decoded(text).ok_or_else(|| refused(dir.as_str(), "percent-encoded UTF-8"))
        };
        let value = decode(value)?;
        let value = (!value.is_empty() && value != HIVE_NULL).then_some(value);
        pairs.push((decode(key)?, value));
    }
    Ok(pairs)
}

/// `text` with its `%XX` escapes decoded; `None` when that is not UTF-8.
fn decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|&b| hex(b)),
            bytes.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cold]
fn disagree(first: &Path, first_keys: &[String], other: &Path, other_keys: &[String]) -> Error {
    let keys = |k: &[String]| match k {
        [] => "no key=value directory".to_string(),
        k => format!("directories {}", k.join("=.../") + "=..."),
    };
    Error::new(
        ErrorKind::Usage,
        format!(
            "the dataset's files are not under the same key=value directories: {} is under {}, {} under {} (Spark and DuckDB refuse such a dataset too; read each part on its own)",
            first.display(),
            keys(first_keys),
            other.display(),
            keys(other_keys),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use HiveType::{Int64, String as Text};

    #[test]
    fn a_dataset_root_is_above_the_key_value_directories_a_directory_ends_in() {
        for (dir, root, keys) in [
            (
                "logs/day=1/region=eu/",
                Some("logs"),
                &["day", "region"][..],
            ),
            ("logs/day=1", Some("logs"), &["day"]),
            ("day=1", Some("."), &["day"]),
            ("/data/day=1", Some("/data"), &["day"]),
            ("p/a%3Db=1", Some("p"), &["a=b"]),
            ("logs", None, &[]),
            ("logs/_tmp=1", None, &[]),
            ("logs/=1", None, &[]),
            ("logs/day=1/extra", None, &[]),
        ] {
            assert_eq!(partition_root(Path::new(dir)), root.map(Path::new), "{dir}");
            assert_eq!(keys_of(Path::new(dir)), keys, "{dir}");
        }
    }

    fn columns(files: &[&str]) -> Result<Option<HiveColumns>> {
        HiveColumns::find(Path::new("d"), files)
    }

    fn names(found: &HiveColumns) -> Vec<&str> {
        found.columns().iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The arrays `found` gives `file`'s batches of `rows` rows.
    fn arrays(found: &HiveColumns, file: &str, rows: usize) -> Result<Vec<ArrayRef>> {
        let values = found.values(Path::new(file))?;
        Ok(values
            .arrays(found, rows, |_| true)
            .into_iter()
            .map(|(_, a)| a)
            .collect())
    }

    #[test]
    fn keys_nest_in_path_order_and_types_fit_every_value() {
        let found = columns(&[
            "d/day=2024-03-01/n=7/region=eu/a.parquet",
            "d/day=2024-03-02/n=-12/region=us/a.parquet",
            "d/day=2024-03-02/n=0/region=42/b.parquet",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            found.columns(),
            [
                ("day".into(), Text),
                ("n".into(), Int64),
                ("region".into(), Text)
            ]
        );
    }

    #[test]
    fn values_that_would_not_print_back_stay_strings() {
        for (values, expected) in [
            (["07", "8"], Text),
            (["+7", "8"], Text),
            (["-0", "8"], Text),
            (["99999999999999999999", "8"], Text),
            (["1.5", "7"], Text),
            (["__HIVE_DEFAULT_PARTITION__", "7"], Int64),
            (["", "-3"], Int64),
            (["", "__HIVE_DEFAULT_PARTITION__"], Text),
        ] {
            let files = values.map(|v| format!("d/k={v}/f.parquet"));
            let found = HiveColumns::find(Path::new("d"), &files).unwrap().unwrap();
            assert_eq!(found.columns()[0].1, expected, "{values:?}");
        }
    }

    #[test]
    fn names_and_values_are_percent_decoded_and_null_where_hive_writes_null() {
        let file = "d/a%3Db=x%2Fy%20%C3%A9/f.parquet";
        let found = columns(&[file]).unwrap().unwrap();
        assert_eq!(names(&found), ["a=b"]);
        let strings = arrays(&found, file, 2).unwrap();
        assert_eq!(
            strings[0]
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .value(1),
            "x/y é"
        );
        for null in [
            "d/a%3Db=/f.parquet",
            "d/a%3Db=__HIVE_DEFAULT_PARTITION__/f.parquet",
        ] {
            assert_eq!(
                arrays(&found, null, 3).unwrap()[0].null_count(),
                3,
                "{null}"
            );
        }
        let bad = columns(&["d/k=%FF/f.parquet"]).unwrap_err().to_string();
        assert!(
            bad.starts_with("d/k=%FF/f.parquet: ") && bad.contains("not percent-encoded UTF-8"),
            "{bad}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let file = Path::new(std::ffi::OsStr::from_bytes(b"d/k=\xff/f.parquet"));
        let e = HiveColumns::find(Path::new("d"), &[file])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not named in UTF-8"), "{e}");
    }

    #[test]
    fn only_directories_below_the_root_count_and_a_file_alone_has_none() {
        let found = HiveColumns::find(Path::new("x=1/d"), &["x=1/d/y=2/f.parquet"])
            .unwrap()
            .unwrap();
        assert_eq!(names(&found), ["y"]);
        for (root, file) in [("./d", "d/k=1/f.parquet"), ("d", "./d/k=1/f.parquet")] {
            let found = HiveColumns::find(Path::new(root), &[file])
                .unwrap()
                .unwrap();
            assert_eq!(names(&found), ["k"], "{root} {file}");
        }
        assert_eq!(columns(&["d/f.parquet", "d/sub/g.parquet"]).unwrap(), None);
        let file = "d/k=1/f.parquet";
        assert_eq!(HiveColumns::find(Path::new(file), &[file]).unwrap(), None);
        // A root file of a dataset beneath a directory of the same key.
        let found = HiveColumns::find(
            Path::new("k=9/d"),
            &["k=9/d/k=1/f.parquet", "k=9/d/g.parquet"],
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            arrays(&found, "k=9/d/g.parquet", 2).unwrap()[0].null_count(),
            2
        );
        assert!(found.holds(Path::new("k=9/d/k=1/f.parquet")));
        assert!(!found.holds(Path::new("k=9/d/g.parquet")));
    }

    #[test]
    fn files_under_other_keys_are_refused_naming_two_and_those_under_none_are_null() {
        let found = columns(&["d/g.parquet", "d/day=1/f.parquet"])
            .unwrap()
            .unwrap();
        assert_eq!(names(&found), ["day"]);
        assert_eq!(arrays(&found, "d/g.parquet", 2).unwrap()[0].null_count(), 2);
        for files in [
            ["d/day=1/f.parquet", "d/hour=1/f.parquet"],
            ["d/day=1/hour=2/f.parquet", "d/day=1/f.parquet"],
        ] {
            let e = columns(&files).unwrap_err().to_string();
            assert!(
                e.contains(files[0]) && e.contains(files[1]) && e.contains("same key=value"),
                "{e}"
            );
        }
        let e = columns(&["d/a.parquet", "d/k=1/k=2/f.parquet"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("d/k=1/k=2/f.parquet: ") && e.contains("names two directories"),
            "{e}"
        );
    }

    #[test]
    fn columns_sent_are_checked_and_a_path_that_disagrees_is_an_error_naming_it() {
        let root = PathBuf::from("d");
        let sent =
            HiveColumns::new(root.clone(), vec![("a".into(), Int64), ("b".into(), Text)]).unwrap();
        assert_eq!(HiveType::from_name("int64"), Some(Int64));
        assert_eq!(HiveType::from_name(Text.name()), Some(Text));
        assert_eq!(HiveType::from_name("date"), None);
        for columns in [
            vec![],
            vec![("".to_string(), Int64)],
            vec![("a".to_string(), Int64), ("a".to_string(), Text)],
        ] {
            assert!(HiveColumns::new(root.clone(), columns).is_err());
        }
        let e = arrays(&sent, "d/a=x/b=y/f.parquet", 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("d/a=x/b=y/f.parquet: ") && e.contains("a=x is not an integer"),
            "{e}"
        );
        let e = arrays(&sent, "d/a=1/f.parquet", 1).unwrap_err().to_string();
        assert!(
            e.contains("this file is under directories a=..., the dataset's are a=.../b=..."),
            "{e}"
        );
    }

    proptest::proptest! {
        /// Any values, percent-encoded as writers encode them, read back
        /// as themselves: integers as integers where all are, and null
        /// where Hive writes null.
        #[test]
        fn any_value_written_in_a_directory_reads_back(
            values in proptest::collection::vec(
                "[0-9]{1,3}|-?[0-9]{1,20}|__HIVE_DEFAULT_PARTITION__|\\PC{0,8}",
                1..6,
            )
        ) {
            // As writers escape: the separator and the escape character
            // always, the rest raw (`=`, `:`, unicode) or escaped alike.
            let encoded = |v: &str| -> std::string::String {
                v.chars().enumerate().map(|(i, c)| match c {
                    '/' | '%' => format!("%{:02X}", c as u32),
                    c if i % 2 == 0 => c.to_string(),
                    c => c.to_string().bytes().map(|b| format!("%{b:02X}")).collect(),
                }).collect()
            };
            let files: Vec<std::string::String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("d/k={}/f{i}.parquet", encoded(v)))
                .collect();
            let found = HiveColumns::find(Path::new("d"), &files).unwrap().unwrap();
            for (file, value) in files.iter().zip(&values) {
                let array = arrays(&found, file, 1).unwrap().remove(0);
                let null = value.is_empty() || value == HIVE_NULL;
                proptest::prop_assert_eq!(array.is_null(0), null, "{}", file);
                if null {
                    continue;
                }
                let shown = match found.columns()[0].1 {
                    Int64 => array.as_any().downcast_ref::<Int64Array>().unwrap().value(0).to_string(),
                    Text => array.as_any().downcast_ref::<StringArray>().unwrap().value(0).to_string(),
                };
                proptest::prop_assert_eq!(&shown, value);
            }
        }
    }

    #[test]
    fn a_filter_rules_out_a_file_by_its_directories() {
        let first = "d/day=2024-03-01/n=1/f.parquet";
        let null_n = "d/day=2024-03-02/n=/f.parquet";
        let found = columns(&[first, null_n]).unwrap().unwrap();
        let values = |file: &str| found.values(Path::new(file)).unwrap();
        for (filter, first_out, second_out) in [
            ("day == \"2024-03-01\"", false, true),
            ("day > \"2024-03-01\"", true, false),
            ("n in (1, 2)", false, true),
            ("n == 2", true, true),
            ("n is null", true, false),
            ("n is not null", false, true),
            ("n == 1 or $.a == 1", false, false),
            ("n == 1 and $.a == 1", false, true),
            ("not n == 1", true, true),
            ("not (n == 1 and $.a == 1)", false, false),
            ("not (n == 1 or $.a == 1)", true, true),
            ("n is null or day == \"2024-03-01\"", false, false),
            ("other == 1", false, false),
        ] {
            let p: Predicate = filter.parse().unwrap();
            assert_eq!(values(first).rules_out(&found, &p), first_out, "{filter}");
            assert_eq!(values(null_n).rules_out(&found, &p), second_out, "{filter}");
        }
        let warned = found.never_matching(&"n == \"1\" and day == 3 and n == 1".parse().unwrap());
        assert_eq!(warned.len(), 2, "{warned:?}");
    }
}
