//! How `tether mcp` (and `tether lsp`, which gives memory back the same way) uses glibc's
//! allocator: large buffers are kept while the server is busy and handed back to the system once
//! it is idle.
//!
//! A call that reads or writes a large file allocates buffers of megabytes: the request line, its
//! parsed text, the file, the reply. With glibc's defaults each is a fresh mapping, or heap that
//! is trimmed when the call frees it, so the next call faults every page in again: that was half
//! of a 1 MiB `write_file` (1.5 to 1.9 ms with the buffers kept, 4.7 to 6.6 ms without, in the
//! same run of `bench/mcp_vs_reference.py`'s operations). [`keep_large_buffers`] raises the
//! thresholds so those buffers stay in the heap for the next call; [`release_free_memory`] returns
//! what is free, which the server does after a few idle seconds, so that an idle server does not
//! sit on the memory of its largest call. Elsewhere than glibc both do nothing.

/// Allocations up to this size come from the heap and stay there when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Free memory at the top of the heap is returned only beyond this much.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 128 << 20;

/// Keeps freed large buffers in the heap for the next call instead of returning them at once.
/// Call it before the server starts its threads.
#[allow(unsafe_code)]
pub fn keep_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets two of glibc's tuning parameters (documented in mallopt(3));
    // it takes the allocator's lock and is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

/// The most allocator arenas, for [`few_arenas`].
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENA_MAX: i32 = 1;

/// Keeps every allocation in the main arena instead of glibc's default of up to eight arenas per
/// core. A thread that allocates gets an arena of its own up to that limit, and the free space at
/// the top of a thread's arena is given back neither by `malloc_trim` (which trims only the main
/// arena's top) nor, under the trim threshold a large call raises, by `free`: `tether lsp` runs
/// every tool call on a blocking-pool thread, so three reads of a 20 MiB file left about 110 MiB
/// resident for good. Its threads are few and mostly wait on the editor, so one arena costs
/// little contention. Call it before the server starts its threads.
#[allow(unsafe_code)]
pub fn few_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets one of glibc's tuning parameters (mallopt(3)); it takes the
    // allocator's lock and is safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX);
    }
}

/// Returns free heap memory to the system.
#[allow(unsafe_code)]
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` (malloc_trim(3)) releases free pages of every arena under the
    // allocator's locks; no memory in use is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}
