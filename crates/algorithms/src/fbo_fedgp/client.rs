//! The client role of FBO-FedGP: one institution's data, its local GP, and the
//! vectors it contributes to the channel (paper 004, Alg. 2).

use super::model::{magnitude_contribution, warp_contribution, Warping};
use super::{Hyperparameters, OutputScaling, OutputWarping};
use crate::surrogate::{AcquisitionStep, Projected, Surrogate};
use crate::AlgorithmError;
use fedhe_bo::clustering::local_kmeans;
use fedhe_bo::trust_region::TrustRegion;
use fedhe_crypto::MemberId;
use fedhe_gp::exact::MeanFunction;
use fedhe_gp::hyperfit::{fit_hyperparameters, FitConfig};
use fedhe_gp::sparse::{packed_len, Dpitc, LocalMeanTerms, LocalSummary};
use fedhe_gp::trend::{QuadraticTrend, TrendSums};
use fedhe_gp::{ExactGp, ExactGpParams, Kernel};
use fedhe_tasks::{Evaluation, Space, Task};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The clamp on a client's per-point log-likelihood contributions.
pub const LML_CLAMP: f64 = 500.0;

/// The distance within which [`Client::has_evaluated_near`] counts a point
/// as evaluated (1e-6 of the unit cube's side).
const NEAR: f64 = 1e-6;

/// How many of a client's best points seed the acquisition search.
const ANCHORS: usize = 5;

/// One institution: its private data `D_i` (inputs in the unit cube), its RNG,
/// and the best value it has found.
#[derive(Debug, Clone)]
pub struct Client {
    id: MemberId,
    index: usize,
    x: Vec<Vec<f64>>,
    observed: Vec<f64>,
    /// The best noise-free value evaluated and the index of its point in `x`.
    best_noise_free: Option<(f64, usize)>,
    rng: ChaCha8Rng,
    /// The trust region of its own steps, once it takes one in a region
    /// (`trust_region = true`).
    trust_region: Option<TrustRegion>,
}

impl Client {
    /// Client number `index` of the federation (which of a task's per-client
    /// objectives it evaluates), without data, with its own seeded RNG.
    pub fn new(id: MemberId, index: usize, seed: impl Into<crate::roster::PrivateSeed>) -> Self {
        Self {
            id,
            index,
            x: Vec::new(),
            observed: Vec::new(),
            best_noise_free: None,
            rng: seed.into().rng(),
            trust_region: None,
        }
    }

    /// The member identity.
    pub fn id(&self) -> &MemberId {
        &self.id
    }

    /// Which client of the federation this is (its position among the members).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of points in `D_i`.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether `D_i` is empty.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// The best noise-free value among this client's evaluations.
    pub fn best(&self) -> Option<f64> {
        self.best_noise_free.map(|(value, _)| value)
    }

    /// The best noise-free value among this client's evaluations and its
    /// point (unit cube).
    pub fn best_point(&self) -> Option<(f64, &[f64])> {
        self.best_noise_free
            .map(|(value, at)| (value, self.x[at].as_slice()))
    }

    /// The client's RNG (its private randomness: initial points, schedule draws,
    /// acquisition candidates, objective noise).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// Evaluates the task at `x` (unit cube; its [`Task::canonical`] point
    /// when the task has a typed space) and adds the point to `D_i`
    /// (Alg. 2, line 25).
    pub fn evaluate(&mut self, task: &Task, x: Vec<f64>) -> Result<Evaluation, AlgorithmError> {
        let x = task.canonical(x);
        let e = task.evaluate(self.index, &x, &mut self.rng)?;
        self.record(task, x, &e);
        Ok(e)
    }

    /// Adds the point `x`, evaluated as `e` (by this client or, for a pooled
    /// data set, by another), to `D_i`.
    pub fn record(&mut self, task: &Task, x: Vec<f64>, e: &Evaluation) {
        self.x.push(x);
        self.observed.push(e.observed);
        if self
            .best_noise_free
            .is_none_or(|(b, _)| task.better(e.noise_free, b))
        {
            self.best_noise_free = Some((e.noise_free, self.x.len() - 1));
        }
    }

    /// Adds every point of `other`'s data set to this one (`pooled-bo`'s
    /// pooled data set, a simulation reference without privacy).
    pub fn absorb(&mut self, task: &Task, other: &Client) {
        let offset = self.x.len();
        for (x, observed) in other.x.iter().zip(&other.observed) {
            self.x.push(x.clone());
            self.observed.push(*observed);
        }
        if let Some((b, at)) = other.best_noise_free {
            if self
                .best_noise_free
                .is_none_or(|(mine, _)| task.better(b, mine))
            {
                self.best_noise_free = Some((b, offset + at));
            }
        }
    }

    /// `count` initial points uniform in the sub-box `[lo, hi]` of the unit cube
    /// (Alg. 2, line 2).
    pub fn initial_design(
        &mut self,
        task: &Task,
        count: usize,
        lo: &[f64],
        hi: &[f64],
    ) -> Result<(), AlgorithmError> {
        for _ in 0..count {
            let x: Vec<f64> = lo
                .iter()
                .zip(hi)
                .map(|(l, h)| l + (h - l) * self.rng.gen::<f64>())
                .collect();
            self.evaluate(task, x)?;
        }
        Ok(())
    }

    /// The warped utilities `w(±y)` the models are fitted to.
    fn utilities(&self, task: &Task, warping: OutputWarping) -> Vec<f64> {
        self.observed
            .iter()
            .map(|y| warping.apply(task.utility(*y)))
            .collect()
    }

    /// The contribution to the output statistics: `(n_i, Σu, Σu²) / n_max`, where
    /// `n_max` is the public cap on a client's data (it keeps every entry small
    /// for the fixed-point channel).
    pub fn statistics_contribution(
        &self,
        task: &Task,
        warping: OutputWarping,
        n_max: f64,
    ) -> Vec<f64> {
        let u = self.utilities(task, warping);
        vec![
            u.len() as f64 / n_max,
            u.iter().sum::<f64>() / n_max,
            u.iter().map(|v| v * v).sum::<f64>() / n_max,
        ]
    }

    /// The contribution to the choice of the output warping among
    /// `candidates` (and the output statistics of every candidate): see
    /// [`super::model::warp_contribution`].
    pub fn warp_contribution(
        &self,
        task: &Task,
        candidates: &[OutputWarping],
        n_max: f64,
    ) -> Vec<f64> {
        warp_contribution(
            candidates,
            &self.utilities(task, OutputWarping::None),
            n_max,
        )
    }

    /// The contribution to the federation's log-magnitudes, which a clipped
    /// warping's threshold needs: see [`super::model::magnitude_contribution`].
    pub fn magnitude_contribution(&self, task: &Task, n_max: f64) -> Vec<f64> {
        magnitude_contribution(&self.utilities(task, OutputWarping::None), n_max)
    }

    /// The warping `setting` chooses on `D_i` alone and the standardisation of
    /// the values it warps (a lone agent's choice; computed on the client,
    /// never sent).
    pub fn own_warping(
        &self,
        task: &Task,
        setting: Warping,
    ) -> Result<(OutputWarping, OutputScaling), AlgorithmError> {
        let magnitudes = setting
            .needs_magnitudes()
            .then(|| self.magnitude_contribution(task, 1.0));
        let candidates = setting.candidates(magnitudes.as_deref())?;
        super::model::choose_warping_and_scaling(
            &candidates,
            &self.warp_contribution(task, &candidates, 1.0),
        )
    }

    /// The standardisation of `D_i` by its own mean and standard deviation: what
    /// a GP fitted on `D_i` alone uses (independent BO, and FBO-FedGP's local
    /// steps with [`super::LocalScaling::Own`]). Computed on the client, never sent.
    pub fn own_scaling(
        &self,
        task: &Task,
        warping: OutputWarping,
    ) -> Result<OutputScaling, AlgorithmError> {
        OutputScaling::from_sums(&self.statistics_contribution(task, warping, 1.0))
    }

    /// `D_i` as matrices, outputs standardised by `scaling`.
    pub fn data(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
    ) -> (DMatrix<f64>, DVector<f64>) {
        let dim = task.dim();
        let x = DMatrix::from_fn(self.x.len(), dim, |i, j| self.x[i][j]);
        let u = self.utilities(task, warping);
        let y = DVector::from_iterator(u.len(), u.iter().map(|v| scaling.standardise(*v)));
        (x, y)
    }

    /// The client's best standardised utility (the EI / PI incumbent).
    pub fn incumbent(&self, task: &Task, warping: OutputWarping, scaling: &OutputScaling) -> f64 {
        self.utilities(task, warping)
            .into_iter()
            .map(|v| scaling.standardise(v))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The hyper-parameters fitted on `D_i` alone (log space; MAP under
    /// `fit`'s prior, else ML), started from `start` (e.g. the current ones,
    /// [`Hyperparameters::gp_params`]): a lone agent's own fit. Never sent.
    /// Also the fitted model's Bayesian information criterion,
    /// `log p(y | θ̂, β̂) − ½·k·log n` with `k` the prior mean's weights
    /// (Schwarz 1978; the hyper-parameters count alike for every mean, so
    /// they are left out): what [`PriorMean::Bic`](super::PriorMean::Bic)
    /// compares.
    pub fn fit_hyperparameters<K: Kernel>(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        start: &ExactGpParams<K>,
        fit: &FitConfig,
    ) -> Result<(Vec<f64>, f64), AlgorithmError> {
        let (x, y) = self.data(task, warping, scaling);
        let gp = fit_hyperparameters(start, &x, &y, fit)?;
        let mut log = gp.params().kernel().params().to_log();
        log.push(gp.params().get_noise_variance().ln());
        let weights = gp.mean_function().basis_len(x.ncols()) as f64;
        let bic = gp.log_marginal_likelihood() - 0.5 * weights * (x.nrows() as f64).ln();
        Ok((log, bic))
    }

    /// The log marginal likelihood of `D_i` under each candidate, divided by
    /// `n_max` and clamped to `±LML_CLAMP` so the vector fits the channel (a
    /// candidate whose covariance cannot be factorised gets the floor): the
    /// client's contribution to the federated likelihood `Σ_i log p(y_i | θ)`.
    pub fn log_likelihoods<K: Kernel>(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        candidates: &[Hyperparameters],
        kernel: &K,
        n_max: f64,
    ) -> Vec<f64> {
        let (x, y) = self.data(task, warping, scaling);
        candidates
            .iter()
            .map(|h| {
                let lml = h.kernel(kernel).ok().and_then(|k| {
                    ExactGpParams::new(k)
                        .noise_variance(h.noise())
                        .fit(&x, &y)
                        .ok()
                        .map(|gp| gp.log_marginal_likelihood())
                });
                match lml {
                    Some(v) if v.is_finite() => (v / n_max).clamp(-LML_CLAMP, LML_CLAMP),
                    _ => -LML_CLAMP,
                }
            })
            .collect()
    }

    /// This client's terms of the global dPITC evidence under each candidate
    /// on `support` ([`fedhe_gp::sparse::Dpitc::local_evidence`]), each
    /// scaled for the channel: the local summary by [`super::SummaryScaling`]
    /// for that candidate, then `σ_n² rᵀΛ⁻¹r / n_max` (at most the largest
    /// squared standardised value, as `Λ ⪰ σ_n² I`), `log det Λ / n_max` and
    /// `|D_i| / n_max`. A candidate whose model cannot be built on this
    /// client's data contributes `LML_CLAMP` as its log-determinant term and
    /// zeros elsewhere, which sinks that candidate's summed evidence (as
    /// [`Client::log_likelihoods`] gives such a candidate its floor).
    #[allow(clippy::too_many_arguments)]
    pub fn sparse_evidence<K: Kernel>(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        candidates: &[Hyperparameters],
        kernel: &K,
        support: &DMatrix<f64>,
        n_max: f64,
    ) -> Vec<f64> {
        let (x, y) = self.data(task, warping, scaling);
        let s = support.nrows();
        let per = packed_len(s) + 3;
        let mut out = Vec::with_capacity(per * candidates.len());
        for h in candidates {
            let terms = h.kernel(kernel).ok().and_then(|k| {
                let model = Dpitc::new(k, h.noise(), 0.0, support.clone()).ok()?;
                let e = model.local_evidence(&x, &y).ok()?;
                let mut v = super::SummaryScaling::new(s, h, n_max).to_channel(&e.summary);
                v.extend([
                    h.noise() * e.quadratic / n_max,
                    e.log_det / n_max,
                    e.points as f64 / n_max,
                ]);
                Some(v)
            });
            match terms {
                Some(v) if v.iter().all(|x| x.is_finite()) => out.extend(v),
                _ => {
                    out.extend(std::iter::repeat_n(0.0, per));
                    let log_det_slot = out.len() - 2;
                    out[log_det_slot] = LML_CLAMP;
                }
            }
        }
        out
    }

    /// The local exact GP on `D_i` with the given hyper-parameters and prior
    /// `mean`.
    pub fn local_gp<K: Kernel>(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        hyper: &Hyperparameters,
        kernel: &K,
        mean: MeanFunction,
    ) -> Result<ExactGp<K>, AlgorithmError> {
        let (x, y) = self.data(task, warping, scaling);
        Ok(hyper.gp_params(kernel, mean)?.fit(&x, &y)?)
    }

    /// The local summary `L_i` (eqs. 6-7), packed and normalised for the channel
    /// by [`super::SummaryScaling`]; with `mean_terms`, followed by the terms
    /// of the global model's GLS constant mean (`|S| + 2` values,
    /// [`Dpitc::gls_mean`]), which a federation fitting its constant mean
    /// (`prior_mean = "constant"`) sends in the same sum.
    ///
    /// With `trend` (`global_trend = "quadratic"` or `"quadratic-spaced"`) the summary is of the
    /// residuals `y − m(x)` from it.
    #[allow(clippy::too_many_arguments)]
    pub fn summary_contribution<K: Kernel>(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        model: &Dpitc<K>,
        summary_scaling: &super::SummaryScaling,
        mean_terms: bool,
        trend: Option<&QuadraticTrend>,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let (x, mut y) = self.data(task, warping, scaling);
        if let Some(trend) = trend {
            for (v, point) in y.iter_mut().zip(&self.x) {
                *v -= trend.value(point);
            }
        }
        let summary: LocalSummary = model.local_summary(&x, &y)?;
        let mut sent = summary_scaling.to_channel(&summary);
        if mean_terms {
            let terms: LocalMeanTerms = model.local_mean_terms(&x, &y)?;
            sent.extend(summary_scaling.mean_terms_to_channel(&terms));
        }
        Ok(sent)
    }

    /// This client's output statistics for a private study:
    /// `Σ_j (w_j / W, (w_j / W)²) / n_max` over its warped utilities `w_j`,
    /// each clamped to `[−W, W]`, so with at most `n_max` points the first
    /// lies in `[−1, 1]` and the second in `[0, 1]` whatever its data. The
    /// count is public (the schedule fixes it) and not sent.
    pub fn clipped_statistics_contribution(
        &self,
        task: &Task,
        warping: OutputWarping,
        bound: f64,
        n_max: f64,
    ) -> Vec<f64> {
        let (mut s, mut s2) = (0.0, 0.0);
        for w in self.utilities(task, warping) {
            let v = w.clamp(-bound, bound) / bound;
            s += v;
            s2 += v * v;
        }
        vec![s / n_max, s2 / n_max]
    }

    /// This client's least-squares sums of the global quadratic trend
    /// (`fedhe_gp::trend::TrendSums`, divided by `n_max`): over its points
    /// whose warped utility is not clipped, the standardised values.
    /// Clipped values are left out: a bowl flattened at the clip is not a
    /// quadratic, and the trend is clamped there instead.
    pub fn trend_contribution(
        &self,
        task: &Task,
        warping: OutputWarping,
        scaling: &OutputScaling,
        n_max: f64,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let (mut xs, mut zs) = (Vec::new(), Vec::new());
        for (x, u) in self.unclipped(task, warping) {
            xs.push(x);
            zs.push(scaling.standardise(warping.apply(u)));
        }
        Ok(TrendSums::from_data(task.dim(), &xs, &zs, n_max)?
            .packed()
            .to_vec())
    }

    /// How many of this client's points [`Self::trend_contribution`] sums
    /// (the count a spaced trend's release rule adds up first).
    pub fn unclipped_count(&self, task: &Task, warping: OutputWarping) -> usize {
        self.unclipped(task, warping).count()
    }

    /// This client's points and utilities that `warping` does not clip.
    fn unclipped<'s>(
        &'s self,
        task: &'s Task,
        warping: OutputWarping,
    ) -> impl Iterator<Item = (&'s [f64], f64)> + 's {
        self.x
            .iter()
            .zip(&self.observed)
            .map(|(x, y)| (x.as_slice(), task.utility(*y)))
            .filter(move |(_, u)| match warping {
                OutputWarping::Clipped(t) => u.abs() < t,
                _ => true,
            })
    }

    /// Per-cluster coordinate sums and counts of `D_i` for the current centres,
    /// divided by `n_max` (one step of secure federated k-means).
    pub fn kmeans_contribution(&self, centres: &DMatrix<f64>, n_max: f64) -> Vec<f64> {
        let (k, d) = (centres.nrows(), centres.ncols());
        let mut out = vec![0.0; k * (d + 1)];
        for x in &self.x {
            let nearest = (0..k)
                .map(|r| {
                    let d2: f64 = (0..d).map(|j| (x[j] - centres[(r, j)]).powi(2)).sum();
                    (r, d2)
                })
                .fold((0, f64::INFINITY), |b, c| if c.1 < b.1 { c } else { b })
                .0;
            for j in 0..d {
                out[nearest * d + j] += x[j] / n_max;
            }
            out[k * d + nearest] += 1.0 / n_max;
        }
        out
    }

    /// The client's local centres (paper 004, Alg. 1, LOCALCLUSTERING), sent in
    /// plaintext in the paper's protocol.
    pub fn local_centres(
        &mut self,
        k: usize,
        tol: f64,
        max_iters: usize,
    ) -> Result<DMatrix<f64>, AlgorithmError> {
        let d = self.x.first().map_or(0, Vec::len);
        let points = DMatrix::from_fn(self.x.len(), d, |i, j| self.x[i][j]);
        let k = k.min(points.nrows()).max(1);
        Ok(local_kmeans(&points, k, tol, max_iters, &mut self.rng)?.centres)
    }

    /// Whether this client has evaluated within 1e-6 (Euclidean, in the
    /// unit cube) of `x`.
    pub fn has_evaluated_near(&self, x: &[f64]) -> bool {
        self.x
            .iter()
            .any(|p| p.iter().zip(x).map(|(a, b)| (a - b).powi(2)).sum::<f64>() < NEAR * NEAR)
    }

    /// This client's `count` best points (by observed value).
    pub fn best_points(&self, task: &Task, count: usize) -> Vec<Vec<f64>> {
        let mut order: Vec<usize> = (0..self.x.len()).collect();
        order.sort_by(|a, b| {
            task.utility(self.observed[*b])
                .total_cmp(&task.utility(self.observed[*a]))
        });
        order
            .into_iter()
            .take(count)
            .map(|i| self.x[i].clone())
            .collect()
    }

    /// The next point: the acquisition maximiser on `surrogate` (Alg. 2, lines
    /// 16-17 for the local GP, 22-23 for the global posterior), searched
    /// uniformly and around this client's best points. With
    /// `trust_region` (the local GP's log length-scales) it is searched in
    /// this client's trust region instead of the whole cube (TuRBO-1,
    /// `fedhe_bo::trust_region`): a box around its best point, its sides
    /// weighted by those length-scales, grown or shrunk by whether the
    /// client's best improved since its previous step in the region.
    /// `also_from` is one more point the search starts from (a global
    /// step's trend maximiser).
    #[allow(clippy::too_many_arguments)]
    pub fn propose(
        &mut self,
        task: &Task,
        step: &AcquisitionStep,
        surrogate: &dyn Surrogate,
        t: usize,
        incumbent: f64,
        trust_region: Option<&[f64]>,
        also_from: Option<Vec<f64>>,
    ) -> Result<Vec<f64>, AlgorithmError> {
        // A typed space: the acquisition reads the model at the point that
        // stands for each candidate's values (issue 46).
        let projected = Projected::maybe(surrogate, task.space());
        let surrogate = projected.get();
        let mut anchors = self.best_points(task, ANCHORS);
        anchors.extend(also_from);
        let best = self
            .observed
            .iter()
            .map(|v| task.utility(*v))
            .reduce(f64::max);
        let (Some(log_lengthscales), Some(centre), Some(best)) =
            (trust_region, anchors.first(), best)
        else {
            return step.propose(surrogate, t, incumbent, &anchors, &mut self.rng);
        };
        let region = self
            .trust_region
            .get_or_insert_with(|| TrustRegion::new(centre.len()));
        region.observe(best);
        // A categorical's choice is searched whole, inside the region or not.
        let free = task
            .space()
            .map_or_else(|| vec![false; centre.len()], Space::one_hot);
        let bounds = region.bounds_with_free(centre, Some(log_lengthscales), &free)?;
        // The search starts around the best points inside the region (the
        // centre, the best, always is).
        let inside: Vec<Vec<f64>> = anchors
            .iter()
            .filter(|a| bounds.contains(a))
            .cloned()
            .collect();
        step.propose_in(surrogate, t, incumbent, &inside, &bounds, &mut self.rng)
    }

    /// `size` points by local penalisation on `surrogate`
    /// ([`AcquisitionStep::propose_batch`]), searched around this client's
    /// best points and `sample` uniform ones (`pooled-bo`'s batch).
    #[allow(clippy::too_many_arguments)]
    pub fn propose_batch(
        &mut self,
        task: &Task,
        step: &AcquisitionStep,
        surrogate: &dyn Surrogate,
        t: usize,
        incumbent: f64,
        size: usize,
        sample: usize,
        optimism: f64,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let projected = Projected::maybe(surrogate, task.space());
        let anchors = self.best_points(task, ANCHORS);
        step.propose_batch(
            projected.get(),
            t,
            incumbent,
            &anchors,
            size,
            sample,
            optimism,
            &mut self.rng,
        )
    }
}
