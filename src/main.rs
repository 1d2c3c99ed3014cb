//! The `vshred` command: a thin layer over the library. Arguments become
//! options, each subcommand is one library call, and every failure is one
//! line on stderr with exit code 1.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use vshred::json::{JsonLines, JsonParser, write_json};
use vshred::variant::{DuplicateKeys, VariantBuilder, VariantRef};

/// Parquet Variant: encode JSON as Variant, shred it into typed columns.
#[derive(Parser)]
#[command(name = "vshred", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Encode each line of a JSON Lines file as a Variant, validate it and
    /// print it back as JSON: shows exactly what the encoding keeps.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vshred: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> io::Result<()> {
    match cli.command {
        Command::Roundtrip {
            input,
            keep_last_duplicate,
            sizes,
        } => {
            let text = read_input(&input)?;
            let policy = if keep_last_duplicate {
                DuplicateKeys::KeepLast
            } else {
                DuplicateKeys::Error
            };
            let mut builder = VariantBuilder::new().with_duplicate_keys(policy);
            let parser = JsonParser::new();
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            let mut line_out = Vec::new();
            let fail = |e: vshred::Error| io::Error::other(format!("{}: {e}", input.display()));
            for line in JsonLines::new(&text) {
                builder.reset();
                parser
                    .parse(line.text, &mut builder)
                    .map_err(|e| fail(line.locate(e)))?;
                let (metadata, value) = builder.finish();
                let variant = VariantRef::try_new(metadata, value).map_err(fail)?;
                line_out.clear();
                if sizes {
                    writeln!(line_out, "{}\t{}", metadata.len(), value.len())?;
                } else {
                    write_json(&variant, &mut line_out);
                    line_out.push(b'\n');
                }
                out.write_all(&line_out)?;
            }
            out.flush()
        }
    }
}

fn read_input(path: &Path) -> io::Result<Vec<u8>> {
    let mut text = Vec::new();
    if path == Path::new("-") {
        io::stdin().lock().read_to_end(&mut text)?;
    } else {
        text = std::fs::read(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(text)
}
