//! The global model's hyper-parameters and warping: the federated refit,
//! the warping candidates, and the surrogate's error on held-out points.

use super::*;

impl<'a, K: Kernel> Federation<'a, K> {
    /// A refit round, one secure sum: every client's warp contribution among
    /// `warps` (from [`Self::warp_candidates`] on the current data; the
    /// output statistics of every candidate warping, see
    /// [`super::super::model::warp_contribution`]) and, with federated
    /// hyper-parameters, its log-likelihoods of the public candidates around
    /// the current values (under the current warping and scaling). The
    /// warping and scaling follow from the summed statistics; the candidate
    /// with the largest summed likelihood plus the public log prior wins: the
    /// pooled MAP over the candidates, a stochastic search that never reveals
    /// a client's own likelihood or fit.
    ///
    /// With [`HyperLikelihood::Sparse`] the candidates are scored instead by
    /// the evidence of the global dPITC model on `support`
    /// ([`Client::sparse_evidence`], [`sparse_evidences`]).
    pub(super) fn refit(
        &mut self,
        server: &mut Server<'_>,
        warps: &[OutputWarping],
        warp: OutputWarping,
        scaling: &OutputScaling,
        hyper: &Hyperparameters,
        support: &DMatrix<f64>,
    ) -> Result<(OutputWarping, OutputScaling, Hyperparameters), AlgorithmError> {
        let p = self.params;
        let (task, n_max) = (self.task, p.max_points());
        let federated = p.hypers.mode == HyperparameterMode::FederatedMle;
        let sparse = p.hypers.likelihood == HyperLikelihood::Sparse;
        let fit = p.fit_config(task);
        let candidates = if federated {
            let mut all = hyper.candidates(&fit.bounds, p.hypers.candidates, &mut self.public);
            for c in &mut all {
                c.hold(&fit.held);
            }
            all
        } else {
            Vec::new()
        };
        let family = &self.family;
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                let mut v = c.warp_contribution(task, warps, n_max);
                if sparse {
                    v.extend(c.sparse_evidence(
                        task,
                        warp,
                        scaling,
                        &candidates,
                        family,
                        support,
                        n_max,
                    ));
                } else {
                    v.extend(c.log_likelihoods(task, warp, scaling, &candidates, family, n_max));
                }
                (c.id().clone(), v)
            })
            .collect();
        let sum = server.aggregate("statistics and log-likelihoods", contributions)?;
        refit_decision(
            warps,
            &candidates,
            hyper,
            &sum,
            sparse.then_some((family, support)),
            n_max,
            fit.prior.as_ref(),
        )
    }

    /// The candidate warpings of the setting; for one that needs the
    /// federation's log-magnitudes ([`super::super::Warping::Clipped`], and
    /// [`super::super::Warping::Auto`] in a federation) one secure sum of every
    /// client's `(n_i, Σℓ, Σℓ²)` first.
    pub(super) fn warp_candidates(
        &self,
        server: &mut Server<'_>,
    ) -> Result<Vec<OutputWarping>, AlgorithmError> {
        let p = self.params;
        if !p.model.warping.needs_magnitudes() {
            return p.model.warping.candidates(None);
        }
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                (
                    c.id().clone(),
                    c.magnitude_contribution(self.task, p.max_points()),
                )
            })
            .collect();
        let sum = server.aggregate("log-magnitudes", contributions)?;
        p.model.warping.candidates(Some(&sum))
    }

    /// Simulation-only diagnostic: the RMSE of the last global posterior mean
    /// against the true standardised utility at 256 public uniform points, and
    /// at the same points the RMSE of the best constant predictor (the
    /// targets' standard deviation), for a shared objective (`None` for
    /// per-client ones). It evaluates the objective outside the protocol, so
    /// the service never computes it.
    pub(super) fn surrogate_rmse(
        &mut self,
        global: &GlobalPosterior<K>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<Option<(f64, f64)>, AlgorithmError> {
        if self.task.clients().is_some() {
            return Ok(None);
        }
        let dim = self.dim();
        const POINTS: usize = 256;
        let mut targets = Vec::with_capacity(POINTS);
        let mut sq = 0.0;
        for _ in 0..POINTS {
            let x: Vec<f64> = (0..dim).map(|_| self.public.gen::<f64>()).collect();
            let truth = self.task.noise_free(0, &x, &mut self.public)?;
            let target = scaling.standardise(warp.apply(self.task.utility(truth)));
            sq += (global.predict_point(&x)?.mean - target).powi(2);
            targets.push(target);
        }
        let mean = targets.iter().sum::<f64>() / POINTS as f64;
        let spread = targets.iter().map(|t| (t - mean).powi(2)).sum::<f64>();
        Ok(Some((
            (sq / POINTS as f64).sqrt(),
            (spread / POINTS as f64).sqrt(),
        )))
    }
}
