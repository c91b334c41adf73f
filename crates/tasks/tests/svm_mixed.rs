//! The mixed SVM tasks (`*-svm-mixed`, issue 46, item 6) against an
//! independent implementation: scikit-learn's `SVC` (libsvm) with the same
//! kernels, C, γ, degree and `coef0 = 1`, trained on the same clients'
//! splits (`scripts/svm_fixtures.py` writes `data/svm_mixed.json`).

use fedhe_tasks::{by_name, Problem};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

#[derive(serde::Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    task: String,
    client: usize,
    params: serde_json::Map<String, serde_json::Value>,
    validation_rows: usize,
    error: f64,
}

/// Every case's validation error equals scikit-learn's within a few rows:
/// both solve the same dual to the same tolerance 10⁻³, so they may differ
/// only on validation rows the two near-optimal solutions put on opposite
/// sides. Nine in ten agree exactly (all 120 did when written), for every kernel.
#[test]
fn the_mixed_svm_objective_equals_scikit_learns() {
    let fixture: Fixture =
        serde_json::from_str(include_str!("data/svm_mixed.json")).expect("the fixture parses");
    assert_eq!(fixture.cases.len(), 120);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut exact = std::collections::BTreeMap::<String, (usize, usize)>::new();
    let mut tasks = std::collections::HashMap::new();
    let start = Instant::now();
    for case in &fixture.cases {
        let task = tasks
            .entry(case.task.clone())
            .or_insert_with(|| by_name(&case.task, 6, 0).expect("a mixed SVM task"));
        let unit = task
            .space()
            .expect("a typed space")
            .encode(&case.params)
            .expect("the params are in the space");
        let ours = task
            .evaluate(case.client, &unit, &mut rng)
            .unwrap()
            .observed;
        let rows = case.validation_rows as f64;
        let kernel = case.params["kernel"].as_str().unwrap().to_string();
        assert!(
            (ours - case.error).abs() <= 3.0 / rows + 1e-12,
            "{} client {} {:?}: ours {ours}, scikit-learn {}",
            case.task,
            case.client,
            case.params,
            case.error
        );
        let e = exact.entry(kernel).or_default();
        e.0 += usize::from((ours - case.error).abs() < 1e-12);
        e.1 += 1;
    }
    println!(
        "{} cases in {:.1} s; exact per kernel: {exact:?}",
        fixture.cases.len(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(exact.len(), 3, "every kernel is checked: {exact:?}");
    for (kernel, (same, all)) in &exact {
        assert!(10 * same >= 9 * *all, "{kernel}: {same} of {all} exact");
    }
}

/// The typed space is the one documented, and a parameter a kernel ignores
/// (γ for the linear, the degree for all but the polynomial) does not change
/// the value.
#[test]
fn the_mixed_space_decodes_to_the_svms_hyper_parameters() {
    let task = by_name("pima-svm-mixed", 6, 0).unwrap();
    assert_eq!(task.clients(), Some(5));
    let space = task.space().unwrap();
    let names: Vec<&str> = space.params().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["kernel", "C", "gamma", "degree"]);
    let point = |kernel: &str, gamma: f64, degree: i64| {
        let values =
            serde_json::json!({"kernel": kernel, "C": 10.0, "gamma": gamma, "degree": degree});
        space.encode(values.as_object().unwrap()).unwrap()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut at = |u: Vec<f64>| task.evaluate(1, &u, &mut rng).unwrap().observed;
    assert_eq!(at(point("linear", 1e-3, 2)), at(point("linear", 5.0, 4)));
    assert_eq!(at(point("rbf", 0.01, 2)), at(point("rbf", 0.01, 5)));
    assert!(by_name("pima-svm-mixed", 2, 0).is_err());
    let e = fedhe_tasks::svm::hyper_params(
        serde_json::json!({"kernel": "sigmoid", "C": 1.0, "gamma": 1.0})
            .as_object()
            .unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("kernel"), "{e}");
}

/// Prints the time of one evaluation per kernel (run with `--nocapture`).
#[test]
fn a_mixed_evaluation_takes_milliseconds() {
    let f =
        fedhe_tasks::FederatedSvm::build(fedhe_tasks::spec("breast-cancer-svm").unwrap()).unwrap();
    for kernel in ["rbf", "poly", "linear"] {
        let start = Instant::now();
        let mut n = 0;
        for c in [0.01, 1.0, 1000.0] {
            for gamma in [1e-4, 0.1, 10.0] {
                let values =
                    serde_json::json!({"kernel": kernel, "C": c, "gamma": gamma, "degree": 3});
                let hp = fedhe_tasks::svm::hyper_params(values.as_object().unwrap()).unwrap();
                for client in 0..f.clients() {
                    f.error_at(client, hp).unwrap();
                    n += 1;
                }
            }
        }
        let per = start.elapsed().as_secs_f64() / n as f64;
        println!("{kernel}: {:.1} ms per evaluation ({n})", per * 1e3);
        assert!(per < 2.0, "{kernel}: {per} s per evaluation");
    }
}
