//! `fedhe privacy`: the paper's privacy losses and refusal of invalid parameters.

use std::process::{Command, Output};

fn fedhe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(args)
        .output()
        .expect("the fedhe binary runs")
}

fn privacy_json(q: &str, z: &str, steps: &str, delta: &str, accountant: &str) -> serde_json::Value {
    let out = fedhe(&[
        "privacy",
        "--q",
        q,
        "--noise-multiplier",
        z,
        "--steps",
        steps,
        "--delta",
        delta,
        "--accountant",
        accountant,
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
    v
}

/// DP-FTS-DE (paper 000) Fig. 2c/d: T = 40, δ = 1/200^1.1 = 0.0029435.
#[test]
fn moments_accountant_gives_the_papers_privacy_losses() {
    for (q, z, paper) in [
        ("0.25", "1.0", "9.91"),
        ("0.15", "1.0", "5.93"),
        ("0.5", "1.0", "20.12"),
        ("0.25", "1.2", "7.39"),
        ("0.25", "1.5", "5.22"),
    ] {
        let v = privacy_json(q, z, "40", "0.0029435", "moments");
        let eps = v["epsilon"].as_f64().unwrap();
        assert_eq!(format!("{eps:.2}"), paper, "q = {q}, z = {z}: {v}");
        let order = v["order"].as_f64().unwrap();
        assert!((2.0..=33.0).contains(&order) && order.fract() == 0.0, "{v}");
    }
}

/// The `rdp` accountant is tighter and agrees with the dp-accounting fixture
/// value for q = 0.25, z = 1, T = 40, δ = 1/200^1.1 (8.406071230278577 at α = 2.2).
#[test]
fn rdp_accountant_matches_dp_accounting() {
    let v = privacy_json("0.25", "1.0", "40", "0.0029435200932623716", "rdp");
    let eps = v["epsilon"].as_f64().unwrap();
    assert!(
        (eps - 8.406071230278577).abs() <= 1e-4 * 8.406071230278577,
        "{v}"
    );
    assert_eq!(v["order"].as_f64().unwrap(), 2.2);
}

#[test]
fn invalid_parameters_are_refused_with_status_two_and_one_line() {
    for (q, z, delta, name) in [
        ("0", "1.0", "1e-5", "q"),
        ("1.5", "1.0", "1e-5", "q"),
        ("-0.25", "1.0", "1e-5", "q"),
        ("0.25", "0", "1e-5", "z"),
        ("0.25", "-1", "1e-5", "z"),
        ("0.25", "1.0", "0", "delta"),
        ("0.25", "1.0", "1", "delta"),
        ("0.25", "1.0", "NaN", "delta"),
    ] {
        let out = fedhe(&[
            "privacy",
            "--q",
            q,
            "--noise-multiplier",
            z,
            "--steps",
            "40",
            "--delta",
            delta,
            "--json",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "q={q} z={z} δ={delta}: {stderr}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("fedhe: error: invalid {name}")),
            "q={q} z={z} δ={delta}: {stderr}"
        );
    }
    // An unknown accountant is a usage error too.
    let out = fedhe(&[
        "privacy",
        "--q",
        "0.25",
        "--noise-multiplier",
        "1",
        "--steps",
        "4",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
