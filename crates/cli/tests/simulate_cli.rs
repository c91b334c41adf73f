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

/// Runs `fedhe simulate --config config --out out_dir`, asserts success and
/// returns `results.json`.
fn simulate_ok(config: &str, out_dir: &std::path::Path) -> serde_json::Value {
    simulate_ok_saying(config, out_dir).0
}

/// [`simulate_ok`], with what simulate printed.
fn simulate_ok_saying(config: &str, out_dir: &std::path::Path) -> (serde_json::Value, String) {
    let out = fedhe(&[
        "simulate",
        "--config",
        config,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let results =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    (results, said)
}

#[test]
fn a_small_experiment_writes_results_the_report_reads() {
    let config = temp_file("small.toml", SMALL);
    let out_dir = temp_dir("small");
    let (results, said) = simulate_ok_saying(&config, &out_dir);
    assert!(
        said.contains("not private: fbo-fedgp released noise-free sums"),
        "{said}"
    );
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
            // The simulator's default is noise-free, and says so.
            assert_eq!(r["releases"], "noise-free", "{r}");
        } else {
            assert_eq!(r["method"], "random-search");
            assert_eq!(r["aggregations"], 0);
            assert_eq!(r["releases"], "nothing", "{r}");
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
    // The noise-free federation is named as not private, first thing.
    let privacy = report
        .find("## Privacy of the runs")
        .expect("a privacy section");
    assert!(privacy < report.find("## Best value").unwrap(), "{report}");
    let warning = report
        .lines()
        .find(|l| l.starts_with("**Not private:**"))
        .unwrap_or_else(|| panic!("no warning in {report}"));
    assert!(
        warning.contains("`fbo-fedgp`") && !warning.contains("random-search"),
        "{warning}"
    );
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
        (
            "unknown acquisition",
            SMALL.replace("rounds = 3", "rounds = 3\nacquisition = \"lcb\""),
            "acquisition",
        ),
        (
            "negative beta",
            SMALL.replace("rounds = 3", "rounds = 3\nucb_beta = -1.0"),
            "ucb_beta",
        ),
        (
            "impossible warping",
            SMALL.replace("rounds = 3", "rounds = 3\nwarping = \"box-cox\""),
            "warping",
        ),
        (
            "no fit starts",
            SMALL.replace("rounds = 3", "rounds = 3\nfit_starts = 0"),
            "fit_starts",
        ),
        (
            "unknown hyper-parameter likelihood",
            SMALL.replace("rounds = 3", "rounds = 3\nhyper_likelihood = \"exact\""),
            "hyper_likelihood",
        ),
        (
            "unknown raw sampling",
            SMALL.replace("rounds = 3", "rounds = 3\nacq_raw = \"halton\""),
            "acq_raw",
        ),
        (
            "unknown restart selection",
            SMALL.replace("rounds = 3", "rounds = 3\nacq_restarts = \"best\""),
            "acq_restarts",
        ),
        (
            "noise prior without the length-scale prior",
            SMALL.replace(
                "rounds = 3",
                "rounds = 3\nnoise_prior = \"log-normal\"\nlengthscale_prior = \"none\"",
            ),
            "noise_prior",
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

/// `fedhe simulate --check` on `path`: its stdout, after asserting success.
fn check_config(path: &std::path::Path) -> String {
    let out = fedhe(&["simulate", "--config", path.to_str().unwrap(), "--check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every config under `experiments/` (papers' protocols, records of
/// experiments, the refactoring checks) still validates.
#[test]
fn every_recorded_experiment_config_is_valid() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut dirs = vec![root];
    let mut checked = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().and_then(|e| e.to_str()) == Some("toml") {
                check_config(&path);
                checked += 1;
            }
        }
    }
    assert!(checked >= 80, "only {checked} configs found");
}

/// Issue 44: every config a user starts from (`configs/experiments/`) is
/// valid and private: each of its runs is private or releases nothing, as
/// `--check` says before anything runs. Noise-free protocols live under
/// `experiments/`.
#[test]
fn every_shipped_experiment_config_is_valid_and_private() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/experiments");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let said = check_config(&path);
        assert!(!said.contains("not private"), "{}: {said}", path.display());
        let runs: Vec<&str> = said.lines().filter(|l| l.starts_with("  ")).collect();
        assert!(!runs.is_empty(), "{}: {said}", path.display());
        for run in runs {
            assert!(
                run.contains(": private: ε = ") || run.contains(": releases nothing"),
                "{}: {run}",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} configs found");
}

/// A run naming `recipe = "private"` is the private recipe `fedhe study
/// create` resolves to, labelled private with its budget; a noise-free run
/// of the same config is named as not private; a bad recipe is refused.
#[test]
fn check_says_what_each_run_lets_out() {
    let config = temp_file(
        "recipe.toml",
        r#"
name = "recipe"
functions = ["f1"]
dim = 2
seeds = 1
channel = "plain"

[algorithm]
members = 3
rounds = 4

[[runs]]
method = "fbo-fedgp"
label = "private"
recipe = "private"
[[runs]]
method = "fbo-fedgp"
label = "private-eps1"
recipe = "private"
privacy = { mode = "dp", epsilon = 1.0 }
[[runs]]
method = "fbo-fedgp"
label = "paper"
[[runs]]
method = "independent-bo"
"#,
    );
    let out = fedhe(&["simulate", "--config", &config, "--check"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("  private: private: ε = 4.0000 at δ = 1e-6"),
        "{said}"
    );
    assert!(
        said.contains("  private-eps1: private: ε = 1.0000 at δ = 1e-6"),
        "{said}"
    );
    // Each private run states its summaries' signal ceiling: 3 members
    // over noise of 2·z per value (fbo_fedgp::private::signal_ceiling), and
    // at ε = 1 (more noise) a lower one.
    let ceiling = |label: &str| -> (f64, f64, f64, usize) {
        let line = said
            .lines()
            .find(|l| l.starts_with(&format!("  {label}: ")))
            .unwrap_or_else(|| panic!("{said}"));
        let after = |key: &str| -> &str {
            let at = line.find(key).unwrap_or_else(|| panic!("{key} in {line}"));
            line[at + key.len()..].split([' ', ')']).next().unwrap()
        };
        let values: f64 = after("global summaries of ").parse().unwrap();
        let ratio: f64 = after("signal at most ").parse().unwrap();
        let z: f64 = after("(z = ").parse().unwrap();
        let members: usize = after("alone (").parse().unwrap();
        (values, ratio, z, members)
    };
    let (values, ratio, z, members) = ceiling("private");
    assert!(
        (ratio - 3.0 / (2.0 * z * values.sqrt())).abs() < 2e-3,
        "{said}"
    );
    assert_eq!(members, (2.0 * z * values.sqrt()).ceil() as usize, "{said}");
    assert!(
        said.contains("below 1 the noise outweighs the most signal they can hold"),
        "{said}"
    );
    assert!(ceiling("private-eps1").1 < ratio, "{said}");
    assert!(
        said.contains("  paper: noise-free releases: NOT private"),
        "{said}"
    );
    assert!(
        said.contains("  independent-bo: releases nothing"),
        "{said}"
    );
    assert!(said.contains("not private: paper release"), "{said}");
    for (bad, needle) in [("recipe = \"privat\"", "recipe"), ("recipe = 3", "recipe")] {
        let text = std::fs::read_to_string(&config)
            .unwrap()
            .replace("recipe = \"private\"\nprivacy", &format!("{bad}\nprivacy"));
        let file = temp_file("bad-recipe.toml", &text);
        let out = fedhe(&["simulate", "--config", &file, "--check"]);
        assert_fails_with(&out, needle);
    }
    // A baseline that releases nothing takes no recipe.
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "method = \"independent-bo\"",
        "method = \"independent-bo\"\nrecipe = \"private\"",
    );
    let out = fedhe(&[
        "simulate",
        "--config",
        &temp_file("baseline-recipe.toml", &text),
        "--check",
    ]);
    assert_fails_with(&out, "takes no recipe");
}

const PRIVATE: &str = r#"
name = "private"
functions = ["gp-sample"]
dim = 1
seeds = 1
channel = "plain"

[algorithm]
members = 6
rounds = 4
initial_points = 2
features = 10
acq_candidates = 50
subregions = 2
sampling_rate = 0.5

[[runs]]
method = "ts"
[[runs]]
method = "fts"
[[runs]]
method = "dp-fts-de"
label = "dp"
"#;

#[test]
fn the_thompson_family_runs_reports_epsilon_and_refuses_bad_privacy_parameters() {
    let config = temp_file("private.toml", PRIVATE);
    let out_dir = temp_dir("private");
    let out = fedhe(&[
        "simulate",
        "--config",
        &config,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    // TS and FTS do not know the DP settings: deny_unknown_fields names one.
    assert_fails_with(&out, "unknown field `sampling_rate`");
    let config = temp_file(
        "private-ok.toml",
        &PRIVATE
            .replace("subregions = 2\nsampling_rate = 0.5\n", "")
            .replace(
                "label = \"dp\"",
                "label = \"dp\"\nsubregions = 2\nsampling_rate = 0.5",
            ),
    );
    let results = simulate_ok(&config, &out_dir);
    for r in results["runs"].as_array().unwrap() {
        assert_eq!(r["trace"].as_array().unwrap().len(), 4);
        let private = r["method"] == "dp";
        assert_eq!(r.get("epsilon").is_some(), private, "{r}");
        let releases = match r["method"].as_str().unwrap() {
            "dp" => "private",
            "ts" => "nothing",
            _ => "noise-free",
        };
        assert_eq!(r["releases"], releases, "{r}");
    }
    let out = fedhe(&["report", out_dir.to_str().unwrap(), "--reference", "ts"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(report.contains("## Privacy loss and utility"), "{report}");
    for (from, to, name) in [
        (
            "sampling_rate = 0.5",
            "sampling_rate = 0.0",
            "q (sampling rate)",
        ),
        (
            "sampling_rate = 0.5",
            "sampling_rate = 1.5",
            "q (sampling rate)",
        ),
        (
            "sampling_rate = 0.5",
            "sampling_rate = 0.5\nnoise_multiplier = 0.0",
            "z (noise multiplier)",
        ),
        (
            "sampling_rate = 0.5",
            "sampling_rate = 0.5\ndelta = 1.0",
            "delta",
        ),
        (
            "sampling_rate = 0.5",
            "sampling_rate = 0.5\nclip_norm = -1.0",
            "S (clipping norm)",
        ),
    ] {
        let text = std::fs::read_to_string(&config).unwrap().replace(from, to);
        let bad = temp_file("private-bad.toml", &text);
        let out = fedhe(&["simulate", "--config", &bad, "--check"]);
        assert_fails_with(&out, name);
    }
}

/// A reader that went away (`fedhe simulate … --check | head -0`) ends the
/// output quietly: `println!` panicked there; the commands that print
/// progress now write through `print_stdout`.
#[test]
fn a_closed_stdout_ends_simulate_without_a_panic() {
    let config =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/experiments/table1.toml");
    common::assert_quiet_on_closed_stdout(&[
        "simulate",
        "--config",
        config.to_str().unwrap(),
        "--check",
    ]);
}
