use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, MetadataExt as _, PermissionsExt as _};
use std::path::Path;

use super::*;
use crate::tools::testing::{fixture, Fixture};

/// One entry of a directory tree, as compared before and after a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File { bytes: Vec<u8>, mode: u32, ino: u64 },
    Dir { mode: u32 },
    Link(PathBuf),
}

/// Every entry under the fixture's root, by relative path. Inodes are kept so that a test can
/// tell "the same file" from "a file with the same bytes" where it matters.
fn snapshot(f: &Fixture) -> BTreeMap<String, Entry> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        for e in fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            let m = fs::symlink_metadata(&p).expect("meta");
            let rel = p.strip_prefix(root).expect("inside").to_string_lossy().into_owned();
            let mode = m.mode() & 0o7777;
            if m.file_type().is_symlink() {
                out.insert(rel, Entry::Link(fs::read_link(&p).expect("link")));
            } else if m.is_dir() {
                out.insert(rel, Entry::Dir { mode });
                walk(root, &p, out);
            } else {
                out.insert(rel, Entry::File { bytes: fs::read(&p).expect("read"), mode, ino: m.ino() });
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(f.dir.path(), f.dir.path(), &mut out);
    out
}

/// The same snapshot without inodes: what "byte for byte as it was" means after a rollback,
/// which rewrites an edited file's old bytes into a new inode.
fn contents(f: &Fixture) -> BTreeMap<String, Entry> {
    snapshot(f)
        .into_iter()
        .map(|(k, v)| match v {
            Entry::File { bytes, mode, .. } => (k, Entry::File { bytes, mode, ino: 0 }),
            other => (k, other),
        })
        .collect()
}

fn path(f: &Fixture, p: &str) -> SandboxPath {
    f.vfs.resolve(p).expect("inside")
}

fn read(f: &Fixture, p: &str) -> Vec<u8> {
    fs::read(f.dir.path().join(p)).expect("read")
}

fn mode(f: &Fixture, p: &str) -> u32 {
    fs::metadata(f.dir.path().join(p)).expect("meta").mode() & 0o7777
}

fn chmod(f: &Fixture, p: &str, mode: u32) {
    fs::set_permissions(f.dir.path().join(p), fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A plan editing `p` from what the read view sees into `new`.
fn edit(f: &Fixture, p: &str, new: &str) -> FileOp {
    let sp = path(f, p);
    let base: Base = f.vfs.read_text(&sp).expect("read").into();
    let mut plan = EditPlan::edit_to(sp, base, new);
    plan.ops.pop().expect("a change")
}

fn apply(f: &Fixture, ops: Vec<FileOp>) -> Result<Applied> {
    crate::sink::apply(&DiskSink, &f.config, &f.vfs, &EditPlan { ops })
}

fn stray_temp_files(f: &Fixture) -> Vec<String> {
    snapshot(f).into_keys().filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with(TEMP_PREFIX))).collect()
}

#[test]
fn edits_keep_bom_line_endings_and_mode() {
    let f = fixture("");
    f.write("script.sh", "\u{feff}#!/bin/sh\r\necho one\r\n");
    chmod(&f, "script.sh", 0o755);
    f.write("private.txt", "secret\n");
    chmod(&f, "private.txt", 0o600);
    let applied =
        apply(&f, vec![edit(&f, "script.sh", "#!/bin/sh\r\necho two\r\n"), edit(&f, "private.txt", "still secret\n")])
            .expect("applied");
    assert_eq!(read(&f, "script.sh"), "\u{feff}#!/bin/sh\r\necho two\r\n".as_bytes());
    assert_eq!(mode(&f, "script.sh"), 0o755);
    assert_eq!(read(&f, "private.txt"), b"still secret\n");
    assert_eq!(mode(&f, "private.txt"), 0o600);
    assert_eq!(
        applied.files,
        vec![("script.sh".to_owned(), Destination::Disk), ("private.txt".to_owned(), Destination::Disk)]
    );
    assert_eq!(stray_temp_files(&f), Vec::<String>::new());
}

#[test]
// Only root can give a file to another user. Ignored, so that a run as another user reports it
// skipped instead of passing it unchecked; `scripts/test` runs ignored tests when it is root.
#[ignore = "needs root (to chown a file to another user); scripts/test runs it as root"]
fn keeps_owner_when_root() {
    let f = fixture("//- owned.txt\nold\n");
    let p = f.dir.path().join("owned.txt");
    assert_eq!(fs::metadata(&p).expect("meta").uid(), 0, "run as root: only root can give a file to another user");
    std::os::unix::fs::chown(&p, Some(1234), Some(5678)).expect("chown");
    apply(&f, vec![edit(&f, "owned.txt", "new\n")]).expect("applied");
    let m = fs::metadata(&p).expect("meta");
    assert_eq!((m.uid(), m.gid()), (1234, 5678));
    assert_eq!(read(&f, "owned.txt"), b"new\n");
}

#[test]
fn writes_through_symlinks_and_keeps_hard_links() {
    let f = fixture("//- real/target.txt\none\n//- linked.txt\nshared\n");
    symlink("real/target.txt", f.dir.path().join("link.txt")).expect("symlink");
    fs::hard_link(f.dir.path().join("linked.txt"), f.dir.path().join("other_name.txt")).expect("hard link");
    let ino = fs::metadata(f.dir.path().join("linked.txt")).expect("meta").ino();
    apply(&f, vec![edit(&f, "link.txt", "two\n"), edit(&f, "linked.txt", "changed\n")]).expect("applied");
    // The link is still a link, and the file it points to changed.
    let link = fs::symlink_metadata(f.dir.path().join("link.txt")).expect("meta");
    assert!(link.file_type().is_symlink());
    assert_eq!(read(&f, "real/target.txt"), b"two\n");
    // Both names of the hard-linked file see the change: it was written in place.
    assert_eq!(read(&f, "other_name.txt"), b"changed\n");
    assert_eq!(fs::metadata(f.dir.path().join("linked.txt")).expect("meta").ino(), ino);
    assert_eq!(stray_temp_files(&f), Vec::<String>::new());
}

#[test]
fn conflict_keeps_the_other_writers_text() {
    let table: &[(&str, &[u8])] = &[
        ("changed", b"someone else\n"),
        ("bom added", b"\xEF\xBB\xBForiginal\n"),
        ("line endings changed", b"original\r\n"),
    ];
    for (what, other) in table {
        let f = fixture("//- a.txt\noriginal\n");
        let op = edit(&f, "a.txt", "mine\n");
        f.write("a.txt", other);
        let err = apply(&f, vec![op]).expect_err(what);
        assert_eq!(err.kind(), ErrorKind::Conflict, "{what}: {err}");
        assert!(err.message().starts_with("a.txt: changed on disk since it was read"), "{err}");
        assert_eq!(read(&f, "a.txt"), *other, "{what}");
    }
    let f = fixture("//- a.txt\noriginal\n");
    let op = edit(&f, "a.txt", "mine\n");
    fs::remove_file(f.dir.path().join("a.txt")).expect("rm");
    assert_eq!(apply(&f, vec![op]).map_err(|e| e.kind()), Err(ErrorKind::Conflict));
    assert!(!f.dir.path().join("a.txt").exists());
}

/// A plan over several files checks every base before it writes any: when a later file changed
/// since it was read, the earlier one is never written (same inode), so no reader, in this process
/// or another, ever sees it changed and then changed back. The conflict is a stale one, which the
/// frontends run again on the newer text.
#[test]
fn a_plan_over_several_files_writes_none_when_a_later_one_changed() {
    let f = fixture("//- a.txt\na\n//- b.txt\nb\n");
    let ops = vec![edit(&f, "a.txt", "A\n"), edit(&f, "b.txt", "B\n")];
    f.write("b.txt", b"someone else\n");
    let ino = |p: &str| fs::metadata(f.dir.path().join(p)).expect("meta").ino();
    let before = ino("a.txt");
    let err = apply(&f, ops).expect_err("b.txt changed");
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(err.stale_path().is_some(), "{err}");
    assert_eq!(ino("a.txt"), before, "a.txt was never written");
    assert_eq!(read(&f, "a.txt"), b"a\n");
}

/// Every plan here fails at its last operation (a file changed after the plan was computed);
/// whatever the operations before it did must be undone, leaving the tree byte for byte as it
/// was, with no stray backups or temp files.
#[test]
fn failed_plan_leaves_every_file_as_it_was() {
    type Build = fn(&Fixture) -> Vec<FileOp>;
    let table: &[(&str, Build)] = &[
        ("three edits", |f| vec![edit(f, "one.txt", "ONE\n"), edit(f, "two.txt", "TWO\n")]),
        ("create in new dirs, delete file", |f| {
            vec![
                FileOp::Create { path: path(f, "new/deep/file.txt"), text: "x".into(), overwrite: false, mode: None },
                FileOp::Delete { path: path(f, "two.txt"), recursive: false },
            ]
        }),
        ("rename into new dir, mkdir", |f| {
            vec![
                FileOp::Rename { from: path(f, "one.txt"), to: path(f, "moved/one.txt"), overwrite: false },
                FileOp::Mkdir { path: path(f, "made/here") },
            ]
        }),
        ("overwrite create, rename over existing", |f| {
            vec![
                FileOp::Create { path: path(f, "one.txt"), text: "replaced".into(), overwrite: true, mode: None },
                FileOp::Rename { from: path(f, "two.txt"), to: path(f, "dir/inner.txt"), overwrite: true },
            ]
        }),
        ("recursive delete, delete symlink, hard-linked edit", |f| {
            vec![
                FileOp::Delete { path: path(f, "dir"), recursive: true },
                FileOp::Delete { path: path(f, "link"), recursive: false },
                edit(f, "hard.txt", "edited in place\n"),
            ]
        }),
    ];
    for (name, build) in table {
        let f = fixture("//- one.txt\none\n//- two.txt\ntwo\n//- three.txt\nthree\n//- dir/inner.txt\ninner\n");
        chmod(&f, "one.txt", 0o751);
        symlink("one.txt", f.dir.path().join("link")).expect("symlink");
        f.write("hard.txt", "hard\n");
        fs::hard_link(f.dir.path().join("hard.txt"), f.dir.path().join("dir/hard_too.txt")).expect("link");
        let mut ops = build(&f);
        ops.push(edit(&f, "three.txt", "THREE\n"));
        f.write("three.txt", "someone else\n");
        let before = contents(&f);
        let err = apply(&f, ops).expect_err(name);
        assert_eq!(err.kind(), ErrorKind::Conflict, "{name}: {err}");
        assert_eq!(contents(&f), before, "{name}");
        // The hard link is intact: both names are still one file.
        let ino = |p: &str| fs::metadata(f.dir.path().join(p)).expect("meta").ino();
        assert_eq!(ino("hard.txt"), ino("dir/hard_too.txt"), "{name}");
    }
}

#[test]
fn creates() {
    let f = fixture("//- exists.txt\nold\n//- dir/\n//- file\nx\n");
    chmod(&f, "exists.txt", 0o640);
    let create = |p: &str, overwrite: bool| {
        apply(&f, vec![FileOp::Create { path: path(&f, p), text: "new\n".into(), overwrite, mode: None }])
            .map(|_| ())
            .map_err(|e| e.kind())
    };
    let table = [
        ("a/b/c.txt", false, Ok(())),
        ("exists.txt", false, Err(ErrorKind::Conflict)),
        ("exists.txt", true, Ok(())),
        ("dir", true, Err(ErrorKind::NotAFile)),
        ("file/below.txt", false, Err(ErrorKind::NotADirectory)),
    ];
    for (p, overwrite, want) in table {
        assert_eq!(create(p, overwrite), want, "{p} overwrite={overwrite}");
    }
    assert_eq!(read(&f, "a/b/c.txt"), b"new\n");
    assert_eq!(read(&f, "exists.txt"), b"new\n");
    // An overwritten file keeps its mode; a new one gets what any new file would (umask).
    assert_eq!(mode(&f, "exists.txt"), 0o640);
    f.write("plain.txt", "");
    assert_eq!(mode(&f, "a/b/c.txt"), mode(&f, "plain.txt"));
    assert_eq!(read(&f, "file"), b"x\n");
    // A dangling symlink inside the root is written through: its target is created.
    symlink("made/by/link.txt", f.dir.path().join("dangling")).expect("symlink");
    assert_eq!(create("dangling", false), Ok(()));
    assert!(fs::symlink_metadata(f.dir.path().join("dangling")).expect("meta").file_type().is_symlink());
    assert_eq!(read(&f, "made/by/link.txt"), b"new\n");
    assert_eq!(stray_temp_files(&f), Vec::<String>::new());
}

#[test]
fn renames() {
    let rename = |f: &Fixture, from: &str, to: &str, overwrite: bool| {
        apply(f, vec![FileOp::Rename { from: path(f, from), to: path(f, to), overwrite }])
            .map(|_| ())
            .map_err(|e| e.kind())
    };
    let table: &[(&str, &str, bool, Result<(), ErrorKind>)] = &[
        ("a.txt", "new/dir/a.txt", false, Ok(())),
        ("a.txt", "b.txt", false, Err(ErrorKind::Conflict)),
        ("a.txt", "b.txt", true, Ok(())),
        ("a.txt", "d", true, Err(ErrorKind::NotAFile)),
        ("d", "d/inside", false, Err(ErrorKind::InvalidInput)),
        ("a.txt", "a.txt", true, Err(ErrorKind::InvalidInput)),
        ("missing", "x", false, Err(ErrorKind::NotFound)),
        (".", "elsewhere", false, Err(ErrorKind::InvalidInput)),
        ("d", "e", false, Ok(())),
        ("link", "link2", false, Ok(())),
    ];
    for (from, to, overwrite, want) in table {
        let f = fixture("//- a.txt\na\n//- b.txt\nb\n//- d/x.txt\nx\n");
        symlink("a.txt", f.dir.path().join("link")).expect("symlink");
        let before = snapshot(&f);
        assert_eq!(rename(&f, from, to, *overwrite), *want, "{from} -> {to}");
        let after = snapshot(&f);
        if want.is_ok() {
            assert!(!after.contains_key(*from), "{from} still there");
            assert_eq!(after.get(*to), before.get(*from), "{from} -> {to}: the same entry moved");
        } else {
            assert_eq!(after, before, "{from} -> {to}");
        }
        assert_eq!(stray_temp_files(&f), Vec::<String>::new());
    }
}

#[test]
fn deletes() {
    let table: &[(&str, bool, Result<(), ErrorKind>)] = &[
        ("a.txt", false, Ok(())),
        ("empty", false, Ok(())),
        ("full", false, Err(ErrorKind::InvalidInput)),
        ("full", true, Ok(())),
        ("link", false, Ok(())),
        ("missing", false, Err(ErrorKind::NotFound)),
        (".", true, Err(ErrorKind::InvalidInput)),
    ];
    for (p, recursive, want) in table {
        let f = fixture("//- a.txt\na\n//- empty/\n//- full/sub/x.txt\nx\n");
        symlink("a.txt", f.dir.path().join("link")).expect("symlink");
        let before = snapshot(&f);
        let got = apply(&f, vec![FileOp::Delete { path: path(&f, p), recursive: *recursive }]);
        assert_eq!(got.map(|_| ()).map_err(|e| e.kind()), *want, "{p}");
        let after = snapshot(&f);
        if want.is_ok() {
            assert!(!after.keys().any(|k| k == p || k.starts_with(&format!("{p}/"))), "{p}: {after:?}");
            // A symlink goes, the file it points to stays.
            assert_eq!(after.contains_key("a.txt"), *p != "a.txt", "{p}");
        } else {
            assert_eq!(after, before, "{p}");
        }
        assert_eq!(stray_temp_files(&f), Vec::<String>::new());
    }
}

#[test]
fn mkdirs() {
    let f = fixture("//- file\nx\n//- there/\n");
    let mkdir = |p: &str| apply(&f, vec![FileOp::Mkdir { path: path(&f, p) }]).map(|_| ()).map_err(|e| e.kind());
    let table = [
        ("a/b/c", Ok(())),
        ("there", Ok(())),
        ("file", Err(ErrorKind::NotADirectory)),
        ("file/below", Err(ErrorKind::NotADirectory)),
    ];
    for (p, want) in table {
        assert_eq!(mkdir(p), want, "{p}");
    }
    assert!(f.dir.path().join("a/b/c").is_dir());
}

#[test]
fn read_only_refuses_even_a_direct_apply() {
    let mut f = fixture("//- a.txt\na\n");
    f.config.read_only = true;
    let op = edit(&f, "a.txt", "b\n");
    assert_eq!(apply(&f, vec![op]).map_err(|e| e.kind()), Err(ErrorKind::ReadOnly));
    assert_eq!(read(&f, "a.txt"), b"a\n");
}

#[test]
fn a_pending_change_is_committed_rolled_back_or_dropped() {
    let setup = || {
        let f = fixture("//- one.txt\none\n//- two.txt\ntwo\n//- dir/inner.txt\ninner\n");
        chmod(&f, "one.txt", 0o640);
        symlink("one.txt", f.dir.path().join("link")).expect("symlink");
        f.write("hard.txt", "hard\n");
        fs::hard_link(f.dir.path().join("hard.txt"), f.dir.path().join("dir/hard_too.txt")).expect("link");
        let plan = EditPlan {
            ops: vec![
                edit(&f, "one.txt", "ONE\n"),
                edit(&f, "hard.txt", "edited in place\n"),
                FileOp::Create {
                    path: path(&f, "new/deep/file.txt"),
                    text: "new\n".into(),
                    overwrite: false,
                    mode: None,
                },
                FileOp::Rename { from: path(&f, "two.txt"), to: path(&f, "moved/two.txt"), overwrite: false },
                FileOp::Delete { path: path(&f, "dir"), recursive: true },
                FileOp::Delete { path: path(&f, "link"), recursive: false },
                FileOp::Mkdir { path: path(&f, "made/here") },
            ],
        };
        (f, plan)
    };

    // Rolled back: every entry as it was, the hard link still one file, no backups left.
    let (f, plan) = setup();
    let before = contents(&f);
    let pending = DiskSink.begin(&f.vfs, &plan).expect("begin");
    assert_eq!(read(&f, "one.txt"), b"ONE\n", "the change is on disk while pending");
    assert!(f.dir.path().join("moved/two.txt").exists());
    pending.rollback().expect("rollback");
    assert_eq!(contents(&f), before);
    let ino = |p: &str| fs::metadata(f.dir.path().join(p)).expect("meta").ino();
    assert_eq!(ino("hard.txt"), ino("dir/hard_too.txt"));
    assert_eq!(stray_temp_files(&f), Vec::<String>::new());

    // Dropped without a decision: rolled back the same way.
    let (f, plan) = setup();
    let before = contents(&f);
    drop(DiskSink.begin(&f.vfs, &plan).expect("begin"));
    assert_eq!(contents(&f), before);

    // Committed: the change stays and its backups are gone.
    let (f, plan) = setup();
    let applied = DiskSink.begin(&f.vfs, &plan).expect("begin").commit();
    assert_eq!(applied.files.len(), plan.ops.len());
    assert!(applied.files.iter().all(|(_, d)| *d == Destination::Disk));
    assert_eq!(read(&f, "one.txt"), b"ONE\n");
    assert_eq!(mode(&f, "one.txt"), 0o640);
    assert_eq!(read(&f, "new/deep/file.txt"), b"new\n");
    assert!(!f.dir.path().join("dir").exists() && !f.dir.path().join("link").exists());
    assert!(f.dir.path().join("made/here").is_dir());
    assert_eq!(stray_temp_files(&f), Vec::<String>::new());
    let backups: Vec<String> = snapshot(&f).into_keys().filter(|k| k.ends_with(BACKUP_SUFFIX)).collect();
    assert_eq!(backups, Vec::<String>::new());
}

/// Found by bench/load.py: eight callers editing their own lines of one file at once, each
/// reading the file, planning its edit and applying it (again on `conflict`). Every edit the sink
/// answered applied must be in the file: two plans passing their base checks before either renamed
/// its new text into place would lose the first one.
#[test]
fn concurrent_edits_of_one_file_lose_nothing() {
    const CALLERS: usize = 8;
    const EDITS: usize = 12;
    let f = fixture("");
    f.write("shared.txt", (0..CALLERS).map(|k| format!("<{k}:0>\n")).collect::<String>());
    let lost = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for k in 0..CALLERS {
            let (f, lost) = (&f, &lost);
            s.spawn(move || {
                let mut n = 0;
                while n < EDITS {
                    let sp = path(f, "shared.txt");
                    let text = f.vfs.read_text(&sp).expect("read");
                    let (old, new) = (format!("<{k}:{n}>"), format!("<{k}:{}>", n + 1));
                    let current = text.text.clone();
                    if !current.contains(&old) {
                        lost.lock().expect("lock").push(format!("caller {k}: {old} not in {current:?}"));
                        return;
                    }
                    let plan = EditPlan::edit_to(sp, text.into(), &current.replace(&old, &new));
                    match crate::sink::apply(&DiskSink, &f.config, &f.vfs, &plan) {
                        Ok(_) => n += 1,
                        Err(e) if e.kind() == ErrorKind::Conflict => {}
                        Err(e) => panic!("caller {k}: {e}"),
                    }
                }
            });
        }
    });
    assert_eq!(lost.into_inner().expect("lock"), Vec::<String>::new(), "edits answered applied were lost");
    let want: String = (0..CALLERS).map(|k| format!("<{k}:{EDITS}>\n")).collect();
    assert_eq!(String::from_utf8(read(&f, "shared.txt")).expect("utf-8"), want);
}
