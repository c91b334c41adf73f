//! Federated Thompson sampling (paper 002, Alg. 1) and standard TS, the
//! plaintext baselines of DP-FTS-DE.
//!
//! Every agent is a *target agent* at once (the concurrent setting of paper 002
//! §3.1, end): in round `t`, with probability `p_t` it takes a Thompson-sampling
//! step on its own RFF posterior (line 4), otherwise it draws another agent
//! `n ~ P_N` and maximises `φ(x)ᵀω_n`, that agent's posterior draw (line 6).
//! `P_N` is uniform over the agents whose message arrived; a straggler's entry
//! is 0. Messages are either refreshed every round ([`Messages::EveryRound`],
//! the general setting of §3.1) or sent once after the initial design and each
//! used at most once by each target, then removed from its `P_N`
//! ([`Messages::Once`], Alg. 1 as written).
//!
//! The messages `ω_n` are revealed to every agent, as in the original FTS
//! (kept as a baseline, DESIGN.md §4). They travel through the channel like
//! every other aggregate, so FTS runs as a study over the network: each
//! member contributes a vector of `N·M` slots holding its own `ω_n` in slot
//! `n` and zeros elsewhere, and the sum is every agent's message. The
//! encryption hides the messages from the server in transit only; the
//! decrypted sum reveals them, as FTS does.

use crate::channel::Aggregator;
use crate::error::config;
use crate::error::stream_seed as mix;
use crate::rff_agent::{agents, RegretTrace, RffAgent, RffModelParams, RunTotals, SharedSettings};
use crate::roster::{Roster, RoundProgress};
use crate::{AlgorithmError, RunResult};
use fedhe_bo::optim::Bounds;
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_tasks::Task;
use nalgebra::DVector;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Which member of the family runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtsVariant {
    /// Standard TS: every agent alone (`p_t = 1`), no messages.
    Ts,
    /// FTS, paper 002 Alg. 1.
    Fts,
}

impl FtsVariant {
    /// The method name (`ts`, `fts`).
    pub fn name(self) -> &'static str {
        match self {
            FtsVariant::Ts => "ts",
            FtsVariant::Fts => "fts",
        }
    }
}

/// When the other agents' messages `ω_n` are sent (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Messages {
    /// A fresh `ω_{n,t}` from every agent every round.
    #[default]
    EveryRound,
    /// One `ω_n` per agent after the initial design, each used once per target.
    Once,
}

pub(crate) fn default_initial_points() -> usize {
    10
}
pub(crate) fn default_features() -> usize {
    50
}
pub(crate) fn default_lengthscale() -> f64 {
    fedhe_tasks::synthetic::gp_sample::LENGTHSCALE
}
pub(crate) fn default_noise_variance() -> f64 {
    fedhe_tasks::synthetic::gp_sample::NOISE_VARIANCE
}
pub(crate) fn default_mixing_exponent() -> f64 {
    0.5
}
pub(crate) fn default_acq_candidates() -> usize {
    1000
}
pub(crate) fn default_acq_polish() -> usize {
    2
}
pub(crate) fn default_acq_iters() -> u64 {
    30
}
/// Both papers sample the agent's own *GP* posterior (paper 000 eq. 1, Alg. 2
/// line 6; paper 002 Alg. 1 line 4); the prior draw of that sample uses this
/// many random features (its mean and covariance are exact for any number).
pub(crate) fn default_gp_prior_features() -> usize {
    100
}
fn default_channel_bound() -> f64 {
    1024.0
}

/// The settings of a TS or FTS run, as written in a config file. Defaults
/// are paper 000 §5.1's synthetic setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtsParams {
    /// Number of agents `N` (at least 2).
    pub members: usize,
    /// Rounds `T`; every agent queries one point per round.
    pub rounds: usize,
    /// Initial points per agent `N_init`, uniform in the domain.
    #[serde(default = "default_initial_points")]
    pub initial_points: usize,
    /// Random features `M`.
    #[serde(default = "default_features")]
    pub features: usize,
    /// SE length-scale of the shared features (unit cube).
    #[serde(default = "default_lengthscale")]
    pub lengthscale: f64,
    /// `λ` of paper 000 eq. 2, the observation-noise variance.
    #[serde(default = "default_noise_variance")]
    pub noise_variance: f64,
    /// `c` in `1 − p_t = t^(−c)` (0.5: `1/√t`; 2: `1/t²`).
    #[serde(default = "default_mixing_exponent")]
    pub mixing_exponent: f64,
    /// When messages are sent.
    #[serde(default)]
    pub messages: Messages,
    /// Probability that an agent's message does not arrive in a round.
    #[serde(default)]
    pub straggler_rate: f64,
    /// Acquisition optimiser: uniform candidates.
    #[serde(default = "default_acq_candidates")]
    pub acq_candidates: usize,
    /// Acquisition optimiser: candidates polished by L-BFGS.
    #[serde(default = "default_acq_polish")]
    pub acq_polish: usize,
    /// Acquisition optimiser: L-BFGS iterations per polish.
    #[serde(default = "default_acq_iters")]
    pub acq_iters: u64,
    /// Random features of the prior draw in an agent's own GP-posterior
    /// sample (0: sample the `M`-feature weight posterior instead); see
    /// [`RffModelParams::gp_prior_features`].
    #[serde(default = "default_gp_prior_features")]
    pub gp_prior_features: usize,
    /// The bound on every message entry `|ω_n[k]|` the channel encodes (a
    /// message beyond it is refused before it is sent).
    #[serde(default = "default_channel_bound")]
    pub channel_bound: f64,
}

/// Validated [`FtsParams`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidParams {
    /// `N`, `T`, `N_init`, the model and `p_t`.
    pub shared: SharedSettings,
    /// When messages are sent.
    pub messages: Messages,
    /// Straggler probability.
    pub straggler_rate: f64,
    /// The channel's bound on a message entry.
    pub channel_bound: f64,
}

impl FtsParams {
    /// Checks every setting; the error names the field.
    pub fn validate(self) -> Result<ValidParams, AlgorithmError> {
        if !(self.channel_bound.is_finite() && self.channel_bound > 0.0) {
            return Err(config(
                "channel_bound",
                format!("{} is not a positive finite number", self.channel_bound),
            ));
        }
        if !(0.0..1.0).contains(&self.straggler_rate) {
            return Err(config(
                "straggler_rate",
                format!("{} is not in [0, 1)", self.straggler_rate),
            ));
        }
        let model = RffModelParams {
            features: self.features,
            lengthscale: self.lengthscale,
            noise_variance: self.noise_variance,
            acq_candidates: self.acq_candidates,
            acq_polish: self.acq_polish,
            acq_iters: self.acq_iters,
            gp_prior_features: self.gp_prior_features,
        };
        Ok(ValidParams {
            shared: SharedSettings::validate(
                self.members,
                self.rounds,
                self.initial_points,
                self.mixing_exponent,
                model,
            )?,
            messages: self.messages,
            straggler_rate: self.straggler_rate,
            channel_bound: self.channel_bound,
        })
    }
}

/// Runs `variant` on `task` with `members` from `seed`, every agent in this
/// process, the messages summed by `channel`.
pub fn run(
    task: &Task,
    variant: FtsVariant,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let roster = Roster::simulation(members, seed);
    run_roster(task, variant, params, channel, &roster, seed, &mut |_| {})
}

/// `variant` for the agents of `roster` (every one in the simulator, one in
/// an agent), calling `observer` after every round.
pub fn run_roster(
    task: &Task,
    variant: FtsVariant,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundProgress),
) -> Result<RunResult, AlgorithmError> {
    let shared = &params.shared;
    let members = roster.members();
    crate::error::check_task_members(task, members, shared.members)?;
    let model = shared.model.model(task.dim(), mix(seed, 0))?;
    let bounds = Bounds::unit(task.dim())?;
    // Arrivals (stragglers) are public draws every member makes alike.
    let mut public = ChaCha8Rng::seed_from_u64(mix(seed, u64::MAX));
    let mut agents = agents(task, roster);
    let n = members.len();
    let m = model.len();
    for a in agents.iter_mut() {
        a.initial_design(task, shared.initial_points, &bounds)?;
    }
    let mut server = Aggregator::new(channel, params.channel_bound);
    let mut trace = RegretTrace::new();
    // messages[n]: agent n's current ω_n (None: not received).
    let mut messages: Vec<Option<DVector<f64>>> = vec![None; n];
    // Once: unused[j] lists the messages target j has not used yet.
    let mut unused: Vec<Vec<usize>> = Vec::new();
    let mut global_steps = 0usize;
    for t in 1..=shared.rounds {
        let refresh =
            variant == FtsVariant::Fts && (params.messages == Messages::EveryRound || t == 1);
        if refresh {
            let arrives: Vec<bool> = (0..n)
                .map(|_| public.gen::<f64>() >= params.straggler_rate)
                .collect();
            let mut contributions = Vec::with_capacity(agents.len());
            for a in agents.iter_mut() {
                let mut slots = vec![0.0; n * m];
                if arrives[a.index()] {
                    let omega = a.sample_weights(&model)?;
                    slots[a.index() * m..(a.index() + 1) * m].copy_from_slice(omega.as_slice());
                }
                contributions.push((a.id().clone(), slots));
            }
            let sum = server.aggregate("FTS messages", contributions)?;
            messages = (0..n)
                .map(|k| arrives[k].then(|| DVector::from_column_slice(&sum[k * m..(k + 1) * m])))
                .collect();
            if params.messages == Messages::Once {
                unused = (0..n)
                    .map(|j| {
                        (0..n)
                            .filter(|&k| k != j && messages[k].is_some())
                            .collect()
                    })
                    .collect();
            }
        }
        let mut any_global = false;
        for a in agents.iter_mut() {
            let j = a.index();
            let local = variant == FtsVariant::Ts || shared.schedule.choose_local(t, a.rng())?;
            let x = match (
                local,
                pick_message(a, j, &messages, &mut unused, params.messages),
            ) {
                (false, Some(k)) => {
                    any_global = true;
                    let omega = messages[k].as_ref().expect("picked messages exist");
                    a.maximize(&model, omega, &bounds, model.candidates())?.x
                }
                // Own TS: chosen, or P_N is empty (every message used or lost).
                _ => a.thompson_step(&model, &bounds)?,
            };
            a.query(task, x, true)?;
        }
        global_steps += usize::from(any_global);
        let score = trace.end_round(&agents, None);
        observer(&RoundProgress {
            round: t,
            best_so_far: score,
            epsilon: None,
        });
    }
    let bytes = agents
        .iter()
        .map(|a| server.bytes_sent(a.id()))
        .sum::<u64>()
        / agents.len().max(1) as u64;
    let totals = RunTotals {
        method: variant.name().to_string(),
        seed,
        bytes_sent_per_member: bytes,
        aggregations: server.aggregations(),
        global_steps,
    };
    Ok(trace.finish(task, &agents, totals))
}

/// Draws `n ~ P_N` for target `j`: uniform over the other agents whose
/// message is available (Alg. 1 line 6); with [`Messages::Once`] the message
/// is removed from `j`'s `P_N` (renormalised by drawing among the rest).
fn pick_message(
    agent: &mut RffAgent,
    j: usize,
    messages: &[Option<DVector<f64>>],
    unused: &mut [Vec<usize>],
    mode: Messages,
) -> Option<usize> {
    match mode {
        Messages::EveryRound => {
            let available: Vec<usize> = (0..messages.len())
                .filter(|&k| k != j && messages[k].is_some())
                .collect();
            (!available.is_empty()).then(|| available[agent.rng().gen_range(0..available.len())])
        }
        Messages::Once => {
            let list = unused.get_mut(j)?;
            (!list.is_empty()).then(|| {
                let i = agent.rng().gen_range(0..list.len());
                list.swap_remove(i)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_crypto::PlainSum;

    fn params(members: usize, rounds: usize) -> FtsParams {
        FtsParams {
            members,
            rounds,
            initial_points: 3,
            features: 30,
            lengthscale: 0.03,
            noise_variance: 0.01,
            mixing_exponent: 0.5,
            messages: Messages::EveryRound,
            straggler_rate: 0.0,
            acq_candidates: 200,
            acq_polish: 1,
            acq_iters: 10,
            gp_prior_features: 100,
            channel_bound: 1024.0,
        }
    }

    fn members(n: usize) -> Vec<MemberId> {
        (0..n)
            .map(|i| MemberId::new(format!("m{i}")).unwrap())
            .collect()
    }

    #[test]
    fn runs_repeat_for_a_seed_and_regret_never_grows() {
        let task = fedhe_tasks::by_name("gp-sample-2", 1, 0).unwrap();
        let p = params(6, 8).validate().unwrap();
        for variant in [FtsVariant::Ts, FtsVariant::Fts] {
            let a = run(&task, variant, &p, &mut PlainSum, &members(6), 5).unwrap();
            let b = run(&task, variant, &p, &mut PlainSum, &members(6), 5).unwrap();
            assert_eq!(a.trace, b.trace);
            assert_eq!(a.trace.len(), 8);
            assert!(a.trace.windows(2).all(|w| w[1] <= w[0]), "{:?}", a.trace);
            assert!(a.epsilon.is_none());
            assert_eq!(a.method, variant.name());
        }
        let ts = run(&task, FtsVariant::Ts, &p, &mut PlainSum, &members(6), 5).unwrap();
        assert_eq!(ts.bytes_sent_per_member, 0);
        assert_eq!(ts.global_steps, 0);
    }

    #[test]
    fn once_mode_uses_each_message_at_most_once_then_falls_back_to_ts() {
        let task = fedhe_tasks::by_name("gp-sample-2", 1, 0).unwrap();
        let mut p = params(3, 6);
        p.messages = Messages::Once;
        p.mixing_exponent = 1e-9; // p_t = 1 − t^(−c) ≈ 0: global whenever P_N allows
        let r = run(
            &task,
            FtsVariant::Fts,
            &p.validate().unwrap(),
            &mut PlainSum,
            &members(3),
            1,
        )
        .unwrap();
        // Each target has two messages: rounds 1-2 are global, then P_N is empty
        // and every agent falls back to its own TS.
        assert_eq!(r.global_steps, 2);
        // One aggregation of N·M values per member (16 bytes each: the plain
        // channel counts the two limbs of a two-limb encoding).
        assert_eq!(r.aggregations, 1);
        assert_eq!(r.bytes_sent_per_member, 16 * 3 * 30);
    }

    #[test]
    fn stragglers_send_nothing_and_invalid_settings_are_refused() {
        let task = fedhe_tasks::by_name("gp-sample-2", 1, 0).unwrap();
        let mut p = params(4, 3);
        p.straggler_rate = 0.5;
        let r = run(
            &task,
            FtsVariant::Fts,
            &p.clone().validate().unwrap(),
            &mut PlainSum,
            &members(4),
            3,
        )
        .unwrap();
        assert_eq!(r.aggregations, 3);
        p.straggler_rate = 0.0;
        let all = run(
            &task,
            FtsVariant::Fts,
            &p.clone().validate().unwrap(),
            &mut PlainSum,
            &members(4),
            3,
        )
        .unwrap();
        assert_ne!(r.trace, all.trace, "lost messages change the run");
        p.straggler_rate = 1.0;
        assert!(p
            .clone()
            .validate()
            .unwrap_err()
            .to_string()
            .contains("straggler_rate"));
        p.straggler_rate = 0.0;
        p.members = 1;
        assert!(p
            .clone()
            .validate()
            .unwrap_err()
            .to_string()
            .contains("members"));
        p.members = 4;
        p.features = 0;
        assert!(p.validate().unwrap_err().to_string().contains("features"));
    }
}
