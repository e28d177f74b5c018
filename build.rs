//! Records the hash of the sources the binary is built from (see `src/source_hash.rs`). The
//! git revision is read when a manifest is written, not here: this script watches only the
//! sources, so a commit, a checkout or `git add` does not rebuild the crate.

#[path = "src/source_hash.rs"]
mod source_hash;

fn main() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let h = source_hash::source_hash(&root).expect("the crate's sources are readable");
    println!("cargo:rustc-env=DCSIM_SOURCE_HASH={h:016x}");
    for p in source_hash::ROOTS {
        println!("cargo:rerun-if-changed={p}");
    }
}
