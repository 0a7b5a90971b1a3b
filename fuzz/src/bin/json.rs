//! AFL++ entry point of the `json` target: see [`tether_fuzz::json`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::json::check(data));
}
