//! Acquisition values against 50-digit mpmath references written by
//! `scripts/gp_fixtures.py`, including far in the lower tail.

use fedhe_bo::acquisition::Acquisition;
use serde_json::Value;

#[test]
fn acquisitions_match_high_precision_references() {
    let text = include_str!("../../../tests/data/acquisition.json");
    let fixtures: Value = serde_json::from_str(text).unwrap();
    let mut worst_log_ei: f64 = 0.0;
    for case in fixtures["cases"].as_array().unwrap() {
        let get = |k: &str| case[k].as_f64().unwrap();
        let (mean, sigma, best) = (get("mean"), get("sigma"), get("best"));
        let ei = Acquisition::Ei { best }.value(mean, sigma);
        let log_ei = Acquisition::LogEi { best }.value(mean, sigma);
        let pi = Acquisition::Pi { best }.value(mean, sigma);
        let log_pi = Acquisition::LogPi { best }.value(mean, sigma);
        let rel = |a: f64, b: f64| {
            if b == 0.0 {
                a.abs()
            } else {
                ((a - b) / b).abs()
            }
        };
        // EI and PI may underflow to 0 in the tail; compare them where representable.
        if get("ei") > 1e-300 {
            assert!(
                rel(ei, get("ei")) < 1e-10,
                "EI at {mean}, {sigma}: {ei} vs {}",
                get("ei")
            );
        }
        if get("pi") > 1e-300 {
            assert!(rel(pi, get("pi")) < 1e-10, "PI at {mean}, {sigma}");
        }
        let e = rel(log_ei, get("log_ei"));
        worst_log_ei = worst_log_ei.max(e);
        assert!(
            e < 1e-12,
            "log EI at {mean}, {sigma}: {log_ei} vs {}",
            get("log_ei")
        );
        assert!(
            rel(log_pi, get("log_pi")) < 1e-12,
            "log PI at {mean}, {sigma}"
        );
    }
    println!("worst relative log-EI error {worst_log_ei:e}");
}
