//! The `rdp` accountant against Google's dp-accounting `RdpAccountant`
//! (default orders, `get_epsilon_and_optimal_order`), from fixtures written by
//! `scripts/dp_fixtures.py` into `tests/data/dp_accounting_rdp.json`.

use fedhe_dp::accountant::{dp_accounting_default_orders, rdp_poisson_subsampled_gaussian};
use fedhe_dp::{privacy_loss, AccountantKind, PrivacyAccountant, SubsampledGaussianParams};
use serde_json::Value;
use std::collections::HashMap;

/// Relative tolerance required by the acceptance criteria.
const REL_TOL: f64 = 1e-4;

fn fixtures() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/dp_accounting_rdp.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("fixture JSON")
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs().max(1e-300)
    }
}

#[test]
fn default_orders_match_the_fixture() {
    let fx = fixtures();
    let orders: Vec<f64> = fx["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(orders, dp_accounting_default_orders());
}

#[test]
fn rdp_curves_match_dp_accounting() {
    let fx = fixtures();
    let orders = dp_accounting_default_orders();
    let mut worst = 0.0f64;
    for curve in fx["rdp_curves"].as_array().unwrap() {
        let (q, z) = (curve["q"].as_f64().unwrap(), curve["z"].as_f64().unwrap());
        for (a, expected) in orders.iter().zip(curve["rdp"].as_array().unwrap()) {
            let got = rdp_poisson_subsampled_gaussian(q, z, *a);
            match expected.as_f64() {
                None => assert!(got.is_infinite(), "q={q} z={z} α={a}: {got} vs ∞"),
                Some(e) => {
                    let r = rel(got, e);
                    worst = worst.max(r);
                    assert!(r <= 1e-9, "q={q} z={z} α={a}: {got} vs {e} ({r:e})");
                }
            }
        }
    }
    eprintln!("max relative RDP deviation over the curves: {worst:e}");
}

#[test]
fn epsilons_match_dp_accounting_on_the_grid() {
    let fx = fixtures();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 500, "grid too small: {}", cases.len());
    // One accountant per (q, z): the RDP curve is computed once.
    let mut accountants: HashMap<(u64, u64), PrivacyAccountant> = HashMap::new();
    let mut worst = (0.0f64, String::new());
    for c in cases {
        let q = c["q"].as_f64().unwrap();
        let z = c["z"].as_f64().unwrap();
        let steps = c["steps"].as_u64().unwrap();
        let delta = c["delta"].as_f64().unwrap();
        let acc = accountants
            .entry((q.to_bits(), z.to_bits()))
            .or_insert_with(|| {
                let mech = SubsampledGaussianParams {
                    sampling_rate: q,
                    noise_multiplier: z,
                }
                .validate()
                .unwrap();
                PrivacyAccountant::new(AccountantKind::Rdp, mech)
            });
        let mut acc = acc.clone();
        acc.compose(steps);
        let loss = acc.epsilon(delta).unwrap();
        let what = format!("q={q} z={z} T={steps} δ={delta}");
        match c["epsilon"].as_f64() {
            None => assert!(loss.epsilon.is_infinite(), "{what}: {loss:?} vs ∞"),
            Some(e) => {
                let r = rel(loss.epsilon, e);
                assert!(r <= REL_TOL, "{what}: ε {} vs {e} ({r:e})", loss.epsilon);
                if r > worst.0 {
                    worst = (r, what.clone());
                }
            }
        }
        assert_eq!(loss.order, c["order"].as_f64().unwrap(), "{what}: order");
    }
    eprintln!(
        "max relative ε deviation over {} cases: {:e} ({})",
        cases.len(),
        worst.0,
        worst.1
    );
}

/// The one-shot helper agrees with the running accountant on a fixture case.
#[test]
fn privacy_loss_helper_agrees() {
    let fx = fixtures();
    let c = &fx["cases"].as_array().unwrap()[100];
    let loss = privacy_loss(
        AccountantKind::Rdp,
        c["q"].as_f64().unwrap(),
        c["z"].as_f64().unwrap(),
        c["steps"].as_u64().unwrap(),
        c["delta"].as_f64().unwrap(),
    )
    .unwrap();
    assert!(rel(loss.epsilon, c["epsilon"].as_f64().unwrap()) <= REL_TOL);
}
