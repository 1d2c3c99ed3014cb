//! Datasets in object stores: `SELECT ... FROM 's3://bucket/logs/'`,
//! `memory:///events/`, `file:///data/events/` (a URL, not a plain path),
//! read from the store the session has registered for the URL's scheme and
//! authority (`SessionContext::register_object_store`; DataFusion
//! registers `file://` itself), through the `object_store` crate.
//!
//! [`StoreFiles`] is the core's [`Storage`] over such a store: it lists a
//! prefix to find a dataset's files (as a directory is walked: every
//! `*.parquet` beneath, names starting with `_` or `.` skipped; a glob
//! matched against the listing), and reads a file by ranges, one request
//! per column chunk. A file is named by its URL, in errors too.
//!
//! The core reads synchronously, on the thread that asks for a batch, so
//! each request runs on a small runtime of our own and the reader waits
//! for it: that works whatever thread asks (one of DataFusion's, or a
//! worker of the core's pool), as a local read blocks the same thread.
//!
//! ```
//! use std::sync::Arc;
//! use datafusion::object_store::{ObjectStoreExt, PutPayload, memory::InMemory};
//! use vshred::encode::{EncodeOptions, encode};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A file in an in-memory store, registered for `memory://`.
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("a.parquet");
//! let rows = "{\"id\": 1, \"v\": {\"n\": 2}}\n{\"id\": 2, \"v\": {\"n\": 40}}\n";
//! let options = EncodeOptions { variant_fields: vec!["v".into()], ..EncodeOptions::default() };
//! encode(&mut rows.as_bytes(), &path, &options, &mut |_| {}).unwrap();
//! let store = Arc::new(InMemory::new());
//! let bytes = std::fs::read(&path).unwrap();
//! store.put(&"events/a.parquet".into(), PutPayload::from(bytes)).await.unwrap();
//!
//! let ctx = vshred_datafusion::context(Default::default());
//! ctx.register_object_store(&url::Url::parse("memory://").unwrap(), store);
//! let sql = "SELECT sum(variant_get(v, '$.n', 'bigint')) AS n FROM 'memory:///events/'";
//! let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
//! let n = batches[0].column(0).as_any().downcast_ref::<arrow::array::Int64Array>().unwrap();
//! assert_eq!(n.value(0), 42);
//! # });
//! ```

use std::future::Future;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use datafusion::common::{DataFusionError, Result, plan_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::object_store::path::Path as Location;
use datafusion::object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use futures::TryStreamExt;
use url::{Position, Url};
use vshred::dataset::Dataset;
use vshred::dataset::storage::{LocalFiles, Storage, glob_root, is_dataset_file, is_glob};
use vshred::parquet::ByteSource;

use crate::process_runtime::ProcessRuntime;

/// Threads of the runtime the stores' requests run on: they wait on the
/// network, not the CPU.
const IO_THREADS: usize = 2;

/// The files of one object store, named by their URLs.
#[derive(Debug, Clone)]
pub struct StoreFiles {
    store: Arc<dyn ObjectStore>,
    /// The store's URL: scheme and authority, path `/`.
    base: Url,
}

/// The storage of `location`: the store `runtime` has for its URL, or the
/// local filesystem for a path.
pub fn storage_of(location: &str, runtime: &RuntimeEnv) -> Result<Arc<dyn Storage>> {
    Ok(match StoreFiles::of_location(location, runtime)? {
        Some(store) => Arc::new(store),
        None => Arc::new(LocalFiles),
    })
}

/// The dataset `location` names, a file, directory or glob by its path or
/// by a URL of a store [`crate::runtime_env`] has (`file://`, and `s3://`
/// with the `s3` feature): for what reads datasets outside a session (the
/// CLI's `get` and `cat`, Python's `get` and `read`).
pub fn find_dataset(location: &Path) -> vshred::Result<Dataset> {
    let Some(text) = location.to_str() else {
        return Dataset::find(location);
    };
    let storage = storage_of(text, &crate::runtime_env()).map_err(|e| {
        let message = match e {
            DataFusionError::Plan(message) => message,
            e => e.to_string(),
        };
        vshred::Error::from_message(message).in_file(location)
    })?;
    Dataset::find_in(location, storage)
}

/// The store's URL of `location` when it names one (`scheme://...`), not
/// a local path (`data/x.parquet`, `C:\data`).
pub fn store_url(location: &str) -> Option<ObjectStoreUrl> {
    parsed(location).map(|(store, _)| store)
}

/// The store's URL and the location in that store of the file `name`,
/// when `name` is a URL (`None` for a local path); a URL whose path names
/// no object (a `.` or `..` segment, say) is an error.
pub fn store_location(name: &Path) -> Option<io::Result<(ObjectStoreUrl, Location)>> {
    let (store, url) = parsed(name.to_str()?)?;
    Some(
        Location::from_url_path(url.path())
            .map(|location| (store, location))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string())),
    )
}

/// `text` as a URL, with its store's URL, unless it is a local path.
fn parsed(text: &str) -> Option<(ObjectStoreUrl, Url)> {
    let (scheme, _) = text.split_once("://")?;
    if scheme.len() < 2 {
        return None;
    }
    let url = Url::parse(text).ok()?;
    let store = ObjectStoreUrl::parse(&url[..Position::BeforePath]).ok()?;
    Some((store, url))
}

impl StoreFiles {
    /// The files of `store`, whose URL is `url`.
    pub fn new(store: Arc<dyn ObjectStore>, url: &ObjectStoreUrl) -> StoreFiles {
        StoreFiles {
            store,
            base: AsRef::<Url>::as_ref(url).clone(),
        }
    }

    /// The files of the store `runtime` has registered for `location`'s
    /// URL, or `None` if `location` is a local path.
    pub fn of_location(location: &str, runtime: &RuntimeEnv) -> Result<Option<StoreFiles>> {
        let Some(url) = store_url(location) else {
            return Ok(None);
        };
        // `file://data/x` reads `data` as a host: say so, not that file://
        // is not read.
        let as_url: &Url = url.as_ref();
        if let Some(host) = as_url.host_str().filter(|_| as_url.scheme() == "file") {
            return plan_err!(
                "{location} names the host {host:?}: a file:// URL takes an absolute path \
                 after its two slashes (file:///data/x); a relative path is given without file://"
            );
        }
        // DataFusion's own error calls this a bug of its own.
        let Ok(store) = runtime.object_store(&url) else {
            let ours = match cfg!(feature = "s3") {
                true => "file:// and s3://",
                false => "file://",
            };
            return plan_err!(
                "no object store for {}: vshred reads {ours} URLs (a program registers \
                 other stores with SessionContext::register_object_store)",
                url.as_str()
            );
        };
        Ok(Some(StoreFiles::new(store, &url)))
    }

    /// The location in the store of the file `name`, a URL of this store.
    pub fn location(&self, name: &Path) -> io::Result<Location> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        let (store, location) = store_location(name)
            .ok_or_else(|| invalid(format!("{} is not a URL", name.display())))??;
        if AsRef::<Url>::as_ref(&store) != &self.base {
            return Err(invalid(format!("not in the store {}", self.base)));
        }
        Ok(location)
    }

    /// The name (URL) of `location`: its path percent-encoded, `%` too,
    /// so that [`location`](Self::location), which decodes a URL's path,
    /// gives it back (a directory named `k=a%2Fb` was `k=a/b`).
    fn name(&self, location: &Location) -> PathBuf {
        let mut url = self.base.clone();
        url.set_path(&location.as_ref().replace('%', "%25"));
        PathBuf::from(url.as_str())
    }

    /// What the store says of the object at `location`.
    fn head(&self, location: &Location) -> io::Result<ObjectMeta> {
        let store = self.store.clone();
        let location = location.clone();
        wait(async move { store.head(&location).await })
    }

    /// Every object beneath `prefix`.
    fn list(&self, prefix: &Location) -> io::Result<Vec<Location>> {
        let store = self.store.clone();
        let prefix = prefix.clone();
        wait(async move {
            store
                .list(Some(&prefix))
                .map_ok(|meta| meta.location)
                .try_collect()
                .await
        })
    }

    /// The files beneath `prefix` that a dataset reads.
    fn files_beneath(&self, prefix: &Location) -> io::Result<Vec<Location>> {
        let mut files = self.list(prefix)?;
        files.retain(|location| {
            let relative = location.prefix_match(prefix).map(|parts| {
                parts
                    .map(|part| part.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            });
            relative.is_some_and(|r| is_dataset_file(&r))
        });
        Ok(files)
    }
}

/// The path of the URL `glob` (what follows its scheme and authority),
/// its escapes decoded as a URL's path is ([`StoreFiles::location`]), and
/// without its leading `/`: a pattern for the names the store lists. Not
/// parsed as a URL: a wildcard `?` would start its query.
fn glob_in_store(glob: &str) -> Result<String, String> {
    let after_scheme = glob.split_once("://").map_or(glob, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("", |at| &after_scheme[at + 1..]);
    percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map(|path| path.into_owned())
        .map_err(|e| format!("its escapes decode to no UTF-8 text: {e}"))
}

impl Storage for StoreFiles {
    fn open(&self, name: &Path) -> io::Result<Arc<dyn ByteSource>> {
        let location = self.location(name)?;
        let meta = self.head(&location)?;
        Ok(Arc::new(StoreObject {
            store: self.store.clone(),
            location,
            length: meta.size,
            modified: Some(meta.last_modified.into()),
        }))
    }

    fn find(&self, input: &Path) -> vshred::Result<Vec<PathBuf>> {
        let text = input.to_string_lossy();
        let at = |e: io::Error| vshred::Error::io(input, e);
        let mut files = Vec::new();
        if is_glob(&text) {
            // The listing starts at the last `/` before the first wildcard.
            let root = self.location(&glob_root(input)).map_err(at)?;
            // Matched against the names as the store has them, not their
            // URLs: `k=a b` is `k=a%20b` in a URL, and either form of a
            // glob matches it.
            let pattern = glob_in_store(&text)
                .and_then(|p| glob::Pattern::new(&p).map_err(|e| e.to_string()))
                .map_err(|e| {
                    vshred::Error::from_message(format!("not a glob pattern: {e}")).in_file(input)
                })?;
            let options = glob::MatchOptions {
                require_literal_separator: true,
                ..glob::MatchOptions::new()
            };
            let mut beneath = self.files_beneath(&root).map_err(at)?;
            // A file the pattern matches, or one in a directory it matches.
            beneath.retain(|location| {
                std::iter::successors(Some(location.as_ref()), |n| n.rfind('/').map(|i| &n[..i]))
                    .take_while(|n| n.len() >= root.as_ref().len())
                    .any(|n| pattern.matches_with(n, options))
            });
            return Ok(beneath.iter().map(|l| self.name(l)).collect());
        }
        let location = self.location(input).map_err(at)?;
        match self.head(&location) {
            Ok(_) => files.push(self.name(&location)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                files.extend(
                    self.files_beneath(&location)
                        .map_err(at)?
                        .iter()
                        .map(|l| self.name(l)),
                );
            }
            Err(e) => return Err(at(e)),
        }
        Ok(files)
    }
}

/// An object of a store, read by ranges.
struct StoreObject {
    store: Arc<dyn ObjectStore>,
    location: Location,
    length: u64,
    modified: Option<SystemTime>,
}

impl ByteSource for StoreObject {
    fn size(&self) -> u64 {
        self.length
    }

    fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let end = offset.saturating_add(buf.len() as u64).min(self.length);
        if offset >= end {
            return Ok(0);
        }
        let bytes = self.read_range(offset..end)?;
        buf[..bytes.len()].copy_from_slice(&bytes);
        Ok(bytes.len())
    }

    fn read_range(&self, range: Range<u64>) -> io::Result<Bytes> {
        let range = range.start..range.end.min(self.length);
        if range.start >= range.end {
            return Ok(Bytes::new());
        }
        let store = self.store.clone();
        let location = self.location.clone();
        wait(async move { store.get_range(&location, range).await })
    }
}

/// Runs a store's request on the runtime of requests, and waits for it.
///
/// The wait is a plain channel's, not a tokio `JoinHandle`'s: polled on
/// one of DataFusion's threads, a `JoinHandle` spends that thread's tokio
/// budget, and once the budget is spent its wake is deferred until the
/// thread goes back to its scheduler, which a blocked reader never does.
fn wait<T: Send + 'static>(
    request: impl Future<Output = datafusion::object_store::Result<T>> + Send + 'static,
) -> io::Result<T> {
    let runtime = io_runtime()?;
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        // The reader waits until it is sent; a panic drops the sender.
        let _ = send.send(request.await);
    });
    match receive.recv() {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(datafusion::object_store::Error::NotFound { path, source })) => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{path} is not in the store ({source})"),
        )),
        Ok(Err(e)) => Err(io::Error::other(e)),
        Err(_) => Err(io::Error::other(
            "an object store request ended without an answer",
        )),
    }
}

/// The runtime of the stores' requests, started when first needed.
fn io_runtime() -> io::Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: ProcessRuntime = ProcessRuntime::new(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(IO_THREADS)
            .thread_name("vshred-io")
            .enable_all()
            .build()
    });
    RUNTIME.get().map_err(|e| {
        io::Error::other(format!(
            "starting the runtime of object store requests: {e}"
        ))
    })
}
