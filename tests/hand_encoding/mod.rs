//! Writing Variant integers by hand, at a width the test chooses: shared by
//! the tests that build encodings the builder never makes.

/// The fewest bytes (1 to 4) that hold `v`.
pub fn width_for(v: usize) -> u8 {
    match v {
        0..=0xFF => 1,
        0x100..=0xFFFF => 2,
        0x1_0000..=0xFF_FFFF => 3,
        _ => 4,
    }
}

/// Appends `v` little-endian in `width` bytes, which must hold it.
pub fn push_uint(out: &mut Vec<u8>, v: usize, width: u8) {
    assert!(
        width == 4 || v >> (8 * width) == 0,
        "{v} needs more than {width} bytes"
    );
    out.extend_from_slice(&(v as u32).to_le_bytes()[..width as usize]);
}
