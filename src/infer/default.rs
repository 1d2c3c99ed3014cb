//! The default preset's planner: majority typing, map detection, and the
//! cost model that decides which typed columns pay for themselves (the
//! rules and the model are described in the [module docs](super)).

use std::collections::{HashMap, HashSet};

use super::stats::{Class, ClassStats, Node, Presence, Stats};
use super::{InferOptions, LayoutPlan, LeafEncoding, LeafEstimate, MOSTLY_DISTINCT, min_count};
use crate::path::PathSegment;
use crate::shred::{ShreddingSchema, is_shreddable_name};

/// Fixed bytes a Parquet leaf column costs per row group (its column chunk
/// metadata in the footer, page and dictionary page headers), charged as
/// if the file held only the sample.
const LEAF_OVERHEAD: f64 = 300.0;

/// The bytes of an RLE run of levels, with the restart of bit-packing.
const RLE_RUN: f64 = 3.0;

/// The dictionary page size past which our writer falls back to plain (or
/// delta) encoding.
const DICTIONARY_LIMIT: f64 = super::DICTIONARY_PAGE_LIMIT as f64;

/// The smallest Variant object header: type byte, 1-byte field count and
/// the 1-byte offset of its end.
const OBJECT_HEADER: f64 = 3.0;

/// The smallest Variant array header: type byte, 1-byte element count and
/// the 1-byte offset of its end.
const ARRAY_HEADER: f64 = 3.0;

/// The length prefix of a BYTE_ARRAY value (PLAIN encoding).
const LENGTH_PREFIX: f64 = 4.0;

/// A map needs at least this many distinct keys when the keys look like ids.
const MAP_MIN_ID_KEYS: usize = 8;

/// A map needs at least this many distinct keys when judged by rare keys.
const MAP_MIN_RARE_KEYS: usize = 16;

/// A key is rare when fewer than this share of the objects have it.
const RARE_KEY_SHARE: f64 = 0.10;

/// Plans the schema for `stats`, with the estimates of its typed leaves.
pub(super) fn plan(stats: &Stats, options: &InferOptions) -> LayoutPlan {
    let root = Slot {
        entries: stats.rows as f64,
        def: 1,
        rep: 0,
        list_starts: 0.0,
        repetition: None,
        root: true,
    };
    let planned = |keep: Option<&HashSet<Path>>| {
        let mut leaves = Vec::new();
        let planner = Planner { options, keep };
        let planned = planner.slot(&stats.root, &root, &mut Vec::new(), &mut leaves);
        planned.filter(|p| p.gain > 0.0).map(|p| (p.schema, leaves))
    };
    let unshredded = || LayoutPlan::from(ShreddingSchema::Variant);
    let Some((full, leaves)) = planned(None) else {
        return unshredded();
    };
    let (schema, leaves) = if full.leaf_count() <= options.max_columns {
        (full, leaves)
    } else {
        let keep = most_valuable(&leaves, options.max_columns);
        match planned(Some(&keep)) {
            Some(fitting) => fitting,
            None => return unshredded(),
        }
    };
    LayoutPlan {
        schema,
        leaves: leaves.into_iter().map(|leaf| leaf.estimate).collect(),
    }
}

/// One step of a path from the root: an object field or an array's elements.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Field(String),
    Element,
}

type Path = Vec<Step>;

/// A typed scalar leaf of a plan: its gain, and how it was priced.
struct PricedLeaf {
    path: Path,
    gain: f64,
    estimate: LeafEstimate,
}

/// A typed layout for a slot and its estimated gain in bytes over the
/// sample (negative when it costs more than it saves).
struct Planned {
    schema: ShreddingSchema,
    gain: f64,
}

/// Where a slot's leaf columns sit in the Parquet schema.
#[derive(Clone, Copy)]
struct Slot<'s> {
    /// Level entries of the slot's leaves: one per row, or under a LIST one
    /// per element plus one per empty, null or missing list.
    entries: f64,
    /// The definition level of the slot's group (its leaves are one deeper).
    def: u32,
    /// The number of enclosing LISTs.
    rep: u32,
    /// Under a LIST: the entries that start a new list.
    list_starts: f64,
    /// Under one LIST: its repetition levels as the sample made them,
    /// entry by entry.
    repetition: Option<&'s Presence>,
    /// The column's root: its `value` column exists anyway.
    root: bool,
}

impl<'s> Slot<'s> {
    /// The bytes of a leaf's definition (and, under a LIST, repetition)
    /// levels when `present` of its entries are non-null.
    fn levels(&self, present: f64) -> f64 {
        let def = level_bytes(
            self.entries,
            bits(self.def as f64 + 2.0),
            present / self.entries,
        );
        let rep = if self.rep == 0 {
            0.0
        } else {
            level_bytes(
                self.entries,
                bits(self.rep as f64 + 1.0),
                self.list_starts / self.entries,
            )
        };
        def + rep
    }

    /// The bytes of the levels of a typed leaf of `node` in this slot,
    /// `present` of its entries typed: outside LISTs and under one, from
    /// the runs the node's entries made (missing, the Variant null, each
    /// class) in the sample, and under one its list's repetition levels
    /// too; under nested LISTs, as [`levels`](Self::levels) prices them.
    fn typed_levels(&self, node: &Node, present: f64) -> f64 {
        let entries = self.entries as u64;
        let def = || node.presence.bytes(entries, bits(self.def as f64 + 2.0));
        match (self.rep, self.repetition) {
            (0, _) => def(),
            (1, Some(repetition)) => def() + repetition.bytes(entries, 1.0),
            _ => self.levels(present),
        }
    }

    /// The slot of a field of this slot's object.
    fn field(&self) -> Slot<'s> {
        Slot {
            def: self.def + 1,
            root: false,
            ..*self
        }
    }

    /// The slot of the elements of this slot's array `node`.
    fn element(&self, node: &'s Node, elements: f64) -> Slot<'s> {
        Slot {
            entries: elements + (self.entries - node.nonempty_arrays as f64),
            def: self.def + 2,
            rep: self.rep + 1,
            list_starts: self.entries,
            repetition: (self.rep == 0).then_some(&node.repetition),
            root: false,
        }
    }
}

/// The bytes of `entries` levels of `bits` bits, RLE/bit-packed, when a
/// level is one value with probability `p` and another otherwise: groups
/// of 8 are bit-packed (`bits` bytes) unless all equal; a run of equal
/// groups becomes one RLE run (about `RLE_RUN` bytes with the restart of
/// bit-packing).
fn level_bytes(entries: f64, bits: f64, p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    let uniform = p.powi(8) + (1.0 - p).powi(8);
    entries / 8.0 * (bits * (1.0 - uniform) + RLE_RUN * uniform * (1.0 - uniform))
}

/// Bits to tell `n` values apart (at least 1).
fn bits(n: f64) -> f64 {
    n.log2().ceil().max(1.0)
}

/// How a typed column stores its values.
enum Storage {
    /// Bit-packed booleans.
    Bits,
    /// Fixed width in bytes.
    Fixed(f64),
    /// BYTE_ARRAY: a length prefix and the bytes.
    Bytes,
}

struct Planner<'a> {
    options: &'a InferOptions,
    /// In the second pass: the scalar leaves that fit the width budget.
    keep: Option<&'a HashSet<Path>>,
}

/// The gain given a leaf on a path asked for typed
/// ([`InferOptions::with_typed_paths`]): more than any sample's bytes, so
/// that it and the groups holding it are shredded and kept within the
/// column budget.
const ASKED_FOR_GAIN: f64 = 1e15;

impl Planner<'_> {
    /// Whether `path` is a path asked for typed, or with `or_above`, leads
    /// to one.
    fn asked_for(&self, path: &Path, or_above: bool) -> bool {
        self.options.typed_paths().iter().any(|typed| {
            let segments = typed.segments();
            let length_fits = match or_above {
                true => segments.len() >= path.len(),
                false => segments.len() == path.len(),
            };
            length_fits
                && path.iter().zip(segments).all(|(step, segment)| {
                    matches!((step, segment), (Step::Field(a), PathSegment::Field(b)) if a == b)
                })
        })
    }

    /// Plans `node` at `slot`, whether or not it pays; adds each typed
    /// scalar leaf of the plan and its gain to `leaves`. `None`: the slot
    /// cannot be typed (no majority class, a map, no typed field).
    fn slot(
        &self,
        node: &Node,
        slot: &Slot,
        path: &mut Path,
        leaves: &mut Vec<PricedLeaf>,
    ) -> Option<Planned> {
        let non_null = node.count - node.nulls;
        // The most common class; ties go to the first in class order.
        let best = node
            .classes
            .iter()
            .max_by(|a, b| a.count.cmp(&b.count).then(b.class.cmp(&a.class)))?;
        if best.count < min_count(non_null, self.options.min_type_share) {
            return None;
        }
        match best.class {
            Class::Object => self.object(node, best, slot, path, leaves),
            Class::Array => self.array(node, best, slot, path, leaves),
            _ => self.scalar(node, best, slot, path, leaves),
        }
    }

    /// What moving the slot's group out of the enclosing residual saves and
    /// costs besides its typed values. Every occurrence leaves the residual
    /// (saving its field id and offset); `nulled` of them leave this slot's
    /// `value` null; the others, and `partial` objects that keep a
    /// residual, are left in `value`; the group adds `leaves` columns.
    fn group_gain(
        &self,
        node: &Node,
        best: &ClassStats,
        slot: &Slot,
        nulled: f64,
        partial: f64,
        leaves: f64,
    ) -> f64 {
        let (left, distinct) = leftovers(node, best, partial);
        if slot.root {
            // The root's `value` column is there anyway, and so are its
            // length prefixes except for the rows that leave it null.
            LENGTH_PREFIX * nulled - slot.levels(left) - LEAF_OVERHEAD * (leaves - 1.0)
        } else {
            node.entry_bytes as f64
                - value_column(left, distinct)
                - slot.levels(left)
                - LEAF_OVERHEAD * leaves
        }
    }

    fn scalar(
        &self,
        node: &Node,
        best: &ClassStats,
        slot: &Slot,
        path: &mut Path,
        leaves: &mut Vec<PricedLeaf>,
    ) -> Option<Planned> {
        if self.keep.is_some_and(|keep| !keep.contains(path)) {
            return None;
        }
        let (schema, storage) = scalar_layout(best)?;
        let (encoding, data, plain) = priced_values(best, &storage);
        let levels = slot.typed_levels(node, best.count as f64);
        let bytes = data + levels;
        let gain = if self.asked_for(path, false) {
            ASKED_FOR_GAIN
        } else {
            best.bytes as f64 - bytes
                + self.group_gain(node, best, slot, best.count as f64, 0.0, 2.0)
        };
        leaves.push(PricedLeaf {
            path: path.clone(),
            gain,
            estimate: LeafEstimate {
                path: leaf_path(path),
                encoding,
                bytes,
                plain_bytes: plain.map(|plain| plain + levels),
            },
        });
        Some(Planned { schema, gain })
    }

    /// Plans an object with the fields that pay, or with every field that
    /// can be typed when that pays more: objects left with no unshredded
    /// field drop their header and leave `value` null, which can outweigh
    /// fields that cost a little (an all-distinct id in every row).
    fn object(
        &self,
        node: &Node,
        best: &ClassStats,
        slot: &Slot,
        path: &mut Path,
        leaves: &mut Vec<PricedLeaf>,
    ) -> Option<Planned> {
        if is_map(node) {
            return None;
        }
        let field_slot = slot.field();
        let min_occurrences = min_count(slot.entries as u64, self.options.min_frequency);
        let mut names: Vec<&String> = node
            .children
            .keys()
            .filter(|name| is_shreddable_name(name))
            .collect();
        names.sort();
        let names = one_per_case(names, |name| {
            path.push(Step::Field(name.to_string()));
            let asked = self.asked_for(path, true);
            path.pop();
            (asked, node.children[name].count)
        });
        let mut candidates = Vec::new();
        for name in names {
            let child = &node.children[name];
            path.push(Step::Field(name.clone()));
            if child.count < min_occurrences && !self.asked_for(path, true) {
                path.pop();
                continue;
            }
            let mut field_leaves = Vec::new();
            let planned = self.slot(child, &field_slot, path, &mut field_leaves);
            path.pop();
            if let Some(p) = planned {
                candidates.push((name, child.count, p, field_leaves));
            }
        }
        // The gain of the object typed with the candidates `chosen` picks.
        let gain_with = |chosen: &dyn Fn(&Planned) -> bool| {
            let (mut fields_gain, mut shredded, mut any) = (0.0, 0, false);
            for (_, count, p, _) in candidates.iter().filter(|c| chosen(&c.2)) {
                fields_gain += p.gain;
                shredded += count;
                any = true;
            }
            let objects = best.count as f64;
            // Objects that keep a residual in `value`: at most one per
            // field occurrence left unshredded. The others drop it.
            let partial = objects.min((node.key_occurrences - shredded) as f64);
            let whole = objects - partial;
            let gain = fields_gain
                + OBJECT_HEADER * whole
                + self.group_gain(node, best, slot, whole, partial, 1.0);
            any.then_some(gain)
        };
        let paying = |p: &Planned| p.gain > 0.0;
        let all = |_: &Planned| true;
        let (chosen, gain): (&dyn Fn(&Planned) -> bool, f64) =
            match (gain_with(&paying), gain_with(&all)) {
                (Some(a), Some(b)) if a >= b => (&paying, a),
                (_, Some(b)) => (&all, b),
                (_, None) => return None,
            };
        let mut fields = Vec::new();
        for (name, _, p, mut field_leaves) in candidates {
            if chosen(&p) {
                leaves.append(&mut field_leaves);
                fields.push((name.clone(), p.schema));
            }
        }
        Some(Planned {
            schema: ShreddingSchema::Object(fields),
            gain,
        })
    }

    fn array(
        &self,
        node: &Node,
        best: &ClassStats,
        slot: &Slot,
        path: &mut Path,
        leaves: &mut Vec<PricedLeaf>,
    ) -> Option<Planned> {
        let element = node.element.as_deref()?;
        let element_slot = slot.element(node, element.count as f64);
        let mut element_leaves = Vec::new();
        path.push(Step::Element);
        let planned = self.slot(element, &element_slot, path, &mut element_leaves);
        path.pop();
        let planned = planned?;
        let arrays = best.count as f64;
        let gain = planned.gain
            + ARRAY_HEADER * arrays
            + self.group_gain(node, best, slot, arrays, 0.0, 1.0);
        leaves.append(&mut element_leaves);
        Some(Planned {
            schema: ShreddingSchema::Array(Box::new(planned.schema)),
            gain,
        })
    }
}

/// The values a slot typed as `best` leaves in its `value` column, and how
/// many distinct ones: nulls (all alike), the other classes' values, and
/// `partial` objects that keep unshredded fields (taken as all distinct).
fn leftovers(node: &Node, best: &ClassStats, partial: f64) -> (f64, f64) {
    let nulls = node.nulls as f64;
    let (mut left, mut distinct) = (nulls + partial, nulls.min(1.0) + partial);
    for c in node.classes.iter().filter(|c| c.class != best.class) {
        let count = c.count as f64;
        left += count;
        distinct += match c.class {
            Class::Object | Class::Array => count,
            _ => c.distinct.estimate().clamp(1.0, count),
        };
    }
    (left, distinct)
}

/// The bytes a `value` column spends on `left` values with `distinct`
/// distinct ones beyond the values' own bytes (which only move there from
/// the residual): dictionary indices and a length prefix per dictionary
/// entry; or, when they are [mostly distinct](MOSTLY_DISTINCT), which the
/// writer stores plain, a length prefix per value.
fn value_column(left: f64, distinct: f64) -> f64 {
    if left == 0.0 {
        return 0.0;
    }
    if distinct >= MOSTLY_DISTINCT * left {
        return LENGTH_PREFIX * left;
    }
    left * bits(distinct) / 8.0 + LENGTH_PREFIX * distinct
}

/// How the writer stores a typed leaf's values (see
/// [`LeafEncoding`]), and their bytes, levels apart: a dictionary unless
/// the values are [mostly distinct](MOSTLY_DISTINCT) or the dictionary
/// page would outgrow its limit; then deltas where they are smaller than
/// plain values (`DELTA_BINARY_PACKED` for values stored as integers,
/// `DELTA_BYTE_ARRAY` for strings and binaries). Not a dictionary against
/// deltas by their bytes before compression: constant or repeated values
/// come out smaller as deltas so, yet their dictionary indices compress
/// to nothing: with the least of the three, 23 leaves of few distinct
/// values (types, licences, flags) on four of the bench's real data sets
/// would have left their dictionaries. Booleans are never
/// dictionary-encoded. With strings and binaries priced as deltas comes
/// their plain bytes, which the writer takes where they compress smaller
/// ([`LeafEncoding::Delta`]).
fn priced_values(best: &ClassStats, storage: &Storage) -> (LeafEncoding, f64, Option<f64>) {
    let m = best.count as f64;
    let distinct = best.distinct.estimate().clamp(1.0, m);
    let (plain, entry, delta) = match *storage {
        Storage::Bits => return (LeafEncoding::Plain, m / 8.0, None),
        Storage::Fixed(width) => {
            let delta = stored_as_integers(best.class).then(|| best.deltas.bytes());
            (m * width, width, delta)
        }
        Storage::Bytes => {
            let payload = best.payload as f64;
            let delta = Some(best.prefixes.bytes());
            (
                LENGTH_PREFIX * m + payload,
                LENGTH_PREFIX + payload / m,
                delta,
            )
        }
    };
    let dictionary = distinct * entry;
    if distinct < MOSTLY_DISTINCT * m && dictionary <= DICTIONARY_LIMIT {
        return (
            LeafEncoding::Dictionary,
            best.runs.bytes(m, bits(distinct)) + dictionary,
            None,
        );
    }
    match delta {
        Some(delta) if delta < plain => {
            let plain_bytes = matches!(storage, Storage::Bytes).then_some(plain);
            (LeafEncoding::Delta, delta, plain_bytes)
        }
        _ => (LeafEncoding::Plain, plain, None),
    }
}

/// Whether the typed column of `class` is a Parquet INT32 or INT64, which
/// `DELTA_BINARY_PACKED` can encode. Decimals are when written as integers
/// ([`DecimalMode::Int`](crate::parquet::DecimalMode::Int), the default);
/// the writer stores those it cannot so PLAIN.
fn stored_as_integers(class: Class) -> bool {
    matches!(
        class,
        Class::Int | Class::Decimal(_) | Class::Date | Class::Time | Class::Timestamp { .. }
    )
}

/// The Parquet path of a typed leaf below its Variant column:
/// `["typed_value", "a", "typed_value", "list", "element", "typed_value"]`
/// for the elements of field `a`.
fn leaf_path(path: &[Step]) -> Vec<String> {
    let mut parts = Vec::new();
    for step in path {
        parts.push("typed_value".to_string());
        match step {
            Step::Field(name) => parts.push(name.clone()),
            Step::Element => parts.extend(["list".to_string(), "element".to_string()]),
        }
    }
    parts.push("typed_value".to_string());
    parts
}

/// The narrowest faithful typed layout for a scalar class, and its
/// storage; `None` for objects and arrays, and for the types Spark 4.3's
/// reader refuses to read a file with (UUID, TIME, nanosecond timestamps):
/// their values stay in `value`, where every engine reads them.
fn scalar_layout(best: &ClassStats) -> Option<(ShreddingSchema, Storage)> {
    use ShreddingSchema as S;
    Some(match best.class {
        Class::Boolean => (S::Boolean, Storage::Bits),
        Class::Int if best.min >= i32::MIN as i64 && best.max <= i32::MAX as i64 => {
            (S::Int32, Storage::Fixed(4.0))
        }
        Class::Int => (S::Int64, Storage::Fixed(8.0)),
        Class::Decimal(scale) => {
            let precision = (best.integer_digits + scale).clamp(1, 38);
            let width = match precision {
                0..=9 => 4.0,
                10..=18 => 8.0,
                _ => 16.0,
            };
            (S::Decimal { precision, scale }, Storage::Fixed(width))
        }
        Class::Double => (S::Double, Storage::Fixed(8.0)),
        Class::Float => (S::Float, Storage::Fixed(4.0)),
        Class::String => (S::String, Storage::Bytes),
        Class::Binary => (S::Binary, Storage::Bytes),
        Class::Date => (S::Date, Storage::Fixed(4.0)),
        Class::Timestamp { utc, nanos: false } => {
            (S::Timestamp { utc, nanos: false }, Storage::Fixed(8.0))
        }
        Class::Time | Class::Timestamp { nanos: true, .. } | Class::Uuid => return None,
        Class::Object | Class::Array => return None,
    })
}

/// Whether an object path is used as a map (see the module docs).
fn is_map(node: &Node) -> bool {
    if node.key_overflow {
        return true;
    }
    let keys = node.children.len();
    let id_like = node.children.keys().filter(|k| looks_like_id(k)).count();
    if keys >= MAP_MIN_ID_KEYS && 2 * id_like >= keys {
        return true;
    }
    let objects = node.objects() as f64;
    let rare: u64 = node
        .children
        .values()
        .filter(|c| (c.count as f64) < RARE_KEY_SHARE * objects)
        .map(|c| c.count)
        .sum();
    keys >= MAP_MIN_RARE_KEYS && 2 * rare > node.key_occurrences
}

/// Whether a key looks like an identifier or a value rather than a field
/// name: digits with no letters (`"1234"`, `"2024-05-01"`, `"1.2.0"`), a
/// UUID, or a long hex string (a hash, an object id).
pub(super) fn looks_like_id(key: &str) -> bool {
    let bytes = key.as_bytes();
    if !bytes.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let no_letters = bytes.iter().all(|b| !b.is_ascii_alphabetic());
    let hex = bytes.len() >= 16 && bytes.iter().all(u8::is_ascii_hexdigit);
    let uuid = bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    no_letters || hex || uuid
}

/// The scalar leaves to keep within `max_columns` Parquet leaves: the most
/// valuable first, each charged 2 columns (`value` + `typed_value`; 1 at
/// the root) plus 1 for each enclosing group not yet charged; the root's
/// `value` column is always there.
fn most_valuable(leaves: &[PricedLeaf], max_columns: usize) -> HashSet<Path> {
    let mut leaves: Vec<(&Path, f64)> = leaves.iter().map(|l| (&l.path, l.gain)).collect();
    leaves.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut groups: HashSet<&[Step]> = HashSet::new();
    let mut used = 1;
    let mut keep = HashSet::new();
    for (path, _) in &leaves {
        let new_groups: Vec<&[Step]> = (1..path.len())
            .map(|i| &path[..i])
            .filter(|p| !groups.contains(p))
            .collect();
        let cost = new_groups.len() + if path.is_empty() { 1 } else { 2 };
        if used + cost > max_columns {
            continue;
        }
        used += cost;
        groups.extend(new_groups);
        keep.insert((*path).clone());
    }
    keep
}

/// Of `names` (in order) that are equal but for case (`id`, `ID`), the one
/// `rank` puts first, the first on a tie, and every one asked for typed
/// (`rank` gives whether it is, and how often the name is found); the
/// others stay in `value`. DuckDB 2.0 matches a shredded object's field
/// names ignoring case, and reads `id` beside `ID` as `id_1` (Spark's own
/// files too).
fn one_per_case(names: Vec<&String>, mut rank: impl FnMut(&str) -> (bool, u64)) -> Vec<&String> {
    let ranked: Vec<(bool, u64)> = names.iter().map(|name| rank(name)).collect();
    let lower: Vec<String> = names.iter().map(|name| name.to_lowercase()).collect();
    let mut best: HashMap<&str, usize> = HashMap::new();
    for (i, folded) in lower.iter().enumerate() {
        best.entry(folded)
            .and_modify(|b| {
                if ranked[i] > ranked[*b] {
                    *b = i;
                }
            })
            .or_insert(i);
    }
    names
        .iter()
        .enumerate()
        .filter(|&(i, _)| ranked[i].0 || best[lower[i].as_str()] == i)
        .map(|(_, name)| *name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::json_to_variant;
    use crate::variant::VariantRef;

    /// The statistics of the objects `rows(i)` for `i` in `0..n`.
    fn object_stats(n: usize, row: impl Fn(usize) -> String) -> Stats {
        let mut stats = Stats::new(50, 100_000);
        for i in 0..n {
            let (m, v) = json_to_variant(row(i).as_bytes()).unwrap();
            stats.add(&VariantRef::try_new(&m, &v).unwrap());
        }
        stats
    }

    #[test]
    fn maps_are_told_from_records() {
        // Ids as keys, however frequent.
        let ids = object_stats(100, |i| {
            let keys: Vec<String> = (0..8)
                .filter(|k| (i + k) % 2 == 0)
                .map(|k| format!(r#""{}": 1"#, 100 + k))
                .collect();
            format!("{{{}}}", keys.join(","))
        });
        assert!(is_map(&ids.root));
        // 7 id-like keys are too few to tell.
        let few = object_stats(100, |_| {
            r#"{"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7}"#.into()
        });
        assert!(!is_map(&few.root));
        // Many keys, each in few objects: language codes.
        let langs = object_stats(200, |i| {
            let keys: Vec<String> = (0..3)
                .map(|k| format!(r#""l{}": "x""#, (i * 3 + k) % 60))
                .collect();
            format!(r#"{{"en": "x", {}}}"#, keys.join(","))
        });
        assert!(is_map(&langs.root));
        // A record with a long tail of rare optional fields.
        let record = object_stats(200, |i| {
            format!(r#"{{"a": 1, "b": 2, "c": 3, "d": 4, "rare{}": 5}}"#, i % 50)
        });
        assert!(!is_map(&record.root));
        // More keys than are tracked.
        let wide = object_stats(3, |i| {
            let keys: Vec<String> = (0..400)
                .map(|k| format!(r#""k{}": 1"#, i * 400 + k))
                .collect();
            format!("{{{}}}", keys.join(","))
        });
        assert!(wide.root.key_overflow);
        assert!(is_map(&wide.root));
    }

    #[test]
    fn ids_look_like_ids_and_names_do_not() {
        for key in [
            "12345",
            "2024-05-01",
            "1.2.0",
            "0",
            "5f2b8c1e9a7d4b3c",
            "123e4567-e89b-12d3-a456-426614174000",
        ] {
            assert!(looks_like_id(key), "{key}");
        }
        for key in ["en", "f0", "name", "user_id", "deadbeef", "zh-hans", "v2"] {
            assert!(!looks_like_id(key), "{key}");
        }
    }

    #[test]
    fn level_costs_vanish_for_uniform_entries() {
        let slot = Slot {
            entries: 1000.0,
            def: 2,
            rep: 0,
            list_starts: 0.0,
            repetition: None,
            root: false,
        };
        assert_eq!(slot.levels(0.0), 0.0);
        assert_eq!(slot.levels(1000.0), 0.0);
        // Half present: almost every group of 8 is mixed; 2 bits per entry.
        assert!((slot.levels(500.0) - 250.0).abs() < 2.0);
    }

    #[test]
    fn the_budget_keeps_the_most_valuable_leaves() {
        let field = |name: &str| Step::Field(name.into());
        let leaf = |path: Path, gain: f64| PricedLeaf {
            estimate: LeafEstimate {
                path: leaf_path(&path),
                encoding: LeafEncoding::Dictionary,
                bytes: 0.0,
                plain_bytes: None,
            },
            path,
            gain,
        };
        let leaves = vec![
            leaf(vec![field("a")], 10.0),
            leaf(vec![field("b"), field("x")], 50.0),
            leaf(vec![field("b"), field("y")], 40.0),
            leaf(vec![field("c")], 45.0),
        ];
        // 1 + b.x (1 + 2) + c (2) = 6; b.y needs 2 more, a 2 more.
        let keep = most_valuable(&leaves, 7);
        assert_eq!(keep.len(), 2);
        assert!(keep.contains(&vec![field("b"), field("x")]));
        assert!(keep.contains(&vec![field("c")]));
    }
}
