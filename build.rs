//! Records the git revision the binary was built from, and whether the work tree had
//! uncommitted changes to tracked files then, for the provenance in every manifest.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let rev = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(s) => (!s.is_empty()).to_string(),
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=DCSIM_GIT_REV={rev}");
    println!("cargo:rustc-env=DCSIM_GIT_DIRTY={dirty}");
    for p in ["src", "Cargo.toml", "build.rs", ".git/HEAD", ".git/index"] {
        println!("cargo:rerun-if-changed={p}");
    }
}
