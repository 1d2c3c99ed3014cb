//! `report`: the layouts of one JSON Lines input compared, or Parquet
//! files measured as they are.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use vshred::parquet::starts_as_parquet;
use vshred::report::{ReportOptions, compare_layouts, measure_files};

use crate::args::{JsonArgs, at_least_one};
use crate::failure::{Context, Failure};
use crate::input::{is_parquet_file_or_dataset, is_stdin, is_stream, open_input};

#[derive(Args)]
pub(crate) struct ReportArgs {
    /// JSON Lines to encode in every layout (`-` for stdin), or Parquet
    /// files to measure as they are, side by side.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Top-level field to store as a Variant column (repeatable), as for
    /// `encode`.
    #[arg(long = "variant-field", value_name = "NAME")]
    variant_fields: Vec<String>,
    #[command(flatten)]
    json: JsonArgs,
    /// The Variant column queried (default: the only one, or `v`).
    #[arg(long)]
    column: Option<String>,
    /// A path to time `variant_get` on, optionally with a type:
    /// `'$.user.id'`, `'$.price as decimal(18,2)'` (repeatable). Default:
    /// every top-level shredded field, as the type our inference chose.
    #[arg(long = "query", value_name = "PATH")]
    queries: Vec<String>,
    /// Runs per timing (at least 1); the report gives the median.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = at_least_one::<usize>)]
    runs: usize,
    /// Also write the report as a self-contained HTML page with bar charts.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Keep the encoded files in this directory.
    #[arg(long, value_name = "DIR")]
    keep_files: Option<PathBuf>,
}

pub(crate) fn run_report(args: ReportArgs) -> Result<(), Failure> {
    let options = ReportOptions {
        variant_fields: args.variant_fields,
        column: args.column,
        queries: args
            .queries
            .iter()
            .map(|q| q.parse())
            .collect::<vshred::Result<_>>()
            .map_err(|e| Failure::Vshred(e.in_file("--query")))?,
        runs: args.runs,
        keep_dir: args.keep_files,
        html: args.html,
        inexact_numbers: args.json.inexact_numbers(),
        duplicate_keys: args.json.duplicate_keys(),
    };
    // A stream is read once, whole: opening a pipe again waits for a
    // writer that has gone, and its first bytes, read to tell Parquet from
    // JSON, would be lost.
    let streamed = |input: &Path| -> Result<Option<Vec<u8>>, Failure> {
        if !is_stream(input) {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        open_input(input)?.read_to_end(&mut bytes).context(input)?;
        Ok(Some(bytes))
    };
    let first = &args.inputs[0];
    let first_streamed = streamed(first)?;
    let first_is_parquet = match &first_streamed {
        Some(bytes) => starts_as_parquet(bytes),
        None => is_parquet_file_or_dataset(first),
    };
    let report = if first_is_parquet {
        // Parquet from a stream is measured from a file of its bytes, each
        // in a directory of its own (two pipes may have one name).
        let mut copies = None;
        let mut first_streamed = first_streamed;
        let mut files = Vec::with_capacity(args.inputs.len());
        for (i, input) in args.inputs.iter().enumerate() {
            let bytes = match i {
                0 => first_streamed.take(),
                _ => streamed(input)?,
            };
            let Some(bytes) = bytes else {
                files.push(input.clone());
                continue;
            };
            let name = match input.file_name() {
                _ if is_stdin(input) => "stdin".into(),
                Some(name) => name.to_string_lossy().into_owned(),
                None => format!("input-{i}"),
            };
            let dir = match &copies {
                Some(dir) => dir,
                None => copies.insert(tempfile::tempdir()?),
            };
            let own = dir.path().join(i.to_string());
            std::fs::create_dir(&own)?;
            let copy = own.join(format!("{name}.parquet"));
            std::fs::write(&copy, bytes).context(&copy)?;
            files.push(copy);
        }
        measure_files(&files, &options)?
    } else if let [input_path] = args.inputs.as_slice() {
        let text = match first_streamed {
            Some(bytes) => bytes,
            None => std::fs::read(input_path).context(input_path)?,
        };
        compare_layouts(&text, &input_path.display().to_string(), &options).context(input_path)?
    } else {
        return Err(Failure::Vshred(
            vshred::Error::from_message(
                "give one JSON Lines input, or Parquet files (this is not a Parquet file)".into(),
            )
            .in_file(first),
        ));
    };
    let mut out = io::stdout().lock();
    report.write_markdown(&mut out)?;
    out.flush()?;
    Ok(())
}
