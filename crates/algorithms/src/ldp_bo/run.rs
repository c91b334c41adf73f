//! One LDP-BO run in process over any `SecureSum`: the learner (server role)
//! queries a point, every institution (client role) answers with its private
//! reward, and only the sum of the answers is revealed.

use super::learners::{AtaGpUcb, Constants, Learner, MomaGpUcb, TgpUcb};
use super::mechanism::ConvertToLaplace;
use super::params::{LdpKernel, LdpMethod, NoiseModel, ValidLdpParams};
use crate::channel::Aggregator;
use crate::error::stream_seed as mix;
use crate::roster::{Roster, RoundProgress};
use crate::{AlgorithmError, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_gp::{Kernel, KernelParams, Matern52, SquaredExponential};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StudentT};
use std::time::Instant;

/// The largest domain a run accepts (`grid_points^D`).
const MAX_DOMAIN: usize = 20_000;

/// One institution answering queries: it observes `y = f(x) + η` and, for the
/// private methods, releases only `CTL(ε)(y)`.
pub struct Institution {
    id: MemberId,
    noise_rng: ChaCha8Rng,
    dp_rng: Csprng,
    ctl: Option<ConvertToLaplace>,
}

impl Institution {
    /// Institution `id` with its own noise streams from `seed`.
    pub fn new(
        id: MemberId,
        seed: impl Into<crate::roster::PrivateSeed>,
        ctl: Option<ConvertToLaplace>,
    ) -> Self {
        let seed = seed.into();
        Self {
            id,
            noise_rng: seed.rng(),
            dp_rng: seed.csprng(*b"ldp-bo-1"),
            ctl,
        }
    }

    /// The member.
    pub fn id(&self) -> &MemberId {
        &self.id
    }

    /// The reward released for a point whose value is `value`.
    pub fn answer(&mut self, value: f64, params: &ValidLdpParams) -> Result<f64, AlgorithmError> {
        let r = params.noise_bound;
        let eta = match params.noise {
            NoiseModel::Uniform => self.noise_rng.gen_range(-r..=r),
            NoiseModel::StudentT => {
                let t = StudentT::new(params.student_t_dof)
                    .map_err(|e| crate::error::config("student_t_dof", e.to_string()))?;
                r * t.sample(&mut self.noise_rng)
            }
        };
        match &self.ctl {
            Some(ctl) => ctl.privatize(value + eta, &mut self.dp_rng),
            None => Ok(value + eta),
        }
    }
}

/// The uniform grid with `n` points per dimension of the unit cube, one point per row.
pub fn grid(n: usize, dim: usize) -> Result<DMatrix<f64>, AlgorithmError> {
    let total = (0..dim).try_fold(1usize, |acc, _| acc.checked_mul(n));
    let total = match total {
        Some(t) if t <= MAX_DOMAIN => t,
        _ => {
            return Err(crate::error::config(
                "grid_points",
                format!("grid_points^D exceeds {MAX_DOMAIN} points"),
            ))
        }
    };
    Ok(DMatrix::from_fn(total, dim, |i, d| {
        let digit = (i / n.pow(d as u32)) % n;
        digit as f64 / (n - 1) as f64
    }))
}

/// Refuses what a member running alone cannot do: the bound `B` on `f`
/// (`rkhs_bound`), which CTL(ε) and the confidence widths use, must be
/// public. The simulator takes it from the objective's values on the whole
/// domain, which an institution would have to evaluate at every point.
pub fn check_networked(params: &ValidLdpParams) -> Result<(), AlgorithmError> {
    if params.rkhs_bound.is_none() {
        return Err(crate::error::config(
            "rkhs_bound",
            "a study over the network needs the public bound B on the objective: \
             the simulator's default evaluates it on the whole domain",
        ));
    }
    Ok(())
}

/// Runs `params.method()` on `task` with `members` answering every query,
/// every institution in this process.
pub fn run(
    task: &Task,
    params: &ValidLdpParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let roster = Roster::simulation(members, seed);
    run_roster(task, params, channel, &roster, seed, &mut |_| {})
}

/// `params.method()` for the institutions of `roster` (every one in the
/// simulator, one in an agent); the learner runs on every member alike.
pub fn run_roster(
    task: &Task,
    params: &ValidLdpParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundProgress),
) -> Result<RunResult, AlgorithmError> {
    crate::error::check_members(params.members, roster.members().len())?;
    if !roster.is_simulation() {
        check_networked(params)?;
    }
    let p = KernelParams::isotropic(task.dim(), params.lengthscale, 1.0)?;
    match params.kernel {
        LdpKernel::Se => run_with(
            task,
            params,
            channel,
            roster,
            seed,
            SquaredExponential::new(p),
            observer,
        ),
        LdpKernel::Matern => run_with(
            task,
            params,
            channel,
            roster,
            seed,
            Matern52::new(p),
            observer,
        ),
    }
}

fn run_with<K: Kernel + 'static>(
    task: &Task,
    params: &ValidLdpParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    kernel: K,
    observer: &mut dyn FnMut(&RoundProgress),
) -> Result<RunResult, AlgorithmError> {
    let start = Instant::now();
    let members = roster.members();
    let domain = grid(params.grid_points, task.dim())?;
    let mut scratch = ChaCha8Rng::seed_from_u64(0);
    // Simulation only: the noise-free values on 𝒟 (the learner never sees
    // them; they give regret, the trace and the default B).
    let values: Option<Vec<f64>> = if roster.is_simulation() {
        Some(
            (0..domain.nrows())
                .map(|i| {
                    let x: Vec<f64> = domain.row(i).iter().copied().collect();
                    task.noise_free(0, &x, &mut scratch)
                })
                .collect::<Result<_, _>>()?,
        )
    } else {
        None
    };
    let utility: Option<Vec<f64>> = values
        .as_ref()
        .map(|v| v.iter().map(|v| task.utility(*v)).collect());
    let best_utility = utility
        .as_ref()
        .map(|u| u.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let b = match (params.rkhs_bound, &utility) {
        (Some(b), _) => b,
        (None, Some(u)) => u.iter().fold(0.0f64, |m, u| m.max(u.abs())),
        (None, None) => check_networked(params).map(|()| 0.0)?,
    }
    .max(f64::MIN_POSITIVE);
    let method = params.method();
    let ctl = match (method.is_private(), params.epsilon) {
        (true, Some(e)) => Some(ConvertToLaplace::new(e, b, params.noise_bound)?),
        (true, None) => return Err(crate::error::config("epsilon", "required")),
        _ => None,
    };
    let consts = Constants {
        b,
        r: params.noise_bound,
        laplace_scale: ctl.as_ref().map(ConvertToLaplace::scale),
        epsilon: ctl.as_ref().map(ConvertToLaplace::epsilon),
        noise_variance: params.noise_variance(),
        lambda: params.lambda,
        delta: params.delta,
        horizon: params.rounds,
        beta_scale: params.beta_scale,
        accuracy: params.nystrom_accuracy,
        q: params.nystrom_q(),
    };
    let mut learner: Box<dyn Learner> = match method {
        LdpMethod::LdpTgpUcb | LdpMethod::TgpUcb => {
            Box::new(TgpUcb::new(kernel.gram(&domain), consts))
        }
        LdpMethod::LdpAtaGpUcb | LdpMethod::AtaGpUcb => {
            Box::new(AtaGpUcb::new(kernel, domain.clone(), consts))
        }
        LdpMethod::LdpMomaGpUcb | LdpMethod::MomaGpUcb => Box::new(MomaGpUcb::new(
            kernel,
            domain.clone(),
            consts,
            params.moma_plays(),
        )),
    };
    let mut institutions: Vec<(usize, Institution)> = roster
        .local()
        .iter()
        .map(|l| {
            let id = members[l.index].clone();
            (l.index, Institution::new(id, l.private_seed, ctl.clone()))
        })
        .collect();
    let mut learner_rng = ChaCha8Rng::seed_from_u64(mix(seed, 0));
    let mut server = Aggregator::new(channel, params.channel_bound);
    let m = members.len() as f64;
    let (mut regret, mut cumulative, mut trace) = (0.0, Vec::new(), Vec::new());
    let mut best: Option<f64> = None;
    for t in 1..=params.rounds {
        let x = learner.next(t, &mut learner_rng);
        // Each institution contributes its released reward divided by the
        // public M, so the sum is the mean. A contribution beyond the channel
        // bound is clamped to it (post-processing of a private value; with the
        // defaults it needs |ȳ| > 1024·M, probability below e^{−100} for CTL).
        let point: Vec<f64> = domain.row(x).iter().copied().collect();
        // Each institution evaluates its own objective at the queried point.
        let mut own = Vec::with_capacity(institutions.len());
        let mut contributions = Vec::with_capacity(institutions.len());
        for (index, inst) in institutions.iter_mut() {
            let value = task.evaluate(*index, &point, &mut scratch)?.noise_free;
            own.push(value);
            let y = inst.answer(value, params)? / m;
            contributions.push((
                inst.id().clone(),
                vec![y.clamp(-params.channel_bound, params.channel_bound)],
            ));
        }
        let reward = server.aggregate("rewards", contributions)?[0];
        learner.observe(t, x, task.utility(reward), &mut learner_rng)?;
        // The trace: the objective's value at the queried point (client 0's
        // in the simulator, as regret is measured; one's own in an agent).
        let shown = match &values {
            Some(v) => v[x],
            None => own[0],
        };
        if let (Some(u), Some(best_u)) = (&utility, best_utility) {
            regret += best_u - u[x];
            cumulative.push(regret);
        }
        best = Some(match best {
            Some(b) if !task.better(shown, b) => b,
            _ => shown,
        });
        trace.push(best.unwrap_or(f64::NAN));
        observer(&RoundProgress {
            round: t,
            best_so_far: best.unwrap_or(f64::NAN),
            epsilon: ctl.as_ref().map(ConvertToLaplace::epsilon),
        });
    }
    let bytes = institutions
        .iter()
        .map(|(_, inst)| server.bytes_sent(inst.id()))
        .sum::<u64>()
        / institutions.len().max(1) as u64;
    Ok(RunResult {
        task: task.name().to_string(),
        method: method.name().to_string(),
        seed,
        members: members.len(),
        rounds: params.rounds,
        best: best.unwrap_or(f64::NAN),
        best_per_member: vec![best.unwrap_or(f64::NAN); institutions.len()],
        trace,
        seconds: start.elapsed().as_secs_f64(),
        bytes_sent_per_member: bytes,
        aggregations: server.aggregations(),
        global_steps: 0,
        cumulative_regret: utility.is_some().then_some(cumulative),
        surrogate_rmse: None,
        surrogate_rmse_constant: None,
        releases: None,
        // It refuses a typed space (`FederatedMethod::takes_space`).
        best_point: None,
        epsilon: ctl.map(|c| vec![c.epsilon(); params.rounds]),
        maximised: Some(task.is_maximised()),
    })
}
