//! Groups of arguments that several commands share, and what they become
//! in the library's options.

use clap::{Args, ValueEnum};
use vshred::infer::{InferOptions, Preset};
use vshred::json::InexactNumbers;
use vshred::parquet::ScanOptions;
use vshred::variant::DuplicateKeys;

/// How JSON text is read.
#[derive(Args)]
pub(crate) struct JsonArgs {
    /// Keep the last value of a key given twice in one object instead of
    /// failing (each line is then parsed whole before it is shredded,
    /// which is slower).
    #[arg(long)]
    keep_last_duplicate: bool,
    /// What becomes of a number written without an exponent that no
    /// decimal holds (more than 38 digits): `error` names its line and
    /// column; `double` stores the nearest double, as Spark's parse_json
    /// does, and the run ends with a warning that counts them.
    #[arg(long, value_enum, value_name = "error|double", default_value_t = InexactArg::Error)]
    inexact_numbers: InexactArg,
}

impl JsonArgs {
    pub(crate) fn duplicate_keys(&self) -> DuplicateKeys {
        if self.keep_last_duplicate {
            DuplicateKeys::KeepLast
        } else {
            DuplicateKeys::Error
        }
    }

    pub(crate) fn inexact_numbers(&self) -> InexactNumbers {
        match self.inexact_numbers {
            InexactArg::Error => InexactNumbers::Error,
            InexactArg::Double => InexactNumbers::Double,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum InexactArg {
    Error,
    Double,
}

/// How files are read.
#[derive(Args)]
pub(crate) struct ScanArgs {
    /// Worker threads that read row groups (default: one per core).
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>)]
    threads: Option<usize>,
}

impl ScanArgs {
    pub(crate) fn options(&self) -> ScanOptions {
        ScanOptions {
            threads: self.threads.and_then(std::num::NonZeroUsize::new),
            ..ScanOptions::default()
        }
    }
}

#[derive(Args)]
pub(crate) struct LayoutArgs {
    /// Top-level field to store as a Variant column (repeatable); each line
    /// must then be an object whose other fields become ordinary columns.
    /// Without it, each whole line is a Variant column named `v`.
    #[arg(long = "variant-field", value_name = "NAME")]
    pub(crate) variant_fields: Vec<String>,
    /// Lines used to choose column types and shredding (at least 1).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = at_least_one::<usize>)]
    pub(crate) sample_rows: usize,
    /// Most Parquet columns a Variant column may shred into (at least 1).
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>,
        default_value_t = InferOptions::default().max_columns())]
    max_columns: usize,
    /// Deepest nesting that gets typed columns.
    #[arg(long, value_name = "N", default_value_t = InferOptions::default().max_depth())]
    max_depth: usize,
    /// Share of sampled rows a field must appear in to get a column, from
    /// 0 to 1 (0.1 is 10%).
    // A negative value is a value, refused as one, not an option.
    #[arg(long, value_name = "F", value_parser = share, allow_negative_numbers = true,
        default_value_t = InferOptions::default().min_frequency())]
    min_frequency: f64,
    #[command(flatten)]
    pub(crate) json: JsonArgs,
}

impl LayoutArgs {
    /// The limits of inference given other values than their defaults.
    pub(crate) fn limits_given(&self) -> Vec<&'static str> {
        let defaults = InferOptions::default();
        [
            ("--max-columns", self.max_columns != defaults.max_columns()),
            ("--max-depth", self.max_depth != defaults.max_depth()),
            (
                "--min-frequency",
                self.min_frequency != defaults.min_frequency(),
            ),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// The inference options these arguments set, on top of `preset`.
    pub(crate) fn infer_options(&self, preset: Preset) -> InferOptions {
        InferOptions::new(preset)
            .with_sample_rows(self.sample_rows)
            .with_max_columns(self.max_columns)
            .with_max_depth(self.max_depth)
            .with_min_frequency(self.min_frequency)
    }
}

/// A count that must be at least 1 (clap's range check would print the
/// largest u64 as the bound).
pub(crate) fn at_least_one<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr + Default + PartialEq,
    T::Err: std::fmt::Display,
{
    match text.parse::<T>() {
        Ok(n) if n == T::default() => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a count ({e})")),
    }
}

/// A share: a number from 0 to 1.
pub(crate) fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        Ok(_) => Err(format!("{text} is not from 0 to 1 (0.1 is 10%)")),
        Err(_) => Err(format!("{text} is not a number from 0 to 1")),
    }
}

/// A size in bytes, at least 1: digits, then optionally K, M or G (KiB,
/// MiB, GiB).
pub(crate) fn byte_size(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "m" | "MiB" => 1 << 20,
        "G" | "g" | "GiB" => 1 << 30,
        _ => 0,
    };
    let usage = || format!("{text} is not a size of at least 1 byte (4096, 64K, 128M, 1G)");
    if scale == 0 || digits.is_empty() {
        return Err(usage());
    }
    // Digits too many for a count of bytes are a size too large, not
    // something that is not a size.
    let too_large = || format!("{text} is more bytes than 64 bits count (at most 16 EiB)");
    let n = digits.parse::<u64>().map_err(|_| too_large())?;
    match n.checked_mul(scale) {
        Some(0) => Err(usage()),
        Some(n) => Ok(n),
        None => Err(too_large()),
    }
}

#[cfg(test)]
mod tests {
    use super::byte_size;

    #[test]
    fn a_byte_size_past_64_bits_says_so() {
        assert_eq!(byte_size("64K"), Ok(64 << 10));
        assert_eq!(byte_size("1G"), Ok(1 << 30));
        for usage in ["0", "0G", "", "12X", "K", "-1"] {
            assert_eq!(
                byte_size(usage),
                Err(format!(
                    "{usage} is not a size of at least 1 byte (4096, 64K, 128M, 1G)"
                ))
            );
        }
        for huge in ["99999999999G", "99999999999999999999"] {
            assert_eq!(
                byte_size(huge),
                Err(format!(
                    "{huge} is more bytes than 64 bits count (at most 16 EiB)"
                ))
            );
        }
    }
}
