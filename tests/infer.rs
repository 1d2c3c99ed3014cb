//! Schema inference: the `spark` preset against what Spark 4.3 infers (the
//! probe results of `spark-inference.md`), the default preset's rules, and
//! infer -> shred -> unshred round trips.

use std::sync::Arc;

use arrow::array::{Array, AsArray, StructArray};
use arrow::record_batch::RecordBatch;
use vshred::encode::{EncodeOptions, ShredMode, encode, infer_columns};
use vshred::infer::{InferOptions, LayoutPlan, Preset, SchemaInferrer, infer_schema};
use vshred::json::{json_to_variant, variant_to_json_string};
use vshred::parquet::{ColumnSpec, ParquetWriter, WriteOptions};
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::unshred::unshred;
use vshred::variant::{VariantBuilder, VariantDecimal, VariantRef};

/// Encoded rows: metadata and value of each.
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

fn parse(lines: &[String]) -> Rows {
    lines
        .iter()
        .map(|l| json_to_variant(l.as_bytes()).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn views(rows: &Rows) -> impl Iterator<Item = VariantRef<'_>> {
    rows.iter()
        .map(|(m, v)| VariantRef::try_new(m, v).expect("valid Variant"))
}

fn infer_rows(rows: &Rows, options: &InferOptions) -> String {
    infer_schema(views(rows), options).to_string()
}

fn spark(lines: &[String]) -> String {
    infer_rows(&parse(lines), &InferOptions::new(Preset::Spark))
}

fn ours(lines: &[String]) -> String {
    infer_rows(&parse(lines), &InferOptions::default())
}

/// `n` rows made by `row(i)`.
fn rows(n: usize, row: impl FnMut(usize) -> String) -> Vec<String> {
    (0..n).map(row).collect()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

// ---------------------------------------------------------------------------
// The spark preset: the rules and probe results of spark-inference.md.
// ---------------------------------------------------------------------------

#[test]
fn spark_table() {
    let field_in_first = |k: usize| {
        rows(100, move |i| {
            if i < k {
                format!(r#"{{"a": {i}, "b": "x"}}"#)
            } else {
                format!(r#"{{"a": {i}}}"#)
            }
        })
    };
    let one_odd = |common: &str, odd: &str| {
        let (common, odd) = (common.to_string(), odd.to_string());
        rows(100, move |i| {
            format!(r#"{{"a": {}}}"#, if i == 50 { &odd } else { &common })
        })
    };
    let mixed = |values: &[&str]| {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        rows(100, move |i| {
            format!(r#"{{"a": {}}}"#, values[i % values.len()])
        })
    };
    let table: Vec<(&str, Vec<String>, &str)> = vec![
        // Frequency: ceil(n / 10) of the non-null rows.
        (
            "9 of 100 rows: dropped",
            field_in_first(9),
            r#"{"a":"int64"}"#,
        ),
        (
            "10 of 100 rows: shredded",
            field_in_first(10),
            r#"{"a":"int64","b":"string"}"#,
        ),
        // Any conflict untypes the field.
        (
            "string 99% + int 1%",
            one_odd(r#""s""#, "7"),
            r#"{"a":"variant"}"#,
        ),
        (
            "decimal 99% + double 1%",
            one_odd("1.5", "1e3"),
            r#"{"a":"variant"}"#,
        ),
        ("int + double", mixed(&["1", "2.5e0"]), r#"{"a":"variant"}"#),
        ("bool + int", mixed(&["true", "1"]), r#"{"a":"variant"}"#),
        (
            "object 99% + int 1% drops the children",
            one_odd(r#"{"x": 1}"#, "5"),
            r#"{"a":"variant"}"#,
        ),
        (
            "object 99% + array 1%",
            one_odd(r#"{"x": 1}"#, "[1]"),
            r#"{"a":"variant"}"#,
        ),
        // Decimals: the largest scale and integer digits, padded to 18/38.
        (
            "int 7 + 1.5",
            mixed(&["7", "1.5"]),
            r#"{"a":"decimal(18,1)"}"#,
        ),
        (
            "1.5 + 1.25",
            mixed(&["1.5", "1.25"]),
            r#"{"a":"decimal(18,2)"}"#,
        ),
        (
            "seed-like 104.8 values",
            rows(100, |i| format!(r#"{{"a": {}.{}}}"#, 100 + i, i % 10)),
            r#"{"a":"decimal(18,1)"}"#,
        ),
        (
            "more than 18 digits",
            mixed(&["1234567890123456789.5", "1.5"]),
            r#"{"a":"decimal(38,1)"}"#,
        ),
        (
            "19-digit int + decimal",
            mixed(&["1234567890123456789", "1.5"]),
            r#"{"a":"decimal(38,1)"}"#,
        ),
        (
            "19-digit int + int",
            mixed(&["1234567890123456789", "5"]),
            r#"{"a":"int64"}"#,
        ),
        (
            "0.05 is DECIMAL(2,2)",
            mixed(&["0.05", "12.5"]),
            r#"{"a":"decimal(18,2)"}"#,
        ),
        (
            "decimals beyond 38 digits are untyped",
            mixed(&["12345678901234567890123456789012345678", "0.5"]),
            r#"{"a":"variant"}"#,
        ),
        // Nothing typed below: value only.
        (
            "empty object field",
            rows(100, |i| format!(r#"{{"a": {i}, "e": {{}}}}"#)),
            r#"{"a":"int64","e":"variant"}"#,
        ),
        (
            "all-null field",
            rows(100, |i| format!(r#"{{"a": {i}, "n": null}}"#)),
            r#"{"a":"int64","n":"variant"}"#,
        ),
        ("null + int", mixed(&["null", "3"]), r#"{"a":"int64"}"#),
        (
            "always-empty array: a LIST of value-only elements",
            rows(100, |i| format!(r#"{{"a": {i}, "t": []}}"#)),
            r#"{"a":"int64","t":["variant"]}"#,
        ),
        // Arrays.
        (
            "array of ints",
            mixed(&["[1, 2]", "[3]"]),
            r#"{"a":["int64"]}"#,
        ),
        (
            "mixed array",
            mixed(&[r#"[1, "a"]"#]),
            r#"{"a":["variant"]}"#,
        ),
        (
            "array of int and object",
            mixed(&[r#"[1, {"a": 1}]"#]),
            r#"{"a":["variant"]}"#,
        ),
        (
            "nested arrays",
            mixed(&["[[1], [2, 3]]"]),
            r#"{"a":[["int64"]]}"#,
        ),
        (
            "array of objects",
            mixed(&[r#"[{"x": 1, "y": "a"}, {"x": 2}]"#]),
            r#"{"a":[{"x":"int64","y":"string"}]}"#,
        ),
        // The top level.
        ("all-int rows", rows(100, |i| i.to_string()), r#""int64""#),
        (
            "all-string rows",
            rows(100, |i| format!(r#""s{i}""#)),
            r#""string""#,
        ),
        (
            "objects and ints",
            rows(100, |i| {
                if i % 2 == 0 {
                    format!(r#"{{"a": {i}}}"#)
                } else {
                    i.to_string()
                }
            }),
            r#""variant""#,
        ),
        (
            "top-level arrays",
            rows(100, |i| format!("[{i}, 1.5]")),
            r#"["decimal(18,1)"]"#,
        ),
        // Spark's build looks at the array element node before the
        // conflict: a root that is an array in some rows and an object in
        // others is typed as the array.
        (
            "objects and arrays at the root",
            rows(100, |i| {
                if i % 2 == 0 {
                    format!(r#"{{"a": {i}}}"#)
                } else {
                    format!("[{i}]")
                }
            }),
            r#"["int64"]"#,
        ),
        (
            "nested objects",
            rows(100, |i| {
                format!(r#"{{"v": {{"a": {i}, "n": {{"b": "x"}}}}}}"#)
            }),
            r#"{"v":{"a":"int64","n":{"b":"string"}}}"#,
        ),
    ];
    for (name, lines, expected) in table {
        assert_eq!(spark(&lines), expected, "{name}");
    }
}

#[test]
fn spark_counts_fields_in_array_elements_by_occurrence() {
    // 10 rows of 18 elements; one element of one row has `rare`: 1
    // occurrence of 181 passes the row-based threshold of 1.
    let lines = rows(10, |i| {
        let mut items: Vec<String> = (0..18).map(|k| format!(r#"{{"k": {k}}}"#)).collect();
        if i == 3 {
            items.push(r#"{"k": 0, "rare": true}"#.into());
        }
        format!(r#"{{"items": [{}]}}"#, items.join(","))
    });
    assert_eq!(
        spark(&lines),
        r#"{"items":[{"k":"int64","rare":"boolean"}]}"#
    );
    // Outside arrays a field counts once per row: 1 row of 10 is too few
    // even with many occurrences below it.
    let lines = rows(100, |i| {
        if i == 0 {
            r#"{"a": 1, "o": {"x": [1, 2, 3]}}"#.to_string()
        } else {
            r#"{"a": 1}"#.to_string()
        }
    });
    assert_eq!(spark(&lines), r#"{"a":"int64"}"#);
}

#[test]
fn spark_width_budget_is_spent_in_name_order() {
    let twelve = rows(100, |i| {
        let fields: Vec<String> = (0..12).map(|f| format!(r#""f{f:02}": {i}"#)).collect();
        format!("{{{}}}", fields.join(","))
    });
    let options = InferOptions::new(Preset::Spark).with_max_columns(10);
    assert_eq!(
        infer_rows(&parse(&twelve), &options),
        r#"{"f00":"int64","f01":"int64","f02":"int64","f03":"int64","f04":"variant"}"#
    );

    let wide = rows(20, |i| {
        let fields: Vec<String> = (0..400).map(|f| format!(r#""f{f:03}": {i}"#)).collect();
        format!("{{{}}}", fields.join(","))
    });
    let schema = infer_schema(views(&parse(&wide)), &InferOptions::new(Preset::Spark));
    let ShreddingSchema::Object(fields) = &schema else {
        panic!("an object: {schema}")
    };
    assert_eq!(fields.len(), 150);
    assert!(
        fields[..149]
            .iter()
            .all(|(_, f)| *f == ShreddingSchema::Int64)
    );
    assert_eq!(fields[149], ("f149".to_string(), ShreddingSchema::Variant));
    assert!(schema.leaf_count() <= 300);
}

/// Rows with one field of each type the JSON form cannot write.
fn typed_rows(n: usize) -> Rows {
    (0..n)
        .map(|i| {
            let i = i as i64;
            let mut b = VariantBuilder::new();
            b.begin_object();
            b.key("date");
            b.date(19_000 + (i % 30) as i32);
            b.key("ts");
            b.timestamp_micros(1_700_000_000_000_000 + (i % 60) * 1_000_000);
            b.key("ts_ntz");
            b.timestamp_ntz_micros(1_700_000_000_000_000 + (i % 60) * 1_000_000);
            b.key("ts_nanos");
            b.timestamp_nanos(1_700_000_000_000_000_000 + (i % 60) * 1_000_000_000);
            b.key("time");
            b.time_micros((i % 24) * 3_600_000_000)
                .expect("a time of day");
            b.key("float");
            b.float((i % 8) as f32 * 0.5);
            b.key("bin");
            b.binary(&[(i % 4) as u8; 24]);
            b.key("uuid");
            b.uuid([(i % 5) as u8; 16]);
            b.key("flag");
            b.bool(i % 3 == 0);
            b.end_object().expect("unique keys");
            b.into_parts()
        })
        .collect()
}

#[test]
fn spark_keeps_scalar_types_and_leaves_uuid_time_and_nanos_untyped() {
    assert_eq!(
        infer_rows(&typed_rows(100), &InferOptions::new(Preset::Spark)),
        r#"{"bin":"binary","date":"date","flag":"boolean","float":"float","time":"variant","ts":"timestamp","ts_nanos":"variant","ts_ntz":"timestamp_ntz","uuid":"variant"}"#
    );
}

#[test]
fn spark_samples_the_first_rows_and_skips_sql_nulls() {
    // A field first seen after row 4096 is not shredded.
    let lines = rows(5000, |i| {
        if i < 4096 {
            format!(r#"{{"a": {i}}}"#)
        } else {
            format!(r#"{{"a": {i}, "late": 1}}"#)
        }
    });
    assert_eq!(spark(&lines), r#"{"a":"int64"}"#);

    // SQL NULL rows take places in the sample but do not count: with 50
    // nulls in a sample of 100, 5 of the 50 values are enough.
    let parsed = parse(&rows(200, |i| {
        if i % 10 == 0 {
            format!(r#"{{"a": {i}, "b": 1}}"#)
        } else {
            format!(r#"{{"a": {i}}}"#)
        }
    }));
    let mut inferrer = SchemaInferrer::new(InferOptions::new(Preset::Spark).with_sample_rows(100));
    for _ in 0..50 {
        inferrer.add_null();
    }
    for v in views(&parsed) {
        inferrer.add(&v);
    }
    assert_eq!(inferrer.rows(), 100);
    assert!(inferrer.is_full());
    assert_eq!(
        inferrer.finish().to_string(),
        r#"{"a":"int64","b":"int64"}"#
    );
}

#[test]
fn spark_depth_limit() {
    let lines = rows(10, |i| format!(r#"{{"a": {{"b": {{"c": {i}}}}}, "x": 1}}"#));
    let parsed = parse(&lines);
    let at = |depth| {
        infer_rows(
            &parsed,
            &InferOptions::new(Preset::Spark).with_max_depth(depth),
        )
    };
    assert_eq!(at(50), r#"{"a":{"b":{"c":"int64"}},"x":"int64"}"#);
    assert_eq!(at(2), r#"{"a":{"b":"variant"},"x":"int64"}"#);
    assert_eq!(at(1), r#"{"a":"variant","x":"int64"}"#);
    assert_eq!(at(0), r#""variant""#);
}

// ---------------------------------------------------------------------------
// The default preset.
// ---------------------------------------------------------------------------

/// Seed-like rows: `{"id","ts","v":{f0..f9 int/string/decimal, nested}}`,
/// cardinality 1000 per field.
fn seed_lines(n: usize) -> Vec<String> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|i| {
            let mut f = Vec::new();
            for k in 0..10 {
                let x = rng.below(1000);
                f.push(match k % 3 {
                    0 => format!(r#""f{k}": {x}"#),
                    1 => format!(r#""f{k}": "s{x}""#),
                    _ => format!(r#""f{k}": {}.{}"#, x / 10 + 100, x % 10),
                });
            }
            format!(
                r#"{{"id": {i}, "ts": "2024-05-{:02}T{:02}:{:02}:00Z", "v": {{{}, "nested": {{"a": {}, "b": "n{}"}}}}}}"#,
                1 + i / 86_400,
                (i / 3600) % 24,
                (i / 60) % 60,
                f.join(", "),
                rng.below(1000),
                rng.below(1000)
            )
        })
        .collect()
}

#[test]
fn default_types_dense_seed_data_narrowly() {
    let lines = seed_lines(4096);
    // `id` is all distinct: alone, its dictionary would cost more than the
    // 3-5 bytes a row it saves, but with it every row is fully shredded
    // and leaves `value` null.
    assert_eq!(
        ours(&lines),
        concat!(
            r#"{"id":"int32","ts":"string","v":{"f0":"int32","f1":"string","f2":"decimal(4,1)","#,
            r#""f3":"int32","f4":"string","f5":"decimal(4,1)","f6":"int32","f7":"string","#,
            r#""f8":"decimal(4,1)","f9":"int32","nested":{"a":"int32","b":"string"}}}"#
        )
    );
    assert_eq!(
        spark(&lines),
        concat!(
            r#"{"id":"int64","ts":"string","v":{"f0":"int64","f1":"string","f2":"decimal(18,1)","#,
            r#""f3":"int64","f4":"string","f5":"decimal(18,1)","f6":"int64","f7":"string","#,
            r#""f8":"decimal(18,1)","f9":"int64","nested":{"a":"int64","b":"string"}}}"#
        )
    );
}

#[test]
fn default_types_by_majority() {
    let mut rng = Rng::new(1);
    // int in 97% of rows, string in 3%; a 1% double among decimals.
    let lines = rows(4096, |i| {
        let a = if i % 100 < 97 {
            (i % 500).to_string()
        } else {
            format!(r#""n/a {i}""#)
        };
        let d = if i % 100 == 0 {
            "1e3".to_string()
        } else {
            format!("{}.{}", i % 300, i % 7)
        };
        format!(r#"{{"a": {a}, "d": {d}}}"#)
    });
    assert_eq!(ours(&lines), r#"{"a":"int32","d":"decimal(4,1)"}"#);
    assert_eq!(spark(&lines), r#"{"a":"variant","d":"variant"}"#);

    // A 60/40 field is polymorphic: untyped (and, untyped, not worth a
    // value-only column) unless the share is lowered.
    let lines = rows(4096, |i| {
        let x = rng.below(50);
        if rng.chance(0.6) {
            format!(r#"{{"kind": {}, "p": {x}}}"#, i % 4)
        } else {
            format!(r#"{{"kind": {}, "p": "v{x}"}}"#, i % 4)
        }
    });
    let parsed = parse(&lines);
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default()),
        r#"{"kind":"int32"}"#
    );
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default().with_min_type_share(0.5)),
        r#"{"kind":"int32","p":"int32"}"#
    );
}

#[test]
fn default_chooses_narrow_types() {
    let lines = rows(4096, |i| {
        let big = 3_000_000_000u64 + (i % 100) as u64;
        // Scale 1 in 80% of rows, scale 2 in 20%: the majority scale.
        let d = if i % 5 == 0 {
            format!("{}.{:02}", i % 50, i % 100)
        } else {
            format!("{}.{}", i % 1000, i % 10)
        };
        format!(
            r#"{{"big": {big}, "d": {d}, "small": {}, "neg": -{}}}"#,
            i % 100,
            i % 300
        )
    });
    assert_eq!(
        ours(&lines),
        r#"{"big":"int64","d":"decimal(4,1)","neg":"int32","small":"int32"}"#
    );
    assert_eq!(
        spark(&lines),
        r#"{"big":"int64","d":"decimal(18,2)","neg":"int64","small":"int64"}"#
    );
}

/// Rows of a record with maps: `labels` keyed by language code (English
/// plus 3 of 100 others), `deps` keyed by package name, `votes` keyed by
/// small ids.
fn map_lines(n: usize) -> Vec<String> {
    let mut rng = Rng::new(3);
    let langs: Vec<String> = (0..100)
        .map(|k| {
            let b = [b'a' + (k / 26) as u8, b'a' + (k % 26) as u8];
            String::from_utf8(b.to_vec()).expect("ASCII")
        })
        .collect();
    (0..n)
        .map(|i| {
            let mut labels = vec![format!(r#""en": "label {}""#, i % 50)];
            for _ in 0..3 {
                let lang = &langs[rng.below(100) as usize];
                if lang != "en" && !labels.iter().any(|l| l.starts_with(&format!("\"{lang}\""))) {
                    labels.push(format!(r#""{lang}": "label {}""#, i % 40));
                }
            }
            let packages: std::collections::BTreeSet<u64> = (0..4).map(|_| rng.below(500)).collect();
            let deps: Vec<String> = packages
                .iter()
                .map(|p| format!(r#""pkg-{p}": "^1.{}.0""#, rng.below(5)))
                .collect();
            let mut votes = Vec::new();
            for k in 1..=8 {
                if rng.chance(0.5) {
                    votes.push(format!(r#""{}": {}"#, 1000 + k, rng.below(5)));
                }
            }
            format!(
                r#"{{"id": {i}, "kind": "k{}", "labels": {{{}}}, "deps": {{{}}}, "votes": {{{}}}}}"#,
                i % 4,
                labels.join(", "),
                deps.join(", "),
                votes.join(", ")
            )
        })
        .collect()
}

#[test]
fn default_leaves_maps_in_value() {
    let lines = map_lines(4096);
    // The row number `id` is a column of deltas; the maps get none.
    assert_eq!(ours(&lines), r#"{"id":"int32","kind":"string"}"#);
    // Spark makes columns of the keys that happen to clear 10%.
    let spark = spark(&lines);
    assert!(spark.contains(r#""labels":{"en":"string"}"#), "{spark}");
    assert!(spark.contains(r#""votes":{"1001":"int64""#), "{spark}");
}

#[test]
fn default_types_records_with_a_tail_of_rare_fields() {
    // Not a map: most key occurrences are of the common fields.
    let mut rng = Rng::new(17);
    let lines = rows(4096, |i| {
        let mut fields = vec![
            format!(r#""status": "s{}""#, i % 5),
            format!(r#""code": {}"#, 200 + i % 3),
        ];
        for k in 0..40 {
            if rng.chance(0.02) {
                fields.push(format!(r#""x-custom-{k}": "v""#));
            }
        }
        format!(r#"{{"headers": {{{}}}}}"#, fields.join(", "))
    });
    assert_eq!(
        ours(&lines),
        r#"{"headers":{"code":"int32","status":"string"}}"#
    );
}

/// Webhook-like sparse rows: an event type and a delivery id in every row,
/// and 40 optional fields each in 10-15% of rows, with values of high
/// cardinality (ids, URLs, timestamps, hashes).
fn sparse_lines(n: usize) -> Vec<String> {
    let mut rng = Rng::new(11);
    (0..n)
        .map(|i| {
            let mut fields = vec![
                format!(r#""action": "{}""#, ["opened", "closed", "edited"][i % 3]),
                format!(r#""delivery": {}"#, 5_000_000 + i),
            ];
            for k in 0..40 {
                if rng.chance(0.10 + 0.05 * (k as f64 / 40.0)) {
                    fields.push(match k % 4 {
                        0 => format!(r#""opt{k:02}": {}"#, rng.below(1_000_000_000)),
                        1 => format!(
                            r#""opt{k:02}": "https://api.example.com/repos/o{}/r{}""#,
                            rng.below(100_000),
                            rng.below(1000)
                        ),
                        2 => format!(
                            r#""opt{k:02}": "2024-0{}-{:02}T{:02}:{:02}:{:02}Z""#,
                            1 + rng.below(9),
                            1 + rng.below(28),
                            rng.below(24),
                            rng.below(60),
                            rng.below(60)
                        ),
                        _ => format!(r#""opt{k:02}": "{:016x}""#, rng.next()),
                    });
                }
            }
            format!("{{{}}}", fields.join(", "))
        })
        .collect()
}

/// Sparse rows like [`sparse_lines`] whose optional fields have small
/// domains (a few ints, strings, booleans, short decimals): dictionary
/// indices of a few bits replace 3-8 bytes, so these do pay.
fn small_domain_sparse_lines(n: usize) -> Vec<String> {
    let mut rng = Rng::new(13);
    (0..n)
        .map(|i| {
            let mut fields = vec![format!(r#""action": "{}""#, ["opened", "closed"][i % 2])];
            for k in 0..40 {
                if rng.chance(0.10 + 0.05 * (k as f64 / 40.0)) {
                    fields.push(match k % 4 {
                        0 => format!(r#""opt{k:02}": {}"#, rng.below(100)),
                        1 => format!(
                            r#""opt{k:02}": "{}""#,
                            ["ok", "failed", "skipped"][rng.below(3) as usize]
                        ),
                        2 => format!(r#""opt{k:02}": {}"#, rng.chance(0.5)),
                        _ => format!(r#""opt{k:02}": {}.{}"#, rng.below(100), rng.below(10)),
                    });
                }
            }
            format!("{{{}}}", fields.join(", "))
        })
        .collect()
}

#[test]
fn sparse_fields_pay_as_plain_or_delta_columns_and_spark_shreds_them_all() {
    let lines = sparse_lines(4096);
    let parsed = parse(&lines);
    // Distinct values cost a dictionary nothing but indices on top of the
    // values; written plain, or as deltas that drop the prefix a URL or a
    // timestamp shares with the one before, most optional fields pay.
    let ours = infer_schema(views(&parsed), &InferOptions::default());
    let ShreddingSchema::Object(fields) = &ours else {
        panic!("an object: {ours}")
    };
    assert!(fields.len() > 30, "{ours}");
    // And the file is smaller for them, before and after compression,
    // than with the two fields every row has.
    let plan = |schema: &str| {
        let mut inferrer = SchemaInferrer::new(InferOptions::default());
        views(&parsed).for_each(|v| inferrer.add(&v));
        let full = inferrer.plan();
        let schema: ShreddingSchema = schema.parse().unwrap();
        LayoutPlan {
            leaves: full
                .leaves
                .into_iter()
                .filter(|leaf| {
                    schema
                        .to_string()
                        .contains(&format!("\"{}\"", leaf.path[1]))
                })
                .collect(),
            schema,
        }
    };
    let every_row = plan(r#"{"action":"string","delivery":"int32"}"#);
    let ours = plan(&ours.to_string());
    for zstd in [false, true] {
        let size = |plan: &LayoutPlan| {
            parquet_size(shred(&parsed, &plan.schema, Preset::Default), plan, zstd)
        };
        let (ours, every_row) = (size(&ours), size(&every_row));
        assert!(ours < every_row, "zstd {zstd}: {ours} >= {every_row}");
    }
    // Spark shreds every optional field that reached 10% in the sample.
    let spark = infer_schema(views(&parsed), &InferOptions::new(Preset::Spark));
    assert!(spark.leaf_count() > 1 + 2 * 35, "{spark}");

    // The same presence with small domains: most of them pay.
    let parsed = parse(&small_domain_sparse_lines(4096));
    let ours = infer_schema(views(&parsed), &InferOptions::default());
    let ShreddingSchema::Object(fields) = &ours else {
        panic!("an object: {ours}")
    };
    assert!(fields.len() > 15, "{ours}");
}

#[test]
fn default_types_objects_that_are_sometimes_arrays() {
    let lines = rows(4096, |i| {
        let geo = if i % 10 == 0 {
            format!("[{}.5, {}.25]", i % 90, i % 180)
        } else {
            format!(r#"{{"lat": {}.5, "lon": {}.25}}"#, i % 90, i % 180)
        };
        format!(r#"{{"id": {i}, "geo": {geo}}}"#)
    });
    assert_eq!(
        ours(&lines),
        r#"{"geo":{"lat":"decimal(3,1)","lon":"decimal(5,2)"},"id":"int32"}"#
    );
    assert_eq!(spark(&lines), r#"{"geo":"variant","id":"int64"}"#);
}

#[test]
fn default_types_nested_arrays_of_varying_depth_by_level() {
    let lines = rows(4096, |i| {
        let (a, b) = (i % 100, (i * 7) % 100);
        let coords = match i % 10 {
            0 => format!("[{a}, {b}]"),
            1 => format!("[[[{a}, {b}]]]"),
            _ => format!("[[{a}, {b}], [{b}, {a}], [{a}, {a}]]"),
        };
        format!(r#"{{"id": {i}, "coords": {coords}}}"#)
    });
    assert_eq!(ours(&lines), r#"{"coords":[["int32"]],"id":"int32"}"#);
    assert_eq!(spark(&lines), r#"{"coords":["variant"],"id":"int64"}"#);
}

#[test]
fn default_never_makes_value_only_columns() {
    let lines = rows(4096, |i| {
        format!(
            r#"{{"kind": "k{}", "empty": {{}}, "none": null, "both": {}, "t": []}}"#,
            i % 4,
            if i % 2 == 0 {
                "1".to_string()
            } else {
                format!(r#""{i}""#)
            }
        )
    });
    assert_eq!(ours(&lines), r#"{"kind":"string"}"#);
    assert_eq!(
        spark(&lines),
        r#"{"both":"variant","empty":"variant","kind":"string","none":"variant","t":["variant"]}"#
    );
}

/// Every faithful scalar class is typed but those Spark 4.3's reader
/// refuses a file for (UUID, TIME, nanosecond timestamps), which stay in
/// `value`; a layout given may still ask for them.
#[test]
fn default_types_every_faithful_scalar_class_that_spark_reads() {
    assert_eq!(
        infer_rows(&typed_rows(4096), &InferOptions::default()),
        concat!(
            r#"{"bin":"binary","date":"date","flag":"boolean","float":"float","#,
            r#""ts":"timestamp","ts_ntz":"timestamp_ntz"}"#
        )
    );
}

#[test]
fn default_keeps_the_most_valuable_columns_within_the_width() {
    // `z*`: long strings from a small domain (dictionary encoded, they save
    // ~40 bytes a row); `a*`: small ints (they save ~3).
    let lines = rows(4096, |i| {
        format!(
            r#"{{"a1": {}, "a2": {}, "z1": "a rather long category name number {}", "z2": "another long category name, number {}"}}"#,
            i % 100,
            i % 90,
            i % 10,
            i % 12
        )
    });
    let parsed = parse(&lines);
    let with = |columns| infer_rows(&parsed, &InferOptions::default().with_max_columns(columns));
    assert_eq!(
        with(300),
        r#"{"a1":"int32","a2":"int32","z1":"string","z2":"string"}"#
    );
    assert_eq!(with(5), r#"{"z1":"string","z2":"string"}"#);
    assert_eq!(with(4), r#"{"z2":"string"}"#);
    assert_eq!(with(2), r#""variant""#);
    // Spark charges fields in name order.
    assert_eq!(
        infer_rows(
            &parsed,
            &InferOptions::new(Preset::Spark).with_max_columns(5)
        ),
        r#"{"a1":"int64","a2":"int64"}"#
    );

    // Nested: the budget counts the enclosing groups.
    let lines = rows(4096, |i| {
        format!(
            r#"{{"n": {{"x": "a rather long category name number {}", "y": {}}}, "k": {}}}"#,
            i % 10,
            i % 100,
            i % 100
        )
    });
    let parsed = parse(&lines);
    let schema = infer_schema(views(&parsed), &InferOptions::default().with_max_columns(4));
    assert_eq!(schema.to_string(), r#"{"n":{"x":"string"}}"#);
    assert_eq!(schema.leaf_count(), 4);
}

#[test]
fn default_depth_and_sample_limits() {
    let lines = rows(4096, |i| {
        format!(
            r#"{{"a": {{"b": {{"c": {}}}}}, "x": {}}}"#,
            i % 100,
            i % 100
        )
    });
    let parsed = parse(&lines);
    let at = |depth| infer_rows(&parsed, &InferOptions::default().with_max_depth(depth));
    assert_eq!(at(50), r#"{"a":{"b":{"c":"int32"}},"x":"int32"}"#);
    assert_eq!(at(3), r#"{"a":{"b":{"c":"int32"}},"x":"int32"}"#);
    assert_eq!(at(2), r#"{"x":"int32"}"#);
    assert_eq!(at(0), r#""variant""#);

    // Only the first `sample_rows` rows count.
    let lines = rows(6000, |i| {
        if i < 3000 {
            format!(r#"{{"x": {}}}"#, i % 100)
        } else {
            format!(r#"{{"x": {}, "late": "category {}"}}"#, i % 100, i % 3)
        }
    });
    let parsed = parse(&lines);
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default().with_sample_rows(3000)),
        r#"{"x":"int32"}"#
    );
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default().with_sample_rows(6000)),
        r#"{"late":"string","x":"int32"}"#
    );
}

#[test]
fn default_respects_the_minimum_frequency() {
    // Long strings in 8% of rows would pay, but are too rare.
    let lines = rows(4096, |i| {
        if i % 25 < 2 {
            format!(
                r#"{{"x": {}, "rare": "a long repeated text that is worth a column {}"}}"#,
                i % 100,
                i % 2
            )
        } else {
            format!(r#"{{"x": {}}}"#, i % 100)
        }
    });
    let parsed = parse(&lines);
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default()),
        r#"{"x":"int32"}"#
    );
    assert_eq!(
        infer_rows(&parsed, &InferOptions::default().with_min_frequency(0.05)),
        r#"{"rare":"string","x":"int32"}"#
    );
}

#[test]
fn empty_samples_infer_no_typed_column() {
    for preset in [Preset::Default, Preset::Spark] {
        let schema = infer_schema(std::iter::empty(), &InferOptions::new(preset));
        assert_eq!(schema, ShreddingSchema::Variant, "{preset:?}");
    }
}

// ---------------------------------------------------------------------------
// Sizes: the default never makes the column larger than not shredding.
// ---------------------------------------------------------------------------

/// Shreds `rows` with `schema` under `preset`'s policy.
fn shred(rows: &Rows, schema: &ShreddingSchema, preset: Preset) -> StructArray {
    let mut shredder = Shredder::new(schema).with_policy(preset.policy());
    for (m, v) in rows {
        shredder.append_variant(m, v).expect("valid Variant");
    }
    shredder.finish()
}

/// The size of a Parquet file holding `column` with layout `plan`,
/// uncompressed or with zstd, as our writer writes it: with the encodings
/// the plan priced, which are what the cost model counts on.
fn parquet_size(column: StructArray, plan: &LayoutPlan, zstd: bool) -> usize {
    let columns = [ColumnSpec::Variant {
        name: "v".into(),
        schema: plan.schema.clone(),
    }];
    let options = WriteOptions {
        compression: if zstd {
            vshred::parquet::Compression::default()
        } else {
            vshred::parquet::Compression::None
        },
        row_group_rows: usize::MAX,
        leaf_encodings: plan
            .leaves
            .iter()
            .map(|leaf| {
                let path = std::iter::once("v".to_string()).chain(leaf.path.iter().cloned());
                (path.collect(), leaf.encoding)
            })
            .collect(),
        ..WriteOptions::default()
    };
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("v.parquet");
    let mut writer = ParquetWriter::create(&path, &columns, &options).expect("writer");
    let batch =
        RecordBatch::try_new(writer.schema().clone(), vec![Arc::new(column)]).expect("a batch");
    writer.write(&batch).expect("write");
    writer.finish().expect("finish").bytes as usize
}

/// Sizes of the column unshredded, with the default schema and with
/// Spark's, in Parquet files uncompressed and with zstd.
fn sizes(lines: &[String]) -> [(usize, usize, usize); 2] {
    let rows = parse(lines);
    let plan = |preset| {
        let mut inferrer = SchemaInferrer::new(InferOptions::new(preset));
        views(&rows).for_each(|v| inferrer.add(&v));
        inferrer.plan()
    };
    let unshredded = LayoutPlan::from(ShreddingSchema::Variant);
    let (ours, spark) = (plan(Preset::Default), plan(Preset::Spark));
    let column = |plan: &LayoutPlan, preset| shred(&rows, &plan.schema, preset);
    let columns = [
        (column(&unshredded, Preset::Default), &unshredded),
        (column(&ours, Preset::Default), &ours),
        (column(&spark, Preset::Spark), &spark),
    ];
    [false, true].map(|zstd| {
        let [plain, ours, spark] = columns
            .each_ref()
            .map(|(c, plan)| parquet_size(c.clone(), plan, zstd));
        (plain, ours, spark)
    })
}

#[test]
fn default_shredding_is_never_larger_than_none() {
    for (name, lines) in [
        ("sparse", sparse_lines(20_000)),
        ("small-domain sparse", small_domain_sparse_lines(20_000)),
        ("seed", seed_lines(20_000)),
        ("maps", map_lines(20_000)),
    ] {
        let [raw, zstd] = sizes(&lines);
        for ((plain, ours, spark), how) in [(raw, "uncompressed"), (zstd, "zstd")] {
            assert!(
                ours <= plain,
                "{name}, {how}: default {ours} > unshredded {plain}"
            );
            if name == "seed" {
                assert!(
                    ours < plain * 3 / 4,
                    "{name}, {how}: default {ours} vs {plain}"
                );
                assert!(
                    spark < plain * 3 / 4,
                    "{name}, {how}: Spark {spark} vs {plain}"
                );
            }
        }
    }
}

/// Rows of `keys` integer fields `k0`, `k1`, ..., the same in every row.
fn wide_lines(n: usize, keys: usize) -> String {
    let mut rng = Rng::new(11);
    (0..n)
        .map(|_| {
            let fields: Vec<String> = (0..keys)
                .map(|k| format!(r#""k{k}":{}"#, rng.below(1000)))
                .collect();
            format!("{{{}}}\n", fields.join(","))
        })
        .collect()
}

/// The layout `encode` chose for the whole lines of `text`, and the size
/// of the file it wrote.
fn encoded(text: &str, shred: ShredMode) -> (ShreddingSchema, u64) {
    let options = EncodeOptions {
        shred,
        ..EncodeOptions::default()
    };
    encoded_with(text, &options)
}

#[test]
fn issue_11_wide_rows_used_as_a_map_are_not_shredded_into_a_larger_file() {
    // More keys than are tracked per object: a map, by our rules. Spark's
    // layout shreds the first keys by name; measured as the sample's
    // Variants re-encoded it looked 5% smaller than unshredded and was
    // taken, but the file `encode` writes with it is larger.
    let text = wide_lines(100, 2000);
    let (auto, auto_bytes) = encoded(&text, ShredMode::Infer(InferOptions::default()));
    let (_, none_bytes) = encoded(&text, ShredMode::None);
    let (spark, spark_bytes) = encoded(&text, ShredMode::Infer(InferOptions::new(Preset::Spark)));
    assert!(spark.leaf_count() > 100, "{spark}");
    assert!(
        spark_bytes > none_bytes,
        "spark {spark_bytes}, none {none_bytes}"
    );
    assert!(
        auto == ShreddingSchema::Variant,
        "auto: {} leaves, {auto_bytes} bytes; unshredded {none_bytes}",
        auto.leaf_count()
    );
    assert_eq!(auto_bytes, none_bytes);
}

/// Rows of 120 fields whose values repeat from row to row, and an `id`.
fn templated_lines(n: usize) -> String {
    let fields: Vec<String> = (0..120)
        .map(|k| format!(r#""field{k}":"constant text number {k}""#))
        .collect();
    let fields = fields.join(",");
    (0..n)
        .map(|i| format!("{{{fields},\"id\":{i}}}\n"))
        .collect()
}

/// `text` encoded with `options`: the layout of its Variant column and the
/// file's size.
fn encoded_with(text: &str, options: &EncodeOptions) -> (ShreddingSchema, u64) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.parquet");
    let report = encode(&mut text.as_bytes(), &out, options, &mut |_| {}).unwrap();
    let [ColumnSpec::Variant { schema, .. }] = &report.columns[..] else {
        panic!("one Variant column: {:?}", report.columns)
    };
    (schema.clone(), report.written.bytes)
}

#[test]
fn wide_rows_that_compress_well_whole_are_left_unshredded_from_200_sampled_rows() {
    // Whole rows compress to almost nothing; shredded, each of the 240
    // leaves pays its pages and headers. A sample of the first 200 rows
    // of 1,000 weighs the layouts without the footer, as a file of many
    // rows would.
    let sampled = |rows| EncodeOptions {
        shred: ShredMode::Infer(InferOptions::default().with_sample_rows(rows)),
        sample_rows: rows,
        ..EncodeOptions::default()
    };
    let text = templated_lines(1_000);
    let auto = ShredMode::Infer(InferOptions::default());
    let (layout, auto_bytes) = encoded_with(&text, &sampled(200));
    let none = EncodeOptions {
        shred: ShredMode::None,
        ..sampled(200)
    };
    let (_, none_bytes) = encoded_with(&text, &none);
    assert_eq!(layout, ShreddingSchema::Variant);
    assert_eq!(auto_bytes, none_bytes);
    // From a sample of fewer rows of a larger input, the layouts' fixed
    // costs would always win: the column is shredded for the reads a
    // layout serves, however small it is unshredded.
    let (few, _) = encoded_with(&text, &sampled(199));
    assert!(few.leaf_count() > 100, "{few}");
    // Nor is a column whose saving does not grow with the rows: copies of
    // one small row, where unshredded saves only the leaves' fixed cost.
    let copies = "{\"id\":1,\"tags\":[\"a\"]}\n".repeat(5_000);
    let (copies, _) = encoded(&copies, auto);
    assert!(copies != ShreddingSchema::Variant);
    // A sample of a file's first rows is measured as one row group where
    // the file's hold it: the layout is the one `infer` gives.
    let groups_of_250 = EncodeOptions {
        write: WriteOptions {
            row_group_rows: 250,
            ..WriteOptions::default()
        },
        ..sampled(250)
    };
    let objects: String = (0..300)
        .map(|i| {
            let kind = if i % 3 == 0 { "view" } else { "click" };
            let price = if i % 2 == 0 { format!("{i}") } else { format!("\"{i}.25\"") };
            format!(
                "{{\"user\":{{\"id\":{},\"name\":\"u-{i}\"}},\"kind\":\"{kind}\",\"price\":{price}}}\n",
                1000 + i
            )
        })
        .collect();
    let infer_default = infer_columns(&mut objects.as_bytes(), &sampled(250))
        .unwrap()
        .columns;
    let infer_groups = infer_columns(&mut objects.as_bytes(), &groups_of_250)
        .unwrap()
        .columns;
    assert_eq!(infer_default, infer_groups);
}

#[test]
fn a_sample_that_the_files_row_groups_cut_is_weighed_in_them() {
    // 6,000 seed rows in row groups of 100: each pays the typed leaves'
    // fixed costs and footer entries again, which the 4,096 sampled rows
    // weighed in one row group hid (the file came out twice as large
    // shredded). Weighed in groups of 100, they are left unshredded; in
    // groups of 1,000, they shred.
    let seed = seed_lines(6_000).join("\n");
    for (rows, shredded) in [(100, false), (1_000, true)] {
        let in_groups = |shred| EncodeOptions {
            shred,
            write: WriteOptions {
                row_group_rows: rows,
                ..WriteOptions::default()
            },
            ..EncodeOptions::default()
        };
        let (layout, auto_bytes) =
            encoded_with(&seed, &in_groups(ShredMode::Infer(InferOptions::default())));
        let (_, none_bytes) = encoded_with(&seed, &in_groups(ShredMode::None));
        assert_eq!(
            layout != ShreddingSchema::Variant,
            shredded,
            "groups of {rows}"
        );
        assert!(
            auto_bytes <= none_bytes,
            "groups of {rows}: {auto_bytes} against {none_bytes}"
        );
    }
}

#[test]
fn an_input_the_sample_holds_whole_is_shredded_only_where_that_writes_it_smaller() {
    // The sample is the file: its footer, an entry per leaf, weighs as it
    // will. On 500 seed rows it outweighs what shredding saves; on 2,000
    // it does not.
    let auto = ShredMode::Infer(InferOptions::default());
    for (rows, shredded) in [(500, false), (2_000, true)] {
        let seed = seed_lines(rows).join("\n");
        let (layout, auto_bytes) = encoded(&seed, auto.clone());
        let (_, none_bytes) = encoded(&seed, ShredMode::None);
        assert_eq!(layout != ShreddingSchema::Variant, shredded, "{rows} rows");
        assert!(
            auto_bytes <= none_bytes,
            "{rows} rows: {auto_bytes} against {none_bytes}"
        );
    }
    // As is 199 rows' worth of wide rows that compress well whole, below
    // the 200 values a sample of a larger input needs to be weighed
    // against unshredded.
    let (layout, _) = encoded(&templated_lines(199), auto.clone());
    assert_eq!(layout, ShreddingSchema::Variant);
    // And the file's own row groups count: 2,000 seed rows in groups of
    // 100 pay twenty footers' entries per leaf, and are left unshredded.
    let small_groups = |shred| EncodeOptions {
        shred,
        write: WriteOptions {
            row_group_rows: 100,
            ..WriteOptions::default()
        },
        ..EncodeOptions::default()
    };
    let seed = seed_lines(2_000).join("\n");
    let (layout, auto_bytes) = encoded_with(&seed, &small_groups(auto));
    let (_, none_bytes) = encoded_with(&seed, &small_groups(ShredMode::None));
    assert_eq!(layout, ShreddingSchema::Variant);
    assert_eq!(auto_bytes, none_bytes);
}

// ---------------------------------------------------------------------------
// Round trips: infer -> shred -> unshred gives every row back.
// ---------------------------------------------------------------------------

/// Rows mixing everything the presets treat differently.
fn mixed_lines(n: usize) -> Vec<String> {
    let mut rng = Rng::new(5);
    (0..n)
        .map(|i| {
            let mut fields = vec![format!(r#""id": {i}"#)];
            let a = match rng.below(20) {
                0 => r#""text""#.to_string(),
                1 => "null".to_string(),
                2 => "2.5".to_string(),
                3 => "1e300".to_string(),
                _ => rng.below(1000).to_string(),
            };
            fields.push(format!(r#""a": {a}"#));
            if rng.chance(0.9) {
                let d = match rng.below(10) {
                    0 => format!("{}.{:02}", rng.below(100), rng.below(100)),
                    1 => format!("{}", rng.below(100)),
                    2 => "12345678.5".to_string(),
                    _ => format!("{}.{}", rng.below(1000), rng.below(10)),
                };
                fields.push(format!(r#""d": {d}"#));
            }
            let o = match rng.below(10) {
                0 => "[1, 2]".to_string(),
                1 => r#""flat""#.to_string(),
                _ => format!(
                    r#"{{"x": {}, "y": "s{}", "extra{}": true}}"#,
                    rng.below(10),
                    rng.below(10),
                    rng.below(3)
                ),
            };
            fields.push(format!(r#""o": {o}"#));
            let arr = match rng.below(6) {
                0 => "[]".to_string(),
                1 => r#"[1, "x", null, {"k": 1}]"#.to_string(),
                2 => "[[1, 2], [3]]".to_string(),
                _ => format!("[{}, {}, 3000000000]", rng.below(5), rng.below(5)),
            };
            fields.push(format!(r#""arr": {arr}"#));
            if rng.chance(0.3) {
                let k = rng.below(1000);
                fields.push(format!(r#""map": {{"{}": 1, "{}": 2}}"#, k, k + 1000));
            }
            if rng.chance(0.02) {
                return format!("[{i}, {{}}]");
            }
            format!("{{{}}}", fields.join(", "))
        })
        .collect()
}

fn round_trip(lines: &[String], preset: Preset, max_columns: usize) {
    let rows = parse(lines);
    let schema = infer_schema(
        views(&rows),
        &InferOptions::new(preset).with_max_columns(max_columns),
    );
    let column = shred(&rows, &schema, preset);
    assert_eq!(column.len(), rows.len());
    let back = unshred(&column).expect("reconstructs");
    let metadata = back
        .column_by_name("metadata")
        .expect("metadata")
        .as_binary::<i32>();
    let value = back
        .column_by_name("value")
        .expect("value")
        .as_binary::<i32>();
    for (row, (line, original)) in lines.iter().zip(views(&rows)).enumerate() {
        let got = VariantRef::try_new(metadata.value(row), value.value(row)).expect("valid");
        assert!(
            got == original,
            "{preset:?} {schema} row {row}: {line}\n got {}",
            variant_to_json_string(&got)
        );
        if preset == Preset::Default {
            assert_eq!(
                variant_to_json_string(&got),
                variant_to_json_string(&original),
                "{schema} row {row}"
            );
        }
    }
    // Straight from JSON text to the same columns.
    let mut shredder = Shredder::new(&schema).with_policy(preset.policy());
    for line in lines {
        shredder.append_json(line.as_bytes()).expect("valid JSON");
    }
    let from_json = unshred(&shredder.finish()).expect("reconstructs");
    let metadata = from_json
        .column_by_name("metadata")
        .expect("metadata")
        .as_binary::<i32>();
    let value = from_json
        .column_by_name("value")
        .expect("value")
        .as_binary::<i32>();
    for (row, original) in views(&rows).enumerate() {
        let got = VariantRef::try_new(metadata.value(row), value.value(row)).expect("valid");
        assert!(got == original, "{preset:?} {schema} JSON row {row}");
    }
}

#[test]
fn round_trips_reconstruct_every_row() {
    let datasets = [
        ("seed", seed_lines(3000)),
        ("sparse", sparse_lines(3000)),
        ("maps", map_lines(3000)),
        ("mixed", mixed_lines(3000)),
        (
            "varying depth",
            rows(3000, |i| match i % 4 {
                0 => format!("[{}, 2]", i % 10),
                1 => format!("[[{}, 2.5], []]", i % 10),
                2 => format!("[[{}], [1, 2], [null]]", i % 10),
                _ => format!(r#"[[{}, 3], [4, "x"]]"#, i % 10),
            }),
        ),
    ];
    for (name, lines) in &datasets {
        for preset in [Preset::Default, Preset::Spark] {
            for max_columns in [300, 7] {
                round_trip(lines, preset, max_columns);
            }
        }
        // The mixed data must actually be shredded for the test to mean much.
        let schema = infer_schema(views(&parse(lines)), &InferOptions::default());
        assert!(schema.is_typed(), "{name}: {schema}");
    }
}

#[test]
fn spark_policy_reads_ints_in_decimal_columns_back_as_decimals() {
    let lines = rows(100, |i| {
        if i % 2 == 0 {
            format!(r#"{{"a": {}}}"#, i)
        } else {
            r#"{"a": 1.5}"#.to_string()
        }
    });
    let rows = parse(&lines);
    let schema = infer_schema(views(&rows), &InferOptions::new(Preset::Spark));
    assert_eq!(schema.to_string(), r#"{"a":"decimal(18,1)"}"#);
    let back = unshred(&shred(&rows, &schema, Preset::Spark)).expect("reconstructs");
    let m = back
        .column_by_name("metadata")
        .expect("metadata")
        .as_binary::<i32>();
    let v = back
        .column_by_name("value")
        .expect("value")
        .as_binary::<i32>();
    let row = VariantRef::try_new(m.value(2), v.value(2)).expect("valid");
    let a = row.as_object().and_then(|o| o.get("a")).expect("a");
    assert_eq!(
        a.as_decimal(),
        Some(VariantDecimal::try_new(20, 1).expect("2.0"))
    );
    assert!(matches!(
        a,
        VariantRef::Decimal8(_) | VariantRef::Decimal4(_) | VariantRef::Decimal16(_)
    ));
}

/// Rows whose typed leaves each call for a different encoding: a
/// sequential id and epoch-second timestamps (deltas), session keys with
/// a shared prefix (deltas of byte strings), a kind from a small domain
/// (a dictionary), a flag (bit-packed).
fn priced_lines(n: usize) -> String {
    let mut rng = Rng::new(15);
    (0..n)
        .map(|i| {
            format!(
                "{{\"id\": {}, \"ts\": {}, \"session\": \"sess-2026-12-03-{:08x}\", \"kind\": \"k{}\", \"ok\": {}}}\n",
                1_000_000 + i,
                1_700_000_000 + i * 3 + rng.below(3) as usize,
                rng.next() as u32,
                rng.below(6),
                rng.chance(0.5)
            )
        })
        .collect()
}

/// The typed leaf of top-level field `field` when `vshred infer --costs`
/// writes the sample `text` with the layout inferred from it: as written,
/// and as priced.
fn costed_leaf(text: &str, path: &[&str]) -> vshred::encode::LeafCost {
    costed_leaf_of(text, path, InferOptions::default())
}

/// [`costed_leaf`] with the layout inferred with `infer`.
fn costed_leaf_of(text: &str, path: &[&str], infer: InferOptions) -> vshred::encode::LeafCost {
    let options = EncodeOptions {
        shred: ShredMode::Infer(infer),
        ..EncodeOptions::default()
    };
    let costs = vshred::encode::layout_costs(&mut text.as_bytes(), &options).unwrap();
    let leaf: Vec<&str> = ["v", "typed_value"].iter().chain(path).copied().collect();
    costs
        .leaves
        .into_iter()
        .find(|cost| cost.written.path == leaf)
        .unwrap_or_else(|| panic!("{} is not shredded", leaf.join(".")))
}

#[test]
fn a_leaf_is_priced_on_its_exact_share_of_distinct_values_either_side_of_the_line() {
    use vshred::infer::LeafEncoding;
    let rows = 1_700;
    // Titles: the first `distinct` rows each their own, then repeats.
    for (distinct, dictionary) in [(1_513, true), (1_547, false)] {
        let text: String = (0..rows)
            .map(|i| {
                let title = if i < distinct { i } else { i % 40 };
                format!(
                    "{{\"title\": \"M 1.{} - {}km SSW of Ridgecrest, CA\"}}\n",
                    title % 10,
                    title
                )
            })
            .collect();
        // Asked for typed: on 1,700 rows the file is as small unshredded.
        let typed = InferOptions::default()
            .with_typed_paths([vshred::path::VariantPath::parse("$.title").unwrap()]);
        let title = costed_leaf_of(&text, &["title", "typed_value"], typed);
        let encoding = title.estimate.as_ref().expect("priced").encoding;
        assert_eq!(
            encoding == LeafEncoding::Dictionary,
            dictionary,
            "{distinct} distinct of {rows}: {encoding:?}"
        );
        assert_eq!(
            title
                .written
                .encodings
                .iter()
                .any(|e| e == "RLE_DICTIONARY"),
            dictionary,
            "{distinct} distinct of {rows}: {:?}",
            title.written.encodings
        );
    }
}

#[test]
fn the_cost_model_prices_the_encodings_the_writer_uses_and_their_bytes() {
    use vshred::encode::layout_costs;
    use vshred::infer::LeafEncoding;
    let costs = layout_costs(
        &mut priced_lines(3000).as_bytes(),
        &EncodeOptions::default(),
    )
    .unwrap();
    assert_eq!(costs.rows, 3000);
    let leaf = |field: &str| {
        let path = ["v", "typed_value", field, "typed_value"];
        costs
            .leaves
            .iter()
            .find(|leaf| leaf.written.path == path)
            .unwrap_or_else(|| panic!("{field} is not shredded"))
    };
    for (field, priced, written) in [
        ("id", LeafEncoding::Delta, "DELTA_BINARY_PACKED"),
        ("ts", LeafEncoding::Delta, "DELTA_BINARY_PACKED"),
        ("session", LeafEncoding::Delta, "DELTA_BYTE_ARRAY"),
        ("kind", LeafEncoding::Dictionary, "RLE_DICTIONARY"),
        ("ok", LeafEncoding::Plain, "PLAIN"),
    ] {
        let leaf = leaf(field);
        let estimate = leaf.estimate.as_ref().expect("priced");
        assert_eq!(estimate.encoding, priced, "{field}");
        assert!(
            leaf.written.encodings.iter().any(|e| e == written),
            "{field}: {:?}",
            leaf.written.encodings
        );
        if priced != LeafEncoding::Dictionary {
            assert!(
                !leaf.written.encodings.iter().any(|e| e == "RLE_DICTIONARY"),
                "{field}: {:?}",
                leaf.written.encodings
            );
        }
        // Bytes before compression, page headers included in the written
        // ones: within 15% (a few hundred bytes for the smallest leaves).
        let written = leaf.written.uncompressed as f64;
        assert!(
            (estimate.bytes - written).abs() <= (0.15 * written).max(300.0),
            "{field}: estimated {} against {written} written",
            estimate.bytes
        );
    }
    // The residual and metadata are written but not priced.
    let value = costs
        .leaves
        .iter()
        .find(|leaf| leaf.written.path == ["v", "value"])
        .expect("the root value");
    assert!(value.estimate.is_none());
    let mut table = Vec::new();
    costs.write_markdown(&mut table).unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.contains("| `v.typed_value.id.typed_value` | delta |"),
        "{table}"
    );
}

#[test]
fn strings_priced_as_deltas_that_compress_smaller_plain_are_priced_and_written_plain() {
    use vshred::infer::LeafEncoding;
    // Event URLs, each network's ids descending, the networks
    // interleaved: deltas share only the prefix before the id, plain
    // values compressed find each network's last id further back.
    let mut rng = Rng::new(19);
    let mut ids = [37_868_143u64, 72_948_311, 18_443_102, 60_012_954];
    let text: String = (0..2000)
        .map(|_| {
            let network = rng.below(4) as usize;
            ids[network] -= 1 + rng.below(12);
            format!(
                "{{\"detail\": \"https://earthquake.usgs.gov/earthquakes/feed/v1.0/detail/{}{}.geojson\", \"mag\": {}}}\n",
                ["ci", "nc", "ak", "us"][network],
                ids[network],
                rng.below(40)
            )
        })
        .collect();
    let detail = costed_leaf(&text, &["detail", "typed_value"]);
    let estimate = detail.estimate.as_ref().expect("priced");
    assert_eq!(detail.written.encodings, ["PLAIN", "RLE"]);
    assert_eq!(estimate.encoding, LeafEncoding::Plain);
    let written = detail.written.uncompressed as f64;
    assert!(
        (estimate.bytes - written).abs() <= 0.05 * written,
        "estimated {} against {written} written",
        estimate.bytes
    );
}

#[test]
fn dictionary_indices_in_runs_are_priced_as_runs() {
    use vshred::infer::LeafEncoding;
    // Rows clustered by release, as registries list a package's versions:
    // 100 values in runs of 30, whose indices the RLE/bit-packing hybrid
    // stores as runs, not at 7 bits each.
    let text: String = (0..3000)
        .map(|i| format!("{{\"release\": \"r{}\", \"n\": {}}}\n", i / 30, i % 7))
        .collect();
    let release = costed_leaf(&text, &["release", "typed_value"]);
    let estimate = release.estimate.as_ref().expect("priced");
    assert_eq!(estimate.encoding, LeafEncoding::Dictionary);
    let written = release.written.uncompressed as f64;
    assert!(
        (estimate.bytes - written).abs() <= 0.15 * written,
        "estimated {} against {written} written",
        estimate.bytes
    );
}

#[test]
fn definition_levels_of_a_field_present_in_runs_of_rows_are_priced_as_runs() {
    // A field in a third of the rows, in blocks of 200 (one package's
    // versions in a registry dump, say): its levels are a few runs, not a
    // bit or two per row.
    let text: String = (0..3000)
        .map(|i| {
            if (i / 200) % 3 == 0 {
                format!("{{\"id\": {i}, \"beta\": \"channel-{}\"}}\n", i / 200)
            } else {
                format!("{{\"id\": {i}}}\n")
            }
        })
        .collect();
    let beta = costed_leaf(&text, &["beta", "typed_value"]);
    let estimate = beta.estimate.as_ref().expect("priced").bytes;
    // Page and dictionary headers, which the model counts apart, are
    // about 60 bytes of the written ones.
    let written = beta.written.uncompressed as f64;
    assert!(
        (estimate - written).abs() <= 100.0,
        "estimated {estimate} against {written} written"
    );
}

#[test]
fn definition_levels_of_a_field_of_list_elements_present_in_runs_of_rows_are_priced_as_runs() {
    // As above, under a LIST: the elements of a third of the rows, in
    // blocks of 200, have the field. Its definition levels are a few
    // runs; its repetition levels (two elements a row) a bit an entry.
    let text: String = (0..3000)
        .map(|i| {
            let beta = if (i / 200) % 3 == 0 {
                format!(", \"beta\": \"channel-{}\"", i / 200)
            } else {
                String::new()
            };
            format!(
                "{{\"id\": {i}, \"items\": [{{\"sku\": \"a{}\"{beta}}}, {{\"sku\": \"b\"{beta}}}]}}\n",
                i % 7
            )
        })
        .collect();
    let path = ["items", "typed_value", "list", "element", "typed_value"];
    let beta = costed_leaf(&text, &[&path[..], &["beta", "typed_value"]].concat());
    let estimate = beta.estimate.as_ref().expect("priced").bytes;
    let written = beta.written.uncompressed as f64;
    assert!(
        (estimate - written).abs() <= 100.0,
        "estimated {estimate} against {written} written"
    );
}

/// A path asked for typed (a bloom filter's) is shredded whatever it
/// costs and however rare it is; one of mixed types is not, and neither
/// are paths not asked for that do not pay.
#[test]
fn paths_asked_for_typed_are_shredded_whatever_they_cost() {
    // Small rows, `rare` in one of 20 (below the 10% a field needs):
    // nothing pays, so nothing is shredded unasked.
    let lines = rows(20, |i| {
        let rare = if i == 0 { r#","rare":{"k":7}"# } else { "" };
        let mixed = if i % 2 == 0 { "1" } else { "\"x\"" };
        format!(r#"{{"user":{{"id":"u-{i}","plan":"pro"}},"mixed":{mixed}{rare}}}"#)
    });
    let rows = parse(&lines);
    assert_eq!(infer_rows(&rows, &InferOptions::default()), "\"variant\"");
    let asked = ["$.user.id", "$.rare.k", "$.mixed", "$.absent"].map(|p| p.parse().unwrap());
    let options = InferOptions::default().with_typed_paths(asked);
    assert_eq!(
        infer_rows(&rows, &options),
        r#"{"rare":{"k":"int32"},"user":{"id":"string"}}"#
    );
    // Through encode's options, with a bloom filter's path beside them.
    let encode_options = EncodeOptions {
        shred: ShredMode::Infer(options),
        bloom_filters: vec!["$.user.plan".into()],
        ..EncodeOptions::default()
    };
    let inferred = infer_columns(&mut lines.join("\n").as_bytes(), &encode_options).unwrap();
    let [ColumnSpec::Variant { schema, .. }] = inferred.columns.as_slice() else {
        panic!("{:?}", inferred.columns)
    };
    assert_eq!(
        schema.to_string(),
        r#"{"rare":{"k":"int32"},"user":{"id":"string","plan":"string"}}"#
    );
}

/// A key `""` would name a Parquet column with nothing, which DuckDB 2.0
/// refuses to read: neither preset shreds it, and a layout that asks for
/// it is refused.
#[test]
fn a_field_named_empty_is_never_shredded() {
    let lines = rows(5000, |i| format!(r#"{{"": {i}, "a": {i}}}"#));
    assert_eq!(spark(&lines), r#"{"a":"int64"}"#);
    assert_eq!(ours(&lines), r#"{"a":"int32"}"#);
    let asked = vshred::shred::ShreddingSchema::object([(
        String::new(),
        vshred::shred::ShreddingSchema::Variant,
    )]);
    assert!(
        asked
            .unwrap_err()
            .to_string()
            .contains("a field named \"\" is not shredded")
    );
}

/// DuckDB 2.0 matches a shredded object's field names ignoring case, and
/// reads `id` beside `ID` as `id_1`: our inference types one of them, the
/// most frequent (the first in byte order on a tie), and leaves the other
/// in `value`. Spark's keeps both, as Spark 4.3 writes them.
#[test]
fn keys_equal_but_for_case_get_one_column() {
    let lines = rows(5000, |i| {
        format!(r#"{{"id": {i}, "ID": "u{i}", "Id": {i}}}"#)
    });
    assert_eq!(ours(&lines), r#"{"ID":"string"}"#);
    assert_eq!(
        spark(&lines),
        r#"{"ID":"string","Id":"int64","id":"int64"}"#
    );
    let lines = rows(5000, |i| match i % 3 {
        0 => format!(r#"{{"user": {{"name": "n{i}"}}}}"#),
        _ => format!(r#"{{"user": {{"Name": "n{i}", "Nom": {i}}}}}"#),
    });
    assert_eq!(ours(&lines), r#"{"user":{"Name":"string","Nom":"int32"}}"#);
    // A path asked for typed (a bloom filter's) keeps its column, however
    // rare beside the other.
    let lines = rows(3000, |i| match i % 3 {
        0 => format!(r#"{{"id": {i}, "ID": "s"}}"#),
        _ => format!(r#"{{"id": {i}}}"#),
    });
    let asked = InferOptions::default().with_typed_paths(["$.ID".parse().unwrap()]);
    assert_eq!(infer_rows(&parse(&lines), &asked), r#"{"ID":"string"}"#);
    // Where Spark's layout writes the sample smaller, encode takes it
    // unless it types both (here it would have: `{"ID":...,"id":...}`).
    let lines = rows(3000, |i| {
        format!(r#"{{"id": {i}, "ID": "s{i}", "x": {i}}}"#)
    });
    let inferred =
        infer_columns(&mut lines.join("\n").as_bytes(), &EncodeOptions::default()).unwrap();
    let [ColumnSpec::Variant { schema, .. }] = inferred.columns.as_slice() else {
        panic!("{:?}", inferred.columns)
    };
    assert!(!schema.has_fields_equal_but_for_case(), "{schema}");
    // Ours is still weighed against unshredded then: 120 constant fields
    // stay in `value`, as they do without `ID` (all were shredded, the
    // file 28 times larger).
    let constants: String = (0..120).map(|k| format!(r#""f{k}": "c", "#)).collect();
    let lines = rows(300, |i| format!(r#"{{{constants}"id": {i}, "ID": {i}}}"#));
    let inferred =
        infer_columns(&mut lines.join("\n").as_bytes(), &EncodeOptions::default()).unwrap();
    let [ColumnSpec::Variant { schema, .. }] = inferred.columns.as_slice() else {
        panic!("{:?}", inferred.columns)
    };
    assert_eq!(schema.to_string(), "\"variant\"");
}

/// With several Variant columns, `infer` writes the layout by name; given
/// back, each column takes its own entry (each took the whole object), and
/// a column it leaves out is not shredded. One layout that names no column
/// is every column's, as before.
#[test]
fn a_layout_by_name_as_infer_writes_it_gives_each_column_its_own() {
    let text: String = (0..5000)
        .map(|i| format!("{{\"a\":{{\"x\":{i}}},\"b\":{{\"c\":\"s{i}\"}},\"m\":{i}}}\n"))
        .collect();
    let variant_fields = vec!["a".to_string(), "b".to_string()];
    let layouts = |shred: ShredMode| {
        let options = EncodeOptions {
            variant_fields: variant_fields.clone(),
            shred,
            ..EncodeOptions::default()
        };
        let columns = infer_columns(&mut text.as_bytes(), &options)
            .unwrap()
            .columns;
        vshred::encode::layout_json(&columns)
    };
    let inferred = layouts(ShredMode::Infer(InferOptions::default()));
    assert_eq!(inferred, r#"{"a":{"x":"int32"},"b":{"c":"string"}}"#);
    assert_eq!(
        layouts(ShredMode::Schema(inferred.parse().unwrap())),
        inferred
    );
    assert_eq!(
        layouts(ShredMode::Schema(
            r#"{"b":{"c":"string"}}"#.parse().unwrap()
        )),
        r#"{"a":"variant","b":{"c":"string"}}"#
    );
    assert_eq!(
        layouts(ShredMode::Schema(r#"{"x":"int64"}"#.parse().unwrap())),
        r#"{"a":{"x":"int64"},"b":{"x":"int64"}}"#
    );
    // The file written takes the same layouts.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ab.parquet");
    let options = EncodeOptions {
        variant_fields,
        shred: ShredMode::Schema(inferred.parse().unwrap()),
        ..EncodeOptions::default()
    };
    let written = encode(&mut text.as_bytes(), &out, &options, &mut |_| {}).unwrap();
    assert_eq!(vshred::encode::layout_json(&written.columns), inferred);
}
