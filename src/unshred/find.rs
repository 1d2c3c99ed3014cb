//! Path finding: one path followed in many rows, through the shredded
//! slots as far as they go, then into the Variant-encoded value.

use std::cell::{Cell, RefCell};

use super::column::*;
use crate::error::Result;
use crate::path::PathSegment;
use crate::variant::{Metadata, PathStep, VariantRef};

impl<'a> ShreddedColumn<'a> {
    /// A finder of `path` in the rows of this column.
    pub(crate) fn finder<'p>(&'p self, path: &'p [PathSegment]) -> PathFinder<'p, 'a> {
        PathFinder {
            column: self,
            path,
            resolved: Cell::new(None),
            steps: RefCell::new(Vec::new()),
            by_name: path.iter().map(PathStep::by_name).collect(),
        }
    }
}

/// Finds one path in many rows of a column. Where the path enters a
/// Variant-encoded value, objects are searched by name (a binary search
/// of their fields) until a run of rows sharing one metadata is long
/// enough to pay for resolving the path's names to key ids (a scan of the
/// dictionary); from then on objects are searched by id, comparing no
/// names: rows that share metadata are the usual case.
pub(crate) struct PathFinder<'p, 'a> {
    pub(super) column: &'p ShreddedColumn<'a>,
    pub(super) path: &'p [PathSegment],
    /// The metadata `steps` were resolved against. Equal metadata in
    /// consecutive rows comes back over the same bytes
    /// ([`ShreddedColumn::row_metadata`]), and bytes borrowed for `'a`
    /// cannot change, so the address says whether to resolve again.
    pub(super) resolved: Cell<Option<&'a [u8]>>,
    pub(super) steps: RefCell<Vec<PathStep>>,
    /// The path's steps by name.
    pub(super) by_name: Vec<PathStep>,
}

impl<'p, 'a> PathFinder<'p, 'a> {
    /// Where the path leads in row `row` (which must not be null).
    #[inline]
    pub(crate) fn find(&self, row: usize, m: &RowMetadata<'_, 'a>) -> Result<Found<'p, 'a>> {
        match self.column.root.find(row, self, 0, m)? {
            // A row with nothing stored, neither `value` nor `typed_value`,
            // is the Variant null, as the row rebuilt whole reads
            // ([`ShreddedColumn::write_variant`]): `$` is that null.
            Found::Missing if self.path.is_empty() => Ok(Found::Value(VARIANT_NULL)),
            found => Ok(found),
        }
    }

    /// The bytes of the sub-value at the path's steps from `depth` on,
    /// inside `value`.
    #[inline]
    pub(super) fn in_value(
        &self,
        m: &RowMetadata<'_, 'a>,
        metadata: Metadata<'a>,
        value: &'a [u8],
        depth: usize,
    ) -> Result<Option<&'a [u8]>> {
        let bytes = metadata.as_bytes();
        let mut resolved = self.steps.borrow_mut();
        // Resolving scans the dictionary once per name; a search by name
        // costs about log2 of its size comparisons per row.
        let n = metadata.len().max(2);
        let steps = if self.resolved.get().is_some_and(|r| std::ptr::eq(r, bytes)) {
            &resolved[..]
        } else if m.run_length(&metadata) < n / n.ilog2() as usize {
            &self.by_name[..]
        } else {
            metadata.resolve(self.path, &mut resolved);
            self.resolved.set(Some(bytes));
            &resolved[..]
        };
        VariantRef::try_at_path(
            metadata,
            value,
            &steps[depth..],
            crate::variant::DEFAULT_MAX_DEPTH,
        )
    }
}

/// The Variant null, encoded: a primitive header of type 0.
const VARIANT_NULL: &[u8] = &[0];

/// Where a path leads in one row.
pub(crate) enum Found<'s, 'a> {
    /// Nothing there.
    Missing,
    /// A shredded slot, at this index of its arrays.
    Slot(&'s SlotReader<'a>, usize),
    /// A value inside a Variant-encoded residual: its bytes, validated,
    /// under the row's metadata ([`decode`](crate::variant::decode) reads
    /// them).
    Value(&'a [u8]),
}

impl<'a> Found<'_, 'a> {
    /// Whether what was found is an object ([`SlotReader::is_object`]);
    /// `None` when nothing was, or the Variant null.
    pub(crate) fn is_object(&self, m: &RowMetadata<'_, 'a>) -> Result<Option<bool>> {
        match self {
            Found::Missing => Ok(None),
            Found::Value(bytes) => value_is_object(bytes, m),
            Found::Slot(slot, i) => slot.is_object(*i, m),
        }
    }
}

/// Whether Variant-encoded `bytes` are an object; `None` for the Variant
/// null.
fn value_is_object(bytes: &[u8], m: &RowMetadata<'_, '_>) -> Result<Option<bool>> {
    Ok(match crate::variant::decode(m.get()?, bytes) {
        VariantRef::Null => None,
        VariantRef::Object(_) => Some(true),
        _ => Some(false),
    })
}

impl<'a> SlotReader<'a> {
    /// Follows the finder's path from step `depth` on, from this slot at
    /// index `i`: through shredded objects and lists while they go, then
    /// into the Variant-encoded value.
    pub(super) fn find<'s>(
        &'s self,
        i: usize,
        finder: &PathFinder<'_, 'a>,
        depth: usize,
        m: &RowMetadata<'_, 'a>,
    ) -> Result<Found<'s, 'a>> {
        let Some(first) = finder.path.get(depth) else {
            return Ok(if self.is_present(i) {
                Found::Slot(self, i)
            } else {
                Found::Missing
            });
        };
        let typed = self.typed.as_ref().filter(|t| t.is_valid(i));
        match (typed.map(|t| &t.reader), first) {
            (Some(TypedReader::Object(object)), PathSegment::Field(name)) => {
                if let Some(field) = object.field(name) {
                    return field.find(i, finder, depth + 1, m);
                }
            }
            (Some(TypedReader::List(list)), PathSegment::Index(k)) => {
                let range = list.offsets.range(i);
                return if *k < range.len() {
                    // An element's error names its row, not the element.
                    list.element
                        .find(range.start + k, finder, depth + 1, m)
                        .map_err(|err| err.with_row(i as u64))
                } else {
                    Ok(Found::Missing)
                };
            }
            _ if typed.is_some() => return Ok(Found::Missing),
            _ => {}
        }
        // Not shredded along this step: the residual value holds it, if
        // anything; only the path through it is checked.
        let Some(bytes) = self.value_at(i) else {
            return Ok(Found::Missing);
        };
        let found = self.value_context(i, finder.in_value(m, m.get()?, bytes, depth))?;
        Ok(found.map_or(Found::Missing, Found::Value))
    }

    /// Whether the value at `i` is an object, from the shredded layout
    /// when it is typed there (no Variant rebuilt); `None` when there is
    /// none or it is the Variant null.
    pub(crate) fn is_object(&self, i: usize, m: &RowMetadata<'_, 'a>) -> Result<Option<bool>> {
        if let Some(typed) = self.typed.as_ref().filter(|t| t.is_valid(i)) {
            return Ok(Some(matches!(typed.reader, TypedReader::Object(_))));
        }
        match self.value_at(i) {
            Some(bytes) => value_is_object(bytes, m),
            None => Ok(None),
        }
    }

    /// The primitive `typed_value` at `i`, if valid and not a container;
    /// an error where `value` is set too, which the spec forbids (`cat`
    /// refuses the row, and a typed read must not pick one of the two).
    pub(crate) fn typed_scalar(&self, i: usize) -> Result<Option<VariantRef<'a>>> {
        match &self.typed {
            Some(Typed {
                reader: TypedReader::Object(_) | TypedReader::List(_),
                ..
            })
            | None => Ok(None),
            Some(t) if t.is_valid(i) => {
                self.no_conflict(i, self.value_at(i))?;
                t.reader.scalar(i).map(Some)
            }
            Some(_) => Ok(None),
        }
    }
}
