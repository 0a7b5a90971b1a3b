//! AFL++ entry point of the `transport` target: see [`tether_fuzz::transport`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::transport::check(data));
}
