//! `vshred worker`: a worker of `vshred sql --workers`, until SIGTERM or
//! Ctrl-C: it stops taking tasks, and exits once those under way are done
//! (0), or [`SHUTDOWN_GRACE`] has passed or a second signal comes (128
//! plus the signal's number), whichever is first (a task whose
//! query has gone may still be computing: DataFusion's operators stop
//! only between batches, and a cross join can go long between them).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use vshred_distributed::worker::{WorkerOptions, serve};

use crate::failure::{Context, Failure};
use crate::sql::failure;

/// How long a stopping worker waits for the tasks under way.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

#[derive(Args)]
pub struct WorkerArgs {
    /// The address to listen on (port 0: one the system chooses; the
    /// address is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7400")]
    listen: SocketAddr,
    /// A file whose first line is the cluster's shared secret: requests
    /// without it are refused.
    #[arg(long, value_name = "FILE")]
    token_file: PathBuf,
    /// A directory whose files (symlinks resolved) tasks may read, or the
    /// URL of a prefix in an object store the worker has; repeatable, at
    /// least one.
    #[arg(long = "data-root", value_name = "DIR|URL", required = true)]
    data_roots: Vec<PathBuf>,
    /// The most memory its tasks may hold at once (512M, 8G): a sort or a
    /// join that needs more spills to disk, or its query fails naming the
    /// limit. No limit by default; a coordinator's
    /// `datafusion.runtime.memory_limit` is its own.
    #[arg(long, value_name = "B", value_parser = crate::args::byte_size)]
    memory_limit: Option<u64>,
}

/// The fewest characters a cluster's token may have: a worker runs the
/// plans of whoever has it, so it must not be guessed.
const MIN_TOKEN_CHARS: usize = 16;

/// The token in the first line of `path`, of at least
/// [`MIN_TOKEN_CHARS`].
pub fn read_token(path: &Path) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path).context(path)?;
    // A byte order mark (an editor's) is not part of the secret.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let token = text.lines().next().unwrap_or("").trim();
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(failure(format!(
            "{}: the token file's first line has {chars} characters: a cluster's shared secret takes at least {MIN_TOKEN_CHARS} (`head -c 32 /dev/urandom | base64 > {}` makes one)",
            path.display(),
            path.display()
        )));
    }
    Ok(token.to_string())
}

pub fn run_worker(args: WorkerArgs) -> Result<(), Failure> {
    let options = WorkerOptions {
        token: read_token(&args.token_file)?,
        data_roots: args.data_roots,
        memory_limit: args
            .memory_limit
            .map(|b| usize::try_from(b).unwrap_or(usize::MAX)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(vshred::threads::STACK_BYTES)
        .enable_all()
        .build()?;
    let (stopping, stopped) = tokio::sync::oneshot::channel();
    // On a thread of its own, as the other commands' signals are: a task
    // that never yields can hold every thread of the worker's runtime.
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ])?;
    let (signaled, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let _ = signaled.send(signal);
        }
    });
    std::thread::spawn(move || {
        let Ok(first) = received.recv() else {
            return;
        };
        eprintln!("vshred worker: stopping (a second signal stops it at once)");
        let _ = stopping.send(());
        let signal = match received.recv_timeout(SHUTDOWN_GRACE) {
            Ok(signal) => {
                eprintln!("vshred worker: stopped at once, with tasks unfinished");
                signal
            }
            Err(_) => {
                eprintln!(
                    "vshred worker: stopped with tasks unfinished after {} s",
                    SHUTDOWN_GRACE.as_secs()
                );
                first
            }
        };
        // As a process the signal ended: it did not finish its work.
        std::process::exit(128 + signal);
    });
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| failure(format!("--listen {}: {e}", args.listen)))?;
        let stop = async {
            let _ = stopped.await;
        };
        serve(listener, options, stop).await.map_err(failure)
    })
}
