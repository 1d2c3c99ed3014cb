//! The schema of a dataset: the union of its files' columns, checked for
//! agreement, and for each Variant column how every file shreds it.
//!
//! [`Dataset::schema`](super::Dataset::schema) reads each file's footer
//! (nothing else), so that memory grows with the number of distinct
//! columns and shredded paths, not with the number of files. It fails on a
//! file that cannot be read; a column whose type two files disagree on
//! (see below) is marked with the [`Disagreement`].
//!
//! # Which columns agree
//!
//! Files of one dataset may differ in how they store a Variant column (each
//! is read with a plan of its own), but an ordinary column must mean the
//! same thing in every file that has it, or "the column `n`" means nothing
//! across the dataset. Two files agree on a column when
//!
//! - both store it as a Variant column, however shredded; or
//! - both store it with the same type as Parquet records it, whatever Arrow
//!   type a writer's schema hint asks for: string, binary and list widths
//!   and views (`Utf8`, `LargeUtf8`, `Utf8View`), dictionary encoding,
//!   decimal widths (a `DECIMAL(p,s)` is one type however many bytes Arrow
//!   gives it), nullability, field metadata and a timestamp's zone name
//!   (Parquet keeps only whether it is adjusted to UTC) are representation,
//!   not type; or
//! - one of them is of the null type (a column no writer could type, such
//!   as an all-null column from a schema-less writer): the other's type is
//!   the column's.
//!
//! Anything else disagrees, widening included: `int32` in one file and
//! `int64` in another, or `decimal(9,2)` and `decimal(18,2)`. A read of
//! such a column is an error naming both files, as Spark's schema merging
//! refuses them, because reading the dataset as one table would have to
//! choose a type neither file chose; the dataset's other columns still
//! read (a query of `v` need not care what `id` is), and an append to the
//! dataset is refused.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use ::parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use ::parquet::schema::types::Type;
use arrow::datatypes::{DataType, Field, Fields};

use super::DatasetColumns;
use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{LeafSize, ParquetFile};
use crate::path::{PathSegment, VariantPath};
use crate::shred::ShreddingSchema;

/// What a top-level column is, in one file or across a dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// A Variant column, shredded or not.
    Variant,
    /// An ordinary column of this type, normalized as files are compared
    /// (see the [module docs](self)): `Utf8` for every string width,
    /// `Decimal128` for every decimal, nested fields nullable.
    Plain(DataType),
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Variant => f.write_str("variant"),
            ColumnType::Plain(data_type) => write!(f, "{data_type}"),
        }
    }
}

/// The schema of a dataset, from its files' footers
/// ([`Dataset::schema`](super::Dataset::schema)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatasetSchema {
    /// Files read.
    pub files: usize,
    /// Rows, summed over the files.
    pub rows: u64,
    /// Row groups, summed over the files.
    pub row_groups: usize,
    /// Every top-level column, in the order they first appear.
    pub columns: Vec<ColumnSummary>,
    /// Every leaf column, in the order they first appear, sizes summed.
    pub leaves: Vec<LeafTotal>,
}

/// One top-level column of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSummary {
    /// Its name.
    pub name: String,
    /// Its type, the same in every file that has it; where two files
    /// disagree, the first file's.
    pub column_type: ColumnType,
    /// Each type the files have it as, with the number of files, in the
    /// order first seen: more than one where files disagree, or where some
    /// have it as `Null` (a column of nulls alone, as pyarrow writes it).
    pub types: Vec<(ColumnType, usize)>,
    /// Where two files disagree on its type: a read of it fails.
    pub disagreement: Option<Disagreement>,
    /// The files that have it.
    pub files: usize,
    /// For a Variant column, every path some file shreds, in the order they
    /// first appear (`$` first: the column itself); empty otherwise.
    pub paths: Vec<PathSummary>,
}

/// One shredded path of a Variant column, over the files that have the
/// column.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSummary {
    /// The path: `$`, `$.user.id`, `$.tags[*]` (every element of an array),
    /// `$['odd name']`.
    pub path: String,
    /// Each type its `typed_value` has in some file, with the number of
    /// files, in the order first seen: `int64`, `object`, `array`, or a
    /// decimal with its storage (`decimal(18,2) INT64`,
    /// `decimal(18,2) FLBA(8)`), which readers treat apart.
    pub types: Vec<PathType>,
    /// Files that have the column but no `typed_value` at this path: its
    /// values, if any, are in a `value` residual (its own, or its parent's).
    pub not_shredded: usize,
    /// How many of its values are typed, where that can be counted.
    pub typed: TypedCount,
}

/// A type a shredded path has, and in how many files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathType {
    /// The type's name, as [`PathSummary::types`] describes.
    pub name: String,
    /// The files where the path has this type.
    pub files: usize,
}

/// The values of a path shredded to a primitive type, counted from the
/// null counts of its two leaves in the footers' statistics.
///
/// Where a file shreds a path to a primitive type, every value present at
/// the path is in exactly one of its leaves: `typed_value` when it has the
/// type, `value` otherwise (a Variant null included). So the values present
/// are the non-null values of both leaves, and the typed ones those of
/// `typed_value`; a leaf's non-null values are its values less its nulls,
/// which count the rows (or, under an array, the entries) where the path is
/// missing, and so are left out of both.
///
/// What this cannot count: values in files that do not shred the path to a
/// primitive type (they sit in a parent's `value` or in an object's or
/// array's `typed_value`, which have no leaf of their own), so the share is
/// over [`files`](Self::files) only and an object or array path has none;
/// and files whose footers lack a null count for either leaf in some row
/// group ([`files_without_counts`](Self::files_without_counts)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypedCount {
    /// Values in `typed_value`.
    pub typed: u64,
    /// Values in `value`.
    pub residual: u64,
    /// Files counted.
    pub files: usize,
    /// Files that shred the path to a primitive type but whose statistics
    /// lack a null count.
    pub files_without_counts: usize,
}

impl TypedCount {
    /// The share of the values present that are typed, `None` when no file
    /// was counted or no value is present.
    pub fn share(&self) -> Option<f64> {
        let present = self.typed + self.residual;
        (self.files > 0 && present > 0).then(|| self.typed as f64 / present as f64)
    }
}

/// One leaf column's sizes, summed over the files that have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafTotal {
    /// Its sizes, summed ([`LeafSize::add`]).
    pub size: LeafSize,
    /// The files that have it.
    pub files: usize,
}

/// The type of each top-level column of `file`, in the file's order.
pub(crate) fn column_types(file: &ParquetFile) -> Vec<(String, ColumnType)> {
    let variants = file.variant_columns();
    file.arrow_schema()
        .fields()
        .iter()
        .map(|field| {
            let column_type = if variants.contains(field.name()) {
                ColumnType::Variant
            } else {
                ColumnType::Plain(normalized(field.data_type()))
            };
            (field.name().clone(), column_type)
        })
        .collect()
}

/// The type two files' types for one column agree on (the rule is in the
/// [module docs](self)), `None` when they disagree. Takes the types
/// [`column_types`] gives.
pub(crate) fn agreed(seen: &ColumnType, other: &ColumnType) -> Option<ColumnType> {
    match (seen, other) {
        (a, b) if a == b => Some(a.clone()),
        (ColumnType::Plain(DataType::Null), _) => Some(other.clone()),
        (_, ColumnType::Plain(DataType::Null)) => Some(seen.clone()),
        _ => None,
    }
}

/// Two files that disagree on a column's type: a read of that column
/// fails with [`error`](Self::error), while the dataset's other columns
/// read, as Spark reads them from files that disagree on a column not
/// read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The column's type in the files before [`other_file`](Self::other_file).
    pub seen: ColumnType,
    /// A file with that type.
    pub seen_file: PathBuf,
    /// The first type that does not agree with it.
    pub other: ColumnType,
    /// The file with that type.
    pub other_file: PathBuf,
}

impl Disagreement {
    /// The error of a read of column `name`.
    pub fn error(&self, name: &str) -> Error {
        Error::new(
            ErrorKind::Incompatible,
            format!("column {name:?} is {self}"),
        )
    }
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in {} but {} in {}",
            self.seen,
            self.seen_file.display(),
            self.other,
            self.other_file.display()
        )
    }
}

/// `data_type` with what Parquet does not record taken out: the Arrow type
/// every file with the same Parquet type reads as, whatever its writer's
/// Arrow hint (see the module docs).
pub(crate) fn normalized(data_type: &DataType) -> DataType {
    let field = |f: &Field, name: &str| Arc::new(Field::new(name, normalized(f.data_type()), true));
    let fields = |fs: &Fields| -> Fields { fs.iter().map(|f| field(f, f.name())).collect() };
    match data_type {
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
        DataType::List(e)
        | DataType::LargeList(e)
        | DataType::ListView(e)
        | DataType::LargeListView(e) => DataType::List(field(e, "item")),
        DataType::FixedSizeList(e, n) => DataType::FixedSizeList(field(e, "item"), *n),
        DataType::Struct(fs) => DataType::Struct(fields(fs)),
        // Arrow's maps have entries and keys that are never null; whether
        // keys are sorted is a writer's hint, not recorded by Parquet.
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let key = Field::new("key", normalized(kv[0].data_type()), false);
                let value = field(&kv[1], "value");
                let entries = DataType::Struct(Fields::from(vec![Arc::new(key), value]));
                DataType::Map(Arc::new(Field::new("entries", entries, false)), false)
            }
            _ => data_type.clone(),
        },
        DataType::Dictionary(_, values) => normalized(values),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal256(p, s) => {
            DataType::Decimal128(*p, *s)
        }
        DataType::Timestamp(unit, zone) => {
            DataType::Timestamp(*unit, zone.as_ref().map(|_| Arc::from("UTC")))
        }
        other => other.clone(),
    }
}

/// The dataset's schema as its files are added.
#[derive(Default)]
pub(super) struct Builder {
    schema: DatasetSchema,
    /// The columns, reconciled as for any read of the dataset.
    columns: DatasetColumns,
    /// Per column (by index): its paths, and the index of each among them.
    paths: Vec<(Vec<PathSummary>, HashMap<String, usize>)>,
    /// Per column (by index): each type its files have, and how many.
    types: Vec<Vec<(ColumnType, usize)>>,
    leaf_index: HashMap<Vec<String>, usize>,
}

impl Builder {
    pub(super) fn add(&mut self, file: &ParquetFile) -> Result<()> {
        let metadata = file.metadata();
        self.schema.files += 1;
        self.schema.rows += metadata.file_metadata().num_rows().max(0) as u64;
        self.schema.row_groups += metadata.num_row_groups();
        let sizes = file.leaf_sizes();
        let by_leaf: HashMap<&[String], &LeafSize> =
            sizes.iter().map(|s| (s.path.as_slice(), s)).collect();
        let columns = self.columns.add(file);
        self.paths
            .resize_with(self.columns.all.len(), Default::default);
        self.types
            .resize_with(self.columns.all.len(), Default::default);
        for (column, column_type) in columns {
            let types = &mut self.types[column];
            match types.iter_mut().find(|(t, _)| *t == column_type) {
                Some((_, files)) => *files += 1,
                None => types.push((column_type, 1)),
            }
            if self.columns.types[column] == ColumnType::Variant {
                self.add_variant(column, file, &by_leaf);
            }
        }
        for size in sizes {
            let next = self.schema.leaves.len();
            match *self.leaf_index.entry(size.path.clone()).or_insert(next) {
                at if at == next => self.schema.leaves.push(LeafTotal { size, files: 1 }),
                at => {
                    let total = &mut self.schema.leaves[at];
                    total.size.add(&size);
                    total.files += 1;
                }
            }
        }
        Ok(())
    }

    fn add_variant(
        &mut self,
        column: usize,
        file: &ParquetFile,
        by_leaf: &HashMap<&[String], &LeafSize>,
    ) {
        let name = &self.columns.all[column];
        let group = file
            .parquet_schema()
            .root_schema()
            .get_fields()
            .iter()
            .find(|f| f.name() == name);
        let arrow = file.arrow_schema().field_with_name(name).ok();
        let mut slots = Vec::new();
        if let Some(group) = group {
            let slot = Slot {
                parquet: group,
                arrow: arrow.map(|f| f.data_type()),
                path: "$".into(),
                leaf: vec![name.clone()],
            };
            slot.walk(&mut slots);
        }
        let (paths, index) = &mut self.paths[column];
        for found in slots {
            let Some(type_name) = found.type_name else {
                continue; // counted as not shredded when the files are in
            };
            let next = paths.len();
            let at = *index.entry(found.path.clone()).or_insert(next);
            if at == next {
                paths.push(PathSummary {
                    path: found.path,
                    types: Vec::new(),
                    not_shredded: 0,
                    typed: TypedCount::default(),
                });
            }
            let path = &mut paths[at];
            match path.types.iter_mut().find(|t| t.name == type_name) {
                Some(t) => t.files += 1,
                None => path.types.push(PathType {
                    name: type_name,
                    files: 1,
                }),
            }
            if let Some(typed_leaf) = &found.typed_leaf {
                let present = |leaf: &[String]| {
                    let size = by_leaf.get(leaf)?;
                    Some(size.values.saturating_sub(size.nulls?))
                };
                // A slot without `value` (the spec allows leaving it out
                // when every value is typed) has no residual.
                let residual = match &found.value_leaf {
                    Some(leaf) => present(leaf),
                    None => Some(0),
                };
                match present(typed_leaf).zip(residual) {
                    Some((typed, residual)) => {
                        path.typed.typed += typed;
                        path.typed.residual += residual;
                        path.typed.files += 1;
                    }
                    None => path.typed.files_without_counts += 1,
                }
            }
        }
    }

    /// Adds the columns of `hive`, which `files` hold in their
    /// directories.
    pub(super) fn add_hive(
        &mut self,
        hive: &super::HiveColumns,
        files: &[std::path::PathBuf],
    ) -> Result<()> {
        self.columns.add_hive(hive, files)
    }

    pub(super) fn finish(mut self) -> DatasetSchema {
        let DatasetColumns {
            all,
            types,
            files,
            disagreements,
            ..
        } = self.columns;
        self.paths.resize_with(all.len(), Default::default);
        self.types.resize_with(all.len(), Default::default);
        self.schema.columns = all
            .into_iter()
            .zip(types)
            .zip(files)
            .zip(disagreements)
            .zip(self.paths)
            .zip(self.types)
            .map(
                |(((((name, column_type), files), disagreement), (mut paths, _)), mut types)| {
                    // A key=value directory's column is in no file's footer.
                    if types.is_empty() {
                        types.push((column_type.clone(), files));
                    }
                    let variant_files = files_of(&types, &ColumnType::Variant);
                    for path in &mut paths {
                        let typed: usize = path.types.iter().map(|t| t.files).sum();
                        // Saturating: a file whose object repeats a field name
                        // (the spec forbids it) counts that path twice.
                        path.not_shredded = variant_files.saturating_sub(typed);
                    }
                    ColumnSummary {
                        name,
                        column_type,
                        types,
                        disagreement,
                        files,
                        paths,
                    }
                },
            )
            .collect();
        self.schema
    }
}

/// A slot of a Variant column (the column itself, an object field or an
/// array element: a group of `value` and `typed_value`), with the Arrow
/// type of the same group (which names its primitive types).
struct Slot<'a> {
    parquet: &'a Type,
    arrow: Option<&'a DataType>,
    path: String,
    /// Its Parquet path from the root.
    leaf: Vec<String>,
}

/// What one file stores at one path.
struct FoundSlot {
    path: String,
    /// `None` when it has no `typed_value`.
    type_name: Option<String>,
    value_leaf: Option<Vec<String>>,
    /// The `typed_value` leaf, when it is of a primitive type.
    typed_leaf: Option<Vec<String>>,
}

impl<'a> Slot<'a> {
    /// Adds this slot and those beneath it to `out`, parents first.
    fn walk(&self, out: &mut Vec<FoundSlot>) {
        if !self.parquet.is_group() {
            return;
        }
        let child = |name: &str| self.parquet.get_fields().iter().find(|f| f.name() == name);
        let arrow_child = |name: &str| match self.arrow {
            Some(DataType::Struct(fields)) => fields.find(name).map(|(_, f)| f.data_type()),
            _ => None,
        };
        let value_leaf = child("value")
            .filter(|v| v.is_primitive())
            .map(|_| self.below(&["value"]));
        let mut found = FoundSlot {
            path: self.path.clone(),
            type_name: None,
            value_leaf,
            typed_leaf: None,
        };
        let Some(typed) = child("typed_value") else {
            out.push(found);
            return;
        };
        let arrow = arrow_child("typed_value");
        if typed.is_primitive() {
            found.type_name = Some(primitive_name(typed, arrow));
            found.typed_leaf = Some(self.below(&["typed_value"]));
            out.push(found);
            return;
        }
        let info = typed.get_basic_info();
        let is_list = matches!(info.logical_type_ref(), Some(LogicalType::List))
            || info.converted_type() == ConvertedType::LIST;
        found.type_name = Some(if is_list { "array" } else { "object" }.into());
        out.push(found);
        if is_list {
            if let Some(element) = self.element(typed, arrow) {
                element.walk(out);
            }
            return;
        }
        for field in typed.get_fields() {
            let arrow_field = match arrow {
                Some(DataType::Struct(fields)) => fields.find(field.name()).map(|(_, f)| f),
                _ => None,
            };
            let segment = VariantPath::new(vec![PathSegment::Field(field.name().to_string())]);
            let segment = segment.to_string();
            Slot {
                parquet: field,
                arrow: arrow_field.map(|f| f.data_type()),
                path: format!("{}{}", self.path, &segment[1..]),
                leaf: self.below(&["typed_value", field.name()]),
            }
            .walk(out);
        }
    }

    /// The element slot of a LIST `typed_value`: the repeated group's only
    /// child (the three-level list the spec requires), or the repeated group
    /// itself when it holds `value` or `typed_value` (the two-level list
    /// Spark's legacy format writes).
    fn element(&self, list: &'a Type, arrow: Option<&'a DataType>) -> Option<Slot<'a>> {
        let repeated = list.get_fields().first()?;
        if !repeated.is_group() {
            return None;
        }
        let arrow = match arrow {
            Some(DataType::List(e) | DataType::LargeList(e)) => Some(e.data_type()),
            _ => None,
        };
        let two_level = repeated
            .get_fields()
            .iter()
            .any(|f| f.name() == "value" || f.name() == "typed_value");
        let (parquet, leaf) = if two_level {
            (repeated, self.below(&["typed_value", repeated.name()]))
        } else {
            let element = repeated.get_fields().first()?;
            let leaf = self.below(&["typed_value", repeated.name(), element.name()]);
            (element, leaf)
        };
        Some(Slot {
            parquet,
            arrow,
            path: format!("{}[*]", self.path),
            leaf,
        })
    }

    fn below(&self, names: &[&str]) -> Vec<String> {
        let mut leaf = self.leaf.clone();
        leaf.extend(names.iter().map(|n| n.to_string()));
        leaf
    }
}

/// The name of a primitive `typed_value`: the shredding type it reads as
/// (`int64`, `string`), decimals with their Parquet storage; the Arrow type
/// (or, without one, the Parquet type) when it is not a shredding type.
fn primitive_name(parquet: &Type, arrow: Option<&DataType>) -> String {
    let physical = parquet.get_physical_type();
    let Some(layout) = arrow.and_then(ShreddingSchema::from_typed_value_type) else {
        return match arrow {
            Some(data_type) => data_type.to_string(),
            None => physical.to_string(),
        };
    };
    let name = layout.type_name();
    match (&layout, parquet) {
        (
            ShreddingSchema::Decimal { .. },
            Type::PrimitiveType {
                physical_type: PhysicalType::FIXED_LEN_BYTE_ARRAY,
                type_length,
                ..
            },
        ) => format!("{name} FLBA({type_length})"),
        (ShreddingSchema::Decimal { .. }, _) => format!("{name} {physical}"),
        _ => name,
    }
}

impl fmt::Display for DatasetSchema {
    /// The text `vshred schema` prints for a dataset of several files:
    /// the columns, the shredded paths of each Variant column, the leaves'
    /// sizes; each a table with aligned columns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = |n: usize| format!("{n} of {}", self.files);
        writeln!(
            f,
            "{} files, {} rows, {} row groups",
            self.files, self.rows, self.row_groups
        )?;
        writeln!(f)?;
        let rows: Vec<Vec<String>> = self
            .columns
            .iter()
            .map(|c| {
                let column_type = match c.types.as_slice() {
                    [_] => c.column_type.to_string(),
                    types => counted(types.iter().map(|(t, files)| (t, *files))),
                };
                vec![c.name.clone(), column_type, of(c.files)]
            })
            .collect();
        table(f, &["column", "type", "files"], &rows)?;
        for column in &self.columns {
            if let Some(disagreement) = &column.disagreement {
                writeln!(
                    f,
                    "column {:?} is {disagreement}: a read of it fails; the other columns read",
                    column.name
                )?;
            }
        }
        let variants = self
            .columns
            .iter()
            .filter(|c| c.column_type == ColumnType::Variant);
        for column in variants {
            writeln!(f)?;
            // Files that have it null-typed beside it are not counted.
            let variant_files = files_of(&column.types, &ColumnType::Variant);
            let name = format!("Variant column {} (in {})", column.name, of(variant_files));
            if column.paths.is_empty() {
                writeln!(f, "{name}: no file shreds it")?;
                continue;
            }
            writeln!(f, "{name}: shredded paths")?;
            let rows: Vec<Vec<String>> = column
                .paths
                .iter()
                .map(|p| {
                    vec![
                        p.path.clone(),
                        counted(p.types.iter().map(|t| (&t.name, t.files))),
                        p.not_shredded.to_string(),
                        share_text(&p.typed),
                    ]
                })
                .collect();
            table(
                f,
                &["path", "types (files)", "not shredded", "typed share"],
                &rows,
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "{:>14} {:>14} {:>6}  column",
            "compressed", "uncompressed", "files"
        )?;
        let (mut compressed, mut uncompressed) = (0, 0);
        for LeafTotal { size, files } in &self.leaves {
            compressed += size.compressed;
            uncompressed += size.uncompressed;
            writeln!(
                f,
                "{:>14} {:>14} {files:>6}  {}",
                size.compressed,
                size.uncompressed,
                size.path.join(".")
            )?;
        }
        writeln!(
            f,
            "{compressed:>14} {uncompressed:>14} {:>6}  (all columns)",
            self.files
        )
    }
}

/// `96.7% (29/30)`, the files left out said; `-` when nothing was counted.
fn share_text(count: &TypedCount) -> String {
    let mut text = match count.share() {
        Some(share) => format!(
            "{:.1}% ({}/{})",
            share * 100.0,
            count.typed,
            count.typed + count.residual
        ),
        None => "-".into(),
    };
    if count.files_without_counts > 0 {
        let n = count.files_without_counts;
        let files = if n == 1 { "file" } else { "files" };
        text.push_str(&format!("; {n} {files} without null counts"));
    }
    text
}

/// The files that have a column as `column_type`, of its `types`.
fn files_of(types: &[(ColumnType, usize)], column_type: &ColumnType) -> usize {
    types
        .iter()
        .find(|(t, _)| t == column_type)
        .map_or(0, |(_, files)| *files)
}

/// Types with their numbers of files: `int32 (3), string (1)`.
fn counted<T: fmt::Display>(types: impl Iterator<Item = (T, usize)>) -> String {
    let types: Vec<String> = types.map(|(t, files)| format!("{t} ({files})")).collect();
    types.join(", ")
}

/// Rows under a header, each column as wide as its widest cell, two spaces
/// apart, indented by two; the last column is not padded.
fn table(f: &mut fmt::Formatter<'_>, header: &[&str], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::from(" ");
        for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
            line.push(' ');
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(width - cell.chars().count() + 1));
            }
        }
        writeln!(f, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::TimeUnit;

    #[test]
    fn types_agree_when_parquet_stores_them_alike() {
        let list = |t: DataType| DataType::List(Arc::new(Field::new("element", t, false)));
        let large = |t: DataType| DataType::LargeList(Arc::new(Field::new("item", t, true)));
        let ts = |zone: &str| DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from(zone)));
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        for (a, b, agree) in [
            (DataType::Utf8, DataType::Utf8View, true),
            (DataType::Binary, DataType::LargeBinary, true),
            (dict, DataType::LargeUtf8, true),
            (list(DataType::Utf8), large(DataType::Utf8View), true),
            (DataType::Decimal32(9, 2), DataType::Decimal128(9, 2), true),
            (ts("UTC"), ts("+00:00"), true),
            (DataType::Null, DataType::Int64, true),
            (DataType::Int32, DataType::Int64, false),
            (DataType::Decimal64(9, 2), DataType::Decimal64(18, 2), false),
            (
                ts("UTC"),
                DataType::Timestamp(TimeUnit::Microsecond, None),
                false,
            ),
            (list(DataType::Int32), list(DataType::Int64), false),
        ] {
            let plain = |t: &DataType| ColumnType::Plain(normalized(t));
            let result = agreed(&plain(&a), &plain(&b));
            assert_eq!(result.is_some(), agree, "{a} and {b}: {result:?}");
        }
    }
}
