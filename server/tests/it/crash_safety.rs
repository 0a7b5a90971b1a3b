//! Crash safety of the disk sink: `tether call write_file`, killed with SIGKILL at random moments,
//! never leaves a file half written.
//!
//! Two large contents are written alternately over one file by the real binary. Half of the runs
//! are killed after a random delay spread over a whole run; the other half are killed the moment
//! a temp file of tether's shows up in the directory (plus a random fraction of a millisecond),
//! which aims the kill at the write, fsync and rename themselves. After every kill the file must
//! be wholly one of the two contents. A kill during a write may leave a temp file behind: the test
//! allows that only under tether's own temp-file names (`.tether-*.tmp`) and removes them.

use std::fs::{self, File};
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// How many times the writer is killed (or finishes first).
const RUNS: usize = 200;
/// A guard against a slow machine: the loop stops early past this, after at least `MIN_RUNS`.
const BUDGET: Duration = Duration::from_secs(14);
const MIN_RUNS: usize = 60;

/// A small xorshift generator: random enough to spread kill times, seeded per run and printed so
/// that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A content of 64 long lines, all distinct from the other content's: large enough that writing
/// takes a while, few enough lines that computing the edit stays cheap in a debug build.
fn content(tag: char) -> String {
    (0..64).map(|i| format!("{tag}{i:03}").repeat(1024) + "\n").collect()
}

fn args_file(dir: &Path, name: &str, content: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let json = serde_json::json!({"path": "f.txt", "content": content});
    fs::write(&p, json.to_string()).expect("write arguments");
    p
}

/// The entries of `root` other than the target file, as names.
fn others(root: &Path) -> Vec<String> {
    fs::read_dir(root)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "f.txt")
        .collect()
}

#[test]
fn killed_writes_leave_the_old_or_the_new_file_whole() {
    let base = tempfile::Builder::new().prefix("crash-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = base.path().join("root");
    fs::create_dir(&root).expect("mkdir");
    let (a, b) = (content('a'), content('b'));
    let contents = [a.as_bytes(), b.as_bytes()];
    let args = [args_file(base.path(), "a.json", &a), args_file(base.path(), "b.json", &b)];
    fs::write(root.join("f.txt"), &a).expect("write");

    let writer = |which: usize| {
        Command::new(env!("CARGO_BIN_EXE_tether"))
            .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
            .args(["call", "write_file", "-", "--root"])
            .arg(&root)
            .stdin(File::open(&args[which]).expect("arguments"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tether")
    };

    // How long one write takes here, so that random kills spread over a whole run.
    let mut took = Vec::new();
    for which in [1, 0, 1, 0] {
        let start = Instant::now();
        assert!(writer(which).wait().expect("wait").success());
        took.push(start.elapsed());
        assert_eq!(fs::read(root.join("f.txt")).expect("read"), contents[which]);
    }
    took.sort();
    let span = u64::try_from(took[2].as_micros() * 6 / 5).unwrap_or(u64::MAX);

    let seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
    let mut rng = Rng(seed);
    let (mut killed, mut aimed, mut finished, mut strays) = (0, 0, 0, 0);
    let started = Instant::now();
    let mut runs = 0;
    while runs < RUNS && (runs < MIN_RUNS || started.elapsed() < BUDGET) {
        let which = (runs + 1) % 2;
        let mut child = writer(which);
        if runs % 2 == 0 {
            std::thread::sleep(Duration::from_micros(rng.below(span)));
        } else {
            // Poll (with a deadline) until a temp file appears, then kill within half a
            // millisecond: that lands in the write, the fsync or the rename.
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && child.try_wait().expect("try_wait").is_none() {
                if others(&root).iter().any(|n| n.starts_with(".tether-")) {
                    aimed += 1;
                    std::thread::sleep(Duration::from_micros(rng.below(500)));
                    break;
                }
                std::thread::yield_now();
            }
        }
        let _ = child.kill(); // SIGKILL; fails harmlessly when the writer already exited.
        let status = child.wait().expect("wait");
        if status.signal() == Some(9) {
            killed += 1;
        } else {
            assert!(status.success(), "run {runs} (seed {seed}): tether failed: {status}");
            finished += 1;
        }
        let got = fs::read(root.join("f.txt")).expect("the file is never missing");
        assert!(
            contents.contains(&got.as_slice()),
            "run {runs} (seed {seed}): f.txt is neither content ({} bytes)",
            got.len()
        );
        if status.success() {
            assert_eq!(got, contents[which], "run {runs} (seed {seed}): a finished write did not land");
        }
        for name in others(&root) {
            assert!(
                name.starts_with(".tether-") && name.ends_with(".tmp"),
                "run {runs} (seed {seed}): unexpected entry {name}"
            );
            strays += 1;
            fs::remove_file(root.join(&name)).expect("remove stray temp file");
        }
        runs += 1;
    }
    eprintln!(
        "{runs} runs in {:?} (seed {seed}): {killed} killed ({aimed} aimed at a write), {finished} finished, \
         {strays} temp files left by kills",
        started.elapsed()
    );
    assert!(killed > 0, "no run was killed before it finished; the test exercised nothing");
}
