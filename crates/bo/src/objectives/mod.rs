//! Benchmark objectives and the name registry the CLI uses.
//!
//! CEC-2005 functions are minimisation problems (minimum = bias); Garland and
//! DoubleSine are maximisation problems; [`ObjectiveInfo::sense`] says which.

pub mod cec2005;
pub mod gp_sample;
pub mod synthetic;

use crate::BoError;
use cec2005::Cec2005;
use nalgebra::DMatrix;

/// Copies `rows` of `x` into a new matrix.
pub fn select_rows(x: &DMatrix<f64>, rows: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
}

/// Whether an objective's optimum is its minimum or its maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sense {
    /// The optimum is the minimum.
    Minimise,
    /// The optimum is the maximum.
    Maximise,
}

impl Sense {
    /// `"minimise"` or `"maximise"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Sense::Minimise => "minimise",
            Sense::Maximise => "maximise",
        }
    }
}

/// What `fedhe objective list` prints about a function.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveInfo {
    /// The name `fedhe objective eval --function` takes.
    pub name: String,
    /// The dimensions it is defined for.
    pub dimensions: Vec<usize>,
    /// The search range `[lo, hi]` in every coordinate.
    pub bounds: (f64, f64),
    /// The optimum value.
    pub optimum_value: f64,
    /// Whether the optimum is a minimum or a maximum.
    pub sense: Sense,
}

/// Every named objective.
pub fn list() -> Vec<ObjectiveInfo> {
    let mut out: Vec<ObjectiveInfo> = (1..=cec2005::COUNT)
        .map(|n| ObjectiveInfo {
            name: format!("cec2005-f{n}"),
            dimensions: cec2005::DIMENSIONS.to_vec(),
            bounds: cec2005::bounds_of(n),
            optimum_value: cec2005::bias_of(n).expect("1..=COUNT has a bias"),
            sense: Sense::Minimise,
        })
        .collect();
    out.push(ObjectiveInfo {
        name: "garland".into(),
        dimensions: vec![1],
        bounds: (0.0, 1.0),
        optimum_value: synthetic::garland_max(),
        sense: Sense::Maximise,
    });
    out.push(ObjectiveInfo {
        name: "doublesine".into(),
        dimensions: vec![1],
        bounds: (0.0, 1.0),
        optimum_value: 0.0,
        sense: Sense::Maximise,
    });
    out
}

/// A named objective at a dimension, ready to evaluate (noise-free).
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
    /// The objective called `name` (see [`list`]) at dimension `dim`.
    pub fn by_name(name: &str, dim: usize) -> Result<Self, BoError> {
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
            "garland" => one_d(Objective::Garland),
            "doublesine" => one_d(Objective::DoubleSine),
            _ => {
                let number = name
                    .strip_prefix("cec2005-f")
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|n| (1..=cec2005::COUNT).contains(n))
                    .ok_or_else(|| BoError::UnknownFunction(name.to_string()))?;
                Ok(Objective::Cec2005(Box::new(Cec2005::new(number, dim)?)))
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

    /// The noise-free value at `x`.
    pub fn evaluate(&self, x: &[f64]) -> Result<f64, BoError> {
        match self {
            Objective::Cec2005(f) => f.evaluate(x),
            _ => {
                if x.len() != 1 {
                    return Err(BoError::Dimension {
                        what: "point",
                        expected: 1,
                        got: x.len(),
                    });
                }
                if !x[0].is_finite() {
                    return Err(BoError::NonFinite { what: "point" });
                }
                Ok(match self {
                    Objective::Garland => synthetic::garland(x[0]),
                    _ => synthetic::double_sine(x[0]),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_resolve() {
        assert_eq!(list().len(), 22);
        for info in list() {
            let dim = info.dimensions[0];
            let o = Objective::by_name(&info.name, dim).unwrap();
            assert_eq!(o.dim(), dim);
        }
        assert!(matches!(
            Objective::by_name("cec2005-f21", 10),
            Err(BoError::UnknownFunction(_))
        ));
        assert!(matches!(
            Objective::by_name("sphere", 10),
            Err(BoError::UnknownFunction(_))
        ));
        assert!(Objective::by_name("garland", 2).is_err());
        assert!(Objective::by_name("cec2005-f1", 3).is_err());
    }
}
