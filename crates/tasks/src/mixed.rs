//! Synthetic benchmarks over mixed spaces (issue 46, item 6): continuous
//! inputs and categorical ones, each task carrying its own typed
//! [`Space`](crate::Space), shared by every client.
//!
//! From Ru, Alvi, Nguyen, Osborne and Roberts, "Bayesian Optimisation over
//! Multiple Continuous and Categorical Inputs" (CoCaBO, ICML 2020), as the
//! authors' code defines them (`testFunctions/syntheticFunctions.py`):
//!
//! - `func2c`: `x ∈ [−1, 1]²`, `h1 ∈ {0, 1, 2}`, `h2 ∈ {0, …, 4}`;
//!   `f = g_{h1}(2x) + g_{min(h2, 2)}(2x)` with `g0` = Rosenbrock / 300, `g1` =
//!   six-hump camel / 10, `g2` = Beale / 50 (choices 2–4 of `h2` are all
//!   Beale, as in the code). Minimum `2·c*/10 ≈ −0.2063` at `h = (1, 1)`,
//!   `2x = ±(0.0898, −0.7126)`, with `c* ≈ −1.0316` the camel's minimum.
//! - `func3c`: `func2c` plus `h3 ∈ {0, …, 3}` adding `5·g1`, `2·g0`, `2·g2` or
//!   `3·g2`. Minimum `7·c*/10 ≈ −0.7221` at `h = (1, 1, 0)`.
//! - `ackley5c` (the paper's Ackley-5C, as FM-kernel BO's and PWAS's code
//!   define it): `x ∈ [−1, 1]` and five categoricals of 17 choices, choice
//!   `h` standing for `−1 + h/8`; the 6-D Ackley function (`a = 20`,
//!   `b = 0.2`, `c = 2π`) of the six. Minimum 0 at `x = 0`, every `h = 8`.
//!
//! The authors' code adds uniform noise of at most 1e-6 to every value;
//! these are noise-free.

use crate::problem::{Evaluation, Problem, Sense};
use crate::space::{Space, SpaceSpec};
use crate::{Task, TaskError};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// CoCaBO's Func2C.
pub const FUNC2C: &str = "func2c";
/// CoCaBO's Func3C.
pub const FUNC3C: &str = "func3c";
/// Ackley-5C.
pub const ACKLEY5C: &str = "ackley5c";
/// Every name of this family.
pub const NAMES: [&str; 3] = [FUNC2C, FUNC3C, ACKLEY5C];

/// The six-hump camel's minimum, at `±(0.0898, −0.7126)` (Dixon and Szegő
/// 1978; the value to the digits of Surjanovic and Bingham's library).
const CAMEL_MIN: f64 = -1.031_628_453_489_877;

/// Rosenbrock / 300 (CoCaBO's `myrosenbrock`).
fn rosenbrock(x: [f64; 2]) -> f64 {
    let [a, b] = x;
    (100.0 * (b - a * a).powi(2) + (a - 1.0).powi(2)) / 300.0
}

/// Six-hump camel / 10 (CoCaBO's `mysixhumpcamp`).
fn camel(x: [f64; 2]) -> f64 {
    let [a, b] = x;
    let t1 = (4.0 - 2.1 * a * a + a.powi(4) / 3.0) * a * a;
    let t3 = (-4.0 + 4.0 * b * b) * b * b;
    (t1 + a * b + t3) / 10.0
}

/// Beale / 50 (CoCaBO's `mybeale`).
fn beale(x: [f64; 2]) -> f64 {
    let [a, b] = x;
    ((1.5 - a + a * b).powi(2)
        + (2.25 - a + a * b * b).powi(2)
        + (2.625 - a + a * b.powi(3)).powi(2))
        / 50.0
}

/// `g_h`: Rosenbrock, camel, Beale.
fn component(h: usize, x: [f64; 2]) -> f64 {
    match h {
        0 => rosenbrock(x),
        1 => camel(x),
        _ => beale(x),
    }
}

/// Func2C at `x ∈ [−1, 1]²`, `h = (h1, h2)`.
pub fn func2c(x: [f64; 2], h: [usize; 2]) -> f64 {
    let z = [2.0 * x[0], 2.0 * x[1]];
    component(h[0], z) + component(h[1].min(2), z)
}

/// Func3C at `x ∈ [−1, 1]²`, `h = (h1, h2, h3)`.
pub fn func3c(x: [f64; 2], h: [usize; 3]) -> f64 {
    let z = [2.0 * x[0], 2.0 * x[1]];
    let third = match h[2] {
        0 => 5.0 * camel(z),
        1 => 2.0 * rosenbrock(z),
        k => k as f64 * beale(z),
    };
    func2c(x, [h[0], h[1]]) + third
}

/// Ackley-5C at `x ∈ [−1, 1]`, `h ∈ {0, …, 16}⁵`.
pub fn ackley5c(x: f64, h: [usize; 5]) -> f64 {
    let mut z = [0.0; 6];
    z[0] = x;
    for (k, &c) in h.iter().enumerate() {
        z[k + 1] = -1.0 + c as f64 / 8.0;
    }
    let n = z.len() as f64;
    let square = z.iter().map(|v| v * v).sum::<f64>() / n;
    let cosine = z
        .iter()
        .map(|v| (2.0 * std::f64::consts::PI * v).cos())
        .sum::<f64>()
        / n;
    -20.0 * (-0.2 * square.sqrt()).exp() - cosine.exp() + 20.0 + std::f64::consts::E
}

/// The benchmark's space: the continuous inputs first, then the categoricals
/// (integer choices `0..k`, as the authors' code numbers them).
fn spec(name: &str) -> Option<SpaceSpec> {
    let float = |n: &str| serde_json::json!({"name": n, "type": "float", "low": -1.0, "high": 1.0});
    let cat = |n: String, k: usize| serde_json::json!({"name": n, "type": "categorical", "choices": (0..k).collect::<Vec<_>>()});
    let params = match name {
        FUNC2C => vec![
            float("x1"),
            float("x2"),
            cat("h1".into(), 3),
            cat("h2".into(), 5),
        ],
        FUNC3C => vec![
            float("x1"),
            float("x2"),
            cat("h1".into(), 3),
            cat("h2".into(), 5),
            cat("h3".into(), 4),
        ],
        ACKLEY5C => {
            let mut p = vec![float("x")];
            p.extend((1..=5).map(|k| cat(format!("h{k}"), 17)));
            p
        }
        _ => return None,
    };
    Some(serde_json::from_value(serde_json::json!({ "params": params })).expect("a valid space"))
}

/// The benchmark's optimum value.
fn optimum(name: &str) -> f64 {
    match name {
        FUNC2C => 2.0 * CAMEL_MIN / 10.0,
        FUNC3C => 7.0 * CAMEL_MIN / 10.0,
        _ => 0.0,
    }
}

/// One of the mixed benchmarks, every client evaluating the same function
/// of the named values its unit point decodes to.
#[derive(Debug)]
struct Mixed {
    name: &'static str,
    space: Arc<Space>,
}

impl Mixed {
    fn value(&self, unit: &[f64]) -> Result<f64, TaskError> {
        let v = self.space.decode(unit);
        let num = |k: &str| {
            v.get(k).and_then(|x| x.as_f64()).ok_or_else(|| {
                crate::error::invalid("point", format!("{} has no value for {k}", self.name))
            })
        };
        let cat = |k: &str| num(k).map(|c| c as usize);
        Ok(match self.name {
            FUNC2C => func2c([num("x1")?, num("x2")?], [cat("h1")?, cat("h2")?]),
            FUNC3C => func3c(
                [num("x1")?, num("x2")?],
                [cat("h1")?, cat("h2")?, cat("h3")?],
            ),
            _ => ackley5c(
                num("x")?,
                [cat("h1")?, cat("h2")?, cat("h3")?, cat("h4")?, cat("h5")?],
            ),
        })
    }
}

impl Problem for Mixed {
    fn clients(&self) -> usize {
        usize::MAX
    }

    fn evaluate(
        &self,
        _client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        self.value(unit).map(Evaluation::exact)
    }

    fn noise_free(
        &self,
        _client: usize,
        unit: &[f64],
        _rng: &mut ChaCha8Rng,
    ) -> Result<f64, TaskError> {
        self.value(unit)
    }
}

/// The dimension of the cube `name`'s space encodes to, if it is a mixed
/// benchmark.
pub fn dim_of(name: &str) -> Option<usize> {
    spec(name).map(|s| s.validate().expect("a valid space").dim())
}

/// The task `name` (`func2c`, `func3c`, `ackley5c`) searching its typed
/// space, if it is one of them; `dim` must be the space's encoded dimension.
pub fn task(name: &str, dim: usize) -> Option<Result<Task, TaskError>> {
    let name = NAMES.into_iter().find(|n| *n == name)?;
    let space = Arc::new(spec(name)?.validate().expect("a valid space"));
    if dim != space.dim() {
        return Some(Err(crate::error::config(
            "dim",
            format!(
                "{name} searches a typed space that encodes to {} coordinates, got dim = {dim}",
                space.dim()
            ),
        )));
    }
    let problem = Arc::new(Mixed {
        name,
        space: Arc::clone(&space),
    });
    Some(
        Task::per_client(
            name,
            space.dim(),
            Sense::Minimise,
            Some(optimum(name)),
            problem,
        )
        .with_space(space),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Values at hand-checked points, from the formulas of the authors' code
    /// (evaluated independently with Python/NumPy's `syntheticFunctions.py`
    /// definitions transcribed into `scripts/mixed_fixtures.py`).
    #[test]
    fn the_optima_are_where_the_papers_put_them() {
        let x = [0.089_842_0 / 2.0, -0.712_656_4 / 2.0];
        assert!((func2c(x, [1, 1]) - optimum(FUNC2C)).abs() < 1e-9);
        assert!((func3c(x, [1, 1, 0]) - optimum(FUNC3C)).abs() < 1e-9);
        assert!((optimum(FUNC2C) + 0.2063).abs() < 1e-4);
        assert!((optimum(FUNC3C) + 0.7221).abs() < 1e-4);
        assert!(ackley5c(0.0, [8; 5]).abs() < 1e-12);
        // Choices 2..=4 of h2 are one function (Beale), as in the code.
        assert_eq!(func2c([0.3, -0.2], [0, 2]), func2c([0.3, -0.2], [0, 4]));
        // No other combination beats the optimum on a grid of x.
        for i in 0..=40 {
            for j in 0..=40 {
                let x = [-1.0 + i as f64 / 20.0, -1.0 + j as f64 / 20.0];
                for h1 in 0..3 {
                    for h2 in 0..5 {
                        assert!(func2c(x, [h1, h2]) >= optimum(FUNC2C) - 1e-12);
                        for h3 in 0..4 {
                            assert!(func3c(x, [h1, h2, h3]) >= optimum(FUNC3C) - 1e-12);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_tasks_decode_their_space_and_refuse_another_dimension() {
        let t = task(FUNC2C, 10).unwrap().unwrap();
        assert_eq!(t.space().unwrap().dim(), 2 + 3 + 5);
        // x = (0.25, −0.5) at u = (0.625, 0.25); h1 = 2 (Beale), h2 = 0.
        let u = [0.625, 0.25, 0.0, 0.1, 0.9, 0.8, 0.0, 0.0, 0.0, 0.0];
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let v = t.evaluate(0, &t.canonical(u.to_vec()), &mut rng).unwrap();
        assert_eq!(v.observed, func2c([0.25, -0.5], [2, 0]));
        assert_eq!(dim_of(FUNC3C), Some(2 + 3 + 5 + 4));
        assert_eq!(dim_of(ACKLEY5C), Some(1 + 5 * 17));
        let e = task(FUNC3C, 2).unwrap().unwrap_err().to_string();
        assert!(e.contains("14 coordinates"), "{e}");
        assert!(task("func4c", 2).is_none());
    }
}
