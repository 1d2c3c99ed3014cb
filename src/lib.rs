//! # vshred
//!
//! The Apache Parquet **Variant** type: its binary encoding, and its
//! shredding into typed Parquet columns.
//!
//! The crate follows the data, and its imports run one way, down this
//! list:
//!
//! 1. The encoding, without Arrow or Parquet: [`variant`] (validated
//!    zero-copy views, [`VariantRef`](variant::VariantRef), and a builder,
//!    [`VariantBuilder`](variant::VariantBuilder)), [`json`] (JSON text ->
//!    Variant, streamed and exact, and back) and [`path`] (`$.a.b[0]`).
//! 2. Kernels on whole Arrow arrays: [`shred`] (values or JSON text into
//!    the typed columns of a [`ShreddingSchema`](shred::ShreddingSchema)
//!    and a residual; [`infer`] chooses the schema from a sample),
//!    [`unshred`] (any writer's shredded columns back to Variants or JSON),
//!    [`get`] (`variant_get`: typed leaves handed over whole),
//!    [`explode`] (objects' fields and arrays' elements as lists) and
//!    [`predicate`] (filters, and the arithmetic that prunes by
//!    statistics).
//! 3. Files: [`parquet`]: an open file, a scan plan from its footer (the
//!    leaves a path needs, the row groups and pages a filter rules out),
//!    the executor that runs it on worker threads, and the writer;
//!    [`output`] makes files appear whole or not at all, never over a
//!    device, a link or the input.
//! 4. Jobs: [`encode`] streams JSON Lines into a shredded file; [`dataset`]
//!    reads many files of differing layouts as one, whole or in partitions
//!    for a query engine's threads; [`report`] compares the
//!    sizes and read speeds of the layouts.
//!
//! The `vshred` binary (`crates/cli`) is a thin layer over these, and
//! `vshred-datafusion` (`crates/datafusion`) puts them in DataFusion.
//!
//! ```
//! use vshred::json::{json_to_variant, variant_to_json_string};
//! use vshred::variant::{VariantRef, VariantType};
//!
//! let (metadata, value) = json_to_variant(br#"{"id": 7, "price": 104.8, "tags": ["a"]}"#)?;
//! let variant = VariantRef::try_new(&metadata, &value)?;
//! let price = variant.as_object().unwrap().get("price").unwrap();
//! assert_eq!(price.variant_type(), VariantType::Decimal4);
//! assert_eq!(variant_to_json_string(&variant), r#"{"id":7,"price":104.8,"tags":["a"]}"#);
//! # Ok::<(), vshred::Error>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod hash;
pub mod threads;

pub mod json;
pub mod path;
pub mod variant;

pub mod explode;
pub mod get;
pub mod infer;
pub mod predicate;
pub mod shred;
pub mod unshred;

pub mod output;
pub mod parquet;

pub mod dataset;
pub mod encode;
pub mod report;

/// The README's examples, run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use error::{Error, ErrorKind, Position, Result, VariantPart};

/// The `parquet` crate whose schemas and metadata the API gives
/// ([`parquet::ParquetFile::metadata`]); [`parquet`] is vshred's own.
pub use ::parquet as parquet_crate;
/// The `arrow` crate whose arrays the API takes and gives: naming them
/// through it, a user's code needs no `arrow` of the same version.
pub use arrow;
