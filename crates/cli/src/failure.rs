//! How a failure prints: one line on stderr, naming what and where, with
//! the flag that is the way out where there is one.

use std::io;
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::Cli;

/// `--help` and `--version` print as clap prints them and succeed; no
/// arguments at all print the help and fail; a usage error is one line,
/// like every other failure, with exit code 1.
pub(crate) fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ErrorKind};
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
                .get(ContextKind::InvalidArg)
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
            // Clap's tip, after the line kept above: the name meant.
            let meant = [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand]
                .into_iter()
                .find_map(|kind| e.get(kind))
                .map(|name| format!("did you mean {name}? "))
                .unwrap_or_default();
            if expanded {
                eprintln!(
                    "vshred: {message} (a glob goes in quotes, 'dir/*.parquet', for vshred to expand; see {help})"
                );
            } else {
                eprintln!("vshred: {message} ({meant}see {help})");
            }
            ExitCode::from(1)
        }
    }
}

/// Why a command failed: a library error (saying what and where) or an
/// I/O error on the standard streams.
pub(crate) enum Failure {
    Vshred(vshred::Error),
    Io(io::Error),
}

impl Failure {
    /// Whether this is a write to a pipe whose reader has gone, from this
    /// binary or from the library (`encode ... -`).
    pub(crate) fn is_broken_pipe(&self) -> bool {
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
pub(crate) trait Context<T> {
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
pub(crate) fn usage(message: String) -> Failure {
    Failure::Vshred(vshred::Error::from_message(message))
}
