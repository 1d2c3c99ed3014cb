//! The `vshred` command: a thin layer over the library. Arguments become
//! options, each subcommand is one library call, and every failure is one
//! line on stderr with exit code 1.

mod sql;
mod worker;

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow::array::{Array, RecordBatch};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use vshred::dataset::storage::is_glob;
use vshred::dataset::{Dataset, DatasetStats};
use vshred::encode::{
    DatasetReport, DatasetSplit, EncodeOptions, LayoutChoice, LineCounts, PartReport, ShredMode,
    encode, encode_dataset, infer_columns, layout_costs, layout_json,
};
use vshred::get::{Accumulator, Aggregate, ResultColumn};
use vshred::infer::{InferOptions, Preset};
use vshred::json::{InexactNumbers, JsonLines, JsonParser, write_json};
use vshred::output::Output;
use vshred::parquet::{
    Compression, DecimalMode, GetRequest, ParquetFile, ScanOptions, TypedValues, magic_of,
    starts_as_parquet,
};
use vshred::predicate::Predicate;
use vshred::report::{ReportOptions, compare_layouts, measure_files};
use vshred::shred::ShreddingSchema;
use vshred::variant::{DuplicateKeys, VariantBuilder, VariantRef};

/// Parquet Variant: encode JSON as Variant, shred it into typed columns,
/// and read it back by path.
#[derive(Parser)]
#[command(name = "vshred", version, about, arg_required_else_help = true)]
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
    /// Print a Parquet file's schema and the size of each column; of a
    /// dataset, the columns of its files, how each file shreds each Variant
    /// column, and the columns' sizes summed.
    Schema {
        /// The Parquet file, a directory or glob of them, or `-` for stdin.
        file: PathBuf,
    },
    /// Print each row as one JSON object, Variants reconstructed.
    Cat(CatArgs),
    /// Extract a path from a Variant column, reading only what it needs.
    Get(GetArgs),
    /// Compare layouts: encode JSON Lines unshredded and shredded (auto and
    /// spark, int and flba decimals), or take Parquet files as they are, and
    /// print sizes and read latencies as markdown.
    Report(ReportArgs),
    /// Run SQL statements over Parquet files and datasets (`SELECT ...
    /// FROM 'dir/'`), with Spark's Variant functions (`variant_get`,
    /// `to_json`, `parse_json`, ...), here or on workers (--workers).
    Sql(sql::SqlArgs),
    /// Run a worker for `vshred sql --workers`: it runs the tasks of
    /// queries sent by clients that present the cluster's token, reading
    /// only files beneath its data roots.
    Worker(worker::WorkerArgs),
    /// Encode each JSON line as a Variant and print it back as JSON: shows
    /// exactly what the encoding keeps.
    Roundtrip {
        /// Input JSON Lines file, or `-` for stdin.
        input: PathBuf,
        #[command(flatten)]
        json: JsonArgs,
        /// Print, per line, the metadata and value sizes in bytes instead of
        /// the JSON.
        #[arg(long)]
        sizes: bool,
    },
}

/// How JSON text is read.
#[derive(Args)]
struct JsonArgs {
    /// Keep the last value of a key given twice in one object instead of
    /// failing (each line is then parsed whole before it is shredded,
    /// which is slower).
    #[arg(long)]
    keep_last_duplicate: bool,
    /// What becomes of a number written without an exponent that no
    /// decimal holds (more than 38 digits): `error` names its line and
    /// column; `double` stores the nearest double, as Spark's parse_json
    /// does, and the run ends with a warning that counts them.
    #[arg(long, value_enum, value_name = "error|double", default_value_t = InexactArg::Error)]
    inexact_numbers: InexactArg,
}

impl JsonArgs {
    fn duplicate_keys(&self) -> DuplicateKeys {
        if self.keep_last_duplicate {
            DuplicateKeys::KeepLast
        } else {
            DuplicateKeys::Error
        }
    }

    fn inexact_numbers(&self) -> InexactNumbers {
        match self.inexact_numbers {
            InexactArg::Error => InexactNumbers::Error,
            InexactArg::Double => InexactNumbers::Double,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum InexactArg {
    Error,
    Double,
}

#[derive(Args)]
struct CatArgs {
    /// The Parquet file, a directory of them (every *.parquet beneath it),
    /// a quoted glob ('logs/*/*.parquet'), or `-` for stdin.
    file: PathBuf,
    /// Only these top-level columns (comma-separated or repeated), in the
    /// file's order.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    columns: Vec<String>,
    /// Stop after N rows.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    #[command(flatten)]
    scan: ScanArgs,
}

/// How files are read.
#[derive(Args)]
struct ScanArgs {
    /// Worker threads that read row groups (default: one per core).
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    threads: Option<usize>,
}

impl ScanArgs {
    fn options(&self) -> ScanOptions {
        ScanOptions {
            threads: self.threads.and_then(std::num::NonZeroUsize::new),
            ..ScanOptions::default()
        }
    }
}

#[derive(Args)]
struct LayoutArgs {
    /// Top-level field to store as a Variant column (repeatable); each line
    /// must then be an object whose other fields become ordinary columns.
    /// Without it, each whole line is a Variant column named `v`.
    #[arg(long = "variant-field", value_name = "NAME")]
    variant_fields: Vec<String>,
    /// Lines used to choose column types and shredding (at least 1).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = at_least_one::<usize>)]
    sample_rows: usize,
    /// Most Parquet columns a Variant column may shred into (at least 1).
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    max_columns: Option<usize>,
    /// Deepest nesting that gets typed columns.
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// Share of sampled rows a field must appear in to get a column, from
    /// 0 to 1 (0.1 is 10%).
    // A negative value is a value, refused as one, not an option.
    #[arg(long, value_name = "F", value_parser = share, allow_negative_numbers = true)]
    min_frequency: Option<f64>,
    #[command(flatten)]
    json: JsonArgs,
}

/// A count that must be at least 1 (clap's range check would print the
/// largest u64 as the bound).
fn at_least_one<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr + Default + PartialEq,
    T::Err: std::fmt::Display,
{
    match text.parse::<T>() {
        Ok(n) if n == T::default() => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a count ({e})")),
    }
}

/// A share: a number from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        Ok(_) => Err(format!("{text} is not from 0 to 1 (0.1 is 10%)")),
        Err(_) => Err(format!("{text} is not a number from 0 to 1")),
    }
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("split").multiple(true)))]
struct EncodeArgs {
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
    #[arg(long, value_name = "N", group = "split", value_parser = at_least_one::<u64>)]
    max_file_rows: Option<u64>,
    /// Write a dataset (as --max-file-rows) whose files end after the batch
    /// with which they reach B bytes (so may pass it by one batch): a number
    /// of bytes, or with K, M or G (powers of 1024): 128M.
    #[arg(long, value_name = "B", group = "split", value_parser = byte_size)]
    max_file_bytes: Option<u64>,
    /// Add the files to a directory that holds Parquet files already,
    /// numbered after its highest part-NNNNN.parquet (without it, such a
    /// directory is refused).
    #[arg(long, requires = "split")]
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

/// A size in bytes, at least 1: digits, then optionally K, M or G (KiB,
/// MiB, GiB).
fn byte_size(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "m" | "MiB" => 1 << 20,
        "G" | "g" | "GiB" => 1 << 30,
        _ => 0,
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{text} is not a size of at least 1 byte (4096, 64K, 128M, 1G)"))
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
    /// Instead of the layout, a markdown table of the sample written with
    /// it: each leaf's bytes before and after compression, and, for the
    /// typed leaves the cost model priced, its estimate and encoding.
    #[arg(long)]
    costs: bool,
}

#[derive(Args)]
struct GetArgs {
    /// The Parquet file, a directory of them (every *.parquet beneath it),
    /// a quoted glob ('logs/*/*.parquet'), or `-` for stdin.
    file: PathBuf,
    /// The path, e.g. `$.user.id`, `$.tags[0]`, `$['key.with.dots']`.
    path: String,
    /// The Variant column (default: the only one, or `v`).
    #[arg(long)]
    column: Option<String>,
    /// Result type: bool, int8, int16, int32, int64, float, double,
    /// decimal(P,S), string, binary, date, time, timestamp, timestamp_ntz,
    /// timestamp_nanos, timestamp_ntz_nanos, uuid, or variant (also as
    /// Spark names them: tinyint, smallint, int, bigint, ...).
    #[arg(long = "as", value_name = "TYPE", default_value = "variant")]
    as_type: String,
    /// Print these top-level columns beside each value (comma-separated or
    /// repeated): each line is then a JSON object of them and the value.
    #[arg(long = "with", value_name = "NAME,...", value_delimiter = ',')]
    with: Vec<String>,
    /// Stop after N values.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    #[command(flatten)]
    scan: ScanArgs,
    /// Only rows where the filter holds: `PATH OP LITERAL` (OP: = == !=
    /// <> < <= > >=), `PATH in (LITERAL, ...)`, `PATH is [not] null`, a bare
    /// `PATH` (is true), combined with and, or, not and parentheses; a path
    /// starts with `$`, a bare name is a top-level column (`id == 5`, or
    /// `` `odd name` ``); `PATH as TYPE` converts as --as does (`$.ts as
    /// timestamp >= "2024-03-01"`).
    #[arg(long = "where", value_name = "FILTER")]
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
    // A worker stops on its own signals, giving its tasks time to end.
    if !matches!(cli.command, Command::Worker(_)) {
        remove_unfinished_files_on_signals();
    }
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
        // A reader that closed the output early (`| head`) asked for no more.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vshred: {e}");
            ExitCode::from(1)
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary files of outputs
/// not yet complete, says which complete files of a dataset remain, and
/// exits as the signal would (128 + its number): killed by a signal, the
/// process runs no destructors.
fn remove_unfinished_files_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // without a handler, the default action still stops us
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            for files in vshred::output::remove_unfinished_files() {
                eprintln!("vshred: interrupted; {files}");
            }
            std::process::exit(128 + signal);
        }
    });
}

/// `--help` and `--version` print as clap prints them and succeed; no
/// arguments at all print the help and fail; a usage error is one line,
/// like every other failure, with exit code 1.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
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
            // A file where no argument goes, or an argument left over after
            // several files: most likely a glob the shell expanded (in
            // `get`, a second file takes the place of the path).
            let unexpected = e
                .get(clap::error::ContextKind::InvalidArg)
                .map(|arg| arg.to_string())
                .unwrap_or_default();
            let files = std::env::args_os()
                .skip(1)
                .filter(|arg| Path::new(arg).is_file())
                .count();
            let expanded = e.kind() == ErrorKind::UnknownArgument
                && (Path::new(&unexpected).is_file()
                    || (!unexpected.starts_with('-') && files >= 2));
            // The help that lists the options: the command's own.
            let help = match std::env::args_os()
                .nth(1)
                .and_then(|name| name.into_string().ok())
                .filter(|name| Cli::command().find_subcommand(name).is_some())
            {
                Some(command) => format!("vshred {command} --help"),
                None => "vshred --help".to_string(),
            };
            if expanded {
                eprintln!(
                    "vshred: {message} (a glob goes in quotes, 'dir/*.parquet', for vshred to expand; see {help})"
                );
            } else {
                eprintln!("vshred: {message} (see {help})");
            }
            ExitCode::from(1)
        }
    }
}

/// Why a command failed: a library error (saying what and where) or an
/// I/O error on the standard streams.
enum Failure {
    Vshred(vshred::Error),
    Io(io::Error),
}

impl Failure {
    /// Whether this is a write to a pipe whose reader has gone, from this
    /// binary or from the library (`encode ... -`).
    fn is_broken_pipe(&self) -> bool {
        let first: &(dyn std::error::Error + 'static) = match self {
            Failure::Io(e) => e,
            Failure::Vshred(e) => e,
        };
        // Through the parquet crate's errors too, which wrap the writer's.
        std::iter::successors(Some(first), |e| e.source()).any(|e| {
            e.downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
        })
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The library leaves the way out to its front ends: here, a flag.
            Failure::Vshred(e) => match e.kind() {
                vshred::ErrorKind::InexactNumber => {
                    write!(
                        f,
                        "{e} (--inexact-numbers double stores the nearest double)"
                    )
                }
                vshred::ErrorKind::DuplicateKey => {
                    write!(f, "{e} (--keep-last-duplicate keeps the last value)")
                }
                vshred::ErrorKind::AmbiguousColumn => {
                    write!(f, "{e} (--column NAME chooses one)")
                }
                vshred::ErrorKind::DatasetExists => write!(f, "{e} (--append adds to it)"),
                vshred::ErrorKind::Conversion => write!(f, "{e} (without --strict, null)"),
                _ => write!(f, "{e}"),
            },
            Failure::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

impl From<vshred::Error> for Failure {
    fn from(e: vshred::Error) -> Failure {
        Failure::Vshred(e)
    }
}

/// Names the file a library error is about, unless it names one already.
trait Context<T> {
    fn context(self, file: &Path) -> Result<T, Failure>;
}

impl<T> Context<T> for vshred::Result<T> {
    fn context(self, file: &Path) -> Result<T, Failure> {
        self.map_err(|e| Failure::Vshred(e.in_file(file)))
    }
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, file: &Path) -> Result<T, Failure> {
        self.map_err(|e| Failure::Io(io::Error::new(e.kind(), format!("{}: {e}", file.display()))))
    }
}

/// A usage error of the library's kind, for arguments clap cannot check.
fn usage(message: String) -> Failure {
    Failure::Vshred(vshred::Error::from_message(message))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Encode(args) => run_encode(args),
        Command::Infer(args) => run_infer(args),
        Command::Schema { file } => run_schema(&file),
        Command::Cat(args) => run_cat(args),
        Command::Get(args) => run_get(args),
        Command::Report(args) => run_report(args),
        Command::Sql(args) => sql::run_sql(args),
        Command::Worker(args) => worker::run_worker(args),
        Command::Roundtrip { input, json, sizes } => run_roundtrip(&input, &json, sizes),
    }
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

fn open_input(path: &Path) -> Result<Box<dyn BufRead>, Failure> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())));
    }
    let file = File::open(path).context(path)?;
    Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
}

/// Whether `path` is read as a stream: `-`, or a pipe, device or socket
/// given by its path (`get <(vshred encode in.jsonl -) '$.a'`).
fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    is_stdin(path)
        || std::fs::metadata(path).is_ok_and(|m| {
            let kind = m.file_type();
            kind.is_fifo() || kind.is_char_device() || kind.is_socket()
        })
}

/// Opens a Parquet file; a stream ([`is_stream`]) is read into a temporary
/// file unless it is a file already (Parquet is read from its footer, at
/// the end).
fn open_parquet(path: &Path) -> Result<ParquetFile, Failure> {
    if !is_stream(path) {
        return ParquetFile::open(path).context(path);
    }
    let mut stream: Box<dyn Read> = if is_stdin(path) {
        let stdin = io::stdin();
        let handle = std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned()?;
        let file = File::from(handle);
        if file.metadata()?.is_file() {
            return ParquetFile::from_file(file, path).context(path);
        }
        Box::new(stdin)
    } else {
        Box::new(File::open(path).context(path)?)
    };
    let mut copy = tempfile::tempfile()?;
    io::copy(&mut stream, &mut copy).context(path)?;
    ParquetFile::from_file(copy, path).context(path)
}

/// What a reading command reads: a Parquet file on standard input or a
/// pipe, or a dataset (a file, a directory, a glob).
enum ParquetInput {
    Stream(ParquetFile),
    Files(Box<Dataset>),
}

impl ParquetInput {
    fn open(path: &Path) -> Result<ParquetInput, Failure> {
        if is_stream(path) {
            return Ok(ParquetInput::Stream(open_parquet(path)?));
        }
        Ok(ParquetInput::Files(Box::new(
            vshred_datafusion::store::find_dataset(path)?,
        )))
    }

    fn choose_variant_column(&self, requested: Option<&str>) -> vshred::Result<String> {
        match self {
            ParquetInput::Stream(file) => file.choose_variant_column(requested),
            ParquetInput::Files(dataset) => dataset.choose_variant_column(requested),
        }
    }

    /// The names of the Variant columns.
    fn variant_columns(&self) -> vshred::Result<Vec<String>> {
        match self {
            ParquetInput::Stream(file) => Ok(file.variant_columns()),
            ParquetInput::Files(dataset) => Ok(dataset.columns()?.variants.clone()),
        }
    }

    fn json_lines(
        &self,
        columns: Option<&[String]>,
        options: &ScanOptions,
        sink: impl FnMut(Vec<u8>) -> vshred::Result<()>,
    ) -> vshred::Result<()> {
        match self {
            ParquetInput::Stream(file) => file.json_lines(columns, options, sink),
            ParquetInput::Files(dataset) => dataset.json_lines(columns, options, sink),
        }
    }

    fn get_with(
        &self,
        request: &GetRequest,
        with: &[String],
        options: &ScanOptions,
        sink: impl FnMut(&arrow::array::ArrayRef, &RecordBatch) -> vshred::Result<()>,
    ) -> vshred::Result<DatasetStats> {
        match self {
            ParquetInput::Stream(file) => {
                let read = file.get_with(request, with, options, sink)?;
                Ok(DatasetStats {
                    files: 1,
                    files_skipped: usize::from(read.row_groups_read == 0),
                    read,
                })
            }
            ParquetInput::Files(dataset) => dataset.get_with(request, with, options, sink),
        }
    }
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

/// The `--shred` choice: a preset, or a schema file.
fn shred_mode(shred: &str, layout: &LayoutArgs) -> Result<ShredMode, Failure> {
    ShredMode::from_choice(shred, infer_options(layout, Preset::Default)).map_err(|e| {
        match e.kind() {
            vshred::ErrorKind::Usage => usage(format!("--shred {}", e.message())),
            _ => Failure::Vshred(e),
        }
    })
}

fn run_encode(args: EncodeArgs) -> Result<(), Failure> {
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
        warn_about_lines(&report.lines, &report.unsampled_variant_fields);
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
    let report = report?;
    warn_about_lines(&report.lines, &report.unsampled_variant_fields);
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

/// `1 row group`, `2 row groups`.
fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// What `encode` says about the input lines: bad lines skipped, inexact
/// numbers, Variant fields that no sampled line has.
fn warn_about_lines(lines: &LineCounts, unsampled_variant_fields: &[String]) {
    if lines.bad_lines > 0 {
        eprintln!(
            "vshred: skipped {}; the first: {}",
            count(lines.bad_lines, "bad line"),
            lines.first_bad_line.as_deref().unwrap_or("")
        );
    }
    warn_inexact_numbers(lines.inexact_numbers, lines.first_inexact_line);
    warn_unsampled_variant_fields(unsampled_variant_fields);
}

/// What `encode` and `infer` say of Variant fields no sampled line has.
fn warn_unsampled_variant_fields(names: &[String]) {
    for name in names {
        eprintln!(
            "vshred: warning: --variant-field {name:?}: no sampled line has this field; its column is null there (misspelt?)"
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
        if let LayoutChoice::Reinferred { kept, fresh } = part.layout {
            let kept = kept.map_or("a line it cannot hold".into(), |k| percent(Some(k)));
            eprintln!(
                "vshred: {}: layout re-inferred (typed share of its first lines: {kept} with the layout before, {} with this one): {}",
                name(part),
                percent(Some(fresh)),
                layout_json(&part.columns)
            );
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

fn run_infer(args: InferArgs) -> Result<(), Failure> {
    let preset = match args.shred {
        PresetArg::Auto => Preset::Default,
        PresetArg::Spark => Preset::Spark,
    };
    let options = EncodeOptions {
        variant_fields: args.layout.variant_fields.clone(),
        shred: ShredMode::Infer(infer_options(&args.layout, preset)),
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
    warn_unsampled_variant_fields(&inferred.unsampled_variant_fields);
    writeln!(io::stdout().lock(), "{}", layout_json(&inferred.columns))?;
    warn_inexact_numbers(inferred.inexact_numbers, inferred.first_inexact_line);
    Ok(())
}

fn json_string(s: &str) -> String {
    let mut out = Vec::new();
    write_json(&VariantRef::String(s), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn run_schema(path: &Path) -> Result<(), Failure> {
    let file = match ParquetInput::open(path)? {
        ParquetInput::Stream(file) => file,
        ParquetInput::Files(dataset) => match dataset.files() {
            [one] => ParquetFile::open(one).context(one)?,
            _ => {
                let schema = dataset.schema().context(path)?;
                write!(io::stdout().lock(), "{schema}")?;
                return Ok(());
            }
        },
    };
    let metadata = file.metadata();
    let mut out = io::stdout().lock();
    let mut schema = Vec::new();
    parquet::schema::printer::print_schema(&mut schema, file.parquet_schema().root_schema());
    // The printer shows the annotation's version as Rust prints an Option.
    let schema = String::from_utf8_lossy(&schema).replace("VARIANT(Some(", "VARIANT((");
    let schema = schema.replace("VARIANT((1))", "VARIANT(1)");
    out.write_all(schema.as_bytes())?;
    writeln!(
        out,
        "\n{}, {}; Variant columns: {}",
        count(metadata.file_metadata().num_rows().max(0) as u64, "row"),
        count(metadata.num_row_groups() as u64, "row group"),
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

/// Output for a command that prints rows: stops at a limit and at a closed
/// pipe, each through an error the reader stops at, told apart afterwards.
struct RowOutput<W: Write> {
    out: W,
    left: Option<u64>,
    closed: Option<io::Error>,
    done: bool,
}

impl<W: Write> RowOutput<W> {
    fn new(out: W, limit: Option<u64>) -> RowOutput<W> {
        RowOutput {
            out,
            left: limit,
            closed: None,
            done: limit == Some(0),
        }
    }

    /// How many more rows may be printed (all of `n` without a limit).
    fn room(&self, n: usize) -> usize {
        self.left.map_or(n, |left| n.min(left as usize))
    }

    /// Writes `rows` rows as `text`; an error stops the reader when rows
    /// come after the limit, or the output is closed. A read whose rows
    /// end at the limit ends as it would without one, its counts whole.
    fn write(&mut self, text: &[u8], rows: usize) -> vshred::Result<()> {
        if self.done {
            return Err(vshred::Error::from_message("limit reached".into()));
        }
        if let Err(e) = self.out.write_all(text) {
            self.closed = Some(e);
            return Err(vshred::Error::from_message("output closed".into()));
        }
        if let Some(left) = &mut self.left {
            *left -= rows as u64;
            self.done = *left == 0;
        }
        Ok(())
    }

    /// The reader's outcome, with the stops asked for taken as success.
    fn finish(mut self, outcome: Result<(), Failure>) -> Result<(), Failure> {
        if let Some(e) = self.closed.take() {
            return Err(Failure::Io(e));
        }
        if !self.done {
            outcome?;
        }
        self.out.flush()?;
        Ok(())
    }
}

fn run_cat(args: CatArgs) -> Result<(), Failure> {
    let file = ParquetInput::open(&args.file)?;
    let mut out = RowOutput::new(io::stdout().lock(), args.limit);
    if out.done {
        return out.finish(Ok(()));
    }
    let columns = (!args.columns.is_empty()).then_some(args.columns.as_slice());
    let outcome = file
        .json_lines(columns, &args.scan.options(), |text| {
            if out.left.is_none() || out.done {
                return out.write(&text, 0);
            }
            // Only a limit needs the block's lines counted.
            let rows = text.iter().filter(|&&b| b == b'\n').count();
            let room = out.room(rows);
            if room == rows {
                return out.write(&text, rows);
            }
            // The first `room` lines of the block.
            let end = text
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(room - 1)
                .map_or(text.len(), |(i, _)| i + 1);
            out.write(&text[..end], room)
        })
        .context(&args.file);
    out.finish(outcome)
}

fn run_get(args: GetArgs) -> Result<(), Failure> {
    let file = ParquetInput::open(&args.file)?;
    let column = file
        .choose_variant_column(args.column.as_deref())
        .context(&args.file)?;
    let as_type = ShreddingSchema::parse_type_name(&args.as_type)
        .and_then(|t| match t {
            ShreddingSchema::Object(_) | ShreddingSchema::Array(_) => {
                Err(vshred::Error::from_message(format!(
                    "--as takes a primitive type or variant, not {t}"
                )))
            }
            t => Ok(t),
        })
        .map_err(|e| usage(format!("--as {:?}: {}", args.as_type, e.message())))?;
    let request = GetRequest {
        column,
        path: args.path.parse()?,
        as_type,
        strict: args.strict,
        filter: args.filter.as_deref().map(Predicate::parse).transpose()?,
    };
    let mut out = RowOutput::new(io::BufWriter::new(io::stdout().lock()), args.limit);
    let mut accumulator = args.agg.map(|a| {
        Accumulator::new(match a {
            AggArg::Count => Aggregate::Count,
            AggArg::Sum => Aggregate::Sum,
            AggArg::Min => Aggregate::Min,
            AggArg::Max => Aggregate::Max,
        })
    });
    // Printed beside the values as JSON, as `cat` prints them.
    let variants = file.variant_columns().context(&args.file)?;
    let value_key = json_string(&args.path);
    let mut line = Vec::new();
    let mut stats = None;
    if !out.done {
        let outcome = file
            .get_with(
                &request,
                &args.with,
                &args.scan.options(),
                |result, with| {
                    let rows = out.room(result.len());
                    if let Some(acc) = accumulator.as_mut() {
                        acc.add_column(result, rows)?;
                        return out.write(&[], rows);
                    }
                    let values = ResultColumn::try_new(result)?;
                    let with_rows = (!args.with.is_empty())
                        .then(|| vshred::unshred::JsonRows::try_new(with, &variants))
                        .transpose()?;
                    line.clear();
                    for i in 0..rows {
                        match &with_rows {
                            Some(w) => {
                                write_value_beside(w, with, i, &value_key, &values, &mut line)?
                            }
                            None => values.write_json(i, &mut line)?,
                        }
                        line.push(b'\n');
                    }
                    out.write(&line, rows)
                },
            )
            .context(&args.file);
        match outcome {
            Ok(s) => stats = Some(s),
            Err(e) => out_error(&mut out, e)?,
        }
    }
    if let Some(acc) = &accumulator {
        writeln!(out.out, "{}", acc.to_json())?;
        if let Some(note) = acc.note() {
            eprintln!("vshred: {note}");
        }
    }
    let stopped = out.done;
    out.finish(Ok(()))?;
    for warning in stats.iter().flat_map(|s| &s.read.warnings) {
        eprintln!("vshred: warning: {warning}");
    }
    if args.stats && stats.is_none() && stopped {
        // The read ends at the limit, its files part read.
        eprintln!("vshred: no read counts: the read stopped at the --limit");
    }
    if let (true, Some(stats)) = (args.stats, stats) {
        let read = &stats.read;
        // Only a dataset of key=value directories skips by them.
        let by_directories = match read.skipped_by_directories {
            0 => String::new(),
            n => format!("{n} by directories, "),
        };
        eprintln!(
            "vshred: read {} of {}, {} of {} ({}); skipped {by_directories}{} by statistics, {} by bloom filters, {} by the column index, which ruled out {}",
            stats.files - stats.files_skipped,
            count(stats.files as u64, "file"),
            read.row_groups_read,
            count(read.row_groups as u64, "row group"),
            count(read.rows_read, "row"),
            read.skipped_by_statistics,
            read.skipped_by_bloom_filters,
            read.skipped_by_page_index,
            count(read.pages_skipped as u64, "page"),
        );
    }
    Ok(())
}

/// Keeps a reader's error unless the output asked for the stop.
fn out_error<W: Write>(out: &mut RowOutput<W>, e: Failure) -> Result<(), Failure> {
    if out.closed.is_some() || out.done {
        return Ok(());
    }
    Err(e)
}

/// Row `i` as one JSON object: the `with` columns, then the value under
/// the path's text.
fn write_value_beside(
    with: &vshred::unshred::JsonRows<'_>,
    batch: &RecordBatch,
    i: usize,
    value_key: &str,
    values: &ResultColumn<'_>,
    line: &mut Vec<u8>,
) -> vshred::Result<()> {
    with.write_row(i, line)?;
    line.pop(); // the closing brace
    if batch.num_columns() > 0 {
        line.push(b',');
    }
    line.extend_from_slice(value_key.as_bytes());
    line.push(b':');
    values.write_json(i, line)?;
    line.push(b'}');
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

/// Whether `input`, not a stream, names Parquet files: a directory or a
/// glob (a dataset), or a file that starts as Parquet does or is named
/// `.parquet` (a damaged one is then an error that says it is not
/// Parquet, not a JSON error at its first byte).
fn is_parquet_file_or_dataset(input: &Path) -> bool {
    input.is_dir()
        || (!input.exists() && is_glob(&input.to_string_lossy()))
        || magic_of(input).is_some_and(|m| starts_as_parquet(&m))
        || input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

fn run_roundtrip(input: &Path, json: &JsonArgs, sizes: bool) -> Result<(), Failure> {
    let mut text = Vec::new();
    open_input(input)?.read_to_end(&mut text)?;
    let mut builder = VariantBuilder::new().with_duplicate_keys(json.duplicate_keys());
    let parser = JsonParser::new().with_inexact_numbers(json.inexact_numbers());
    let mut out = io::BufWriter::new(io::stdout().lock());
    let mut line_out = Vec::new();
    let (mut inexact, mut first_inexact) = (0u64, None);
    for line in JsonLines::new(&text) {
        builder.start_row();
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
