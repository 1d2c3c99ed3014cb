//! `s3://bucket/...` read and written with no store registered first: the
//! store of a bucket is made when a query first names it, from the
//! environment's AWS settings, as the `aws` command line and DuckDB take
//! them.
//!
//! [`ObjectStoreRegistry`] is DataFusion's extension point for stores
//! found by their URL; [`StoresFromEnv`] keeps DataFusion's own registry
//! for every store a program registers (`file://`, `memory://`, and an
//! `s3://` bucket registered with settings of its own, which wins) and
//! adds a bucket's store where none is registered.
//!
//! The settings are `object_store`'s `AmazonS3Builder::from_env`:
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION` (or `AWS_DEFAULT_REGION`), `AWS_ENDPOINT` (a store
//! speaking S3 elsewhere, with `AWS_ALLOW_HTTP=true` for one without
//! TLS), and the instance's or container's credentials when no key is
//! given.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;
use url::Url;

/// DataFusion's registry, with a store made from the environment for an
/// `s3://` bucket that none was registered for.
#[derive(Debug, Default)]
pub struct StoresFromEnv {
    registered: DefaultObjectStoreRegistry,
}

impl ObjectStoreRegistry for StoresFromEnv {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.registered.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.registered.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if url.scheme() != "s3" {
            return self.registered.get_store(url);
        }
        if let Ok(store) = self.registered.get_store(url) {
            return Ok(store);
        }
        let Some(bucket) = url.host_str().filter(|b| !b.is_empty()) else {
            return Err(DataFusionError::Configuration(format!(
                "{url} names no bucket (s3://bucket/path)"
            )));
        };
        let store = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map_err(|e| {
                DataFusionError::Configuration(format!(
                    "no store for s3://{bucket} from the environment's AWS settings: {e}"
                ))
            })?;
        // Two queries that race here make a store each; either serves.
        self.registered.register_store(url, Arc::new(store));
        self.registered.get_store(url)
    }
}
