//! File-system helpers every layer may use: names for files written atomically (written
//! under a temporary name, then renamed into place). Imports nothing of the crate.

use std::path::{Path, PathBuf};

/// A temporary name in `dir` for `name`, unique to this process and call.
pub fn temp_name(dir: &Path, name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.partial-{}-{n}", std::process::id()))
}
