//! What an interrupted `dcsim run` says before it stops.
//!
//! Ctrl-C (SIGINT) and a batch system's SIGTERM (Slurm's time limit, `scancel`) end an
//! experiment at once, as they did before, but first say how many of its runs are complete on
//! disk, that the runs in progress are discarded, and the command that resumes it (the same
//! command with `--skip-existing`), then release the experiment's lock. Exit status 128 +
//! the signal number (130, 143), as a shell reports a process killed by it.
//!
//! Why this is safe: every result file is written under a hidden name and renamed, and a run
//! is complete only once its `complete` marker (written last) exists, so a run cut off
//! mid-write is simply missing to `--skip-existing`.
//!
//! How: the signal handler only writes the signal number into a pipe (async-signal-safe); a
//! thread reads it and does the rest. Not modelled: a graceful stop that lets the runs in
//! progress finish (a run can take hours; the user asked to stop), and other platforms than
//! Unix (there the default disposition stays: the process ends without the summary).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The experiment being run, for the message.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The experiment's results directory.
    pub exp_dir: PathBuf,
    /// The runs this invocation is responsible for: (run id, the hash its `complete` marker
    /// holds when it is complete).
    pub runs: Vec<(String, String)>,
    /// The lock file this invocation holds (removed on the way out).
    pub lock: Option<PathBuf>,
}

static PROGRESS: Mutex<Option<Progress>> = Mutex::new(None);
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Records the experiment an interrupt would report (None: nothing planned yet).
pub fn set(p: Option<Progress>) {
    *PROGRESS.lock().unwrap_or_else(|e| e.into_inner()) = p;
}

/// Counts a run in progress for as long as the guard lives.
pub fn running() -> RunningGuard {
    RUNNING.fetch_add(1, Ordering::Relaxed);
    RunningGuard(())
}

/// See [`running`].
pub struct RunningGuard(());

impl Drop for RunningGuard {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The command that resumes this one: its own arguments (the program as it was invoked, e.g.
/// `target/release/dcsim` under `cargo run`) with `--skip-existing`, quoted for a POSIX shell
/// where needed.
pub fn resume_command(args: &[String]) -> String {
    let quote = |a: &str| {
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        if plain {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    let mut v: Vec<String> = args.iter().map(|a| quote(a)).collect();
    if !args.iter().any(|a| a == "--skip-existing") {
        v.push("--skip-existing".into());
    }
    v.join(" ")
}

/// The message an interrupt prints for `p`, `running` runs being in progress.
pub fn message(p: &Progress, running: usize, resume: &str) -> String {
    let done = p
        .runs
        .iter()
        .filter(|(id, hash)| {
            std::fs::read_to_string(p.exp_dir.join(id).join(crate::report::COMPLETE_MARKER))
                .is_ok_and(|m| m.trim() == hash)
        })
        .count();
    let discarded = match running {
        0 => String::new(),
        1 => "; the run in progress is discarded".to_string(),
        n => format!("; the {n} runs in progress are discarded"),
    };
    format!(
        "interrupted: {done} of {} run(s) complete in {}{discarded}. Resume with:\n  {resume}",
        p.runs.len(),
        p.exp_dir.display()
    )
}

/// Installs the handlers (once per process; later calls do nothing).
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

#[cfg(unix)]
mod unix {
    use std::sync::Once;
    use std::sync::atomic::{AtomicI32, Ordering};

    static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

    extern "C" fn on_signal(sig: libc::c_int) {
        let fd = PIPE_WRITE.load(Ordering::Relaxed);
        if fd >= 0 {
            let b = sig as u8;
            // SAFETY: write(2) is async-signal-safe; `b` lives for the call.
            unsafe {
                libc::write(fd, (&b as *const u8).cast(), 1);
            }
        }
    }

    pub fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: pipe(2) fills the two descriptors of `fds`; fcntl(2) on them.
            unsafe {
                if libc::pipe(fds.as_mut_ptr()) != 0 {
                    return;
                }
                for fd in fds {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                }
            }
            PIPE_WRITE.store(fds[1], Ordering::Relaxed);
            let reader = fds[0];
            let spawned = std::thread::Builder::new()
                .name("dcsim-interrupt".into())
                .spawn(move || {
                    loop {
                        let mut b = 0u8;
                        // SAFETY: reads one byte into `b` from the pipe this thread owns.
                        let n = unsafe { libc::read(reader, (&mut b as *mut u8).cast(), 1) };
                        if n == 1 {
                            super::stop(b as i32);
                        }
                        if n == 0 {
                            return;
                        }
                    }
                });
            if spawned.is_err() {
                return;
            }
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: a zeroed sigaction with our handler, installed for `sig`.
                unsafe {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    sa.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut sa.sa_mask);
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
        });
    }
}

/// Reports and ends the process, as signal `sig` asked.
#[cfg_attr(not(unix), allow(dead_code))]
fn stop(sig: i32) -> ! {
    let p = PROGRESS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let resume = resume_command(&std::env::args().collect::<Vec<_>>());
    let text = match &p {
        Some(p) => message(p, RUNNING.load(Ordering::Relaxed), &resume),
        None => "interrupted before any run started".to_string(),
    };
    // On a line of its own, below any progress bar.
    eprintln!("\n{text}");
    if let Some(lock) = p.and_then(|p| p.lock) {
        let _ = std::fs::remove_file(lock);
    }
    std::process::exit(128 + sig);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn resume_adds_skip_existing_once_and_quotes_what_a_shell_would_split() {
        assert_eq!(
            resume_command(&args(&["/usr/bin/dcsim", "run", "exp.toml", "-j", "2"])),
            "/usr/bin/dcsim run exp.toml -j 2 --skip-existing"
        );
        assert_eq!(
            resume_command(&args(&["./target/release/dcsim", "run", "--skip-existing"])),
            "./target/release/dcsim run --skip-existing"
        );
        assert_eq!(
            resume_command(&args(&[
                "dcsim",
                "run",
                "--set",
                "schemes=[\"DCTCP\"]",
                "my exp.toml"
            ])),
            "dcsim run --set 'schemes=[\"DCTCP\"]' 'my exp.toml' --skip-existing"
        );
        assert_eq!(
            resume_command(&args(&["cargo-run", "it's"])),
            r"cargo-run 'it'\''s' --skip-existing"
        );
    }

    #[test]
    fn message_counts_complete_runs_by_their_marker_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let mark = |id: &str, hash: &str| {
            std::fs::create_dir_all(dir.path().join(id)).unwrap();
            std::fs::write(dir.path().join(id).join("complete"), hash).unwrap();
        };
        mark("a", "h1\n");
        mark("b", "old");
        std::fs::create_dir_all(dir.path().join("c")).unwrap();
        let p = Progress {
            exp_dir: dir.path().to_path_buf(),
            runs: vec![
                ("a".into(), "h1".into()),
                ("b".into(), "h2".into()),
                ("c".into(), "h3".into()),
                ("d".into(), "h4".into()),
            ],
            lock: None,
        };
        let m = message(&p, 2, "dcsim run x.toml --skip-existing");
        assert!(
            m.starts_with("interrupted: 1 of 4 run(s) complete in "),
            "{m}"
        );
        assert!(m.contains("the 2 runs in progress are discarded"), "{m}");
        assert!(m.ends_with("\n  dcsim run x.toml --skip-existing"), "{m}");
        assert!(!message(&p, 0, "r").contains("discarded"));
    }
}
