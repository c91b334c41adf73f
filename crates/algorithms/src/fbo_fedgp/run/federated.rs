//! The federated run: Alg. 2 of paper 004, round by round.

use super::*;

impl<'a, K: Kernel> Federation<'a, K> {
    pub(super) fn federated(
        &mut self,
        channel: &mut dyn SecureSum,
        start: Instant,
    ) -> Result<RunResult, AlgorithmError> {
        let p = self.params;
        let (task, step, n_max) = (self.task, p.acquisition_step(self.method), p.max_points());
        // Refused before the first secure sum, so that nothing is aggregated
        // for a run that cannot go on.
        let prior_mean = p.prior_mean.resolve(self.method);
        if !prior_mean.is_federated() {
            return Err(crate::error::config(
                "prior_mean",
                "\"quadratic\", \"bic\" and \"alternate\" are fitted by a lone agent or a \
                 plaintext method only; a federation's global posterior takes \"constant\" \
                 (fitted from sums) or \"zero\"",
            ));
        }
        if p.trust_region == Some(true) && p.local_steps == LocalSteps::Federated {
            return Err(crate::error::config(
                "trust_region",
                "a trust region bounds a lone agent's steps: with local_steps = \"federated\" \
                 no step takes it (set local_steps = \"lone\")",
            ));
        }
        let lone = LoneRecipe::new(self)?;
        let mut lone_hypers = vec![None; self.clients.len()];
        let mut server = Server::new(channel, p.channel_bound);
        let schedule = MixingSchedule::power(p.schedule_exponent)?;
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
        let (warps, mut warp, mut scaling) = match self.private.as_mut() {
            Some(private) => {
                let scaling = private.scaling(&mut server, &self.clients, task, 1)?;
                (vec![private.warping()], private.warping(), scaling)
            }
            None => {
                let warps = self.warp_candidates(&mut server)?;
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
        let sparse = p.hyper_likelihood == HyperLikelihood::Sparse;
        // The global posterior's constant mean: fitted from sums, or zero.
        let gls_mean = prior_mean == PriorMean::Constant;
        // The shared support set (Alg. 2, lines 3-7): before the first fit
        // when the fit scores candidates on it, else after (the paper's order).
        let mut k = p.support_size_at(0);
        let mut support = if sparse {
            Some(self.select_support(&mut server, k)?)
        } else {
            None
        };
        if p.hyperparameters == HyperparameterMode::FederatedMle {
            let on = support
                .clone()
                .unwrap_or_else(|| DMatrix::zeros(0, self.dim()));
            // The data have not changed since `warps` was chosen.
            hyper = self
                .refit(&mut server, &warps, warp, &scaling, &hyper, &on)?
                .2;
        }
        let mut support = match support.take() {
            Some(s) => s,
            None => self.select_support(&mut server, k)?,
        };
        let mut trace = Vec::with_capacity(p.rounds);
        let mut global_steps = 0;
        let mut last_global: Option<(GlobalPosterior<K>, OutputWarping, OutputScaling)> = None;
        let mut spaced = SpacedTrend::default();
        for t in 1..=p.rounds {
            if t > 1 && p.refit_every > 0 && (t - 1) % p.refit_every == 0 {
                if let Some(private) = self.private.as_mut() {
                    // Fixed hyper-parameters: only the standardisation moves.
                    scaling = private.scaling(&mut server, &self.clients, task, t)?;
                } else {
                    let warps = self.warp_candidates(&mut server)?;
                    (warp, scaling, hyper) =
                        self.refit(&mut server, &warps, warp, &scaling, &hyper, &support)?;
                }
            }
            if p.support_size_at(t - 1) != k {
                let next = p.support_size_at(t - 1);
                support = match (self.support_selection(), next.checked_sub(k)) {
                    (SupportSelection::Public, Some(add)) => {
                        let global = last_global.as_ref().map(|(g, _, _)| g);
                        self.grow_public_support(&support, global, &step, t, add)?
                    }
                    _ => self.select_support(&mut server, next)?,
                };
                k = next;
            }
            // Alg. 2, lines 14-15: each client draws its step.
            let local = self.steps(t, &schedule)?;
            // Lines 19-22: every client's summary, only when someone steps globally.
            let mut trend_is_new = false;
            let global = if local.iter().all(|l| *l) {
                None
            } else {
                let model = Dpitc::new(
                    hyper.kernel(&self.family)?,
                    hyper.noise(),
                    0.0,
                    support.clone(),
                )?;
                let summary_scaling = SummaryScaling::new(k, &hyper, n_max);
                let trend = match p.global_trend {
                    GlobalTrend::None => None,
                    GlobalTrend::Quadratic => {
                        let trend = self.quadratic_trend(&mut server, warp, &scaling)?;
                        trend_is_new = trend.is_some();
                        trend
                    }
                    GlobalTrend::QuadraticSpaced => {
                        let held = p.initial_points + (t - 1);
                        let trend;
                        (trend, trend_is_new) =
                            self.spaced_trend(&mut server, &mut spaced, warp, &scaling, held)?;
                        trend
                    }
                };
                let (model, summed) = if let Some(private) = self.private.as_mut() {
                    // `check_recipe` refused a trend and the GLS mean.
                    let summed = private.summary(
                        &mut server,
                        &self.clients,
                        task,
                        &scaling,
                        &model,
                        &summary_scaling,
                        mix(mix(self.seed, u64::MAX - 5), t as u64),
                    )?;
                    global_steps += 1;
                    (model, summed)
                } else {
                    let contributions = self
                        .clients
                        .iter()
                        .map(|c| {
                            let v = c.summary_contribution(
                                task,
                                warp,
                                &scaling,
                                &model,
                                &summary_scaling,
                                gls_mean,
                                trend.as_ref(),
                            )?;
                            Ok((c.id().clone(), v))
                        })
                        .collect::<Result<Vec<_>, AlgorithmError>>()?;
                    let sum = server.aggregate("local summaries", contributions)?;
                    global_steps += 1;
                    if gls_mean {
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
                let summary = model.global_summary(&summed)?;
                Some(GlobalPosterior {
                    model,
                    summary,
                    trend,
                })
            };
            let mut round_best = RoundBest::new(task);
            if let Some(g) = &global {
                last_global = Some((g.clone(), warp, scaling));
            }
            let batch = match (&global, p.global_steps) {
                (Some(g), GlobalSteps::Penalised) => self.global_batch(g, &step, t, &local)?,
                _ => Vec::new(),
            };
            // Where the trend peaks: the same for every member this round.
            let trend_best = global
                .as_ref()
                .and_then(|g| g.trend.as_ref())
                .map(|m| m.maximiser_in_unit_cube());
            for (position, c) in self.clients.iter_mut().enumerate() {
                let is_local = local[c.index()];
                if let (false, Some(x)) = (
                    is_local,
                    global_slot(&local, c.index(), p.global_batch).and_then(|s| batch.get(s)),
                ) {
                    round_best.add(c.evaluate(task, x.clone())?.noise_free);
                    continue;
                }
                if is_local && p.local_steps != LocalSteps::Federated {
                    let x = lone.propose(c, &mut lone_hypers[position], t)?;
                    round_best.add(c.evaluate(task, x)?.noise_free);
                    continue;
                }
                let local_gp;
                let (surrogate, incumbent): (&dyn Surrogate, f64) = match (&global, is_local) {
                    (Some(g), false) => (g, c.incumbent(task, warp, &scaling)),
                    _ => {
                        let own = match p.local_scaling {
                            LocalScaling::Own => c.own_scaling(task, warp)?,
                            LocalScaling::Federation => scaling,
                        };
                        local_gp =
                            c.local_gp(task, warp, &own, &hyper, &self.family, MeanFunction::Zero)?;
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
                        && global_slot(&local, c.index(), usize::MAX) == Some(0)
                        && !c.has_evaluated_near(x)
                }) {
                    round_best.add(c.evaluate(task, x.clone())?.noise_free);
                    continue;
                }
                let x = c.propose(
                    task,
                    &step,
                    surrogate,
                    t,
                    incumbent,
                    None,
                    also_from.cloned(),
                )?;
                round_best.add(c.evaluate(task, x)?.noise_free);
            }
            if let Some(private) = &self.private {
                self.spent.push(private.epsilon()?);
            }
            self.end_round(t, &local, global.is_some(), round_best.value, &mut trace);
        }
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
