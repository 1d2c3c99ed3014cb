//! vshred's settings in a session, under the `vshred` prefix
//! (`SET vshred.inexact_numbers = 'double'`, `vshred sql --set`): a
//! DataFusion [`ConfigExtension`], which [`context`](crate::context)
//! registers when its configuration has none.

use std::fmt;

use datafusion::common::config::{ConfigExtension, ConfigField, ConfigOptions, Visit};
use datafusion::common::{Result, config_err, extensions_options};
use vshred::json::InexactNumbers;
use vshred::variant::DuplicateKeys;

/// A choice of the core's that a setting takes, in the words the core
/// parses and prints (`error`, `double`, `last`).
pub trait SettingChoice: fmt::Display + std::str::FromStr<Err = vshred::Error> + Default {
    /// The setting's name, after `vshred.`.
    const NAME: &'static str;
}

impl SettingChoice for InexactNumbers {
    const NAME: &'static str = "inexact_numbers";
}

impl SettingChoice for DuplicateKeys {
    const NAME: &'static str = "duplicate_keys";
}

/// A setting's value: one of the core's choices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setting<T>(pub T);

impl<T: fmt::Display> fmt::Display for Setting<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: SettingChoice> ConfigField for Setting<T> {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description)
    }

    fn set(&mut self, _: &str, value: &str) -> Result<()> {
        match value.trim().to_ascii_lowercase().parse() {
            Ok(choice) => {
                self.0 = choice;
                Ok(())
            }
            Err(e) => config_err!("vshred.{}: {}", T::NAME, e.message()),
        }
    }

    fn reset(&mut self, _: &str) -> Result<()> {
        self.0 = T::default();
        Ok(())
    }
}

extensions_options! {
    /// vshred's settings.
    pub struct VshredSettings {
        /// What `parse_json` and `read_jsonl` make of a number written
        /// without an exponent that no decimal holds (more than 38
        /// digits): `error` (the default) names it; `double` stores the
        /// nearest double, as Spark's `parse_json` does (`try_parse_json`
        /// gives null or the double).
        pub inexact_numbers: Setting<InexactNumbers>, default = Setting::default()
        /// What `parse_json` and `read_jsonl` make of an object that gives
        /// a key twice, which a Variant cannot hold: `error` (the default)
        /// names it; `last` keeps the value given last, as Spark does with
        /// `spark.sql.variant.allowDuplicateKeys`.
        pub duplicate_keys: Setting<DuplicateKeys>, default = Setting::default()
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

/// The way out of a core error, where there is one: a setting, or, for a
/// Variant cast that fails, the function that gives null (as Spark says).
pub(crate) fn hint(kind: vshred::ErrorKind) -> Option<&'static str> {
    match kind {
        vshred::ErrorKind::Conversion => Some("try_variant_get or TRY_CAST gives null instead"),
        vshred::ErrorKind::InexactNumber => {
            Some("SET vshred.inexact_numbers = 'double' stores the nearest double")
        }
        vshred::ErrorKind::DuplicateKey => {
            Some("SET vshred.duplicate_keys = 'last' keeps the last value")
        }
        _ => None,
    }
}
