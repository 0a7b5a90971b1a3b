//! The `tether` binary: a thin shell over [`tether::cli`].

fn main() -> std::process::ExitCode {
    tether::cli::main()
}
