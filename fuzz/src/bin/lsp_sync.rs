//! AFL++ entry point of the `lsp_sync` target: see [`tether_fuzz::lsp_sync`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::lsp_sync::check(data));
}
