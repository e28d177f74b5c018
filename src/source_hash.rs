//! The hash of the sources a dcsim binary is built from.
//!
//! `build.rs` hashes these files when it builds the binary, and the binary hashes them again
//! in its source directory when it writes a manifest: equal hashes mean the checkout still
//! holds the sources the binary was built from, so the checkout's git revision is the
//! binary's. Reading the revision at run time, rather than at build time, is what lets a
//! commit, a checkout or a `git add` cost no rebuild (the build script watches the sources,
//! never `.git`).
//!
//! The hash is 64-bit FNV-1a over each file's path (relative, `/`-separated), its length and
//! its bytes, in path order. Hidden files (editor swap files) are skipped. Not done: files a
//! build reads from outside [`ROOTS`] (the toolchain, the registry's crates, which
//! `Cargo.lock` pins).

use std::path::Path;

/// The files and directories (relative to the crate root) whose contents make the binary.
pub const ROOTS: &[&str] = &[
    "src",
    "build.rs",
    "Cargo.toml",
    "Cargo.lock",
    "experiments/default.toml",
    "experiments/bench_fat_tree.toml",
    "experiments/templates",
    "experiments/gpmp/load.toml",
    "experiments/pdtcp/partition_aggregate.toml",
];

fn collect(root: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    let p = root.join(rel);
    let meta = std::fs::metadata(&p)?;
    if meta.is_dir() {
        for e in std::fs::read_dir(&p)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            collect(root, &format!("{rel}/{name}"), out)?;
        }
    } else {
        out.push(rel.to_string());
    }
    Ok(())
}

/// The hash of [`ROOTS`] under `root`, or the error that kept a file from being read.
pub fn source_hash(root: &Path) -> std::io::Result<u64> {
    let mut files = Vec::new();
    for r in ROOTS {
        collect(root, r, &mut files)?;
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in &files {
        let bytes = std::fs::read(root.join(f))?;
        eat(f.as_bytes());
        eat(&[0]);
        eat(&(bytes.len() as u64).to_le_bytes());
        eat(&bytes);
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path) {
        std::fs::create_dir_all(dir.join("src/sub")).unwrap();
        for d in [
            "experiments/templates",
            "experiments/gpmp",
            "experiments/pdtcp",
        ] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        for (f, t) in [
            ("src/a.rs", "a"),
            ("src/sub/b.rs", "b"),
            ("build.rs", "x"),
            ("Cargo.toml", "[package]"),
            ("Cargo.lock", ""),
            ("experiments/default.toml", "d"),
            ("experiments/bench_fat_tree.toml", "f"),
            ("experiments/templates/rdma.toml", "r"),
            ("experiments/gpmp/load.toml", "g"),
            ("experiments/pdtcp/partition_aggregate.toml", "p"),
        ] {
            std::fs::write(dir.join(f), t).unwrap();
        }
    }

    #[test]
    fn the_hash_follows_contents_and_names_not_hidden_files() {
        let tmp = tempfile::tempdir().unwrap();
        tree(tmp.path());
        let h0 = source_hash(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("src/.a.rs.swp"), "junk").unwrap();
        assert_eq!(source_hash(tmp.path()).unwrap(), h0, "hidden files count");
        std::fs::write(tmp.path().join("src/sub/b.rs"), "c").unwrap();
        let h1 = source_hash(tmp.path()).unwrap();
        assert_ne!(h1, h0, "an edit goes unseen");
        std::fs::rename(tmp.path().join("src/sub/b.rs"), tmp.path().join("src/b.rs")).unwrap();
        assert_ne!(source_hash(tmp.path()).unwrap(), h1, "a move goes unseen");
        std::fs::remove_file(tmp.path().join("Cargo.lock")).unwrap();
        assert!(
            source_hash(tmp.path()).is_err(),
            "a missing root is not an error"
        );
    }

    #[test]
    fn the_crate_hashes_to_what_the_build_recorded() {
        let h = source_hash(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(format!("{h:016x}"), crate::provenance::SOURCE_HASH);
    }
}
