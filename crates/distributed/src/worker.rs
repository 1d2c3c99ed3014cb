//! A worker: a datafusion-distributed gRPC service whose tasks' sessions
//! have our functions and codec.
//!
//! A worker runs what the network sends it, so: every request must carry
//! the cluster's shared secret ([`TOKEN_HEADER`]), or it is refused with a
//! log line and no work done; every scan it decodes is checked
//! ([`crate::codec`]) and must read only files beneath its data roots;
//! messages are at most [`MAX_MESSAGE_BYTES`].

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::execution::memory_pool::{
    MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;

use vshred_datafusion::settings::VshredSettings;

use crate::TOKEN_HEADER;
use crate::cluster::{KEEPALIVE_INTERVAL, KEEPALIVE_TIMEOUT, TokenChannels};
use crate::codec::VariantCodec;
use crate::data_roots::{DataRoots, RootedStores};

/// What a worker answers a request without its token; the client names
/// the worker that refused by it.
pub(crate) const NO_TOKEN: &str = "no or wrong token";

/// The largest message a worker takes (a task's plan, a batch).
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// What a worker is started with.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The cluster's shared secret.
    pub token: String,
    /// The directories whose files it may read.
    pub data_roots: Vec<PathBuf>,
    /// The most memory its tasks may hold at once, in bytes (DataFusion's
    /// memory pool: beyond it a sort or a join spills, or fails); `None`
    /// for no limit.
    pub memory_limit: Option<usize>,
}

/// A worker's memory pool, DataFusion's within `--memory-limit`, whose
/// error when a task would pass it says which worker and what set its
/// size: the client sees DataFusion's own text alone otherwise.
#[derive(Debug)]
struct WorkerMemoryPool {
    inner: Arc<dyn MemoryPool>,
    worker: String,
    limit: usize,
}

impl std::fmt::Display for WorkerMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl MemoryPool for WorkerMemoryPool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn register(&self, consumer: &MemoryConsumer) {
        self.inner.register(consumer)
    }

    fn unregister(&self, consumer: &MemoryConsumer) {
        self.inner.unregister(consumer)
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.inner.grow(reservation, additional)
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.inner.shrink(reservation, shrink)
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        self.inner
            .try_grow(reservation, additional)
            .map_err(|e| match e {
                DataFusionError::ResourcesExhausted(text) => {
                    DataFusionError::ResourcesExhausted(format!(
                        "worker {} holds its tasks within its --memory-limit of {} bytes: {text}",
                        self.worker, self.limit
                    ))
                }
                other => other,
            })
    }

    fn reserved(&self) -> usize {
        self.inner.reserved()
    }

    fn memory_limit(&self) -> MemoryLimit {
        self.inner.memory_limit()
    }
}

/// Serves tasks on `listener` until `shutdown` completes (tasks under way
/// are finished first); says on stderr that it listens, once `options`
/// are found usable.
pub async fn serve(
    listener: TcpListener,
    options: WorkerOptions,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    if options.token.is_empty() {
        return Err(DataFusionError::Configuration("the token is empty".into()));
    }
    if options.data_roots.is_empty() {
        return Err(DataFusionError::Configuration(
            "a worker needs a data root (--data-root DIR)".into(),
        ));
    }
    let address = listener.local_addr()?;
    let roots = Arc::new(DataRoots::new(&options.data_roots)?.of_worker(address.to_string()));
    let codec = VariantCodec::with_roots(roots.clone());
    let channels = TokenChannels::new(&options.token)?;
    let worker = Worker::from_session_builder(move |query: WorkerQueryContext| {
        let codec = codec.clone();
        let channels = channels.clone();
        async move {
            let mut builder = query.builder;
            // Beside DataFusion's own, which the builder has; ours come
            // after, so that `sum` is ours.
            builder
                .scalar_functions()
                .get_or_insert_default()
                .extend(vshred_datafusion::scalar_functions());
            builder
                .aggregate_functions()
                .get_or_insert_default()
                .extend(vshred_datafusion::aggregate_functions());
            let state = builder
                .with_distributed_option_extension_from_headers::<VshredSettings>(&query.headers)?
                .with_distributed_user_codec(codec)
                .with_distributed_channel_resolver(channels)
                .build();
            Ok::<SessionState, DataFusionError>(state)
        }
    })
    // One runtime for all its queries: its object stores (an `s3://`
    // bucket's made from the environment once), held to the data roots
    // for DataFusion's own scans and writes, and its channels.
    .with_runtime_env({
        let runtime = RuntimeEnvBuilder::new().with_object_store_registry(Arc::new(
            RootedStores::new(vshred_datafusion::object_store_registry(), roots),
        ));
        match options.memory_limit {
            // DataFusion's own pool of that size, wrapped.
            Some(bytes) => {
                let limited = runtime.with_memory_limit(bytes, 1.0);
                match limited.memory_pool.clone() {
                    Some(inner) => limited.with_memory_pool(Arc::new(WorkerMemoryPool {
                        inner,
                        worker: address.to_string(),
                        limit: bytes,
                    })),
                    None => limited,
                }
            }
            None => runtime,
        }
        .build_arc()?
    })
    .with_version(env!("CARGO_PKG_VERSION"))
    .with_max_message_size(MAX_MESSAGE_BYTES);
    let token = options.token.clone();
    let check = move |request: tonic::Request<()>| {
        let presented = request
            .metadata()
            .get(TOKEN_HEADER)
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if same_secret(presented, token.as_bytes()) {
            Ok(request)
        } else {
            let from = request
                .remote_addr()
                .map_or_else(|| "an unknown peer".to_string(), |a| a.to_string());
            eprintln!("vshred worker: refused a request from {from}: {NO_TOKEN}");
            Err(tonic::Status::unauthenticated(NO_TOKEN))
        }
    };
    // Once the options are known to be usable: whoever waits for this line
    // (a script, a test) may send queries.
    eprintln!("vshred worker: listening on {address}");
    Server::builder()
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .tcp_keepalive(Some(Duration::from_secs(30)))
        .add_service(InterceptedService::new(worker.into_worker_server(), check))
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            shutdown,
        )
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

/// Whether two secrets are equal, in time that does not depend on where
/// they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}
