//! Scan plans: what to read of a file, worked out from its footer alone
//! (and from its page index and bloom filters where a filter can use
//! them) before any data page is read: for each row group, the leaves to
//! read (a projection) and the rows the column index leaves (a row
//! selection), or why it is skipped. The [executor](super::scan) runs any
//! plan; a dataset is a plan per file, and the SQL scan hands plans on.
//!
//! A filter's pruning arithmetic is the [`Predicate`]'s
//! ([`Predicate::may_match`]); here each comparison's operand is found in
//! the file (a path through the shredded groups, or a column) and its
//! statistics are read as Variant values.

use ::parquet::arrow::arrow_reader::{ArrowReaderMetadata, RowSelection};
use ::parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use ::parquet::bloom_filter::Sbbf;
use ::parquet::file::metadata::RowGroupMetaData;
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;
use ::parquet::file::statistics::Statistics;
use ::parquet::schema::types::{SchemaDescriptor, Type};

use crate::error::Result;
use crate::parquet::{GetRequest, ParquetFile};
use crate::path::{PathSegment, VariantPath};
use crate::predicate::{Leaf, Literal, Op, Operand, Predicate};
use crate::shred::{ShreddingSchema, cast_as};
use crate::variant::{Kind, VariantDecimal, VariantRef};

/// What a scan reads of one file: each row group, read (what of it) or
/// skipped (why), and the figures of it.
#[derive(Clone, Debug)]
pub struct ScanPlan {
    row_groups: Vec<RowGroupPlan>,
    /// The footer with the page index, where row selections came from it.
    pub(super) paged: Option<ArrowReaderMetadata>,
    stats: ReadStats,
}

impl ReadStats {
    /// Adds what another read read (of another file of a dataset). A
    /// warning is kept only if every read of row groups gives it: that no
    /// row of one file can pass a filter says nothing of the dataset, whose
    /// other files may store the path's values as another type. (A file
    /// without the path gives none, so it drops a warning that would still
    /// hold: a warning missed, never a wrong one.)
    pub fn add(&mut self, other: ReadStats) {
        if other.row_groups > 0 {
            if self.row_groups == 0 {
                self.warnings = other.warnings;
            } else {
                self.warnings.retain(|w| other.warnings.contains(w));
            }
        }
        self.row_groups += other.row_groups;
        self.row_groups_read += other.row_groups_read;
        self.rows_read += other.rows_read;
        self.pages_skipped += other.pages_skipped;
        self.skipped_by_statistics += other.skipped_by_statistics;
        self.skipped_by_bloom_filters += other.skipped_by_bloom_filters;
        self.skipped_by_page_index += other.skipped_by_page_index;
        self.skipped_by_runtime_filter += other.skipped_by_runtime_filter;
        self.skipped_by_directories += other.skipped_by_directories;
        self.bytes_read += other.bytes_read;
    }

    /// Counts a file's `row_groups` as ruled out by its directories.
    pub(crate) fn skip_by_directories(&mut self, row_groups: usize) {
        self.row_groups += row_groups;
        self.skipped_by_directories += row_groups;
    }
}

impl ScanPlan {
    /// The row groups of the file it considers (all but in a
    /// [`Partition`](crate::dataset::partition::Partition)'s plan), in order.
    pub fn row_groups(&self) -> &[RowGroupPlan] {
        &self.row_groups
    }

    /// The index (in [`row_groups`](Self::row_groups)) of the first row
    /// group from `from` on that is read.
    pub(crate) fn next_read(&self, from: usize) -> Option<usize> {
        (from..self.row_groups.len())
            .find(|&i| matches!(self.row_groups[i].decision, Decision::Read { .. }))
    }

    /// What the plan reads and skips.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }
}

/// One row group of a [`ScanPlan`].
#[derive(Clone, Debug)]
pub struct RowGroupPlan {
    /// Its index in the file.
    pub row_group: usize,
    /// Whether it is read, and what of it.
    pub decision: Decision,
}

/// Whether a row group is read.
#[derive(Clone, Debug)]
pub enum Decision {
    /// Read these leaves (indices in the file's schema) of these rows (all
    /// when `None`).
    Read {
        /// The leaves, ascending.
        leaves: Vec<usize>,
        /// The rows the column index leaves.
        selection: Option<RowSelection>,
    },
    /// Not read.
    Skip(SkipReason),
}

/// Why a row group is not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Its statistics (min, max, null count) rule out every row.
    Statistics,
    /// A bloom filter shows that an equality's literal is absent.
    BloomFilter,
    /// The column index rules out every page.
    PageIndex,
    /// The runtime filter rules it out (by statistics, bloom filter or
    /// column index): the keys of a join's other side, say.
    RuntimeFilter,
}

/// What a [`ParquetFile::get`] read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadStats {
    /// Row groups in the file (those of a partition, in its plan).
    pub row_groups: usize,
    /// Row groups actually read (the others were skipped).
    pub row_groups_read: usize,
    /// Rows read: those of the row groups read, less the pages the column
    /// index ruled out.
    pub rows_read: u64,
    /// Pages of the filter's column that its column index ruled out, in
    /// the row groups that statistics did not.
    pub pages_skipped: usize,
    /// Row groups that statistics ruled out.
    pub skipped_by_statistics: usize,
    /// Row groups that bloom filters ruled out.
    pub skipped_by_bloom_filters: usize,
    /// Row groups whose every page the column index ruled out.
    pub skipped_by_page_index: usize,
    /// Row groups that the runtime filter ruled out, after the filter.
    pub skipped_by_runtime_filter: usize,
    /// Row groups of a dataset's files that a filter ruled out by their
    /// `key=value` directories: none of theirs was read.
    pub skipped_by_directories: usize,
    /// Bytes read from the files (column chunks, bloom filters, page
    /// indexes; not the footers a dataset reads once to know its columns):
    /// known once a scan is done, 0 in a plan.
    pub bytes_read: u64,
    /// What the reader found worth saying: a filter no row can pass.
    pub warnings: Vec<String>,
}

/// The rows of a row group whose pages a filter may match.
struct PageSelection {
    selection: RowSelection,
    rows: u64,
    pages_skipped: usize,
}

impl PageSelection {
    /// With `rows` counted from the selection.
    fn counted(mut self) -> PageSelection {
        self.rows = self.selection.row_count() as u64;
        self
    }
}

/// A filter with where each of its operands is in a file.
struct FilterPlan<'p> {
    filter: &'p Predicate,
    operands: Vec<(&'p Operand, OperandLeaves)>,
}

impl FilterPlan<'_> {
    fn leaves_of(&self, operand: &Operand) -> &OperandLeaves {
        &self
            .operands
            .iter()
            .find(|(o, _)| *o == operand)
            .expect("every operand is planned")
            .1
    }

    /// Whether a comparison may skip pages: one reads a single typed leaf.
    fn may_skip_pages(&self, schema: &SchemaDescriptor) -> bool {
        self.operands.iter().any(|(_, leaves)| match leaves {
            OperandLeaves::Path(target) => target.typed_leaf(schema).is_some(),
            OperandLeaves::Column(root) => column_leaf(schema, *root).is_some(),
            OperandLeaves::Absent => false,
        })
    }
}

/// Where an operand's values are.
enum OperandLeaves {
    /// A path in the Variant column.
    Path(Target),
    /// A top-level column, by its index among the roots.
    Column(usize),
    /// Not in the file: null in every row.
    Absent,
}

impl OperandLeaves {
    /// The leaves to read in a row group.
    fn leaves(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Vec<usize> {
        match self {
            OperandLeaves::Path(target) => target.leaves(schema, meta, false),
            OperandLeaves::Column(root) => (0..schema.num_columns())
                .filter(|&leaf| schema.get_column_root_idx(leaf) == *root)
                .collect(),
            OperandLeaves::Absent => Vec::new(),
        }
    }

    /// The leaf whose statistics hold every value of the operand in the
    /// row group, if one does.
    fn skippable_leaf(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Option<usize> {
        match self {
            OperandLeaves::Path(target) => target.skippable_leaf(schema, meta),
            OperandLeaves::Column(root) => column_leaf(schema, *root),
            OperandLeaves::Absent => None,
        }
    }
}

/// The leaf of an ordinary top-level column that is a primitive.
fn column_leaf(schema: &SchemaDescriptor, root: usize) -> Option<usize> {
    let mut leaves = (0..schema.num_columns()).filter(|&l| schema.get_column_root_idx(l) == root);
    match (leaves.next(), leaves.next()) {
        (Some(leaf), None) if schema.column(leaf).path().parts().len() == 1 => Some(leaf),
        _ => None,
    }
}

/// The kind of value a typed leaf holds, where a literal can be of it.
fn leaf_kind(descr: &::parquet::schema::types::ColumnDescriptor) -> Option<Kind> {
    let annotated = match descr.logical_type_ref() {
        Some(LogicalType::String | LogicalType::Enum | LogicalType::Json) => Some(Kind::String),
        Some(LogicalType::Decimal { .. }) => Some(Kind::Number),
        Some(LogicalType::Date | LogicalType::Timestamp { .. }) => Some(Kind::Instant),
        Some(LogicalType::Time { .. }) => Some(Kind::Time),
        Some(LogicalType::Uuid) => Some(Kind::Uuid),
        Some(_) => None,
        // Writers that record only the older converted type (DuckDB's
        // `DATE`).
        None => match descr.converted_type() {
            ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON => Some(Kind::String),
            ConvertedType::DECIMAL => Some(Kind::Number),
            ConvertedType::DATE
            | ConvertedType::TIMESTAMP_MILLIS
            | ConvertedType::TIMESTAMP_MICROS => Some(Kind::Instant),
            ConvertedType::TIME_MILLIS | ConvertedType::TIME_MICROS => Some(Kind::Time),
            _ => None,
        },
    };
    annotated.or(match descr.physical_type() {
        PhysicalType::BOOLEAN => Some(Kind::Boolean),
        PhysicalType::INT32 | PhysicalType::INT64 | PhysicalType::FLOAT | PhysicalType::DOUBLE => {
            Some(Kind::Number)
        }
        _ => None,
    })
}

impl ParquetFile {
    /// The plan of a `variant_get` ([`get_with`](Self::get_with)): the
    /// leaves the path needs (the typed leaf alone where its `value` is all
    /// null in a row group), the filter's and those of the `with` columns;
    /// row groups and pages the filter rules out skipped.
    pub fn plan_get(&self, request: &GetRequest, with: &[String]) -> Result<ScanPlan> {
        self.root_indices(with)?;
        self.variant_column(&request.column)?;
        if let Some(filter) = &request.filter {
            for operand in filter.operands() {
                if let Operand::Column(name) = operand {
                    self.root_indices(std::slice::from_ref(name))?;
                }
            }
        }
        self.plan_get_present(request, with)
    }

    /// [`plan_get`](Self::plan_get) where the columns it names may be
    /// absent from the file (a dataset's files differ): what the file does
    /// not have is not read, and reads as null.
    pub(crate) fn plan_get_present(
        &self,
        request: &GetRequest,
        with: &[String],
    ) -> Result<ScanPlan> {
        let with_roots = self.present_roots(with);
        let schema = self.parquet_schema();
        let column = self.variant_column(&request.column).ok();
        let target = column.map(|c| resolve(c, &request.path));
        let typed_result = request.as_type.is_typed();
        let filter = request.filter.as_ref().map(|f| (f, column));
        self.plan(
            filter,
            None,
            |meta| {
                let mut leaves = match &target {
                    Some(target) => target.leaves(schema, meta, typed_result),
                    None => Vec::new(),
                };
                leaves.extend(root_leaves(schema, &with_roots));
                leaves
            },
            |_| true,
        )
    }

    /// The plan of reading whole rows of the top-level `columns` (all when
    /// `None`).
    pub fn plan_columns(&self, columns: Option<&[String]>) -> Result<ScanPlan> {
        let schema = self.parquet_schema();
        let roots = match columns {
            Some(names) => {
                self.root_indices(names)?;
                self.present_roots(names)
            }
            None => (0..schema.root_schema().get_fields().len()).collect(),
        };
        self.plan(
            None,
            None,
            |_| root_leaves(schema, &roots).collect(),
            |_| true,
        )
    }

    /// [`plan_columns`](Self::plan_columns) of those of `columns` the file
    /// has (a dataset's files differ; the others read as null).
    pub(crate) fn plan_present_columns(&self, columns: &[String]) -> Result<ScanPlan> {
        let schema = self.parquet_schema();
        let roots = self.present_roots(columns);
        self.plan(
            None,
            None,
            |_| root_leaves(schema, &roots).collect(),
            |_| true,
        )
    }

    /// A plan reading, of each row group that `wanted` takes, the leaves
    /// `leaves_of` gives and those the filter (on paths of the Variant
    /// column given with it) reads, skipping what the filter rules out. A
    /// runtime filter, known only once the query runs, prunes what the
    /// filter leaves, counted apart; its operands are not read (it only
    /// prunes). The row groups `wanted` leaves out are neither in the plan
    /// nor counted.
    pub(super) fn plan(
        &self,
        filter: Option<(&Predicate, Option<&Type>)>,
        runtime: Option<(&Predicate, Option<&Type>)>,
        leaves_of: impl Fn(&RowGroupMetaData) -> Vec<usize>,
        wanted: impl Fn(usize) -> bool,
    ) -> Result<ScanPlan> {
        let schema = self.parquet_schema();
        let filter = filter
            .map(|(f, column)| self.filter_plan(f, column))
            .transpose()?;
        let runtime = runtime
            .map(|(f, column)| self.filter_plan(f, column))
            .transpose()?;
        let row_groups: Vec<usize> = (0..self.metadata().num_row_groups())
            .filter(|&rg| wanted(rg))
            .collect();
        let mut stats = ReadStats {
            row_groups: row_groups.len(),
            warnings: filter
                .as_ref()
                .map(|f| self.never_matching(f))
                .unwrap_or_default(),
            ..ReadStats::default()
        };
        // The page index is read only when a filter may use it; a file
        // whose index cannot be read is still read, without page skipping.
        let paged = [&filter, &runtime]
            .into_iter()
            .flatten()
            .any(|f| f.may_skip_pages(schema))
            .then(|| self.with_page_index().ok())
            .flatten();
        let mut plans = Vec::with_capacity(row_groups.len());
        'row_groups: for rg in row_groups {
            let meta = self.metadata().row_group(rg);
            let mut selection: Option<PageSelection> = None;
            for (pruning, is_runtime) in [(&filter, false), (&runtime, true)] {
                let Some(pruning) = pruning else { continue };
                let pruned = self.prune(rg, meta, pruning, paged.as_ref())?;
                let reason = match pruned {
                    Err(reason) => Some(reason),
                    Ok(None) => None,
                    Ok(Some(pages)) => {
                        let pages = match selection.take() {
                            Some(earlier) => PageSelection {
                                selection: earlier.selection.intersection(&pages.selection),
                                rows: 0,
                                pages_skipped: earlier.pages_skipped.max(pages.pages_skipped),
                            }
                            .counted(),
                            None => pages,
                        };
                        let empty = pages.rows == 0;
                        selection = Some(pages);
                        empty.then_some(SkipReason::PageIndex)
                    }
                };
                if let Some(reason) = reason {
                    if let Some(pages) = selection
                        .as_ref()
                        .filter(|_| reason == SkipReason::PageIndex)
                    {
                        stats.pages_skipped += pages.pages_skipped;
                    }
                    let reason = if is_runtime {
                        SkipReason::RuntimeFilter
                    } else {
                        reason
                    };
                    match reason {
                        SkipReason::Statistics => stats.skipped_by_statistics += 1,
                        SkipReason::BloomFilter => stats.skipped_by_bloom_filters += 1,
                        SkipReason::PageIndex => stats.skipped_by_page_index += 1,
                        SkipReason::RuntimeFilter => stats.skipped_by_runtime_filter += 1,
                    }
                    plans.push(RowGroupPlan {
                        row_group: rg,
                        decision: Decision::Skip(reason),
                    });
                    continue 'row_groups;
                }
            }
            let mut leaves = leaves_of(meta);
            if let Some(filter) = &filter {
                for (_, operand) in &filter.operands {
                    leaves.extend(operand.leaves(schema, meta));
                }
            }
            leaves.sort_unstable();
            leaves.dedup();
            let rows = match &selection {
                Some(pages) => {
                    stats.pages_skipped += pages.pages_skipped;
                    pages.rows
                }
                None => meta.num_rows().max(0) as u64,
            };
            stats.row_groups_read += 1;
            stats.rows_read += rows;
            plans.push(RowGroupPlan {
                row_group: rg,
                decision: Decision::Read {
                    leaves,
                    selection: selection.map(|p| p.selection),
                },
            });
        }
        Ok(ScanPlan {
            row_groups: plans,
            paged,
            stats,
        })
    }

    /// What `filter` makes of row group `rg`: skipped (and why), or read,
    /// whole or (with the page index) the pages it may match.
    fn prune(
        &self,
        rg: usize,
        meta: &RowGroupMetaData,
        filter: &FilterPlan<'_>,
        paged: Option<&ArrowReaderMetadata>,
    ) -> Result<std::result::Result<Option<PageSelection>, SkipReason>> {
        if !self.may_match(rg, meta, filter, false)? {
            return Ok(Err(SkipReason::Statistics));
        }
        if !self.may_match(rg, meta, filter, true)? {
            return Ok(Err(SkipReason::BloomFilter));
        }
        Ok(Ok(paged.and_then(|p| {
            self.page_selection(p.metadata(), rg, filter)
        })))
    }

    /// Where each operand of `filter` is in this file: a path in the
    /// Variant column `column`, or a top-level column.
    /// Where the filter's operands are in the file (`column`: the Variant
    /// column its paths are in, if the file has it); an operand the file
    /// does not have reads as null.
    fn filter_plan<'p>(
        &self,
        filter: &'p Predicate,
        column: Option<&Type>,
    ) -> Result<FilterPlan<'p>> {
        let operands = filter
            .operands()
            .into_iter()
            .map(|operand| {
                let found = match (operand, column) {
                    (Operand::Path(path) | Operand::PathAs(path, _), Some(column)) => {
                        OperandLeaves::Path(resolve(column, path))
                    }
                    (Operand::Path(_) | Operand::PathAs(..), None) => OperandLeaves::Absent,
                    (Operand::Column(name), _) => {
                        match self.present_roots(std::slice::from_ref(name)).first() {
                            Some(&root) => OperandLeaves::Column(root),
                            None => OperandLeaves::Absent,
                        }
                    }
                };
                Ok((operand, found))
            })
            .collect::<Result<_>>()?;
        Ok(FilterPlan { filter, operands })
    }

    /// Warnings for comparisons that no row can pass: the operand's
    /// values are all of one kind (a typed column that nothing escapes)
    /// and the literal is of another, as `$.delay == "5"` on an int64
    /// column.
    fn never_matching(&self, filter: &FilterPlan<'_>) -> Vec<String> {
        let schema = self.parquet_schema();
        let mut warnings = Vec::new();
        for comparison in filter.filter.comparisons() {
            // A path at which no row holds a value (misspelt, most likely)
            // reads null in every row, which no comparison passes.
            if let (Operand::Path(path) | Operand::PathAs(path, _), OperandLeaves::Path(target)) =
                (&comparison.operand, filter.leaves_of(&comparison.operand))
                && self.metadata().num_row_groups() > 0
                && self
                    .metadata()
                    .row_groups()
                    .iter()
                    .all(|meta| target.holds_no_value(schema, meta))
            {
                // Once a path, however many comparisons (`in (1, 2)`).
                let warning = format!(
                    "no row has a value at {path}, so no comparison of it passes (misspelt?)"
                );
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
                continue;
            }
            // A converted value is of its type's kind, whatever it was
            // stored as (`"12"` as an int64 is a number).
            if let Operand::PathAs(_, as_type) = &comparison.operand {
                if let Some(kind) = kind_of(as_type)
                    && kind != comparison.literal.kind()
                {
                    warnings.push(format!(
                        "no row can pass `{comparison}`: {} reads {}, and {} is not one (the filter compares values of one kind)",
                        comparison.operand,
                        kind.plural(),
                        comparison.literal,
                    ));
                }
                continue;
            }
            let leaves = filter.leaves_of(&comparison.operand);
            let every_row_group = |leaf: &dyn Fn(&RowGroupMetaData) -> Option<usize>| {
                let mut found = None;
                for meta in self.metadata().row_groups() {
                    let this = leaf(meta)?;
                    if found.is_some_and(|f| f != this) {
                        return None;
                    }
                    found = Some(this);
                }
                found
            };
            let Some(leaf) = every_row_group(&|meta| leaves.skippable_leaf(schema, meta)) else {
                continue;
            };
            let descr = schema.column(leaf);
            let Some(kind) = leaf_kind(&descr) else {
                continue;
            };
            warnings.extend(comparison.never_passes(kind));
        }
        warnings
    }

    /// Whether row group `rg` may hold a row that passes the filter: each
    /// comparison asks the statistics of its operand's skippable leaf
    /// ([`OperandLeaves::skippable_leaf`]), and, with `bloom`, its bloom
    /// filter for equality.
    fn may_match(
        &self,
        rg: usize,
        meta: &RowGroupMetaData,
        filter: &FilterPlan<'_>,
        bloom: bool,
    ) -> Result<bool> {
        let schema = self.parquet_schema();
        let mut failed = None;
        // Each leaf's bloom filter is read once, however many equalities
        // ask it (a join's keys are hundreds).
        let mut blooms: Vec<(usize, Option<Sbbf>)> = Vec::new();
        let may = filter.filter.may_match(&mut |leaf| {
            let Some(column) = filter
                .leaves_of(leaf.operand())
                .skippable_leaf(schema, meta)
            else {
                return true;
            };
            let chunk = meta.column(column);
            let Some(statistics) = chunk.statistics() else {
                return true;
            };
            if statistics.null_count_opt() == Some(chunk.num_values() as u64) {
                // No value at all: no comparison can hold.
                return false;
            }
            let descr = schema.column(column);
            let Some(as_type) = bounds_as(leaf.operand(), &descr) else {
                return true;
            };
            let (min, max) = compared_bounds(
                &descr,
                statistics_bound(statistics, true),
                statistics_bound(statistics, false),
                as_type,
                &leaf,
            );
            if !leaf.may_match(min.as_ref(), max.as_ref()) {
                return false;
            }
            let Some(literals) = leaf
                .equal_to_within(min.as_ref(), max.as_ref())
                .filter(|_| bloom && compared_as_stored(leaf.operand(), &descr))
            else {
                return true;
            };
            literals.iter().any(|literal| {
                self.bloom_may_contain(rg, column, &descr, literal, &mut blooms)
                    .unwrap_or_else(|e| {
                        failed = Some(e);
                        true
                    })
            })
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(may),
        }
    }

    /// The pages of row group `rg` that the column index cannot rule out
    /// for the filter, as a row selection: each comparison's pages where
    /// its skippable leaf ([`OperandLeaves::skippable_leaf`], the rule
    /// for row groups) is not repeated, intersected for `and` and joined
    /// for `or`. `None` when no index applies or one is missing or
    /// malformed.
    fn page_selection(
        &self,
        metadata: &::parquet::file::metadata::ParquetMetaData,
        rg: usize,
        filter: &FilterPlan<'_>,
    ) -> Option<PageSelection> {
        let rows = usize::try_from(metadata.row_group(rg).num_rows()).ok()?;
        let combine = |how: fn(&RowSelection, &RowSelection) -> RowSelection| {
            move |a: PageSelection, b: PageSelection| {
                PageSelection {
                    selection: how(&a.selection, &b.selection),
                    rows: 0,
                    pages_skipped: a.pages_skipped + b.pages_skipped,
                }
                .counted()
            }
        };
        filter.filter.select(
            &mut |leaf| self.leaf_pages(metadata, rg, rows, filter, &leaf),
            &combine(RowSelection::intersection),
            &combine(RowSelection::union),
        )
    }

    /// The pages of one comparison's (or `in` list's) leaf that the column
    /// index leaves.
    fn leaf_pages(
        &self,
        metadata: &::parquet::file::metadata::ParquetMetaData,
        rg: usize,
        rows: usize,
        filter: &FilterPlan<'_>,
        leaf: &Leaf<'_>,
    ) -> Option<PageSelection> {
        let schema = self.parquet_schema();
        let meta = metadata.row_group(rg);
        let typed = filter
            .leaves_of(leaf.operand())
            .skippable_leaf(schema, meta)?;
        let descr = schema.column(typed);
        if descr.max_rep_level() > 0 {
            return None;
        }
        let as_type = bounds_as(leaf.operand(), &descr)?;
        let index = metadata.column_index()?.get(rg)?.get(typed)?;
        // A page index of locations alone (no bounds): nothing to prune by,
        // and the index's accessors panic on it.
        if matches!(
            index,
            ::parquet::file::page_index::column_index::ColumnIndexMetaData::NONE
        ) {
            return None;
        }
        let locations = metadata
            .offset_index()?
            .get(rg)?
            .get(typed)?
            .page_locations();
        let mut kept = Vec::with_capacity(locations.len());
        let mut pages_skipped = 0;
        for (page, location) in locations.iter().enumerate() {
            let start = usize::try_from(location.first_row_index).ok()?;
            let end = match locations.get(page + 1) {
                Some(next) => usize::try_from(next.first_row_index).ok()?,
                None => rows,
            };
            if start > end || end > rows || page as u64 >= index.num_pages() {
                return None;
            }
            let empty = index.is_null_page(page);
            let (min, max) = compared_bounds(
                &descr,
                page_bound(index, page, true),
                page_bound(index, page, false),
                as_type,
                leaf,
            );
            if empty || !leaf.may_match(min.as_ref(), max.as_ref()) {
                pages_skipped += 1;
            } else {
                kept.push(start..end);
            }
        }
        Some(
            PageSelection {
                selection: RowSelection::from_consecutive_ranges(kept.into_iter(), rows),
                rows: 0,
                pages_skipped,
            }
            .counted(),
        )
    }

    /// False only when the column chunk's bloom filter proves `lit` absent;
    /// `blooms` keeps the filters read so far for this row group.
    fn bloom_may_contain(
        &self,
        rg: usize,
        leaf: usize,
        descr: &::parquet::schema::types::ColumnDescriptor,
        lit: &Literal,
        blooms: &mut Vec<(usize, Option<Sbbf>)>,
    ) -> Result<bool> {
        if self
            .metadata()
            .row_group(rg)
            .column(leaf)
            .bloom_filter_offset()
            .is_none()
        {
            return Ok(true);
        }
        let i = match blooms.iter().position(|(l, _)| *l == leaf) {
            Some(i) => i,
            None => {
                let bloom = self.bloom_filter(rg, leaf)?;
                blooms.push((leaf, bloom));
                blooms.len() - 1
            }
        };
        let Some(bloom) = &blooms[i].1 else {
            return Ok(true);
        };
        Ok(match (descr.physical_type(), lit) {
            (PhysicalType::BYTE_ARRAY, Literal::String(s)) => bloom.check(s.as_str()),
            (PhysicalType::INT64, Literal::Number(d)) if d.scale() == 0 || is_decimal(descr) => {
                match exact_unscaled(d, descr) {
                    Some(v) => i64::try_from(v).map_or(true, |v| bloom.check(&v)),
                    None => true,
                }
            }
            (PhysicalType::INT32, Literal::Number(d)) => match exact_unscaled(d, descr) {
                Some(v) => i32::try_from(v).map_or(true, |v| bloom.check(&v)),
                None => true,
            },
            _ => true,
        })
    }
}

/// Every leaf under the top-level columns `roots`.
pub(super) fn root_leaves<'s>(
    schema: &'s SchemaDescriptor,
    roots: &'s [usize],
) -> impl Iterator<Item = usize> + 's {
    (0..schema.num_columns()).filter(|&leaf| roots.contains(&schema.get_column_root_idx(leaf)))
}

fn is_decimal(descr: &::parquet::schema::types::ColumnDescriptor) -> bool {
    matches!(descr.logical_type_ref(), Some(LogicalType::Decimal(_)))
        || descr.converted_type() == ConvertedType::DECIMAL
}

/// The unscaled integer a literal has in this integer or decimal column,
/// when that is exact; `None` otherwise (then the bloom filter is not
/// asked).
fn exact_unscaled(
    d: &VariantDecimal,
    descr: &::parquet::schema::types::ColumnDescriptor,
) -> Option<i128> {
    let scale = if is_decimal(descr) {
        descr.type_scale().max(0) as u8
    } else {
        0
    };
    d.rescale(scale).map(|d| d.unscaled())
}

/// Whether a leaf is null in every row of the row group.
fn all_null(meta: &RowGroupMetaData, leaf: usize) -> bool {
    let chunk = meta.column(leaf);
    chunk
        .statistics()
        .and_then(|s| s.null_count_opt())
        .is_some_and(|n| n == chunk.num_values() as u64)
}

/// A min or max as the footer stores it, before it is read in the terms
/// of the leaf's logical type.
#[derive(Clone, Copy)]
enum RawBound<'a> {
    Bool(bool),
    Int(i128),
    Float(f64),
    Bytes(&'a [u8]),
}

/// A bound of a typed leaf, from its row group statistics or its column
/// index, as a Variant value: integers and decimals as exact numbers,
/// strings as strings (`None` for bytes that are not UTF-8).
fn bound<'a>(
    descr: &::parquet::schema::types::ColumnDescriptor,
    raw: Option<RawBound<'a>>,
) -> Option<VariantRef<'a>> {
    let decimal = is_decimal(descr);
    let scale = if decimal {
        descr.type_scale().max(0) as u8
    } else {
        0
    };
    let number = |v: i128| {
        VariantDecimal::try_new(v, scale)
            .ok()
            .map(VariantRef::Decimal16)
    };
    match raw? {
        RawBound::Bool(b) => Some(VariantRef::Bool(b)),
        RawBound::Int(v) => number(v),
        RawBound::Float(v) => Some(VariantRef::Double(v)),
        RawBound::Bytes(bytes) => match descr.physical_type() {
            PhysicalType::BYTE_ARRAY if !decimal => {
                std::str::from_utf8(bytes).ok().map(VariantRef::String)
            }
            PhysicalType::FIXED_LEN_BYTE_ARRAY if decimal => {
                if bytes.is_empty() || bytes.len() > 16 {
                    return None;
                }
                // Big-endian two's complement, sign-extended to 16 bytes.
                let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0 };
                let mut full = [fill; 16];
                full[16 - bytes.len()..].copy_from_slice(bytes);
                number(i128::from_be_bytes(full))
            }
            _ => None,
        },
    }
}

/// How a comparison of `operand` reads the bounds of a typed leaf of it:
/// as stored (`Some(None)`), or converted to a type as the values are
/// (`Some(Some(type))`), where the conversion keeps their order: numbers
/// to a number type (truncated, rounded or widened), strings as strings,
/// booleans as booleans. `None` where it may not (strings read as
/// numbers, numbers as strings, instants as numbers): then the bounds
/// rule nothing out.
fn bounds_as<'o>(
    operand: &'o Operand,
    descr: &::parquet::schema::types::ColumnDescriptor,
) -> Option<Option<&'o ShreddingSchema>> {
    if !ordered_as_stored(descr) {
        return None;
    }
    let Operand::PathAs(_, as_type) = operand else {
        // Dates, timestamps and times are stored as numbers, which their
        // literals are not.
        return match leaf_kind(descr) {
            Some(Kind::Instant | Kind::Time) => None,
            _ => Some(None),
        };
    };
    match (leaf_kind(descr)?, kind_of(as_type)?) {
        (Kind::Number, Kind::Number) => Some(Some(as_type)),
        (Kind::String, Kind::String) | (Kind::Boolean, Kind::Boolean) => Some(None),
        _ => None,
    }
}

/// Whether a leaf's statistics order as its physical type reads them: not
/// for unsigned integers of 32 and 64 bits (`u64::MAX` is a signed `-1`,
/// so their bounds would rule out the largest values; narrower ones are
/// all non-negative as stored).
fn ordered_as_stored(descr: &::parquet::schema::types::ColumnDescriptor) -> bool {
    match descr.logical_type_ref() {
        Some(LogicalType::Integer(int)) => int.is_signed || int.bit_width < 32,
        Some(_) => true,
        None => !matches!(
            descr.converted_type(),
            ConvertedType::UINT_32 | ConvertedType::UINT_64
        ),
    }
}

/// Whether a float leaf's max may leave out values that `leaf` passes:
/// writers leave NaN out of the statistics, and NaN, above every number
/// and equal to itself, passes `>`, `>=`, `!=` and `== NaN` (unless
/// converted to a type that makes it null: an integer, a decimal).
fn max_leaves_out(leaf: &Leaf<'_>, descr: &::parquet::schema::types::ColumnDescriptor) -> bool {
    use ShreddingSchema as S;
    let nan = |literal: &Literal| matches!(literal, Literal::Double(x) if x.is_nan());
    let passes_nan = match leaf {
        Leaf::Compare(c) => matches!(c.op, Op::Gt | Op::Ge | Op::Ne) || nan(&c.literal),
        Leaf::In(list) => list.literals().iter().any(|l| nan(l)),
    };
    matches!(
        descr.physical_type(),
        PhysicalType::FLOAT | PhysicalType::DOUBLE
    ) && passes_nan
        && match leaf.operand() {
            Operand::PathAs(_, as_type) => matches!(as_type, S::Float | S::Double),
            _ => true,
        }
}

/// The kind of the values of a scalar type.
fn kind_of(as_type: &ShreddingSchema) -> Option<Kind> {
    use ShreddingSchema as S;
    Some(match as_type {
        S::Boolean => Kind::Boolean,
        S::Int8 | S::Int16 | S::Int32 | S::Int64 | S::Float | S::Double | S::Decimal { .. } => {
            Kind::Number
        }
        S::String => Kind::String,
        S::Date | S::Timestamp { .. } => Kind::Instant,
        S::Time => Kind::Time,
        S::Binary => Kind::Binary,
        S::Uuid => Kind::Uuid,
        S::Variant | S::Object(_) | S::Array(_) => return None,
    })
}

/// A leaf's min and max as `leaf` compares them ([`converted`] to the type
/// its operand reads): none where the writer stored none, and none where
/// they cannot be right, the min above the max (a corrupt footer), which
/// would rule out rows that are there.
fn compared_bounds<'a>(
    descr: &::parquet::schema::types::ColumnDescriptor,
    min: Option<RawBound<'a>>,
    max: Option<RawBound<'a>>,
    as_type: Option<&ShreddingSchema>,
    leaf: &Leaf<'_>,
) -> (Option<VariantRef<'a>>, Option<VariantRef<'a>>) {
    let (min, max) = (bound(descr, min), bound(descr, max));
    if let (Some(low), Some(high)) = (&min, &max)
        && crate::variant::compare(low, high) == std::cmp::Ordering::Greater
    {
        return (None, None);
    }
    (
        converted(min, as_type),
        converted(max, as_type).filter(|_| !max_leaves_out(leaf, descr)),
    )
}

/// A bound converted as [`bounds_as`] says; one that does not convert
/// (out of range) bounds nothing.
fn converted<'a>(
    bound: Option<VariantRef<'a>>,
    as_type: Option<&ShreddingSchema>,
) -> Option<VariantRef<'a>> {
    match as_type {
        Some(as_type) => cast_as(&bound?, as_type),
        None => bound,
    }
}

/// Whether `operand` reads a typed leaf's values as they are stored, so
/// that its bloom filter answers for a literal: unconverted, or integers
/// read as an integer type, strings as a string.
fn compared_as_stored(
    operand: &Operand,
    descr: &::parquet::schema::types::ColumnDescriptor,
) -> bool {
    use ShreddingSchema as S;
    let Operand::PathAs(_, as_type) = operand else {
        return true;
    };
    let integers = matches!(
        descr.physical_type(),
        PhysicalType::INT32 | PhysicalType::INT64
    ) && leaf_kind(descr) == Some(Kind::Number)
        && !is_decimal(descr);
    match as_type {
        S::Int8 | S::Int16 | S::Int32 | S::Int64 => integers,
        S::String => leaf_kind(descr) == Some(Kind::String),
        _ => false,
    }
}

/// The min (or max) of a row group's statistics.
fn statistics_bound(statistics: &Statistics, is_min: bool) -> Option<RawBound<'_>> {
    macro_rules! pick {
        ($s:expr) => {
            if is_min { $s.min_opt() } else { $s.max_opt() }
        };
    }
    match statistics {
        Statistics::Boolean(s) => pick!(s).map(|b| RawBound::Bool(*b)),
        Statistics::Int32(s) => pick!(s).map(|v| RawBound::Int(*v as i128)),
        Statistics::Int64(s) => pick!(s).map(|v| RawBound::Int(*v as i128)),
        Statistics::Float(s) => pick!(s).map(|v| RawBound::Float(*v as f64)),
        Statistics::Double(s) => pick!(s).map(|v| RawBound::Float(*v)),
        Statistics::ByteArray(s) => pick!(s).map(|v| RawBound::Bytes(v.data())),
        Statistics::FixedLenByteArray(s) => pick!(s).map(|v| RawBound::Bytes(v.data())),
        Statistics::Int96(_) => None,
    }
}

/// The min (or max) of one page in a column index.
fn page_bound(index: &ColumnIndexMetaData, page: usize, is_min: bool) -> Option<RawBound<'_>> {
    macro_rules! pick {
        ($ix:expr) => {
            if is_min {
                $ix.min_value(page)
            } else {
                $ix.max_value(page)
            }
        };
    }
    match index {
        ColumnIndexMetaData::BOOLEAN(ix) => pick!(ix).map(|b| RawBound::Bool(*b)),
        ColumnIndexMetaData::INT32(ix) => pick!(ix).map(|v| RawBound::Int(*v as i128)),
        ColumnIndexMetaData::INT64(ix) => pick!(ix).map(|v| RawBound::Int(*v as i128)),
        ColumnIndexMetaData::FLOAT(ix) => pick!(ix).map(|v| RawBound::Float(*v as f64)),
        ColumnIndexMetaData::DOUBLE(ix) => pick!(ix).map(|v| RawBound::Float(*v)),
        ColumnIndexMetaData::BYTE_ARRAY(ix) | ColumnIndexMetaData::FIXED_LEN_BYTE_ARRAY(ix) => {
            pick!(ix).map(RawBound::Bytes)
        }
        _ => None,
    }
}

/// Where a path leads in a Variant column's Parquet group.
pub(super) struct Target {
    /// Leaf path prefix of the slot where resolution stopped.
    slot: Vec<String>,
    /// Whether every segment went through shredded groups.
    complete: bool,
}

impl Target {
    fn prefix_leaves(&self, schema: &SchemaDescriptor, suffix: &[&str]) -> Vec<usize> {
        let mut prefix = self.slot.clone();
        prefix.extend(suffix.iter().map(|s| s.to_string()));
        (0..schema.num_columns())
            .filter(|&i| schema.column(i).path().parts().starts_with(&prefix))
            .collect()
    }

    /// The leaves to read in a row group: the slot's subtree when the path
    /// is complete (without an all-null `value`), else the slot's residual;
    /// `metadata` whenever a Variant-encoded value may need decoding: the
    /// slot's residual, or one below it in a shredded object or array.
    pub(super) fn leaves(
        &self,
        schema: &SchemaDescriptor,
        meta: &RowGroupMetaData,
        typed_result: bool,
    ) -> Vec<usize> {
        let value = self.prefix_leaves(schema, &["value"]);
        let value_needed = value.iter().any(|&v| !all_null(meta, v));
        let mut leaves = if self.complete {
            let mut l = self.prefix_leaves(schema, &["typed_value"]);
            if value_needed || l.is_empty() {
                l.extend(&value);
            }
            l
        } else {
            value
        };
        // A residual below the slot (of a shredded field or element) is
        // Variant-encoded too, whatever the result's type.
        let residual_below = self.complete
            && self
                .prefix_leaves(schema, &["typed_value"])
                .into_iter()
                .any(|l| schema.column(l).name() == "value" && !all_null(meta, l));
        if value_needed || residual_below || !self.complete || !typed_result {
            let column = &self.slot[0];
            leaves.extend((0..schema.num_columns()).filter(|&i| {
                schema.column(i).path().parts() == [column.clone(), "metadata".into()]
            }));
        }
        leaves
    }

    /// The single primitive `typed_value` leaf of a complete path.
    fn typed_leaf(&self, schema: &SchemaDescriptor) -> Option<usize> {
        if !self.complete {
            return None;
        }
        let leaves = self.prefix_leaves(schema, &["typed_value"]);
        let mut path = self.slot.clone();
        path.push("typed_value".into());
        match leaves.as_slice() {
            [one] if schema.column(*one).path().parts() == path.as_slice() => Some(*one),
            _ => None,
        }
    }

    fn value_leaf(&self, schema: &SchemaDescriptor) -> Option<usize> {
        self.prefix_leaves(schema, &["value"]).first().copied()
    }

    /// Whether no row of the row group can have a value at the path: it
    /// leaves the shredded groups (a field that is not shredded, an index
    /// into what is not a list) where the slot's `value`, which would hold
    /// it, is all null or absent.
    fn holds_no_value(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> bool {
        !self.complete
            && self
                .value_leaf(schema)
                .is_none_or(|value| all_null(meta, value))
    }

    /// The typed leaf whose statistics (of the row group, or of its pages)
    /// may rule rows out, as the spec's Data Skipping section allows: the
    /// single primitive `typed_value` of a complete path, where the slot's
    /// `value` is all null in the row group, so that no value escapes it.
    fn skippable_leaf(&self, schema: &SchemaDescriptor, meta: &RowGroupMetaData) -> Option<usize> {
        let typed = self.typed_leaf(schema)?;
        match self.value_leaf(schema) {
            Some(value) if !all_null(meta, value) => None,
            _ => Some(typed),
        }
    }
}

/// Follows `path` through the shredded groups of a Variant column.
pub(super) fn resolve(column: &Type, path: &VariantPath) -> Target {
    let mut slot = vec![column.name().to_string()];
    let mut group = column;
    for segment in path.segments() {
        let Some(typed) = child(group, "typed_value").filter(|t| t.is_group()) else {
            return Target {
                slot,
                complete: false,
            };
        };
        let next = match segment {
            PathSegment::Field(name) if !is_list(typed) => {
                child(typed, name).map(|f| (f, vec![name.clone()]))
            }
            PathSegment::Index(_) if is_list(typed) => child(typed, "list")
                .and_then(|l| l.get_fields().first().map(|e| (l, e)))
                .map(|(l, e)| (e.as_ref(), vec![l.name().to_string(), e.name().to_string()])),
            _ => None,
        };
        let Some((next, names)) = next else {
            return Target {
                slot,
                complete: false,
            };
        };
        slot.push("typed_value".into());
        slot.extend(names);
        group = next;
    }
    Target {
        slot,
        complete: true,
    }
}

fn child<'t>(t: &'t Type, name: &str) -> Option<&'t Type> {
    if !t.is_group() {
        return None;
    }
    t.get_fields()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.as_ref())
}

fn is_list(t: &Type) -> bool {
    matches!(
        t.get_basic_info().logical_type_ref(),
        Some(LogicalType::List)
    ) || t.get_basic_info().converted_type() == ConvertedType::LIST
}
