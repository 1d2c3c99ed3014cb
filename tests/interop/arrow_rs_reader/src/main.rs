//! Reads a Parquet file with arrow-rs (`parquet` crate, `variant_experimental`)
//! and prints one line per row: the Variant column reconstructed as JSON by
//! arrow-rs itself (`unshred_variant` + `variant_to_json`).
//!
//! Usage: arrow_rs_reader FILE.parquet [COLUMN]   (COLUMN defaults to `v`)
//!
//! A SQL NULL row prints as the bare word `SQLNULL` (a Variant null prints `null`).
//! Fails (exit 1, message on stderr) if the column does not carry the
//! `arrow.parquet.variant` extension type, i.e. arrow-rs does not see a Variant.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use arrow::array::{Array, ArrayRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::variant::{unshred_variant, variant_to_json, VariantArray, VariantType};

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: arrow_rs_reader FILE.parquet [COLUMN]")?;
    let column = args.next().unwrap_or_else(|| "v".to_string());

    let file = std::fs::File::open(&path)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    let schema = builder.schema().clone();
    let field = schema.field_with_name(&column)?;
    // The writer must mark the column so that Arrow tools see a Variant, not a struct.
    if !field.has_valid_extension_type::<VariantType>() {
        return Err(format!(
            "column {column} is not recognised as a Variant (no arrow.parquet.variant extension type); \
             Arrow type {}",
            field.data_type()
        )
        .into());
    }
    let reader = builder.build()?;

    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for batch in reader {
        let batch = batch?;
        let col = batch
            .column_by_name(&column)
            .ok_or_else(|| format!("no column {column}"))?;
        let shredded = VariantArray::try_new(col)?;
        let unshredded: ArrayRef = ArrayRef::from(unshred_variant(&shredded)?);
        let json = variant_to_json(&unshredded)?;
        for i in 0..json.len() {
            if json.is_null(i) {
                writeln!(out, "SQLNULL")?;
            } else {
                writeln!(out, "{}", json.value(i))?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("arrow_rs_reader: {e}");
            ExitCode::FAILURE
        }
    }
}
