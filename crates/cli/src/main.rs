//! The `vshred` command: a thin layer over the library. Arguments become
//! options, each subcommand is one library call, and every failure is one
//! line on stderr with exit code 1.
//!
//! Each command's arguments sit beside the code that runs it: `encode`
//! (encode, infer, roundtrip), `read` (cat, get, schema), `report`, `sql`
//! and `worker`; `args` holds the groups of arguments they share, `input`
//! how they open what they read, and `failure` how a failure prints.

mod args;
mod encode;
mod failure;
mod input;
mod read;
mod report;
mod sql;
mod worker;

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::args::JsonArgs;
use crate::failure::{Failure, usage_error};

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
    Encode(encode::EncodeArgs),
    /// Print the shredding schema that `encode` would choose.
    Infer(encode::InferArgs),
    /// Print a Parquet file's schema and the size of each column; of a
    /// dataset, the columns of its files, how each file shreds each Variant
    /// column, and the columns' sizes summed.
    Schema {
        /// The Parquet file, a directory or glob of them, or `-` for stdin.
        file: PathBuf,
    },
    /// Print each row as one JSON object, Variants reconstructed.
    Cat(read::CatArgs),
    /// Extract a path from a Variant column, reading only what it needs.
    Get(read::GetArgs),
    /// Compare layouts: encode JSON Lines unshredded and shredded (auto and
    /// spark, int and flba decimals), or take Parquet files as they are, and
    /// print sizes and read latencies as markdown.
    Report(report::ReportArgs),
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

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Encode(args) => encode::run_encode(args),
        Command::Infer(args) => encode::run_infer(args),
        Command::Schema { file } => read::run_schema(&file),
        Command::Cat(args) => read::run_cat(args),
        Command::Get(args) => read::run_get(args),
        Command::Report(args) => report::run_report(args),
        Command::Sql(args) => sql::run_sql(args),
        Command::Worker(args) => worker::run_worker(args),
        Command::Roundtrip { input, json, sizes } => encode::run_roundtrip(&input, &json, sizes),
    }
}

/// `1 row group`, `2 row groups`.
fn count(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
