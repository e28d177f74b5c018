// The allocator. A packet-level run touches a working set of tens of MiB (ports, their
// queues and wires, flows) at random, far beyond what 4 KiB pages let the TLB cover; mimalloc
// backs its arenas with transparent huge pages (where the kernel allows them, also in its
// `madvise` mode) and allocates small objects faster than the system allocator. Measured on
// the scaling benchmark (issue 14; medians of interleaved runs, as the development VM has no
// hardware counters): about 10-15 % less wall time per packet-hop at k = 8 and 16, most of it
// also had from glibc's allocator with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, for 15-30 MiB
// more resident memory; no faster on a 16-host network. Outputs do not depend on the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
