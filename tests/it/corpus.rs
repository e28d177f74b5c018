//! The corpus of malformed inputs in `tests/corpus/`: every `*.toml` there (some read data
//! files under `data/`: flow lists, CDFs) must be refused by `dcsim validate` and `dcsim run`
//! with an error containing the text of its first line (`# expect: ...`), without a panic and
//! without writing results; every line of `cli.txt` is a command line that must fail the same
//! way. Hostile inputs that must run, and run right (a lossy fabric, every spine down for
//! good, a JSON file with a byte-order mark), are under `runs/`, read by the tests that check
//! them.

use std::path::Path;
use std::process::Command;

fn dcsim(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dcsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn check(args: &[&str], cwd: &Path, expect: &str, what: &str) {
    let o = dcsim(args, cwd);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{what}: {args:?} was accepted");
    assert!(
        e.contains(expect),
        "{what}: {args:?}: expected `{expect}` in:\n{e}"
    );
    assert!(!e.contains("panicked"), "{what}: {args:?} panicked:\n{e}");
}

#[test]
fn every_malformed_input_is_refused_with_its_expected_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().display().to_string();
    for case in &cases {
        let text = std::fs::read_to_string(case).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: no `# expect:` line", case.display()));
        let name = case.file_name().unwrap().to_str().unwrap();
        check(&["validate", name], &dir, expect, name);
        check(
            &["run", name, "-q", "--output-dir", &out_dir],
            &dir,
            expect,
            name,
        );
    }
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "a refused run wrote results"
    );
    let cli = std::fs::read_to_string(dir.join("cli.txt")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for line in cli.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (args, expect) = line.split_once(" ||| ").expect("args ||| expected");
        let args: Vec<&str> = args.split_whitespace().collect();
        check(&args, tmp.path(), expect, "cli.txt");
    }
}
