//! Links the `vshred` binary as a fixed-address (non-PIE) executable on
//! Linux: a position-independent one relocates its 3.7 MB of `.data.rel.ro`
//! (DataFusion's tables of function pointers) at every start, which made
//! each run hold about 10 MB more memory than the binary did before it
//! linked DataFusion (`vshred encode` of 5M rows: 61 MB against 49 MB).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
