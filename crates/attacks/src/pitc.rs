//! The public PITC model every attack evaluates: `k(S, x)` and the
//! conditional covariance `C(a, b) = k(a, b) − k(S,a)ᵀ Σ_SS⁻¹ k(S,b)`
//! (noise on the diagonal) of paper 004's blocks.

use fedhe_gp::kernels::Kernel;
use nalgebra::{DMatrix, DVector};

/// The kernel, noise variance and support set of a release, with `Σ_SS⁻¹`.
pub(crate) struct Pitc<'a, K: Kernel> {
    pub(crate) kernel: &'a K,
    pub(crate) noise_variance: f64,
    /// The support points as rows.
    pub(crate) srows: Vec<Vec<f64>>,
    /// `Σ_SS⁻¹`.
    pub(crate) sigma_ss_inv: DMatrix<f64>,
}

impl<'a, K: Kernel> Pitc<'a, K> {
    pub(crate) fn new(kernel: &'a K, noise_variance: f64, support: &DMatrix<f64>) -> Self {
        Self {
            kernel,
            noise_variance,
            srows: crate::rows_of(support),
            sigma_ss_inv: crate::sigma_ss_inv_of(kernel, support),
        }
    }

    /// `k(S, x)`.
    pub(crate) fn kvec(&self, x: &[f64]) -> DVector<f64> {
        DVector::from_fn(self.srows.len(), |i, _| self.kernel.eval(&self.srows[i], x))
    }

    /// `C(a, b)` given `k(S, a)` and `k(S, b)`; `same` adds the noise.
    pub(crate) fn cond(
        &self,
        a: &[f64],
        ka: &DVector<f64>,
        b: &[f64],
        kb: &DVector<f64>,
        same: bool,
    ) -> f64 {
        let mut c = self.kernel.eval(a, b) - ka.dot(&(&self.sigma_ss_inv * kb));
        if same {
            c += self.noise_variance;
        }
        c
    }
}
