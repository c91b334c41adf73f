//! Dense linear algebra shared by the GP models: Cholesky with jitter escalation.

use crate::GpError;
use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// Relative jitters tried in turn, as multiples of the mean diagonal entry.
///
/// Zero first, so a well-conditioned matrix is factorised exactly (the dPITC and
/// exact-GP identities are tested to 1e-8 and must not be perturbed); then the
/// GPyTorch-style escalation by factors of ten up to 1e-4.
const RELATIVE_JITTERS: [f64; 8] = [0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-6, 1e-4];

/// A Cholesky factor `L` with `A + jitter·I = L Lᵀ`.
#[derive(Debug, Clone)]
pub struct JitteredCholesky {
    /// The factorisation.
    pub factor: Cholesky<f64, Dyn>,
    /// The absolute jitter that was added to the diagonal (0 if none was needed).
    pub jitter: f64,
}

impl JitteredCholesky {
    /// Factorises the symmetric matrix `a`, adding the smallest jitter from the
    /// escalation schedule that makes it positive definite.
    pub fn new(a: &DMatrix<f64>) -> Result<Self, GpError> {
        let n = a.nrows();
        if n == 0 {
            return Err(GpError::Empty {
                what: "covariance matrix",
            });
        }
        let mean_diag = (a.diagonal().sum() / n as f64).abs().max(f64::MIN_POSITIVE);
        let mut last = 0.0;
        for rel in RELATIVE_JITTERS {
            let jitter = rel * mean_diag;
            last = jitter;
            let mut m = a.clone();
            for i in 0..n {
                m[(i, i)] += jitter;
            }
            if let Some(factor) = Cholesky::new(m) {
                // nalgebra accepts tiny positive pivots that make solves explode;
                // require a pivot bounded away from zero relative to the diagonal.
                let min_pivot = factor.l_dirty().diagonal().min();
                if min_pivot > 1e-14 * mean_diag.sqrt() {
                    return Ok(Self { factor, jitter });
                }
            }
        }
        Err(GpError::NotPositiveDefinite { jitter: last })
    }

    /// The lower-triangular factor `L`.
    pub fn l(&self) -> DMatrix<f64> {
        self.factor.l()
    }

    /// Solves `(A + jitter·I) x = b`.
    pub fn solve(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        self.factor.solve(b)
    }

    /// Solves `(A + jitter·I) x = b` for a vector.
    pub fn solve_vec(&self, b: &DVector<f64>) -> DVector<f64> {
        self.factor.solve(b)
    }

    /// Solves `L x = b` (forward substitution).
    pub fn solve_lower(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        self.factor
            .l_dirty()
            .solve_lower_triangular(b)
            .expect("Cholesky factor has a non-zero diagonal")
    }

    /// `log det(A + jitter·I) = 2 Σ log L_ii`.
    pub fn log_det(&self) -> f64 {
        2.0 * self
            .factor
            .l_dirty()
            .diagonal()
            .iter()
            .map(|d| d.ln())
            .sum::<f64>()
    }
}

/// Copies `rows` of `x` (each a point) into a new matrix.
pub fn select_rows(x: &DMatrix<f64>, rows: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
}

/// One draw from `N(mean, cov)` (`cov` factorised with jitter escalation).
pub fn sample_gaussian<R: rand::Rng + ?Sized>(
    mean: DVector<f64>,
    cov: &DMatrix<f64>,
    rng: &mut R,
) -> Result<DVector<f64>, GpError> {
    use rand_distr::{Distribution, StandardNormal};
    let chol = JitteredCholesky::new(cov)?;
    let z = DVector::from_fn(mean.len(), |_, _| StandardNormal.sample(rng));
    Ok(mean + chol.factor.l_dirty().lower_triangle() * z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_conditioned_matrix_gets_no_jitter() {
        let a = DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 3.0]);
        let c = JitteredCholesky::new(&a).unwrap();
        assert_eq!(c.jitter, 0.0);
        // det = 12 - 4 = 8
        assert!((c.log_det() - 8f64.ln()).abs() < 1e-14);
    }

    #[test]
    fn singular_matrix_is_rescued_by_jitter() {
        // Rank one: [1 1; 1 1].
        let a = DMatrix::from_element(2, 2, 1.0);
        let c = JitteredCholesky::new(&a).unwrap();
        assert!(c.jitter > 0.0);
    }

    #[test]
    fn negative_definite_matrix_is_an_error() {
        let a = DMatrix::from_row_slice(2, 2, &[-1.0, 0.0, 0.0, -1.0]);
        assert!(matches!(
            JitteredCholesky::new(&a),
            Err(GpError::NotPositiveDefinite { .. })
        ));
    }
}
