//! The `vshred` command: a thin layer over the library. Arguments become
//! options, each subcommand is one library call, and every failure is one
//! line on stderr with exit code 1.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow::array::Array;
use clap::{Args, Parser, Subcommand, ValueEnum};
use vshred::encode::{EncodeOptions, ShredMode, encode, infer_columns};
use vshred::get::{Accumulator, Aggregate, ResultColumn};
use vshred::infer::{InferOptions, Preset};
use vshred::json::{JsonLines, JsonParser, write_json};
use vshred::parquet::{ColumnSpec, Compression, DecimalMode, GetRequest, ParquetFile};
use vshred::predicate::Predicate;
use vshred::report::{ReportOptions, compare_layouts, measure_files};
use vshred::shred::ShreddingSchema;
use vshred::variant::{DuplicateKeys, VariantBuilder, VariantRef};

/// Parquet Variant: encode JSON as Variant, shred it into typed columns,
/// and read it back by path.
#[derive(Parser)]
#[command(name = "vshred", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode JSON Lines into a Parquet file with shredded Variant columns.
    Encode(EncodeArgs),
    /// Print the shredding schema that `encode` would choose.
    Infer(InferArgs),
    /// Print a Parquet file's schema and the size of each column.
    Schema {
        /// The Parquet file.
        file: PathBuf,
    },
    /// Print each row as one JSON object, Variants reconstructed.
    Cat {
        /// The Parquet file.
        file: PathBuf,
    },
    /// Extract a path from a Variant column, reading only what it needs.
    Get(GetArgs),
    /// Compare layouts: encode JSON Lines unshredded and shredded (auto and
    /// spark, int and flba decimals), or take Parquet files as they are, and
    /// print sizes and read latencies as markdown.
    Report(ReportArgs),
    /// Encode each JSON line as a Variant and print it back as JSON: shows
    /// exactly what the encoding keeps.
    Roundtrip {
        /// Input JSON Lines file, or `-` for stdin.
        input: PathBuf,
        /// Keep the last value of a duplicate key instead of failing.
        #[arg(long)]
        keep_last_duplicate: bool,
        /// Print, per line, the metadata and value sizes in bytes instead of
        /// the JSON.
        #[arg(long)]
        sizes: bool,
    },
}

#[derive(Args)]
struct LayoutArgs {
    /// Top-level field to store as a Variant column (repeatable); each line
    /// must then be an object whose other fields become ordinary columns.
    /// Without it, each whole line is a Variant column named `v`.
    #[arg(long = "variant-field", value_name = "NAME")]
    variant_fields: Vec<String>,
    /// Lines used to choose column types and shredding.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    sample_rows: usize,
    /// Most Parquet columns a Variant column may shred into.
    #[arg(long, value_name = "N")]
    max_columns: Option<usize>,
    /// Deepest nesting that gets typed columns.
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// Share of sampled rows a field must appear in to get a column.
    #[arg(long, value_name = "F")]
    min_frequency: Option<f64>,
}

#[derive(Args)]
struct EncodeArgs {
    /// Input JSON Lines, or `-` for stdin.
    input: PathBuf,
    /// Output Parquet file, or `-` for stdout.
    output: PathBuf,
    #[command(flatten)]
    layout: LayoutArgs,
    /// Shredding: `auto` (our inference), `spark` (Spark 4.3's), `none`, or
    /// a schema file in the JSON form that `vshred infer` prints.
    #[arg(
        long,
        value_name = "auto|spark|none|SCHEMA.json",
        default_value = "auto"
    )]
    shred: String,
    /// Physical type of typed decimals.
    #[arg(long, value_enum, default_value_t = DecimalArg::Int)]
    decimal: DecimalArg,
    /// Compression: `zstd` (level 1), `zstd:LEVEL` (1 to 22: smaller and
    /// slower as it grows), `snappy` or `none`.
    #[arg(long, value_name = "zstd[:LEVEL]|snappy|none", default_value = "zstd")]
    compression: Compression,
    /// Rows per row group.
    #[arg(long, value_name = "N", default_value_t = 128 * 1024)]
    row_group_rows: usize,
    /// Add a bloom filter for a shredded path (`$.id`, or `COLUMN.path`
    /// such as `v.user.id`) or an ordinary column (repeatable).
    #[arg(long = "bloom-filter", value_name = "PATH")]
    bloom_filters: Vec<String>,
    /// Count and skip bad lines instead of failing on the first.
    #[arg(long)]
    skip_bad_lines: bool,
}

#[derive(Args)]
struct InferArgs {
    /// Input JSON Lines, or `-` for stdin.
    input: PathBuf,
    #[command(flatten)]
    layout: LayoutArgs,
    /// Inference preset.
    #[arg(long, value_enum, default_value_t = PresetArg::Auto)]
    shred: PresetArg,
}

#[derive(Args)]
struct GetArgs {
    /// The Parquet file.
    file: PathBuf,
    /// The path, e.g. `$.user.id`, `$.tags[0]`, `$['key.with.dots']`.
    path: String,
    /// The Variant column (default: the only one, or `v`).
    #[arg(long)]
    column: Option<String>,
    /// Result type: bool, int8, int16, int32, int64, float, double,
    /// decimal(P,S), string, binary, date, time, timestamp, timestamp_ntz,
    /// timestamp_nanos, timestamp_ntz_nanos, uuid, or variant.
    #[arg(long = "as", value_name = "TYPE", default_value = "variant")]
    as_type: String,
    /// Only rows where `PATH OP LITERAL` holds (OP: = == != < <= > >=).
    #[arg(long = "where", value_name = "PREDICATE")]
    filter: Option<String>,
    /// Print one aggregate instead of the values.
    #[arg(long, value_enum)]
    agg: Option<AggArg>,
    /// Fail on a value that does not convert to the type, instead of null.
    #[arg(long)]
    strict: bool,
    /// Print how many row groups were read, on stderr.
    #[arg(long)]
    stats: bool,
}

#[derive(Args)]
struct ReportArgs {
    /// JSON Lines to encode in every layout (`-` for stdin), or Parquet
    /// files to measure as they are, side by side.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Top-level field to store as a Variant column (repeatable), as for
    /// `encode`.
    #[arg(long = "variant-field", value_name = "NAME")]
    variant_fields: Vec<String>,
    /// The Variant column queried (default: the only one, or `v`).
    #[arg(long)]
    column: Option<String>,
    /// A path to time `variant_get` on, optionally with a type:
    /// `'$.user.id'`, `'$.price as decimal(18,2)'` (repeatable). Default:
    /// every top-level shredded field, as the type our inference chose.
    #[arg(long = "query", value_name = "PATH")]
    queries: Vec<String>,
    /// Runs per timing; the report gives the median.
    #[arg(long, value_name = "N", default_value_t = 5)]
    runs: usize,
    /// Also write the report as a self-contained HTML page with bar charts.
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// Keep the encoded files in this directory.
    #[arg(long, value_name = "DIR")]
    keep_files: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum DecimalArg {
    Int,
    Flba,
}

#[derive(Clone, Copy, ValueEnum)]
enum PresetArg {
    Auto,
    Spark,
}

#[derive(Clone, Copy, ValueEnum)]
enum AggArg {
    Count,
    Sum,
    Min,
    Max,
}

fn main() -> ExitCode {
    // The library turns the parquet crate's panics on corrupt files into
    // errors, so the default hook must not print them as crashes; any other
    // panic is a bug, reported below in one line.
    std::panic::set_hook(Box::new(|_| {}));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let outcome = std::panic::catch_unwind(|| run(cli)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Failure::Io(io::Error::other(format!(
            "internal error (please report it): {what}"
        ))))
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vshred: {e}");
            ExitCode::from(1)
        }
    }
}

/// `--help` and `--version` print as clap prints them and succeed; a usage
/// error is one line, like every other failure, with exit code 1.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprintln!("vshred: a subcommand is required (see vshred --help)");
            ExitCode::from(1)
        }
        _ => {
            // clap's message, up to its usage and hint paragraphs, on one
            // line: "invalid value 'x' for '--decimal <DECIMAL>' [possible
            // values: int, flba]".
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|line| !line.trim().is_empty())
                .map(str::trim)
                .collect();
            let message = message.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            eprintln!("vshred: {message} (see vshred --help)");
            ExitCode::from(1)
        }
    }
}

/// Why a command failed: a library error (with where) or an I/O error on
/// the standard streams.
enum Failure {
    Vshred(String, vshred::Error),
    Io(io::Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Vshred(context, e) if context.is_empty() => write!(f, "{e}"),
            Failure::Vshred(context, e) => write!(f, "{context}: {e}"),
            Failure::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

/// Attaches a file name to library errors.
trait Context<T> {
    fn context(self, what: &Path) -> Result<T, Failure>;
}

impl<T> Context<T> for vshred::Result<T> {
    fn context(self, what: &Path) -> Result<T, Failure> {
        self.map_err(|e| Failure::Vshred(what.display().to_string(), e))
    }
}

fn plain<T>(r: vshred::Result<T>) -> Result<T, Failure> {
    r.map_err(|e| Failure::Vshred(String::new(), e))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Encode(args) => run_encode(args),
        Command::Infer(args) => run_infer(args),
        Command::Schema { file } => run_schema(&file),
        Command::Cat { file } => run_cat(&file),
        Command::Get(args) => run_get(args),
        Command::Report(args) => run_report(args),
        Command::Roundtrip {
            input,
            keep_last_duplicate,
            sizes,
        } => run_roundtrip(&input, keep_last_duplicate, sizes),
    }
}

fn open_input(path: &Path) -> Result<Box<dyn BufRead>, Failure> {
    if path == Path::new("-") {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())));
    }
    let file = File::open(path)
        .map_err(|e| Failure::Io(io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?;
    Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
}

fn infer_options(layout: &LayoutArgs, preset: Preset) -> InferOptions {
    let mut options = InferOptions::new(preset).with_sample_rows(layout.sample_rows);
    if let Some(n) = layout.max_columns {
        options = options.with_max_columns(n);
    }
    if let Some(n) = layout.max_depth {
        options = options.with_max_depth(n);
    }
    if let Some(f) = layout.min_frequency {
        options = options.with_min_frequency(f);
    }
    options
}

fn run_encode(args: EncodeArgs) -> Result<(), Failure> {
    let shred = match args.shred.as_str() {
        "auto" => ShredMode::Infer(infer_options(&args.layout, Preset::Default)),
        "spark" => ShredMode::Infer(infer_options(&args.layout, Preset::Spark)),
        "none" => ShredMode::None,
        file => {
            let path = Path::new(file);
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::Io(io::Error::new(e.kind(), format!("{file}: {e}"))))?;
            ShredMode::Schema(ShreddingSchema::from_json(&text).context(path)?)
        }
    };
    let mut options = EncodeOptions {
        variant_fields: args.layout.variant_fields.clone(),
        shred,
        skip_bad_lines: args.skip_bad_lines,
        sample_rows: args.layout.sample_rows,
        bloom_filters: args.bloom_filters.clone(),
        ..EncodeOptions::default()
    };
    options.write.decimals = match args.decimal {
        DecimalArg::Int => DecimalMode::Int,
        DecimalArg::Flba => DecimalMode::Flba,
    };
    options.write.compression = args.compression;
    options.write.row_group_rows = args.row_group_rows;

    let mut input = open_input(&args.input)?;
    let to_stdout = args.output == Path::new("-");
    // A file for stdout too: Parquet's footer comes last, so the whole file
    // is written before it can be copied out.
    let staging = if to_stdout {
        Some(tempfile::tempdir()?)
    } else {
        None
    };
    let output = match &staging {
        Some(dir) => dir.path().join("out.parquet"),
        None => args.output.clone(),
    };
    let show_progress = io::stderr().is_terminal();
    let mut progress = |bytes: u64| {
        if show_progress {
            eprint!("\rvshred: {:.1} MB read", bytes as f64 / 1e6);
        }
    };
    let report = encode(&mut input, &output, &options, &mut progress).context(&args.input);
    if show_progress {
        eprintln!();
    }
    let report = report?;
    if to_stdout {
        io::copy(&mut File::open(&output)?, &mut io::stdout().lock())?;
    }
    if report.bad_lines > 0 {
        eprintln!(
            "vshred: skipped {} bad lines; the first: {}",
            report.bad_lines,
            report.first_bad_line.as_deref().unwrap_or("")
        );
    }
    if !to_stdout {
        eprintln!(
            "vshred: wrote {}: {} rows in {} row groups, {} bytes",
            args.output.display(),
            report.written.rows,
            report.written.row_groups,
            report.written.bytes
        );
    }
    Ok(())
}

fn run_infer(args: InferArgs) -> Result<(), Failure> {
    let preset = match args.shred {
        PresetArg::Auto => Preset::Default,
        PresetArg::Spark => Preset::Spark,
    };
    let options = EncodeOptions {
        variant_fields: args.layout.variant_fields.clone(),
        shred: ShredMode::Infer(infer_options(&args.layout, preset)),
        sample_rows: args.layout.sample_rows,
        ..EncodeOptions::default()
    };
    let mut input = open_input(&args.input)?;
    let columns = infer_columns(&mut input, &options).context(&args.input)?;
    let variants: Vec<(&String, &ShreddingSchema)> = columns
        .iter()
        .filter_map(|c| match c {
            ColumnSpec::Variant { name, schema } => Some((name, schema)),
            ColumnSpec::Plain(_) => None,
        })
        .collect();
    let mut out = io::stdout().lock();
    match variants.as_slice() {
        [(_, schema)] => writeln!(out, "{schema}")?,
        many => {
            let body: Vec<String> = many
                .iter()
                .map(|(name, schema)| format!("{}:{schema}", json_string(name)))
                .collect();
            writeln!(out, "{{{}}}", body.join(","))?
        }
    }
    Ok(())
}

fn json_string(s: &str) -> String {
    let mut out = Vec::new();
    write_json(&VariantRef::String(s), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn run_schema(path: &Path) -> Result<(), Failure> {
    let file = ParquetFile::open(path).context(path)?;
    let metadata = file.metadata();
    let mut out = io::stdout().lock();
    let mut schema = Vec::new();
    parquet::schema::printer::print_schema(&mut schema, file.parquet_schema().root_schema());
    out.write_all(&schema)?;
    writeln!(
        out,
        "\n{} rows, {} row groups; Variant columns: {}",
        metadata.file_metadata().num_rows(),
        metadata.num_row_groups(),
        file.variant_columns().join(", ")
    )?;
    writeln!(out, "\n{:>14} {:>14}  column", "compressed", "uncompressed")?;
    let (mut total_c, mut total_u) = (0, 0);
    for leaf in file.leaf_sizes() {
        total_c += leaf.compressed;
        total_u += leaf.uncompressed;
        writeln!(
            out,
            "{:>14} {:>14}  {}",
            leaf.compressed,
            leaf.uncompressed,
            leaf.path.join(".")
        )?;
    }
    writeln!(out, "{total_c:>14} {total_u:>14}  (all columns)")?;
    Ok(())
}

fn run_cat(path: &Path) -> Result<(), Failure> {
    let file = ParquetFile::open(path).context(path)?;
    let mut out = io::stdout().lock();
    let mut write_error = None;
    file.json_lines(8192, |text| {
        out.write_all(&text).map_err(|e| {
            write_error = Some(e);
            vshred::Error::from_message("output closed".into())
        })
    })
    .map_err(|e| match write_error.take() {
        Some(io) => Failure::Io(io),
        None => Failure::Vshred(path.display().to_string(), e),
    })?;
    out.flush()?;
    Ok(())
}

fn run_get(args: GetArgs) -> Result<(), Failure> {
    let file = ParquetFile::open(&args.file).context(&args.file)?;
    let column = file
        .choose_variant_column(args.column.as_deref())
        .context(&args.file)?;
    let as_type = ShreddingSchema::from_type_name(&args.as_type)
        .filter(|t| !matches!(t, ShreddingSchema::Object(_) | ShreddingSchema::Array(_)))
        .ok_or_else(|| {
            Failure::Vshred(
                String::new(),
                vshred::Error::from_message(format!(
                    "unknown type {:?} for --as (e.g. int64, double, decimal(18,2), string, timestamp, variant)",
                    args.as_type
                )),
            )
        })?;
    let request = GetRequest {
        column,
        path: plain(args.path.parse())?,
        as_type,
        strict: args.strict,
        filter: args
            .filter
            .as_deref()
            .map(Predicate::parse)
            .transpose()
            .map_err(|e| Failure::Vshred(String::new(), e))?,
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut accumulator = args.agg.map(|a| {
        Accumulator::new(match a {
            AggArg::Count => Aggregate::Count,
            AggArg::Sum => Aggregate::Sum,
            AggArg::Min => Aggregate::Min,
            AggArg::Max => Aggregate::Max,
        })
    });
    let mut line = Vec::new();
    let mut write_error = None;
    let stats = file
        .get(&request, 8192, |result| {
            let values = ResultColumn::try_new(result)?;
            for i in 0..result.len() {
                if let Some(acc) = accumulator.as_mut() {
                    if let Some(v) = values.get(i)? {
                        acc.add(&v)?;
                    }
                    continue;
                }
                line.clear();
                values.write_json(i, &mut line)?;
                line.push(b'\n');
                if let Err(e) = out.write_all(&line) {
                    write_error = Some(e);
                    return Err(vshred::Error::from_message("output closed".into()));
                }
            }
            Ok(())
        })
        .map_err(|e| match write_error.take() {
            Some(io) => Failure::Io(io),
            None => Failure::Vshred(args.file.display().to_string(), e),
        })?;
    if let Some(acc) = accumulator {
        writeln!(out, "{}", acc.to_json())?;
        if acc.skipped() > 0 {
            eprintln!(
                "vshred: {} values were not numbers and were left out",
                acc.skipped()
            );
        }
    }
    out.flush()?;
    if args.stats {
        eprintln!(
            "vshred: read {} of {} row groups ({} rows; the column index ruled out {} page{})",
            stats.row_groups_read,
            stats.row_groups,
            stats.rows_read,
            stats.pages_skipped,
            if stats.pages_skipped == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn run_report(args: ReportArgs) -> Result<(), Failure> {
    let options = ReportOptions {
        variant_fields: args.variant_fields,
        column: args.column,
        queries: args
            .queries
            .iter()
            .map(|q| q.parse())
            .collect::<vshred::Result<_>>()
            .map_err(|e| Failure::Vshred("--query".into(), e))?,
        runs: args.runs,
        keep_dir: args.keep_files,
        html: args.html,
    };
    let first = &args.inputs[0];
    let mut input = open_input(first)?;
    let report = if first != Path::new("-") && input.fill_buf()?.starts_with(b"PAR1") {
        drop(input);
        match args.inputs.as_slice() {
            [only] => measure_files(&args.inputs, &options).context(only)?,
            // Errors reading a file name it.
            _ => plain(measure_files(&args.inputs, &options))?,
        }
    } else if let [input_path] = args.inputs.as_slice() {
        let mut text = Vec::new();
        input.read_to_end(&mut text)?;
        compare_layouts(&text, &input_path.display().to_string(), &options).context(input_path)?
    } else {
        return Err(Failure::Vshred(
            first.display().to_string(),
            vshred::Error::from_message(
                "give one JSON Lines input, or Parquet files (this is not a Parquet file)".into(),
            ),
        ));
    };
    let mut out = io::stdout().lock();
    report.write_markdown(&mut out)?;
    out.flush()?;
    Ok(())
}

fn run_roundtrip(input: &Path, keep_last_duplicate: bool, sizes: bool) -> Result<(), Failure> {
    let mut text = Vec::new();
    open_input(input)?.read_to_end(&mut text)?;
    let policy = if keep_last_duplicate {
        DuplicateKeys::KeepLast
    } else {
        DuplicateKeys::Error
    };
    let mut builder = VariantBuilder::new().with_duplicate_keys(policy);
    let parser = JsonParser::new();
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut line_out = Vec::new();
    for line in JsonLines::new(&text) {
        builder.start_row();
        parser
            .parse(line.text, &mut builder)
            .map_err(|e| line.locate(e))
            .context(input)?;
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
    Ok(())
}
