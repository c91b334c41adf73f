//! What the federation shares in plaintext after a secure sum: the output
//! scaling, the kernel hyper-parameters, and the normalisation of summaries.

use crate::AlgorithmError;
use fedhe_gp::exact::MeanFunction;
use fedhe_gp::hyperfit::HyperBounds;
use fedhe_gp::sparse::{packed_len, LocalMeanTerms, LocalSummary};
use fedhe_gp::{ExactGpParams, Kernel, KernelParams};
use serde::{Deserialize, Serialize};

/// A monotone transform of the utility before modelling (the concrete one a
/// model uses; [`Warping`] is the setting that may choose it from the data).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputWarping {
    /// The utility as it is.
    None,
    /// `sign(u) · ln(1 + |u|)`: keeps heavy-tailed objectives (CEC-2005 values
    /// span ten orders of magnitude) within what a stationary GP can fit and
    /// within the fixed-point channel's bound. Monotone, so maximisers agree.
    SignedLog,
    /// `sign(u) · ln(1 + |u|/s)` for a scale `s > 0`: logarithmic for
    /// `|u| ≫ s`, linear (`u/s`) for `|u| ≪ s`; `s = 1` is [`Self::SignedLog`].
    ScaledLog(f64),
    /// `clamp(u / T, −1, 1)` for a public threshold `T > 0` (see
    /// [`Warping::Clipped`]). Linear wherever `|u| ≤ T`, and standardisation
    /// removes the `1/T`, so a standardised model sees the utility itself
    /// there; every warped value lies in `[−1, 1]`, so every sum of them fits
    /// the channel.
    Clipped(f64),
}

impl OutputWarping {
    /// `w(u)`.
    pub fn apply(self, u: f64) -> f64 {
        match self {
            OutputWarping::None => u,
            OutputWarping::SignedLog => u.signum() * u.abs().ln_1p(),
            OutputWarping::ScaledLog(s) => u.signum() * (u.abs() / s).ln_1p(),
            OutputWarping::Clipped(t) => (u / t).clamp(-1.0, 1.0),
        }
    }

    /// `log w'(u)`, the log-Jacobian of the warping at `u` (for
    /// [`Self::Clipped`] the one inside the clip, `−ln T`: a clipped value's
    /// is −∞, which no sum through the channel could carry; a clipped
    /// setting has one candidate, so its likelihood is never compared).
    pub fn log_derivative(self, u: f64) -> f64 {
        match self {
            OutputWarping::None => 0.0,
            OutputWarping::SignedLog => -u.abs().ln_1p(),
            OutputWarping::ScaledLog(s) => -(s + u.abs()).ln(),
            OutputWarping::Clipped(t) => -t.ln(),
        }
    }
}

/// The output-warping setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Warping {
    /// [`Warping::None`] for a lone agent (`independent-bo`, whose
    /// statistics never leave it), [`Warping::Clipped`] in a federation,
    /// whose raw sums of squares would exceed the channel's bound on
    /// objectives of large magnitude (CEC-2005 F6 reaches 10¹⁰). Both
    /// standardise the utility itself; the federation's clip binds only far
    /// in the tail (`docs/results/optimiser-2026-11-25`, §5: as good as the
    /// signed-log warping over HE at |S| = 16, and better with a growing
    /// support set).
    Auto,
    /// No warping: the utility standardised (BoTorch's `Standardize`).
    None,
    /// The fixed `sign(u) · ln(1 + |u|)` of every value (a federation's
    /// default until 2026-11-25).
    #[default]
    SignedLog,
    /// Chosen by the data: the scale `s` of [`OutputWarping::ScaledLog`] among
    /// [`WARP_SCALES`] maximising the Gaussian profile likelihood of the
    /// warped values with its Jacobian ([`warp_log_likelihood`]), computed from
    /// sums only, so a federation chooses it through the channel. A large `s`
    /// leaves the values (nearly) linear; a small one takes logarithms.
    ///
    /// Limit: through the fixed-point channel a candidate whose warped values
    /// are far below its resolution (a large `s` for data of small magnitude)
    /// gets statistics dominated by rounding, so a federation's choice can
    /// differ from the pooled one; exact for a lone agent and `PlainSum`.
    Likelihood,
    /// Standardised, as [`Warping::None`], but every value clipped to
    /// `[−T, T]` for a public threshold `T` that keeps every sum within the
    /// channel's bound: [`OutputWarping::Clipped`] with `T` from
    /// [`clip_threshold`], i.e. `exp(μ + κσ) − 1` for the mean `μ` and
    /// deviation `σ` of the log-magnitudes `ln(1 + |u|)`, which a federation
    /// learns from a first secure sum of `(n_i, Σℓ, Σℓ²)`
    /// ([`magnitude_contribution`]). With `κ` = [`CLIP_DEVIATIONS`] the clip
    /// binds only on values far in the tail of the data's magnitudes, so the
    /// federation's model is, in practice, the unwarped standardised one that
    /// a lone agent (and BoTorch's `Standardize`) uses, while [`Warping::None`]
    /// in a federation overflows the channel on objectives of large magnitude.
    Clipped,
}

impl Warping {
    /// The setting a lone agent uses: [`Warping::Auto`] is [`Warping::None`].
    pub fn for_lone_agent(self) -> Warping {
        match self {
            Warping::Auto => Warping::None,
            w => w,
        }
    }

    /// The concrete warping of a fixed setting; `None` for a data-chosen one.
    /// [`Warping::Auto`] is the federation's [`Warping::Clipped`], chosen by
    /// the data (a lone agent resolves it first with [`Self::for_lone_agent`]).
    pub fn fixed(self) -> Option<OutputWarping> {
        match self {
            Warping::None => Some(OutputWarping::None),
            Warping::SignedLog => Some(OutputWarping::SignedLog),
            Warping::Likelihood | Warping::Clipped | Warping::Auto => None,
        }
    }

    /// Whether the candidates depend on the data's log-magnitudes, which a
    /// federation learns from a secure sum of [`magnitude_contribution`]s
    /// before the sum of [`warp_contribution`]s.
    pub fn needs_magnitudes(self) -> bool {
        matches!(self, Warping::Clipped | Warping::Auto)
    }

    /// The candidate warpings (one for a fixed setting). `magnitudes` are the
    /// summed [`magnitude_contribution`]s, needed exactly when
    /// [`Self::needs_magnitudes`]; an error names what is missing or wrong.
    pub fn candidates(
        self,
        magnitudes: Option<&[f64]>,
    ) -> Result<Vec<OutputWarping>, AlgorithmError> {
        if let Some(w) = self.fixed() {
            return Ok(vec![w]);
        }
        match self {
            Warping::Clipped | Warping::Auto => {
                let sums = magnitudes.ok_or_else(|| {
                    crate::error::config(
                        "warping",
                        "a clipped warping needs the federation's log-magnitudes",
                    )
                })?;
                Ok(vec![OutputWarping::Clipped(clip_threshold(sums)?)])
            }
            _ => Ok(WARP_SCALES
                .iter()
                .map(|s| OutputWarping::ScaledLog(*s))
                .collect()),
        }
    }
}

/// How many deviations `κ` above the mean log-magnitude [`clip_threshold`]
/// puts the clip: for normally distributed log-magnitudes 3 leaves 99.9 % of
/// the values unclipped, and only values more than `e^{3σ}` times the typical
/// magnitude are clipped.
pub const CLIP_DEVIATIONS: f64 = 3.0;

/// One data set's contribution to [`clip_threshold`]: `(n, Σℓ, Σℓ²) / n_max`
/// with `ℓ = ln(1 + |u|)`. Each `ℓ ≤ 710` for any finite `u`, so the sums fit
/// the channel's bound for every objective.
pub fn magnitude_contribution(utilities: &[f64], n_max: f64) -> Vec<f64> {
    let (mut s, mut s2) = (0.0, 0.0);
    for u in utilities {
        let l = u.abs().ln_1p();
        s += l;
        s2 += l * l;
    }
    vec![utilities.len() as f64 / n_max, s / n_max, s2 / n_max]
}

/// The clip threshold `T = exp(μ + κσ) − 1` of [`Warping::Clipped`] from the
/// summed [`magnitude_contribution`]s (each divided by the same constant,
/// which cancels), with `μ`, `σ` the mean and deviation of `ln(1 + |u|)` and
/// `κ` = [`CLIP_DEVIATIONS`]. `T` is the magnitude whose log-magnitude is
/// `μ + κσ`; it is `|u|` itself when every value has the same magnitude, and
/// 1 when every value is 0. Capped at `e^700` so `T` stays finite.
pub fn clip_threshold(sums: &[f64]) -> Result<f64, AlgorithmError> {
    let [n, s, s2] = sums else {
        return Err(crate::error::config(
            "warping",
            format!("expected 3 log-magnitude sums, got {}", sums.len()),
        ));
    };
    if !(n.is_finite() && *n > 0.0 && s.is_finite() && s2.is_finite()) {
        return Err(crate::error::config(
            "warping",
            "no data in the federation's log-magnitudes",
        ));
    }
    let (mean, var) = mean_and_variance(*n, *s, *s2);
    let sd = var.sqrt();
    let t = (mean + CLIP_DEVIATIONS * sd).clamp(0.0, 700.0).exp_m1();
    Ok(if t > 0.0 { t } else { 1.0 })
}

/// The public candidate scales of [`Warping::Likelihood`]: `10^(k/2)` for
/// `k = −2, …, 24` (0.1 to 10¹²). Every warped value stays below
/// `ln(1 + 10¹³) ≈ 30` in magnitude for `|u| ≤ 10¹²`, so sums of squares fit
/// the channel's bound.
pub const WARP_SCALES: [f64; 27] = [
    1e-1,
    3.162_277_660_168_379_5e-1,
    1e0,
    3.162_277_660_168_379_5,
    1e1,
    3.162_277_660_168_379_5e1,
    1e2,
    3.162_277_660_168_379_5e2,
    1e3,
    3.162_277_660_168_379_5e3,
    1e4,
    3.162_277_660_168_379_5e4,
    1e5,
    3.162_277_660_168_379_5e5,
    1e6,
    3.162_277_660_168_379_5e6,
    1e7,
    3.162_277_660_168_379_5e7,
    1e8,
    3.162_277_660_168_379_5e8,
    1e9,
    3.162_277_660_168_379_5e9,
    1e10,
    3.162_277_660_168_379_5e10,
    1e11,
    3.162_277_660_168_379_5e11,
    1e12,
];

/// The mean and population variance (clamped at 0 against rounding) from the
/// sums `(n, Σv, Σv²)`, each divided by the same constant, which cancels.
fn mean_and_variance(n: f64, sum: f64, sum_sq: f64) -> (f64, f64) {
    let mean = sum / n;
    (mean, (sum_sq / n - mean * mean).max(0.0))
}

/// Per-point log-likelihood differences below this are ties in [`choose_warping`].
pub const WARP_TIE: f64 = 1e-6;

/// The Gaussian profile log-likelihood of warped values, per point, from the
/// sums `(n, Σw, Σw², Σ log w')` (each divided by the same constant, which
/// cancels): with `m = Σw/n` and `v = Σw²/n − m²`, the log-likelihood of the
/// raw utilities under `w(u) ~ N(m, v)` is
/// `−n/2 · (ln(2π v) + 1) + Σ log w'(u_i)` (change of variables; the
/// criterion of Box & Cox 1964, §3, and of Yeo & Johnson 2000, eq. 3.1).
/// Returns `−∞` for no data or a constant warp.
pub fn warp_log_likelihood(n: f64, sum: f64, sum_sq: f64, sum_log_jacobian: f64) -> f64 {
    if n.is_nan() || n <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let (_, var) = mean_and_variance(n, sum, sum_sq);
    if var.is_nan() || var <= 0.0 {
        return f64::NEG_INFINITY;
    }
    -0.5 * ((2.0 * std::f64::consts::PI * var).ln() + 1.0) + sum_log_jacobian / n
}

/// The candidate (of [`Warping::candidates`]) whose warp likelihood is largest,
/// from summed contributions laid out as [`warp_contribution`] makes them.
pub fn choose_warping(
    candidates: &[OutputWarping],
    sums: &[f64],
) -> Result<OutputWarping, AlgorithmError> {
    if candidates.is_empty() {
        return Err(crate::error::config("warping", "no candidate warping"));
    }
    if sums.len() != 1 + 3 * candidates.len() {
        return Err(crate::error::config(
            "warping",
            format!(
                "expected {} sums for {} candidates, got {}",
                1 + 3 * candidates.len(),
                candidates.len(),
                sums.len()
            ),
        ));
    }
    let n = sums[0];
    let ll: Vec<f64> = (0..candidates.len())
        .map(|i| warp_log_likelihood(n, sums[1 + 3 * i], sums[2 + 3 * i], sums[3 + 3 * i]))
        .collect();
    let best = ll.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Near-ties (e.g. every large scale is linear to rounding) go to the first
    // candidate within WARP_TIE of the best, so the channel's fixed-point
    // rounding cannot flip the choice between practically equal warpings.
    let chosen = ll.iter().position(|v| *v >= best - WARP_TIE).unwrap_or(0);
    Ok(candidates[chosen])
}

/// The chosen warping and the output scaling of the values it warps, from the
/// same sums: `(n, Σw, Σw²)` of the chosen candidate are the statistics of
/// [`OutputScaling::from_sums`].
pub fn choose_warping_and_scaling(
    candidates: &[OutputWarping],
    sums: &[f64],
) -> Result<(OutputWarping, OutputScaling), AlgorithmError> {
    let warp = choose_warping(candidates, sums)?;
    let i = candidates.iter().position(|w| *w == warp).unwrap_or(0);
    let scaling = OutputScaling::from_sums(&[sums[0], sums[1 + 3 * i], sums[2 + 3 * i]])?;
    Ok((warp, scaling))
}

/// One data set's contribution to [`choose_warping`]: `n`, then for every
/// candidate `(Σw, Σw², Σ log w')`, all divided by `n_max`.
pub fn warp_contribution(candidates: &[OutputWarping], utilities: &[f64], n_max: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(1 + 3 * candidates.len());
    out.push(utilities.len() as f64 / n_max);
    for w in candidates.iter().copied() {
        let (mut s, mut s2, mut j) = (0.0, 0.0, 0.0);
        for u in utilities {
            let v = w.apply(*u);
            s += v;
            s2 += v * v;
            j += w.log_derivative(*u);
        }
        out.extend([s / n_max, s2 / n_max, j / n_max]);
    }
    out
}

/// The largest utility magnitude `|u|` a member may hold under `warping`
/// with every contribution within `bound` whatever its other values: each
/// per-point term of the sums its statistics average stays within `bound`
/// (the terms of [`magnitude_contribution`] when the setting needs the
/// federation's log-magnitudes, else of [`warp_contribution`] for its
/// candidates). Each sum is divided by `n_max ≥ n`, so it is at most its
/// largest term; the other contributions carry standardised values (and a
/// clipped warping's lie in `[−1, 1]`), bounded for any finite data. At most
/// [`crate::method::VALUE_BOUND_CAP`].
pub fn value_bound(warping: Warping, bound: f64) -> f64 {
    let candidates = if warping.needs_magnitudes() {
        None
    } else {
        match warping.candidates(None) {
            Ok(c) => Some(c),
            Err(_) => return 0.0,
        }
    };
    let fits = |u: f64| {
        [u, -u].into_iter().all(|u| {
            let terms = match &candidates {
                None => magnitude_contribution(&[u], 1.0),
                Some(c) => warp_contribution(c, &[u], 1.0),
            };
            terms.iter().all(|t| t.is_finite() && t.abs() <= bound)
        })
    };
    crate::method::largest_fitting(fits, crate::method::VALUE_BOUND_CAP)
}

/// The federation's output standardisation, from the secure sum of every
/// client's `(n_i, Σu, Σu²)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputScaling {
    /// Mean utility over all clients' data.
    pub mean: f64,
    /// Its standard deviation (1 when the data are constant).
    pub std: f64,
}

impl OutputScaling {
    /// From the summed statistics `(n, Σu, Σu²)` (each divided by the same
    /// public constant, which cancels).
    pub fn from_sums(sums: &[f64]) -> Result<Self, AlgorithmError> {
        let [n, s, s2] = sums else {
            return Err(crate::error::config(
                "statistics",
                format!("expected 3 sums, got {}", sums.len()),
            ));
        };
        if n.is_nan() || *n <= 0.0 {
            return Err(crate::error::config(
                "statistics",
                "no data in the federation",
            ));
        }
        let (mean, var) = mean_and_variance(*n, *s, *s2);
        let std = var.sqrt();
        Ok(Self {
            mean,
            std: if std > 1e-12 { std } else { 1.0 },
        })
    }

    /// `(u − mean) / std`.
    pub fn standardise(&self, u: f64) -> f64 {
        (u - self.mean) / self.std
    }
}

/// Kernel hyper-parameters in log space: `[log ℓ_1..log ℓ_D, log σ_f², log σ_n²]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hyperparameters {
    log: Vec<f64>,
}

impl Hyperparameters {
    /// From natural units.
    pub fn new(
        lengthscales: Vec<f64>,
        signal_variance: f64,
        noise_variance: f64,
    ) -> Result<Self, AlgorithmError> {
        let params = KernelParams::new(lengthscales, signal_variance)?;
        if !(noise_variance.is_finite() && noise_variance > 0.0) {
            return Err(crate::error::config(
                "noise_variance",
                format!("must be finite and positive, got {noise_variance}"),
            ));
        }
        let mut log = params.to_log();
        log.push(noise_variance.ln());
        Ok(Self { log })
    }

    /// From the log vector.
    pub fn from_log(log: Vec<f64>) -> Result<Self, AlgorithmError> {
        if log.len() < 3 || log.iter().any(|v| !v.is_finite()) {
            return Err(crate::error::config(
                "hyperparameters",
                "need finite log length-scales, signal and noise variance",
            ));
        }
        Ok(Self { log })
    }

    /// Sets each `(coordinate, ℓ)` of `held` as that coordinate's
    /// length-scale (`categorical_lengthscale`; a coordinate past the
    /// length-scales is ignored).
    pub fn hold(&mut self, held: &[(usize, f64)]) {
        let dim = self.log.len() - 2;
        for &(d, l) in held {
            if d < dim {
                self.log[d] = l.ln();
            }
        }
    }

    /// The log vector (length-scales, signal variance, noise variance).
    pub fn log(&self) -> &[f64] {
        &self.log
    }

    /// The kernel of `family` with these hyper-parameters.
    pub fn kernel<K: Kernel>(&self, family: &K) -> Result<K, AlgorithmError> {
        let params = KernelParams::from_log(&self.log[..self.log.len() - 1])?;
        Ok(family.with_params(params))
    }

    /// An exact GP's settings with these hyper-parameters: the kernel of
    /// `family`, the noise, and the prior `mean` (its weights fitted by GLS).
    pub fn gp_params<K: Kernel>(
        &self,
        family: &K,
        mean: MeanFunction,
    ) -> Result<ExactGpParams<K>, AlgorithmError> {
        Ok(ExactGpParams::new(self.kernel(family)?)
            .noise_variance(self.noise())
            .mean_function(mean))
    }

    /// Public candidates for the federated maximum-likelihood search: these
    /// values, an isotropic grid (8 length-scales log-spaced over the bounds ×
    /// 4 noise levels, unit signal variance), and log-normal perturbations of
    /// these values (σ = 0.5 per coordinate), clamped to `bounds`, up to `count`.
    pub fn candidates<R: rand::Rng + ?Sized>(
        &self,
        bounds: &HyperBounds,
        count: usize,
        rng: &mut R,
    ) -> Vec<Hyperparameters> {
        use rand_distr::{Distribution, Normal};
        let dim = self.log.len() - 2;
        let clamp_log = |v: f64, (lo, hi): (f64, f64)| v.clamp(lo.ln(), hi.ln());
        let bound_of = |i: usize| {
            if i < dim {
                bounds.lengthscale
            } else if i == dim {
                bounds.signal_variance
            } else {
                bounds.noise_variance
            }
        };
        let mut out = vec![self.clone()];
        let (l_lo, l_hi) = (bounds.lengthscale.0.ln(), bounds.lengthscale.1.ln());
        let (n_lo, n_hi) = (bounds.noise_variance.0.ln(), bounds.noise_variance.1.ln());
        for i in 0..8 {
            for j in 0..4 {
                let l = l_lo + (l_hi - l_lo) * (i as f64 + 0.5) / 8.0;
                let n = n_lo + (n_hi - n_lo) * j as f64 / 4.0;
                let mut log = vec![l; dim];
                log.push(clamp_log(0.0, bounds.signal_variance));
                log.push(n);
                out.push(Self { log });
            }
        }
        let step = Normal::new(0.0, 0.5).expect("σ = 0.5 is valid");
        while out.len() < count {
            let log = self
                .log
                .iter()
                .enumerate()
                .map(|(i, v)| clamp_log(v + step.sample(rng), bound_of(i)))
                .collect();
            out.push(Self { log });
        }
        out.truncate(count.max(1));
        out
    }

    /// The signal variance `σ_f²`.
    pub fn signal_variance(&self) -> f64 {
        self.log[self.log.len() - 2].exp()
    }

    /// The noise variance `σ_n²`.
    pub fn noise(&self) -> f64 {
        self.log[self.log.len() - 1].exp()
    }
}

/// How a local summary is normalised for the channel. With `C = Σ_{D_i D_i|S}`,
/// `σ_n² C⁻¹ ⪯ I`, so `σ_n²/σ_f⁴ · K̇_SS` has entries at most `n_i` and
/// `σ_n²/σ_f² · ṁ_S` at most `n_i · max|y|`; dividing also by the public cap
/// `n_max` on a client's data keeps every entry near 1 whatever the noise level,
/// so the fixed-point channel's precision goes where the values are. The
/// terms of the GLS mean ([`LocalMeanTerms`]) go likewise: `a_i` is `ṁ_S` of
/// all-ones outputs (`σ_n²/σ_f²`), and `b_i = 1ᵀC⁻¹1 ≤ n_i/σ_n²` and
/// `|c_i| = |1ᵀC⁻¹y| ≤ n_i max|y|/σ_n²` take `σ_n²/n_max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SummaryScaling {
    support: usize,
    m_factor: f64,
    k_factor: f64,
    t_factor: f64,
}

impl SummaryScaling {
    /// For support size `|S|`, the federation's hyper-parameters and `n_max`.
    pub fn new(support: usize, hyper: &Hyperparameters, n_max: f64) -> Self {
        let (sf2, sn2) = (hyper.signal_variance(), hyper.noise());
        Self {
            support,
            m_factor: sn2 / (sf2 * n_max),
            k_factor: sn2 / (sf2 * sf2 * n_max),
            t_factor: sn2 / n_max,
        }
    }

    /// The packed, normalised GLS mean terms a client sends after its summary.
    pub fn mean_terms_to_channel(&self, terms: &LocalMeanTerms) -> Vec<f64> {
        let mut packed = terms.pack();
        for (i, v) in packed.iter_mut().enumerate() {
            *v *= self.term_factor(i);
        }
        packed
    }

    /// The summed GLS mean terms back in model units.
    pub fn mean_terms_from_channel(&self, sum: &[f64]) -> Result<LocalMeanTerms, AlgorithmError> {
        let unscaled: Vec<f64> = sum
            .iter()
            .enumerate()
            .map(|(i, v)| v / self.term_factor(i))
            .collect();
        Ok(LocalMeanTerms::unpack(self.support, &unscaled)?)
    }

    /// The factor of entry `i` of a packed summary: `ṁ_S`, then `K̇_SS`.
    fn summary_factor(&self, i: usize) -> f64 {
        if i < self.support {
            self.m_factor
        } else {
            self.k_factor
        }
    }

    /// The factor of entry `i` of packed mean terms: `a`, then `b` and `c`.
    fn term_factor(&self, i: usize) -> f64 {
        if i < self.support {
            self.m_factor
        } else {
            self.t_factor
        }
    }

    /// The packed, normalised vector a client sends.
    pub fn to_channel(&self, summary: &LocalSummary) -> Vec<f64> {
        let mut packed = summary.pack();
        for (i, v) in packed.iter_mut().enumerate() {
            *v *= self.summary_factor(i);
        }
        packed
    }

    /// The summed summary back in model units.
    pub fn from_channel(&self, sum: &[f64]) -> Result<LocalSummary, AlgorithmError> {
        if sum.len() != packed_len(self.support) {
            return Err(crate::error::config(
                "summary",
                format!(
                    "expected {} values for |S| = {}, got {}",
                    packed_len(self.support),
                    self.support,
                    sum.len()
                ),
            ));
        }
        let unscaled: Vec<f64> = sum
            .iter()
            .enumerate()
            .map(|(i, v)| v / self.summary_factor(i))
            .collect();
        Ok(LocalSummary::unpack(self.support, &unscaled)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn auto_is_standardisation_alone_and_clipped_in_a_federation() {
        assert_eq!(Warping::Auto.for_lone_agent(), Warping::None);
        assert_eq!(Warping::Auto.fixed(), None);
        let magnitudes = magnitude_contribution(&[-1e3, 2.0, 40.0], 1.0);
        assert_eq!(
            Warping::Auto.candidates(Some(&magnitudes)).unwrap(),
            Warping::Clipped.candidates(Some(&magnitudes)).unwrap()
        );
        assert!(Warping::Auto.candidates(None).is_err());
        assert_eq!(
            Warping::SignedLog.candidates(None).unwrap(),
            vec![OutputWarping::SignedLog]
        );
        for w in [
            Warping::None,
            Warping::SignedLog,
            Warping::Likelihood,
            Warping::Clipped,
        ] {
            assert_eq!(w.for_lone_agent(), w);
        }
    }

    #[test]
    fn scaling_from_sums_is_the_pooled_mean_and_std() {
        // Two clients: {1, 2} and {3}: mean 2, population variance 2/3.
        let s = OutputScaling::from_sums(&[3.0 / 10.0, 6.0 / 10.0, 14.0 / 10.0]).unwrap();
        assert!((s.mean - 2.0).abs() < 1e-15);
        assert!((s.std - (2.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!(OutputScaling::from_sums(&[0.0, 0.0, 0.0]).is_err());
        assert!(OutputScaling::from_sums(&[1.0, 2.0]).is_err());
    }

    #[test]
    fn scaled_log_is_signed_log_at_scale_one_and_linear_for_large_scales() {
        for u in [-1e6, -3.0, 0.0, 0.5, 42.0, 1e9] {
            let a = OutputWarping::ScaledLog(1.0).apply(u);
            assert!((a - OutputWarping::SignedLog.apply(u)).abs() < 1e-15);
            let b = OutputWarping::ScaledLog(1e12).apply(u) * 1e12;
            // s·ln(1 + |u|/s) = |u| − u²/(2s) + …
            assert!((b - u).abs() <= 1e-9 * u.abs().max(1.0) + 0.51 * (u * u) / 1e12);
        }
        // w'(u) = 1/(s + |u|).
        let w = OutputWarping::ScaledLog(10.0);
        let h = 1e-6;
        let fd = (w.apply(3.0 + h) - w.apply(3.0 - h)) / (2.0 * h);
        assert!((fd.ln() - w.log_derivative(3.0)).abs() < 1e-8);
        assert!((w.log_derivative(-3.0) + 13f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn warp_likelihood_is_the_normal_likelihood_with_its_jacobian() {
        // Identity warp of {0, 2}: mean 1, variance 1, so ℓ/n = −(ln 2π + 1)/2.
        let ll = warp_log_likelihood(2.0, 2.0, 4.0, 0.0);
        assert!((ll + 0.5 * ((2.0 * std::f64::consts::PI).ln() + 1.0)).abs() < 1e-15);
        assert_eq!(warp_log_likelihood(0.0, 0.0, 0.0, 0.0), f64::NEG_INFINITY);
        assert_eq!(warp_log_likelihood(2.0, 2.0, 2.0, 0.0), f64::NEG_INFINITY);
        // Log-normal data choose a logarithm (small s); normal data far from
        // zero choose a (nearly) linear warp (large s).
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let z: Vec<f64> = (0..200)
            .map(|_| Normal::new(0.0, 2.0).unwrap().sample(&mut rng))
            .collect();
        let lognormal: Vec<f64> = z.iter().map(|v| -(v.exp())).collect();
        let normal: Vec<f64> = z.iter().map(|v| 2500.0 * v).collect();
        let scales = Warping::Likelihood.candidates(None).unwrap();
        let pick =
            |u: &[f64]| choose_warping(&scales, &warp_contribution(&scales, u, 50.0)).unwrap();
        match pick(&lognormal) {
            OutputWarping::ScaledLog(s) => assert!(s <= 1.0, "{s}"),
            w => panic!("{w:?}"),
        }
        match pick(&normal) {
            OutputWarping::ScaledLog(s) => assert!(s >= 1e4, "{s}"),
            w => panic!("{w:?}"),
        }
        let signed_log = [OutputWarping::SignedLog];
        assert_eq!(
            choose_warping(&signed_log, &warp_contribution(&signed_log, &normal, 1.0)).unwrap(),
            OutputWarping::SignedLog
        );
        assert!(choose_warping(&scales, &[1.0, 2.0]).is_err());
        assert!(choose_warping(&[], &[1.0]).is_err());
    }

    #[test]
    fn clip_threshold_is_mu_plus_three_sigma_of_the_log_magnitudes() {
        // ℓ = ln(1 + |u|) of {e − 1, −(e³ − 1)} is {1, 3}: μ = 2, σ = 1, so
        // T = e^{2 + 3} − 1, whatever the divisor of the sums.
        let u = [std::f64::consts::E - 1.0, -(3f64.exp() - 1.0)];
        let t = clip_threshold(&magnitude_contribution(&u, 7.0)).unwrap();
        assert!((t - 5f64.exp_m1()).abs() < 1e-12 * t, "{t}");
        // One magnitude: T is that magnitude; all zeros: T = 1.
        let t = clip_threshold(&magnitude_contribution(&[-250.0, 250.0, 250.0], 1.0)).unwrap();
        assert!((t - 250.0).abs() < 1e-9, "{t}");
        assert_eq!(
            clip_threshold(&magnitude_contribution(&[0.0, 0.0], 1.0)).unwrap(),
            1.0
        );
        // No data, a wrong length, a non-finite sum: refused, naming the field.
        for bad in [&[0.0, 0.0, 0.0][..], &[1.0, 2.0], &[1.0, f64::NAN, 1.0]] {
            let e = clip_threshold(bad).unwrap_err().to_string();
            assert!(e.contains("warping"), "{e}");
        }
        // Finite for the largest finite utilities.
        let t = clip_threshold(&magnitude_contribution(&[f64::MAX, 1.0], 1.0)).unwrap();
        assert!(t.is_finite());
        assert!(Warping::Clipped.candidates(None).is_err());
        assert!(Warping::Clipped.needs_magnitudes());
        assert!(!Warping::Likelihood.needs_magnitudes());
    }

    #[test]
    fn clipped_warping_is_linear_inside_and_bounded_outside() {
        let w = OutputWarping::Clipped(1e4);
        assert_eq!(w.apply(2500.0), 0.25);
        assert_eq!(w.apply(-1e9), -1.0);
        assert_eq!(w.apply(1e9), 1.0);
        // Standardisation removes 1/T: the standardised values equal those of
        // the raw utilities wherever none is clipped.
        let u = [-3000.0, 120.0, 450.0, 9000.0];
        let raw =
            OutputScaling::from_sums(&warp_contribution(&[OutputWarping::None], &u, 1.0)[..3])
                .unwrap();
        let sums = warp_contribution(&[w], &u, 1.0);
        let clipped = OutputScaling::from_sums(&sums[..3]).unwrap();
        for v in u {
            let a = raw.standardise(v);
            let b = clipped.standardise(w.apply(v));
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        assert!((w.log_derivative(5.0) + 1e4f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn signed_log_is_monotone_and_odd() {
        let w = OutputWarping::SignedLog;
        assert_eq!(w.apply(0.0), 0.0);
        assert!((w.apply(std::f64::consts::E - 1.0) - 1.0).abs() < 1e-15);
        assert_eq!(w.apply(-5.0), -w.apply(5.0));
        assert!(w.apply(1e10) > w.apply(1e9));
    }

    #[test]
    fn summary_scaling_round_trips() {
        let hyper = Hyperparameters::new(vec![0.5, 0.5], 2.0, 0.01).unwrap();
        let scaling = SummaryScaling::new(2, &hyper, 50.0);
        let summary = LocalSummary {
            m_s: DVector::from_vec(vec![3.0, -1.0]),
            k_ss: DMatrix::from_row_slice(2, 2, &[4.0, 1.5, 1.5, 2.0]),
        };
        let sent = scaling.to_channel(&summary);
        assert_eq!(sent.len(), packed_len(2));
        assert!((sent[0] - 3.0 * 0.01 / (2.0 * 50.0)).abs() < 1e-18);
        let back = scaling.from_channel(&sent).unwrap();
        assert!((back.m_s - summary.m_s).amax() < 1e-12);
        assert!((back.k_ss - summary.k_ss).amax() < 1e-12);
        assert!(scaling.from_channel(&sent[1..]).is_err());
    }
}
