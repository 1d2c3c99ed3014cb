//! `encode`, `infer` and `roundtrip`: JSON Lines in.

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use vshred::encode::{
    DatasetReport, DatasetSplit, EncodeOptions, LayoutChoice, LeftUnshredded, LineCounts,
    PartReport, ShredMode, encode, encode_dataset, infer_columns, layout_costs, layout_json,
};
use vshred::infer::Preset;
use vshred::json::{JsonLines, JsonParser, write_json};
use vshred::output::Output;
use vshred::parquet::{Compression, DecimalMode, TypedValues};
use vshred::variant::{VariantBuilder, VariantRef};

use crate::args::{JsonArgs, LayoutArgs, at_least_one};
use crate::count;
use crate::failure::{Context, Failure, usage};
use crate::input::{is_stdin, open_input};

#[derive(Args)]
pub(crate) struct EncodeArgs {
    /// Input JSON Lines, or `-` for stdin.
    input: PathBuf,
    /// Output Parquet file, or `-` for stdout. A symbolic link is followed;
    /// a device or FIFO is written directly; an existing file is replaced
    /// only once the new one is complete. With --max-file-rows or
    /// --max-file-bytes: a directory, made if missing.
    output: PathBuf,
    /// Write a dataset: OUTPUT is a directory of files part-00000.parquet,
    /// part-00001.parquet, ..., each of at most N lines, each renamed into
    /// place once complete.
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>)]
    max_file_rows: Option<u64>,
    /// Write a dataset (as --max-file-rows) whose files end after the batch
    /// with which they reach B bytes (so may pass it by one batch): a number
    /// of bytes, or with K, M or G (powers of 1024): 128M.
    #[arg(long, value_name = "B", value_parser = crate::args::byte_size)]
    max_file_bytes: Option<u64>,
    /// Add the files to a directory that holds Parquet files already,
    /// numbered after its highest part-NNNNN.parquet (without it, such a
    /// directory is refused).
    #[arg(long)]
    append: bool,
    #[command(flatten)]
    layout: LayoutArgs,
    /// Shredding: `auto` (our inference), `spark` (Spark 4.3's), `none`, a
    /// layout in the JSON form that `vshred infer` prints, or a schema file
    /// holding one.
    #[arg(
        long,
        value_name = "auto|spark|none|LAYOUT|SCHEMA.json",
        default_value = "auto"
    )]
    shred: String,
    /// Physical type of typed decimals.
    #[arg(long, value_enum, default_value_t = DecimalArg::Int)]
    decimal: DecimalArg,
    /// Compression: `zstd` (level 1, Variant `metadata` and `value` at 3),
    /// `zstd:LEVEL` (1 to 22 for every column: smaller and slower as it
    /// grows), `snappy` or `none`.
    #[arg(long, value_name = "zstd[:LEVEL]|snappy|none", default_value = "zstd")]
    compression: Compression,
    /// Rows per row group (at least 1).
    #[arg(long, value_name = "N", default_value_t = 128 * 1024, value_parser = at_least_one::<usize>)]
    row_group_rows: usize,
    /// Add a bloom filter for a shredded path (`$.id`, or `COLUMN.path`
    /// such as `v.user.id`) or an ordinary column (repeatable).
    #[arg(long = "bloom-filter", value_name = "PATH")]
    bloom_filters: Vec<String>,
    /// Count and skip bad lines instead of failing on the first.
    #[arg(long)]
    skip_bad_lines: bool,
}

impl EncodeArgs {
    /// How to split the output into a dataset, if it is one.
    fn dataset_split(&self) -> Option<DatasetSplit> {
        (self.max_file_rows.is_some() || self.max_file_bytes.is_some()).then_some(DatasetSplit {
            max_file_rows: self.max_file_rows,
            max_file_bytes: self.max_file_bytes,
            append: self.append,
        })
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum DecimalArg {
    Int,
    Flba,
}

#[derive(Args)]
pub(crate) struct InferArgs {
    /// Input JSON Lines, or `-` for stdin.
    input: PathBuf,
    #[command(flatten)]
    layout: LayoutArgs,
    /// Inference preset.
    #[arg(long, value_enum, default_value_t = PresetArg::Auto)]
    shred: PresetArg,
    /// Instead of the layout, a markdown table of the sample written with
    /// it: each leaf's bytes before and after compression, and, for the
    /// typed leaves the cost model priced, its estimate and encoding.
    #[arg(long)]
    costs: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum PresetArg {
    Auto,
    Spark,
}

/// The `--shred` choice: a preset, or a schema file.
fn shred_mode(shred: &str, layout: &LayoutArgs) -> Result<ShredMode, Failure> {
    let mode = ShredMode::from_choice(shred, layout.infer_options(Preset::Default)).map_err(
        |e| match e.kind() {
            vshred::ErrorKind::Usage => usage(format!("--shred {}", e.message())),
            _ => Failure::Vshred(e),
        },
    )?;
    // They limit what is inferred; a layout given is written as it is.
    let limits = layout.limits_given();
    if !limits.is_empty() && !matches!(mode, ShredMode::Infer(_)) {
        eprintln!(
            "vshred: warning: {} limit{} what is inferred, and --shred {shred} infers nothing",
            limits.join(", "),
            if limits.len() == 1 { "s" } else { "" },
        );
    }
    Ok(mode)
}

pub(crate) fn run_encode(args: EncodeArgs) -> Result<(), Failure> {
    let shred = shred_mode(&args.shred, &args.layout)?;
    let mut options = EncodeOptions {
        variant_fields: args.layout.variant_fields.clone(),
        shred,
        skip_bad_lines: args.skip_bad_lines,
        sample_rows: args.layout.sample_rows,
        bloom_filters: args.bloom_filters.clone(),
        inexact_numbers: args.layout.json.inexact_numbers(),
        duplicate_keys: args.layout.json.duplicate_keys(),
        ..EncodeOptions::default()
    };
    options.write.decimals = match args.decimal {
        DecimalArg::Int => DecimalMode::Int,
        DecimalArg::Flba => DecimalMode::Flba,
    };
    options.write.compression = args.compression;
    options.write.row_group_rows = args.row_group_rows;

    let to_stdout = args.output == Path::new("-");
    let input_path = (!is_stdin(&args.input)).then_some(args.input.as_path());
    let split = args.dataset_split();
    if args.append && split.is_none() {
        return Err(usage(
            "--append adds files to a dataset directory, which --max-file-rows N or --max-file-bytes B writes: give one of them too (a single file is replaced whole, never added to)".into(),
        ));
    }
    if split.is_some() {
        if to_stdout {
            return Err(usage(
                "--max-file-rows and --max-file-bytes write a directory of files: give a directory, not -".into(),
            ));
        }
    } else if to_stdout {
        if io::stdout().is_terminal() {
            return Err(usage(
                "standard output is a terminal: Parquet is binary (redirect it to a file, or give an output path)".into(),
            ));
        }
        if let Some(input) = input_path {
            vshred::output::check_stdout_is_not_input(input)?;
        }
    } else {
        // A directory is where a dataset's files go.
        if vshred::output::names_a_directory(&args.output) {
            return Err(usage(format!(
                "{}: a directory takes a dataset of files, which --max-file-rows N or --max-file-bytes N writes; give a file's name to write one file",
                args.output.display()
            )));
        }
        vshred::output::check_output_is_not_input(&args.output, input_path)?;
    }
    let mut input = open_input(&args.input)?;
    let input_size = input_path
        .and_then(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let bar = progress_bar(input_size);
    let mut progress = |bytes| bar.set_position(bytes);
    if let Some(split) = split {
        let report = encode_dataset(&mut input, &args.output, &options, &split, &mut progress)
            .context(&args.input);
        bar.finish_and_clear();
        let report = report?;
        warn_about_lines(&report.lines);
        warn_unsampled(
            &report.unsampled_variant_fields,
            &report.unsampled_layout_fields,
        );
        warn_about_partitions(&args.output, &report);
        print_dataset(&args.output, &report);
        return Ok(());
    }
    let output = if to_stdout {
        Output::Stream(Box::new(io::stdout()))
    } else {
        Output::from(&args.output)
    };
    let report = encode(&mut input, output, &options, &mut progress).context(&args.input);
    bar.finish_and_clear();
    let report = report.map_err(|e| cut_short(e, &args.output))?;
    warn_about_lines(&report.lines);
    warn_unsampled(
        &report.unsampled_variant_fields,
        &report.unsampled_layout_fields,
    );
    for left in &report.left_unshredded {
        say_left_unshredded(None, left);
    }
    let whole_lines = options.variant_fields.is_empty();
    // A regular file's: opening a FIFO again would wait for a writer.
    let file = input_path.filter(|_| input_size.is_some());
    if whole_lines
        && report.written.rows == 1
        && file.is_some_and(vshred::json::file_starts_with_an_array)
    {
        eprintln!(
            "vshred: warning: the input is one line holding a JSON array, written as one row (`jq -c '.[]' {}` writes its elements as JSON Lines, a row each)",
            args.input.display()
        );
    }
    if !to_stdout {
        eprintln!(
            "vshred: wrote {}: {} in {}, {} bytes",
            args.output.display(),
            count(report.written.rows, "row"),
            count(report.written.row_groups as u64, "row group"),
            report.written.bytes
        );
    }
    Ok(())
}

/// A pipe or FIFO whose reader went before the file was complete: a
/// failure, where `cat`'s or `get`'s reader closing early (`| head`) asks
/// for no more text.
fn cut_short(e: Failure, output: &Path) -> Failure {
    if !e.is_broken_pipe() {
        return e;
    }
    let output = match output == Path::new("-") {
        true => "standard output".into(),
        false => output.display().to_string(),
    };
    Failure::Io(io::Error::other(format!(
        "{output} was closed before the Parquet file was complete: its reader has a file cut short"
    )))
}

/// Says why `auto` left a Variant column unshredded, and by what sizes,
/// which a user who expects typed columns would otherwise find out from
/// `vshred schema`; `file` names a dataset's file.
fn say_left_unshredded(file: Option<&str>, left: &LeftUnshredded) {
    let what = match (left.whole_file, left.in_row_groups) {
        (true, _) => "written alone, it makes a file of",
        (false, true) => "its sampled lines, written alone in the file's row groups, make",
        (false, false) => "its sampled lines' column chunks are",
    };
    let why = match left.smaller_columns {
        true => "whole values compress better than their fields apart",
        false => "its typed columns' footer entries would outweigh what they save",
    };
    let file = file.map_or(String::new(), |f| format!("{f}: "));
    eprintln!(
        "vshred: {file}{} left unshredded: {what} {} bytes so, {} shredded ({why}; --shred spark shreds it whatever it costs)",
        left.column, left.unshredded_bytes, left.shredded_bytes
    );
}

/// Warns when the files just written into a `key=value` directory
/// disagree on a column's type with the files of the other directories of
/// that key (`logs/day=*/` for `logs/day=2024-03-02/`): a read of that
/// column over the whole dataset fails. Each run infers its own layout,
/// so a field of integers one day and decimals the next is an int64
/// column in one directory and a Variant column in the other.
fn warn_about_partitions(output: &Path, report: &DatasetReport) {
    let Some(root) = vshred::dataset::hive::partition_root(output) else {
        return;
    };
    let written: Vec<PathBuf> = report.files.iter().map(|f| f.path.clone()).collect();
    // A dataset that cannot be read as one says so when read.
    let Ok(Some(dataset)) = vshred::dataset::Dataset::of_partitions(root) else {
        return;
    };
    let Ok(found) = dataset.disagreements_with(&written) else {
        return;
    };
    for (name, d) in found {
        eprintln!(
            "vshred: warning: column {name:?} is {d}: a read of it over {} fails (--variant-field {name} makes it a Variant column in every file, which files may shred apart)",
            root.display()
        );
    }
}

/// What `encode` says about the input lines: bad lines skipped, inexact
/// numbers.
fn warn_about_lines(lines: &LineCounts) {
    if lines.bad_lines > 0 {
        eprintln!(
            "vshred: skipped {}; the first: {}",
            count(lines.bad_lines, "bad line"),
            lines.first_bad_line.as_deref().unwrap_or("")
        );
    }
    warn_inexact_numbers(lines.inexact_numbers, lines.first_inexact_line);
}

/// What `encode` and `infer` say of Variant fields and fields of a layout
/// given that no sampled line has.
fn warn_unsampled(variant_fields: &[String], layout_fields: &[String]) {
    for name in variant_fields {
        eprintln!(
            "vshred: warning: --variant-field {name:?}: no sampled line has this field; its column is null there (misspelt?)"
        );
    }
    for path in layout_fields {
        eprintln!(
            "vshred: warning: --shred: no sampled line has the layout's field {path}; its typed column is null there (misspelt?)"
        );
    }
}

/// One line per file whose layout was re-inferred, then the dataset.
fn print_dataset(dir: &Path, report: &DatasetReport) {
    let percent = |share: Option<f64>| share.map_or("?".into(), |s| format!("{:.1}%", 100.0 * s));
    let name = |part: &PartReport| {
        part.path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    };
    for part in &report.files {
        let why = match part.layout {
            LayoutChoice::Reinferred { kept, fresh } => {
                let kept = kept.map_or("a line it cannot hold".into(), |k| percent(Some(k)));
                format!(
                    "typed share of its first lines: {kept} with the layout before, {} with this one",
                    percent(Some(fresh))
                )
            }
            LayoutChoice::Unused { empty, of } => {
                format!(
                    "{empty} of the {of} typed columns of the layout before hold none of its first lines' values"
                )
            }
            LayoutChoice::First | LayoutChoice::Kept => String::new(),
        };
        if !why.is_empty() {
            eprintln!(
                "vshred: {}: layout re-inferred ({why}): {}",
                name(part),
                layout_json(&part.columns)
            );
        }
        for left in &part.left_unshredded {
            say_left_unshredded(Some(&name(part)), left);
        }
        for path in &part.bloom_filters_left_out {
            eprintln!(
                "vshred: warning: {}: no bloom filter for {path:?}: its layout does not shred it",
                name(part)
            );
        }
    }
    if report.files.is_empty() {
        // Appended from an input of no rows: no file of none.
        eprintln!(
            "vshred: appended nothing to {}: the input has no rows",
            dir.display()
        );
        return;
    }
    let (mut rows, mut bytes, mut typed) = (0, 0, TypedValues::default());
    for part in &report.files {
        rows += part.written.rows;
        bytes += part.written.bytes;
        if let Some(values) = part.written.typed_values {
            typed.typed += values.typed;
            typed.residual += values.residual;
        }
    }
    let span = match (report.files.first(), report.files.last()) {
        (Some(first), Some(last)) if report.files.len() > 1 => {
            let others = match report.numbered_without_gaps() {
                true => "",
                false => ", numbers other writers took between",
            };
            format!(" ({} to {}{others})", name(first), name(last))
        }
        (Some(only), _) => format!(" ({})", name(only)),
        _ => String::new(),
    };
    eprintln!(
        "vshred: wrote {} to {}{span}: {}, {bytes} bytes, {} of Variant values in typed columns",
        count(report.files.len() as u64, "file"),
        dir.display(),
        count(rows, "row"),
        percent(Some(typed.share()))
    );
}

/// A progress bar on stderr for reading `total` bytes (a spinner when the
/// size is not known), drawn only when stderr is a terminal.
fn progress_bar(total: Option<u64>) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let target = if io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let (bar, template) = match total {
        Some(n) => (
            ProgressBar::with_draw_target(Some(n), target),
            "{bar:30} {bytes}/{total_bytes} read, {bytes_per_sec}, {eta} left",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{spinner} {bytes} read, {bytes_per_sec}, {elapsed}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// The warning that ends a run which stored numbers as inexact doubles.
fn warn_inexact_numbers(numbers: u64, first_line: Option<u64>) {
    if numbers > 0 {
        let line = first_line.map_or(String::new(), |l| format!(" (the first on line {l})"));
        eprintln!(
            "vshred: warning: {} that no decimal holds (more than 38 digits) stored as the nearest double{line}",
            count(numbers, "number")
        );
    }
}

pub(crate) fn run_infer(args: InferArgs) -> Result<(), Failure> {
    let preset = match args.shred {
        PresetArg::Auto => Preset::Default,
        PresetArg::Spark => Preset::Spark,
    };
    let options = EncodeOptions {
        variant_fields: args.layout.variant_fields.clone(),
        shred: ShredMode::Infer(args.layout.infer_options(preset)),
        sample_rows: args.layout.sample_rows,
        inexact_numbers: args.layout.json.inexact_numbers(),
        duplicate_keys: args.layout.json.duplicate_keys(),
        ..EncodeOptions::default()
    };
    let mut input = open_input(&args.input)?;
    if args.costs {
        let costs = layout_costs(&mut input, &options).context(&args.input)?;
        costs.write_markdown(&mut io::stdout().lock())?;
        return Ok(());
    }
    let inferred = infer_columns(&mut input, &options).context(&args.input)?;
    warn_unsampled(
        &inferred.unsampled_variant_fields,
        &inferred.unsampled_layout_fields,
    );
    for left in &inferred.left_unshredded {
        say_left_unshredded(None, left);
    }
    writeln!(io::stdout().lock(), "{}", layout_json(&inferred.columns))?;
    warn_inexact_numbers(inferred.inexact_numbers, inferred.first_inexact_line);
    Ok(())
}

pub(crate) fn run_roundtrip(input: &Path, json: &JsonArgs, sizes: bool) -> Result<(), Failure> {
    let mut text = Vec::new();
    open_input(input)?.read_to_end(&mut text)?;
    let mut builder = VariantBuilder::new().with_duplicate_keys(json.duplicate_keys());
    let parser = JsonParser::new().with_inexact_numbers(json.inexact_numbers());
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut line_out = Vec::new();
    let (mut inexact, mut first_inexact) = (0u64, None);
    for line in JsonLines::new(&text) {
        // Each line its own Variant: its metadata holds its own names alone.
        builder.reset();
        let n = parser
            .parse(line.text, &mut builder)
            .map_err(|e| line.locate(e))
            .context(input)?;
        if n > 0 {
            inexact += u64::from(n);
            first_inexact = first_inexact.or(Some(line.line));
        }
        let (metadata, value) = builder.finish();
        let variant = VariantRef::try_new(metadata, value).context(input)?;
        line_out.clear();
        if sizes {
            writeln!(line_out, "{}\t{}", metadata.len(), value.len())?;
        } else {
            write_json(&variant, &mut line_out);
            line_out.push(b'\n');
        }
        out.write_all(&line_out)?;
    }
    out.flush()?;
    warn_inexact_numbers(inexact, first_inexact);
    Ok(())
}
