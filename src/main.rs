fn main() {
    // Like other Unix command-line tools, stop quietly when the reader of our output goes
    // away (`dcsim run --dry-run | head`) instead of failing to print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Err(e) = dcsim::cli::main() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
