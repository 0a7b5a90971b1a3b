//! Sandbox resolution: one case per refused path shape, and the accepted shapes beside them.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;

/// A temp dir holding `app/` (the root), `app_evil/` (a prefix sibling) and `outside/`, with
/// symlinks inside the root pointing in and out.
struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: Workspace,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical tempdir");
    let app = base.join("app");
    fs::create_dir_all(app.join("src/deep")).expect("mkdir");
    fs::create_dir_all(base.join("app_evil")).expect("mkdir");
    fs::create_dir_all(base.join("outside/dir")).expect("mkdir");
    fs::write(app.join("src/main.rs"), "fn main() {}\n").expect("write");
    fs::write(base.join("outside/secret.txt"), "secret\n").expect("write");
    fs::write(base.join("app_evil/x"), "evil\n").expect("write");
    symlink(base.join("outside/secret.txt"), app.join("link_out_file")).expect("symlink");
    symlink(base.join("outside/dir"), app.join("link_out_dir")).expect("symlink");
    symlink(base.join("outside/nope.txt"), app.join("dangling_out")).expect("symlink");
    symlink("src/main.rs", app.join("link_in_file")).expect("symlink");
    symlink("src", app.join("link_in_dir")).expect("symlink");
    symlink("src/new.rs", app.join("dangling_in")).expect("symlink");
    symlink("../../outside", app.join("src/up_out")).expect("symlink");
    symlink("loop_b", app.join("loop_a")).expect("symlink");
    symlink("loop_a", app.join("loop_b")).expect("symlink");
    let ws = Workspace::new([&app]).expect("workspace");
    Fixture { _dir: dir, base, ws }
}

fn kind(ws: &Workspace, p: &str) -> std::result::Result<PathBuf, ErrorKind> {
    ws.resolve(p).map(|s| s.real().to_path_buf()).map_err(|e| e.kind())
}

#[test]
fn refuses_every_escape() {
    let f = fixture();
    let base = f.base.display();
    let long_name = "a".repeat(300);
    let long_path = "d/".repeat(2100);
    let refused: Vec<(String, ErrorKind)> = vec![
        ("../outside/secret.txt".into(), ErrorKind::PathEscape),
        ("src/../../outside/secret.txt".into(), ErrorKind::PathEscape),
        ("src/deep/../../..".into(), ErrorKind::PathEscape),
        ("..".into(), ErrorKind::PathEscape),
        (format!("{base}/outside/secret.txt"), ErrorKind::PathEscape),
        ("/etc/passwd".into(), ErrorKind::PathEscape),
        ("/".into(), ErrorKind::PathEscape),
        (format!("{base}/app_evil/x"), ErrorKind::PathEscape),
        (format!("{base}/app/../outside/secret.txt"), ErrorKind::PathEscape),
        ("link_out_file".into(), ErrorKind::PathEscape),
        ("link_out_dir".into(), ErrorKind::PathEscape),
        ("link_out_dir/anything.txt".into(), ErrorKind::PathEscape),
        ("link_out_dir/../secret.txt".into(), ErrorKind::PathEscape),
        ("dangling_out".into(), ErrorKind::PathEscape),
        ("src/up_out/secret.txt".into(), ErrorKind::PathEscape),
        ("src\0/main.rs".into(), ErrorKind::InvalidInput),
        ("~/.ssh/id_rsa".into(), ErrorKind::InvalidInput),
        ("~root/.bashrc".into(), ErrorKind::InvalidInput),
        (long_name, ErrorKind::InvalidInput),
        (long_path, ErrorKind::InvalidInput),
        ("loop_a".into(), ErrorKind::IoError),
    ];
    for (p, want) in refused {
        assert_eq!(kind(&f.ws, &p), Err(want), "{p}");
    }
}

#[test]
fn error_names_the_given_path_not_the_target() {
    let f = fixture();
    let err = f.ws.resolve("link_out_file").expect_err("escape");
    assert_eq!(err.path(), Some("link_out_file"));
    assert!(err.message().contains("link_out_file"), "{}", err.message());
    assert!(!err.message().contains(&f.base.display().to_string()), "message leaks the target: {}", err.message());
}

#[test]
fn accepts_paths_inside() {
    let f = fixture();
    let app = f.base.join("app");
    let accepted: Vec<(String, PathBuf)> = vec![
        ("".into(), app.clone()),
        (".".into(), app.clone()),
        ("src/main.rs".into(), app.join("src/main.rs")),
        ("./src/../src/main.rs".into(), app.join("src/main.rs")),
        (format!("{}/src/main.rs", app.display()), app.join("src/main.rs")),
        ("link_in_file".into(), app.join("src/main.rs")),
        ("link_in_dir/main.rs".into(), app.join("src/main.rs")),
        ("dangling_in".into(), app.join("src/new.rs")),
        ("new/dir/file.txt".into(), app.join("new/dir/file.txt")),
        ("new/../src/x".into(), app.join("src/x")),
        ("a~b".into(), app.join("a~b")),
    ];
    for (p, want) in accepted {
        assert_eq!(kind(&f.ws, &p), Ok(want), "{p}");
    }
}

#[test]
fn final_symlink_is_kept_as_named() {
    let f = fixture();
    let p = f.ws.resolve("link_in_file").expect("inside");
    assert_eq!(p.path(), f.base.join("app/link_in_file"));
    assert_eq!(p.real(), f.base.join("app/src/main.rs"));
    assert_eq!(f.ws.relative(p.real()), "src/main.rs");
    assert_eq!(f.ws.relative(&f.base.join("app")), ".");
}

#[test]
fn root_through_a_symlink() {
    let f = fixture();
    let alias = f.base.join("alias");
    symlink(f.base.join("app"), &alias).expect("symlink");
    let ws = Workspace::new([&alias]).expect("workspace");
    assert_eq!(ws.roots(), [f.base.join("app")]);
    // The alias spelling of an absolute path is accepted and resolves under the real root.
    let p = format!("{}/src/main.rs", alias.display());
    assert_eq!(kind(&ws, &p), Ok(f.base.join("app/src/main.rs")));
}

#[test]
fn several_roots() {
    let f = fixture();
    let ws = Workspace::new([f.base.join("app"), f.base.join("outside")]).expect("workspace");
    // Relative paths start at the first root; absolute paths may name any root.
    assert_eq!(kind(&ws, "src/main.rs"), Ok(f.base.join("app/src/main.rs")));
    let secret = f.base.join("outside/secret.txt");
    assert_eq!(kind(&ws, &secret.display().to_string()), Ok(secret.clone()));
    // A link from one root into another is inside the workspace.
    assert_eq!(kind(&ws, "link_out_file"), Ok(secret));
    assert_eq!(kind(&ws, &format!("{}/app_evil/x", f.base.display())), Err(ErrorKind::PathEscape));
    let p = ws.resolve("link_out_file").expect("inside");
    assert_eq!(p.root_index(), 1);
}

#[test]
fn roots_must_be_directories() {
    let f = fixture();
    let file = f.base.join("app/src/main.rs");
    assert_eq!(Workspace::new([&file]).map(|_| ()).map_err(|e| e.kind()), Err(ErrorKind::NotADirectory));
    let missing = f.base.join("missing");
    assert_eq!(Workspace::new([&missing]).map(|_| ()).map_err(|e| e.kind()), Err(ErrorKind::NotFound));
    assert_eq!(Workspace::new(Vec::<&Path>::new()).map(|_| ()).map_err(|e| e.kind()), Err(ErrorKind::InvalidInput));
}

#[test]
fn below_is_strip_prefix() {
    let cases = [
        ("/a/b/c.rs", "/a/b"),
        ("/a/b", "/a/b"),
        ("/a/bc/d", "/a/b"),
        ("/a/b//c", "/a/b"),
        ("/a/b/c/", "/a/b"),
        ("/x", "/"),
        ("/a/b/c", "/a/b/"),
        ("/a/./b/c", "/a/b"),
        ("/a/b/./c", "/a/b"),
        ("/a/b/c/.", "/a/b"),
        ("/a/b/c//d", "/a/b"),
        ("/a/b/..", "/a/b"),
        ("relative/x", "relative"),
        ("/elsewhere", "/a"),
    ];
    for (path, base) in cases {
        let (path, base) = (Path::new(path), Path::new(base));
        assert_eq!(
            super::below(path, base),
            path.strip_prefix(base).ok(),
            "{} below {}",
            path.display(),
            base.display()
        );
    }
}

/// The names Windows would not open as plain files, and plain names beside them that look alike.
#[test]
fn windows_name_rules_refuse_devices_streams_and_stripped_names() {
    let table: [(&str, Option<&str>); 22] = [
        ("src/main.rs", None),
        ("C:\\w\\src\\main.rs", None),
        ("c:/w/a.txt", None),
        ("\\\\server\\share\\a.txt", None),
        ("..\\up\\a.txt", None),
        ("console.txt", None),
        ("COM10", None),
        ("nul.txt", Some("reserved device name")),
        ("src/CON", Some("reserved device name")),
        ("Aux.tar.gz", Some("reserved device name")),
        ("com1", Some("reserved device name")),
        ("LPT9.log", Some("reserved device name")),
        ("prn .txt", Some("reserved device name")),
        ("a.txt:secret", Some("alternate data stream")),
        ("C:\\w\\a.txt::$DATA", Some("alternate data stream")),
        ("a.txt.", Some("ends with a dot or a space")),
        ("dir /a.txt", Some("ends with a dot or a space")),
        ("\\\\.\\PhysicalDrive0", Some("device and verbatim paths")),
        ("\\\\?\\C:\\w\\a.txt", Some("device and verbatim paths")),
        ("//?/GLOBALROOT/Device", Some("device and verbatim paths")),
        ("\\??\\C:\\a", Some("device and verbatim paths")),
        ("C:a.txt:x", Some("alternate data stream")),
    ];
    for (given, want) in table {
        let got = windows_name_rules(given);
        match want {
            None => assert_eq!(got, None, "{given}"),
            Some(w) => assert!(got.as_deref().is_some_and(|g| g.contains(w)), "{given}: {got:?}"),
        }
    }
}

proptest::proptest! {
    /// `path_order` is `Path`'s own order on the paths a walk builds: components drawn from
    /// bytes that sort around the separator (`-`, `.`, `0`, `_`, `a`, non-ASCII), nested to any
    /// depth, one often a prefix of the other.
    #[test]
    fn path_order_is_paths_own_order(
        a in proptest::collection::vec("[-.0_a\u{e9}]{1,3}", 1..5),
        b in proptest::collection::vec("[-.0_a\u{e9}]{1,3}", 1..5),
        shared in 0usize..4,
    ) {
        let filter = |c: &String| c != "." && c != "..";
        let a: Vec<String> = a.into_iter().filter(filter).collect();
        let mut b: Vec<String> = b.into_iter().filter(filter).collect();
        // Often the same leading components, so that the comparison reaches deep.
        let n = shared.min(a.len()).min(b.len());
        b.splice(0..n, a[..n].iter().cloned());
        let (a, b) = (PathBuf::from(format!("/w/{}", a.join("/"))), PathBuf::from(format!("/w/{}", b.join("/"))));
        proptest::prop_assert_eq!(path_order(&a, &b), a.cmp(&b), "{} vs {}", a.display(), b.display());
    }
}
