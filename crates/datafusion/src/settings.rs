//! vshred's settings in a session, under the `vshred` prefix
//! (`SET vshred.inexact_numbers = 'double'`, `vshred sql --set`): a
//! DataFusion [`ConfigExtension`], which [`context`](crate::context)
//! registers when its configuration has none.

use std::fmt;

use datafusion::common::config::{ConfigExtension, ConfigOptions};
use datafusion::common::{Result, config_err, config_field, extensions_options};
use vshred::json::InexactNumbers;

/// [`InexactNumbers`] as a setting's value: `error` or `double`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InexactNumbersSetting(pub InexactNumbers);

impl fmt::Display for InexactNumbersSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl InexactNumbersSetting {
    fn parse(value: &str) -> Result<InexactNumbersSetting> {
        match value.trim().to_ascii_lowercase().parse() {
            Ok(inexact) => Ok(InexactNumbersSetting(inexact)),
            Err(_) => config_err!("vshred.inexact_numbers is 'error' or 'double', not {value:?}"),
        }
    }
}

config_field!(InexactNumbersSetting, value => InexactNumbersSetting::parse(value)?);

extensions_options! {
    /// vshred's settings.
    pub struct VshredSettings {
        /// What `parse_json` and `read_jsonl` make of a number written
        /// without an exponent that no decimal holds (more than 38
        /// digits): `error` (the default) names it; `double` stores the
        /// nearest double, as Spark's `parse_json` does (`try_parse_json`
        /// gives null or the double).
        pub inexact_numbers: InexactNumbersSetting, default = InexactNumbersSetting::default()
    }
}

impl ConfigExtension for VshredSettings {
    const PREFIX: &'static str = "vshred";
}

impl VshredSettings {
    /// The settings of a session's configuration: the defaults where it
    /// has none (a session not made by [`context`](crate::context)).
    pub fn of(config: &ConfigOptions) -> VshredSettings {
        config
            .extensions
            .get::<VshredSettings>()
            .cloned()
            .unwrap_or_default()
    }
}

/// What an [`InexactNumber`](vshred::ErrorKind::InexactNumber) error
/// says to do in SQL.
pub(crate) const INEXACT_NUMBERS_HINT: &str =
    "SET vshred.inexact_numbers = 'double' stores the nearest double";
