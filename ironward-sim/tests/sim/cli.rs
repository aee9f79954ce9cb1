//! The `ironward-sim` command as a user types it.

use std::process::Command;

/// The command the README's first lines give: `ironward-sim run FILE --out DIR` writes the
/// CSV and the SVG and prints a summary; `list` and `show` answer too.
#[test]
fn the_commands_the_readme_gives_run() {
    let bin = env!("CARGO_BIN_EXE_ironward-sim");
    let dir = std::env::temp_dir().join(format!("ironward-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tiny.toml");
    std::fs::write(&file, "name = \"tiny\"\nduration = \"2s\"\n").unwrap();

    let run = Command::new(bin)
        .args([
            "run",
            file.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(dir.join("tiny.csv").is_file() && dir.join("tiny.svg").is_file());
    assert!(!run.stdout.is_empty(), "a summary");

    let list = Command::new(bin).arg("list").output().unwrap();
    assert!(list.status.success());
    assert!(String::from_utf8_lossy(&list.stdout).contains("outage"));
    let show = Command::new(bin).args(["show", "outage"]).output().unwrap();
    assert!(String::from_utf8_lossy(&show.stdout).contains("kind = \"classic\""));
    std::fs::remove_dir_all(&dir).unwrap();
}
