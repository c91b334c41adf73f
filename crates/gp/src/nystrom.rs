//! The Nyström embedding of paper 001, Algorithm 4 (after Calandriello et al. 2019).
//!
//! A dictionary `𝒟` is drawn from the evaluated points by including each `x_i`
//! independently with probability `min(q σ̃²(x_i), 1)` (posterior-variance
//! sampling), and the finite feature map is `φ̃(x) = (K_𝒟^{1/2})⁺ k_𝒟(x)`.
//! (The extracted text of line 7 is garbled; this is the map for which
//! `φ̃(x)ᵀφ̃(y) = k_𝒟(x)ᵀ K_𝒟⁺ k_𝒟(y)`, the Nyström approximation of `k`.)
//! With `K_𝒟 = U Λ Uᵀ`, `(K_𝒟^{1/2})⁺ = U Λ^{−1/2}₊ Uᵀ`, where eigenvalues below
//! a relative tolerance are treated as zero (the pseudo-inverse).

use crate::error::check_positive;
use crate::kernels::{rows, Kernel};
use crate::linalg::select_rows;
use crate::GpError;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;

/// Eigenvalues below this fraction of the largest are dropped in the pseudo-inverse.
const RELATIVE_EIGEN_TOL: f64 = 1e-10;

/// A Nyström feature map over a dictionary.
#[derive(Debug, Clone)]
pub struct NystromEmbedding<K: Kernel> {
    kernel: K,
    dictionary: DMatrix<f64>,
    /// `(K_𝒟^{1/2})⁺`, `m × m`.
    transform: DMatrix<f64>,
}

/// Draws the dictionary indices: `x_i` is kept with probability
/// `min(q σ̃²(x_i), 1)` (Alg. 4, lines 3-6).
pub fn sample_dictionary<R: Rng + ?Sized>(
    variances: &[f64],
    q: f64,
    rng: &mut R,
) -> Result<Vec<usize>, GpError> {
    check_positive("q", q)?;
    crate::error::check_finite("posterior variances", variances)?;
    Ok(variances
        .iter()
        .enumerate()
        .filter(|(_, v)| rng.gen::<f64>() < (q * v.max(0.0)).min(1.0))
        .map(|(i, _)| i)
        .collect())
}

impl<K: Kernel> NystromEmbedding<K> {
    /// The embedding over the rows of `dictionary` (Alg. 4, line 7).
    pub fn new(kernel: K, dictionary: DMatrix<f64>) -> Result<Self, GpError> {
        if dictionary.nrows() == 0 {
            return Err(GpError::Empty {
                what: "Nyström dictionary",
            });
        }
        crate::exact::validate_test(kernel.dim(), &dictionary)?;
        let eig = SymmetricEigen::new(kernel.gram(&dictionary));
        let largest = eig.eigenvalues.max();
        let inv_sqrt = eig.eigenvalues.map(|l| {
            if l > RELATIVE_EIGEN_TOL * largest {
                1.0 / l.sqrt()
            } else {
                0.0
            }
        });
        let u = &eig.eigenvectors;
        let transform = u * DMatrix::from_diagonal(&inv_sqrt) * u.transpose();
        Ok(Self {
            kernel,
            dictionary,
            transform,
        })
    }

    /// Samples the dictionary from `points` by posterior variance and builds the embedding.
    pub fn from_variance_sampling<R: Rng + ?Sized>(
        kernel: K,
        points: &DMatrix<f64>,
        variances: &[f64],
        q: f64,
        rng: &mut R,
    ) -> Result<Self, GpError> {
        if variances.len() != points.nrows() {
            return Err(GpError::Dimension {
                what: "variances vs points",
                expected: points.nrows(),
                got: variances.len(),
            });
        }
        let idx = sample_dictionary(variances, q, rng)?;
        Self::new(kernel, select_rows(points, &idx))
    }

    /// The dictionary size `m`.
    pub fn len(&self) -> usize {
        self.dictionary.nrows()
    }

    /// Always false (the dictionary is never empty).
    pub fn is_empty(&self) -> bool {
        self.dictionary.nrows() == 0
    }

    /// The dictionary points.
    pub fn dictionary(&self) -> &DMatrix<f64> {
        &self.dictionary
    }

    /// `φ̃(x) = (K_𝒟^{1/2})⁺ k_𝒟(x)`, length `m`.
    pub fn embed(&self, x: &[f64]) -> Result<DVector<f64>, GpError> {
        let xs = DMatrix::from_row_slice(1, x.len(), x);
        crate::exact::validate_test(self.kernel.dim(), &xs)?;
        let d = rows(&self.dictionary);
        let k = DVector::from_fn(d.len(), |i, _| self.kernel.eval(&d[i], x));
        Ok(&self.transform * k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{KernelParams, SquaredExponential};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn embedding_is_exact_on_the_dictionary() {
        // On dictionary points the Nyström approximation reproduces k exactly.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let k = SquaredExponential::new(KernelParams::isotropic(2, 0.3, 1.2).unwrap());
        let x = DMatrix::from_fn(8, 2, |_, _| rng.gen_range(0.0..1.0));
        let emb = NystromEmbedding::new(k.clone(), x.clone()).unwrap();
        let r = rows(&x);
        for i in 0..8 {
            for j in 0..8 {
                let approx = emb.embed(&r[i]).unwrap().dot(&emb.embed(&r[j]).unwrap());
                assert!((approx - k.eval(&r[i], &r[j])).abs() < 1e-8);
            }
        }
        // Away from it, φ̃ᵀφ̃ = k_𝒟ᵀ K_𝒟⁻¹ k_𝒟 ≤ k(x, x) (a projection).
        let p = [0.45, 0.55];
        let e = emb.embed(&p).unwrap();
        assert!(e.dot(&e) <= k.eval(&p, &p) + 1e-12);
    }

    #[test]
    fn duplicate_dictionary_points_use_the_pseudo_inverse() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.5, 1.0).unwrap());
        let x = DMatrix::from_row_slice(3, 1, &[0.2, 0.2, 0.7]);
        let emb = NystromEmbedding::new(k.clone(), x).unwrap();
        let e = emb.embed(&[0.2]).unwrap();
        assert!((e.dot(&e) - 1.0).abs() < 1e-8);
        let f = emb.embed(&[0.7]).unwrap();
        assert!((e.dot(&f) - k.eval(&[0.2], &[0.7])).abs() < 1e-8);
    }

    #[test]
    fn dictionary_inclusion_follows_q_times_variance() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        // q σ² = 0.25 for the first half, ≥ 1 (always kept) for the second.
        let variances: Vec<f64> = (0..4000)
            .map(|i| if i < 2000 { 0.05 } else { 0.5 })
            .collect();
        let idx = sample_dictionary(&variances, 5.0, &mut rng).unwrap();
        let low = idx.iter().filter(|&&i| i < 2000).count();
        assert_eq!(idx.len() - low, 2000);
        // Binomial(2000, 0.25): mean 500, sd ≈ 19.4.
        assert!((low as f64 - 500.0).abs() < 100.0, "{low}");
        assert!(sample_dictionary(&variances, 0.0, &mut rng).is_err());
    }
}
