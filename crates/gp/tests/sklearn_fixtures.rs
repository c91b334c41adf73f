//! The exact GP against scikit-learn's `GaussianProcessRegressor` (fixed kernel,
//! `optimizer=None`), fixtures written by `scripts/gp_fixtures.py`.

use fedhe_gp::{ExactGpParams, Kernel, KernelParams, Matern52, SquaredExponential};
use nalgebra::{DMatrix, DVector};
use serde_json::Value;

fn matrix(v: &Value) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = serde_json::from_value(v.clone()).unwrap();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn vector(v: &Value) -> DVector<f64> {
    DVector::from_vec(serde_json::from_value(v.clone()).unwrap())
}

fn max_errors<K: Kernel>(kernel: K, case: &Value) -> (f64, f64) {
    let gp = ExactGpParams::new(kernel)
        .noise_variance(case["noise"].as_f64().unwrap())
        .fit(&matrix(&case["x_train"]), &vector(&case["y_train"]))
        .unwrap();
    let (mean, var) = gp.predict(&matrix(&case["x_test"])).unwrap();
    (
        (mean - vector(&case["mean"])).amax(),
        (var - vector(&case["variance_latent"])).amax(),
    )
}

#[test]
fn exact_gp_matches_scikit_learn() {
    let text = include_str!("../../../tests/data/sklearn_gp.json");
    let fixtures: Value = serde_json::from_str(text).unwrap();
    let cases = fixtures["cases"].as_array().unwrap();
    assert!(cases.len() >= 4);
    for case in cases {
        let params = KernelParams::new(
            serde_json::from_value(case["lengthscale"].clone()).unwrap(),
            case["variance"].as_f64().unwrap(),
        )
        .unwrap();
        let (mean_err, var_err) = match case["kernel"].as_str().unwrap() {
            "se" => max_errors(SquaredExponential::new(params), case),
            "matern52" => max_errors(Matern52::new(params), case),
            other => panic!("unknown kernel {other}"),
        };
        let name = case["name"].as_str().unwrap();
        assert!(mean_err < 1e-8, "{name}: mean error {mean_err:e}");
        assert!(var_err < 1e-8, "{name}: variance error {var_err:e}");
        println!("{name}: mean error {mean_err:e}, variance error {var_err:e}");
    }
}
