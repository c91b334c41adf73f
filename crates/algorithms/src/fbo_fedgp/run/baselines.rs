//! The plaintext baselines under the federation's protocol: random
//! search, each member alone, every member's data pooled.

use super::*;

impl<'a, K: Kernel> Federation<'a, K> {
    pub(super) fn random_search(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let dim = self.dim();
        let mut trace = Vec::with_capacity(self.params.rounds);
        for t in 1..=self.params.rounds {
            let mut round_best = RoundBest::new(self.task);
            for c in self.clients.iter_mut() {
                let x: Vec<f64> = (0..dim).map(|_| c.rng().gen::<f64>()).collect();
                round_best.add(c.evaluate(self.task, x)?.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }

    pub(super) fn initial_hyperparameters(&self) -> Result<Hyperparameters, AlgorithmError> {
        initial_hyperparameters(self.params, self.task)
    }

    /// Each client on its own data: its own warping, scaling and MAP (or ML)
    /// fit, local steps only.
    pub(super) fn independent_bo(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let p = self.params;
        let lone = LoneRecipe::new(self)?;
        let mut hypers = vec![None; self.clients.len()];
        let mut trace = Vec::with_capacity(p.rounds);
        for t in 1..=p.rounds {
            let mut round_best = RoundBest::new(self.task);
            for (c, hyper) in self.clients.iter_mut().zip(hypers.iter_mut()) {
                let x = lone.propose(c, hyper, t)?;
                round_best.add(c.evaluate(self.task, x)?.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }

    /// Every client's data in one place, no privacy (the upper reference):
    /// each round one exact GP on the pooled data, fitted as a lone agent
    /// fits its own ([`LoneRecipe`]), proposes a batch of one point per
    /// member by local penalisation, and member `i` evaluates point `i`.
    pub(super) fn pooled_bo(&mut self, start: Instant) -> Result<RunResult, AlgorithmError> {
        let (p, task) = (self.params, self.task);
        let lone = LoneRecipe::new(self)?;
        let mut pooled = Client::new(self.members[0].clone(), 0, mix(self.seed, u64::MAX - 2));
        for c in &self.clients {
            pooled.absorb(task, c);
        }
        let mut hyper = None;
        let mut trace = Vec::with_capacity(p.rounds);
        for t in 1..=p.rounds {
            let batch = lone.propose_batch(&mut pooled, &mut hyper, t, self.clients.len())?;
            let mut round_best = RoundBest::new(task);
            for (c, x) in self.clients.iter_mut().zip(batch) {
                let e = c.evaluate(task, x.clone())?;
                pooled.record(task, x, &e);
                round_best.add(e.noise_free);
            }
            let local = vec![true; self.members.len()];
            self.end_round(t, &local, false, round_best.value, &mut trace);
        }
        Ok(self.result(trace, start, None, 0))
    }
}
