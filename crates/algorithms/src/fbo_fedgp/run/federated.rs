//! The federated run: Alg. 2 of paper 004, round by round. What the run
//! carries from one round to the next is a [`FederationState`]; a round is
//! [`Federation::step`].

use super::*;

/// What a federated run carries from one round to the next (paper 004,
/// Alg. 2): the channel's server role, the fitted output warping, scaling
/// and hyper-parameters, the shared support set, the last global posterior,
/// the lone steps' fits and the trace.
struct FederationState<'a, 'c, K: Kernel> {
    server: Server<'c>,
    /// The lone agent's step, for members stepping locally with
    /// [`LocalSteps::Lone`] or [`LocalSteps::LoneDefaults`], and each local
    /// member's fits.
    lone: LoneRecipe<'a, K>,
    lone_hypers: Vec<Option<LoneFit>>,
    schedule: MixingSchedule,
    step: AcquisitionStep,
    warp: OutputWarping,
    scaling: OutputScaling,
    hyper: Hyperparameters,
    /// Whether the global posterior's constant mean is fitted from the
    /// summaries' sums (else zero).
    gls_mean: bool,
    /// The support set's size and points.
    k: usize,
    support: DMatrix<f64>,
    trace: Vec<f64>,
    global_steps: usize,
    last_global: Option<(GlobalPosterior<K>, OutputWarping, OutputScaling)>,
    spaced: SpacedTrend,
}

impl<'a, K: Kernel> Federation<'a, K> {
    pub(super) fn federated(
        &mut self,
        channel: &mut dyn SecureSum,
        start: Instant,
    ) -> Result<RunResult, AlgorithmError> {
        let mut state = self.begin(channel)?;
        for t in 1..=self.params.rounds {
            self.step(&mut state, t)?;
        }
        self.finish(state, start)
    }

    /// Everything before the first round (Alg. 2, lines 1-9): the settings
    /// refused before the first secure sum, the private releases planned,
    /// the output warping and scaling, the hyper-parameters and the support
    /// set.
    fn begin<'c>(
        &mut self,
        channel: &'c mut dyn SecureSum,
    ) -> Result<FederationState<'a, 'c, K>, AlgorithmError> {
        let p = self.params;
        let task = self.task;
        // Refused before the first secure sum, so that nothing is aggregated
        // for a run that cannot go on.
        let prior_mean = p.model.prior_mean.resolve(self.method);
        if !prior_mean.is_federated() {
            return Err(crate::error::config(
                "prior_mean",
                "\"quadratic\", \"bic\" and \"alternate\" are fitted by a lone agent or a \
                 plaintext method only; a federation's global posterior takes \"constant\" \
                 (fitted from sums) or \"zero\"",
            ));
        }
        if p.acquisition.trust_region == Some(true) && p.steps.local == LocalSteps::Federated {
            return Err(crate::error::config(
                "trust_region",
                "a trust region bounds a lone agent's steps: with local_steps = \"federated\" \
                 no step takes it (set local_steps = \"lone\")",
            ));
        }
        let lone = LoneRecipe::new(self)?;
        let lone_hypers = vec![None; self.clients.len()];
        let mut server = Server::new(channel, p.channel_bound);
        let schedule = MixingSchedule::power(p.steps.schedule_exponent)?;
        if !p.privacy.is_noise_free() {
            let summary_rounds = global_step_rounds(self.method, p, self.seed)?;
            self.private = PrivateFbo::start(
                p,
                self.method,
                &mut self.clients,
                self.members.len(),
                &summary_rounds,
            )?;
        }
        // Output warping and scaling, then hyper-parameters fitted on them
        // (Alg. 2, line 9).
        let (warps, warp, scaling) = match self.private.as_mut() {
            Some(private) => {
                let scaling = private.scaling(&mut server, &self.clients, task, 1)?;
                (vec![private.warping()], private.warping(), scaling)
            }
            None => {
                let warps = self.warp_candidates(&mut server)?;
                let n_max = p.max_points();
                let stats = self
                    .clients
                    .iter()
                    .map(|c| (c.id().clone(), c.warp_contribution(task, &warps, n_max)))
                    .collect();
                let (warp, scaling) =
                    choose_warping_and_scaling(&warps, &server.aggregate("statistics", stats)?)?;
                (warps, warp, scaling)
            }
        };
        let mut hyper = self.initial_hyperparameters()?;
        let sparse = p.hypers.likelihood == HyperLikelihood::Sparse;
        // The shared support set (Alg. 2, lines 3-7): before the first fit
        // when the fit scores candidates on it, else after (the paper's order).
        let k = p.support_size_at(0);
        let mut support = if sparse {
            Some(self.select_support(&mut server, k)?)
        } else {
            None
        };
        if p.hypers.mode == HyperparameterMode::FederatedMle {
            let on = support
                .clone()
                .unwrap_or_else(|| DMatrix::zeros(0, self.dim()));
            // The data have not changed since `warps` was chosen.
            hyper = self
                .refit(&mut server, &warps, warp, &scaling, &hyper, &on)?
                .2;
        }
        let support = match support.take() {
            Some(s) => s,
            None => self.select_support(&mut server, k)?,
        };
        Ok(FederationState {
            server,
            lone,
            lone_hypers,
            schedule,
            step: p.acquisition_step(self.method),
            warp,
            scaling,
            hyper,
            // The global posterior's constant mean: fitted from sums, or zero.
            gls_mean: prior_mean == PriorMean::Constant,
            k,
            support,
            trace: Vec::with_capacity(p.rounds),
            global_steps: 0,
            last_global: None,
            spaced: SpacedTrend::default(),
        })
    }

    /// Round `t` (Alg. 2, lines 10-24): a refit and a larger support set
    /// when due, every member's draw, the global posterior when someone
    /// steps globally, and every member's step and evaluation.
    fn step(
        &mut self,
        state: &mut FederationState<'a, '_, K>,
        t: usize,
    ) -> Result<(), AlgorithmError> {
        let p = self.params;
        if t > 1 && p.hypers.refit_every > 0 && (t - 1).is_multiple_of(p.hypers.refit_every) {
            if let Some(private) = self.private.as_mut() {
                // Fixed hyper-parameters: only the standardisation moves.
                state.scaling = private.scaling(&mut state.server, &self.clients, self.task, t)?;
            } else {
                let warps = self.warp_candidates(&mut state.server)?;
                (state.warp, state.scaling, state.hyper) = self.refit(
                    &mut state.server,
                    &warps,
                    state.warp,
                    &state.scaling,
                    &state.hyper,
                    &state.support,
                )?;
            }
        }
        if p.support_size_at(t - 1) != state.k {
            let next = p.support_size_at(t - 1);
            state.support = match (self.support_selection(), next.checked_sub(state.k)) {
                (SupportSelection::Public, Some(add)) => {
                    let global = state.last_global.as_ref().map(|(g, _, _)| g);
                    self.grow_public_support(&state.support, global, &state.step, t, add)?
                }
                _ => self.select_support(&mut state.server, next)?,
            };
            state.k = next;
        }
        // Alg. 2, lines 14-15: each client draws its step.
        let local = self.steps(t, &state.schedule)?;
        // Lines 19-22: every client's summary, only when someone steps globally.
        let (global, trend_is_new) = if local.iter().all(|l| *l) {
            (None, false)
        } else {
            let (global, trend_is_new) = self.global_posterior(state, t)?;
            (Some(global), trend_is_new)
        };
        if let Some(g) = &global {
            state.last_global = Some((g.clone(), state.warp, state.scaling));
        }
        let round_best = self.members_step(state, t, &local, global.as_ref(), trend_is_new)?;
        if let Some(private) = &self.private {
            self.spent.push(private.epsilon()?);
        }
        self.end_round(t, &local, global.is_some(), round_best, &mut state.trace);
        Ok(())
    }

    /// Round `t`'s global posterior (Alg. 2, lines 19-22): every client's
    /// summary on the support set, summed (privately, or with the constant
    /// mean and the trend's sums when the settings ask), and whether a new
    /// trend was released with it.
    fn global_posterior(
        &mut self,
        state: &mut FederationState<'a, '_, K>,
        t: usize,
    ) -> Result<(GlobalPosterior<K>, bool), AlgorithmError> {
        let (p, task) = (self.params, self.task);
        let (k, n_max) = (state.k, p.max_points());
        let model = Dpitc::new(
            state.hyper.kernel(&self.family)?,
            state.hyper.noise(),
            0.0,
            state.support.clone(),
        )?;
        let summary_scaling = SummaryScaling::new(k, &state.hyper, n_max);
        let mut trend_is_new = false;
        let trend = match p.model.global_trend {
            GlobalTrend::None => None,
            GlobalTrend::Quadratic => {
                let trend = self.quadratic_trend(&mut state.server, state.warp, &state.scaling)?;
                trend_is_new = trend.is_some();
                trend
            }
            GlobalTrend::QuadraticSpaced => {
                let held = p.initial_points + (t - 1);
                let trend;
                (trend, trend_is_new) = self.spaced_trend(
                    &mut state.server,
                    &mut state.spaced,
                    state.warp,
                    &state.scaling,
                    held,
                )?;
                trend
            }
        };
        let (model, summed) = if let Some(private) = self.private.as_mut() {
            // `check_recipe` refused a trend and the GLS mean.
            let summed = private.summary(
                &mut state.server,
                &self.clients,
                task,
                &state.scaling,
                &model,
                &summary_scaling,
                mix(mix(self.seed, u64::MAX - 5), t as u64),
            )?;
            (model, summed)
        } else {
            let contributions = self
                .clients
                .iter()
                .map(|c| {
                    let v = c.summary_contribution(
                        task,
                        state.warp,
                        &state.scaling,
                        &model,
                        &summary_scaling,
                        state.gls_mean,
                        trend.as_ref(),
                    )?;
                    Ok((c.id().clone(), v))
                })
                .collect::<Result<Vec<_>, AlgorithmError>>()?;
            let sum = state.server.aggregate("local summaries", contributions)?;
            if state.gls_mean {
                // The constant mean from the same sum (Dpitc::gls_mean).
                let at = packed_len(k).min(sum.len());
                let summed = summary_scaling.from_channel(&sum[..at])?;
                let terms = summary_scaling.mean_terms_from_channel(&sum[at..])?;
                let mu = model.gls_mean(&summed, &terms)?;
                model.with_prior_mean(mu, &summed, &terms)?
            } else {
                let summed = summary_scaling.from_channel(&sum)?;
                (model, summed)
            }
        };
        state.global_steps += 1;
        let summary = model.global_summary(&summed)?;
        Ok((
            GlobalPosterior {
                model,
                summary,
                trend,
            },
            trend_is_new,
        ))
    }

    /// Every local member's step of round `t` and its evaluation (Alg. 2,
    /// lines 16-18 and 23): the global batch's point, the lone agent's step,
    /// a new trend's maximiser, or the acquisition on the global posterior
    /// or the member's own GP. Returns the round's best value.
    fn members_step(
        &mut self,
        state: &mut FederationState<'a, '_, K>,
        t: usize,
        local: &[bool],
        global: Option<&GlobalPosterior<K>>,
        trend_is_new: bool,
    ) -> Result<f64, AlgorithmError> {
        let (p, task) = (self.params, self.task);
        let (warp, scaling, step) = (state.warp, state.scaling, &state.step);
        let mut round_best = RoundBest::new(task);
        let batch = match (global, p.steps.global) {
            (Some(g), GlobalSteps::Penalised) => self.global_batch(g, step, t, local)?,
            _ => Vec::new(),
        };
        // Where the trend peaks: the same for every member this round.
        let trend_best = global
            .and_then(|g| g.trend.as_ref())
            .map(|m| m.maximiser_in_unit_cube());
        for (position, c) in self.clients.iter_mut().enumerate() {
            let is_local = local[c.index()];
            if let (false, Some(x)) = (
                is_local,
                global_slot(local, c.index(), p.steps.global_batch).and_then(|s| batch.get(s)),
            ) {
                round_best.add(c.evaluate(task, x.clone())?.noise_free);
                continue;
            }
            if is_local && p.steps.local != LocalSteps::Federated {
                let x = state.lone.propose(c, &mut state.lone_hypers[position], t)?;
                round_best.add(c.evaluate(task, x)?.noise_free);
                continue;
            }
            let local_gp;
            let (surrogate, incumbent): (&dyn Surrogate, f64) = match (global, is_local) {
                (Some(g), false) => (g, c.incumbent(task, warp, &scaling)),
                _ => {
                    let own = match p.model.local_scaling {
                        LocalScaling::Own => c.own_scaling(task, warp)?,
                        LocalScaling::Federation => scaling,
                    };
                    local_gp = c.local_gp(
                        task,
                        warp,
                        &own,
                        &state.hyper,
                        &self.family,
                        MeanFunction::Zero,
                    )?;
                    (&local_gp, c.incumbent(task, warp, &own))
                }
            };
            // The first member stepping globally (a public rank) takes a
            // new trend's maximiser, unless it has evaluated there already:
            // on the standardised scale of a wide bowl, the trend's best
            // is barely above the incumbent and an acquisition prefers
            // to explore, so the trend's optimum would go untried. (A kept
            // trend's maximiser was taken in its release round.)
            let also_from = trend_best.as_ref().filter(|_| !is_local);
            if let Some(x) = also_from.filter(|x| {
                trend_is_new
                    && global_slot(local, c.index(), usize::MAX) == Some(0)
                    && !c.has_evaluated_near(x)
            }) {
                round_best.add(c.evaluate(task, x.clone())?.noise_free);
                continue;
            }
            let x = c.propose(
                task,
                step,
                surrogate,
                t,
                incumbent,
                None,
                also_from.cloned(),
            )?;
            round_best.add(c.evaluate(task, x)?.noise_free);
        }
        Ok(round_best.value)
    }

    /// The run's result after its last round, with the last global
    /// posterior's surrogate error when diagnostics are asked for.
    fn finish(
        &mut self,
        state: FederationState<'a, '_, K>,
        start: Instant,
    ) -> Result<RunResult, AlgorithmError> {
        let FederationState {
            server,
            trace,
            global_steps,
            last_global,
            ..
        } = state;
        let mut result = self.result(trace, start, Some(&server), global_steps);
        if let Some((g, w, scaling)) = &last_global {
            if self.diagnostics {
                if let Some((rmse, constant)) = self.surrogate_rmse(g, *w, scaling)? {
                    result.surrogate_rmse = Some(rmse);
                    result.surrogate_rmse_constant = Some(constant);
                }
            }
        }
        Ok(result)
    }
}
