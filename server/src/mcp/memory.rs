//! How `tether mcp` uses glibc's allocator: large buffers are kept while the server is busy and
//! handed back to the system once it is idle.
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
