//! The distributed discrete Gaussian's ledger against independent
//! references, from fixtures written by `scripts/ddg_fixtures.py` into
//! `tests/data/dp_accounting_ddg.json`: dp-accounting's own
//! `GaussianDpEvent` on an `RdpAccountant` where the members' shares are wide
//! (the sum is a discrete Gaussian to double precision), and Prop. 14 of
//! Kairouz et al. 2021 written apart in Python, converted by dp-accounting's
//! `compute_epsilon`, where they are narrow.

use fedhe_dp::distributed::{DistributedGaussian, PrivacyLedger, ReleaseShape};
use serde_json::Value;

/// The acceptance's relative tolerance.
const REL_TOL: f64 = 1e-6;

fn fixtures() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/dp_accounting_ddg.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("fixture JSON")
}

fn ledger_of(case: &Value) -> PrivacyLedger {
    let mut ledger = PrivacyLedger::new();
    for r in case["releases"].as_array().unwrap() {
        let var = r["member_variance"].as_u64().unwrap() as u128;
        let contributors = r["contributors"].as_u64().unwrap() as usize;
        let grid = r["grid"].as_f64().unwrap();
        // Quorum = contributors: the release is over exactly its quorum.
        let mech = DistributedGaussian::from_member_variance(var, contributors, grid).unwrap();
        let shape = ReleaseShape {
            dim: r["dim"].as_u64().unwrap() as usize,
            l2_sensitivity: r["l2_sensitivity"].as_f64().unwrap(),
        };
        for _ in 0..r["count"].as_u64().unwrap() {
            ledger.record(&mech, &shape, contributors).unwrap();
        }
    }
    ledger
}

#[test]
fn ledger_epsilon_matches_dp_accounting() {
    let fx = fixtures();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let (mut worst, mut kinds) = (0.0f64, std::collections::BTreeSet::new());
    for case in cases {
        let delta = case["delta"].as_f64().unwrap();
        let expected = case["epsilon"].as_f64().unwrap();
        let got = ledger_of(case).epsilon(delta).unwrap();
        let rel = (got.epsilon - expected).abs() / expected.abs().max(1e-300);
        worst = worst.max(rel);
        kinds.insert(case["kind"].as_str().unwrap().to_string());
        assert!(
            rel <= REL_TOL,
            "{}: ε {} vs {expected} (rel {rel:e}); order {} vs {}",
            case["kind"],
            got.epsilon,
            got.order,
            case["order"]
        );
        assert_eq!(got.order, case["order"].as_f64().unwrap(), "{case}");
    }
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    eprintln!("worst relative difference {worst:e}");
}
