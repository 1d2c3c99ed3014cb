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
//! as a file that lacks a column does. Names and values
//! are percent-decoded (`a%2Fb` is `a/b`), as writers encode them; an
//! empty value and Hive's `__HIVE_DEFAULT_PARTITION__` are null. A column
//! is an `int64` where every value is an integer written as such (`7`,
//! not `07`, so that each prints back as its directory spells it), and
//! otherwise a `string`. Dates stay strings, unlike Spark's: a filter
//! compares a string literal with strings (`day >= "2024-03-01"`, in
//! order as ISO dates are), where a date column would compare with none.
//!
//! A filter on such a column rules out whole files by their paths alone,
//! before any is opened, and counts their row groups as skipped by
//! directories; the rows of the files it leaves are filtered as ever.

use std::path::{Component, Path};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::datatypes::DataType;

use crate::error::{Error, ErrorKind, Result};
use crate::predicate::{Operand, Predicate};
use crate::variant::{Kind, VariantRef};

/// The value Hive and Spark write for a null.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The columns a dataset's `key=value` directories hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiveColumns {
    /// The keys, outermost first.
    names: Vec<String>,
    /// Their types: `Int64` or `Utf8`.
    types: Vec<DataType>,
}

impl HiveColumns {
    /// The columns of `files`, beneath `root`: `None` when no file is
    /// under a `key=value` directory. Fails when the files disagree on
    /// their keys.
    pub fn find(root: &Path, files: &[impl AsRef<Path>]) -> Result<Option<HiveColumns>> {
        // The first file under keys, and its keys, which every other file
        // under keys must have.
        let mut first: Option<(&Path, Vec<String>)> = None;
        let mut values: Vec<Vec<Option<String>>> = Vec::new();
        for file in files {
            let file = file.as_ref();
            let pairs = match below(root, file) {
                Some(below) => pairs_of(&below).map_err(|e| e.in_file(file))?,
                None => Vec::new(),
            };
            let keys: Vec<String> = pairs.iter().map(|(k, _)| k.clone()).collect();
            if keys.is_empty() {
                continue;
            }
            match &first {
                None => {
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
        let Some((_, names)) = first.filter(|(_, keys)| !keys.is_empty()) else {
            return Ok(None);
        };
        if let Some(twice) = names
            .iter()
            .enumerate()
            .find(|(i, n)| names[..*i].contains(n))
        {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("the key {:?} names two directories of one path", twice.1),
            )
            .in_file(files[0].as_ref()));
        }
        let types = values.iter().map(|column| type_of(column)).collect();
        Ok(Some(HiveColumns { names, types }))
    }

    /// Columns of these names and types, each `int64` or `string`
    /// ([`type_name`](Self::type_name)): as a distributed scan sends them.
    pub fn new(names: Vec<String>, type_names: &[String]) -> Result<HiveColumns> {
        let types = type_names
            .iter()
            .map(|name| match name.as_str() {
                "int64" => Ok(DataType::Int64),
                "string" => Ok(DataType::Utf8),
                other => Err(Error::new(
                    ErrorKind::Usage,
                    format!("{other:?} is not a type of directory column"),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        if names.is_empty() || names.len() != types.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "{} directory columns with {} types",
                    names.len(),
                    types.len()
                ),
            ));
        }
        Ok(HiveColumns { names, types })
    }

    /// The columns' names, outermost directory first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Their Arrow types.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// The name of column `i`'s type, as [`new`](Self::new) takes it.
    pub fn type_name(&self, i: usize) -> &'static str {
        match self.types[i] {
            DataType::Int64 => "int64",
            _ => "string",
        }
    }

    /// The values of `file`'s columns, from the nearest directory of each
    /// key above it; null for a file under none of them.
    fn values(&self, file: &Path) -> Result<Vec<Value>> {
        let pairs = pairs_of(file).map_err(|e| e.in_file(file))?;
        if !pairs.iter().any(|(key, _)| self.names.contains(key)) {
            return Ok(self
                .types
                .iter()
                .map(|t| Value::parse(None, t).expect("null"))
                .collect());
        }
        self.names
            .iter()
            .zip(&self.types)
            .map(|(name, data_type)| {
                let Some((_, text)) = pairs.iter().rev().find(|(key, _)| key == name) else {
                    return Err(Error::new(
                        ErrorKind::Usage,
                        format!("no {name}=... directory above this file"),
                    )
                    .in_file(file));
                };
                Value::parse(text.as_deref(), data_type).ok_or_else(|| {
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
            .collect()
    }

    /// Each column of `file`, `rows` long, for the columns `wanted`
    /// asks for: the names and arrays to add to its batches.
    pub(crate) fn arrays(
        &self,
        file: &Path,
        rows: usize,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, ArrayRef)>> {
        let values = self.values(file)?;
        Ok(self
            .names
            .iter()
            .zip(values)
            .filter(|(name, _)| wanted(name))
            .map(|(name, value)| {
                let array: ArrayRef = match value {
                    Value::Int64(v) => Arc::new(Int64Array::from(vec![v; rows])),
                    // One copy of the text per row, no String each.
                    Value::String(v) => Arc::new(StringArray::from_iter(std::iter::repeat_n(
                        v.as_deref(),
                        rows,
                    ))),
                };
                (name.clone(), array)
            })
            .collect())
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
            let Some(i) = self.names.iter().position(|n| n == name) else {
                continue;
            };
            let kind = match self.types[i] {
                DataType::Int64 => Kind::Number,
                _ => Kind::String,
            };
            if kind != comparison.literal.kind() {
                warnings.push(format!(
                    "no row can pass `{comparison}`: {name}, from the dataset's {name}=... directories, holds {}, and {} is not one (the filter compares values of one kind)",
                    kind.plural(),
                    comparison.literal,
                ));
            }
        }
        warnings
    }

    /// Whether `filter` can pass no row of `file` by its directories
    /// alone: a comparison of a column here that its value fails, or
    /// that is unknown (a null value), where every row would need it.
    pub(crate) fn rules_out(&self, file: &Path, filter: &Predicate) -> Result<bool> {
        let values = self.values(file)?;
        Ok(!filter.may_match(&mut |leaf| {
            let Operand::Column(name) = leaf.operand() else {
                return true;
            };
            let Some(i) = self.names.iter().position(|n| n == name) else {
                return true;
            };
            let value = values[i].as_variant();
            // A comparison with null is unknown: no row passes it.
            !matches!(value, VariantRef::Null) && leaf.may_match(Some(&value), Some(&value))
        }))
    }
}

/// A directory's value, of its column's type.
enum Value {
    Int64(Option<i64>),
    String(Option<String>),
}

impl Value {
    /// `text` read as `data_type`; `None` when it is not one.
    fn parse(text: Option<&str>, data_type: &DataType) -> Option<Value> {
        Some(match (data_type, text) {
            (DataType::Int64, None) => Value::Int64(None),
            (DataType::Int64, Some(t)) => Value::Int64(Some(integer(t)?)),
            (_, text) => Value::String(text.map(str::to_string)),
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

/// The narrowest type every value reads as.
fn type_of(values: &[Option<String>]) -> DataType {
    let present = || values.iter().flatten();
    if present().all(|v| integer(v).is_some()) {
        DataType::Int64
    } else {
        DataType::Utf8
    }
}

/// `file`'s path below `root`, if it is beneath it; a leading `./` on
/// either is no part of it (a glob's matches have none).
fn below(root: &Path, file: &Path) -> Option<std::path::PathBuf> {
    let named = |path: &Path| -> std::path::PathBuf {
        path.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    };
    named(file)
        .strip_prefix(named(root))
        .ok()
        .map(Path::to_path_buf)
}

/// The `key=value` directories of `path` (its last part is the file's
/// name), decoded, outermost first. An error names no file: the caller
/// knows which it is.
fn pairs_of(path: &Path) -> Result<Vec<(String, Option<String>)>> {
    let mut dirs: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    dirs.pop();
    let mut pairs = Vec::new();
    for dir in dirs {
        let dir = dir.to_string_lossy();
        let Some((key, value)) = dir.split_once('=') else {
            continue;
        };
        if key.is_empty() {
            continue;
        }
        let decode = |text: &str| {
            decoded(text).ok_or_else(|| {
                Error::new(
                    ErrorKind::Usage,
                    format!("the directory {dir:?} is not percent-encoded UTF-8"),
                )
            })
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

    fn columns(files: &[&str]) -> Result<Option<HiveColumns>> {
        HiveColumns::find(Path::new("d"), files)
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
        assert_eq!(found.names(), ["day", "n", "region"]);
        assert_eq!(
            found.types(),
            [DataType::Utf8, DataType::Int64, DataType::Utf8]
        );
    }

    #[test]
    fn values_that_would_not_print_back_stay_strings() {
        for (values, expected) in [
            (["07", "8"], DataType::Utf8),
            (["+7", "8"], DataType::Utf8),
            (["-0", "8"], DataType::Utf8),
            (["99999999999999999999", "8"], DataType::Utf8),
            (["1.5", "7"], DataType::Utf8),
            (["__HIVE_DEFAULT_PARTITION__", "7"], DataType::Int64),
            (["", "-3"], DataType::Int64),
        ] {
            let files = values.map(|v| format!("d/k={v}/f.parquet"));
            let found = HiveColumns::find(Path::new("d"), &files).unwrap().unwrap();
            assert_eq!(found.types(), std::slice::from_ref(&expected), "{values:?}");
        }
    }

    #[test]
    fn names_and_values_are_percent_decoded_and_null_where_hive_writes_null() {
        let found = columns(&["d/a%3Db=x%2Fy%20%C3%A9/f.parquet"])
            .unwrap()
            .unwrap();
        assert_eq!(found.names(), ["a=b"]);
        let arrays = found
            .arrays(Path::new("d/a%3Db=x%2Fy%20%C3%A9/f.parquet"), 2, |_| true)
            .unwrap();
        let strings = arrays[0].1.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(strings.value(1), "x/y é");
        for null in [
            "d/a%3Db=/f.parquet",
            "d/a%3Db=__HIVE_DEFAULT_PARTITION__/f.parquet",
        ] {
            let arrays = found.arrays(Path::new(null), 3, |_| true).unwrap();
            assert_eq!(arrays[0].1.null_count(), 3, "{null}");
        }
        let bad = columns(&["d/k=%FF/f.parquet"]).unwrap_err().to_string();
        assert!(
            bad.starts_with("d/k=%FF/f.parquet: ") && bad.contains("not percent-encoded UTF-8"),
            "{bad}"
        );
    }

    #[test]
    fn only_directories_below_the_root_count_and_a_file_alone_has_none() {
        let found = HiveColumns::find(Path::new("x=1/d"), &["x=1/d/y=2/f.parquet"])
            .unwrap()
            .unwrap();
        assert_eq!(found.names(), ["y"]);
        for (root, file) in [("./d", "d/k=1/f.parquet"), ("d", "./d/k=1/f.parquet")] {
            let found = HiveColumns::find(Path::new(root), &[file])
                .unwrap()
                .unwrap();
            assert_eq!(found.names(), ["k"], "{root} {file}");
        }
        assert_eq!(columns(&["d/f.parquet", "d/sub/g.parquet"]).unwrap(), None);
        let file = "d/k=1/f.parquet";
        assert_eq!(HiveColumns::find(Path::new(file), &[file]).unwrap(), None);
    }

    #[test]
    fn files_under_other_keys_are_refused_naming_two_and_those_under_none_are_null() {
        let found = columns(&["d/g.parquet", "d/day=1/f.parquet"])
            .unwrap()
            .unwrap();
        assert_eq!(found.names(), ["day"]);
        let arrays = found.arrays(Path::new("d/g.parquet"), 2, |_| true).unwrap();
        assert_eq!(arrays[0].1.null_count(), 2);
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
        let e = columns(&["d/k=1/k=2/f.parquet"]).unwrap_err().to_string();
        assert!(e.contains("names two directories"), "{e}");
    }

    #[test]
    fn columns_sent_by_name_take_only_the_types_found() {
        let sent = HiveColumns::new(
            vec!["a".into(), "b".into()],
            &["int64".into(), "string".into()],
        )
        .unwrap();
        assert_eq!(sent.types(), [DataType::Int64, DataType::Utf8]);
        assert_eq!((sent.type_name(0), sent.type_name(1)), ("int64", "string"));
        for (names, types) in [
            (vec!["a".to_string()], vec!["date".to_string()]),
            (vec!["a".to_string()], vec![]),
            (vec![], vec![]),
        ] {
            assert!(HiveColumns::new(names, &types).is_err());
        }
        // A value that is not of the type sent is an error naming the file.
        let e = sent
            .arrays(Path::new("d/a=x/b=y/f.parquet"), 1, |_| true)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("d/a=x/b=y/f.parquet") && e.contains("a=x is not an integer"),
            "{e}"
        );
        let e = sent
            .arrays(Path::new("d/a=1/f.parquet"), 1, |_| true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no b=... directory above this file"), "{e}");
    }

    #[test]
    fn a_filter_rules_out_a_file_by_its_directories() {
        let found = columns(&[
            "d/day=2024-03-01/n=1/f.parquet",
            "d/day=2024-03-02/n=/f.parquet",
        ])
        .unwrap()
        .unwrap();
        let first = Path::new("d/day=2024-03-01/n=1/f.parquet");
        let null_n = Path::new("d/day=2024-03-02/n=/f.parquet");
        for (filter, first_out, second_out) in [
            ("day == \"2024-03-01\"", false, true),
            ("day > \"2024-03-01\"", true, false),
            ("n in (1, 2)", false, true),
            ("n == 2", true, true),
            ("n is null", false, false),
            ("n == 1 or $.a == 1", false, false),
            ("n == 1 and $.a == 1", false, true),
            ("not n == 1", false, false),
            ("other == 1", false, false),
        ] {
            let p: Predicate = filter.parse().unwrap();
            assert_eq!(found.rules_out(first, &p).unwrap(), first_out, "{filter}");
            assert_eq!(found.rules_out(null_n, &p).unwrap(), second_out, "{filter}");
        }
    }
}
