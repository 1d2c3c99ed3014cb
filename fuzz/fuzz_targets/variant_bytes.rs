//! Untrusted Variant bytes: validation must never panic, errors must point
//! inside the input, and whatever validates must render as JSON, re-encode,
//! and re-validate to a logically equal value; reconstruction from a
//! column (one pass that validates and renders) must agree, and `unshred`
//! of it must refuse the same bytes or give them back as they are; converting
//! it to every type `variant_get` takes gives a value or null, never a
//! panic.
//!
//! Input layout: metadata and value back to back (as in the seed corpus).
//! The split is where `Metadata::parse_prefix` says the metadata ends; when
//! it rejects the input, the first byte picks the split point instead, so
//! that invalid metadata (and trailing metadata bytes) are exercised too.

#![no_main]

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BinaryArray, StructArray};
use arrow::datatypes::{DataType, Field};
use libfuzzer_sys::fuzz_target;
use vshred::get::variant_get;
use vshred::json::{json_to_variant, write_json};
use vshred::path::VariantPath;
use vshred::shred::ShreddingSchema;
use vshred::unshred::{ShreddedColumn, unshred};
use vshred::variant::{DEFAULT_MAX_DEPTH, Metadata, VariantBuilder, VariantRef};
use vshred::{Error, ErrorKind, Position, VariantPart};

fuzz_target!(|data: &[u8]| {
    match Metadata::parse_prefix(data) {
        Ok((metadata, used)) => {
            assert!(used <= data.len());
            assert_eq!(metadata.as_bytes(), &data[..used]);
            let (metadata, value) = data.split_at(used);
            check(metadata, value);
        }
        Err(e) => {
            check_error(&e, data.len(), 0);
            if let Some((&first, rest)) = data.split_first() {
                let split = first as usize % (rest.len() + 1);
                let (metadata, value) = rest.split_at(split);
                check(metadata, value);
            }
        }
    }
});

fn check(metadata: &[u8], value: &[u8]) {
    // Reconstruction validates and renders in one pass: it must reject
    // what validation rejects, with the same error, and else write the
    // same text as rendering the validated value.
    let reconstructed = reconstructed_json(metadata, value);
    // An unshredded column comes back as it is once validated.
    let unshredded = unshred(&one_row_column(metadata, value));
    let v = match VariantRef::try_new(metadata, value) {
        Ok(v) => v,
        Err(e) => {
            check_error(&e, metadata.len(), value.len());
            let r = reconstructed.expect_err("reconstruction passed what validation rejects");
            assert!(r.message().contains(e.message()), "{r} against {e}");
            let u = unshredded.expect_err("unshred passed what validation rejects");
            assert!(u.message().contains(e.message()), "{u} against {e}");
            return;
        }
    };
    let unshredded = unshredded.expect("unshred of a valid value");
    assert_eq!(unshredded.column(0).as_binary::<i32>().value(0), metadata);
    assert_eq!(unshredded.column(1).as_binary::<i32>().value(0), value);

    // Reading a validated value never fails.
    let m = Metadata::try_new(metadata).expect("metadata validated once already");
    let depth = exercise(&v, m);

    // The depth limit is exact: the value's own depth passes, one less fails.
    VariantRef::try_with_metadata(m, value, depth).expect("validates at its own depth");
    if depth > 0 {
        let e = VariantRef::try_with_metadata(m, value, depth - 1)
            .expect_err("must fail one level below its depth");
        check_error(&e, metadata.len(), value.len());
        assert!(e.message().contains("limit"), "{e}");
    }

    // JSON: valid UTF-8, and JSON text that our own parser reads back (the
    // validator forbids duplicate field names, and the depth limits agree).
    let mut json = Vec::new();
    write_json(&v, &mut json);
    assert_eq!(
        reconstructed.expect("reconstruction of a valid value"),
        json
    );
    let text = std::str::from_utf8(&json).expect("write_json emits UTF-8");
    if let Err(e) = json_to_variant(&json) {
        panic!("write_json output does not parse: {e}\n{text}");
    }

    // Re-encoding gives bytes that validate and decode equal.
    let mut builder = VariantBuilder::new();
    builder.append(&v).expect("re-encoding a valid value");
    let (m2, v2) = builder.finish();
    let w = VariantRef::try_new(m2, v2).expect("re-encoded bytes validate");
    assert!(v == w, "re-encoded value differs\n{v:?}\n{w:?}");
    assert!(w == v, "== is not symmetric\n{v:?}\n{w:?}");
    let mut json2 = Vec::new();
    write_json(&w, &mut json2);
    assert_eq!(json, json2, "re-encoding changed the JSON text");

    // The builder's encoding is canonical: a second pass is byte-identical.
    let mut again = VariantBuilder::new();
    again.append(&w).expect("re-encoding a re-encoded value");
    assert_eq!(again.finish(), (m2, v2), "re-encoding is not idempotent");

    casts(metadata, value, v.is_null());
}

/// `variant_get` of the value as each type: a value or null, and the
/// strict form fails exactly where the lenient one gives null (for a value
/// that is not the Variant null).
fn casts(metadata: &[u8], value: &[u8], is_null: bool) {
    const TYPES: [&str; 18] = [
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "float",
        "double",
        "decimal(5,2)",
        "decimal(38,0)",
        "decimal(38,38)",
        "string",
        "date",
        "timestamp",
        "timestamp_ntz",
        "timestamp_nanos",
        "time",
        "binary",
        "uuid",
    ];
    let column = one_row_column(metadata, value);
    let root: VariantPath = "$".parse().unwrap();
    for name in TYPES {
        let as_type = ShreddingSchema::parse_type_name(name).unwrap();
        let lenient =
            variant_get(&column, &root, &as_type, false).expect("a lenient get never fails");
        let strict = variant_get(&column, &root, &as_type, true);
        assert_eq!(strict.is_err(), lenient.is_null(0) && !is_null, "{name}");
    }
}

/// The JSON text reconstruction gives for a one-row unshredded column.
fn reconstructed_json(metadata: &[u8], value: &[u8]) -> Result<Vec<u8>, Error> {
    let column = one_row_column(metadata, value);
    let mut out = Vec::new();
    ShreddedColumn::try_new(&column)?.write_json(0, &mut out)?;
    Ok(out)
}

/// A one-row unshredded Variant column.
fn one_row_column(metadata: &[u8], value: &[u8]) -> StructArray {
    StructArray::new(
        vec![
            Field::new("metadata", DataType::Binary, false),
            Field::new("value", DataType::Binary, false),
        ]
        .into(),
        vec![
            Arc::new(BinaryArray::from_iter_values([metadata])) as ArrayRef,
            Arc::new(BinaryArray::from_iter_values([value])),
        ],
        None,
    )
}

/// Touches every accessor of `v` and its children; returns the nesting
/// depth (0 for a scalar, 1 for a flat container).
fn exercise<'a>(v: &VariantRef<'a>, metadata: Metadata<'a>) -> usize {
    let _ = (
        v.variant_type().name(),
        v.is_null(),
        v.as_bool(),
        v.as_i64(),
    );
    let _ = (v.as_decimal(), v.as_f64(), v.as_str(), v.as_binary());
    let _ = (v.as_date(), v.as_time_micros(), v.as_uuid());
    let _ = (v.as_timestamp_micros(), v.as_timestamp_nanos());
    let _ = (v.as_timestamp_ntz_micros(), v.as_timestamp_ntz_nanos());
    if let Some(d) = v.as_decimal() {
        let _ = (d.to_string(), d.to_f64(), d.precision(), d.normalized());
    }
    // Reflexive, NaN included (a copy, so that clippy sees no `v == v`).
    let copy = *v;
    assert!(copy == *v, "a value must equal itself: {v:?}");
    match v {
        VariantRef::Object(o) => {
            assert_eq!(o.metadata().as_bytes(), metadata.as_bytes());
            let mut depth = 0;
            let mut prev: Option<&str> = None;
            for i in 0..o.len() {
                let name = o.field_name(i);
                assert!(prev.is_none_or(|p| p < name), "fields out of order");
                prev = Some(name);
                assert_eq!(metadata.get(o.field_id(i)), Some(name));
                let id = metadata
                    .find(name)
                    .expect("field name is in the dictionary");
                assert_eq!(metadata.get(id), Some(name));
                assert_eq!(o.index_of(name), Some(i));
                let field = o.field(i);
                assert!(o.get(name).is_some_and(|g| g == field));
                // field_bytes is exactly the field's value, valid on its own.
                let alone =
                    VariantRef::try_with_metadata(metadata, o.field_bytes(i), DEFAULT_MAX_DEPTH)
                        .expect("field_bytes validates on its own");
                assert!(alone == field);
                depth = depth.max(exercise(&field, metadata));
            }
            assert_eq!(o.iter().len(), o.len());
            depth + 1
        }
        VariantRef::Array(a) => {
            let mut depth = 0;
            for (i, element) in a.iter().enumerate() {
                assert!(a.get(i).is_some_and(|g| g == element));
                let alone =
                    VariantRef::try_with_metadata(metadata, a.element_bytes(i), DEFAULT_MAX_DEPTH)
                        .expect("element_bytes validates on its own");
                assert!(alone == element);
                depth = depth.max(exercise(&element, metadata));
            }
            assert!(a.get(a.len()).is_none());
            depth + 1
        }
        _ => 0,
    }
}

/// A validation error has a position inside the part it names.
fn check_error(e: &Error, metadata_len: usize, value_len: usize) {
    let _ = e.to_string();
    assert_eq!(e.kind(), ErrorKind::InvalidVariant, "{e}");
    match e.position() {
        Some(Position::Variant {
            part: VariantPart::Metadata,
            byte,
        }) => assert!(
            byte <= metadata_len,
            "{e} (metadata has {metadata_len} bytes)"
        ),
        Some(Position::Variant {
            part: VariantPart::Value,
            byte,
        }) => assert!(byte <= value_len, "{e} (value has {value_len} bytes)"),
        other => panic!("validation error without a byte position: {other:?}: {e}"),
    }
}
