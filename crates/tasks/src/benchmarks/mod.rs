//! The benchmark functions every client shares: CEC-2005 F1-F20 and the
//! X-armed-bandit functions Garland and DoubleSine.
//!
//! CEC-2005 functions are minimisation problems (minimum = bias); Garland and
//! DoubleSine are maximisation problems. The registry ([`crate::registry`])
//! records which, with their boxes and optima.

pub mod cec2005;
pub mod x_armed;

use crate::TaskError;
use cec2005::Cec2005;

/// The name of Garland ([`x_armed::garland`]).
pub const GARLAND: &str = "garland";
/// The name of DoubleSine ([`x_armed::double_sine`]).
pub const DOUBLE_SINE: &str = "doublesine";
/// The prefix of the CEC-2005 names, `cec2005-f1` … `cec2005-f20`.
pub const CEC2005_PREFIX: &str = "cec2005-f";

/// The CEC-2005 function number of `name`, if it names one.
pub fn cec2005_number(name: &str) -> Option<u8> {
    name.strip_prefix(CEC2005_PREFIX)
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|n| (1..=cec2005::COUNT).contains(n))
}

/// A named benchmark at a dimension, ready to evaluate (noise-free) in its
/// own box.
#[derive(Debug, Clone)]
pub enum Objective {
    /// A CEC-2005 function.
    Cec2005(Box<Cec2005>),
    /// Garland on `[0, 1]`.
    Garland,
    /// DoubleSine on `[0, 1]`.
    DoubleSine,
}

impl Objective {
    /// The benchmark called `name` at dimension `dim`; `None` when `name` is
    /// not a benchmark (the registry then tries its other families).
    pub fn by_name(name: &str, dim: usize) -> Option<Result<Self, TaskError>> {
        let one_d = |o: Objective| {
            if dim == 1 {
                Ok(o)
            } else {
                Err(crate::error::invalid(
                    "dimension",
                    format!("{name} is one-dimensional, got --dim {dim}"),
                ))
            }
        };
        match name {
            GARLAND => Some(one_d(Objective::Garland)),
            DOUBLE_SINE => Some(one_d(Objective::DoubleSine)),
            _ => {
                let number = cec2005_number(name)?;
                Some(Cec2005::new(number, dim).map(|f| Objective::Cec2005(Box::new(f))))
            }
        }
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        match self {
            Objective::Cec2005(f) => f.dim(),
            _ => 1,
        }
    }

    /// The box searched, the same in every coordinate: for CEC-2005 its
    /// search range (F7's contains the optimum, unlike its initialisation
    /// range), `[0, 1]` for the one-dimensional functions.
    pub fn search_bounds(&self) -> (f64, f64) {
        match self {
            Objective::Cec2005(f) => cec2005::search_bounds_of(f.number()),
            _ => (0.0, 1.0),
        }
    }

    /// The value observed at `x`: with the function's own noise drawn from
    /// `rng` (CEC-2005 F4 and F17, "with noise in fitness"), the noise-free
    /// value otherwise (no draw from `rng`).
    pub fn observe<R: rand::Rng + ?Sized>(&self, x: &[f64], rng: &mut R) -> Result<f64, TaskError> {
        match self {
            Objective::Cec2005(f) if f.is_noisy() => f.evaluate_noisy(x, rng),
            _ => self.evaluate(x),
        }
    }

    /// [`Self::observe`] at each of `points` in order, from one ChaCha8
    /// stream seeded by `seed` (the stream `fedhe simulate` draws an
    /// agent's noise from): what `fedhe objective eval --noise-seed` prints.
    pub fn observe_seeded(&self, points: &[Vec<f64>], seed: u64) -> Result<Vec<f64>, TaskError> {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        points.iter().map(|x| self.observe(x, &mut rng)).collect()
    }

    /// The noise-free value at `x`.
    pub fn evaluate(&self, x: &[f64]) -> Result<f64, TaskError> {
        match self {
            Objective::Cec2005(f) => f.evaluate(x),
            _ => {
                if x.len() != 1 {
                    return Err(fedhe_gp::GpError::Dimension {
                        what: "point",
                        expected: 1,
                        got: x.len(),
                    }
                    .into());
                }
                if !x[0].is_finite() {
                    return Err(fedhe_gp::GpError::NonFinite { what: "point" }.into());
                }
                Ok(match self {
                    Objective::Garland => x_armed::garland(x[0]),
                    _ => x_armed::double_sine(x[0]),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_names_resolve() {
        for n in 1..=cec2005::COUNT {
            for dim in cec2005::DIMENSIONS {
                let o = Objective::by_name(&format!("cec2005-f{n}"), dim)
                    .unwrap()
                    .unwrap();
                assert_eq!(o.dim(), dim);
            }
        }
        assert_eq!(Objective::by_name(GARLAND, 1).unwrap().unwrap().dim(), 1);
        assert!(Objective::by_name("cec2005-f21", 10).is_none());
        assert!(Objective::by_name("sphere", 10).is_none());
        assert!(Objective::by_name("garland", 2).unwrap().is_err());
        assert!(Objective::by_name("cec2005-f1", 3).unwrap().is_err());
    }
}
