//! Helpers for the tests that run the `fedhe` binary.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `fedhe` with `args`.
pub fn fedhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .output()
        .expect("the fedhe binary runs")
}

/// Writes `contents` to a file unique to this process and `name`; returns its path.
pub fn temp_file(name: &str, contents: &str) -> String {
    let mut p: PathBuf = std::env::temp_dir();
    p.push(format!("fedhe-cli-test-{}-{name}", std::process::id()));
    std::fs::write(&p, contents).unwrap();
    p.to_string_lossy().into_owned()
}

/// Asserts exit status 2 with one `fedhe: error:` line mentioning `needle`.
pub fn assert_fails_with(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr:?}");
}

/// Asserts success and parses stdout as JSON.
pub fn json_stdout(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}
