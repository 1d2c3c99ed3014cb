//! What the SQL tests share: the seed rows as a file, and queries over
//! datasets of them.

use std::path::Path;

use vshred::encode::{EncodeOptions, ShredMode, encode};
use vshred::parquet::WriteOptions;
use vshred::shred::ShreddingSchema;

/// `rows` rows `{"id":i,"v":{"f0":i%1000,"s":"s-i%7","n":{"a":i%3}}}`
/// (every 10th `f0` a string), encoded with `v` shredded as `auto` shreds
/// many of them, in row groups of 1000 rows. (`auto` writes a few thousand
/// such rows unshredded: in row groups that small, the footer that typed
/// columns add outweighs what they save.)
pub fn seed_file(dir: &Path, rows: usize) -> (std::path::PathBuf, Vec<String>) {
    let lines: Vec<String> = (0..rows)
        .map(|i| {
            let f0 = if i % 10 == 9 {
                format!("\"x{i}\"")
            } else {
                (i % 1000).to_string()
            };
            format!(
                r#"{{"id":{i},"v":{{"f0":{f0},"s":"s-{}","n":{{"a":{}}}}}}}"#,
                i % 7,
                i % 3
            )
        })
        .collect();
    let text = lines.join("\n") + "\n";
    let path = dir.join("seed.parquet");
    let layout = r#"{"f0":"int32","n":{"a":"int32"},"s":"string"}"#;
    let options = EncodeOptions {
        variant_fields: vec!["v".into()],
        shred: ShredMode::Schema(ShreddingSchema::from_json(layout).unwrap()),
        write: WriteOptions {
            row_group_rows: 1000,
            ..WriteOptions::default()
        },
        ..EncodeOptions::default()
    };
    encode(&mut text.as_bytes(), &path, &options, &mut |_| {}).unwrap();
    (path, lines)
}

/// Queries over a dataset of seed files (`{}` its table): an aggregate of
/// paths, a GROUP BY on a path, and a filter that prunes by `id`.
pub const DATASET_QUERIES: [&str; 3] = [
    "SELECT sum(variant_get(v, '$.n.a', 'bigint')) AS a, count(try_variant_get(v, '$.f0', 'bigint')) AS f0 FROM '{}'",
    "SELECT variant_get(v, '$.s', 'string') AS s, count(*) AS n, sum(id) AS ids FROM '{}' GROUP BY s ORDER BY s",
    "SELECT count(*) AS n, min(id) AS id FROM '{}' WHERE id >= 4000 AND variant_get(v, '$.n.a', 'bigint') = 1",
];

/// What `EXPLAIN ANALYZE` of the third of [`DATASET_QUERIES`] shows over
/// seed files of 5000, 2000 and 3000 rows (row groups of 1000, ids from 0
/// in each): the filter on `id` rules out the two smaller files whole, and
/// four of the first's five row groups.
pub const DATASET_PRUNING: [&str; 4] = [
    "files=3,",
    "files_pruned=2,",
    "row_groups=10,",
    "row_groups_read=1,",
];
