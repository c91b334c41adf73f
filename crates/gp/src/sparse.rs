//! Distributed sparse GP: the dPITC approximation of paper 004, Appendix A
//! (eqs. 6-10), after Chen et al. (2012) and the PITC of Quiñonero-Candela &
//! Rasmussen (2005).
//!
//! # Derivation
//!
//! PITC replaces the training covariance by `Q_DD + Λ` with the Nyström term
//! `Q_DD = Σ_DS Σ_SS⁻¹ Σ_SD` and the block-diagonal correction
//! `Λ = blockdiag_i(Σ_{D_i D_i|S})`, one block per client, where (noise included)
//!
//! `Σ_{D_i D_i|S} = Σ_{D_i D_i} + σ_n² I − Σ_{D_i S} Σ_SS⁻¹ Σ_{S D_i}`.
//!
//! Its predictive at test points `U` (the PITC test conditional) is
//! `μ_U + Q_UD (Q_DD + Λ)⁻¹ (y − μ_D)` and `Σ_UU − Q_UD (Q_DD + Λ)⁻¹ Q_DU`.
//! The Woodbury identity turns the `n × n` inverse into an `|S| × |S|` one:
//!
//! `(Q_DD + Λ)⁻¹ = Λ⁻¹ − Λ⁻¹ Σ_DS K_SS⁻¹ Σ_SD Λ⁻¹`,  `K_SS = Σ_SS + Σ_SD Λ⁻¹ Σ_DS`,
//!
//! which gives eqs. (9)-(10) below. Because `Λ` is block diagonal,
//! `Σ_SD Λ⁻¹ Σ_DS = Σ_i Σ_{S D_i} Σ_{D_i D_i|S}⁻¹ Σ_{D_i S}` and likewise for
//! `Σ_SD Λ⁻¹ (y − μ_D)`: each client's term (eqs. 6-7) uses only its own data,
//! and the global summary (eq. 8) is their sum. That sum is what travels through
//! the encrypted-sum channel, packed by [`LocalSummary::pack`].

use crate::error::{check_finite, check_positive};
use crate::exact::{validate_test, PointPrediction};
use crate::kernels::Kernel;
use crate::linalg::JitteredCholesky;
use crate::GpError;
use nalgebra::{DMatrix, DVector};

/// The shared model of all clients: kernel, noise variance, constant prior mean
/// `μ` and the support set `S` (one point per row).
#[derive(Debug, Clone)]
pub struct Dpitc<K: Kernel> {
    kernel: K,
    noise_variance: f64,
    prior_mean: f64,
    support: DMatrix<f64>,
    sigma_ss: DMatrix<f64>,
    sigma_ss_chol: JitteredCholesky,
}

/// One client's local summary `L_i = (ṁ_S⁽ⁱ⁾, K̇_SS⁽ⁱ⁾)` (eqs. 6-7).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSummary {
    /// `ṁ_S⁽ⁱ⁾ = Σ_{S D_i} Σ_{D_i D_i|S}⁻¹ (y_{D_i} − μ_{D_i})`, length `|S|`.
    pub m_s: DVector<f64>,
    /// `K̇_SS⁽ⁱ⁾ = Σ_{S D_i} Σ_{D_i D_i|S}⁻¹ Σ_{D_i S}`, `|S| × |S|`, symmetric.
    pub k_ss: DMatrix<f64>,
}

/// One client's terms of the dPITC evidence: its local summary and the two
/// scalars the log marginal likelihood adds up over the clients
/// ([`Dpitc::log_marginal_likelihood`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LocalEvidence {
    /// The local summary (eqs. 6-7).
    pub summary: LocalSummary,
    /// `r_iᵀ Σ_{D_i D_i|S}⁻¹ r_i` with `r_i = y_{D_i} − μ`.
    pub quadratic: f64,
    /// `log det Σ_{D_i D_i|S}`.
    pub log_det: f64,
    /// `|D_i|`.
    pub points: usize,
}

/// One client's terms of the generalised-least-squares constant mean of the
/// dPITC model ([`Dpitc::gls_mean`]): `|S| + 2` numbers, summed over the
/// clients like the local summary.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalMeanTerms {
    /// `a_i = Σ_{S D_i} Σ_{D_i D_i|S}⁻¹ 1`, length `|S|`: the local summary's
    /// `ṁ_S` of the all-ones outputs.
    pub a_s: DVector<f64>,
    /// `b_i = 1ᵀ Σ_{D_i D_i|S}⁻¹ 1`.
    pub ones: f64,
    /// `c_i = 1ᵀ Σ_{D_i D_i|S}⁻¹ y_{D_i}`.
    pub outputs: f64,
}

impl LocalMeanTerms {
    /// The all-zero terms (a client without data contributes them).
    pub fn zeros(s: usize) -> Self {
        Self {
            a_s: DVector::zeros(s),
            ones: 0.0,
            outputs: 0.0,
        }
    }

    /// `a_i`, then `b_i`, then `c_i`: linear, so the sum of packed terms is
    /// the packed sum.
    pub fn pack(&self) -> Vec<f64> {
        let mut out: Vec<f64> = self.a_s.iter().copied().collect();
        out.extend([self.ones, self.outputs]);
        out
    }

    /// Inverse of [`LocalMeanTerms::pack`] for a support set of size `s`.
    pub fn unpack(s: usize, packed: &[f64]) -> Result<Self, GpError> {
        if packed.len() != s + 2 {
            return Err(GpError::Dimension {
                what: "packed mean terms length",
                expected: s + 2,
                got: packed.len(),
            });
        }
        check_finite("packed mean terms", packed)?;
        Ok(Self {
            a_s: DVector::from_column_slice(&packed[..s]),
            ones: packed[s],
            outputs: packed[s + 1],
        })
    }
}

/// The length of a packed summary for `s = |S|`: `s + s(s+1)/2`.
pub fn packed_len(s: usize) -> usize {
    s + s * (s + 1) / 2
}

impl LocalSummary {
    /// The all-zero summary (a client without data contributes it).
    pub fn zeros(s: usize) -> Self {
        Self {
            m_s: DVector::zeros(s),
            k_ss: DMatrix::zeros(s, s),
        }
    }

    /// Packs the summary as one vector: `ṁ_S`, then the upper triangle of `K̇_SS`
    /// row by row (`K_00, K_01, …, K_0s, K_11, …`). Packing is linear, so the
    /// element-wise sum of packed summaries is the packed sum (eq. 8).
    pub fn pack(&self) -> Vec<f64> {
        let s = self.m_s.len();
        let mut out = Vec::with_capacity(packed_len(s));
        out.extend(self.m_s.iter());
        for i in 0..s {
            for j in i..s {
                out.push(self.k_ss[(i, j)]);
            }
        }
        out
    }

    /// Inverse of [`LocalSummary::pack`] for a support set of size `s`.
    pub fn unpack(s: usize, packed: &[f64]) -> Result<Self, GpError> {
        if packed.len() != packed_len(s) {
            return Err(GpError::Dimension {
                what: "packed summary length",
                expected: packed_len(s),
                got: packed.len(),
            });
        }
        check_finite("packed summary", packed)?;
        let m_s = DVector::from_column_slice(&packed[..s]);
        let mut k_ss = DMatrix::zeros(s, s);
        let mut idx = s;
        for i in 0..s {
            for j in i..s {
                k_ss[(i, j)] = packed[idx];
                k_ss[(j, i)] = packed[idx];
                idx += 1;
            }
        }
        Ok(Self { m_s, k_ss })
    }

    /// The element-wise sum of summaries (what the channel computes).
    pub fn sum<'a>(s: usize, summaries: impl IntoIterator<Item = &'a LocalSummary>) -> Self {
        summaries.into_iter().fold(Self::zeros(s), |acc, l| Self {
            m_s: acc.m_s + &l.m_s,
            k_ss: acc.k_ss + &l.k_ss,
        })
    }
}

/// The global summary `G = (m_S, K_SS)` (eq. 8), factorised for prediction.
#[derive(Debug, Clone)]
pub struct GlobalSummary {
    /// `m_S = Σ_i ṁ_S⁽ⁱ⁾`.
    pub m_s: DVector<f64>,
    /// `K_SS = Σ_SS + Σ_i K̇_SS⁽ⁱ⁾`.
    pub k_ss: DMatrix<f64>,
    k_ss_chol: JitteredCholesky,
}

impl<K: Kernel> Dpitc<K> {
    /// The shared model; factorises `Σ_SS` once.
    pub fn new(
        kernel: K,
        noise_variance: f64,
        prior_mean: f64,
        support: DMatrix<f64>,
    ) -> Result<Self, GpError> {
        check_positive("noise variance", noise_variance)?;
        check_finite("prior mean", [prior_mean].iter())?;
        if support.nrows() == 0 {
            return Err(GpError::Empty {
                what: "support set",
            });
        }
        validate_test(kernel.dim(), &support)?;
        let sigma_ss = kernel.gram(&support);
        let sigma_ss_chol = JitteredCholesky::new(&sigma_ss)?;
        Ok(Self {
            kernel,
            noise_variance,
            prior_mean,
            support,
            sigma_ss,
            sigma_ss_chol,
        })
    }

    /// The support set size `|S|`.
    pub fn support_size(&self) -> usize {
        self.support.nrows()
    }

    /// The support set.
    pub fn support(&self) -> &DMatrix<f64> {
        &self.support
    }

    /// A client's local summary from its data `(x, y)` (eqs. 6-7).
    ///
    /// With `V = L_S⁻¹ Σ_{S D_i}` (`L_S L_Sᵀ = Σ_SS`), the conditional covariance is
    /// `C = Σ_{D_i D_i} + σ_n² I − VᵀV`; with `L_C L_Cᵀ = C` and `W = L_C⁻¹ Σ_{D_i S}`,
    /// `K̇_SS = WᵀW` and `ṁ_S = Wᵀ L_C⁻¹ (y − μ)`.
    pub fn local_summary(
        &self,
        x: &DMatrix<f64>,
        y: &DVector<f64>,
    ) -> Result<LocalSummary, GpError> {
        Ok(self.local_evidence(x, y)?.summary)
    }

    /// A client's local summary and its terms of the dPITC evidence, from its
    /// data `(x, y)`: with `L_C` and `r = L_C⁻¹ (y − μ)` as in
    /// [`Dpitc::local_summary`], `quadratic = rᵀr` and `log_det = 2 Σ log (L_C)_jj`.
    pub fn local_evidence(
        &self,
        x: &DMatrix<f64>,
        y: &DVector<f64>,
    ) -> Result<LocalEvidence, GpError> {
        if x.nrows() == 0 && y.is_empty() {
            return Ok(LocalEvidence {
                summary: LocalSummary::zeros(self.support_size()),
                quadratic: 0.0,
                log_det: 0.0,
                points: 0,
            });
        }
        crate::exact::validate_data(self.kernel.dim(), x, y, false)?;
        let (cond_chol, w) = self.conditional(x)?;
        let resid = y.map(|v| v - self.prior_mean);
        let r = cond_chol.solve_lower(&DMatrix::from_column_slice(
            resid.len(),
            1,
            resid.as_slice(),
        ));
        let k_ss = w.transpose() * &w;
        Ok(LocalEvidence {
            summary: LocalSummary {
                m_s: (w.transpose() * &r).column(0).into_owned(),
                k_ss: (&k_ss + k_ss.transpose()) * 0.5,
            },
            quadratic: r.norm_squared(),
            log_det: cond_chol.log_det(),
            points: x.nrows(),
        })
    }

    /// `L_C` with `L_C L_Cᵀ = Σ_{D_i D_i|S}` and `W = L_C⁻¹ Σ_{D_i S}` for a
    /// client's inputs `x` (see [`Dpitc::local_summary`]).
    fn conditional(&self, x: &DMatrix<f64>) -> Result<(JitteredCholesky, DMatrix<f64>), GpError> {
        let sigma_sd = self.kernel.cross(&self.support, x);
        let v = self.sigma_ss_chol.solve_lower(&sigma_sd);
        let mut cond = self.kernel.gram(x) - v.transpose() * &v;
        for i in 0..x.nrows() {
            cond[(i, i)] += self.noise_variance;
        }
        let cond_chol = JitteredCholesky::new(&cond)?;
        let w = cond_chol.solve_lower(&sigma_sd.transpose());
        Ok((cond_chol, w))
    }

    /// A client's terms of the GLS constant mean from its data `(x, y)`
    /// (outputs as they are, whatever this model's prior mean): with `L_C`
    /// and `W` as in [`Dpitc::local_summary`] and `u = L_C⁻¹ 1`,
    /// `a_i = Wᵀu`, `b_i = uᵀu` and `c_i = uᵀ L_C⁻¹ y`.
    pub fn local_mean_terms(
        &self,
        x: &DMatrix<f64>,
        y: &DVector<f64>,
    ) -> Result<LocalMeanTerms, GpError> {
        if x.nrows() == 0 && y.is_empty() {
            return Ok(LocalMeanTerms::zeros(self.support_size()));
        }
        crate::exact::validate_data(self.kernel.dim(), x, y, false)?;
        let (cond_chol, w) = self.conditional(x)?;
        let u = cond_chol.solve_lower(&DMatrix::from_element(x.nrows(), 1, 1.0));
        let r = cond_chol.solve_lower(&DMatrix::from_column_slice(y.len(), 1, y.as_slice()));
        Ok(LocalMeanTerms {
            a_s: (w.transpose() * &u).column(0).into_owned(),
            ones: u.norm_squared(),
            outputs: u.dot(&r),
        })
    }

    /// The generalised-least-squares constant mean of every client's data
    /// under the dPITC covariance `Q_DD + Λ` (the maximiser of its
    /// likelihood in `μ`), from sums only:
    ///
    /// `μ̂ = 1ᵀ(Q_DD + Λ)⁻¹y / 1ᵀ(Q_DD + Λ)⁻¹1 = (c − aᵀK_SS⁻¹ṁ_S) / (b − aᵀK_SS⁻¹a)`
    ///
    /// by the Woodbury identity of the module docs, with `summed` the local
    /// summaries made at prior mean zero (`ṁ_S = Σ_SD Λ⁻¹ y`, eq. 6 at μ = 0),
    /// `terms` the summed [`LocalMeanTerms`] and `K_SS` of eq. 8. Refuses a
    /// model whose own prior mean is not zero (its summaries would not be
    /// those) and terms of no data.
    pub fn gls_mean(&self, summed: &LocalSummary, terms: &LocalMeanTerms) -> Result<f64, GpError> {
        if self.prior_mean != 0.0 {
            return Err(GpError::NotZeroMean {
                what: "a GLS mean",
                prior_mean: self.prior_mean,
            });
        }
        if terms.a_s.len() != self.support_size() {
            return Err(GpError::Dimension {
                what: "mean terms vs support set",
                expected: self.support_size(),
                got: terms.a_s.len(),
            });
        }
        let global = self.global_summary(summed)?;
        let solved_a = global.k_ss_chol.solve_vec(&terms.a_s);
        let denominator = terms.ones - terms.a_s.dot(&solved_a);
        // 1ᵀ(Q + Λ)⁻¹1 > 0 for any data; not positive means no data (or rounding of none).
        if denominator.is_nan() || denominator <= 0.0 {
            return Err(GpError::Empty {
                what: "data behind a GLS mean",
            });
        }
        Ok((terms.outputs - solved_a.dot(&global.m_s)) / denominator)
    }

    /// This model with the constant prior mean `prior_mean`, and the summed
    /// local summary it would have made from the same data: `ṁ_S(μ) =
    /// ṁ_S(0) − μ a` (eq. 6 is linear in `y − μ`), for `summed` made at
    /// prior mean zero and the summed `terms`.
    pub fn with_prior_mean(
        &self,
        prior_mean: f64,
        summed: &LocalSummary,
        terms: &LocalMeanTerms,
    ) -> Result<(Self, LocalSummary), GpError> {
        check_finite("prior mean", [prior_mean].iter())?;
        if self.prior_mean != 0.0 {
            return Err(GpError::NotZeroMean {
                what: "a shift of the prior mean",
                prior_mean: self.prior_mean,
            });
        }
        if terms.a_s.len() != summed.m_s.len() {
            return Err(GpError::Dimension {
                what: "mean terms vs summary",
                expected: summed.m_s.len(),
                got: terms.a_s.len(),
            });
        }
        let mut model = self.clone();
        model.prior_mean = prior_mean;
        let shifted = LocalSummary {
            m_s: &summed.m_s - &terms.a_s * prior_mean,
            k_ss: summed.k_ss.clone(),
        };
        Ok((model, shifted))
    }

    /// The log marginal likelihood of every client's data under the dPITC
    /// model (the PITC evidence of Quiñonero-Candela & Rasmussen 2005, eq. 15
    /// form), from the summed local summary and the summed scalars of
    /// [`LocalEvidence`]:
    ///
    /// `log p(y) = −½ [Σ_i q_i − m_Sᵀ K_SS⁻¹ m_S + log|K_SS| − log|Σ_SS| + Σ_i log|Λ_i| + n log 2π]`
    ///
    /// with `K_SS = Σ_SS + Σ_i K̇_SS⁽ⁱ⁾` (eq. 8): the Woodbury identity and the
    /// matrix determinant lemma applied to `Q_DD + Λ` (module docs). It
    /// counts the covariance between clients through `S`, which a sum of the
    /// clients' own likelihoods ignores.
    pub fn log_marginal_likelihood(
        &self,
        summed: &LocalSummary,
        quadratic: f64,
        log_det: f64,
        points: usize,
    ) -> Result<f64, GpError> {
        check_finite("evidence terms", [quadratic, log_det].iter())?;
        let global = self.global_summary(summed)?;
        let solved = global.k_ss_chol.solve_vec(&global.m_s);
        let fit = quadratic - global.m_s.dot(&solved);
        let complexity = global.k_ss_chol.log_det() - self.sigma_ss_chol.log_det() + log_det;
        Ok(-0.5 * (fit + complexity + points as f64 * (2.0 * std::f64::consts::PI).ln()))
    }

    /// The global summary from the sum of all local summaries (eq. 8).
    pub fn global_summary(&self, summed: &LocalSummary) -> Result<GlobalSummary, GpError> {
        let s = self.support_size();
        if summed.m_s.len() != s || summed.k_ss.nrows() != s || summed.k_ss.ncols() != s {
            return Err(GpError::Dimension {
                what: "summary size vs support set",
                expected: s,
                got: summed.m_s.len(),
            });
        }
        let k_ss = &self.sigma_ss + &summed.k_ss;
        let k_ss_chol = JitteredCholesky::new(&k_ss)?;
        Ok(GlobalSummary {
            m_s: summed.m_s.clone(),
            k_ss,
            k_ss_chol,
        })
    }

    /// The global summary from the element-wise sum of packed local summaries.
    pub fn global_summary_from_packed(&self, packed_sum: &[f64]) -> Result<GlobalSummary, GpError> {
        self.global_summary(&LocalSummary::unpack(self.support_size(), packed_sum)?)
    }

    /// The dPITC predictive mean and latent variance at the rows of `xs` (eqs. 9-10):
    ///
    /// `m̂_U = μ_U + Σ_US K_SS⁻¹ m_S`,
    /// `K̂_UU = Σ_UU − Σ_US (Σ_SS⁻¹ − K_SS⁻¹) Σ_SU` (diagonal).
    pub fn predict(
        &self,
        global: &GlobalSummary,
        xs: &DMatrix<f64>,
    ) -> Result<(DVector<f64>, DVector<f64>), GpError> {
        let (mean, a, b) = self.predict_parts(global, xs)?;
        let var = DVector::from_fn(xs.nrows(), |j, _| {
            (self.kernel.signal_variance() - a.column(j).norm_squared()
                + b.column(j).norm_squared())
            .max(0.0)
        });
        Ok((mean, var))
    }

    /// The dPITC predictive mean and joint covariance `K̂_UU` (eqs. 9-10).
    pub fn predict_joint(
        &self,
        global: &GlobalSummary,
        xs: &DMatrix<f64>,
    ) -> Result<(DVector<f64>, DMatrix<f64>), GpError> {
        let (mean, a, b) = self.predict_parts(global, xs)?;
        let cov = self.kernel.gram(xs) - a.transpose() * &a + b.transpose() * &b;
        Ok((mean, (&cov + cov.transpose()) * 0.5))
    }

    /// The dPITC mean and latent variance at one point with their gradients in
    /// `x` (eqs. 9-10), for acquisition optimisation:
    ///
    /// `∂m̂/∂x = (∂σ_Sx/∂x)ᵀ K_SS⁻¹ m_S`,
    /// `∂K̂/∂x = −2 (∂σ_Sx/∂x)ᵀ (Σ_SS⁻¹ − K_SS⁻¹) σ_Sx`.
    pub fn predict_point(
        &self,
        global: &GlobalSummary,
        x: &[f64],
    ) -> Result<PointPrediction, GpError> {
        let xs = DMatrix::from_row_slice(1, x.len(), x);
        validate_test(self.kernel.dim(), &xs)?;
        if global.m_s.len() != self.support_size() {
            return Err(GpError::Dimension {
                what: "global summary vs support set",
                expected: self.support_size(),
                got: global.m_s.len(),
            });
        }
        let support = crate::kernels::rows(&self.support);
        let sigma_sx = DVector::from_fn(support.len(), |i, _| self.kernel.eval(&support[i], x));
        let weights = global.k_ss_chol.solve_vec(&global.m_s);
        // (Σ_SS⁻¹ − K_SS⁻¹) σ_Sx: the vector the variance and its gradient share.
        let w = self.sigma_ss_chol.solve_vec(&sigma_sx) - global.k_ss_chol.solve_vec(&sigma_sx);
        let dim = x.len();
        let mut mean_grad = vec![0.0; dim];
        let mut variance_grad = vec![0.0; dim];
        for (i, s) in support.iter().enumerate() {
            let g = self.kernel.grad_x(x, s);
            for d in 0..dim {
                mean_grad[d] += weights[i] * g[d];
                variance_grad[d] -= 2.0 * w[i] * g[d];
            }
        }
        Ok(PointPrediction {
            mean: self.prior_mean + sigma_sx.dot(&weights),
            variance: (self.kernel.signal_variance() - sigma_sx.dot(&w)).max(0.0),
            mean_grad,
            variance_grad,
        })
    }

    /// A joint sample of `f` from the dPITC posterior at the rows of `xs`
    /// (Thompson sampling on a candidate set).
    pub fn sample_joint<R: rand::Rng + ?Sized>(
        &self,
        global: &GlobalSummary,
        xs: &DMatrix<f64>,
        rng: &mut R,
    ) -> Result<DVector<f64>, GpError> {
        let (mean, cov) = self.predict_joint(global, xs)?;
        crate::linalg::sample_gaussian(mean, &cov, rng)
    }

    /// The kernel.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// Mean, `A = L_S⁻¹ Σ_SU` and `B = L_K⁻¹ Σ_SU`, so that
    /// `Σ_US Σ_SS⁻¹ Σ_SU = AᵀA` and `Σ_US K_SS⁻¹ Σ_SU = BᵀB`.
    #[allow(clippy::type_complexity)]
    fn predict_parts(
        &self,
        global: &GlobalSummary,
        xs: &DMatrix<f64>,
    ) -> Result<(DVector<f64>, DMatrix<f64>, DMatrix<f64>), GpError> {
        validate_test(self.kernel.dim(), xs)?;
        if global.m_s.len() != self.support_size() {
            return Err(GpError::Dimension {
                what: "global summary vs support set",
                expected: self.support_size(),
                got: global.m_s.len(),
            });
        }
        let sigma_su = self.kernel.cross(&self.support, xs);
        let weights = global.k_ss_chol.solve_vec(&global.m_s);
        let mean = (sigma_su.transpose() * weights).map(|m| m + self.prior_mean);
        let a = self.sigma_ss_chol.solve_lower(&sigma_su);
        let b = global.k_ss_chol.solve_lower(&sigma_su);
        Ok((mean, a, b))
    }
}

/// The PITC log marginal likelihood straight from its definition: the
/// Gaussian log density of `y − μ` under `Q_DD + Λ` (module docs), built as a
/// dense `n × n` matrix over every client's `blocks` (inputs, outputs) and
/// factorised by Cholesky, `O(n³)`. The reference that
/// [`Dpitc::log_marginal_likelihood`] (from sums, `O(|S|³)`) is tested
/// against; it needs every client's data in one place.
pub fn dense_pitc_log_marginal_likelihood<K: Kernel>(
    kernel: &K,
    noise_variance: f64,
    prior_mean: f64,
    support: &DMatrix<f64>,
    blocks: &[(DMatrix<f64>, DVector<f64>)],
) -> Result<f64, GpError> {
    let (cov, y) = dense_pitc_covariance(kernel, noise_variance, support, blocks)?;
    let chol = JitteredCholesky::new(&cov)?;
    let r = y.map(|v| v - prior_mean);
    let fit = r.dot(&chol.solve_vec(&r));
    Ok(-0.5 * (fit + chol.log_det() + y.len() as f64 * (2.0 * std::f64::consts::PI).ln()))
}

/// The dense `n × n` PITC covariance `Q_DD + Λ` (module docs) of every
/// client's `blocks` (inputs, outputs), and the stacked outputs.
fn dense_pitc_covariance<K: Kernel>(
    kernel: &K,
    noise_variance: f64,
    support: &DMatrix<f64>,
    blocks: &[(DMatrix<f64>, DVector<f64>)],
) -> Result<(DMatrix<f64>, DVector<f64>), GpError> {
    let n: usize = blocks.iter().map(|b| b.0.nrows()).sum();
    let d = support.ncols();
    let (mut x, mut y) = (DMatrix::zeros(n, d), DVector::zeros(n));
    let mut block_of = vec![0usize; n];
    let mut row = 0;
    for (b, (bx, by)) in blocks.iter().enumerate() {
        if bx.ncols() != d || by.len() != bx.nrows() {
            return Err(GpError::Dimension {
                what: "client block vs support set",
                expected: d,
                got: bx.ncols(),
            });
        }
        x.view_mut((row, 0), (bx.nrows(), d)).copy_from(bx);
        y.rows_mut(row, bx.nrows()).copy_from(by);
        block_of[row..row + bx.nrows()].fill(b);
        row += bx.nrows();
    }
    let sss = JitteredCholesky::new(&kernel.gram(support))?;
    let v = sss.solve_lower(&kernel.cross(support, &x));
    let q = v.transpose() * &v;
    let full = kernel.gram(&x);
    // Q off the clients' diagonal blocks, the exact covariance (and noise) on them.
    let cov = DMatrix::from_fn(n, n, |i, j| {
        if block_of[i] == block_of[j] {
            full[(i, j)] + if i == j { noise_variance } else { 0.0 }
        } else {
            q[(i, j)]
        }
    });
    Ok((cov, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{KernelParams, Matern52, SquaredExponential};
    use crate::ExactGpParams;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_points(rng: &mut ChaCha8Rng, n: usize, d: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, d, |_, _| rng.gen_range(0.0..1.0))
    }

    fn outputs(x: &DMatrix<f64>) -> DVector<f64> {
        DVector::from_fn(x.nrows(), |i, _| {
            (5.0 * x[(i, 0)]).sin() + x[(i, 1)].powi(2)
        })
    }

    /// Centralised PITC on pooled data, straight from its definition with an
    /// `n × n` solve: `μ + Q_UD (Q_DD + Λ)⁻¹ (y − μ)`,
    /// `diag(Σ_UU − Q_UD (Q_DD + Λ)⁻¹ Q_DU)`.
    fn centralised_pitc<K: Kernel>(
        k: &K,
        noise: f64,
        mu: f64,
        s: &DMatrix<f64>,
        blocks: &[(DMatrix<f64>, DVector<f64>)],
        xs: &DMatrix<f64>,
    ) -> (DVector<f64>, DVector<f64>) {
        let n: usize = blocks.iter().map(|b| b.0.nrows()).sum();
        let d = s.ncols();
        let mut x = DMatrix::zeros(n, d);
        let mut y = DVector::zeros(n);
        let mut row = 0;
        let mut lambda = DMatrix::zeros(n, n);
        let sss_inv = k.gram(s).try_inverse().unwrap();
        for (bx, by) in blocks {
            let m = bx.nrows();
            x.view_mut((row, 0), (m, d)).copy_from(bx);
            y.rows_mut(row, m).copy_from(by);
            let ksb = k.cross(s, bx);
            let block =
                k.gram(bx) - ksb.transpose() * &sss_inv * &ksb + DMatrix::identity(m, m) * noise;
            lambda.view_mut((row, row), (m, m)).copy_from(&block);
            row += m;
        }
        let ksd = k.cross(s, &x);
        let ksu = k.cross(s, xs);
        let q_dd = ksd.transpose() * &sss_inv * &ksd;
        let q_ud = ksu.transpose() * &sss_inv * &ksd;
        let inv = (q_dd + lambda).try_inverse().unwrap();
        let mean = &q_ud * &inv * y.map(|v| v - mu);
        let cov = k.gram(xs) - &q_ud * &inv * q_ud.transpose();
        (mean.map(|m| m + mu), cov.diagonal())
    }

    #[test]
    fn summed_local_summaries_equal_centralised_pitc() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let kernel = Matern52::new(KernelParams::new(vec![0.4, 0.6], 1.3).unwrap());
        let support = random_points(&mut rng, 8, 2);
        let blocks: Vec<_> = [7, 12, 5]
            .iter()
            .map(|&n| {
                let x = random_points(&mut rng, n, 2);
                let y = outputs(&x);
                (x, y)
            })
            .collect();
        let xs = random_points(&mut rng, 6, 2);
        let model = Dpitc::new(kernel.clone(), 0.05, 0.2, support.clone()).unwrap();
        // Through the channel: pack, add element-wise, unpack.
        let mut packed_sum = vec![0.0; packed_len(8)];
        for (x, y) in &blocks {
            let p = model.local_summary(x, y).unwrap().pack();
            for (a, b) in packed_sum.iter_mut().zip(&p) {
                *a += b;
            }
        }
        let global = model.global_summary_from_packed(&packed_sum).unwrap();
        let (m, v) = model.predict(&global, &xs).unwrap();
        let (m_ref, v_ref) = centralised_pitc(&kernel, 0.05, 0.2, &support, &blocks, &xs);
        println!(
            "dPITC vs centralised PITC: mean {:e}, variance {:e}",
            (&m - &m_ref).amax(),
            (&v - &v_ref).amax()
        );
        assert!(
            (&m - &m_ref).amax() < 1e-9,
            "mean error {}",
            (&m - &m_ref).amax()
        );
        assert!(
            (&v - &v_ref).amax() < 1e-9,
            "variance error {}",
            (&v - &v_ref).amax()
        );
        let (mj, cj) = model.predict_joint(&global, &xs).unwrap();
        assert!((mj - m).amax() < 1e-12);
        assert!((cj.diagonal() - v).amax() < 1e-12);
    }

    /// The GLS mean straight from its definition on pooled data:
    /// `1ᵀC⁻¹y / 1ᵀC⁻¹1` with the dense `n × n` PITC covariance `C = Q_DD + Λ`.
    fn dense_gls_mean<K: Kernel>(
        k: &K,
        noise: f64,
        s: &DMatrix<f64>,
        blocks: &[(DMatrix<f64>, DVector<f64>)],
    ) -> f64 {
        let (c, y) = dense_pitc_covariance(k, noise, s, blocks).unwrap();
        let inv = c.try_inverse().unwrap();
        let ones = DVector::from_element(y.len(), 1.0);
        (ones.transpose() * &inv * &y)[0] / (ones.transpose() * &inv * &ones)[0]
    }

    #[test]
    fn the_gls_mean_from_sums_equals_the_dense_pitc_gls_mean_and_predicts_as_centralised_pitc() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let kernel = Matern52::new(KernelParams::new(vec![0.3, 0.5], 0.9).unwrap());
        let support = random_points(&mut rng, 6, 2);
        // Outputs far from zero, so a zero mean and the GLS mean differ.
        let blocks: Vec<_> = [9, 4, 11]
            .iter()
            .map(|&n| {
                let x = random_points(&mut rng, n, 2);
                let y = outputs(&x).map(|v| v - 3.0);
                (x, y)
            })
            .collect();
        let model = Dpitc::new(kernel.clone(), 0.02, 0.0, support.clone()).unwrap();
        // Through the channel: summaries and terms packed and added element-wise.
        let (mut summary, mut terms) = (vec![0.0; packed_len(6)], vec![0.0; 8]);
        for (x, y) in &blocks {
            for (a, b) in summary
                .iter_mut()
                .zip(model.local_summary(x, y).unwrap().pack())
            {
                *a += b;
            }
            for (a, b) in terms
                .iter_mut()
                .zip(model.local_mean_terms(x, y).unwrap().pack())
            {
                *a += b;
            }
        }
        let summary = LocalSummary::unpack(6, &summary).unwrap();
        let terms = LocalMeanTerms::unpack(6, &terms).unwrap();
        let mu = model.gls_mean(&summary, &terms).unwrap();
        let reference = dense_gls_mean(&kernel, 0.02, &support, &blocks);
        println!("GLS mean from sums {mu}, dense {reference}");
        assert!((mu - reference).abs() < 1e-9, "{mu} against {reference}");
        assert!(mu < -1.0, "the data's level, not zero: {mu}");
        // The model at μ̂ predicts as centralised PITC with μ̂.
        let (shifted_model, shifted) = model.with_prior_mean(mu, &summary, &terms).unwrap();
        let global = shifted_model.global_summary(&shifted).unwrap();
        let xs = random_points(&mut rng, 5, 2);
        let (m, v) = shifted_model.predict(&global, &xs).unwrap();
        let (m_ref, v_ref) = centralised_pitc(&kernel, 0.02, mu, &support, &blocks, &xs);
        assert!(
            (&m - &m_ref).amax() < 1e-9,
            "mean error {}",
            (&m - &m_ref).amax()
        );
        assert!((&v - &v_ref).amax() < 1e-9);
        // μ̂ maximises the dense PITC likelihood in μ.
        let lik = |mu: f64| {
            dense_pitc_log_marginal_likelihood(&kernel, 0.02, mu, &support, &blocks).unwrap()
        };
        assert!(lik(mu) > lik(mu + 1e-3) && lik(mu) > lik(mu - 1e-3));
        // Refusals by name: summaries at another mean, wrong sizes, no data.
        let other = Dpitc::new(kernel.clone(), 0.02, 0.5, support.clone()).unwrap();
        assert!(matches!(
            other.gls_mean(&summary, &terms),
            Err(GpError::NotZeroMean { .. })
        ));
        assert!(LocalMeanTerms::unpack(6, &[0.0; 7]).is_err());
        assert!(matches!(
            model.gls_mean(&LocalSummary::zeros(6), &LocalMeanTerms::zeros(6)),
            Err(GpError::Empty { .. })
        ));
    }

    #[test]
    fn one_client_with_all_inputs_as_support_is_the_exact_gp() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let kernel = SquaredExponential::new(KernelParams::new(vec![0.3, 0.5], 0.9).unwrap());
        let x = random_points(&mut rng, 10, 2);
        let y = outputs(&x);
        let xs = random_points(&mut rng, 5, 2);
        let model = Dpitc::new(kernel.clone(), 0.1, 0.0, x.clone()).unwrap();
        let global = model
            .global_summary(&model.local_summary(&x, &y).unwrap())
            .unwrap();
        let (m, v) = model.predict(&global, &xs).unwrap();
        let exact = ExactGpParams::new(kernel)
            .noise_variance(0.1)
            .fit(&x, &y)
            .unwrap();
        let (me, ve) = exact.predict(&xs).unwrap();
        println!(
            "dPITC(S = X) vs exact: mean {:e}, variance {:e}",
            (&m - &me).amax(),
            (&v - &ve).amax()
        );
        assert!((&m - &me).amax() < 1e-8, "mean error {}", (&m - &me).amax());
        assert!(
            (&v - &ve).amax() < 1e-8,
            "variance error {}",
            (&v - &ve).amax()
        );
    }

    /// The summed evidence terms of `blocks`.
    fn summed_evidence<K: Kernel>(
        model: &Dpitc<K>,
        blocks: &[(DMatrix<f64>, DVector<f64>)],
    ) -> (LocalSummary, f64, f64, usize) {
        let parts: Vec<LocalEvidence> = blocks
            .iter()
            .map(|(x, y)| model.local_evidence(x, y).unwrap())
            .collect();
        let s = model.support_size();
        (
            LocalSummary::sum(s, parts.iter().map(|p| &p.summary)),
            parts.iter().map(|p| p.quadratic).sum(),
            parts.iter().map(|p| p.log_det).sum(),
            parts.iter().map(|p| p.points).sum(),
        )
    }

    #[test]
    fn the_evidence_from_sums_equals_the_dense_pitc_density() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let kernel = Matern52::new(KernelParams::new(vec![0.4, 0.7], 1.3).unwrap());
        let s = random_points(&mut rng, 6, 2);
        let blocks: Vec<(DMatrix<f64>, DVector<f64>)> = [5, 8, 3]
            .iter()
            .map(|&n| {
                let x = random_points(&mut rng, n, 2);
                let y = outputs(&x);
                (x, y)
            })
            .collect();
        for (noise, mu) in [(0.05, 0.0), (1e-3, 0.4)] {
            let model = Dpitc::new(kernel.clone(), noise, mu, s.clone()).unwrap();
            let (summary, q, log_det, n) = summed_evidence(&model, &blocks);
            let ours = model
                .log_marginal_likelihood(&summary, q, log_det, n)
                .unwrap();
            let dense =
                dense_pitc_log_marginal_likelihood(&kernel, noise, mu, &s, &blocks).unwrap();
            assert!(
                (ours - dense).abs() < 1e-8 * dense.abs().max(1.0),
                "noise {noise}: {ours} vs dense {dense}"
            );
        }
    }

    #[test]
    fn the_evidence_with_every_input_in_the_support_is_the_exact_gp_evidence() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let kernel = SquaredExponential::new(KernelParams::new(vec![0.3, 0.5], 0.9).unwrap());
        let (a, b) = (random_points(&mut rng, 6, 2), random_points(&mut rng, 4, 2));
        let mut all = DMatrix::zeros(10, 2);
        all.view_mut((0, 0), (6, 2)).copy_from(&a);
        all.view_mut((6, 0), (4, 2)).copy_from(&b);
        let blocks = vec![(a.clone(), outputs(&a)), (b.clone(), outputs(&b))];
        let model = Dpitc::new(kernel.clone(), 0.1, 0.0, all.clone()).unwrap();
        let (summary, q, log_det, n) = summed_evidence(&model, &blocks);
        let ours = model
            .log_marginal_likelihood(&summary, q, log_det, n)
            .unwrap();
        let exact = ExactGpParams::new(kernel)
            .noise_variance(0.1)
            .fit(&all, &outputs(&all))
            .unwrap()
            .log_marginal_likelihood();
        assert!((ours - exact).abs() < 1e-7, "{ours} vs exact {exact}");
        // A sum of the two clients' own evidences is not it: the cross terms count.
        let own: f64 = blocks
            .iter()
            .map(|(x, y)| {
                ExactGpParams::new(model.kernel().clone())
                    .noise_variance(0.1)
                    .fit(x, y)
                    .unwrap()
                    .log_marginal_likelihood()
            })
            .sum();
        assert!((own - exact).abs() > 1e-3, "{own} vs {exact}");
    }

    #[test]
    fn pack_unpack_round_trip_and_length_checks() {
        let k = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 3.0, 2.0, 4.0, 5.0, 3.0, 5.0, 6.0]);
        let l = LocalSummary {
            m_s: DVector::from_vec(vec![7.0, 8.0, 9.0]),
            k_ss: k,
        };
        let p = l.pack();
        assert_eq!(p, vec![7.0, 8.0, 9.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(LocalSummary::unpack(3, &p).unwrap(), l);
        assert!(matches!(
            LocalSummary::unpack(3, &p[..8]),
            Err(GpError::Dimension {
                expected: 9,
                got: 8,
                ..
            })
        ));
        assert!(LocalSummary::unpack(4, &p).is_err());
    }

    #[test]
    fn point_prediction_matches_batch_and_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let x = random_points(&mut rng, 30, 2);
        let y = outputs(&x);
        let support = random_points(&mut rng, 6, 2);
        let k = Matern52::new(KernelParams::new(vec![0.3, 0.5], 1.3).unwrap());
        let model = Dpitc::new(k, 0.05, 0.2, support).unwrap();
        let global = model
            .global_summary(&model.local_summary(&x, &y).unwrap())
            .unwrap();
        let p = [0.37, 0.61];
        let point = model.predict_point(&global, &p).unwrap();
        let (m, v) = model
            .predict(&global, &DMatrix::from_row_slice(1, 2, &p))
            .unwrap();
        assert!((point.mean - m[0]).abs() < 1e-12);
        assert!((point.variance - v[0]).abs() < 1e-12);
        let h = 1e-6;
        for d in 0..2 {
            let mut hi = p;
            let mut lo = p;
            hi[d] += h;
            lo[d] -= h;
            let a = model.predict_point(&global, &hi).unwrap();
            let b = model.predict_point(&global, &lo).unwrap();
            let dm = (a.mean - b.mean) / (2.0 * h);
            let dv = (a.variance - b.variance) / (2.0 * h);
            assert!((dm - point.mean_grad[d]).abs() < 1e-6, "mean grad {d}");
            assert!(
                (dv - point.variance_grad[d]).abs() < 1e-6,
                "variance grad {d}"
            );
        }
    }
}
