//! `cat`, `get` and `schema`: Parquet files and datasets out, as JSON rows,
//! a path's values, or a schema with its columns' sizes.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use arrow::array::{Array, RecordBatch};
use clap::{Args, ValueEnum};
use vshred::get::{Accumulator, Aggregate, ResultColumn};
use vshred::json::write_json;
use vshred::parquet::{GetRequest, ParquetFile};
use vshred::path::PathSegment;
use vshred::predicate::Predicate;
use vshred::shred::ShreddingSchema;
use vshred::variant::VariantRef;

use crate::args::ScanArgs;
use crate::count;
use crate::failure::{Context, Failure, usage};
use crate::input::ParquetInput;

#[derive(Args)]
pub(crate) struct CatArgs {
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

#[derive(Args)]
pub(crate) struct GetArgs {
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

#[derive(Clone, Copy, ValueEnum)]
enum AggArg {
    Count,
    Sum,
    Min,
    Max,
}

fn json_string(s: &str) -> String {
    let mut out = Vec::new();
    write_json(&VariantRef::String(s), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

pub(crate) fn run_schema(path: &Path) -> Result<(), Failure> {
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
    let variants = match file.variant_columns() {
        none if none.is_empty() => "none".to_string(),
        some => some.join(", "),
    };
    writeln!(
        out,
        "\n{}, {}; Variant columns: {variants}",
        count(metadata.file_metadata().num_rows().max(0) as u64, "row"),
        count(metadata.num_row_groups() as u64, "row group"),
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

/// Says so where a path that no row has names a top-level column beside
/// the Variant column (`$.id` where `id` is a column): a new user's
/// nulls, once the other fields became columns (`--variant-field`).
fn note_a_column_beside(file: &ParquetInput, request: &GetRequest) -> Result<(), Failure> {
    let Some(PathSegment::Field(name)) = request.path.segments().first() else {
        return Ok(());
    };
    if *name != request.column && file.columns()?.contains(name) {
        eprintln!(
            "vshred: note: no row has {} in the Variant column {}; {name} is a column beside it (print it with --with {name}, filter on it with --where '{name} ...')",
            request.path, request.column
        );
    }
    Ok(())
}

/// Output for a command that prints rows: stops at a limit and at a closed
/// pipe, each through an error the reader stops at, told apart afterwards.
struct RowOutput<W: Write> {
    out: W,
    left: Option<u64>,
    closed: Option<io::Error>,
    done: bool,
    /// Whether rows came past the limit ([`room`](Self::room) for them).
    cut: bool,
}

impl<W: Write> RowOutput<W> {
    fn new(out: W, limit: Option<u64>) -> RowOutput<W> {
        RowOutput {
            out,
            left: limit,
            closed: None,
            done: limit == Some(0),
            cut: false,
        }
    }

    /// How many of `n` more rows may be printed (all without a limit).
    fn room(&mut self, n: usize) -> usize {
        let room = self.left.map_or(n, |left| n.min(left as usize));
        self.cut |= room < n;
        room
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

pub(crate) fn run_cat(args: CatArgs) -> Result<(), Failure> {
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
        .map_err(|e| match (columns, e.kind(), file.agreed_columns()) {
            (None, vshred::ErrorKind::Incompatible, Some(agreed)) if !agreed.is_empty() => {
                e.with_hint(&format!("--columns {} reads the others", agreed.join(",")))
            }
            _ => e,
        })
        .context(&args.file);
    out.finish(outcome)
}

pub(crate) fn run_get(args: GetArgs) -> Result<(), Failure> {
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
    // Rows given, and values among them (not null).
    let (mut rows_given, mut values_given) = (0, 0);
    if !out.done {
        let outcome = file
            .get_with(
                &request,
                &args.with,
                &args.scan.options(),
                |result, with| {
                    let rows = out.room(result.len());
                    rows_given += rows;
                    values_given += result.len() - result.null_count();
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
        // SQL's LIMIT would cut the aggregate's rows, not its rows in.
        if let (true, Some(limit)) = (out.cut, args.limit) {
            let rows = match limit {
                1 => "row".to_string(),
                n => format!("{n} rows"),
            };
            eprintln!("vshred: the aggregate stopped at --limit: it is of the first {rows} alone");
        }
    }
    let stopped = out.done;
    out.finish(Ok(()))?;
    if rows_given > 0 && values_given == 0 {
        note_a_column_beside(&file, &request)?;
    }
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
