//! A fast seeded hash of byte strings, for the tables that count or look
//! up many of them: the Variant builder's field names and the writer's
//! count of a leaf's distinct values.

/// Hashes byte strings with a seed drawn for each hasher. Each 8-byte word
/// is mixed by a folded multiply (the high half of the 128-bit product
/// folded onto the low), so that every byte reaches the low bits that
/// pick a table slot: names that differ only in their last bytes
/// (`k0000001`, `k0000002`, ...) spread over the table instead of piling
/// into a few slots, which made large objects quadratic, and the seed
/// keeps crafted inputs from colliding on purpose. Eight bytes a step, it
/// is several times faster than std's SipHash on long values (whole
/// residual Variants).
#[derive(Clone, Debug)]
pub(crate) struct BytesHasher {
    seed: u64,
}

impl Default for BytesHasher {
    fn default() -> Self {
        use std::hash::BuildHasher;
        BytesHasher {
            seed: std::collections::hash_map::RandomState::new().hash_one(0u64),
        }
    }
}

impl BytesHasher {
    /// A hasher whose hashes are the same in every process: for a
    /// fingerprint two processes compare, not for a table.
    pub(crate) fn unseeded() -> BytesHasher {
        BytesHasher { seed: K }
    }

    #[inline]
    pub(crate) fn hash(&self, bytes: &[u8]) -> u64 {
        fold(absorb(self.seed ^ bytes.len() as u64, bytes) ^ self.seed)
    }
}

/// 2^64 divided by the golden ratio: odd, with well-spread bits.
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The high half of `a * K` folded onto the low.
#[inline]
fn fold(a: u64) -> u64 {
    let p = a as u128 * K as u128;
    p as u64 ^ (p >> 64) as u64
}

/// `h` with `bytes` mixed in, eight at a time.
#[inline]
fn absorb(mut h: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = fold(h ^ u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    fold(h ^ u64::from_le_bytes(tail))
}

/// As a `HashMap`'s hasher, for maps keyed by names: std's SipHash took 9%
/// of the instructions of encoding GitHub's webhook payloads, in the
/// inferrers' maps of field names.
impl std::hash::BuildHasher for BytesHasher {
    type Hasher = StreamHasher;

    fn build_hasher(&self) -> StreamHasher {
        StreamHasher {
            seed: self.seed,
            state: self.seed,
        }
    }
}

/// [`BytesHasher`]'s hash of what a key writes, piece by piece.
pub(crate) struct StreamHasher {
    seed: u64,
    state: u64,
}

impl std::hash::Hasher for StreamHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.state = absorb(self.state ^ bytes.len() as u64, bytes);
    }

    #[inline]
    fn finish(&self) -> u64 {
        fold(self.state ^ self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots (of a table twice their number) that `names` hash to,
    /// against the number a random hash would fill on average.
    fn slots_filled(names: &[String], hash: impl Fn(&String) -> u64) -> (usize, usize) {
        let size = (2 * names.len()).next_power_of_two();
        let mut filled = vec![false; size];
        for name in names {
            filled[hash(name) as usize & (size - 1)] = true;
        }
        let n = names.len() as f64;
        let expected = size as f64 * (1.0 - (-n / size as f64).exp());
        (filled.iter().filter(|&&f| f).count(), expected as usize)
    }

    #[test]
    fn names_that_differ_in_a_few_bytes_spread_over_the_slots() {
        let families: [fn(usize) -> String; 5] = [
            |i| format!("k{i:07}"),       // one word, its last bytes vary
            |i| format!("{i:07}k"),       // its first bytes vary
            |i| format!("field_{i:010}"), // the tail varies
            |i| format!("{i:08}_{i:08}"), // two words
            |i| format!("{i}"),           // short, of varying length
        ];
        for (f, family) in families.iter().enumerate() {
            let names: Vec<String> = (0..50_000).map(family).collect();
            let hasher = BytesHasher::default();
            // Bytes hashed whole, and a `String` hashed as a map's key.
            for (way, (filled, expected)) in [
                slots_filled(&names, |name| hasher.hash(name.as_bytes())),
                slots_filled(&names, |name| {
                    std::hash::BuildHasher::hash_one(&hasher, name)
                }),
            ]
            .into_iter()
            .enumerate()
            {
                // The FxHash this replaced filled 32 of the 41,568 for each
                // of the first three families, 1,024 and 540 for the others.
                assert!(
                    filled * 10 >= expected * 9,
                    "family {f}, way {way}: {filled} of {expected} slots"
                );
            }
        }
    }
}
