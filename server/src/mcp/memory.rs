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

/// When a server last did something that may have freed large buffers (a call answered, a
/// message written): milliseconds since [`epoch`], plus one (0: nothing yet).
static LAST_ACTIVITY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Wakes [`release_when_idle`] when it waits for activity, after a release.
static WOKEN: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// The instant [`LAST_ACTIVITY`] counts from.
fn epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Notes something done that may have freed large buffers (a call answered, a message written),
/// which puts off [`release_when_idle`]'s next release to a whole [`idle_release`] from now.
pub fn note_activity() {
    let now = epoch().elapsed().as_millis() as u64 + 1;
    LAST_ACTIVITY.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
    WOKEN.notify_one();
}

/// How long a server waits without activity before it returns free memory: 2 s, or
/// `TETHER_IDLE_RELEASE_MS` (tests set it to hold the release off, or to bring it on sooner).
pub fn idle_release() -> std::time::Duration {
    std::env::var("TETHER_IDLE_RELEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(std::time::Duration::from_secs(2), std::time::Duration::from_millis)
}

/// Returns free memory to the system one [`idle_release`] period after the last activity
/// ([`note_activity`]), and again after any later activity: a reply still being written when a
/// release ran (a slow reader) is noted when its write ends, so the memory it frees afterwards is
/// released too. An idle server that has released sleeps until the next activity, with no timer.
/// Runs until the runtime stops.
pub async fn release_when_idle() {
    use std::sync::atomic::Ordering;
    let period = idle_release();
    let mut released = 0;
    loop {
        let last = LAST_ACTIVITY.load(Ordering::Relaxed);
        if last == released {
            // Nothing since the last release: wait for activity (a permit left by a note made
            // before this wait wakes it at once).
            WOKEN.notified().await;
            continue;
        }
        let due = epoch() + std::time::Duration::from_millis(last - 1) + period;
        if std::time::Instant::now() < due {
            tokio::time::sleep_until(due.into()).await;
            continue;
        }
        release_free_memory();
        tracing::debug!("idle: returned free memory to the system");
        released = last;
    }
}

/// A writer that counts each completed write as activity ([`note_activity`]): the output of a
/// server whose protocol library writes it directly (tower-lsp on stdout).
#[derive(Debug)]
pub struct Watched<W>(pub W);

impl<W: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Watched<W> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let poll = std::pin::Pin::new(&mut self.0).poll_write(cx, buf);
        if poll.is_ready() {
            note_activity();
        }
        poll
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
