//! Encodes each line of a JSON Lines file as a Variant and writes it, as
//! metadata and value back to back, to `<out_dir>/<prefix>-<row>`; for
//! objects with a `v` field it also writes that field alone. Used by
//! `seed-corpus.sh` to seed the `variant_bytes` target.
//!
//! Usage: seed_variants <input.jsonl> <out_dir> <prefix>

use vshred::json::{JsonLines, JsonParser};
use vshred::variant::{DuplicateKeys, VariantBuilder, VariantRef};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, out_dir, prefix] = &args[..] else {
        return Err("usage: seed_variants <input.jsonl> <out_dir> <prefix>".into());
    };
    let text = std::fs::read(input)?;
    let parser = JsonParser::new();
    let mut builder = VariantBuilder::new().with_duplicate_keys(DuplicateKeys::KeepLast);
    let mut written = 0;
    for line in JsonLines::new(&text) {
        builder.reset();
        if parser.parse(line.text, &mut builder).is_err() {
            continue;
        }
        let (metadata, value) = builder.finish();
        let mut seed = metadata.to_vec();
        seed.extend_from_slice(value);
        std::fs::write(format!("{out_dir}/{prefix}-{}", line.row), &seed)?;
        written += 1;
        let variant = VariantRef::try_new(metadata, value)?;
        if let Some(v) = variant.as_object().and_then(|o| o.get("v")) {
            let mut alone = VariantBuilder::new();
            alone.append(&v)?;
            let (metadata, value) = alone.finish();
            let mut seed = metadata.to_vec();
            seed.extend_from_slice(value);
            std::fs::write(format!("{out_dir}/{prefix}-{}-v", line.row), &seed)?;
            written += 1;
        }
    }
    eprintln!("seed_variants: {written} seeds from {input}");
    Ok(())
}
