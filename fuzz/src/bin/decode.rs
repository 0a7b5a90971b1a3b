//! AFL++ entry point of the `decode` target: see [`tether_fuzz::decode`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::decode::check(data));
}
