//! One institution's private data and its objective: the validation error of
//! a support vector machine (RBF, polynomial or linear kernel) it trains on
//! its own training split.

use super::data::DataSet;
use crate::TaskError;
use linfa::prelude::*;
use linfa_svm::Svm;
use ndarray::{Array1, Array2};

/// The kernel of the SVM, as scikit-learn's `SVC` names and defines them
/// (with `coef0 = 1` for the polynomial).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SvmKernel {
    /// `k(x, x') = exp(−γ‖x − x'‖²)`.
    Rbf,
    /// `k(x, x') = (γ⟨x, x'⟩ + 1)^degree`.
    Polynomial {
        /// The degree, at least 1.
        degree: u32,
    },
    /// `k(x, x') = ⟨x, x'⟩` (γ unused).
    Linear,
}

/// The hyper-parameters an institution tunes. The `*-svm` tasks search the
/// RBF kernel's `(C, γ)` on the unit square ([`SvmHyperParams::from_unit`]):
/// `log10 C = −2 + 5·u_0` (C ∈ [10⁻², 10³]) and `log10 γ = −4 + 5·u_1`
/// (γ ∈ [10⁻⁴, 10], for features standardised to unit variance); the
/// `*-svm-mixed` tasks search the kernel too, on a typed space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SvmHyperParams {
    /// The kernel.
    pub kernel: SvmKernel,
    /// The box constraint C (the same for both classes).
    pub c: f64,
    /// The kernel's γ (the RBF's width, the polynomial's scale).
    pub gamma: f64,
}

impl SvmHyperParams {
    /// The range of `log10 C`.
    pub const LOG10_C: (f64, f64) = (-2.0, 3.0);
    /// The range of `log10 γ`.
    pub const LOG10_GAMMA: (f64, f64) = (-4.0, 1.0);
    /// The dimension of the search space.
    pub const DIM: usize = 2;

    /// The hyper-parameters at a point of the unit square (clamped into it).
    pub fn from_unit(unit: &[f64]) -> Self {
        let at = |u: f64, (lo, hi): (f64, f64)| 10f64.powf(lo + (hi - lo) * u.clamp(0.0, 1.0));
        Self {
            kernel: SvmKernel::Rbf,
            c: at(unit[0], Self::LOG10_C),
            gamma: at(unit[1], Self::LOG10_GAMMA),
        }
    }
}

impl SvmKernel {
    /// The kernel's name in the `*-svm-mixed` tasks' space (scikit-learn's).
    pub fn name(&self) -> &'static str {
        match self {
            SvmKernel::Rbf => "rbf",
            SvmKernel::Polynomial { .. } => "poly",
            SvmKernel::Linear => "linear",
        }
    }
}

/// The stopping tolerance of the SMO solver (libsvm's default; linfa's own
/// default of 10⁻⁷ makes large-C fits slow for no change in the error).
const SMO_TOLERANCE: f64 = 1e-3;

/// One client's training and validation data, standardised with the mean and
/// standard deviation of its own training split (computed over the values
/// present); a missing value is imputed by that mean, i.e. becomes 0.
#[derive(Debug, Clone)]
pub struct ClientData {
    train_x: Array2<f64>,
    train_y: Array1<bool>,
    validation_x: Array2<f64>,
    validation_y: Array1<bool>,
}

impl ClientData {
    /// The client whose rows are `train` and `validation` of `data`.
    pub fn new(data: &DataSet, train: &[usize], validation: &[usize]) -> Self {
        let d = data.feature_names.len();
        let mut mean = vec![0.0; d];
        let mut scale = vec![1.0; d];
        for j in 0..d {
            let present: Vec<f64> = train
                .iter()
                .map(|&r| data.features[r][j])
                .filter(|v| !v.is_nan())
                .collect();
            if present.is_empty() {
                continue;
            }
            let m = present.iter().sum::<f64>() / present.len() as f64;
            let var = present.iter().map(|v| (v - m).powi(2)).sum::<f64>() / present.len() as f64;
            mean[j] = m;
            // A constant column (e.g. the split key) stays 0 rather than dividing by 0.
            scale[j] = if var > 1e-24 { var.sqrt() } else { 1.0 };
        }
        let matrix = |rows: &[usize]| {
            Array2::from_shape_fn((rows.len(), d), |(i, j)| {
                let v = data.features[rows[i]][j];
                if v.is_nan() {
                    0.0
                } else {
                    (v - mean[j]) / scale[j]
                }
            })
        };
        let labels = |rows: &[usize]| {
            rows.iter()
                .map(|&r| data.labels[r])
                .collect::<Array1<bool>>()
        };
        Self {
            train_x: matrix(train),
            train_y: labels(train),
            validation_x: matrix(validation),
            validation_y: labels(validation),
        }
    }

    /// Rows in the training split.
    pub fn train_rows(&self) -> usize {
        self.train_y.len()
    }

    /// Rows in the validation split.
    pub fn validation_rows(&self) -> usize {
        self.validation_y.len()
    }

    /// The standardised training features (for checks).
    pub fn train_features(&self) -> &Array2<f64> {
        &self.train_x
    }

    /// The training labels (for checks).
    pub fn train_labels(&self) -> &Array1<bool> {
        &self.train_y
    }

    /// The standardised validation features (for checks).
    pub fn validation_features(&self) -> &Array2<f64> {
        &self.validation_x
    }

    /// The validation labels (for checks).
    pub fn validation_labels(&self) -> &Array1<bool> {
        &self.validation_y
    }

    /// The validation error, the fraction of validation rows misclassified by
    /// a C-SVM with `hp`'s kernel trained on the training split (linfa-svm,
    /// SMO with tolerance 10⁻³, no shrinking). In [0, 1]. A training split
    /// with one class only predicts that class.
    pub fn validation_error(&self, client: usize, hp: SvmHyperParams) -> Result<f64, TaskError> {
        let positives = self.train_y.iter().filter(|&&y| y).count();
        let predictions: Array1<bool> = if positives == 0 || positives == self.train_rows() {
            Array1::from_elem(self.validation_rows(), positives > 0)
        } else {
            let params = Svm::<f64, bool>::params()
                .pos_neg_weights(hp.c, hp.c)
                .eps(SMO_TOLERANCE)
                // linfa-svm 0.8.1's shrinking overflows a usize in `do_shrinking`
                // (debug builds panic), so it stays off.
                .shrinking(false);
            let training = |e: linfa_svm::SvmError| TaskError::Training {
                client,
                reason: e.to_string(),
            };
            match hp.kernel {
                SvmKernel::Rbf => {
                    let dataset = DatasetBase::new(self.train_x.view(), self.train_y.view());
                    // linfa's Gaussian(eps) kernel is exp(−‖x − x'‖²/eps), so eps = 1/γ.
                    let model = params
                        .gaussian_kernel(1.0 / hp.gamma)
                        .fit(&dataset)
                        .map_err(training)?;
                    model.predict(&self.validation_x)
                }
                SvmKernel::Polynomial { degree } => {
                    // linfa's Polynomial(c, d) is (⟨x, x'⟩ + c)^d: on features
                    // scaled by √γ with c = 1 it is (γ⟨x, x'⟩ + 1)^d.
                    let scale = hp.gamma.sqrt();
                    let train = &self.train_x * scale;
                    let dataset = DatasetBase::new(train.view(), self.train_y.view());
                    let model = params
                        .polynomial_kernel(1.0, f64::from(degree))
                        .fit(&dataset)
                        .map_err(training)?;
                    model.predict(&(&self.validation_x * scale))
                }
                SvmKernel::Linear => {
                    let dataset = DatasetBase::new(self.train_x.view(), self.train_y.view());
                    let model = params.linear_kernel().fit(&dataset).map_err(training)?;
                    model.predict(&self.validation_x)
                }
            }
        };
        let wrong = predictions
            .iter()
            .zip(self.validation_y.iter())
            .filter(|(p, y)| p != y)
            .count();
        Ok(wrong as f64 / self.validation_rows().max(1) as f64)
    }
}
