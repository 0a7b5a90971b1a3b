//! AFL++ entry point of the `patch` target: see [`tether_fuzz::patch`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::patch::check(data));
}
