//! `fedhe gp predict` against scikit-learn's `GaussianProcessRegressor`
//! (fixtures from `scripts/gp_fixtures.py`), and its input validation.

mod common;
use common::{assert_fails_with, fedhe, json_stdout, temp_file};
use std::process::Output;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/");

/// The train and test files of the scikit-learn CLI fixture.
fn fixture_files() -> (String, String) {
    (
        format!("{DATA}cli_gp_train.json"),
        format!("{DATA}cli_gp_test.json"),
    )
}

/// Runs `fedhe gp predict` with `[lengthscale, variance, noise]` and extra flags.
fn predict(train: &str, test: &str, kernel: &str, hyper: [&str; 3], extra: &[&str]) -> Output {
    let mut args = vec![
        "gp",
        "predict",
        "--train",
        train,
        "--test",
        test,
        "--kernel",
        kernel,
        "--lengthscale",
        hyper[0],
        "--variance",
        hyper[1],
        "--noise",
        hyper[2],
    ];
    args.extend_from_slice(extra);
    fedhe(&args)
}

#[test]
fn predict_agrees_with_scikit_learn_to_1e8() {
    let fixtures: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/data/sklearn_gp.json")).unwrap();
    let case = fixtures["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "matern52_3d_iso")
        .unwrap();
    let (train, test) = fixture_files();
    let got = json_stdout(&predict(
        &train,
        &test,
        "matern52",
        ["0.7", "1.5", "0.01"],
        &[],
    ));
    let mut worst: f64 = 0.0;
    for key in [("mean", "mean"), ("variance", "variance_latent")] {
        let g = got[key.0].as_array().unwrap();
        let w = case[key.1].as_array().unwrap();
        assert_eq!(g.len(), w.len());
        for (a, b) in g.iter().zip(w) {
            worst = worst.max((a.as_f64().unwrap() - b.as_f64().unwrap()).abs());
        }
    }
    assert!(worst < 1e-8, "max error {worst:e}");
}

#[test]
fn fit_flag_reports_hyperparameters_within_bounds() {
    let (train, test) = fixture_files();
    let got = json_stdout(&predict(
        &train,
        &test,
        "se",
        ["0.5", "1.0", "0.1"],
        &["--fit"],
    ));
    let noise = got["fitted"]["noise"].as_f64().unwrap();
    assert!((1e-6..=1.0).contains(&noise));
    assert_eq!(got["fitted"]["lengthscales"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_exits_with_status_2() {
    let (train, test) = fixture_files();
    let run = |hyper: [&str; 3], train: &str, test: &str| predict(train, test, "se", hyper, &[]);
    let positive = "must be finite and positive";
    assert_fails_with(
        &run(["0", "1", "0.1"], &train, &test),
        &format!("length-scale {positive}"),
    );
    assert_fails_with(
        &run(["NaN", "1", "0.1"], &train, &test),
        &format!("length-scale {positive}"),
    );
    assert_fails_with(
        &run(["1", "-2", "0.1"], &train, &test),
        &format!("signal variance {positive}"),
    );
    assert_fails_with(
        &run(["1", "1", "0"], &train, &test),
        &format!("noise variance {positive}"),
    );
    let test_2d = temp_file("test2d.json", r#"{"x": [[0.1, 0.2]]}"#);
    assert_fails_with(
        &run(["1", "1", "0.1"], &train, &test_2d),
        "point 0 has 2 coordinates, expected 3",
    );
    let short_y = temp_file("shorty.json", r#"{"x": [[0.1], [0.2]], "y": [1.0]}"#);
    let test_1d = temp_file("test1d.json", r#"{"x": [[0.1]]}"#);
    assert_fails_with(
        &run(["1", "1", "0.1"], &short_y, &test_1d),
        "1 outputs in \"y\" for 2 points",
    );
    let malformed = temp_file("bad.json", "{\"x\": [[0.1]], \"y\": [1.0,]}");
    assert_fails_with(
        &run(["1", "1", "0.1"], &malformed, &test_1d),
        "malformed JSON",
    );
    let wrong_key = temp_file("wrongkey.json", r#"{"inputs": [[0.1]]}"#);
    assert_fails_with(
        &run(["1", "1", "0.1"], &train, &wrong_key),
        "malformed JSON",
    );
    let out = fedhe(&["gp", "predict", "--kernel", "rbf"]);
    assert_eq!(out.status.code(), Some(2));
}
