//! `vshred worker`: a worker of `vshred sql --workers`, until SIGTERM or
//! Ctrl-C (tasks under way are finished first).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;
use vshred_distributed::worker::{WorkerOptions, serve};

use crate::sql::failure;
use crate::{Context, Failure};

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
    /// A directory whose files (symlinks resolved) tasks may read;
    /// repeatable, at least one.
    #[arg(long = "data-root", value_name = "DIR", required = true)]
    data_roots: Vec<PathBuf>,
}

/// The token in the first line of `path`.
pub fn read_token(path: &Path) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path).context(path)?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        return Err(failure(format!(
            "{}: the token file's first line is empty",
            path.display()
        )));
    }
    Ok(token.to_string())
}

pub fn run_worker(args: WorkerArgs) -> Result<(), Failure> {
    let options = WorkerOptions {
        token: read_token(&args.token_file)?,
        data_roots: args.data_roots,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| failure(format!("--listen {}: {e}", args.listen)))?;
        let address = listener.local_addr()?;
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let stop = async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            eprintln!("vshred worker: stopping");
        };
        eprintln!("vshred worker: listening on {address}");
        serve(listener, options, stop).await.map_err(failure)
    })
}
