//! Generators shared by the property tests.

use proptest::prelude::*;
use vshred::shred::ShreddingSchema;

pub const KEYS: &[&str] = &["a", "b", "c", "d"];

/// JSON text of a random value: keys from a small pool so that they meet
/// the schema's fields, numbers of every class, nesting.
pub fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|i| i.to_string()),
        (-1000i64..1000).prop_map(|i| i.to_string()),
        (-99999i64..99999, 0u32..4).prop_map(|(u, s)| decimal_text(u, s)),
        "-?[1-9][0-9]{18,37}",
        (-1e6f64..1e6).prop_map(|f| format!("{f:e}")),
        "[a-z\\u{e9}\"]{0,70}".prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::btree_map(prop::sample::select(KEYS), inner, 0..5).prop_map(
                |fields| {
                    let body: Vec<String> = fields
                        .into_iter()
                        .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
                        .collect();
                    format!("{{{}}}", body.join(","))
                }
            ),
        ]
    })
}

fn decimal_text(unscaled: i64, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale as usize + 1);
    let (int, frac) = padded.split_at(padded.len() - scale as usize);
    format!("{sign}{int}.{frac}")
}

pub fn schema() -> impl Strategy<Value = ShreddingSchema> {
    let leaf = prop_oneof![
        Just(ShreddingSchema::Variant),
        Just(ShreddingSchema::Boolean),
        Just(ShreddingSchema::Int8),
        Just(ShreddingSchema::Int32),
        Just(ShreddingSchema::Int64),
        Just(ShreddingSchema::Double),
        Just(ShreddingSchema::Decimal {
            precision: 9,
            scale: 1
        }),
        Just(ShreddingSchema::Decimal {
            precision: 18,
            scale: 2
        }),
        Just(ShreddingSchema::Decimal {
            precision: 38,
            scale: 0
        }),
        Just(ShreddingSchema::String),
        Just(ShreddingSchema::Date),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner
                .clone()
                .prop_map(|e| ShreddingSchema::Array(Box::new(e))),
            prop::collection::btree_map(prop::sample::select(KEYS), inner, 1..4).prop_map(
                |fields| {
                    ShreddingSchema::object(fields.into_iter().map(|(k, v)| (k.to_string(), v)))
                        .unwrap()
                }
            ),
        ]
    })
}
