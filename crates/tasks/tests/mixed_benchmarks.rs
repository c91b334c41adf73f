//! The mixed benchmarks (issue 46, item 6) against an independent reference:
//! 600 values that `scripts/mixed_fixtures.py` computed with the authors'
//! own NumPy definitions (CoCaBO's Func2C and Func3C, FM-kernel BO's
//! Ackley-5C), reached here through the registry's task: the named values
//! encoded by the task's typed space, canonicalised, and evaluated.

use fedhe_tasks::by_name;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn the_mixed_benchmarks_equal_the_authors_definitions() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/mixed_benchmarks.json"
    ))
    .unwrap();
    let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 600);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let dim = fedhe_tasks::mixed::dim_of(name).unwrap();
        let task = by_name(name, dim, 0).unwrap();
        let space = task.space().unwrap();
        let xs: Vec<f64> = case["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let mut named = serde_json::Map::new();
        let continuous: &[&str] = if xs.len() == 1 { &["x"] } else { &["x1", "x2"] };
        for (k, x) in continuous.iter().zip(&xs) {
            named.insert(k.to_string(), (*x).into());
        }
        for (k, h) in case["h"].as_array().unwrap().iter().enumerate() {
            named.insert(format!("h{}", k + 1), h.clone());
        }
        let unit = space.encode(&named).unwrap();
        let got = task
            .evaluate(0, &task.canonical(unit), &mut rng)
            .unwrap()
            .observed;
        let want = case["value"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-10 * want.abs().max(1.0),
            "{name} at {named:?}: {got} against the reference {want}"
        );
    }
}
