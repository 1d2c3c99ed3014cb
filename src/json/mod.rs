//! JSON <-> Variant.
//!
//! [`JsonParser`] streams JSON text straight into a
//! [`VariantBuilder`](crate::variant::VariantBuilder): no intermediate JSON
//! tree, numbers from their digits (no float detour for decimals), strings
//! borrowed unless escaped. [`write_json`] renders a Variant back as
//! compact JSON text.

mod from_variant;
mod lines;
mod reader;
mod to_variant;

pub use from_variant::{variant_to_json_string, write_json};
pub use lines::{JsonLine, JsonLines};
pub use reader::JsonNumber;
pub use to_variant::{JsonParser, json_to_variant};
