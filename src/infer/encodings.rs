//! What Parquet's encodings make of a leaf's values, followed value by
//! value over the sample as the parquet crate writes them, for the cost
//! model: `DELTA_BINARY_PACKED` integers ([`Deltas`]), `DELTA_BYTE_ARRAY`
//! strings ([`Prefixes`]), and the RLE/bit-packing hybrid of dictionary
//! indices and levels ([`Runs`]). Each keeps a few counters (and
//! `Prefixes` the value before), never the values.

/// What `DELTA_BINARY_PACKED` makes of a sequence of integers: blocks of
/// 128 values in four miniblocks of 32, each miniblock bit-packing its
/// deltas less the block's smallest at the width its widest needs. Kept
/// per miniblock (its smallest and largest delta) rather than per block,
/// which differs only in the block's minimum, for a few operations per
/// value.
#[derive(Clone, Debug, Default)]
pub(super) struct Deltas {
    previous: Option<i64>,
    /// The open miniblock: its deltas so far, smallest and largest.
    open: u32,
    low: i64,
    high: i64,
    /// The bits of the closed miniblocks.
    packed_bits: u64,
    values: u64,
}

/// Values per `DELTA_BINARY_PACKED` miniblock and block.
const MINIBLOCK: u32 = 32;
const BLOCK: f64 = 128.0;

impl Deltas {
    pub(super) fn add(&mut self, x: i64) {
        self.values += 1;
        if let Some(previous) = self.previous.replace(x) {
            let delta = x.wrapping_sub(previous);
            if self.open == 0 {
                (self.low, self.high) = (delta, delta);
            } else {
                self.low = self.low.min(delta);
                self.high = self.high.max(delta);
            }
            self.open += 1;
            if self.open == MINIBLOCK {
                self.packed_bits += self.width() * MINIBLOCK as u64;
                self.open = 0;
            }
        }
    }

    /// The bit width of the open miniblock.
    fn width(&self) -> u64 {
        let range = (self.high as i128 - self.low as i128) as u128;
        (128 - range.leading_zeros()) as u64
    }

    /// The encoded bytes: the packed deltas, a width byte per miniblock,
    /// a minimum delta (about 2 bytes as a zigzag varint) per block, and
    /// the header with the first value (about 10 bytes).
    pub(super) fn bytes(&self) -> f64 {
        let open = if self.open > 0 {
            self.width() * MINIBLOCK as u64
        } else {
            0
        };
        let values = self.values as f64;
        let blocks = (values / BLOCK).ceil();
        (self.packed_bits + open) as f64 / 8.0 + blocks * (4.0 + 2.0) + 10.0
    }
}

/// What `DELTA_BYTE_ARRAY` makes of a sequence of byte strings: each is
/// the length of the prefix it shares with the one before and the rest
/// (its suffix), the lengths as `DELTA_BINARY_PACKED`.
#[derive(Clone, Debug, Default)]
pub(super) struct Prefixes {
    previous: Vec<u8>,
    prefix_lengths: Deltas,
    suffix_lengths: Deltas,
    suffix_bytes: u64,
}

impl Prefixes {
    pub(super) fn add(&mut self, bytes: &[u8]) {
        let shared = self
            .previous
            .iter()
            .zip(bytes)
            .take_while(|(a, b)| a == b)
            .count();
        self.prefix_lengths.add(shared as i64);
        self.suffix_lengths.add((bytes.len() - shared) as i64);
        self.suffix_bytes += (bytes.len() - shared) as u64;
        self.previous.clear();
        self.previous.extend_from_slice(bytes);
    }

    /// The encoded bytes.
    pub(super) fn bytes(&self) -> f64 {
        self.prefix_lengths.bytes() + self.suffix_lengths.bytes() + self.suffix_bytes as f64
    }
}

/// What the RLE/bit-packing hybrid makes of a leaf's dictionary indices,
/// as the parquet crate encodes them: groups of 8 bit-packed, except that
/// a group of 8 equal values starts a run, stored as a count and one index
/// however long it goes on. Runs are looked for only from a group's start,
/// so a run of 8 to 14 equal values may be bit-packed all the same. Kept
/// by the values' hashes, in sample order: values sorted or clustered
/// (browser versions by feature, logs by host) cost far less than their
/// bits per value.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Runs {
    /// 0 at the start, as in the encoder: a first value of 0 then extends
    /// an empty run, which counts the same as starting one.
    previous: u64,
    /// Equal values at the end of the open group, or in the open run.
    repeated: u64,
    /// Values in the open group.
    grouped: u8,
    runs: u64,
    run_values: u64,
    /// The headers of the stretches of bit-packed groups between runs.
    headers: u64,
    /// The bit-packed groups of the open stretch; 0 after a run.
    stretch: u8,
}

/// Values per bit-packed group of the RLE/bit-packing hybrid.
const GROUP: u64 = 8;

/// The most groups one bit-packed header counts (its count is a 1-byte
/// varint in the parquet crate's encoder).
const GROUPS_PER_HEADER: u8 = 63;

impl Runs {
    pub(super) fn add(&mut self, hash: u64) {
        if hash == self.previous {
            self.repeated += 1;
            if self.repeated > GROUP {
                self.run_values += 1;
                return;
            }
        } else {
            self.previous = hash;
            self.repeated = 1;
        }
        self.grouped += 1;
        if u64::from(self.grouped) == GROUP {
            self.grouped = 0;
            if self.repeated == GROUP {
                self.runs += 1;
                self.run_values += GROUP;
                self.stretch = 0;
            } else {
                // A bit-packed group: a run may start only after it.
                self.repeated = 0;
                if self.stretch.is_multiple_of(GROUPS_PER_HEADER) {
                    self.headers += 1;
                    self.stretch = 0;
                }
                self.stretch += 1;
            }
        }
    }

    /// Adds `n` values of `hash`: past the start of their run, at once.
    pub(super) fn add_repeated(&mut self, hash: u64, mut n: u64) {
        while n > 0 && !(hash == self.previous && self.repeated >= GROUP) {
            self.add(hash);
            n -= 1;
        }
        self.repeated += n;
        self.run_values += n;
    }

    /// The bytes of `values` indices of `bits` bits each, these runs
    /// among them: each run's count and index, the bit-packed groups and
    /// the header of each stretch of them (of up to 63 groups).
    pub(super) fn bytes(&self, values: f64, bits: f64) -> f64 {
        let packed = (values - self.run_values as f64).max(0.0);
        packed * bits / 8.0 + self.runs as f64 * (1.0 + (bits / 8.0).ceil()) + self.headers as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_indices_start_only_at_a_group_of_eight() {
        let mut runs = Runs::default();
        // Three values, then twenty equal ones: the first five of those
        // complete a bit-packed group; the run starts at the next.
        for hash in [1, 2, 3] {
            runs.add(hash);
        }
        for _ in 0..20 {
            runs.add(9);
        }
        assert_eq!((runs.runs, runs.run_values), (1, 15));
        // 8 values bit-packed at 2 bits after their header, and a run of
        // a count and an index.
        assert_eq!(runs.bytes(23.0, 2.0), 1.0 + 2.0 + 2.0);
        // Ten equal values, three ending a group and seven after it, make
        // no run.
        let mut runs = Runs::default();
        for hash in [1, 2, 3, 4, 5].into_iter().chain([7; 10]) {
            runs.add(hash);
        }
        assert_eq!((runs.runs, runs.run_values), (0, 0));
    }

    #[test]
    fn each_stretch_of_bit_packed_groups_has_a_header_of_up_to_63_groups() {
        let mut runs = Runs::default();
        // 64 groups of alternating indices: two stretches (63 groups and 1).
        for i in 0..64 * 8 {
            runs.add(i % 2 + 1);
        }
        assert_eq!(runs.bytes(512.0, 1.0), 2.0 + 64.0);
        // A run between two groups: each group a stretch of its own.
        let mut runs = Runs::default();
        for hash in (1..=8).chain([9; 16]).chain(1..=8) {
            runs.add(hash);
        }
        assert_eq!((runs.runs, runs.headers), (1, 2));
    }

    #[test]
    fn a_repeated_value_added_at_once_counts_as_added_one_by_one() {
        for before in [0u64, 1, 3, 7, 8, 9, 15, 16] {
            for n in [0u64, 1, 5, 8, 9, 14, 15, 100] {
                let (mut one_by_one, mut at_once) = (Runs::default(), Runs::default());
                for i in 0..before {
                    one_by_one.add(i % 3 + 10);
                    at_once.add(i % 3 + 10);
                }
                for _ in 0..n {
                    one_by_one.add(42);
                }
                at_once.add_repeated(42, n);
                assert_eq!(one_by_one, at_once, "{before} values, then {n}");
            }
        }
    }

    #[test]
    fn deltas_cost_the_bits_of_their_spread() {
        let deltas = |values: &mut dyn Iterator<Item = i64>| {
            let mut d = Deltas::default();
            values.for_each(|x| d.add(x));
            d.bytes()
        };
        // Constant steps pack to nothing: the headers alone (32 blocks).
        assert_eq!(deltas(&mut (0..4096).map(|i| 1_000_000 + 7 * i)), 202.0);
        // Steps of 0 to 255 take 8 bits each.
        let spread = deltas(&mut (0..4096).scan(0i64, |x, i| {
            *x += (i * 37) % 256;
            Some(*x)
        }));
        assert!((spread - (4096.0 + 202.0)).abs() < 40.0, "{spread}");
        // Extremes neither overflow nor take more than 65 bits.
        let extremes = deltas(&mut [i64::MIN, i64::MAX, i64::MIN].into_iter());
        assert!(extremes <= 32.0 * 65.0 / 8.0 + 16.0, "{extremes}");
    }

    #[test]
    fn prefixes_keep_only_what_differs_from_the_value_before() {
        let mut p = Prefixes::default();
        for i in 0..1024 {
            p.add(format!("/catalog/items/{i:06}").as_bytes());
        }
        // 21 bytes a value, of which only the digits that changed are
        // kept (1.1 bytes a value), and lengths that barely vary.
        let bytes = p.bytes();
        assert!(bytes < 1024.0 * 3.5, "{bytes}");
        assert!(bytes > 1024.0, "{bytes}");
    }
}
