//! The `spark` preset: a port of Spark 4.3's `InferVariantShreddingSchema`
//! (`sql/core/.../datasources/parquet/InferVariantShreddingSchema.scala`),
//! kept close to its structure so that quirks come out the same.
//!
//! Collection builds Spark's `FieldNode` tree: per node a merged Catalyst
//! type, the number of distinct rows it was seen in, the number of times it
//! was seen inside arrays, its children (object fields) and its array
//! element node. `build` turns the tree into a type with the frequency and
//! width filters; `finalize` widens the types and spends the column budget.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::hash::BytesHasher;
use crate::shred::{ShreddingSchema, is_shreddable_name};
use crate::variant::{VariantDecimal, VariantRef};

/// Spark keeps at most this many fields per struct before the budget.
const MAX_STRUCT_SIZE: usize = 1000;

/// `Decimal.MAX_LONG_DIGITS`: the most digits an 8-byte decimal holds.
const MAX_LONG_DIGITS: u32 = 18;

/// `DecimalType.MAX_PRECISION`.
const MAX_PRECISION: u32 = 38;

/// The Catalyst types inference works with.
#[derive(Clone, Debug, PartialEq, Eq)]
enum SparkType {
    /// `NullType`: merges with anything.
    Null,
    /// `VariantType`: no typed column.
    Variant,
    Boolean,
    /// `LongType`: only for integers of 19 digits (shorter ones are decimals).
    Long,
    Decimal {
        precision: u32,
        scale: u32,
    },
    String,
    Double,
    Float,
    Binary,
    Date,
    Timestamp,
    TimestampNtz,
    /// A struct; during collection an empty one marks "an object".
    Struct(Vec<(String, SparkType)>),
    /// An array; during collection `Array(Null)` marks "an array".
    Array(Box<SparkType>),
}

/// `mergeSchema`.
fn merge(a: SparkType, b: SparkType) -> SparkType {
    use SparkType as T;
    match (a, b) {
        (T::Null, t) | (t, T::Null) => t,
        (
            T::Decimal {
                precision: p1,
                scale: s1,
            },
            T::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => merge_decimal(p1, s1, p2, s2),
        (T::Decimal { precision, scale }, T::Long) | (T::Long, T::Decimal { precision, scale }) => {
            if scale == 0 && precision <= MAX_LONG_DIGITS {
                T::Long
            } else {
                // A long always fits DECIMAL(19, 0).
                merge_decimal(precision, scale, 19, 0)
            }
        }
        // Collection only ever merges the empty struct markers (fields are
        // gathered in the node tree), so this is Spark's struct merge on
        // every input it sees.
        (T::Struct(a), T::Struct(b)) if a.is_empty() && b.is_empty() => T::Struct(a),
        (T::Array(a), T::Array(b)) => T::Array(Box::new(merge(*a, *b))),
        (a, b) if a == b => a,
        _ => T::Variant,
    }
}

/// `mergeDecimal`: the larger scale and the larger number of integer digits.
fn merge_decimal(p1: u32, s1: u32, p2: u32, s2: u32) -> SparkType {
    let scale = s1.max(s2);
    let range = (p1 - s1).max(p2 - s2);
    if range + scale > MAX_PRECISION {
        SparkType::Variant
    } else {
        SparkType::Decimal {
            precision: range + scale,
            scale,
        }
    }
}

fn merge_into(slot: &mut SparkType, t: SparkType) {
    *slot = merge(std::mem::replace(slot, SparkType::Null), t);
}

/// `inferPrimitiveType`: the type of one value, with markers for containers.
fn infer_primitive(v: &VariantRef<'_>, depth: usize, max_depth: usize) -> SparkType {
    use SparkType as T;
    if depth >= max_depth {
        return T::Variant;
    }
    match *v {
        VariantRef::Object(_) => T::Struct(Vec::new()),
        VariantRef::Array(_) => T::Array(Box::new(T::Null)),
        VariantRef::Null => T::Null,
        VariantRef::Bool(_) => T::Boolean,
        VariantRef::Int8(_)
        | VariantRef::Int16(_)
        | VariantRef::Int32(_)
        | VariantRef::Int64(_) => {
            // The arm holds an integer: `as_i64` is `Some`.
            let digits = VariantDecimal::from(v.as_i64().unwrap_or_default()).precision() as u32;
            if digits <= MAX_LONG_DIGITS {
                T::Decimal {
                    precision: digits,
                    scale: 0,
                }
            } else {
                T::Long
            }
        }
        VariantRef::String(_) => T::String,
        VariantRef::Double(_) => T::Double,
        // Spark's `Decimal.set` makes the precision at least the scale
        // (0.05 is DECIMAL(2,2)).
        VariantRef::Decimal4(d) | VariantRef::Decimal8(d) | VariantRef::Decimal16(d) => {
            T::Decimal {
                precision: d.required_precision() as u32,
                scale: d.scale() as u32,
            }
        }
        VariantRef::Date(_) => T::Date,
        VariantRef::TimestampMicros(_) => T::Timestamp,
        VariantRef::TimestampNtzMicros(_) => T::TimestampNtz,
        VariantRef::Float(_) => T::Float,
        VariantRef::Binary(_) => T::Binary,
        VariantRef::Uuid(_) => T::Variant,
        // Spark 4.3 has no case for these (its write fails); keep them in
        // `value`.
        VariantRef::TimeNtzMicros(_)
        | VariantRef::TimestampNanos(_)
        | VariantRef::TimestampNtzNanos(_) => T::Variant,
    }
}

/// Spark's `FieldNode`.
#[derive(Debug)]
struct FieldNode {
    data_type: SparkType,
    /// Distinct rows that had this field (outside arrays).
    row_count: u64,
    last_seen_row: Option<u64>,
    /// Occurrences inside array elements.
    array_element_count: u64,
    children: HashMap<String, FieldNode, BytesHasher>,
    array_element: Option<Box<FieldNode>>,
}

impl FieldNode {
    fn new() -> FieldNode {
        FieldNode {
            data_type: SparkType::Null,
            row_count: 0,
            last_seen_row: None,
            array_element_count: 0,
            children: HashMap::default(),
            array_element: None,
        }
    }

    fn see_row(&mut self, row: u64) {
        if self.last_seen_row != Some(row) {
            self.row_count += 1;
            self.last_seen_row = Some(row);
        }
    }
}

/// Limits of the collection.
#[derive(Debug)]
struct Limits {
    max_depth: usize,
    /// Nodes that may still be created (a memory bound Spark does not have).
    nodes_left: usize,
}

impl Limits {
    fn child<'n>(&mut self, node: &'n mut FieldNode, name: &str) -> Option<&'n mut FieldNode> {
        if node.children.contains_key(name) {
            return node.children.get_mut(name);
        }
        self.nodes_left = self.nodes_left.checked_sub(1)?;
        Some(
            node.children
                .entry(name.to_owned())
                .or_insert_with(FieldNode::new),
        )
    }

    fn element<'n>(&mut self, node: &'n mut FieldNode) -> Option<&'n mut FieldNode> {
        if node.array_element.is_none() {
            self.nodes_left = self.nodes_left.checked_sub(1)?;
        }
        Some(
            node.array_element
                .get_or_insert_with(|| Box::new(FieldNode::new())),
        )
    }
}

/// The statistics of the `spark` preset.
#[derive(Debug)]
pub(super) struct SparkStats {
    root: FieldNode,
    non_null: u64,
    limits: Limits,
}

impl SparkStats {
    pub(super) fn new(max_depth: usize, max_tracked_paths: usize) -> SparkStats {
        SparkStats {
            root: FieldNode::new(),
            non_null: 0,
            limits: Limits {
                max_depth,
                nodes_left: max_tracked_paths,
            },
        }
    }

    /// Adds the value of row `row` (rows count SQL NULLs too, as Spark's
    /// row index does).
    pub(super) fn add(&mut self, v: &VariantRef<'_>, row: u64) {
        self.non_null += 1;
        let t = infer_primitive(v, 0, self.limits.max_depth);
        merge_into(&mut self.root.data_type, t);
        collect(v, &mut self.root, row, 0, false, &mut self.limits);
    }

    /// Builds and finalizes the schema.
    pub(super) fn finish(&self, min_frequency: f64, max_columns: usize) -> ShreddingSchema {
        let min_cardinality = super::min_count(self.non_null, min_frequency);
        let max_struct = MAX_STRUCT_SIZE.min(max_columns);
        let simple = build(
            &self.root,
            min_cardinality,
            false,
            self.root.array_element.is_some(),
            max_struct,
        );
        let mut remaining = i64::try_from(max_columns).unwrap_or(i64::MAX);
        finalize(&simple, &mut remaining)
    }
}

/// `collectFieldStats`.
fn collect(
    v: &VariantRef<'_>,
    node: &mut FieldNode,
    row: u64,
    depth: usize,
    in_array: bool,
    limits: &mut Limits,
) {
    if depth >= limits.max_depth {
        return;
    }
    match v {
        VariantRef::Object(o) => {
            for (name, value) in o.iter() {
                let max_depth = limits.max_depth;
                let Some(child) = limits.child(node, name) else {
                    continue;
                };
                if in_array {
                    child.array_element_count += 1;
                } else {
                    child.see_row(row);
                }
                merge_into(
                    &mut child.data_type,
                    infer_primitive(&value, depth, max_depth),
                );
                collect(&value, child, row, depth + 1, in_array, limits);
            }
        }
        VariantRef::Array(a) => {
            let max_depth = limits.max_depth;
            let Some(element) = limits.element(node) else {
                return;
            };
            element.see_row(row);
            for e in a.iter() {
                // Containers are described by the element node's children
                // and element node, not by its type.
                if !matches!(e, VariantRef::Object(_) | VariantRef::Array(_)) {
                    merge_into(
                        &mut element.data_type,
                        infer_primitive(&e, depth, max_depth),
                    );
                }
                collect(&e, element, row, depth + 1, true, limits);
            }
        }
        _ => {}
    }
}

/// Java's `String.compareTo`: UTF-16 code unit order.
fn java_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `buildSchemaFromStats`.
fn build(
    node: &FieldNode,
    min_cardinality: u64,
    in_array: bool,
    is_array: bool,
    max_struct: usize,
) -> SparkType {
    use SparkType as T;
    if is_array {
        if let Some(element) = node
            .array_element
            .as_deref()
            .filter(|e| e.row_count >= min_cardinality)
        {
            let element_type = build(
                element,
                min_cardinality,
                true,
                element.array_element.is_some(),
                max_struct,
            );
            return T::Array(Box::new(merge(element.data_type.clone(), element_type)));
        }
        return node.data_type.clone();
    }
    // A conflict keeps no children, even if most rows were objects.
    if node.data_type == T::Variant {
        return T::Variant;
    }
    let cardinality = |c: &FieldNode| {
        if in_array {
            c.array_element_count
        } else {
            c.row_count
        }
    };
    let mut children: Vec<(&String, &FieldNode)> = node
        .children
        .iter()
        .filter(|(_, c)| cardinality(c) >= min_cardinality)
        .collect();
    children.sort_by(|a, b| {
        cardinality(b.1)
            .cmp(&cardinality(a.1))
            .then_with(|| java_cmp(a.0, b.0))
    });
    children.truncate(max_struct);
    children.sort_by(|a, b| java_cmp(a.0, b.0));
    if children.is_empty() {
        return match &node.data_type {
            T::Struct(_) | T::Array(_) | T::Null => T::Variant,
            dt => dt.clone(),
        };
    }
    T::Struct(
        children
            .into_iter()
            .map(|(name, child)| {
                let t = match child.data_type {
                    T::Struct(_) => build(child, min_cardinality, in_array, false, max_struct),
                    T::Array(_) => build(
                        child,
                        min_cardinality,
                        true,
                        child.array_element.is_some(),
                        max_struct,
                    ),
                    ref other => other.clone(),
                };
                (name.clone(), t)
            })
            .collect(),
    )
}

/// `finalizeSimpleSchema`: widening, and the column budget. Each node costs
/// one column for its `value`, a scalar `typed_value` one more; once the
/// budget is spent, the node is value-only and later fields are dropped.
fn finalize(dt: &SparkType, remaining: &mut i64) -> ShreddingSchema {
    use ShreddingSchema as S;
    use SparkType as T;
    *remaining -= 1;
    if *remaining <= 0 {
        return S::Variant;
    }
    let typed = match dt {
        T::Struct(fields) => {
            let mut out = Vec::new();
            // In Spark's (alphabetical) order, which decides who gets the budget.
            for (name, t) in fields.iter().filter(|(name, _)| is_shreddable_name(name)) {
                if *remaining <= 0 {
                    break;
                }
                out.push((name.clone(), finalize(t, remaining)));
            }
            if out.is_empty() {
                return S::Variant;
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            return S::Object(out);
        }
        T::Array(element) => return S::Array(Box::new(finalize(element, remaining))),
        T::Variant | T::Null => return S::Variant,
        T::Long => S::Int64,
        // Integers were typed DECIMAL(p, 0) to merge with decimals.
        T::Decimal {
            precision,
            scale: 0,
        } if *precision <= MAX_LONG_DIGITS => S::Int64,
        T::Decimal { precision, scale } => S::Decimal {
            precision: if *precision <= MAX_LONG_DIGITS {
                MAX_LONG_DIGITS as u8
            } else {
                MAX_PRECISION as u8
            },
            scale: *scale as u8,
        },
        T::Boolean => S::Boolean,
        T::String => S::String,
        T::Double => S::Double,
        T::Float => S::Float,
        T::Binary => S::Binary,
        T::Date => S::Date,
        T::Timestamp => S::Timestamp {
            utc: true,
            nanos: false,
        },
        T::TimestampNtz => S::Timestamp {
            utc: false,
            nanos: false,
        },
    };
    *remaining -= 1;
    typed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(precision: u32, scale: u32) -> SparkType {
        SparkType::Decimal { precision, scale }
    }

    #[test]
    fn merge_follows_spark() {
        use SparkType as T;
        for (a, b, merged) in [
            (T::Null, T::String, T::String),
            (dec(1, 0), dec(2, 1), dec(2, 1)),
            (dec(3, 2), dec(4, 1), dec(5, 2)),
            (dec(38, 0), dec(2, 1), T::Variant),
            (dec(5, 0), T::Long, T::Long),
            (dec(2, 1), T::Long, dec(20, 1)),
            (dec(19, 0), T::Long, dec(19, 0)),
            (T::Long, T::Long, T::Long),
            (T::String, dec(1, 0), T::Variant),
            (T::Double, dec(2, 1), T::Variant),
            (T::Float, T::Double, T::Variant),
            (T::Struct(vec![]), T::Array(Box::new(T::Null)), T::Variant),
            (T::Struct(vec![]), T::Struct(vec![]), T::Struct(vec![])),
            (T::Variant, T::Null, T::Variant),
        ] {
            assert_eq!(merge(a.clone(), b.clone()), merged, "{a:?} + {b:?}");
            assert_eq!(merge(b.clone(), a.clone()), merged, "{b:?} + {a:?}");
        }
    }

    #[test]
    fn names_compare_as_java_strings() {
        // U+FF21 (one UTF-16 unit, 0xFF21) sorts after U+1F600 (surrogates
        // 0xD83D...) in Java, before it in UTF-8 byte order.
        assert_eq!(java_cmp("\u{FF21}", "\u{1F600}"), Ordering::Greater);
        assert_eq!("\u{FF21}".cmp("\u{1F600}"), Ordering::Less);
        assert_eq!(java_cmp("a", "b"), Ordering::Less);
    }

    #[test]
    fn finalize_charges_the_budget_in_name_order() {
        let fields = (0..4)
            .map(|i| (format!("f{i}"), dec(1, 0)))
            .collect::<Vec<_>>();
        // Root 1, f0 2, f1 2: 5 of 6 spent; f2's value makes it 0.
        let mut remaining = 6;
        let schema = finalize(&SparkType::Struct(fields), &mut remaining);
        assert_eq!(
            schema.to_string(),
            r#"{"f0":"int64","f1":"int64","f2":"variant"}"#
        );
        assert_eq!(remaining, 0);
    }
}
