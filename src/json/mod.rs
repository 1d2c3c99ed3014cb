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

pub(crate) use from_variant::JsonWriter;
pub(crate) use from_variant::write_int as write_json_int;
pub(crate) use from_variant::write_string as write_json_string;
pub use from_variant::{variant_to_json_string, write_json};
pub(crate) use lines::not_json_lines;
pub use lines::{JsonLine, JsonLines};
pub use lines::{UTF8_BOM, file_starts_with_an_array, without_json_lines_hints};
pub use reader::{InexactNumbers, JsonNumber};
pub(crate) use reader::{JsonReader, Peek, decode_escape};
pub(crate) use to_variant::duplicate_key_error;
pub use to_variant::{JsonParser, json_to_variant};
