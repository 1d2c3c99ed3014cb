//! `unshred` of columns that are unshredded already: given back with their
//! own bytes once validated, or rebuilt where a row needs new bytes.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, StructArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field};
use vshred::ErrorKind;
use vshred::json::variant_to_json_string;
use vshred::unshred::unshred;
use vshred::variant::VariantRef;

/// A dictionary of two names, unsorted, `b` then `a`.
const METADATA: &[u8] = &[0x01, 2, 0, 1, 2, b'b', b'a'];
/// `{"a": 1}` against [`METADATA`]: an object of one field, id 1, whose
/// value is the int8 1.
const A_IS_ONE: &[u8] = &[0x02, 1, 1, 0, 2, 0x0C, 0x01];

fn column(values: Vec<Option<&[u8]>>, nulls: Option<NullBuffer>) -> StructArray {
    column_of(vec![Some(METADATA); values.len()], values, nulls)
}

fn column_of(
    metadata: Vec<Option<&[u8]>>,
    values: Vec<Option<&[u8]>>,
    nulls: Option<NullBuffer>,
) -> StructArray {
    StructArray::new(
        vec![
            Field::new("metadata", DataType::Binary, true),
            Field::new("value", DataType::Binary, true),
        ]
        .into(),
        vec![
            Arc::new(BinaryArray::from(metadata)) as ArrayRef,
            Arc::new(BinaryArray::from(values)),
        ],
        nulls,
    )
}

fn json(column: &StructArray, row: usize) -> String {
    let metadata = column
        .column_by_name("metadata")
        .unwrap()
        .as_binary::<i32>();
    let value = column.column_by_name("value").unwrap().as_binary::<i32>();
    let variant = VariantRef::try_new(metadata.value(row), value.value(row)).unwrap();
    variant_to_json_string(&variant)
}

#[test]
fn an_unshredded_column_comes_back_with_its_own_bytes() {
    let input = column(vec![Some(A_IS_ONE), Some(A_IS_ONE)], None);
    let output = unshred(&input).unwrap();
    for row in 0..2 {
        // Rebuilt, the dictionary would hold `a` alone.
        assert_eq!(
            output
                .column_by_name("metadata")
                .unwrap()
                .as_binary::<i32>()
                .value(row),
            METADATA
        );
        assert_eq!(
            output
                .column_by_name("value")
                .unwrap()
                .as_binary::<i32>()
                .value(row),
            A_IS_ONE
        );
        assert_eq!(json(&output, row), r#"{"a":1}"#);
    }
}

/// A null row's children are null where Parquet readers read it: the
/// other rows come back with their own bytes all the same.
#[test]
fn null_rows_with_null_children_come_back_with_the_others_own_bytes() {
    let input = column_of(
        vec![Some(METADATA), None],
        vec![Some(A_IS_ONE), None],
        Some(NullBuffer::from(vec![true, false])),
    );
    let output = unshred(&input).unwrap();
    assert!(output.is_null(1));
    let metadata = output.column_by_name("metadata").unwrap();
    assert_eq!(metadata.as_binary::<i32>().value(0), METADATA);
    // A present row whose metadata is null is an error, not passed on.
    let input = column_of(vec![None], vec![Some(A_IS_ONE)], None);
    let error = unshred(&input).unwrap_err();
    assert!(error.to_string().contains("metadata is null"), "{error}");
}

#[test]
fn an_invalid_value_in_an_unshredded_column_is_an_error_naming_its_row() {
    let cut_short = &A_IS_ONE[..5];
    let input = column(vec![Some(A_IS_ONE), Some(cut_short)], None);
    let error = unshred(&input).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidVariant);
    assert_eq!(error.row(), Some(1), "{error}");
}

#[test]
fn a_present_row_without_a_value_is_the_variant_null_and_null_rows_stay_null() {
    let input = column(
        vec![Some(A_IS_ONE), None, None],
        Some(NullBuffer::from(vec![true, true, false])),
    );
    let output = unshred(&input).unwrap();
    assert_eq!(json(&output, 0), r#"{"a":1}"#);
    assert_eq!(json(&output, 1), "null");
    assert!(output.is_null(2));
    assert_eq!(output.column_by_name("value").unwrap().null_count(), 0);
}

/// A damaged value inside a shredded array names the row it is in, not
/// its element's place among all the rows' elements, whether the array is
/// rebuilt whole, turned into JSON or an element of it is asked for.
#[test]
fn a_damaged_element_of_a_shredded_array_names_its_row() {
    use arrow::array::{ListArray, StringArray};
    use arrow::buffer::OffsetBuffer;
    use vshred::path::VariantPath;
    use vshred::shred::ShreddingSchema;
    // Rows ["a","b"], ["c","d"], ["e", <damaged>]: the damaged value is
    // element 5 of row 2.
    let element_fields = vec![
        Field::new("value", DataType::Binary, true),
        Field::new("typed_value", DataType::Utf8, true),
    ];
    let cut_short: &[u8] = &A_IS_ONE[..5];
    let elements = StructArray::new(
        element_fields.clone().into(),
        vec![
            Arc::new(BinaryArray::from(vec![
                None,
                None,
                None,
                None,
                None,
                Some(cut_short),
            ])) as ArrayRef,
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some("b"),
                Some("c"),
                Some("d"),
                Some("e"),
                None,
            ])),
        ],
        None,
    );
    let element = Arc::new(Field::new(
        "element",
        DataType::Struct(element_fields.into()),
        false,
    ));
    let list = ListArray::new(
        element.clone(),
        OffsetBuffer::new(vec![0, 2, 4, 6].into()),
        Arc::new(elements),
        None,
    );
    let input = StructArray::new(
        vec![
            Field::new("metadata", DataType::Binary, false),
            Field::new("value", DataType::Binary, true),
            Field::new("typed_value", DataType::List(element), true),
        ]
        .into(),
        vec![
            Arc::new(BinaryArray::from(vec![Some(METADATA); 3])) as ArrayRef,
            Arc::new(BinaryArray::from(vec![None::<&[u8]>; 3])),
            Arc::new(list),
        ],
        None,
    );
    let rebuilt = unshred(&input).unwrap_err();
    assert_eq!(rebuilt.kind(), ErrorKind::InvalidVariant);
    assert_eq!(rebuilt.row(), Some(2), "{rebuilt}");
    let text = vshred::unshred::json_strings(&input).unwrap_err();
    assert_eq!(text.row(), Some(2), "{text}");
    for path in ["$[1]", "$"] {
        let path: VariantPath = path.parse().unwrap();
        for as_type in [
            ShreddingSchema::Variant,
            ShreddingSchema::parse_type_name("string").unwrap(),
        ] {
            let got = vshred::get::variant_get(&input, &path, &as_type, false).unwrap_err();
            assert_eq!(got.row(), Some(2), "{path} as {as_type}: {got}");
        }
    }
}
