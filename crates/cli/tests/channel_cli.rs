//! The `fedhe` binary as a user runs it: exit codes, JSON output, refusal of
//! insecure parameters, and `inspect` on good and malformed objects.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fedhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .output()
        .expect("the fedhe binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fedhe-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `fedhe channel check --json` on the toy set: 10 members, 1500 values, 2 rounds.
fn toy_check(seed: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "channel",
        "check",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--members",
        "10",
        "--values",
        "1500",
        "--rounds",
        "2",
        "--seed",
        seed,
        "--json",
    ];
    args.extend_from_slice(extra);
    fedhe(&args)
}

fn check_json(dump: &Path) -> serde_json::Value {
    let out = toy_check("3", &["--dump-dir", dump.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn channel_check_reports_accuracy_sizes_and_the_missing_share_experiment() {
    let dump = scratch("check");
    let v = check_json(&dump);
    assert_eq!(v["params"], "toy-n1024");
    assert_eq!(v["security_bits"], 0);
    assert_eq!(v["members"], 10);
    let err = v["max_abs_error"].as_f64().unwrap();
    let bound = v["error_bound"].as_f64().unwrap();
    assert!(err <= bound && err <= 1e-9, "error {err}, bound {bound}");
    assert!(v["missing_share"]["median_abs_deviation"].as_f64().unwrap() >= 1e6);
    for op in [
        "key_share",
        "encrypt",
        "aggregate",
        "decryption_share",
        "combine",
    ] {
        assert!(v["ms"][op].as_f64().unwrap() > 0.0, "{op}");
    }
    // 2 polynomials × 2 primes × 1024 coefficients × 8 bytes, per ciphertext, 2 ciphertexts.
    assert!(v["bytes"]["ciphertext"].as_u64().unwrap() >= 2 * 2 * 2 * 1024 * 8);
    for name in [
        "public-key-share",
        "collective-public-key",
        "ciphertext",
        "aggregate",
        "decryption-share",
    ] {
        let file = dump.join(format!("{name}.bin"));
        let out = fedhe(&["inspect", "--json", file.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let kind = if name == "ciphertext" || name == "aggregate" {
            "encrypted-vector"
        } else {
            name
        };
        assert_eq!(d["kind"], kind);
    }
}

#[test]
fn channel_check_runs_the_threshold_path_and_refuses_bad_thresholds() {
    let run = |t: &str| toy_check("4", &["--threshold", t]);
    let out = run("6");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = v["max_abs_error"].as_f64().unwrap();
    assert!(
        err <= v["error_bound"].as_f64().unwrap() && err <= 1e-9,
        "{err}"
    );
    assert_eq!(v["threshold"]["threshold"], 6);
    assert_eq!(
        v["threshold"]["decrypting_members"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    assert_eq!(v["threshold"]["below_threshold"]["shares"], 5);
    assert!(v["missing_share"]["median_abs_deviation"].as_f64().unwrap() >= 1e6);
    assert!(
        v["threshold"]["below_threshold"]["median_abs_deviation_reinterpolated"]
            .as_f64()
            .unwrap()
            >= 1e6
    );
    assert!(v["ms"]["decryption_share"].as_f64().unwrap() > 0.0);
    assert!(v["flooding_margin_bits"].as_f64().unwrap() >= 40.0);
    for bad in ["5", "11"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "T = {bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("threshold") && stderr.contains("6..=10"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn insecure_parameters_are_refused_without_the_flag() {
    let out = fedhe(&[
        "channel",
        "check",
        "--params",
        "toy-n1024",
        "--values",
        "10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("128-bit") && stderr.contains("--allow-insecure"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let out = fedhe(&["demo", "--params", "no-such-set"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown parameter set"));
}

#[test]
fn inspect_exits_2_on_malformed_input_never_101() {
    let dump = scratch("inspect");
    check_json(&dump);
    let mut cases: Vec<Vec<u8>> = vec![
        vec![],
        b"FDHE".to_vec(),
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect(),
    ];
    for name in ["public-key-share", "ciphertext", "decryption-share"] {
        let bytes = std::fs::read(dump.join(format!("{name}.bin"))).unwrap();
        cases.push(bytes[..bytes.len() / 3].to_vec());
        cases.push(bytes[..bytes.len() - 1].to_vec());
        for pos in [0, 7, 13, 25, bytes.len() / 2, bytes.len() - 5] {
            let mut flipped = bytes.clone();
            flipped[pos] ^= 0x10;
            cases.push(flipped);
        }
    }
    for (i, case) in cases.iter().enumerate() {
        let file = dump.join(format!("bad-{i}.bin"));
        std::fs::write(&file, case).unwrap();
        let out = fedhe(&["inspect", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "case {i}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "one-line error: {stderr}");
    }
    let out = fedhe(&["inspect", dump.join("missing.bin").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn demo_in_process_runs_a_federation_and_prints_every_round() {
    let out = fedhe(&[
        "demo",
        "--in-process",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--members",
        "3",
        "--rounds",
        "3",
        "--dim",
        "2",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.matches("sent its public-key share").count(),
        3,
        "{stdout}"
    );
    let rounds: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(rounds.len(), 3, "{stdout}");
    assert!(stdout.contains("Best value found"), "{stdout}");
    assert!(stdout.contains("Privacy spent: ε = "), "{stdout}");
    // Noise-free only when asked, and labelled so.
    let out = fedhe(&[
        "demo",
        "--in-process",
        "--params",
        "toy-n1024",
        "--allow-insecure",
        "--members",
        "3",
        "--rounds",
        "2",
        "--dim",
        "2",
        "--noise-free",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Privacy: noise-free. The decrypted sums are NOT private"));
    assert!(
        stdout.contains("none accounted (noise-free releases)"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["privacy"], "noise-free", "{v}");
    assert!(v["epsilon"].is_null(), "{v}");
    let out = fedhe(&["demo", "--epsilon", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("epsilon"));
    let out = fedhe(&["demo", "--members", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("members"));
}

#[cfg(not(feature = "peers"))]
#[test]
fn bench_without_peers_says_how_to_enable_them() {
    let out = fedhe(&["bench", "channel", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--features peers"));
}
