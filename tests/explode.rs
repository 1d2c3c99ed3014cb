//! `variant_explode`: an object's fields in name order with their keys, an
//! array's elements with null keys, nothing for anything else (one entry
//! of nulls for `variant_explode_outer`); the same
//! whether the column is shredded or not; the values' metadata shared with
//! their row's, not copied.

use arrow::array::{Array, AsArray, ListArray, StructArray};
use arrow::datatypes::Int32Type;
use vshred::explode::{exploded_type, variant_explode, variant_explode_outer};
use vshred::shred::{Shredder, ShreddingSchema};
use vshred::unshred::json_strings;

/// A Variant column of these JSON texts (`None`: SQL null), in `schema`.
fn column(rows: &[Option<&str>], schema: &ShreddingSchema) -> StructArray {
    let mut shredder = Shredder::new(schema);
    for row in rows {
        match row {
            Some(text) => shredder.append_json(text.as_bytes()).unwrap(),
            None => shredder.append_null(),
        }
    }
    shredder.finish()
}

/// Each row's entries as `(pos, key, value as JSON)`.
fn entries(list: &ListArray) -> Vec<Vec<(i32, Option<String>, String)>> {
    (0..list.len())
        .map(|row| {
            let entries = list.value(row);
            let entries = entries.as_struct();
            let pos = entries.column(0).as_primitive::<Int32Type>();
            let key = entries.column(1).as_string::<i32>();
            let value = json_strings(entries.column(2).as_struct()).unwrap();
            (0..entries.len())
                .map(|i| {
                    (
                        pos.value(i),
                        key.is_valid(i).then(|| key.value(i).to_string()),
                        value.value(i).to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

const ROWS: [Option<&str>; 7] = [
    Some(r#"{"b": [1, {"c": 2.50}], "a": "x", "aa": null}"#),
    Some(r#"[3, "y", {"d": true}]"#),
    Some("7"),
    Some("null"),
    None,
    Some("{}"),
    Some(r#"{"a": 1}"#),
];

#[test]
fn objects_give_their_fields_in_name_order_and_arrays_their_elements() {
    let exploded = variant_explode(&column(&ROWS, &ShreddingSchema::Variant)).unwrap();
    assert_eq!(exploded.data_type(), &exploded_type(false));
    let key = |k: &str| Some(k.to_string());
    assert_eq!(
        entries(&exploded),
        vec![
            vec![
                (0, key("a"), r#""x""#.to_string()),
                (1, key("aa"), "null".to_string()),
                (2, key("b"), r#"[1,{"c":2.50}]"#.to_string()),
            ],
            vec![
                (0, None, "3".to_string()),
                (1, None, r#""y""#.to_string()),
                (2, None, r#"{"d":true}"#.to_string()),
            ],
            vec![],
            vec![],
            vec![],
            vec![],
            vec![(0, key("a"), "1".to_string())],
        ]
    );
}

#[test]
fn outer_gives_a_row_without_fields_or_elements_one_entry_of_nulls() {
    let input = column(&ROWS, &ShreddingSchema::Variant);
    let outer = variant_explode_outer(&input).unwrap();
    assert_eq!(outer.data_type(), &exploded_type(true));
    let plain = variant_explode(&input).unwrap();
    let (outer_entries, plain_entries) = (entries(&outer), entries(&plain));
    for (row, text) in ROWS.iter().enumerate() {
        if plain.value_length(row) > 0 {
            assert_eq!(outer_entries[row], plain_entries[row], "{text:?}");
            continue;
        }
        let entries = outer.value(row);
        let entries = entries.as_struct();
        assert_eq!(entries.len(), 1, "{text:?}");
        for (field, column) in entries.fields().iter().zip(entries.columns()) {
            assert!(column.is_null(0), "{text:?}: {}", field.name());
        }
    }
}

#[test]
fn a_shredded_column_explodes_as_its_unshredded_values_do() {
    // Typed fields beside a residual's, nested typed objects whose keys
    // make metadata too long to sit in a view, a typed array of the whole
    // row, a typed scalar: each row is split where it is stored, not
    // rebuilt first.
    let rows: Vec<Option<&str>> = ROWS
        .into_iter()
        .chain([
            Some(r#"{"b": {"a_long_key_name_one": 5, "x": {"deep_key_long_name": [1]}}, "z": 3}"#),
            Some(r#"{"b": {"x": "s", "y": 1}, "a": [2, {"key_of_an_element": null}]}"#),
            Some(r#"[{"key_of_an_element_two": 1.5}, null, []]"#),
        ])
        .collect();
    let unshredded = column(&rows, &ShreddingSchema::Variant);
    for schema in [
        r#"{"a": "string", "b": ["variant"]}"#,
        r#"{"b": {"a_long_key_name_one": "int64", "x": {"deep_key_long_name": ["int64"]}}}"#,
        r#"{"a": ["variant"], "b": "variant", "z": "int64"}"#,
        r#"["variant"]"#,
        r#""int64""#,
    ] {
        let shredded = column(&rows, &schema.parse().unwrap());
        for explode in [variant_explode, variant_explode_outer] {
            let (shredded, unshredded) = (explode(&shredded), explode(&unshredded));
            let (shredded, unshredded) = (shredded.unwrap(), unshredded.unwrap());
            assert_eq!(entries(&shredded), entries(&unshredded), "{schema}");
            assert_eq!(shredded.value_offsets(), unshredded.value_offsets());
        }
    }
}

#[test]
fn the_values_share_their_row_s_metadata_bytes() {
    // A wide object: each of its 200 values would otherwise carry a copy
    // of the row's metadata, which holds all 200 keys.
    let object: String = format!(
        "{{{}}}",
        (0..200)
            .map(|i| format!("\"key_{i:03}\": {i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let input = column(&[Some(&object)], &ShreddingSchema::Variant);
    let exploded = variant_explode(&input).unwrap();
    let entries = exploded.value(0);
    let metadata = entries.as_struct().column(2).as_struct().column(0);
    let metadata = metadata.as_binary_view();
    assert_eq!(metadata.len(), 200);
    let one_copy: usize = input.column(0).as_binary::<i32>().value(0).len();
    let held: usize = metadata.data_buffers().iter().map(|b| b.len()).sum();
    assert!(
        held <= one_copy + 16,
        "{held} bytes for metadata of {one_copy}"
    );
}
