//! vshred's Variant SQL across machines, on
//! [datafusion-distributed](https://github.com/datafusion-contrib/datafusion-distributed):
//! the same session as [`vshred_datafusion::context`], whose plans are cut
//! into stages and sent to workers over gRPC.
//!
//! - [`worker`]: a worker (`vshred worker`): our functions and codec in
//!   each task's session, requests without the cluster's shared secret
//!   refused, files outside its data roots refused.
//! - [`cluster`]: the coordinator's session (`vshred sql --workers`): the
//!   distributed planner, which splits a Variant scan into one task per
//!   worker, each reading its own share of the row groups
//!   ([`vshred::dataset::partition`]).
//! - [`copy`]: `COPY ... TO 'dir/'` written by the workers, each task its
//!   own files.
//! - [`codec`]: how a Variant scan and a write travel in a task's plan,
//!   and how a worker checks one it receives.
//! - `data_roots`: where a worker may read and write, for our scans and
//!   writes and, through the stores its tasks get, DataFusion's own.
//!
//! Why datafusion-distributed and not Ballista: it is a library. Our own
//! session plans, our binary is the worker, and there is no scheduler
//! service or shuffle storage to run; the price is that a failed task
//! fails its query (there are no retries).

pub mod cluster;
pub mod codec;
pub mod copy;
mod data_roots;
pub mod worker;

/// The request header that carries the cluster's shared secret.
pub const TOKEN_HEADER: &str = "x-vshred-token";
