//! AFL++ entry point of the `edit_file` target: see [`tether_fuzz::edit_file`].

fn main() {
    afl::fuzz!(|data: &[u8]| tether_fuzz::edit_file::check(data));
}
