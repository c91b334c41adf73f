//! `fedhe simulate` as a process: a small federation over the real HE channel
//! writes results the report reads; bad configs are refused naming the field;
//! every committed experiment config is valid.

#[allow(dead_code)]
mod common;
use common::{assert_fails_with, fedhe, temp_file};
use std::path::PathBuf;

fn temp_dir(name: &str) -> PathBuf {
    let mut p = std::env::temp_dir();
    p.push(format!("fedhe-simulate-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

const SMALL: &str = r#"
name = "small"
functions = ["f1", "f6"]
dim = 2
seeds = 2
channel = "he"

[algorithm]
members = 3
rounds = 3
initial_points = 2
support_size = 4
acq_candidates = 100

[[runs]]
method = "fbo-fedgp"
[[runs]]
method = "random-search"
"#;

#[test]
fn a_small_experiment_writes_results_the_report_reads() {
    let config = temp_file("small.toml", SMALL);
    let out_dir = temp_dir("small");
    let out = fedhe(&[
        "simulate",
        "--config",
        &config,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 2, "functions × runs × seeds");
    for r in runs {
        for field in [
            "task",
            "method",
            "seed",
            "members",
            "rounds",
            "best",
            "best_per_member",
            "trace",
            "seconds",
            "bytes_sent_per_member",
            "aggregations",
        ] {
            assert!(r.get(field).is_some(), "missing {field} in {r}");
        }
        assert_eq!(r["trace"].as_array().unwrap().len(), 3);
        assert_eq!(r["best_per_member"].as_array().unwrap().len(), 3);
        let best = r["best"].as_f64().unwrap();
        let min_member = r["best_per_member"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        assert_eq!(
            best, min_member,
            "the federation's best is its best member's"
        );
        let task = r["task"].as_str().unwrap();
        assert!(task == "cec2005-f1" || task == "cec2005-f6", "{task}");
        if r["method"] == "fbo-fedgp" {
            // Real encrypted traffic: at least one 8192-coefficient ciphertext a sum.
            assert!(r["bytes_sent_per_member"].as_u64().unwrap() > 100_000);
            assert!(r["aggregations"].as_u64().unwrap() >= 3);
        } else {
            assert_eq!(r["method"], "random-search");
            assert_eq!(r["aggregations"], 0);
        }
    }
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 8);
    assert!(csv.starts_with("task,method,seed,"));
    // The report reads what simulate wrote.
    let out = fedhe(&["report", out_dir.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(report.contains("cec2005-f6") && report.contains("random-search"));
}

#[test]
fn bad_configs_are_refused_naming_the_field() {
    let cases = [
        (
            "unknown function",
            SMALL.replace("\"f6\"", "\"f99\""),
            "f99",
        ),
        (
            "one member",
            SMALL.replace("members = 3", "members = 1"),
            "members",
        ),
        (
            "empty support",
            SMALL.replace("support_size = 4", "support_size = 0"),
            "support_size",
        ),
        (
            "missing rounds",
            SMALL.replace("rounds = 3\n", ""),
            "rounds",
        ),
        (
            "unknown key",
            SMALL.replace("rounds = 3", "rounds = 3\nround = 4"),
            "round",
        ),
        (
            "unknown method",
            SMALL.replace("random-search", "grid-search"),
            "grid-search",
        ),
    ];
    for (what, text, needle) in cases {
        let config = temp_file(&format!("bad-{}.toml", what.replace(' ', "-")), &text);
        let out = fedhe(&[
            "simulate",
            "--config",
            &config,
            "--out",
            "/nonexistent/never",
        ]);
        assert_fails_with(&out, needle);
    }
    let out = fedhe(&["simulate", "--config", "/nonexistent/config.toml"]);
    assert_fails_with(&out, "config.toml");
}

#[test]
fn every_committed_experiment_config_is_valid() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/experiments");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        // --check validates the config and every run without running anything.
        let out = fedhe(&["simulate", "--config", path.to_str().unwrap(), "--check"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} configs found");
}
