//! A member's local step as the lone agent takes it: its own fit, prior
//! means in turn, the acquisition over its trust region.

use super::*;

/// A lone agent's step on one client's own data: its own warping and
/// scaling, its own MAP (or ML) fit every `refit_every` steps, the lone
/// prior mean and acquisition (`independent-bo`, and FBO-FedGP's local steps
/// with [`LocalSteps::Lone`] or [`LocalSteps::LoneDefaults`]). Nothing of it
/// leaves the client.
pub(super) struct LoneRecipe<'a, K: Kernel> {
    pub(super) task: &'a Task,
    pub(super) params: std::borrow::Cow<'a, ValidParams>,
    pub(super) step: AcquisitionStep,
    pub(super) fit: fedhe_gp::hyperfit::FitConfig,
    pub(super) initial: Hyperparameters,
    /// The prior means a refit fits (the one of largest BIC kept when more
    /// than one, unless `alternate`).
    pub(super) means: Vec<MeanFunction>,
    /// Whether the steps take the fits of `means` in turn
    /// ([`PriorMean::Alternate`]).
    pub(super) alternate: bool,
    /// Whether the steps take a trust region
    /// ([`ValidParams::trust_region_for`]).
    pub(super) trust_region: bool,
    pub(super) family: K,
}

/// A lone agent's current fits: every prior mean's hyper-parameters of the
/// last refit (in the order of the recipe's `means`; the initial ones before
/// the first), and which of them BIC kept.
#[derive(Debug, Clone)]
pub(super) struct LoneFit {
    pub(super) fits: Vec<(Hyperparameters, MeanFunction)>,
    pub(super) kept: usize,
}

impl LoneFit {
    /// The fit BIC kept: what a non-alternating recipe steps on, the start
    /// of the next refit and the scale of a trust region.
    pub(super) fn kept(&self) -> &Hyperparameters {
        &self.fits[self.kept].0
    }

    /// The hyper-parameters and prior mean of round `t`'s step: an
    /// alternating recipe's fits in turn (round `t` on fit `t mod n`, so
    /// consecutive steps take different models), every other recipe's the
    /// fit BIC kept.
    pub(super) fn for_step(&self, t: usize, alternate: bool) -> (&Hyperparameters, MeanFunction) {
        let i = match self.fits.len() {
            n if alternate && n > 1 => t % n,
            _ => self.kept,
        };
        let (hyper, mean) = &self.fits[i];
        (hyper, *mean)
    }
}

impl<'a, K: Kernel> LoneRecipe<'a, K> {
    pub(super) fn new(federation: &Federation<'a, K>) -> Result<Self, AlgorithmError> {
        Self::resolve(
            federation.task,
            federation.params,
            federation.method,
            federation.family.clone(),
        )
    }

    /// The lone recipe of `method`'s steps under `params`: these settings
    /// for a plaintext baseline's steps and [`LocalSteps::Lone`] local
    /// steps, the lone agent's defaults for [`LocalSteps::LoneDefaults`]
    /// ones ([`ValidParams::lone_defaults`]).
    pub(super) fn resolve(
        task: &'a Task,
        params: &'a ValidParams,
        method: Method,
        family: K,
    ) -> Result<Self, AlgorithmError> {
        let (params, method) = match params.steps.local {
            LocalSteps::LoneDefaults if method.uses_channel() => (
                std::borrow::Cow::Owned(params.lone_defaults()),
                Method::IndependentBo,
            ),
            _ => (std::borrow::Cow::Borrowed(params), method),
        };
        let p = &*params;
        Ok(Self {
            task,
            step: p.acquisition_step(Method::IndependentBo),
            fit: p.fit_config(task),
            initial: initial_hyperparameters(p, task)?,
            means: p.model.prior_mean.mean_functions(method),
            alternate: p.model.prior_mean.resolve_lone(method) == PriorMean::Alternate,
            trust_region: p.trust_region_for(method),
            family,
            params,
        })
    }

    /// The next point of client `c` at round `t`; `hyper` is its fit so far
    /// (`None` before its first step, which fits).
    pub(super) fn propose(
        &self,
        c: &mut Client,
        hyper: &mut Option<LoneFit>,
        t: usize,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let (gp, incumbent) = self.model(c, hyper, t)?;
        let region = match hyper {
            Some(fit) if self.trust_region => Some(&fit.kept().log()[..self.task.dim()]),
            _ => None,
        };
        c.propose(self.task, &self.step, &gp, t, incumbent, region, None)
    }

    /// `size` points for round `t` by local penalisation on `c`'s model
    /// (`pooled-bo`, whose `c` holds every member's data).
    pub(super) fn propose_batch(
        &self,
        c: &mut Client,
        hyper: &mut Option<LoneFit>,
        t: usize,
        size: usize,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let (gp, incumbent) = self.model(c, hyper, t)?;
        c.propose_batch(
            self.task,
            &self.step,
            &gp,
            t,
            incumbent,
            size,
            PENALTY_SAMPLE,
            self.params.steps.global_batch_optimism,
        )
    }

    /// Client `c`'s GP at round `t`, refitted when due (for each prior mean
    /// of the recipe, the one of largest BIC kept), and its incumbent.
    fn model(
        &self,
        c: &mut Client,
        fit: &mut Option<LoneFit>,
        t: usize,
    ) -> Result<(fedhe_gp::ExactGp<K>, f64), AlgorithmError> {
        let (p, task) = (&*self.params, self.task);
        let (warp, scaling) = c.own_warping(task, p.model.warping.for_lone_agent())?;
        let scheduled = p.hypers.refit_every > 0 && (t - 1).is_multiple_of(p.hypers.refit_every);
        let refit = fit.is_none() || scheduled;
        let current = fit.get_or_insert_with(|| LoneFit {
            fits: vec![(self.initial.clone(), self.means[0])],
            kept: 0,
        });
        if refit && p.hypers.mode == HyperparameterMode::FederatedMle {
            let from = match p.hypers.fit_start {
                FitStart::Previous => current.kept(),
                FitStart::Initial => &self.initial,
            };
            let mut best: Option<(f64, usize)> = None;
            let mut fits = Vec::with_capacity(self.means.len());
            for &mean in &self.means {
                let start = from.gp_params(&self.family, mean)?;
                if let Ok((log, bic)) =
                    c.fit_hyperparameters(task, warp, &scaling, &start, &self.fit)
                {
                    if best.is_none_or(|(b, _)| bic > b) {
                        best = Some((bic, fits.len()));
                    }
                    fits.push((Hyperparameters::from_log(log)?, mean));
                }
            }
            if let Some((_, kept)) = best {
                *current = LoneFit { fits, kept };
            }
        }
        let (hyper, mean) = current.for_step(t, self.alternate);
        let gp = c.local_gp(task, warp, &scaling, hyper, &self.family, mean)?;
        Ok((gp, c.incumbent(task, warp, &scaling)))
    }
}
