//! `fedhe gp predict`: the exact GP posterior of `fedhe_gp`, comparable with
//! other libraries (no output standardisation unless asked).

use super::json_input::{check_points, read_json};
use super::print_stdout;
use crate::error::CliError;
use clap::{Subcommand, ValueEnum};
use fedhe_gp::hyperfit::{fit_hyperparameters, FitConfig};
use fedhe_gp::{ExactGp, ExactGpParams, Kernel, KernelParams, Matern52, SquaredExponential};
use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

/// `fedhe gp …`
#[derive(Subcommand, Debug)]
pub enum GpCommand {
    /// Posterior mean and latent variance (without noise) at test points;
    /// prints `{"mean": [...], "variance": [...]}`.
    Predict(PredictArgs),
}

/// The kernel family.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum KernelKind {
    /// Squared exponential, `σ² exp(−r²/2)`.
    Se,
    /// Matérn 5/2.
    Matern52,
}

/// Arguments of `fedhe gp predict`.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// Training data, JSON `{"x": [[...], ...], "y": [...]}`.
    #[arg(long)]
    train: String,
    /// Test points, JSON `{"x": [[...], ...]}`.
    #[arg(long)]
    test: String,
    /// Kernel family.
    #[arg(long, value_enum)]
    kernel: KernelKind,
    /// Length-scale (the same in every dimension; the starting point with --fit).
    #[arg(long, allow_hyphen_values = true)]
    lengthscale: f64,
    /// Signal variance σ².
    #[arg(long, allow_hyphen_values = true)]
    variance: f64,
    /// Noise variance σ_n² (added to the training covariance diagonal).
    #[arg(long, allow_hyphen_values = true)]
    noise: f64,
    /// Fit ARD length-scales, variance and noise by maximum marginal likelihood
    /// (multi-start L-BFGS, seed 0) instead of using the given values.
    #[arg(long)]
    fit: bool,
    /// Standardise the outputs (mean 0, standard deviation 1) before conditioning.
    #[arg(long)]
    standardize: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainFile {
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    x: Vec<Vec<f64>>,
}

fn to_matrix(points: &[Vec<f64>], dim: usize) -> DMatrix<f64> {
    DMatrix::from_fn(points.len(), dim, |i, j| points[i][j])
}

fn predict_with<K: Kernel>(
    kernel: K,
    args: &PredictArgs,
    x: &DMatrix<f64>,
    y: &DVector<f64>,
    xs: &DMatrix<f64>,
) -> Result<serde_json::Value, CliError> {
    let params = ExactGpParams::new(kernel)
        .noise_variance(args.noise)
        .standardize(args.standardize);
    let gp: ExactGp<K> = if args.fit {
        fit_hyperparameters(&params, x, y, &FitConfig::default())?
    } else {
        params.fit(x, y)?
    };
    let (mean, variance) = gp.predict(xs)?;
    let mut out = serde_json::json!({
        "mean": mean.as_slice(),
        "variance": variance.as_slice(),
    });
    if args.fit {
        let p = gp.params();
        out["fitted"] = serde_json::json!({
            "lengthscales": p.kernel().params().lengthscales(),
            "variance": p.kernel().signal_variance(),
            "noise": p.get_noise_variance(),
        });
    }
    Ok(out)
}

/// Runs `fedhe gp …`.
pub fn run(command: GpCommand) -> Result<(), CliError> {
    let GpCommand::Predict(args) = command;
    let train: TrainFile = read_json(&args.train)?;
    let test: TestFile = read_json(&args.test)?;
    let dim = train.x.first().map_or(0, Vec::len);
    if dim == 0 {
        return Err(CliError::Usage(format!(
            "{}: no training points in \"x\"",
            args.train
        )));
    }
    check_points(&args.train, &train.x, dim)?;
    check_points(&args.test, &test.x, dim)?;
    if train.y.len() != train.x.len() {
        return Err(CliError::Usage(format!(
            "{}: {} outputs in \"y\" for {} points in \"x\"",
            args.train,
            train.y.len(),
            train.x.len()
        )));
    }
    if let Some(i) = train.y.iter().position(|v| !v.is_finite()) {
        return Err(CliError::Usage(format!(
            "{}: output {i} is not finite",
            args.train
        )));
    }
    let params = KernelParams::isotropic(dim, args.lengthscale, args.variance)?;
    let (x, xs) = (to_matrix(&train.x, dim), to_matrix(&test.x, dim));
    let y = DVector::from_vec(train.y);
    let out = match args.kernel {
        KernelKind::Se => predict_with(SquaredExponential::new(params), &args, &x, &y, &xs)?,
        KernelKind::Matern52 => predict_with(Matern52::new(params), &args, &x, &y, &xs)?,
    };
    print_stdout(&out.to_string())
}
