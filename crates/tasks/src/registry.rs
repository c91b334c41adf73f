//! The one registry of task names: [`by_name`] builds the task `fedhe
//! simulate` (and every other command) runs, [`list`] describes every name it
//! accepts, and [`info`] looks one name up without building it (what `fedhe
//! report` needs to know the sense).
//!
//! The families, tried in this order (their names are disjoint):
//!
//! | names | module | clients |
//! | --- | --- | --- |
//! | `covid-seir` | [`crate::seir`] | one per region |
//! | `gp-sample`, `gp-sample-<seed>` | [`crate::synthetic::gp_sample`] | any number |
//! | `kernel-sum-se`, `kernel-sum-matern` | [`crate::synthetic::kernel_sum`] | any number, one function |
//! | `support2-svm`, `pima-svm`, …, `pima-svm-mixed`, … (feature `svm`) | `crate::svm` | the task's own |
//! | `func2c`, `func3c`, `ackley5c` (typed spaces) | [`crate::mixed`] | any number, one function |
//! | `cec2005-f1` … `cec2005-f20`, `garland`, `doublesine` | [`crate::benchmarks`] | any number, one function |

use crate::benchmarks::{self, cec2005, x_armed, Objective};
use crate::problem::Sense;
use crate::synthetic::gp_sample::PerturbedGpSample;
use crate::synthetic::kernel_sum::{self, KERNEL_SUM_MATERN, KERNEL_SUM_SE};
use crate::{seir, Task, TaskError};
use std::sync::Arc;

/// The name of paper 000's GP-sample federation (function seed 0); the
/// registry also accepts `gp-sample-<seed>`.
pub const GP_SAMPLE: &str = "gp-sample";

/// What `fedhe objective list` prints about a task name.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskInfo {
    /// The name `fedhe simulate` accepts (`gp-sample-<seed>` stands for the
    /// family of seeded names).
    pub name: String,
    /// The dimensions it is defined for.
    pub dimensions: Vec<usize>,
    /// The search range `[lo, hi]` of the problem in its own units, the box
    /// `fedhe simulate` searches (for CEC-2005 F7 `[−600, 600]`, not its
    /// initialisation range `[0, 600]`, which misses the optimum): one entry
    /// when every coordinate shares it, else one per coordinate.
    pub bounds: Vec<(f64, f64)>,
    /// The optimum value, when known and the same for every seed.
    pub optimum: Option<f64>,
    /// Whether the optimum is a minimum or a maximum.
    pub sense: Sense,
    /// How many clients it has objectives for (`None`: any number).
    pub clients: Option<usize>,
    /// One line on what it is.
    pub description: String,
}

/// Every task name the registry accepts, in the order `fedhe objective list`
/// prints them: the benchmarks first, then the federations.
pub fn list() -> Vec<TaskInfo> {
    let mut out: Vec<TaskInfo> = (1..=cec2005::COUNT)
        .map(|n| TaskInfo {
            name: format!("{}{n}", benchmarks::CEC2005_PREFIX),
            dimensions: cec2005::DIMENSIONS.to_vec(),
            bounds: vec![cec2005::search_bounds_of(n)],
            optimum: Some(cec2005::bias_of(n).expect("1..=COUNT has a bias")),
            sense: Sense::Minimise,
            clients: None,
            description: format!("CEC-2005 F{n}, shared by every client"),
        })
        .collect();
    let one_d = |name: &str, optimum, sense, clients, description: &str| TaskInfo {
        name: name.to_string(),
        dimensions: vec![1],
        bounds: vec![(0.0, 1.0)],
        optimum,
        sense,
        clients,
        description: description.to_string(),
    };
    out.push(one_d(
        benchmarks::GARLAND,
        Some(x_armed::garland_max()),
        Sense::Maximise,
        None,
        "Garland (paper 003), shared by every client",
    ));
    out.push(one_d(
        benchmarks::DOUBLE_SINE,
        Some(0.0),
        Sense::Maximise,
        None,
        "DoubleSine (paper 003), shared by every client",
    ));
    out.push(one_d(
        GP_SAMPLE,
        Some(1.0),
        Sense::Maximise,
        None,
        "a GP sample, each client's copy perturbed by ±0.02 (paper 000; also gp-sample-<seed>)",
    ));
    out.push(one_d(
        KERNEL_SUM_SE,
        None,
        Sense::Maximise,
        None,
        "a sum of 100 SE kernels drawn per seed, the optimum its grid maximum (paper 001)",
    ));
    out.push(one_d(
        KERNEL_SUM_MATERN,
        None,
        Sense::Maximise,
        None,
        "a sum of 100 Matérn-5/2 kernels drawn per seed, the optimum its grid maximum (paper 001)",
    ));
    out.push(one_d(
        seir::TASK_NAME,
        None,
        Sense::Minimise,
        Some(seir::REGIONS),
        "percent infected in 180 days at a fractional vaccine dose, one SEIR region per client (paper 003)",
    ));
    out.extend(crate::mixed::NAMES.iter().map(|name| {
        let task = crate::mixed::task(name, crate::mixed::dim_of(name).unwrap_or(0))
            .and_then(Result::ok)
            .expect("every mixed benchmark builds");
        let space = task.space().expect("a mixed benchmark has a space");
        TaskInfo {
            name: name.to_string(),
            dimensions: vec![space.dim()],
            bounds: vec![(0.0, 1.0)],
            optimum: Some(task.optimum()),
            sense: Sense::Minimise,
            clients: None,
            description: format!(
                "a mixed benchmark (CoCaBO, ICML 2020) on a typed space: {}",
                space.describe()
            ),
        }
    }));
    #[cfg(feature = "svm")]
    out.extend(crate::svm::TASKS.iter().map(|spec| TaskInfo {
        name: spec.name.to_string(),
        dimensions: vec![crate::svm::SvmHyperParams::DIM],
        bounds: vec![
            crate::svm::SvmHyperParams::LOG10_C,
            crate::svm::SvmHyperParams::LOG10_GAMMA,
        ],
        optimum: None,
        sense: Sense::Minimise,
        clients: Some(spec.clients()),
        description: format!("{} (log10 C, log10 γ of an RBF SVM)", spec.description),
    }));
    #[cfg(feature = "svm")]
    out.extend(crate::svm::TASKS.iter().map(|spec| {
        let space = crate::svm::mixed_space();
        TaskInfo {
            name: format!("{}{}", spec.name, crate::svm::MIXED_SUFFIX),
            dimensions: vec![space.dim()],
            bounds: vec![(0.0, 1.0)],
            optimum: None,
            sense: Sense::Minimise,
            clients: Some(spec.clients()),
            description: format!(
                "{} on a typed space: {}",
                spec.description,
                space.describe()
            ),
        }
    }));
    out
}

/// What [`list`] says about `name`, or `None` for a name the registry does
/// not accept; `gp-sample-<seed>` is described as `gp-sample`.
pub fn info(name: &str) -> Option<TaskInfo> {
    let listed = if PerturbedGpSample::seed_of(name).is_some() {
        GP_SAMPLE
    } else {
        name
    };
    list().into_iter().find(|i| i.name == listed)
}

/// The task called `name` at dimension `dim`, for trial `seed` (only the
/// kernel sums draw a new function per trial; `gp-sample-<seed>` takes its
/// seed from the name; every other task ignores `seed`).
pub fn by_name(name: &str, dim: usize, seed: u64) -> Result<Task, TaskError> {
    let one_d = |what: &str| {
        if dim == 1 {
            Ok(())
        } else {
            Err(crate::error::config(
                "dim",
                format!("{name} {what}, got dim = {dim}"),
            ))
        }
    };
    if name == seir::TASK_NAME {
        one_d("tunes one dose")?;
        return Ok(Task::per_client(
            name,
            1,
            Sense::Minimise,
            None,
            Arc::new(seir::CovidRegions::new()),
        ));
    }
    if let Some(function_seed) = PerturbedGpSample::seed_of(name) {
        one_d("is one-dimensional")?;
        return Ok(Task::per_client(
            name,
            1,
            Sense::Maximise,
            Some(1.0),
            Arc::new(PerturbedGpSample::new(function_seed)?),
        ));
    }
    if let Some(task) = kernel_sum::kernel_sum_task(name, seed) {
        return match dim {
            1 => Ok(task),
            _ => Err(crate::error::config(
                "dim",
                format!("{name} is one-dimensional"),
            )),
        };
    }
    if let Some(task) = crate::mixed::task(name, dim) {
        return task;
    }
    #[cfg(feature = "svm")]
    if crate::svm::is_task(name) {
        return crate::svm::task(name, dim);
    }
    let objective = benchmark(name, dim)?;
    let info = info(name).expect("every benchmark is listed");
    let bounds = objective.search_bounds();
    Ok(Task::shared(
        name,
        objective,
        bounds,
        info.sense,
        info.optimum,
    ))
}

/// The benchmark `name` at dimension `dim` alone, to evaluate in its own box
/// (`fedhe objective eval`); a name of another family is refused, since its
/// clients do not share one function.
pub fn benchmark(name: &str, dim: usize) -> Result<Objective, TaskError> {
    match Objective::by_name(name, dim) {
        Some(objective) => objective,
        None if info(name).is_some() => Err(crate::error::config(
            "function",
            format!("{name} has an objective per client, not one function to evaluate"),
        )),
        None => Err(unknown(name)),
    }
}

/// The error for a name no family accepts, listing the names there are.
fn unknown(name: &str) -> TaskError {
    TaskError::UnknownTask {
        name: name.to_string(),
        known: list()
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Every listed name builds at its first dimension, with the listed sense.
    #[test]
    fn every_listed_name_resolves_with_its_sense() {
        let all = list();
        for name in ["covid-seir", "kernel-sum-se", "gp-sample", "garland"] {
            assert!(all.iter().any(|i| i.name == name), "{name}");
        }
        #[cfg(feature = "svm")]
        for name in ["pima-svm", "pima-svm-mixed"] {
            assert!(all.iter().any(|i| i.name == name), "{name}");
        }
        for i in all {
            // The SVM tasks parse their data; one of each kind is enough here.
            if i.clients.is_some()
                && i.name != seir::TASK_NAME
                && i.name != "pima-svm"
                && i.name != "pima-svm-mixed"
            {
                continue;
            }
            let t = by_name(&i.name, i.dimensions[0], 0).unwrap();
            assert_eq!(t.sense(), i.sense, "{}", i.name);
            assert_eq!(t.dim(), i.dimensions[0]);
            // A seeded federation hashes its clients: any number (usize::MAX).
            let clients = t.clients().filter(|&n| n != usize::MAX);
            assert_eq!(clients, i.clients, "{}", i.name);
        }
        assert_eq!(info("gp-sample-7").unwrap().name, GP_SAMPLE);
        assert!(info("sphere").is_none());
    }

    /// The listed box is the one a task searches (its unit cube's corners),
    /// so a peer that reads `fedhe objective list` searches what fedhe's
    /// agents search; F7's holds its optimum.
    #[test]
    fn the_listed_bounds_are_the_searched_box() {
        for i in list()
            .into_iter()
            .filter(|i| i.name.starts_with("cec2005-"))
        {
            let t = by_name(&i.name, 10, 0).unwrap();
            let (lo, hi) = i.bounds[0];
            assert_eq!(t.to_domain(&[0.0; 10]), vec![lo; 10], "{}", i.name);
            assert_eq!(t.to_domain(&[1.0; 10]), vec![hi; 10], "{}", i.name);
        }
        let f7 = info("cec2005-f7").unwrap().bounds[0];
        assert_eq!(f7, (-600.0, 600.0));
    }

    #[test]
    fn unknown_names_and_wrong_dimensions_are_refused() {
        for name in ["cec2005-f21", "cec2005-f99", "sphere"] {
            assert!(matches!(
                by_name(name, 10, 0),
                Err(TaskError::UnknownTask { .. })
            ));
        }
        assert!(by_name("garland", 2, 0).is_err());
        assert!(by_name("cec2005-f1", 3, 0).is_err());
        assert!(by_name("kernel-sum-se", 2, 0).is_err());
        assert!(by_name("covid-seir", 2, 0).is_err());
        assert!(by_name("gp-sample-3", 2, 0).is_err());
        assert!(benchmark("covid-seir", 1).is_err());
        assert!(benchmark("cec2005-f1", 2).is_ok());
    }

    #[test]
    fn kernel_sums_are_maximised_and_drawn_per_seed() {
        let a = by_name("kernel-sum-se", 1, 1).unwrap();
        let b = by_name("kernel-sum-se", 1, 2).unwrap();
        assert!(a.is_maximised());
        assert_ne!(a.optimum(), b.optimum());
    }

    #[test]
    fn unit_cube_maps_to_the_box_and_the_optimum_value_is_the_bias() {
        let t = by_name("cec2005-f1", 10, 0).unwrap();
        assert_eq!(t.to_domain(&[0.0; 10]), vec![-100.0; 10]);
        assert_eq!(t.to_domain(&[1.0; 10]), vec![100.0; 10]);
        assert_eq!(t.optimum(), -450.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let e = t.evaluate(0, &[0.5; 10], &mut rng).unwrap();
        assert_eq!(e.observed, e.noise_free);
        assert!(t.better(-1.0, 0.0) && t.utility(3.0) == -3.0);
        assert!(by_name("cec2005-f99", 10, 0).is_err());
    }

    #[test]
    fn noisy_functions_observe_noise_but_report_the_clean_value() {
        let t = by_name("cec2005-f4", 10, 0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let e = t.evaluate(0, &[0.3; 10], &mut rng).unwrap();
        assert_ne!(e.observed, e.noise_free);
        let clean = by_name("cec2005-f4", 10, 0).unwrap();
        let again = clean.evaluate(3, &[0.3; 10], &mut rng).unwrap();
        assert_eq!(again.noise_free, e.noise_free);
    }
}
