//! Property tests for the Variant encoding and the JSON conversion.
//!
//! 1. Arbitrary Variant trees written with the builder's exact-type methods
//!    read back as the same tree (types and values); `int` and `decimal`
//!    pick the smallest type.
//! 2. A hand encoder writes the same trees with non-minimal but legal
//!    choices (widths, `is_large`, shuffled values, unsorted dictionary with
//!    extra names, long strings); the reader accepts them as equal.
//! 3. Arbitrary JSON text -> Variant -> JSON text keeps every value
//!    (numbers by value, decimals with their scale).
//! 4. Logical equality across physical types.

mod hand_encoding;

use std::fmt::Write as _;

use hand_encoding::{push_uint, width_for};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use vshred::json::{json_to_variant, variant_to_json_string, write_json};
use vshred::variant::{VariantBuilder, VariantDecimal, VariantRef, VariantType};

/// Cases per property: enough to find bugs, few enough for a fast debug run.
/// No regression files: this suite must only touch its own source file.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// The test-local Variant tree
// ---------------------------------------------------------------------------

/// An owned Variant value with its exact physical type.
#[derive(Clone, Debug)]
enum Tree {
    Null,
    Bool(bool),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Float(f32),
    Double(f64),
    /// Unscaled value and scale.
    Decimal4(i32, u8),
    Decimal8(i64, u8),
    Decimal16(i128, u8),
    Date(i32),
    /// Microseconds since midnight.
    Time(i64),
    TimestampMicros(i64),
    TimestampNtzMicros(i64),
    TimestampNanos(i64),
    TimestampNtzNanos(i64),
    Binary(Vec<u8>),
    String(String),
    Uuid([u8; 16]),
    /// Fields in insertion order; names are unique.
    Object(Vec<(String, Tree)>),
    Array(Vec<Tree>),
}

impl Tree {
    fn variant_type(&self) -> VariantType {
        match self {
            Tree::Null => VariantType::Null,
            Tree::Bool(_) => VariantType::Boolean,
            Tree::Int8(_) => VariantType::Int8,
            Tree::Int16(_) => VariantType::Int16,
            Tree::Int32(_) => VariantType::Int32,
            Tree::Int64(_) => VariantType::Int64,
            Tree::Float(_) => VariantType::Float,
            Tree::Double(_) => VariantType::Double,
            Tree::Decimal4(..) => VariantType::Decimal4,
            Tree::Decimal8(..) => VariantType::Decimal8,
            Tree::Decimal16(..) => VariantType::Decimal16,
            Tree::Date(_) => VariantType::Date,
            Tree::Time(_) => VariantType::TimeNtzMicros,
            Tree::TimestampMicros(_) => VariantType::TimestampMicros,
            Tree::TimestampNtzMicros(_) => VariantType::TimestampNtzMicros,
            Tree::TimestampNanos(_) => VariantType::TimestampNanos,
            Tree::TimestampNtzNanos(_) => VariantType::TimestampNtzNanos,
            Tree::Binary(_) => VariantType::Binary,
            Tree::String(_) => VariantType::String,
            Tree::Uuid(_) => VariantType::Uuid,
            Tree::Object(_) => VariantType::Object,
            Tree::Array(_) => VariantType::Array,
        }
    }

    /// An exact numeric's unscaled value and scale.
    fn exact(&self) -> Option<(i128, u8)> {
        match *self {
            Tree::Int8(v) => Some((v.into(), 0)),
            Tree::Int16(v) => Some((v.into(), 0)),
            Tree::Int32(v) => Some((v.into(), 0)),
            Tree::Int64(v) => Some((v.into(), 0)),
            Tree::Decimal4(u, s) => Some((u.into(), s)),
            Tree::Decimal8(u, s) => Some((u.into(), s)),
            Tree::Decimal16(u, s) => Some((u, s)),
            _ => None,
        }
    }
}

fn pow10(n: u32) -> i128 {
    10i128.pow(n)
}

fn dec(unscaled: i128, scale: u8) -> VariantDecimal {
    VariantDecimal::try_new(unscaled, scale)
        .unwrap_or_else(|e| panic!("decimal {unscaled}e-{scale}: {e}"))
}

/// Digits of `|v|` (1 for zero).
fn digit_count(v: i128) -> u32 {
    v.unsigned_abs().checked_ilog10().map_or(1, |l| l + 1)
}

// ---------------------------------------------------------------------------
// Strategies for trees
// ---------------------------------------------------------------------------

/// Unscaled values of at most `max_digits` digits, with the extremes.
fn unscaled(max_digits: u32) -> impl Strategy<Value = i128> {
    let max = pow10(max_digits) - 1;
    prop_oneof![
        6 => (1..=max_digits, any::<u128>(), any::<bool>()).prop_map(|(digits, r, neg)| {
            let v = (r % 10u128.pow(digits)) as i128;
            if neg { -v } else { v }
        }),
        1 => Just(max),
        1 => Just(-max),
        1 => Just(0),
    ]
}

/// Strings from `chars` whose UTF-8 length is close to (at most) a target
/// near 63/64 bytes, where the short-string form ends.
fn near_short_string_limit() -> impl Strategy<Value = String> {
    (
        56usize..=72,
        prop::collection::vec(select(vec!['a', 'é', '€', '😀', '\0', '"']), 72),
    )
        .prop_map(|(target, chars)| {
            let mut s = String::new();
            for c in chars {
                if s.len() + c.len_utf8() > target {
                    break;
                }
                s.push(c);
            }
            s
        })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z]{0,8}",
        2 => "\\PC{0,12}",
        2 => near_short_string_limit(),
        1 => (62usize..=65).prop_map(|n| "x".repeat(n)),
        1 => "\\PC{60,100}",
    ]
}

/// Field names: short and colliding often, sometimes empty or non-ASCII.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-e]{0,2}",
        2 => "\\PC{0,4}",
        1 => near_short_string_limit(),
    ]
}

fn leaf() -> impl Strategy<Value = Tree> {
    prop_oneof![
        1 => Just(Tree::Null),
        1 => any::<bool>().prop_map(Tree::Bool),
        1 => any::<i8>().prop_map(Tree::Int8),
        1 => any::<i16>().prop_map(Tree::Int16),
        1 => any::<i32>().prop_map(Tree::Int32),
        1 => any::<i64>().prop_map(Tree::Int64),
        1 => any::<f32>().prop_map(Tree::Float),
        1 => any::<f64>().prop_map(Tree::Double),
        1 => (unscaled(9), 0u8..=38).prop_map(|(u, s)| Tree::Decimal4(u as i32, s)),
        1 => (unscaled(18), 0u8..=38).prop_map(|(u, s)| Tree::Decimal8(u as i64, s)),
        1 => (unscaled(38), 0u8..=38).prop_map(|(u, s)| Tree::Decimal16(u, s)),
        1 => any::<i32>().prop_map(Tree::Date),
        1 => prop_oneof![
            Just(0i64),
            Just(86_399_999_999),
            0i64..86_400_000_000
        ]
        .prop_map(Tree::Time),
        1 => any::<i64>().prop_map(Tree::TimestampMicros),
        1 => any::<i64>().prop_map(Tree::TimestampNtzMicros),
        1 => any::<i64>().prop_map(Tree::TimestampNanos),
        1 => any::<i64>().prop_map(Tree::TimestampNtzNanos),
        1 => prop::collection::vec(any::<u8>(), 0..80).prop_map(Tree::Binary),
        3 => text().prop_map(Tree::String),
        1 => any::<[u8; 16]>().prop_map(Tree::Uuid),
    ]
}

/// Objects with unique names given in random order.
fn object_of<S: Strategy<Value = Tree>>(value: S, max: usize) -> impl Strategy<Value = Tree> {
    prop::collection::btree_map(key(), value, 0..max)
        .prop_map(|m| m.into_iter().collect::<Vec<_>>())
        .prop_shuffle()
        .prop_map(Tree::Object)
}

/// Trees of nested objects and arrays up to `depth` deep.
fn tree_of_depth(depth: u32, size: u32) -> impl Strategy<Value = Tree> {
    leaf().prop_recursive(depth, size, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Tree::Array),
            object_of(inner, 8),
        ]
    })
}

fn tree() -> impl Strategy<Value = Tree> {
    tree_of_depth(4, 48)
}

// ---------------------------------------------------------------------------
// Writing a tree with the builder, checking a view against a tree
// ---------------------------------------------------------------------------

/// Writes `t` with the builder method of its exact type.
fn write(b: &mut VariantBuilder, t: &Tree) {
    match t {
        Tree::Null => b.null(),
        Tree::Bool(v) => b.bool(*v),
        Tree::Int8(v) => b.int8(*v),
        Tree::Int16(v) => b.int16(*v),
        Tree::Int32(v) => b.int32(*v),
        Tree::Int64(v) => b.int64(*v),
        Tree::Float(v) => b.float(*v),
        Tree::Double(v) => b.double(*v),
        Tree::Decimal4(u, s) => b.decimal4(dec((*u).into(), *s)),
        Tree::Decimal8(u, s) => b.decimal8(dec((*u).into(), *s)),
        Tree::Decimal16(u, s) => b.decimal16(dec(*u, *s)),
        Tree::Date(v) => b.date(*v),
        Tree::Time(v) => b.time_micros(*v).expect("time in range"),
        Tree::TimestampMicros(v) => b.timestamp_micros(*v),
        Tree::TimestampNtzMicros(v) => b.timestamp_ntz_micros(*v),
        Tree::TimestampNanos(v) => b.timestamp_nanos(*v),
        Tree::TimestampNtzNanos(v) => b.timestamp_ntz_nanos(*v),
        Tree::Binary(v) => b.binary(v),
        Tree::String(v) => b.string(v),
        Tree::Uuid(v) => b.uuid(*v),
        Tree::Object(fields) => {
            b.begin_object();
            for (k, v) in fields {
                b.key(k);
                write(b, v);
            }
            b.end_object().expect("unique keys");
        }
        Tree::Array(items) => {
            b.begin_array();
            for v in items {
                write(b, v);
            }
            b.end_array().expect("array closes");
        }
    }
}

fn build(t: &Tree) -> (Vec<u8>, Vec<u8>) {
    let mut b = VariantBuilder::new();
    write(&mut b, t);
    b.into_parts()
}

fn build_with(f: impl FnOnce(&mut VariantBuilder)) -> (Vec<u8>, Vec<u8>) {
    let mut b = VariantBuilder::new();
    f(&mut b);
    b.into_parts()
}

fn view<'a>(parts: &'a (Vec<u8>, Vec<u8>)) -> Result<VariantRef<'a>, TestCaseError> {
    VariantRef::try_new(&parts.0, &parts.1)
        .map_err(|e| TestCaseError::fail(format!("does not validate: {e}\n{parts:?}")))
}

/// The same primitive: exact type and bit-exact value.
fn same_primitive(t: &Tree, v: &VariantRef<'_>) -> bool {
    match (t, *v) {
        (Tree::Null, VariantRef::Null) => true,
        (Tree::Bool(a), VariantRef::Bool(b)) => *a == b,
        (Tree::Int8(a), VariantRef::Int8(b)) => *a == b,
        (Tree::Int16(a), VariantRef::Int16(b)) => *a == b,
        (Tree::Int32(a), VariantRef::Int32(b)) => *a == b,
        (Tree::Int64(a), VariantRef::Int64(b)) => *a == b,
        (Tree::Float(a), VariantRef::Float(b)) => a.to_bits() == b.to_bits(),
        (Tree::Double(a), VariantRef::Double(b)) => a.to_bits() == b.to_bits(),
        (Tree::Decimal4(u, s), VariantRef::Decimal4(d)) => {
            (i128::from(*u), *s) == (d.unscaled(), d.scale())
        }
        (Tree::Decimal8(u, s), VariantRef::Decimal8(d)) => {
            (i128::from(*u), *s) == (d.unscaled(), d.scale())
        }
        (Tree::Decimal16(u, s), VariantRef::Decimal16(d)) => (*u, *s) == (d.unscaled(), d.scale()),
        (Tree::Date(a), VariantRef::Date(b)) => *a == b,
        (Tree::Time(a), VariantRef::TimeNtzMicros(b)) => *a == b,
        (Tree::TimestampMicros(a), VariantRef::TimestampMicros(b)) => *a == b,
        (Tree::TimestampNtzMicros(a), VariantRef::TimestampNtzMicros(b)) => *a == b,
        (Tree::TimestampNanos(a), VariantRef::TimestampNanos(b)) => *a == b,
        (Tree::TimestampNtzNanos(a), VariantRef::TimestampNtzNanos(b)) => *a == b,
        (Tree::Binary(a), VariantRef::Binary(b)) => a.as_slice() == b,
        (Tree::String(a), VariantRef::String(b)) => a == b,
        (Tree::Uuid(a), VariantRef::Uuid(b)) => *a == b,
        _ => false,
    }
}

/// Checks that `v` is `t`: exact types, values, accessors, and containers
/// (object fields by name and in name order).
fn check(v: &VariantRef<'_>, t: &Tree, path: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(v.variant_type(), t.variant_type(), "type at {}", path);
    let same = *v;
    prop_assert!(*v == same, "not equal to itself at {}", path);

    // Accessors agree with the tree.
    prop_assert_eq!(v.is_null(), matches!(t, Tree::Null), "is_null at {}", path);
    let b = match t {
        Tree::Bool(b) => Some(*b),
        _ => None,
    };
    prop_assert_eq!(v.as_bool(), b, "as_bool at {}", path);
    let exact = t.exact();
    prop_assert_eq!(
        v.as_decimal().map(|d| (d.unscaled(), d.scale())),
        exact,
        "as_decimal at {}",
        path
    );
    let whole = exact.and_then(|(u, s)| {
        let p = pow10(s.into());
        (u % p == 0).then(|| i64::try_from(u / p).ok()).flatten()
    });
    prop_assert_eq!(v.as_i64(), whole, "as_i64 at {}", path);
    let float = match t {
        Tree::Double(x) => Some(x.to_bits()),
        Tree::Float(x) => Some(f64::from(*x).to_bits()),
        _ => None,
    };
    prop_assert_eq!(v.as_f64().map(f64::to_bits), float, "as_f64 at {}", path);
    let s = match t {
        Tree::String(s) => Some(s.as_str()),
        _ => None,
    };
    prop_assert_eq!(v.as_str(), s, "as_str at {}", path);
    let bin = match t {
        Tree::Binary(b) => Some(b.as_slice()),
        _ => None,
    };
    prop_assert_eq!(v.as_binary(), bin, "as_binary at {}", path);
    let date = match t {
        Tree::Date(d) => Some(*d),
        _ => None,
    };
    prop_assert_eq!(v.as_date(), date, "as_date at {}", path);
    let time = match t {
        Tree::Time(x) => Some(*x),
        _ => None,
    };
    prop_assert_eq!(v.as_time_micros(), time, "as_time_micros at {}", path);
    let exact_micros = |n: i64| (n % 1000 == 0).then_some(n / 1000);
    let (tz_micros, tz_nanos) = match t {
        Tree::TimestampMicros(x) => (Some(*x), x.checked_mul(1000)),
        Tree::TimestampNanos(x) => (exact_micros(*x), Some(*x)),
        _ => (None, None),
    };
    prop_assert_eq!(v.as_timestamp_micros(), tz_micros, "at {}", path);
    prop_assert_eq!(v.as_timestamp_nanos(), tz_nanos, "at {}", path);
    let (ntz_micros, ntz_nanos) = match t {
        Tree::TimestampNtzMicros(x) => (Some(*x), x.checked_mul(1000)),
        Tree::TimestampNtzNanos(x) => (exact_micros(*x), Some(*x)),
        _ => (None, None),
    };
    prop_assert_eq!(v.as_timestamp_ntz_micros(), ntz_micros, "at {}", path);
    prop_assert_eq!(v.as_timestamp_ntz_nanos(), ntz_nanos, "at {}", path);
    let uuid = match t {
        Tree::Uuid(u) => Some(*u),
        _ => None,
    };
    prop_assert_eq!(v.as_uuid(), uuid, "as_uuid at {}", path);

    match t {
        Tree::Object(fields) => {
            prop_assert!(v.as_array().is_none());
            let o = v
                .as_object()
                .ok_or_else(|| TestCaseError::fail(format!("not an object at {path}")))?;
            prop_assert_eq!(o.len(), fields.len(), "object size at {}", path);
            prop_assert_eq!(o.is_empty(), fields.is_empty());
            // By name.
            for (k, child) in fields {
                let field = o
                    .get(k)
                    .ok_or_else(|| TestCaseError::fail(format!("no field {k:?} at {path}")))?;
                check(&field, child, &format!("{path}.{k:?}"))?;
            }
            // In name order (unsigned bytes).
            let mut sorted: Vec<&(String, Tree)> = fields.iter().collect();
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            prop_assert_eq!(o.iter().len(), sorted.len());
            for (i, ((name, value), (k, child))) in o.iter().zip(&sorted).enumerate() {
                prop_assert_eq!(name, k.as_str(), "field {} at {}", i, path);
                prop_assert_eq!(o.field_name(i), k.as_str());
                prop_assert_eq!(o.index_of(k), Some(i));
                prop_assert_eq!(o.metadata().get(o.field_id(i)), Some(k.as_str()));
                check(&value, child, &format!("{path}[{i}]{k:?}"))?;
            }
            // Names that are not there.
            let last = sorted.last().map_or("", |f| f.0.as_str());
            let after_last = format!("{last}\u{0}");
            let absent = ["\u{10FFFF}\u{10FFFF}", after_last.as_str()];
            prop_assert!(
                absent.iter().all(|k| o.get(k).is_none()),
                "absent name found at {}",
                path
            );
        }
        Tree::Array(items) => {
            prop_assert!(v.as_object().is_none());
            let a = v
                .as_array()
                .ok_or_else(|| TestCaseError::fail(format!("not an array at {path}")))?;
            prop_assert_eq!(a.len(), items.len(), "array size at {}", path);
            prop_assert_eq!(a.is_empty(), items.is_empty());
            prop_assert_eq!(a.iter().len(), items.len());
            for (i, (element, item)) in a.iter().zip(items).enumerate() {
                check(&element, item, &format!("{path}[{i}]"))?;
                let got = a.get(i);
                prop_assert!(got.is_some_and(|g| g == element));
            }
            prop_assert!(a.get(items.len()).is_none());
        }
        _ => {
            prop_assert!(v.as_object().is_none() && v.as_array().is_none());
            prop_assert!(same_primitive(t, v), "{:?} read as {:?} at {}", t, v, path);
        }
    }
    Ok(())
}

/// `a == b` both ways.
fn assert_equal(a: &VariantRef<'_>, b: &VariantRef<'_>) -> Result<(), TestCaseError> {
    prop_assert!(a == b, "expected equal:\n{:?}\n{:?}", a, b);
    prop_assert!(b == a, "equality not symmetric:\n{:?}\n{:?}", b, a);
    Ok(())
}

fn assert_not_equal(a: &VariantRef<'_>, b: &VariantRef<'_>) -> Result<(), TestCaseError> {
    prop_assert!(a != b, "expected different:\n{:?}\n{:?}", a, b);
    prop_assert!(b != a, "inequality not symmetric:\n{:?}\n{:?}", b, a);
    Ok(())
}

fn count_nodes(t: &Tree) -> usize {
    1 + match t {
        Tree::Object(fields) => fields.iter().map(|(_, v)| count_nodes(v)).sum(),
        Tree::Array(items) => items.iter().map(count_nodes).sum(),
        _ => 0,
    }
}

/// `t` with its `k`-th node in pre-order replaced by a value of another
/// equivalence class (null, or `true` where it was null).
fn replace_node(t: &Tree, k: usize) -> Tree {
    fn go(t: &Tree, k: &mut usize) -> Tree {
        if *k == 0 {
            *k = usize::MAX;
            return match t {
                Tree::Null => Tree::Bool(true),
                _ => Tree::Null,
            };
        }
        *k = k.wrapping_sub(1);
        match t {
            Tree::Object(fields) => {
                Tree::Object(fields.iter().map(|(n, v)| (n.clone(), go(v, k))).collect())
            }
            Tree::Array(items) => Tree::Array(items.iter().map(|v| go(v, k)).collect()),
            _ => t.clone(),
        }
    }
    let mut k = k;
    go(t, &mut k)
}

// ---------------------------------------------------------------------------
// Property 1: tree -> builder -> view -> the same tree
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn builder_round_trips_trees(t in tree(), pick in any::<usize>()) {
        let parts = build(&t);
        let v = view(&parts)?;
        check(&v, &t, "$")?;

        // Copying the view into another builder keeps it.
        let mut b = VariantBuilder::new();
        b.append(&v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let copy = b.into_parts();
        let w = view(&copy)?;
        check(&w, &t, "$copy")?;
        assert_equal(&v, &w)?;

        // Replacing any one node, however deep, makes a different value.
        let changed = replace_node(&t, pick % count_nodes(&t));
        let changed = build(&changed);
        assert_not_equal(&v, &view(&changed)?)?;
    }

    #[test]
    fn int_picks_the_smallest_type(v in prop_oneof![
        any::<i64>(),
        any::<i8>().prop_map(i64::from),
        any::<i16>().prop_map(i64::from),
        any::<i32>().prop_map(i64::from),
        select(vec![
            0, -1, 127, 128, -128, -129, 32_767, 32_768, -32_768, -32_769,
            2_147_483_647, 2_147_483_648, -2_147_483_648, -2_147_483_649,
            i64::MAX, i64::MIN,
        ]),
    ]) {
        let expected = match v {
            -128..=127 => VariantType::Int8,
            -32_768..=32_767 => VariantType::Int16,
            -2_147_483_648..=2_147_483_647 => VariantType::Int32,
            _ => VariantType::Int64,
        };
        let parts = build_with(|b| b.int(v));
        let got = view(&parts)?;
        prop_assert_eq!(got.variant_type(), expected, "int({})", v);
        prop_assert_eq!(got.as_i64(), Some(v));
        let wide = build_with(|b| b.int64(v));
        assert_equal(&got, &view(&wide)?)?;
    }

    #[test]
    fn decimal_picks_the_smallest_type(u in unscaled(38), scale in prop_oneof![0u8..=38, 0u8..=10]) {
        let precision = digit_count(u).max(scale.into());
        let expected = match precision {
            0..=9 => VariantType::Decimal4,
            10..=18 => VariantType::Decimal8,
            _ => VariantType::Decimal16,
        };
        let parts = build_with(|b| b.decimal(dec(u, scale)));
        let got = view(&parts)?;
        prop_assert_eq!(got.variant_type(), expected, "decimal({}, {})", u, scale);
        let d = got.as_decimal().ok_or_else(|| TestCaseError::fail("not a decimal"))?;
        prop_assert_eq!((d.unscaled(), d.scale()), (u, scale));
        let wide = build_with(|b| b.decimal16(dec(u, scale)));
        assert_equal(&got, &view(&wide)?)?;
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn builder_reuse_after_reset_matches_a_fresh_builder(first in tree(), second in tree()) {
        let mut b = VariantBuilder::new();
        write(&mut b, &first);
        b.finish();
        b.reset();
        write(&mut b, &second);
        let (m, v) = b.finish();
        let fresh = build(&second);
        prop_assert_eq!((m, v), (fresh.0.as_slice(), fresh.1.as_slice()));
    }
}

// ---------------------------------------------------------------------------
// Property 2: a hand encoder with non-minimal but legal choices
// ---------------------------------------------------------------------------

/// Encoding choices drawn from bytes that proptest picks; all zeros (or no
/// bytes) means the minimal encoding the builder writes.
struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn next(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn flag(&mut self) -> bool {
        self.next() & 1 == 1
    }

    /// A width of at least `needed` bytes, at most 4.
    fn width(&mut self, needed: u8) -> u8 {
        needed + self.next() % (5 - needed)
    }

    /// A permutation of `0..n` (Fisher-Yates); the identity for zeros.
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = i - self.next() as usize % (i + 1);
            p.swap(i, j);
        }
        p
    }
}

/// Field names in first-use order, as the builder interns them.
fn collect_names(t: &Tree, out: &mut Vec<String>) {
    match t {
        Tree::Object(fields) => {
            for (k, v) in fields {
                if !out.contains(k) {
                    out.push(k.clone());
                }
                collect_names(v, out);
            }
        }
        Tree::Array(items) => items.iter().for_each(|v| collect_names(v, out)),
        _ => {}
    }
}

/// Encodes `t` by hand: the used names plus `extra` names (possibly
/// duplicates, which an unsorted dictionary may hold) in an order picked by
/// `choices`, which also pick widths, `is_large`, value order and string
/// forms.
fn hand_encode(t: &Tree, extra: &[String], choices: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut c = Choices {
        bytes: choices,
        at: 0,
    };
    let mut names = Vec::new();
    collect_names(t, &mut names);
    names.extend(extra.iter().cloned());
    let dict: Vec<String> = c
        .permutation(names.len())
        .into_iter()
        .map(|i| names[i].clone())
        .collect();

    let mut value = Vec::new();
    encode_value(t, &dict, &mut c, &mut value);

    let sorted = dict.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes());
    let sorted_flag = sorted && !c.flag();
    let names_len: usize = dict.iter().map(String::len).sum();
    let w = c.width(width_for(names_len.max(dict.len())));
    let mut metadata = vec![1 | (sorted_flag as u8) << 4 | (w - 1) << 6];
    push_uint(&mut metadata, dict.len(), w);
    push_uint(&mut metadata, 0, w);
    let mut end = 0;
    for name in &dict {
        end += name.len();
        push_uint(&mut metadata, end, w);
    }
    for name in &dict {
        metadata.extend_from_slice(name.as_bytes());
    }
    (metadata, value)
}

fn primitive(out: &mut Vec<u8>, id: u8, data: &[u8]) {
    out.push(id << 2);
    out.extend_from_slice(data);
}

fn encode_value(t: &Tree, dict: &[String], c: &mut Choices<'_>, out: &mut Vec<u8>) {
    match t {
        Tree::Null => primitive(out, 0, &[]),
        Tree::Bool(true) => primitive(out, 1, &[]),
        Tree::Bool(false) => primitive(out, 2, &[]),
        Tree::Int8(v) => primitive(out, 3, &v.to_le_bytes()),
        Tree::Int16(v) => primitive(out, 4, &v.to_le_bytes()),
        Tree::Int32(v) => primitive(out, 5, &v.to_le_bytes()),
        Tree::Int64(v) => primitive(out, 6, &v.to_le_bytes()),
        Tree::Double(v) => primitive(out, 7, &v.to_le_bytes()),
        Tree::Decimal4(u, s) => primitive(out, 8, &[&[*s][..], &u.to_le_bytes()].concat()),
        Tree::Decimal8(u, s) => primitive(out, 9, &[&[*s][..], &u.to_le_bytes()].concat()),
        Tree::Decimal16(u, s) => primitive(out, 10, &[&[*s][..], &u.to_le_bytes()].concat()),
        Tree::Date(v) => primitive(out, 11, &v.to_le_bytes()),
        Tree::TimestampMicros(v) => primitive(out, 12, &v.to_le_bytes()),
        Tree::TimestampNtzMicros(v) => primitive(out, 13, &v.to_le_bytes()),
        Tree::Float(v) => primitive(out, 14, &v.to_le_bytes()),
        Tree::Binary(v) => {
            primitive(out, 15, &(v.len() as u32).to_le_bytes());
            out.extend_from_slice(v);
        }
        Tree::String(s) => {
            if s.len() <= 63 && !c.flag() {
                out.push((s.len() as u8) << 2 | 1);
            } else {
                primitive(out, 16, &(s.len() as u32).to_le_bytes());
            }
            out.extend_from_slice(s.as_bytes());
        }
        Tree::Time(v) => primitive(out, 17, &v.to_le_bytes()),
        Tree::TimestampNanos(v) => primitive(out, 18, &v.to_le_bytes()),
        Tree::TimestampNtzNanos(v) => primitive(out, 19, &v.to_le_bytes()),
        Tree::Uuid(v) => primitive(out, 20, v),
        Tree::Object(fields) => {
            let n = fields.len();
            let children: Vec<Vec<u8>> = fields
                .iter()
                .map(|(_, v)| {
                    let mut child = Vec::new();
                    encode_value(v, dict, c, &mut child);
                    child
                })
                .collect();
            // Any dictionary entry with the name will do.
            let ids: Vec<usize> = fields
                .iter()
                .map(|(k, _)| {
                    let candidates: Vec<usize> =
                        (0..dict.len()).filter(|&i| dict[i] == *k).collect();
                    candidates[c.next() as usize % candidates.len()]
                })
                .collect();
            // Values stored in a shuffled order.
            let mut data = Vec::new();
            let mut offsets = vec![0; n];
            for i in c.permutation(n) {
                offsets[i] = data.len();
                data.extend_from_slice(&children[i]);
            }
            let mut by_name: Vec<usize> = (0..n).collect();
            by_name.sort_by(|&a, &b| fields[a].0.as_bytes().cmp(fields[b].0.as_bytes()));
            let id_size = c.width(width_for(ids.iter().copied().max().unwrap_or(0)));
            let offset_size = c.width(width_for(data.len()));
            let is_large = n > 255 || c.flag();
            out.push((is_large as u8) << 6 | (id_size - 1) << 4 | (offset_size - 1) << 2 | 2);
            push_uint(out, n, if is_large { 4 } else { 1 });
            for &i in &by_name {
                push_uint(out, ids[i], id_size);
            }
            for &i in &by_name {
                push_uint(out, offsets[i], offset_size);
            }
            push_uint(out, data.len(), offset_size);
            out.extend_from_slice(&data);
        }
        Tree::Array(items) => {
            let n = items.len();
            let mut data = Vec::new();
            let mut offsets = Vec::with_capacity(n + 1);
            for v in items {
                offsets.push(data.len());
                encode_value(v, dict, c, &mut data);
            }
            offsets.push(data.len());
            let offset_size = c.width(width_for(data.len()));
            let is_large = n > 255 || c.flag();
            out.push((is_large as u8) << 4 | (offset_size - 1) << 2 | 3);
            push_uint(out, n, if is_large { 4 } else { 1 });
            for o in offsets {
                push_uint(out, o, offset_size);
            }
            out.extend_from_slice(&data);
        }
    }
}

/// The hand encoding validates, equals the builder's and reads as `t`.
fn check_hand_encoding(t: &Tree, extra: &[String], choices: &[u8]) -> Result<(), TestCaseError> {
    let built = build(t);
    let expected = view(&built)?;
    let hand = hand_encode(t, extra, choices);
    let got = view(&hand)?;
    assert_equal(&got, &expected)?;
    check(&got, t, "$hand")?;
    prop_assert_eq!(
        variant_to_json_string(&got),
        variant_to_json_string(&expected)
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn reader_accepts_non_minimal_encodings(
        t in tree(),
        extra in prop::collection::vec(key(), 0..5),
        choices in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        check_hand_encoding(&t, &extra, &choices)?;
    }

    #[test]
    fn minimal_choices_give_the_builders_bytes(t in tree()) {
        let hand = hand_encode(&t, &[], &[]);
        let built = build(&t);
        prop_assert_eq!(hand, built);
    }
}

proptest! {
    #![proptest_config(config(16))]

    /// Containers with more than 255 elements (`is_large` required) and
    /// more than 256 names (2-byte field ids).
    #[test]
    fn wide_containers_round_trip(
        n in 250usize..300,
        values in prop::collection::vec(any::<i8>(), 300),
        choices in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let fields: Vec<(String, Tree)> = (0..n)
            .map(|i| (format!("k{}", (i * 7919) % n), Tree::Int8(values[i])))
            .collect();
        let items: Vec<Tree> = values[..n].iter().map(|&v| Tree::Int8(v)).collect();
        let t = Tree::Array(vec![Tree::Object(fields), Tree::Array(items)]);
        let parts = build(&t);
        check(&view(&parts)?, &t, "$")?;
        check_hand_encoding(&t, &[], &choices)?;
        prop_assert_eq!(hand_encode(&t, &[], &[]), parts);
    }
}

/// Offsets of 3 bytes: a container of more than 64 KiB.
#[test]
fn big_values_need_wide_offsets() {
    let blob: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
    let t = Tree::Object(vec![
        ("z".into(), Tree::Binary(blob.clone())),
        ("a".into(), Tree::String("x".repeat(70_000))),
        (
            "m".into(),
            Tree::Array(vec![Tree::Binary(blob), Tree::Int8(1)]),
        ),
    ]);
    let parts = build(&t);
    check(&view(&parts).unwrap(), &t, "$").unwrap();
    assert_eq!(hand_encode(&t, &[], &[]), parts);
    for choices in [vec![0xFF; 64], vec![1; 64], (0..64).collect::<Vec<u8>>()] {
        check_hand_encoding(&t, &["q".into(), "a".into()], &choices).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Property 3: JSON text -> Variant -> JSON text
// ---------------------------------------------------------------------------

/// Generated JSON: strings carry the per-character escape choices.
#[derive(Clone, Debug)]
enum GenJson {
    Null,
    Bool(bool),
    Number(String),
    String(String, Vec<u8>),
    Array(Vec<GenJson>),
    Object(Vec<(String, Vec<u8>, GenJson)>),
}

/// `n` digits, without a leading zero unless `n == 1`.
fn digits(n: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![2 => Just(0u8), 8 => 0u8..10], n).prop_map(|mut d| {
        if d.len() > 1 && d[0] == 0 {
            d[0] = 1;
        }
        d.iter().map(|d| char::from(b'0' + d)).collect()
    })
}

fn sign() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just(""), Just("-")]
}

/// Integers of 1 to 38 digits, and the edges of each integer type.
fn json_int() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (sign(), (1usize..=38).prop_flat_map(digits)).prop_map(|(s, d)| format!("{s}{d}")),
        2 => any::<i64>().prop_map(|v| v.to_string()),
        2 => select(vec![
            "0", "-0", "127", "-128", "128", "-129", "32768", "-32769",
            "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808",
            "9223372036854775808", "-9223372036854775809", "1000000000000000000",
            "99999999999999999999999999999999999999", "-99999999999999999999999999999999999999",
        ])
        .prop_map(String::from),
    ]
}

/// Numbers with a fraction and no exponent, at most 38 digits in all, often
/// with leading and trailing zeros ("-12.340", "0.000001").
fn json_decimal() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (1usize..=20)
            .prop_flat_map(|a| (sign(), digits(a), 1..=38 - a))
            .prop_flat_map(|(s, int, f)| {
                let frac = prop::collection::vec(prop_oneof![3 => Just(0u8), 7 => 0u8..10], f);
                (Just(s), Just(int), frac)
            })
            .prop_map(|(s, int, frac)| {
                let frac: String = frac.iter().map(|d| char::from(b'0' + d)).collect();
                format!("{s}{int}.{frac}")
            }),
        1 => (sign(), 0usize..=30, 1usize..=8, 0usize..=4).prop_flat_map(|(s, zeros, n, trailing)| {
            (Just(s), Just(zeros), digits(n), Just(trailing))
        })
        .prop_map(|(s, zeros, d, trailing)| {
            let mut text = format!("{s}0.{}{d}{}", "0".repeat(zeros), "0".repeat(trailing));
            // Keep the scale within 38.
            let dot = text.find('.').unwrap_or(0);
            text.truncate(dot + 1 + 38);
            text
        }),
        1 => select(vec!["-12.340", "1.50", "0.0", "-0.0", "432.0", "99999.9999", "999999.9999"])
            .prop_map(String::from),
    ]
}

/// Numbers with an exponent: these become doubles.
fn json_exponent() -> impl Strategy<Value = String> {
    (
        sign(),
        (1usize..=17).prop_flat_map(digits),
        prop::option::of((1usize..=10).prop_flat_map(digits)),
        select(vec!["e", "E"]),
        select(vec!["", "+", "-"]),
        0u32..=290,
        any::<bool>(),
    )
        .prop_map(|(s, int, frac, e, exp_sign, exp, pad)| {
            let frac = frac.map(|f| format!(".{f}")).unwrap_or_default();
            let zero = if pad { "0" } else { "" };
            format!("{s}{int}{frac}{e}{exp_sign}{zero}{exp}")
        })
}

fn json_number(exponents: bool) -> impl Strategy<Value = String> {
    let exponent_weight = if exponents { 2 } else { 0 };
    prop_oneof![3 => json_int(), 3 => json_decimal(), exponent_weight => json_exponent()]
}

/// Strings with the characters that need escapes, controls, non-ASCII and
/// astral characters (surrogate pairs when escaped).
fn json_text() -> impl Strategy<Value = String> {
    let special = select(vec![
        '"',
        '\\',
        '/',
        '\u{8}',
        '\u{c}',
        '\n',
        '\r',
        '\t',
        '\0',
        '\u{1f}',
        '\u{7f}',
        'é',
        '€',
        '\u{2028}',
        '\u{FFFF}',
        '😀',
        '\u{10FFFF}',
    ]);
    prop_oneof![
        3 => prop::collection::vec(
            prop_oneof![3 => any::<char>(), 3 => special, 4 => select(vec!['a', 'b', 'z', ' ', '0'])],
            0..12,
        )
        .prop_map(String::from_iter),
        1 => near_short_string_limit(),
    ]
}

fn escapes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

fn gen_json(exponents: bool) -> impl Strategy<Value = GenJson> {
    let leaf = prop_oneof![
        1 => Just(GenJson::Null),
        1 => any::<bool>().prop_map(GenJson::Bool),
        6 => json_number(exponents).prop_map(GenJson::Number),
        3 => (json_text(), escapes()).prop_map(|(s, e)| GenJson::String(s, e)),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(GenJson::Array),
            prop::collection::btree_map(json_text(), (escapes(), inner), 0..8)
                .prop_map(|m| {
                    m.into_iter()
                        .map(|(k, (e, v))| (k, e, v))
                        .collect::<Vec<_>>()
                })
                .prop_shuffle()
                .prop_map(GenJson::Object),
        ]
    })
}

/// Writes a JSON string, escaping each character as `escapes` choose
/// (cycled): raw where JSON allows it, a short escape, or `\uXXXX` in upper
/// or lower case hex (surrogate pairs beyond the BMP).
fn render_string(s: &str, escapes: &[u8], out: &mut String) {
    out.push('"');
    for (i, ch) in s.chars().enumerate() {
        let e = if escapes.is_empty() {
            0
        } else {
            escapes[i % escapes.len()]
        };
        let short = match ch {
            '"' => Some('"'),
            '\\' => Some('\\'),
            '/' => Some('/'),
            '\u{8}' => Some('b'),
            '\u{c}' => Some('f'),
            '\n' => Some('n'),
            '\r' => Some('r'),
            '\t' => Some('t'),
            _ => None,
        };
        let must_escape = ch == '"' || ch == '\\' || (ch as u32) < 0x20;
        match (e % 3, short) {
            (0, _) if !must_escape => out.push(ch),
            (1, Some(c)) => {
                out.push('\\');
                out.push(c);
            }
            _ => {
                for unit in ch.encode_utf16(&mut [0; 2]) {
                    if e & 4 == 0 {
                        let _ = write!(out, "\\u{unit:04x}");
                    } else {
                        let _ = write!(out, "\\u{unit:04X}");
                    }
                }
            }
        }
    }
    out.push('"');
}

/// Whitespace between tokens, as `ws` choose.
fn space(ws: &mut Choices<'_>, out: &mut String) {
    out.push_str(["", "", " ", "\n  ", "\t\r\n"][ws.next() as usize % 5]);
}

fn render(g: &GenJson, ws: &mut Choices<'_>, out: &mut String) {
    match g {
        GenJson::Null => out.push_str("null"),
        GenJson::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        GenJson::Number(n) => out.push_str(n),
        GenJson::String(s, e) => render_string(s, e, out),
        GenJson::Array(items) => {
            out.push('[');
            space(ws, out);
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    space(ws, out);
                }
                render(v, ws, out);
                space(ws, out);
            }
            out.push(']');
        }
        GenJson::Object(fields) => {
            out.push('{');
            space(ws, out);
            for (i, (k, e, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    space(ws, out);
                }
                render_string(k, e, out);
                space(ws, out);
                out.push(':');
                space(ws, out);
                render(v, ws, out);
                space(ws, out);
            }
            out.push('}');
        }
    }
}

/// A JSON text with whitespace between tokens; numbers with exponents only
/// if `exponents`.
fn json_document(exponents: bool) -> impl Strategy<Value = String> {
    (
        gen_json(exponents),
        prop::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(g, ws)| {
            let mut c = Choices { bytes: &ws, at: 0 };
            let mut out = String::new();
            space(&mut c, &mut out);
            render(&g, &mut c, &mut out);
            space(&mut c, &mut out);
            out
        })
}

/// Parsed JSON with numbers kept as their text.
#[derive(Clone, Debug)]
enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// A strict little JSON parser for the tests; panics on bad input.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn parse(text: &str) -> Json {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing text in {text:?}");
        v
    }

    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) {
        self.ws();
        assert_eq!(self.s.get(self.i), Some(&b), "at byte {}", self.i);
        self.i += 1;
    }

    fn value(&mut self) -> Json {
        self.ws();
        match self.s[self.i] {
            b'n' => self.word("null", Json::Null),
            b't' => self.word("true", Json::Bool(true)),
            b'f' => self.word("false", Json::Bool(false)),
            b'"' => Json::String(self.string()),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return Json::Array(items);
                }
                loop {
                    items.push(self.value());
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => {}
                        b']' => return Json::Array(items),
                        c => panic!("unexpected {:?} at byte {}", c as char, self.i - 1),
                    }
                }
            }
            b'{' => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return Json::Object(fields);
                }
                loop {
                    self.ws();
                    let k = self.string();
                    self.eat(b':');
                    fields.push((k, self.value()));
                    self.ws();
                    self.i += 1;
                    match self.s[self.i - 1] {
                        b',' => {}
                        b'}' => return Json::Object(fields),
                        c => panic!("unexpected {:?} at byte {}", c as char, self.i - 1),
                    }
                }
            }
            _ => {
                let start = self.i;
                while matches!(
                    self.s.get(self.i),
                    Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                ) {
                    self.i += 1;
                }
                assert!(self.i > start, "no value at byte {start}");
                Json::Number(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
            }
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Json {
        assert!(self.s[self.i..].starts_with(w.as_bytes()));
        self.i += w.len();
        v
    }

    fn hex4(&mut self) -> u32 {
        let h = std::str::from_utf8(&self.s[self.i..self.i + 4]).expect("hex digits");
        self.i += 4;
        u32::from_str_radix(h, 16).expect("hex digits")
    }

    fn string(&mut self) -> String {
        self.eat(b'"');
        let mut out = String::new();
        loop {
            let start = self.i;
            while !matches!(self.s[self.i], b'"' | b'\\') {
                assert!(self.s[self.i] >= 0x20, "raw control character");
                self.i += 1;
            }
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).expect("UTF-8"));
            if self.s[self.i] == b'"' {
                self.i += 1;
                return out;
            }
            self.i += 2;
            match self.s[self.i - 1] {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let high = self.hex4();
                    let code = if (0xD800..0xDC00).contains(&high) {
                        assert_eq!(&self.s[self.i..self.i + 2], b"\\u");
                        self.i += 2;
                        let low = self.hex4();
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        high
                    };
                    out.push(char::from_u32(code).expect("a char"));
                }
                c => panic!("bad escape {:?}", c as char),
            }
        }
    }
}

/// A number without exponent as (unscaled, scale); `-0` is `0`.
fn exact_number(text: &str) -> Option<(i128, u32)> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = format!("{int}{frac}");
    let unscaled: i128 = digits.parse().ok()?;
    Some((unscaled, frac.len() as u32))
}

/// Compares the original JSON with the round-tripped one: objects as maps
/// (the output must list names in ascending byte order), numbers by value.
fn same_json(original: &Json, back: &Json, path: &str) -> Result<(), TestCaseError> {
    match (original, back) {
        (Json::Null, Json::Null) => {}
        (Json::Bool(a), Json::Bool(b)) => prop_assert_eq!(a, b, "at {}", path),
        (Json::String(a), Json::String(b)) => prop_assert_eq!(a, b, "at {}", path),
        (Json::Number(a), Json::Number(b)) => {
            if a.contains(['e', 'E']) {
                let (x, y) = (a.parse::<f64>(), b.parse::<f64>());
                prop_assert!(
                    matches!((&x, &y), (Ok(x), Ok(y)) if x.to_bits() == y.to_bits()),
                    "number {} came back as {} at {}",
                    a,
                    b,
                    path
                );
            } else {
                prop_assert!(
                    !b.contains(['e', 'E']),
                    "{} came back as {} at {}",
                    a,
                    b,
                    path
                );
                let (x, y) = (exact_number(a), exact_number(b));
                prop_assert!(x.is_some(), "cannot read {} at {}", a, path);
                prop_assert_eq!(x, y, "number {} came back as {} at {}", a, b, path);
            }
        }
        (Json::Array(a), Json::Array(b)) => {
            prop_assert_eq!(a.len(), b.len(), "array size at {}", path);
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_json(x, y, &format!("{path}[{i}]"))?;
            }
        }
        (Json::Object(a), Json::Object(b)) => {
            prop_assert!(
                b.windows(2).all(|w| w[0].0.as_bytes() < w[1].0.as_bytes()),
                "names not in ascending order at {}",
                path
            );
            let mut sorted: Vec<&(String, Json)> = a.iter().collect();
            sorted.sort_by(|x, y| x.0.as_bytes().cmp(y.0.as_bytes()));
            prop_assert_eq!(sorted.len(), b.len(), "object size at {}", path);
            for ((ka, va), (kb, vb)) in sorted.into_iter().zip(b) {
                prop_assert_eq!(ka, kb, "names at {}", path);
                same_json(va, vb, &format!("{path}.{ka:?}"))?;
            }
        }
        _ => prop_assert!(false, "{:?} came back as {:?} at {}", original, back, path),
    }
    Ok(())
}

/// Equality where a double may have come back as an exact numeric of the
/// same value: JSON text has no double type, so `1e2` (a double) prints as
/// `100.0` and reads back as a decimal (and `-0e0` as `0.0`, without sign).
fn same_but_doubles(a: &VariantRef<'_>, b: &VariantRef<'_>) -> bool {
    match (*a, *b) {
        (VariantRef::Double(x), _) if b.as_decimal().is_some() => {
            b.as_decimal().is_some_and(|d| d.to_f64() == x)
        }
        (VariantRef::Object(x), VariantRef::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && same_but_doubles(&va, &vb))
        }
        (VariantRef::Array(x), VariantRef::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| same_but_doubles(&p, &q))
        }
        _ => a == b,
    }
}

fn to_variant(text: &str) -> Result<(Vec<u8>, Vec<u8>), TestCaseError> {
    json_to_variant(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn json_round_trips_by_value(text in json_document(true)) {
        // The generator writes valid JSON.
        prop_assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "bad generator: {}", text);
        let first = to_variant(&text)?;
        let v1 = view(&first)?;
        let out = variant_to_json_string(&v1);
        prop_assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "invalid JSON out: {}", out);
        same_json(&Parser::parse(&text), &Parser::parse(&out), "$")?;

        // write_json appends.
        let mut buf = b"prefix".to_vec();
        write_json(&v1, &mut buf);
        prop_assert_eq!(&buf[6..], out.as_bytes());

        // Round trip again: the text keeps its values (not always its
        // bytes: a double -0.0 prints as `-0.0`, which reads back as the
        // decimal 0.0 and prints as `0.0`), and the Variant is the same up
        // to doubles coming back as exact numerics.
        let second = to_variant(&out)?;
        let v2 = view(&second)?;
        let out2 = variant_to_json_string(&v2);
        same_json(&Parser::parse(&out), &Parser::parse(&out2), "$again")?;
        prop_assert!(same_but_doubles(&v1, &v2), "{}\n{:?}\n{:?}", out, v1, v2);
    }

    /// Without exponents, every number is exact and the second Variant is
    /// logically equal to the first.
    #[test]
    fn json_without_exponents_round_trips_to_an_equal_variant(text in json_document(false)) {
        let first = to_variant(&text)?;
        let v1 = view(&first)?;
        let out = variant_to_json_string(&v1);
        let second = to_variant(&out)?;
        assert_equal(&v1, &view(&second)?)?;
    }
}

// ---------------------------------------------------------------------------
// Property 4: logical equality
// ---------------------------------------------------------------------------

#[test]
fn int8_one_equals_decimal16_one_point_zero_zero_and_int64_one() {
    let int8 = build_with(|b| b.int8(1));
    let decimal16 = build_with(|b| b.decimal16(dec(100, 2)));
    let int64 = build_with(|b| b.int64(1));
    let all = [&int8, &decimal16, &int64].map(|p| view(p).unwrap());
    for a in &all {
        for b in &all {
            assert_eq!(a, b);
        }
    }
    let other = build_with(|b| b.decimal16(dec(101, 2)));
    assert_ne!(all[0], view(&other).unwrap());
}

/// Every exact numeric type that can hold `v * 10^scale` at `scale`.
fn exact_encodings(v: i64, scale: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    let unscaled = i128::from(v) * pow10(scale.into());
    let mut out = vec![
        build_with(|b| b.int(v)),
        build_with(|b| b.int64(v)),
        build_with(|b| b.decimal16(dec(unscaled, scale))),
        build_with(|b| b.decimal(dec(unscaled, scale))),
    ];
    if let Ok(x) = i8::try_from(v) {
        out.push(build_with(|b| b.int8(x)));
    }
    if let Ok(x) = i16::try_from(v) {
        out.push(build_with(|b| b.int16(x)));
    }
    if let Ok(x) = i32::try_from(v) {
        out.push(build_with(|b| b.int32(x)));
    }
    if i64::try_from(unscaled).is_ok() {
        out.push(build_with(|b| b.decimal8(dec(unscaled, scale))));
    }
    if i32::try_from(unscaled).is_ok() {
        out.push(build_with(|b| b.decimal4(dec(unscaled, scale))));
    }
    out
}

/// A string in the short form (< 64 bytes) or the long form.
fn string_value(s: &str, long: bool) -> (Vec<u8>, Vec<u8>) {
    let mut value = Vec::new();
    if long {
        value.push(16 << 2);
        value.extend_from_slice(&(s.len() as u32).to_le_bytes());
    } else {
        value.push((s.len() as u8) << 2 | 1);
    }
    value.extend_from_slice(s.as_bytes());
    (vec![0x01, 0, 0], value)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn exact_numerics_are_equal_across_types(
        v in prop_oneof![any::<i8>().prop_map(i64::from), any::<i32>().prop_map(i64::from), any::<i64>()],
        scale in 0u8..=18,
    ) {
        let parts = exact_encodings(v, scale);
        let views: Vec<VariantRef<'_>> = parts.iter().map(view).collect::<Result<_, _>>()?;
        for a in &views {
            for b in &views {
                assert_equal(a, b)?;
            }
        }
        // One unit in the last place more is a different number.
        let unscaled = i128::from(v) * pow10(scale.into());
        let next = build_with(|b| b.decimal16(dec(unscaled + 1, scale)));
        let next = view(&next)?;
        for a in &views {
            assert_not_equal(a, &next)?;
        }
        // Other classes never equal a number.
        let double = build_with(|b| b.double(v as f64));
        let string = build_with(|b| b.string(&v.to_string()));
        assert_not_equal(&views[0], &view(&double)?)?;
        assert_not_equal(&views[0], &view(&string)?)?;
    }

    #[test]
    fn timestamps_are_equal_across_units(
        micros in prop_oneof![
            -9_223_372_036_854_775i64..=9_223_372_036_854_775,
            any::<i64>(),
        ],
        nanos in any::<i64>(),
    ) {
        let tz_micros = build_with(|b| b.timestamp_micros(micros));
        let ntz_micros = build_with(|b| b.timestamp_ntz_micros(micros));
        let tz_micros = view(&tz_micros)?;
        let ntz_micros = view(&ntz_micros)?;
        assert_not_equal(&tz_micros, &ntz_micros)?;
        if let Some(n) = micros.checked_mul(1000) {
            let tz_nanos = build_with(|b| b.timestamp_nanos(n));
            let ntz_nanos = build_with(|b| b.timestamp_ntz_nanos(n));
            let tz_nanos = view(&tz_nanos)?;
            let ntz_nanos = view(&ntz_nanos)?;
            assert_equal(&tz_micros, &tz_nanos)?;
            assert_equal(&ntz_micros, &ntz_nanos)?;
            assert_not_equal(&tz_micros, &ntz_nanos)?;
            assert_not_equal(&ntz_micros, &tz_nanos)?;
            let off = build_with(|b| b.timestamp_nanos(n ^ 1));
            assert_not_equal(&tz_micros, &view(&off)?)?;
        }
        // Any pair: equal exactly when the instants are.
        let same = i128::from(micros) * 1000 == i128::from(nanos);
        let tz_nanos = build_with(|b| b.timestamp_nanos(nanos));
        let ntz_nanos = build_with(|b| b.timestamp_ntz_nanos(nanos));
        prop_assert_eq!(tz_micros == view(&tz_nanos)?, same);
        prop_assert_eq!(ntz_micros == view(&ntz_nanos)?, same);
        assert_not_equal(&view(&tz_nanos)?, &view(&ntz_nanos)?)?;
    }

    #[test]
    fn short_and_long_strings_are_equal(s in text(), other in text()) {
        let long = string_value(&s, true);
        let long = view(&long)?;
        prop_assert_eq!(long.as_str(), Some(s.as_str()));
        if s.len() <= 63 {
            let short = string_value(&s, false);
            let short = view(&short)?;
            assert_equal(&short, &long)?;
            prop_assert_eq!(short.variant_type(), VariantType::String);
        }
        let built = build_with(|b| b.string(&s));
        assert_equal(&view(&built)?, &long)?;
        // The builder uses the short form exactly below 64 bytes.
        prop_assert_eq!(built.1[0] & 0b11 == 1, s.len() <= 63);
        let binary = build_with(|b| b.binary(s.as_bytes()));
        assert_not_equal(&view(&binary)?, &long)?;
        if other != s {
            let other = string_value(&other, true);
            assert_not_equal(&view(&other)?, &long)?;
        }
    }

    #[test]
    fn object_equality_ignores_insertion_order(
        fields in prop::collection::btree_map(key(), tree_of_depth(2, 8), 0..8)
            .prop_map(|m| m.into_iter().collect::<Vec<_>>()),
        order in prop::collection::vec(any::<u8>(), 0..16),
        choices in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut shuffled = fields.clone();
        let permutation = Choices { bytes: &order, at: 0 }.permutation(shuffled.len());
        shuffled = permutation.into_iter().map(|i| fields[i].clone()).collect();
        let a = build(&Tree::Object(fields.clone()));
        let b = build(&Tree::Object(shuffled.clone()));
        let c = hand_encode(&Tree::Object(shuffled), &["zz".into()], &choices);
        let (a, b, c) = (view(&a)?, view(&b)?, view(&c)?);
        assert_equal(&a, &b)?;
        assert_equal(&a, &c)?;
        // A missing field or one more makes them different.
        if let Some((_, rest)) = fields.split_first() {
            let fewer = build(&Tree::Object(rest.to_vec()));
            assert_not_equal(&a, &view(&fewer)?)?;
        }
        let mut more = fields.clone();
        if !more.iter().any(|(k, _)| k == "extra!") {
            more.push(("extra!".into(), Tree::Null));
            let more = build(&Tree::Object(more));
            assert_not_equal(&a, &view(&more)?)?;
        }
    }
}
