//! parquet-testing `shredded_variant`: every case read with the parquet
//! crate and reconstructed by `vshred::unshred`.
//!
//! Each expected `.variant.bin` is the metadata immediately followed by the
//! value. A case passes when our reconstruction equals it logically (by the
//! spec's equivalence classes, `VariantRef`'s `==`) and renders the same
//! JSON. The 6 error cases must fail with a message naming the problem.
//! Cases 43 and 125 store a field both in `value` and in `typed_value`; we
//! read them as their expected files say: `typed_value` wins.

use std::fs::File;
use std::path::PathBuf;

use arrow::array::{Array, AsArray, StructArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use vshred::get::{ResultColumn, variant_get};
use vshred::json::variant_to_json_string;
use vshred::shred::ShreddingSchema;
use vshred::unshred::ShreddedColumn;
use vshred::variant::{Metadata, VariantBuilder, VariantRef};

fn data_dir() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/parquet-testing/shredded_variant");
    assert!(
        dir.join("cases.json").exists(),
        "conformance data missing: expected parquet-testing's shredded_variant folder at {}, \
         which the repository ships ({HINT})",
        dir.display()
    );
    dir
}

/// How to get missing data back.
const HINT: &str = "`git checkout -- testdata` restores it; see testdata/parquet-testing/README.md";

fn read_column(path: &PathBuf) -> Result<StructArray, String> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| e.to_string())?
        .build()
        .map_err(|e| e.to_string())?;
    let batches: Vec<_> = reader
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let schema = batches[0].schema();
    let batch = arrow::compute::concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
    Ok(batch
        .column_by_name("var")
        .ok_or("no var column")?
        .as_struct()
        .clone())
}

/// A reconstructed row: `None` for a null row, else (metadata, value).
type Row = Option<(Vec<u8>, Vec<u8>)>;

fn reconstruct(column: &StructArray) -> Result<Vec<Row>, vshred::Error> {
    let reader = ShreddedColumn::try_new(column)?;
    let mut rows = Vec::new();
    for row in 0..column.len() {
        let mut builder = VariantBuilder::new();
        let mut json = Vec::new();
        reader.write_json(row, &mut json)?;
        if reader.write_variant(row, &mut builder)? {
            let (m, v) = builder.into_parts();
            // The direct JSON path must agree with decode-then-JSON.
            let decoded = variant_to_json_string(&VariantRef::try_new(&m, &v)?);
            assert_eq!(String::from_utf8(json).unwrap(), decoded, "row {row}");
            rows.push(Some((m, v)));
        } else {
            rows.push(None);
        }
    }
    Ok(rows)
}

/// Whether `variant_get(column, '$')` gives `rows`, row for row: a row
/// with nothing stored is the Variant null there too, not SQL's NULL.
fn root_is_the_row(column: &StructArray, rows: &[Row]) -> Result<(), String> {
    let root = variant_get(
        column,
        &"$".parse().unwrap(),
        &ShreddingSchema::Variant,
        true,
    )
    .map_err(|e| e.to_string())?;
    let root = ResultColumn::try_new(&root).map_err(|e| e.to_string())?;
    for (i, row) in rows.iter().enumerate() {
        let got = root.get(i).map_err(|e| e.to_string())?;
        let want = row
            .as_ref()
            .map(|(m, v)| VariantRef::try_new(m, v).unwrap());
        if got != want {
            return Err(format!("row {i}: got {got:?}, the row is {want:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_case_reads_as_expected_or_fails_clearly() {
    let dir = data_dir();
    let cases: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut passed = 0;
    for case in cases.as_array().unwrap() {
        let n = case["case_number"].as_u64().unwrap();
        let Some(file) = case["parquet_file"].as_str() else {
            continue; // case 3 has no files
        };
        let column = match read_column(&dir.join(file)) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("case {n}: parquet read failed: {e}"));
                continue;
            }
        };
        let result = reconstruct(&column);
        if let Some(expected_error) = case["error_message"].as_str() {
            match result {
                Err(e) => {
                    eprintln!("case {n}: rejected as expected ({expected_error}): {e}");
                    passed += 1;
                }
                Ok(_) => failures.push(format!(
                    "case {n}: expected error {expected_error:?}, read fine"
                )),
            }
            continue;
        }
        let rows = match result {
            Ok(rows) => rows,
            Err(e) => {
                failures.push(format!("case {n}: {e}"));
                continue;
            }
        };
        // `variant_get(v, '$')` is the row, as rebuilt whole.
        if let Err(e) = root_is_the_row(&column, &rows) {
            failures.push(format!("case {n}: variant_get of $: {e}"));
        }
        let expected_files: Vec<Option<String>> = match case.get("variant_files") {
            Some(files) => files
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().map(String::from))
                .collect(),
            None => vec![case["variant_file"].as_str().map(String::from)],
        };
        if rows.len() != expected_files.len() {
            failures.push(format!(
                "case {n}: {} rows, expected {}",
                rows.len(),
                expected_files.len()
            ));
            continue;
        }
        let mut ok = true;
        for (row, (got, want)) in rows.iter().zip(&expected_files).enumerate() {
            match (got, want) {
                (None, None) => {}
                (Some((m, v)), Some(file)) => {
                    let path = dir.join(file);
                    let bytes = std::fs::read(&path)
                        .unwrap_or_else(|e| panic!("{}: {e} ({HINT})", path.display()));
                    let (_, split) = Metadata::parse_prefix(&bytes).unwrap();
                    let want = VariantRef::try_new(&bytes[..split], &bytes[split..]).unwrap();
                    let got = VariantRef::try_new(m, v).unwrap();
                    if got != want || variant_to_json_string(&got) != variant_to_json_string(&want)
                    {
                        failures.push(format!(
                            "case {n} row {row}: got {} expected {}",
                            variant_to_json_string(&got),
                            variant_to_json_string(&want)
                        ));
                        ok = false;
                    }
                }
                (got, want) => {
                    failures.push(format!(
                        "case {n} row {row}: got {:?} expected {want:?}",
                        got.is_some()
                    ));
                    ok = false;
                }
            }
        }
        passed += ok as usize;
    }
    assert!(
        failures.is_empty(),
        "{} passed; failures:\n{}",
        passed,
        failures.join("\n")
    );
    assert_eq!(passed, 137, "every case but case 3 is checked");
}
