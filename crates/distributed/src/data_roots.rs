//! Where a worker may read and write: its data roots, and the object
//! stores its tasks get, which hold them to those roots.
//!
//! A worker checks the files of the scans and writes it decodes
//! ([`crate::codec`]), ours. DataFusion's own scans and writes (a CSV
//! table's `DataSourceExec`, say) are decoded by datafusion-proto, which
//! checks no path: a plan could name `/etc/passwd` as a CSV file. So the
//! worker's sessions get their stores through [`RootedStores`]: every
//! object a task reads, lists or writes by a store, DataFusion's own
//! scans' included, must be beneath a data root, or the request fails.
//! A local name is checked with its symlinks resolved, once per request.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
use datafusion::object_store::path::Path as Location;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use futures::stream::{self, BoxStream, StreamExt};
use url::Url;
use vshred_datafusion::store::{store_location, store_url};

/// A worker's data roots.
#[derive(Debug, Default)]
pub(crate) struct DataRoots {
    /// Local directories, resolved.
    dirs: Vec<PathBuf>,
    /// Prefixes in object stores: the store's URL, and the prefix in it.
    stores: Vec<(ObjectStoreUrl, Location)>,
    /// The worker's address, once it listens: its refusals name it, to
    /// the client (which has several workers) and on its own stderr.
    worker: Option<String>,
}

impl DataRoots {
    /// Each root a directory, which must exist, or the URL of a prefix in
    /// an object store (`s3://bucket/logs/`; `file://` names a directory).
    pub(crate) fn new(roots: &[PathBuf]) -> Result<DataRoots> {
        let mut data_roots = DataRoots::default();
        for root in roots {
            let unusable = |why: String| {
                DataFusionError::Configuration(format!("data root {}: {why}", root.display()))
            };
            match object_of(root).map_err(unusable)? {
                Some((url, location)) => data_roots.stores.push((url, location)),
                None => {
                    let dir = local_path(root).map_err(unusable)?;
                    let dir = dir.canonicalize().map_err(|e| unusable(e.to_string()))?;
                    if !dir.is_dir() {
                        return Err(unusable("not a directory".into()));
                    }
                    data_roots.dirs.push(dir);
                }
            }
        }
        Ok(data_roots)
    }

    /// These roots, a worker's that listens on `address`.
    pub(crate) fn of_worker(self, address: String) -> DataRoots {
        DataRoots {
            worker: Some(address),
            ..self
        }
    }

    /// The worker's address, once it listens.
    pub(crate) fn worker(&self) -> Option<&str> {
        self.worker.as_deref()
    }

    /// `what` is outside the roots: the refusal, said by the worker and
    /// logged on its stderr.
    fn outside(&self, what: String) -> String {
        self.refusal(format!("{what}, which is outside this worker's data roots"))
    }

    /// `refusal`, naming the worker and logged on its stderr once it
    /// listens.
    fn refusal(&self, refusal: String) -> String {
        let Some(worker) = &self.worker else {
            return refusal;
        };
        let refusal = format!("{refusal} (worker {worker})");
        eprintln!("vshred worker: refused: {refusal}");
        refusal
    }

    /// Why a plan may not read `file`, unless it is, its symlinks
    /// resolved, beneath a data root.
    pub(crate) fn check_file(&self, file: &Path) -> std::result::Result<(), String> {
        let outside = || self.outside(format!("a plan names {}", file.display()));
        let unreadable = |e: String| {
            self.refusal(format!(
                "a plan names {}, which cannot be read: {e}",
                file.display()
            ))
        };
        if let Some((url, location)) = object_of(file).map_err(unreadable)? {
            return match self.holds_object(&url, &location) {
                true => Ok(()),
                false => Err(outside()),
            };
        }
        let resolved = local_path(file)
            .map_err(unreadable)?
            .canonicalize()
            .map_err(|e| unreadable(e.to_string()))?;
        match self.holds_resolved(&resolved) {
            true => Ok(()),
            false => Err(outside()),
        }
    }

    /// Whether a local path, its symlinks resolved already, is beneath a
    /// root.
    fn holds_resolved(&self, resolved: &Path) -> bool {
        self.dirs.iter().any(|root| resolved.starts_with(root))
    }

    /// Whether an existing local path, its symlinks resolved, is beneath a
    /// root.
    fn holds_local(&self, path: &Path) -> bool {
        path.canonicalize()
            .is_ok_and(|resolved| self.holds_resolved(&resolved))
    }

    /// Why a write may not make `dir`, unless it is an absolute path
    /// whose nearest existing ancestor, its symlinks resolved, is beneath
    /// a data root, and whose rest has no `..`.
    pub(crate) fn check_dir(&self, dir: &Path) -> std::result::Result<(), String> {
        if !dir.is_absolute()
            || dir
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(format!(
                "a write to {}, which is not an absolute path without ..",
                dir.display()
            ));
        }
        let existing = dir
            .ancestors()
            .find(|a| a.exists())
            .unwrap_or(Path::new("/"));
        match self.holds_local(existing) {
            true => Ok(()),
            false => Err(self.outside(format!("a write to {}", dir.display()))),
        }
    }

    /// Whether `location` in the store of `url` is beneath a root given as
    /// a URL of that store.
    fn holds_object(&self, url: &ObjectStoreUrl, location: &Location) -> bool {
        self.stores
            .iter()
            .any(|(root, prefix)| root == url && location.prefix_matches(prefix))
    }
}

/// The path a local name means: itself, or a `file://` URL's path.
fn local_path(name: &Path) -> std::result::Result<PathBuf, String> {
    let text = name.to_string_lossy();
    match store_url(&text) {
        Some(_) => Url::parse(&text)
            .ok()
            .and_then(|url| url.to_file_path().ok())
            .ok_or_else(|| "not a local file URL".to_string()),
        None => Ok(name.to_path_buf()),
    }
}

/// The store and location a name means when it is a URL of an object
/// store other than the local filesystem (`file://` names a path).
fn object_of(name: &Path) -> std::result::Result<Option<(ObjectStoreUrl, Location)>, String> {
    let text = name.to_string_lossy();
    match store_url(&text) {
        Some(store) if store != ObjectStoreUrl::local_filesystem() => {
            match store_location(Path::new(&*text)) {
                Some(found) => found.map(Some).map_err(|e| e.to_string()),
                None => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

/// A registry whose stores serve only objects beneath the data roots.
#[derive(Debug)]
pub(crate) struct RootedStores {
    inner: Arc<dyn ObjectStoreRegistry>,
    roots: Arc<DataRoots>,
}

impl RootedStores {
    pub(crate) fn new(inner: Arc<dyn ObjectStoreRegistry>, roots: Arc<DataRoots>) -> Self {
        RootedStores { inner, roots }
    }
}

impl ObjectStoreRegistry for RootedStores {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.inner.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        let store = self.inner.get_store(url)?;
        let url = ObjectStoreUrl::parse(&url[..url::Position::BeforePath])?;
        Ok(Arc::new(RootedStore {
            local: url == ObjectStoreUrl::local_filesystem(),
            url,
            store,
            roots: self.roots.clone(),
        }))
    }
}

/// A store of a worker's task: requests for objects outside the data
/// roots fail.
#[derive(Clone, Debug)]
struct RootedStore {
    url: ObjectStoreUrl,
    /// Whether it is the local filesystem, whose locations are absolute
    /// paths.
    local: bool,
    store: Arc<dyn ObjectStore>,
    roots: Arc<DataRoots>,
}

impl RootedStore {
    /// Fails unless `location` is beneath a data root: a file read or a
    /// directory listed, or, for a write, the nearest existing directory
    /// of a new object.
    fn check(&self, location: &Location) -> datafusion::object_store::Result<()> {
        let allowed = match self.local {
            true => {
                let path = local_file(location);
                match path.exists() {
                    true => self.roots.check_file(&path),
                    false => self.roots.check_dir(&path),
                }
            }
            false => match self.roots.holds_object(&self.url, location) {
                true => Ok(()),
                false => Err(self
                    .roots
                    .outside(format!("a plan names {}{location}", self.url.as_str()))),
            },
        };
        allowed.map_err(|why| datafusion::object_store::Error::PermissionDenied {
            path: location.to_string(),
            source: why.into(),
        })
    }

    /// The check of an optional prefix: the whole store is listed only if
    /// its root is a data root.
    fn check_prefix(&self, prefix: Option<&Location>) -> datafusion::object_store::Result<()> {
        self.check(prefix.unwrap_or(&Location::default()))
    }

    /// Whether a listed local entry is, its symlinks resolved, beneath a
    /// data root: the local store follows symlinks as it lists, and one
    /// inside a root may point outside it.
    fn beneath_roots(&self, location: &Location) -> bool {
        self.roots.holds_local(&local_file(location))
    }

    /// A listing of the local store without the entries outside the
    /// roots; another store's as it is (its prefix was checked).
    fn within_roots(
        &self,
        listed: BoxStream<'static, datafusion::object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        if !self.local {
            return listed;
        }
        let store = self.clone();
        listed
            .filter(move |entry| {
                let keep = match entry {
                    Ok(object) => store.beneath_roots(&object.location),
                    Err(_) => true,
                };
                futures::future::ready(keep)
            })
            .boxed()
    }
}

impl fmt::Display for RootedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rooted({})", self.store)
    }
}

/// The file a location of the local store (rooted at `/`) names.
fn local_file(location: &Location) -> PathBuf {
    Path::new("/").join(location.as_ref())
}

/// A listing's stream that fails at once.
fn refused_stream<T: Send + 'static>(
    e: datafusion::object_store::Error,
) -> BoxStream<'static, datafusion::object_store::Result<T>> {
    stream::once(async move { Err(e) }).boxed()
}

#[async_trait]
impl ObjectStore for RootedStore {
    async fn put_opts(
        &self,
        location: &Location,
        payload: PutPayload,
        opts: PutOptions,
    ) -> datafusion::object_store::Result<PutResult> {
        self.check(location)?;
        self.store.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Location,
        opts: PutMultipartOptions,
    ) -> datafusion::object_store::Result<Box<dyn MultipartUpload>> {
        self.check(location)?;
        self.store.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Location,
        options: GetOptions,
    ) -> datafusion::object_store::Result<GetResult> {
        self.check(location)?;
        self.store.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Location,
        ranges: &[Range<u64>],
    ) -> datafusion::object_store::Result<Vec<Bytes>> {
        self.check(location)?;
        self.store.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, datafusion::object_store::Result<Location>>,
    ) -> BoxStream<'static, datafusion::object_store::Result<Location>> {
        let checked = self.clone();
        let locations = locations
            .map(move |location| {
                let location = location?;
                checked.check(&location)?;
                Ok(location)
            })
            .boxed();
        self.store.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&Location>,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        match self.check_prefix(prefix) {
            Ok(()) => self.within_roots(self.store.list(prefix)),
            Err(e) => refused_stream(e),
        }
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Location>,
        offset: &Location,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        match self.check_prefix(prefix) {
            Ok(()) => self.within_roots(self.store.list_with_offset(prefix, offset)),
            Err(e) => refused_stream(e),
        }
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&Location>,
    ) -> datafusion::object_store::Result<ListResult> {
        self.check_prefix(prefix)?;
        let mut listed = self.store.list_with_delimiter(prefix).await?;
        if self.local {
            listed.objects.retain(|o| self.beneath_roots(&o.location));
            listed.common_prefixes.retain(|p| self.beneath_roots(p));
        }
        Ok(listed)
    }

    async fn copy_opts(
        &self,
        from: &Location,
        to: &Location,
        options: CopyOptions,
    ) -> datafusion::object_store::Result<()> {
        self.check(from)?;
        self.check(to)?;
        self.store.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Location,
        to: &Location,
        options: datafusion::object_store::RenameOptions,
    ) -> datafusion::object_store::Result<()> {
        self.check(from)?;
        self.check(to)?;
        self.store.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use datafusion::object_store::ObjectStoreExt;
    use datafusion::object_store::local::LocalFileSystem;

    use super::*;

    /// A store held to `root`, over the local filesystem.
    fn rooted(root: &Path) -> Arc<dyn ObjectStore> {
        let roots = Arc::new(DataRoots::new(&[root.to_path_buf()]).unwrap());
        let registry =
            Arc::new(datafusion::execution::object_store::DefaultObjectStoreRegistry::new());
        registry.register_store(
            &Url::parse("file:///").unwrap(),
            Arc::new(LocalFileSystem::new()),
        );
        RootedStores::new(registry, roots)
            .get_store(&Url::parse("file:///").unwrap())
            .unwrap()
    }

    fn location(path: &Path) -> Location {
        Location::from_absolute_path(path).unwrap()
    }

    #[tokio::test]
    async fn a_store_serves_only_what_is_beneath_the_roots_symlinks_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("in.csv"), "a\n1\n").unwrap();
        std::fs::write(outside.join("secret.csv"), "a\n2\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let store = rooted(&root);

        assert!(store.get(&location(&root.join("in.csv"))).await.is_ok());
        for refused in [outside.join("secret.csv"), root.join("link/secret.csv")] {
            let e = store.get(&location(&refused)).await.unwrap_err();
            assert!(
                e.to_string().contains("outside this worker's data roots"),
                "{e}"
            );
        }
        // A listing of the root leaves out what its symlink reaches.
        let listed: Vec<String> = store
            .list(Some(&location(&root)))
            .map(|o| o.unwrap().location.filename().unwrap().to_string())
            .collect()
            .await;
        assert_eq!(listed, ["in.csv"]);
        // Writes beneath the root go through; elsewhere they are refused.
        let put = |path: PathBuf| {
            let store = store.clone();
            async move { store.put(&location(&path), "x".into()).await }
        };
        assert!(put(root.join("new/out.csv")).await.is_ok());
        assert!(put(outside.join("out.csv")).await.is_err());
        assert!(!outside.join("out.csv").exists());
    }
}
