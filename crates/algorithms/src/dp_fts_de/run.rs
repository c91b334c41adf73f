//! One DP-FTS-DE federation in process: Algs. 1-2 of paper 000 over any
//! `SecureSum`.

use super::client::contribution;
use super::params::{NoiseMode, ValidParams};
use super::server::DpFtsDeServer;
use super::subregions::SubRegions;
use crate::error::stream_seed as mix;
use crate::rff_agent::{agents, RegretTrace, RffAgent, RffModel, RunTotals};
use crate::roster::Roster;
use crate::{AlgorithmError, RunResult};
use fedhe_bo::optim::Bounds;
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_dp::{GaussianMechanism, PoissonSampling};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;
use nalgebra::DVector;

/// What happened in one round, for progress reports and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundEvent {
    /// The round `t` (from 1).
    pub round: usize,
    /// The broadcast `ω_t^(i)`, one vector per sub-region.
    pub broadcast: Vec<DVector<f64>>,
    /// Agents in the batch `S_t` (known to the simulator; in distributed mode
    /// no party of the protocol learns it).
    pub batch: usize,
    /// Batch members whose `ω_{n,t}` was clipped.
    pub clipped: usize,
    /// Agents that used the broadcast this round (probability `1 − p_t`).
    pub global_steps: usize,
    /// The privacy loss ε after this round (`None` without noise).
    pub epsilon: Option<f64>,
    /// The agents' mean simple regret after this round (their mean best value
    /// when the task's optimum is unknown, see [`crate::rff_agent`]).
    pub mean_simple_regret: f64,
}

/// Runs DP-FTS-DE on `task` with `members` (who must be the channel's members)
/// from `seed`.
pub fn run(
    task: &Task,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    run_observed(task, params, channel, members, seed, &mut |_| {})
}

/// Stream indices of the run's randomness (see [`mix`]).
const FEATURES_STREAM: u64 = 0;
const SERVER_STREAM: u64 = u64::MAX;
/// The domain of a member's Poisson coin and noise shares, drawn from its
/// private seed.
const MEMBER_NOISE_DOMAIN: [u8; 8] = *b"ftsde-nz";

/// Refuses what a member running alone cannot do: central noise needs a
/// trusted server to draw the batch and add the noise, which an agent's
/// federation does not have (use `distributed`, or `none`).
pub fn check_networked(params: &ValidParams) -> Result<(), AlgorithmError> {
    if params.noise == NoiseMode::Central {
        return Err(crate::error::config(
            "noise",
            "central noise is added by a trusted server, which a study over the network \
             does not have: use \"distributed\" (each member adds a share) or \"none\"",
        ));
    }
    Ok(())
}

/// [`run`], calling `observer` after every round.
pub fn run_observed(
    task: &Task,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    run_roster(
        task,
        params,
        channel,
        &Roster::simulation(members, seed),
        seed,
        observer,
    )
}

/// DP-FTS-DE for the agents of `roster` (every one in the simulator, one in
/// an agent), calling `observer` after every round.
pub fn run_roster(
    task: &Task,
    params: &ValidParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundEvent),
) -> Result<RunResult, AlgorithmError> {
    let shared = &params.shared;
    let members = roster.members();
    crate::error::check_task_members(task, members, shared.members)?;
    if !roster.is_simulation() {
        check_networked(params)?;
    }
    let dim = task.dim();
    let model = shared.model.model(dim, mix(seed, FEATURES_STREAM))?;
    let regions = SubRegions::new(dim, params.subregions)?;
    let unit = Bounds::unit(dim)?;
    let mut agents = agents(task, roster);
    let n = members.len();
    // Alg. 2 line 2: N_init random points in the agent's own sub-region.
    for a in agents.iter_mut() {
        let own = regions.bounds(regions.assigned(a.index())).clone();
        a.initial_design(task, shared.initial_points, &own)?;
    }
    // The server's stream draws the batch and the central noise: public,
    // which is why a study over the network refuses central noise (it has
    // no trusted server) and draws the batch of `none` alike on every member.
    let server_rng = Csprng::from_u128_seed(u128::from(mix(seed, SERVER_STREAM)));
    // Each member's coin and noise shares, from its private seed.
    let mut member_rngs: Vec<Csprng> = roster
        .local()
        .iter()
        .map(|l| l.private_seed.csprng(MEMBER_NOISE_DOMAIN))
        .collect();
    let mut server = DpFtsDeServer::new(channel, params, server_rng)?;
    let own_coin = PoissonSampling::new(params.mechanism.sampling_rate())?;
    let z = params.mechanism.noise_multiplier();
    let s = params.clip.norm();
    let mut trace = RegretTrace::new();
    let mut global_rounds = 0;
    for t in 1..=shared.rounds {
        let weights = params.weights.weights(t, &regions, n);
        let sum_std = server.sum_noise_std(z, weights.max());
        // Alg. 1 line 6, as flags of the local agents. Distributed: each
        // member flips its own coin, unseen.
        let selected: Vec<bool> = match params.noise {
            NoiseMode::Distributed => member_rngs
                .iter_mut()
                .map(|r| own_coin.includes(r))
                .collect(),
            _ => {
                let all = server.select(n);
                agents.iter().map(|a| all[a.index()]).collect()
            }
        };
        // Each share has variance σ²/m (m = N unless members may be
        // missing), so a sum over m members has σ² = (z·φ_max·S)².
        let share = match params.noise {
            NoiseMode::Distributed => Some(GaussianMechanism::with_std_dev(
                params.noise_share_std(sum_std),
            )?),
            _ => None,
        };
        let mut contributions = Vec::with_capacity(n);
        let mut clipped = 0;
        for ((k, a), rng) in agents.iter_mut().enumerate().zip(member_rngs.iter_mut()) {
            // Alg. 2 line 10: ω_{n,t} from the agent's current posterior.
            let omega = a.sample_weights(&model)?;
            let c = contribution(
                &omega,
                s,
                &weights.of_agent(a.index()),
                selected[k],
                share.as_ref().map(|m| (m, rng)),
            )?;
            clipped += usize::from(c.clipped && selected[k]);
            contributions.push((a.id().clone(), c.values));
        }
        let broadcast = server.broadcast(contributions, sum_std)?;
        let epsilon = server.account()?;
        let mut global_steps = 0;
        for a in agents.iter_mut() {
            // Alg. 2 lines 4-8.
            let x = if shared.schedule.choose_local(t, a.rng())? {
                a.thompson_step(&model, &unit)?
            } else {
                global_steps += 1;
                maximize_broadcast(a, &model, &regions, &broadcast)?
            };
            a.query(task, x, true)?;
        }
        global_rounds += usize::from(global_steps > 0);
        let mean_simple_regret = trace.end_round(&agents, epsilon);
        observer(&RoundEvent {
            round: t,
            broadcast,
            batch: selected.iter().filter(|s| **s).count(),
            clipped,
            global_steps,
            epsilon,
            mean_simple_regret,
        });
    }
    let bytes = agents
        .iter()
        .map(|a| server.bytes_sent(a.id()))
        .sum::<u64>()
        / agents.len().max(1) as u64;
    let totals = RunTotals {
        method: super::METHOD.to_string(),
        seed,
        bytes_sent_per_member: bytes,
        aggregations: server.aggregations(),
        global_steps: global_rounds,
    };
    Ok(trace.finish(task, &agents, totals))
}

/// Alg. 2 line 8: `x = arg max_x φ(x)ᵀ ω_t^(i[x])`, the best of the maxima of
/// each sub-region's reconstructed function on its own box (Fig. 1c).
fn maximize_broadcast(
    agent: &mut RffAgent,
    model: &RffModel,
    regions: &SubRegions,
    broadcast: &[DVector<f64>],
) -> Result<Vec<f64>, AlgorithmError> {
    let candidates = model.candidates() / regions.len();
    let mut best: Option<(f64, Vec<f64>)> = None;
    for (i, omega) in broadcast.iter().enumerate() {
        let m = agent.maximize(model, omega, regions.bounds(i), candidates)?;
        if best.as_ref().is_none_or(|(v, _)| m.value > *v) {
            best = Some((m.value, m.x));
        }
    }
    Ok(best.expect("P ≥ 1").1)
}
