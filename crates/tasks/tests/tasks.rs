//! The shipped tasks: sizes, determinism, and that the objective means something.

use fedhe_tasks::svm::task;
use fedhe_tasks::Problem;
use fedhe_tasks::{names, spec, FederatedSvm, TaskError, TASKS};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The unit point of (C, γ).
fn unit(c: f64, gamma: f64) -> [f64; 2] {
    let (c0, c1) = fedhe_tasks::SvmHyperParams::LOG10_C;
    let (g0, g1) = fedhe_tasks::SvmHyperParams::LOG10_GAMMA;
    [
        (c.log10() - c0) / (c1 - c0),
        (gamma.log10() - g0) / (g1 - g0),
    ]
}

#[test]
fn every_task_builds_with_its_natural_number_of_clients() {
    let expected = [
        ("support2-svm", 8),
        ("credit-svm", 10),
        ("credit-home-svm", 5),
        ("pima-svm", 5),
        ("breast-cancer-svm", 5),
    ];
    assert_eq!(names(), expected.iter().map(|e| e.0).collect::<Vec<_>>());
    for (name, clients) in expected {
        let t = task(name, 2).unwrap();
        assert_eq!(t.clients(), Some(clients), "{name}");
        assert!(t.optimum().is_nan());
    }
}

#[test]
fn split_sizes_match_the_data() {
    // Pima: 532 rows in 5 clients, each split 70/30 by class, no cap reached.
    let pima = FederatedSvm::build(spec("pima-svm").unwrap()).unwrap();
    let rows: usize = (0..5)
        .map(|i| pima.client(i).train_rows() + pima.client(i).validation_rows())
        .sum();
    assert_eq!(rows, 532);
    // SUPPORT2: the Colon Cancer group (512 patients) is client 4: 358 / 154
    // (60 deaths within 30 days: 42 / 18 of them), not capped.
    let support = FederatedSvm::build(spec("support2-svm").unwrap()).unwrap();
    let colon = support.client(4);
    assert_eq!((colon.train_rows(), colon.validation_rows()), (358, 154));
    // The ARF/MOSF group (3515) is capped.
    let arf = support.client(0);
    assert_eq!(
        (arf.train_rows(), arf.validation_rows()),
        (
            fedhe_tasks::svm::MAX_TRAIN_ROWS,
            fedhe_tasks::svm::MAX_VALIDATION_ROWS
        )
    );
    // 18 numeric + one-hot of sex 2, race 6, diabetes 2, dementia 2, ca 3, income 5.
    assert_eq!(arf.train_features().ncols(), 38);
    // Standardised on the client's own training split: mean 0 per column.
    for col in arf.train_features().columns() {
        assert!(col.mean().unwrap().abs() < 1e-9);
    }
    // Credit by Home: owner, rent, parents, other (+ ignore, missing), priv.
    let home = FederatedSvm::build(spec("credit-home-svm").unwrap()).unwrap();
    let other = home.client(3);
    assert_eq!(other.train_rows() + other.validation_rows(), 319 + 20 + 6);
}

#[test]
fn evaluation_is_deterministic_and_an_error_rate() {
    let t = task("breast-cancer-svm", 2).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for client in 0..5 {
        for x in [[0.0, 0.0], [0.5, 0.3], [1.0, 1.0], [0.9, 0.05]] {
            let a = t.evaluate(client, &x, &mut rng).unwrap();
            assert_eq!(a.observed, a.noise_free);
            assert!((0.0..=1.0).contains(&a.observed), "{}", a.observed);
            // A fresh task (no memo) gives the same value.
            let fresh = FederatedSvm::build(spec("breast-cancer-svm").unwrap()).unwrap();
            assert_eq!(fresh.validation_error(client, &x).unwrap(), a.observed);
        }
    }
    assert!(t.evaluate(5, &[0.5, 0.5], &mut rng).is_err());
}

#[test]
fn a_sensible_svm_beats_a_degenerate_one() {
    // A known-good setting against C = 0.01, γ = 10, which predicts the
    // majority class: averaged over the clients, the first errs clearly less.
    // SUPPORT2's 30-day mortality is hard (the majority class is right for
    // 90 % of CHF patients); a nearly linear, weakly regularised SVM still wins.
    for (name, good) in [
        ("breast-cancer-svm", (100.0, 0.01)),
        ("pima-svm", (100.0, 0.01)),
        ("credit-svm", (100.0, 0.01)),
        ("support2-svm", (1000.0, 1e-4)),
    ] {
        let f = FederatedSvm::build(spec(name).unwrap()).unwrap();
        let mean = |x: [f64; 2]| {
            (0..f.clients())
                .map(|c| f.validation_error(c, &x).unwrap())
                .sum::<f64>()
                / f.clients() as f64
        };
        let (good, bad) = (mean(unit(good.0, good.1)), mean(unit(0.01, 10.0)));
        assert!(good + 0.03 < bad, "{name}: good {good}, degenerate {bad}");
    }
    let bc = FederatedSvm::build(spec("breast-cancer-svm").unwrap()).unwrap();
    assert!(bc.validation_error(0, &unit(100.0, 0.01)).unwrap() < 0.1);
}

#[test]
fn unknown_names_and_wrong_dimensions_are_refused() {
    let e = task("cec2005-f1", 2).unwrap_err();
    assert!(matches!(e, TaskError::UnknownTask { .. }));
    assert!(e.to_string().contains("pima-svm"), "{e}");
    let e = task("pima-svm", 10).unwrap_err().to_string();
    assert!(e.contains("dim"), "{e}");
    assert!(spec("nope").is_none());
}

/// Prints the time of one evaluation per task (run with `--nocapture`).
#[test]
fn one_evaluation_takes_milliseconds() {
    for s in TASKS {
        let f = FederatedSvm::build(s).unwrap();
        let start = Instant::now();
        let mut n = 0;
        for client in 0..f.clients() {
            for x in [[0.2, 0.2], [0.5, 0.5], [0.95, 0.6], [0.9, 0.1]] {
                f.validation_error(client, &x).unwrap();
                n += 1;
            }
        }
        let per = start.elapsed().as_secs_f64() / n as f64;
        println!(
            "{}: {:.1} ms per evaluation ({n} evaluations)",
            s.name,
            per * 1e3
        );
        assert!(per < 1.0, "{}: {per} s per evaluation", s.name);
    }
}
