//! The coordinator's session: [`vshred_datafusion::context`] with
//! datafusion-distributed's planner, which cuts a plan into stages at its
//! repartitions and sends each stage's tasks to the workers.
//!
//! A Variant scan asks for a task per row group, up to one per worker;
//! each task's copy reads its own share of the row groups (a
//! [`DistributedLeafExec`] of [`VariantScanExec::for_task`] copies). Every
//! request carries the cluster's shared secret, set by our channel
//! resolver, which workers use too when they call each other; a
//! connection gives up after [`CONNECT_TIMEOUT`], and a peer that stops
//! answering HTTP/2 pings is dropped after [`KEEPALIVE_TIMEOUT`], so a
//! dead worker fails the query rather than hanging it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::{
    ChannelResolver, CoordinatorToWorkerMsg, DesiredTaskCountEvent, DesiredTaskCountEventResponse,
    DistributedExt, DistributedLeafExec, ExecuteTaskRequest, GetWorkerInfoRequest,
    GetWorkerInfoResponse, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
    SessionStateBuilderExt, SetPlanRequest, WorkerChannel, WorkerResolver, WorkerToCoordinatorMsg,
    grpc,
};
use futures::stream::{BoxStream, StreamExt};
use http::HeaderValue;
use http_body_util::BodyExt;
use tonic::transport::Channel;
use url::Url;
use vshred_datafusion::scan::VariantScanExec;
use vshred_datafusion::settings::VshredSettings;

use crate::TOKEN_HEADER;
use crate::codec::VariantCodec;
use crate::copy::CopyOnWorkers;

/// How long connecting to a worker may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an idle connection is pinged.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
/// How long a ping may go unanswered before the connection is dropped:
/// long, because a busy worker answers late (its runtime's threads answer
/// pings between batches, and a batch of costly expressions took 15 s on
/// two cores), and a worker that dies is seen at once, its connections
/// closed; this is for a machine that stops or a network that fails.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens connections to workers, each request with the shared secret.
#[derive(Clone)]
pub struct TokenChannels {
    token: HeaderValue,
    open: Arc<Mutex<HashMap<Url, grpc::BoxCloneSyncChannel>>>,
}

impl TokenChannels {
    /// Channels presenting `token`.
    pub fn new(token: &str) -> Result<TokenChannels> {
        let token = HeaderValue::from_str(token).map_err(|_| {
            DataFusionError::Configuration(
                "the token must be printable ASCII (a line of a token file)".into(),
            )
        })?;
        Ok(TokenChannels {
            token,
            open: Arc::default(),
        })
    }

    fn channel(&self, url: &Url) -> Result<grpc::BoxCloneSyncChannel> {
        let mut open = self
            .open
            .lock()
            .map_err(|_| DataFusionError::Internal("the channel cache is poisoned".into()))?;
        if let Some(channel) = open.get(url) {
            return Ok(channel.clone());
        }
        let channel = Channel::from_shared(url.to_string())
            .map_err(|e| DataFusionError::Configuration(format!("worker {url}: {e}")))?
            .connect_timeout(CONNECT_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .keep_alive_while_idle(true)
            .tcp_keepalive(Some(KEEPALIVE_INTERVAL))
            .connect_lazy();
        let token = self.token.clone();
        let worker = url.to_string();
        let with_token = tower::ServiceBuilder::new()
            .map_request(move |mut request: http::Request<tonic::body::Body>| {
                request.headers_mut().insert(TOKEN_HEADER, token.clone());
                request
            })
            .map_response(move |response: http::Response<tonic::body::Body>| {
                let worker = worker.clone();
                response
                    .map(|body| tonic::body::Body::new(body.map_err(move |e| lost(&worker, &e))))
            })
            .service(channel);
        let channel = grpc::BoxCloneSyncChannel::new(with_token);
        open.insert(url.clone(), channel.clone());
        Ok(channel)
    }
}

#[async_trait]
impl ChannelResolver for TokenChannels {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        Ok(Box::new(NamedWorker {
            client: grpc::create_worker_client(self.channel(url)?),
            url: url.to_string(),
        }))
    }
}

/// A worker's client whose failures to connect name it: a worker that
/// stops listening mid-query (SIGTERM) refused a later stage's connection
/// with tonic's whole error and no name. (A stream that breaks off is
/// named by the channel: [`lost`].)
struct NamedWorker {
    client: Box<dyn WorkerChannel>,
    url: String,
}

impl NamedWorker {
    fn named(&self, e: DataFusionError) -> DataFusionError {
        name_unreachable(&self.url, e)
    }
}

/// Whether `status` is a connection refused, reset or closed (tonic's
/// transport's error, or `Unavailable`).
fn is_unreachable(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unavailable
        || std::iter::successors(std::error::Error::source(status), |e| e.source())
            .any(|e| e.is::<tonic::transport::Error>())
}

/// A worker that stopped answering, as [`lost`] words it: a status's own
/// text leads with its code (`code: 'The service is currently
/// unavailable', message: "..."`), which says nothing more.
#[derive(Debug)]
struct WorkerLost(String);

impl std::fmt::Display for WorkerLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkerLost {}

#[async_trait]
impl WorkerChannel for NamedWorker {
    async fn coordinator_channel(
        &mut self,
        headers: http::HeaderMap,
        set_plan_request: SetPlanRequest,
        c2w_stream: BoxStream<'static, CoordinatorToWorkerMsg>,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<BoxStream<'static, Result<WorkerToCoordinatorMsg>>> {
        let stream = self
            .client
            .coordinator_channel(headers, set_plan_request, c2w_stream, metrics, task_ctx)
            .await
            .map_err(|e| self.named(e))?;
        let url = self.url.clone();
        Ok(stream
            .map(move |item| item.map_err(|e| name_unreachable(&url, e)))
            .boxed())
    }

    async fn execute_task(
        &mut self,
        headers: http::HeaderMap,
        request: ExecuteTaskRequest,
        metrics: ExecutionPlanMetricsSet,
        task_ctx: &Arc<TaskContext>,
    ) -> Result<Vec<BoxStream<'static, Result<RecordBatch>>>> {
        let streams = self
            .client
            .execute_task(headers, request, metrics, task_ctx)
            .await
            .map_err(|e| self.named(e))?;
        Ok(streams
            .into_iter()
            .map(|stream| {
                let url = self.url.clone();
                stream
                    .map(move |item| item.map_err(|e| name_unreachable(&url, e)))
                    .boxed()
            })
            .collect())
    }

    async fn get_worker_info(
        &mut self,
        request: GetWorkerInfoRequest,
    ) -> Result<GetWorkerInfoResponse> {
        let info = self.client.get_worker_info(request).await;
        info.map_err(|e| self.named(e))
    }
}

/// `e`, named as the worker at `url`'s if it is a connection's failure.
fn name_unreachable(url: &str, e: DataFusionError) -> DataFusionError {
    let DataFusionError::External(inner) = &e else {
        return e;
    };
    let Some(status) = inner.downcast_ref::<tonic::Status>() else {
        return e;
    };
    let lost = match status.message().starts_with("worker ") {
        // Named by the channel already ([`lost`]).
        true if status.code() == tonic::Code::Unavailable => status.message().to_string(),
        false if is_unreachable(status) => lost(url, status).message().to_string(),
        _ => return e,
    };
    DataFusionError::External(Box::new(WorkerLost(lost)))
}

/// The workers named on the command line.
struct Workers(Vec<Url>);

impl WorkerResolver for Workers {
    fn get_urls(&self) -> Result<Vec<Url>> {
        Ok(self.0.clone())
    }
}

/// A task per row group of a Variant scan, as many as there are workers;
/// one for a scan of one partition, which an operator above may read as
/// the whole input (a `LIMIT` straight over it: each task would keep its
/// own first rows).
fn desired_tasks(event: DesiredTaskCountEvent) -> Option<Result<DesiredTaskCountEventResponse>> {
    let scan = event.plan.downcast_ref::<VariantScanExec>()?;
    let (dataset, _, partitions, _) = scan.parts();
    let tasks = match partitions {
        1 => 1,
        _ => dataset.row_groups().unwrap_or(1).max(1),
    };
    Some(Ok(DesiredTaskCountEventResponse::desired(tasks)))
}

/// Each task's copy of a Variant scan reads its own share.
fn scale_up(event: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = event.plan.downcast_ref::<VariantScanExec>()?;
    let tasks = (0..event.task_count)
        .map(|task| {
            scan.for_task(task, event.task_count)
                .map(|t| Arc::new(t) as Arc<dyn ExecutionPlan>)
        })
        .collect::<Result<Vec<_>>>();
    Some(tasks.and_then(|tasks| {
        let leaf = DistributedLeafExec::try_new(event.plan.clone(), tasks)?;
        Ok(ScaleUpLeafNodeEventResponse::new(Arc::new(leaf)))
    }))
}

/// A session whose queries run on `workers` (URLs such as
/// `http://10.0.0.5:7400`), presenting `token`.
pub fn context(config: SessionConfig, workers: Vec<Url>, token: &str) -> Result<SessionContext> {
    let channels = TokenChannels::new(token)?;
    // A stage has a task per partition: with fewer partitions than workers
    // (one, on a machine of one CPU) some would stay idle, and with one the
    // query would run here, in the coordinator. The machine's count is
    // raised to the workers'; one the caller chose (`--set`) is kept.
    let machines = SessionConfig::new().target_partitions();
    let config = match config.target_partitions() {
        chosen if chosen != machines => config,
        _ => config.with_target_partitions(machines.max(workers.len())),
    };
    // Sent to the workers with each query, as `SET` left them.
    let settings = VshredSettings::of(config.options());
    Ok(vshred_datafusion::context_with(config, |state| {
        state
            .with_distributed_option_extension(settings)
            .with_distributed_planner()
            .with_distributed_worker_resolver(Workers(workers))
            .with_distributed_channel_resolver(channels)
            .with_distributed_user_codec(VariantCodec::new())
            .with_distributed_desired_task_count_handler(desired_tasks)
            .with_distributed_scale_up_leaf_node_handler(scale_up)
            .with_physical_optimizer_rule(Arc::new(CopyOnWorkers))
    }))
}

/// Fails, naming the first worker that does not answer (or refuses the
/// token), unless all of them do.
pub async fn check_workers(workers: &[Url], token: &str) -> Result<()> {
    let channels = TokenChannels::new(token)?;
    for url in workers {
        // The raw client: its errors are named here, as not reachable.
        let mut client = grpc::create_worker_client(channels.channel(url)?);
        let answer = tokio::time::timeout(
            CONNECT_TIMEOUT,
            client.get_worker_info(GetWorkerInfoRequest {}),
        )
        .await;
        match answer {
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.to_string().contains(crate::worker::NO_TOKEN) => {
                return Err(DataFusionError::Execution(format!(
                    "worker {url} refused the token (the token file must hold the one the worker was started with)"
                )));
            }
            Ok(Err(e)) => {
                return Err(DataFusionError::Execution(format!(
                    "worker {url} is not reachable: {}",
                    first_line(&e.to_string())
                )));
            }
            Err(_) => {
                return Err(DataFusionError::Execution(format!(
                    "worker {url} did not answer within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
        }
    }
    Ok(())
}

/// A stream from `worker` that broke off (the worker died, or its
/// connection did), as a status that names it; the rest of its cause on
/// the same line.
fn lost(worker: &str, error: &tonic::Status) -> tonic::Status {
    let mut cause = first_line(error.message()).to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        let text = e.to_string();
        // A message often repeats its source's.
        if !cause.contains(first_line(&text)) {
            cause.push_str(": ");
            cause.push_str(first_line(&text));
        }
        source = e.source();
    }
    tonic::Status::unavailable(format!("worker {worker} stopped answering: {cause}"))
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_a_worker_refused_names_the_worker() {
        let refused =
            || DataFusionError::External(Box::new(tonic::Status::unavailable("tcp connect error")));
        let named = name_unreachable("http://127.0.0.1:7412/", refused());
        let DataFusionError::External(lost) = &named else {
            panic!("{named}")
        };
        assert_eq!(
            lost.to_string(),
            "worker http://127.0.0.1:7412/ stopped answering: tcp connect error"
        );
        // Named once, not again by another layer, whether as the channel
        // names it or as here; other errors as they are.
        let again = name_unreachable("http://127.0.0.1:7413/", named);
        assert!(again.to_string().contains("7412"), "{again}");
        let by_the_channel = DataFusionError::External(Box::new(super::lost(
            "http://127.0.0.1:7412/",
            &tonic::Status::unavailable("broken pipe"),
        )));
        let named = name_unreachable("http://127.0.0.1:7413/", by_the_channel);
        let DataFusionError::External(lost) = &named else {
            panic!("{named}")
        };
        assert_eq!(
            lost.to_string(),
            "worker http://127.0.0.1:7412/ stopped answering: broken pipe"
        );
        let other = DataFusionError::External(Box::new(tonic::Status::internal("no")));
        assert_eq!(
            name_unreachable("http://127.0.0.1:7412/", other).to_string(),
            DataFusionError::External(Box::new(tonic::Status::internal("no"))).to_string()
        );
    }

    /// The machine's partitions are raised to a task per worker; a count
    /// the caller chose is kept.
    #[tokio::test]
    async fn a_session_plans_a_partition_per_worker_unless_told_otherwise() {
        let machines = SessionConfig::new().target_partitions();
        let workers: Vec<Url> = (0..machines + 2)
            .map(|i| Url::parse(&format!("http://127.0.0.1:{}/", 7400 + i)).unwrap())
            .collect();
        let token = "a cluster's shared secret";
        let planned = |config: SessionConfig| {
            let ctx = context(config, workers.clone(), token).unwrap();
            ctx.state().config().target_partitions()
        };
        assert_eq!(planned(SessionConfig::new()), machines + 2);
        let chosen = if machines == 1 { 2 } else { 1 };
        assert_eq!(
            planned(SessionConfig::new().with_target_partitions(chosen)),
            chosen
        );
    }
}
