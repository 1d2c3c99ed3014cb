//! # vshred
//!
//! The Apache Parquet **Variant** type: its binary encoding, and its
//! shredding into typed Parquet columns.
//!
//! The crate follows the data:
//!
//! 1. [`variant`]: the binary encoding (`VariantEncoding.md`): validated
//!    zero-copy views ([`VariantRef`](variant::VariantRef)) and a builder
//!    ([`VariantBuilder`](variant::VariantBuilder));
//! 2. [`json`]: JSON text -> Variant, streamed and exact, and Variant -> JSON;
//! 3. [`shred`]: a [`ShreddingSchema`](shred::ShreddingSchema) and the
//!    [`Shredder`](shred::Shredder) that splits values (or JSON text
//!    directly) into its typed Arrow columns and a Variant residual;
//!    [`infer`] chooses that schema from a sample of values;
//! 4. [`unshred`]: shredded columns (ours or any writer's) back to Variant
//!    values or straight to JSON text.
//!
//! Around that core: [`encode`] streams JSON Lines into a shredded
//! [`parquet`] file; [`ParquetFile::get`](parquet::ParquetFile::get) reads
//! one [`path`] back (`variant_get`, in [`get`]), reading only the leaves it
//! needs and skipping row groups a [`predicate`] rules out; and [`report`]
//! compares the sizes and read speeds of the layouts. Files are written
//! whole or not at all, and never over a device, a link or the input
//! ([`output`]).
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

pub mod encode;
mod error;
pub mod get;
pub mod infer;
pub mod json;
pub mod output;
pub mod parquet;
pub mod path;
pub mod predicate;
pub mod report;
pub mod shred;
pub mod unshred;
pub mod variant;

/// The README's examples, run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use error::{Error, ErrorKind, Position, Result, VariantPart};
