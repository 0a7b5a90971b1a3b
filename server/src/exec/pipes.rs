//! A command's stdout and stderr pipes, read together without blocking the watch on either.
//!
//! On Unix one `poll` covers both, so no reader thread exists that a pipe held open by a process
//! that left the group could keep alive. Windows' anonymous pipes cannot be polled: a thread reads
//! each one into a channel, and since nothing leaves a job object the pipes close when its
//! processes end.

use std::io::{self, Read as _};
use std::process::Child;
use std::time::Duration;

/// Bytes read from a pipe at once.
const READ_CHUNK: usize = 64 * 1024;

/// Stdout (0) and stderr (1) while either is open.
#[cfg(unix)]
pub(super) struct Pipes {
    pipes: [Option<std::fs::File>; 2],
    buf: Vec<u8>,
}

#[cfg(unix)]
impl Pipes {
    pub(super) fn new(child: &mut Child) -> Pipes {
        use std::os::fd::OwnedFd;
        let out = child.stdout.take().map(|p| std::fs::File::from(OwnedFd::from(p)));
        let err = child.stderr.take().map(|p| std::fs::File::from(OwnedFd::from(p)));
        Pipes { pipes: [out, err], buf: vec![0; READ_CHUNK] }
    }

    /// Whether either pipe is still open.
    pub(super) fn any_open(&self) -> bool {
        self.pipes.iter().any(Option::is_some)
    }

    /// Waits up to `wait` for output and hands what is there to `got` (the stream's index and
    /// the bytes). A pipe that reached its end (or failed) is closed. With no pipe open, this
    /// just waits.
    pub(super) fn pump(&mut self, wait: Duration, mut got: impl FnMut(usize, &[u8])) -> io::Result<()> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use rustix::io::Errno;
        let timeout = Timespec::try_from(wait).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut ready = [false; 2];
        {
            let mut fds = Vec::with_capacity(2);
            let mut which = Vec::with_capacity(2);
            for (i, pipe) in self.pipes.iter().enumerate() {
                if let Some(pipe) = pipe {
                    fds.push(PollFd::new(pipe, PollFlags::IN));
                    which.push(i);
                }
            }
            match poll(&mut fds, Some(&timeout)) {
                Ok(_) => {}
                Err(Errno::INTR) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
            for (fd, i) in fds.iter().zip(which) {
                ready[i] = !fd.revents().is_empty();
            }
        }
        for (i, ready) in ready.into_iter().enumerate() {
            let Some(pipe) = self.pipes[i].as_mut().filter(|_| ready) else { continue };
            // `poll` said the pipe is readable (or closed), so this read does not block.
            match pipe.read(&mut self.buf) {
                Ok(0) => self.pipes[i] = None,
                Ok(n) => got(i, &self.buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::warn!("reading command output: {e}");
                    self.pipes[i] = None;
                }
            }
        }
        Ok(())
    }

    /// Hands the pipes still open to a thread that reads and drops what comes until they close:
    /// a background job left running keeps writing to them without blocking or `SIGPIPE`.
    pub(super) fn read_on(&mut self) {
        // One thread a pipe: a job blocked writing to one must not wait for the other to close.
        for mut pipe in self.pipes.iter_mut().filter_map(Option::take) {
            let spawned = std::thread::Builder::new()
                .name("tether-exec-pipe".into())
                .spawn(move || io::copy(&mut pipe, &mut io::sink()));
            if let Err(e) = spawned {
                tracing::warn!("cannot keep reading a background job's output: {e}");
            }
        }
    }
}

/// Stdout (0) and stderr (1) while either is open, each read by a thread of its own.
#[cfg(windows)]
pub(super) struct Pipes {
    chunks: std::sync::mpsc::Receiver<(usize, Option<Vec<u8>>)>,
    open: [bool; 2],
    /// Set once the call is over: the readers then drop what they read.
    discard: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[cfg(windows)]
impl Pipes {
    pub(super) fn new(child: &mut Child) -> Pipes {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc};
        let (tx, chunks) = mpsc::channel();
        let discard = Arc::new(AtomicBool::new(false));
        let mut open = [false; 2];
        let streams: [Option<Box<dyn io::Read + Send>>; 2] = [
            child.stdout.take().map(|p| Box::new(p) as Box<dyn io::Read + Send>),
            child.stderr.take().map(|p| Box::new(p) as Box<dyn io::Read + Send>),
        ];
        for (i, stream) in streams.into_iter().enumerate() {
            let Some(mut stream) = stream else { continue };
            let (tx, discard) = (tx.clone(), discard.clone());
            let spawned = std::thread::Builder::new().name("tether-exec-pipe".into()).spawn(move || {
                let mut buf = vec![0; READ_CHUNK];
                loop {
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(_) if discard.load(Ordering::Relaxed) => {}
                        Ok(n) => {
                            if tx.send((i, Some(buf[..n].to_vec()))).is_err() {
                                discard.store(true, Ordering::Relaxed);
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // A broken pipe is the end of the stream on Windows.
                        Err(_) => break,
                    }
                }
                let _ = tx.send((i, None));
            });
            match spawned {
                Ok(_) => open[i] = true,
                Err(e) => tracing::warn!("cannot read a command's output: {e}"),
            }
        }
        Pipes { chunks, open, discard }
    }

    /// Whether either pipe is still open.
    pub(super) fn any_open(&self) -> bool {
        self.open.iter().any(|o| *o)
    }

    /// Waits up to `wait` for output and hands what came to `got` (the stream's index and the
    /// bytes). With no pipe open, this just waits.
    pub(super) fn pump(&mut self, wait: Duration, mut got: impl FnMut(usize, &[u8])) -> io::Result<()> {
        if !self.any_open() {
            std::thread::sleep(wait);
            return Ok(());
        }
        let mut next = self.chunks.recv_timeout(wait).ok();
        while let Some((i, chunk)) = next {
            match chunk {
                Some(bytes) => got(i, &bytes),
                None => self.open[i] = false,
            }
            next = self.chunks.try_recv().ok();
        }
        Ok(())
    }

    /// Lets the readers go on reading, and dropping, whatever background processes still write.
    pub(super) fn read_on(&mut self) {
        self.discard.store(true, std::sync::atomic::Ordering::Relaxed);
        self.open = [false; 2];
    }
}
