//! `fedhe objective list|eval|value`: every task name of the registry
//! (`fedhe_tasks::list`), and the benchmark functions evaluated in their own box.

use super::json_input::{check_points, read_json};
use super::print_stdout;
use crate::error::CliError;
use clap::Subcommand;
use fedhe_tasks::registry::{benchmark, list};
use serde::Deserialize;

/// `fedhe objective …`
#[derive(Subcommand, Debug)]
pub enum ObjectiveCommand {
    /// List every task `fedhe simulate` accepts: name, dimensions, bounds,
    /// optimum value (`-` when unknown or drawn per seed), sense, clients.
    List,
    /// Evaluate a function (noise-free) at the points of a JSON file
    /// `{"x": [[...], ...]}`; prints `{"values": [...]}` (and `"observed"`,
    /// noisy where the function is, with `--noise-seed`). A task with an
    /// objective per client (`pima-svm`, …) is evaluated for `--client`; a
    /// task with a typed space (`func2c`, `pima-svm-mixed`, …) takes its
    /// points as named values, `{"params": [{"kernel": "rbf", …}, …]}`, or
    /// as points `"x"` of its unit cube.
    Eval {
        /// Function name, e.g. `cec2005-f1` … `cec2005-f20`, `garland`, `doublesine`.
        #[arg(long)]
        function: String,
        /// Dimension (2, 10, 30 or 50 for CEC-2005; 1 for garland and doublesine).
        #[arg(long)]
        dim: usize,
        /// JSON file with the points.
        #[arg(long)]
        points: String,
        /// Also print `"observed"`: each point's value as an optimiser
        /// observes it, with the function's own noise (CEC-2005 F4 and F17,
        /// "with noise in fitness") drawn from a ChaCha8 stream seeded by
        /// this number, as `fedhe simulate` observes them; equal to
        /// `"values"` for a function without noise. A peer optimiser fits
        /// its model to these and is scored on `"values"`, as fedhe's
        /// agents are.
        #[arg(long)]
        noise_seed: Option<u64>,
        /// The client whose objective to evaluate (0-based), for a task
        /// with an objective per client.
        #[arg(long)]
        client: Option<usize>,
    },
    /// Evaluate a function (noise-free) at one point read from stdin as a JSON
    /// array in the function's own box; prints one number. This is the form
    /// `fedhe agent run --objective` expects of an institution's command.
    Value {
        /// Function name.
        #[arg(long)]
        function: String,
        /// Dimension.
        #[arg(long)]
        dim: usize,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointsFile {
    /// Points: in the function's box, or a task's unit cube.
    #[serde(default)]
    x: Option<Vec<Vec<f64>>>,
    /// Named values, for a task with a typed space.
    #[serde(default)]
    params: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
}

/// Runs `fedhe objective …`.
pub fn run(command: ObjectiveCommand) -> Result<(), CliError> {
    match command {
        ObjectiveCommand::List => {
            let mut text = format!(
                "{:<18} {:<12} {:<22} {:>22}  {:<8}  {:<7}  description",
                "name", "dimensions", "bounds", "optimum", "sense", "clients"
            );
            for info in list() {
                let dims: Vec<String> = info.dimensions.iter().map(|d| d.to_string()).collect();
                let bounds: Vec<String> = info
                    .bounds
                    .iter()
                    .map(|(lo, hi)| format!("[{lo}, {hi}]"))
                    .collect();
                text.push_str(&format!(
                    "\n{:<18} {:<12} {:<22} {:>22}  {:<8}  {:<7}  {}",
                    info.name,
                    dims.join(","),
                    bounds.join("x"),
                    info.optimum.map_or("-".to_string(), |o| o.to_string()),
                    info.sense.as_str(),
                    info.clients.map_or("any".to_string(), |c| c.to_string()),
                    info.description
                ));
            }
            print_stdout(&text)
        }
        ObjectiveCommand::Eval {
            function,
            dim,
            points,
            noise_seed,
            client,
        } => {
            let file: PointsFile = read_json(&points)?;
            if client.is_some() || file.params.is_some() {
                return eval_task(&function, dim, &points, file, client, noise_seed);
            }
            let objective = benchmark(&function, dim)?;
            let x = file.x.ok_or_else(|| {
                CliError::Usage(format!("{points}: no \"x\" (or \"params\") to evaluate"))
            })?;
            check_points(&points, &x, dim)?;
            let values = x
                .iter()
                .map(|p| objective.evaluate(p))
                .collect::<Result<Vec<f64>, _>>()?;
            match noise_seed {
                None => print_stdout(&serde_json::json!({ "values": values }).to_string()),
                Some(seed) => {
                    let observed = objective.observe_seeded(&x, seed)?;
                    print_stdout(
                        &serde_json::json!({ "values": values, "observed": observed }).to_string(),
                    )
                }
            }
        }
        ObjectiveCommand::Value { function, dim } => {
            let objective = benchmark(&function, dim)?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|source| {
                CliError::Io {
                    path: "stdin".into(),
                    source,
                }
            })?;
            let point: Vec<f64> = serde_json::from_str(&text).map_err(|e| CliError::Invalid {
                path: "stdin".into(),
                reason: format!("expected a JSON array of {dim} numbers: {e}"),
            })?;
            check_points("stdin", std::slice::from_ref(&point), dim)?;
            print_stdout(&objective.evaluate(&point)?.to_string())
        }
    }
}

/// `fedhe objective eval` of a task as `fedhe simulate` builds it (seed 0):
/// client `client`'s values (client 0 when not given) at named values
/// (`params`, a typed space's) or points of the unit cube (`x`), each
/// evaluated at its canonical point, as a method would. With `noise_seed`,
/// also what an optimiser observes.
fn eval_task(
    function: &str,
    dim: usize,
    path: &str,
    file: PointsFile,
    client: Option<usize>,
    noise_seed: Option<u64>,
) -> Result<(), CliError> {
    let task = fedhe_tasks::by_name(function, dim, 0)?;
    let units: Vec<Vec<f64>> = match (file.x, file.params) {
        (Some(x), None) => {
            check_points(path, &x, dim)?;
            if let Some(i) = x
                .iter()
                .position(|p| p.iter().any(|u| !(0.0..=1.0).contains(u)))
            {
                return Err(CliError::Usage(format!(
                    "{path}: point {i} is outside the unit cube {function}'s points \"x\" live in"
                )));
            }
            x.into_iter().map(|p| task.canonical(p)).collect()
        }
        (None, Some(params)) => {
            let space = task.space().ok_or_else(|| {
                CliError::Usage(format!(
                    "{path}: {function} has no typed space to name values in: give \"x\""
                ))
            })?;
            if params.is_empty() {
                return Err(CliError::Usage(format!("{path}: no points in \"params\"")));
            }
            params
                .iter()
                .map(|p| space.encode(p))
                .collect::<Result<_, _>>()?
        }
        _ => {
            return Err(CliError::Usage(format!(
                "{path}: give exactly one of \"x\" and \"params\""
            )))
        }
    };
    let evaluations = task.evaluate_seeded(client.unwrap_or(0), &units, noise_seed.unwrap_or(0))?;
    let values: Vec<f64> = evaluations.iter().map(|e| e.noise_free).collect();
    let mut out = serde_json::json!({ "values": values });
    if noise_seed.is_some() {
        let observed: Vec<f64> = evaluations.iter().map(|e| e.observed).collect();
        out["observed"] = observed.into();
    }
    print_stdout(&out.to_string())
}
