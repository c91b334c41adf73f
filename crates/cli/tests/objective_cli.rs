//! `fedhe objective list|eval` run as a process.

mod common;
use common::{assert_fails_with, fedhe, json_stdout, temp_file};
use fedhe_tasks::benchmarks::cec2005::parse_rows;

#[test]
fn list_names_every_function() {
    let out = fedhe(&["objective", "list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["cec2005-f1 ", "cec2005-f20", "garland", "doublesine"] {
        assert!(text.contains(name), "{name} missing");
    }
    // F8's row: bounds [-32, 32], optimum -140.
    let f8 = text.lines().find(|l| l.starts_with("cec2005-f8 ")).unwrap();
    assert!(f8.contains("[-32, 32]") && f8.contains("-140"), "{f8}");
    // F7's row: the box searched, which holds its optimum, not the
    // initialisation range [0, 600] (a peer reading the list searched that).
    let f7 = text.lines().find(|l| l.starts_with("cec2005-f7 ")).unwrap();
    assert!(f7.contains("[-600, 600]"), "{f7}");
    // Every task `fedhe simulate` accepts, with its sense (issue 17).
    for (name, sense) in [
        ("covid-seir", "minimise"),
        ("kernel-sum-se", "maximise"),
        ("kernel-sum-matern", "maximise"),
        ("gp-sample", "maximise"),
        ("pima-svm", "minimise"),
        ("support2-svm", "minimise"),
    ] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        assert!(row.contains(sense), "{row}");
    }
    let pima = text.lines().find(|l| l.starts_with("pima-svm ")).unwrap();
    assert!(pima.contains("[-2, 3]x[-4, 1]"), "{pima}");
    // A task on a typed space lists its parameters (issue 46).
    let mixed = text
        .lines()
        .find(|l| l.starts_with("pima-svm-mixed "))
        .unwrap();
    for part in [
        "kernel categorical {\"rbf\", \"poly\", \"linear\"}",
        "C float [0.01, 1000], log",
        "gamma float [0.0001, 10], log",
        "degree int 2..=5",
    ] {
        assert!(mixed.contains(part), "{part}: {mixed}");
    }
}

#[test]
fn eval_reproduces_an_official_cec_point() {
    // The organisers' first F1 verification point at D = 50 and its value.
    let text = include_str!("../../tasks/tests/data/cec2005/test_data_func1.txt");
    let rows = parse_rows(text);
    let points = temp_file(
        "f1.json",
        &serde_json::json!({ "x": [rows[0].clone()] }).to_string(),
    );
    let out = fedhe(&[
        "objective",
        "eval",
        "--function",
        "cec2005-f1",
        "--dim",
        "50",
        "--points",
        &points,
    ]);
    let v = json_stdout(&out)["values"][0].as_f64().unwrap();
    assert!(((v - rows[10][0]) / rows[10][0]).abs() < 1e-9);
}

#[test]
fn eval_garland_matches_its_formula() {
    let points = temp_file("garland.json", r#"{"x": [[0.25], [0.5]]}"#);
    let out = fedhe(&[
        "objective",
        "eval",
        "--function",
        "garland",
        "--dim",
        "1",
        "--points",
        &points,
    ]);
    let values = json_stdout(&out)["values"].clone();
    let g = |x: f64| x * (1.0 - x) * (4.0 - (60.0 * x).sin().abs().sqrt());
    assert!((values[0].as_f64().unwrap() - g(0.25)).abs() < 1e-15);
    assert!((values[1].as_f64().unwrap() - g(0.5)).abs() < 1e-15);
}

#[test]
fn eval_with_a_noise_seed_observes_f4_and_f17_with_their_own_noise() {
    // 400 points spread over the box [-100, 100]^10 (a fixed LCG).
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0
    };
    let x: Vec<Vec<f64>> = (0..400)
        .map(|_| (0..10).map(|_| next()).collect())
        .collect();
    let points = temp_file("noisy.json", &serde_json::json!({ "x": x }).to_string());
    let eval = |function: &str, seed: &str| {
        let out = fedhe(&[
            "objective",
            "eval",
            "--function",
            function,
            "--dim",
            "10",
            "--points",
            &points,
            "--noise-seed",
            seed,
        ]);
        let doc = json_stdout(&out);
        let get = |k: &str| -> Vec<f64> {
            doc[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        (get("values"), get("observed"))
    };
    // CEC-2005's definitions: F4 = F2 · (1 + 0.4|N|) + bias (bias −450),
    // F17 = F16's composition · (1 + 0.2|N|) + bias (bias 120), N ~ N(0, 1).
    for (function, bias, scale) in [("cec2005-f4", -450.0, 0.4), ("cec2005-f17", 120.0, 0.2)] {
        let (values, observed) = eval(function, "7");
        let halfnormal: Vec<f64> = values
            .iter()
            .zip(&observed)
            .map(|(v, o)| ((o - bias) / (v - bias) - 1.0) / scale)
            .collect();
        assert!(
            halfnormal.iter().all(|h| *h >= -1e-9),
            "{function}: a factor below 1"
        );
        // E|N| = sqrt(2/π) = 0.7979, sd 0.603: four standard errors at 400.
        let mean = halfnormal.iter().sum::<f64>() / 400.0;
        assert!(
            (mean - (2.0 / std::f64::consts::PI).sqrt()).abs() < 4.0 * 0.603 / 20.0,
            "{function}: {mean}"
        );
        // The values are the noise-free ones; the seed fixes the noise.
        let (values_again, _) = eval(function, "8");
        assert_eq!(values, values_again);
        assert_eq!(eval(function, "7").1, observed);
        assert_ne!(eval(function, "8").1, observed);
    }
    // A function without noise observes its value.
    let (values, observed) = eval("cec2005-f2", "7");
    assert_eq!(values, observed);
}

#[test]
fn bad_input_exits_with_status_2() {
    let good = temp_file("good.json", r#"{"x": [[0.0, 0.0]]}"#);
    let wrong_dim = temp_file("wrongdim.json", r#"{"x": [[0.0, 0.0], [1.0, 2.0, 3.0]]}"#);
    let malformed = temp_file("malformed.json", r#"{"x": [[0.0, 0.0]"#);
    let nan = temp_file("nan.json", r#"{"x": [[NaN, 0.0]]}"#);
    let eval = |f: &str, d: &str, p: &str| {
        fedhe(&[
            "objective",
            "eval",
            "--function",
            f,
            "--dim",
            d,
            "--points",
            p,
        ])
    };
    assert_fails_with(&eval("cec2005-f99", "2", &good), "unknown task");
    assert_fails_with(&eval("rosenbrock", "2", &good), "unknown task");
    // A federation has an objective per client, not one function to evaluate.
    assert_fails_with(&eval("covid-seir", "1", &good), "per client");
    assert_fails_with(&eval("cec2005-f1", "3", &good), "official dimensions");
    assert_fails_with(
        &eval("cec2005-f1", "2", &wrong_dim),
        "point 1 has 3 coordinates, expected 2",
    );
    assert_fails_with(&eval("cec2005-f1", "2", &malformed), "malformed JSON");
    assert_fails_with(&eval("cec2005-f1", "2", &nan), "malformed JSON");
    assert_fails_with(
        &eval("cec2005-f1", "2", "/nonexistent/points.json"),
        "/nonexistent/points.json",
    );
    assert_fails_with(&eval("garland", "2", &good), "one-dimensional");
}

/// Issue 46: a task with an objective per client and a typed space is
/// evaluated for one client at named values, the value the task gives there
/// (as a member would evaluate it in `fedhe simulate`); what is not in the
/// space, another client and a task without a space are refused by name.
#[test]
fn eval_takes_a_client_and_named_values_of_a_typed_space() {
    let params = serde_json::json!([
        {"kernel": "poly", "C": 3.0, "gamma": 0.05, "degree": 3},
        {"kernel": "linear", "C": 0.5, "gamma": 1.0, "degree": 2},
    ]);
    let named = temp_file(
        "named.json",
        &serde_json::json!({ "params": params }).to_string(),
    );
    let eval = |function: &str, dim: &str, client: &str, points: &str| {
        fedhe(&[
            "objective",
            "eval",
            "--function",
            function,
            "--dim",
            dim,
            "--client",
            client,
            "--points",
            points,
        ])
    };
    let out = eval("pima-svm-mixed", "6", "3", &named);
    let values: Vec<f64> = serde_json::from_value(json_stdout(&out)["values"].clone()).unwrap();
    let task = fedhe_tasks::by_name("pima-svm-mixed", 6, 0).unwrap();
    let space = task.space().unwrap();
    let units: Vec<Vec<f64>> = params
        .as_array()
        .unwrap()
        .iter()
        .map(|p| space.encode(p.as_object().unwrap()).unwrap())
        .collect();
    let expected: Vec<f64> = task
        .evaluate_seeded(3, &units, 0)
        .unwrap()
        .iter()
        .map(|e| e.noise_free)
        .collect();
    assert_eq!(values, expected);
    assert_eq!(values.len(), 2);
    // Client 1's objective is another clinic's.
    let other: Vec<f64> = serde_json::from_value(
        json_stdout(&eval("pima-svm-mixed", "6", "1", &named))["values"].clone(),
    )
    .unwrap();
    assert_ne!(other, values);
    let bad_kernel = temp_file(
        "sigmoid.json",
        r#"{"params": [{"kernel": "sigmoid", "C": 1.0, "gamma": 1.0, "degree": 2}]}"#,
    );
    assert_fails_with(&eval("pima-svm-mixed", "6", "0", &bad_kernel), "kernel");
    assert_fails_with(&eval("pima-svm-mixed", "6", "5", &named), "client 5");
    assert_fails_with(&eval("cec2005-f1", "2", "0", &named), "no typed space");
    let both = temp_file(
        "both.json",
        &serde_json::json!({ "params": params, "x": [vec![0.5; 6]] }).to_string(),
    );
    assert_fails_with(&eval("pima-svm-mixed", "6", "0", &both), "exactly one");
    let outside = temp_file("outside.json", r#"{"x": [[0.5, 0.5, 0.5, 0.5, 0.5, 1.5]]}"#);
    assert_fails_with(&eval("pima-svm-mixed", "6", "0", &outside), "unit cube");
}

/// A reader that goes away (`fedhe objective list | head -1`) ends the
/// listing quietly, as Unix tools do: no panic, no backtrace.
#[test]
fn a_closed_stdout_ends_the_listing_without_a_panic() {
    common::assert_quiet_on_closed_stdout(&["objective", "list"]);
}
