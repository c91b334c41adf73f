//! `fedhe gp predict` against scikit-learn's `GaussianProcessRegressor`
//! (fixtures from `scripts/gp_fixtures.py`), and its input validation.

mod common;
use common::{assert_fails_with, fedhe, json_stdout, temp_file};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/");

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
    let (train, test) = (
        format!("{DATA}cli_gp_train.json"),
        format!("{DATA}cli_gp_test.json"),
    );
    let out = fedhe(&[
        "gp",
        "predict",
        "--train",
        &train,
        "--test",
        &test,
        "--kernel",
        "matern52",
        "--lengthscale",
        "0.7",
        "--variance",
        "1.5",
        "--noise",
        "0.01",
    ]);
    let got = json_stdout(&out);
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
    let (train, test) = (
        format!("{DATA}cli_gp_train.json"),
        format!("{DATA}cli_gp_test.json"),
    );
    let out = fedhe(&[
        "gp",
        "predict",
        "--train",
        &train,
        "--test",
        &test,
        "--kernel",
        "se",
        "--lengthscale",
        "0.5",
        "--variance",
        "1.0",
        "--noise",
        "0.1",
        "--fit",
    ]);
    let got = json_stdout(&out);
    let noise = got["fitted"]["noise"].as_f64().unwrap();
    assert!((1e-6..=1.0).contains(&noise));
    assert_eq!(got["fitted"]["lengthscales"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_input_exits_with_status_2() {
    let (train, test) = (
        format!("{DATA}cli_gp_train.json"),
        format!("{DATA}cli_gp_test.json"),
    );
    let run = |ls: &str, var: &str, noise: &str, train: &str, test: &str| {
        fedhe(&[
            "gp",
            "predict",
            "--train",
            train,
            "--test",
            test,
            "--kernel",
            "se",
            "--lengthscale",
            ls,
            "--variance",
            var,
            "--noise",
            noise,
        ])
    };
    assert_fails_with(
        &run("0", "1", "0.1", &train, &test),
        "length-scale must be finite and positive",
    );
    assert_fails_with(
        &run("NaN", "1", "0.1", &train, &test),
        "length-scale must be finite and positive",
    );
    assert_fails_with(
        &run("1", "-2", "0.1", &train, &test),
        "signal variance must be finite and positive",
    );
    assert_fails_with(
        &run("1", "1", "0", &train, &test),
        "noise variance must be finite and positive",
    );
    let test_2d = temp_file("test2d.json", r#"{"x": [[0.1, 0.2]]}"#);
    assert_fails_with(
        &run("1", "1", "0.1", &train, &test_2d),
        "point 0 has 2 coordinates, expected 3",
    );
    let short_y = temp_file("shorty.json", r#"{"x": [[0.1], [0.2]], "y": [1.0]}"#);
    let test_1d = temp_file("test1d.json", r#"{"x": [[0.1]]}"#);
    assert_fails_with(
        &run("1", "1", "0.1", &short_y, &test_1d),
        "1 outputs in \"y\" for 2 points",
    );
    let malformed = temp_file("bad.json", "{\"x\": [[0.1]], \"y\": [1.0,]}");
    assert_fails_with(
        &run("1", "1", "0.1", &malformed, &test_1d),
        "malformed JSON",
    );
    let wrong_key = temp_file("wrongkey.json", r#"{"inputs": [[0.1]]}"#);
    assert_fails_with(&run("1", "1", "0.1", &train, &wrong_key), "malformed JSON");
    let out = fedhe(&["gp", "predict", "--kernel", "rbf"]);
    assert_eq!(out.status.code(), Some(2));
}
