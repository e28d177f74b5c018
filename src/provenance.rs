//! Provenance and identity of results: which build made them, from which config and inputs,
//! and who is writing an experiment directory right now.
//!
//! * A run's **identity** is its resolved config (the experiment's with the run's sweep values
//!   applied) without the keys that do not change a run's results (`name`, `output_dir`,
//!   `seed`/`seeds`/`schemes` beyond the run's own scheme and seed, `[sweep]`, `[[plot]]`),
//!   plus its scheme, its seed and a hash of every input file it reads. Its hash (64-bit
//!   FNV-1a of the identity as JSON) is written into the run's manifest and `complete`
//!   marker; a run on disk is reused (`--skip-existing`) or merged only when its hash equals
//!   the one the current config gives, and otherwise the changed keys are named.
//! * The **lock** of an experiment directory (`.lock`, or `.lock.shard-I-of-N` for a shard)
//!   holds the host, process id, start time and command line of the `dcsim run` writing it;
//!   a second run refuses while the holder is alive (on the same host, checked through
//!   `/proc/<pid>`; a lock from another host counts as held until deleted).
//!
//! Not done: cryptographic hashing (the hash detects edits, it does not resist forgery),
//! locking across hosts beyond the shared file.

use crate::config::Config;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The hash of the sources this binary was built from (see [`crate::source_hash`]).
pub const SOURCE_HASH: &str = env!("DCSIM_SOURCE_HASH");

/// Which sources made this binary, as every manifest records it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BuildInfo {
    /// The git revision of the checkout the binary was built in, when that checkout still
    /// holds the binary's sources; "unknown" otherwise (no checkout, no git, or sources
    /// edited since the build).
    pub git_revision: String,
    /// "false" when the binary's sources are exactly that revision's, "true" when they carry
    /// uncommitted changes (untracked source files included), "unknown" when the revision is.
    pub git_dirty: &'static str,
    /// [`SOURCE_HASH`], the one identity that holds without git.
    pub source_hash: &'static str,
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// This binary's [`BuildInfo`], worked out once per process: the sources in the directory it
/// was built in are hashed again, and only if they still match is that checkout's revision
/// (read now, which is why a commit needs no rebuild) taken as the binary's.
pub fn build_info() -> &'static BuildInfo {
    static INFO: std::sync::OnceLock<BuildInfo> = std::sync::OnceLock::new();
    INFO.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let unknown = BuildInfo {
            git_revision: "unknown".into(),
            git_dirty: "unknown",
            source_hash: SOURCE_HASH,
        };
        let same =
            crate::source_hash::source_hash(dir).is_ok_and(|h| format!("{h:016x}") == SOURCE_HASH);
        if !same {
            return unknown;
        }
        let Some(rev) = git(dir, &["rev-parse", "HEAD"]) else {
            return unknown;
        };
        let mut status = vec!["status", "--porcelain", "--untracked-files=all", "--"];
        status.extend_from_slice(crate::source_hash::ROOTS);
        let dirty = match git(dir, &status) {
            Some(s) if s.is_empty() => "false",
            Some(_) => "true",
            None => "unknown",
        };
        BuildInfo {
            git_revision: rev,
            git_dirty: dirty,
            source_hash: SOURCE_HASH,
        }
    })
}

pub use crate::fileid::fnv1a;

/// [`fnv1a`] of a file's bytes, read a block at a time (flow files can be hundreds of MB).
pub fn fnv1a_file(path: &Path) -> std::io::Result<u64> {
    crate::fileid::FileIdent::of(path).map(|i| i.hash)
}

/// The identity of one run.
#[derive(Clone, Debug)]
pub struct RunIdentity {
    /// Hex hash of `identity`.
    pub hash: String,
    /// What the hash covers.
    pub identity: Value,
    /// Input files (as named in the config) and the hashes of their contents.
    pub inputs: BTreeMap<String, String>,
}

/// The identity of a run of `scheme` at `seed` under `cfg` (its resolved config); input files
/// resolve against `base`.
pub fn run_identity(cfg: &Config, scheme: &str, seed: u64, base: &Path) -> RunIdentity {
    let mut c = cfg.clone();
    c.name = String::new();
    c.output_dir = PathBuf::new();
    c.seed = 0;
    c.seeds = 1;
    c.schemes = Vec::new();
    c.sweep = Default::default();
    c.plot = Vec::new();
    c.per_scheme = Default::default();
    let mut inputs = BTreeMap::new();
    for f in cfg
        .workload
        .input_files()
        .into_iter()
        .chain(cfg.routing.pin.clone())
    {
        let h = match fnv1a_file(&base.join(&f)) {
            Ok(h) => format!("{h:016x}"),
            Err(_) => "unreadable".to_string(),
        };
        inputs.insert(f.display().to_string(), h);
    }
    let identity = serde_json::json!({
        "config": serde_json::to_value(&c).expect("configs serialize"),
        "scheme": scheme,
        "seed": seed,
        "inputs": inputs,
    });
    let text = serde_json::to_string(&identity).expect("JSON serializes");
    RunIdentity {
        hash: format!("{:016x}", fnv1a(text.as_bytes())),
        identity,
        inputs,
    }
}

/// At the end of a run: every input file the run's identity hashed before it ran (resolved
/// against `base`) still has that hash. A file edited while runs read it would otherwise be
/// recorded in the manifest by a hash of contents the run never saw.
pub fn inputs_unchanged(base: &Path, id: &RunIdentity) -> Result<(), String> {
    for (name, before) in &id.inputs {
        if before == "unreadable" {
            continue;
        }
        let now = match fnv1a_file(&base.join(name)) {
            Ok(h) => format!("{h:016x}"),
            Err(e) => format!("unreadable ({e})"),
        };
        if &now != before {
            return Err(format!(
                "{name}: the file changed during the run (hash {before} before, {now} after); the run's results would not be this file's, so none were written"
            ));
        }
    }
    Ok(())
}

/// The hash a run's identity recorded for input file `name` (as the config names it), if it
/// could read it.
pub fn input_hash<'a>(id: &'a RunIdentity, name: &Path) -> Option<&'a str> {
    id.inputs
        .get(&name.display().to_string())
        .map(String::as_str)
        .filter(|h| *h != "unreadable")
}

/// The dotted paths at which two JSON values differ (leaves, arrays compared whole).
pub fn changed_keys(a: &Value, b: &Value) -> Vec<String> {
    fn walk(a: Option<&Value>, b: Option<&Value>, path: &str, out: &mut Vec<String>) {
        match (a, b) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x.get(k), y.get(k), &p, out);
                }
            }
            (x, y) if x != y => out.push(path.to_string()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(Some(a), Some(b), "", &mut out);
    // Report config keys without the "config." prefix.
    out.into_iter()
        .map(|k| k.strip_prefix("config.").map(String::from).unwrap_or(k))
        .collect()
}

/// The command line of this process, for manifests.
pub fn command_line() -> Vec<String> {
    std::env::args().collect()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

/// An exclusive lock on (a shard of) an experiment directory, released when dropped.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock of `exp_dir` for a whole run (`shard` None) or one shard. Fails, naming
    /// the holder, while a live process holds the whole-experiment lock, the same shard's, or
    /// (for a whole run) any shard's.
    pub fn acquire(exp_dir: &Path, shard: Option<(usize, usize)>) -> Result<DirLock, String> {
        let name = match shard {
            None => ".lock".to_string(),
            Some((i, n)) => format!(".lock.shard-{i}-of-{n}"),
        };
        let path = exp_dir.join(&name);
        // Conflicting locks: the whole-run lock always; ours; for a whole run, every shard's.
        let mut others: Vec<PathBuf> = vec![exp_dir.join(".lock")];
        if shard.is_none()
            && let Ok(rd) = std::fs::read_dir(exp_dir)
        {
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(".lock.shard-"))
                })
                .collect();
            v.sort();
            others.extend(v);
        }
        for o in &others {
            if o != &path
                && let Some(holder) = live_holder(o)
            {
                return Err(format!(
                    "{} is in use: {holder} holds {}; wait for it, or delete that file if the process is gone",
                    exp_dir.display(),
                    o.display()
                ));
            }
        }
        let me = format!(
            "host={} pid={} since_unix_s={} command={}\n",
            host_name(),
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            command_line().join(" ")
        );
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write;
                    f.write_all(me.as_bytes())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    return Ok(DirLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if let Some(holder) = live_holder(&path) {
                        return Err(format!(
                            "{} is in use: {holder} holds {}; wait for it, or delete that file if the process is gone",
                            exp_dir.display(),
                            path.display()
                        ));
                    }
                    // A stale lock (its process is gone): take it over.
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
        Err(format!("cannot take the lock {}", path.display()))
    }
}

impl DirLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The description of a lock file's holder if it is (or may be) alive: a process on this host
/// that still exists, or any process on another host.
fn live_holder(lock: &Path) -> Option<String> {
    let text = std::fs::read_to_string(lock).ok()?;
    let field = |k: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")).map(String::from))
    };
    let host = field("host").unwrap_or_default();
    let pid = field("pid").unwrap_or_default();
    let who = format!("dcsim (pid {pid} on {host})");
    if host != host_name() {
        return Some(who);
    }
    if pid == std::process::id().to_string() {
        return None;
    }
    Path::new(&format!("/proc/{pid}")).exists().then_some(who)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_hashes_as_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let p = dir.path().join("f");
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(fnv1a_file(&p).unwrap(), fnv1a(&bytes));
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c, "the FNV-1a test vector");
    }
}
