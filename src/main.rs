fn main() {
    if let Err(e) = dcsim::cli::main() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
