//! Fed-PNE (paper 003, Algs. 1-2) and DP-Fed-PNE (App. D, Algs. 3-4): client
//! role, server role and one in-process run over any `SecureSum`.

use super::objectives::Federation;
use super::params::ValidFedPneParams;
use super::partition::{Node, Partition};
use crate::channel::Aggregator;
use crate::roster::{Roster, RoundProgress};
use crate::{AlgorithmError, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_dp::GaussianMechanism;
use fedhe_ring::Csprng;
use fedhe_tasks::Task;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One client (Alg. 1 / Alg. 3): pulls the broadcast nodes and reports only
/// their local mean rewards.
pub struct Client {
    id: MemberId,
    index: usize,
    rng: ChaCha8Rng,
    dp_rng: Csprng,
    dp_sigma: Option<f64>,
}

impl Client {
    /// Client `index` with noise streams from `seed`; `dp_sigma` is
    /// DP-Fed-PNE's per-reward noise `σ`.
    pub fn new(
        id: MemberId,
        index: usize,
        seed: impl Into<crate::roster::PrivateSeed>,
        dp_sigma: Option<f64>,
    ) -> Self {
        let seed = seed.into();
        Self {
            id,
            index,
            rng: seed.rng(),
            dp_rng: seed.csprng(*b"pne-dp-1"),
            dp_sigma,
        }
    }

    /// The member.
    pub fn id(&self) -> &MemberId {
        &self.id
    }

    /// Pulls each point `pulls` times and returns the local means
    /// `μ̂_{m,h,i} = (1/t) Σ_t r̄_{m,h,i,t}` (Alg. 1 lines 6-9). With DP, each
    /// reward gets `N(0, σ²)` (Alg. 3 line 8); the mean of `t` such rewards
    /// carries `N(0, σ²/t)`, drawn once here from `fedhe_dp`'s exact sampler (the
    /// same distribution).
    pub fn local_means(
        &mut self,
        federation: &Federation,
        points: &[Vec<f64>],
        pulls: u64,
    ) -> Result<Vec<f64>, AlgorithmError> {
        let noise = match self.dp_sigma {
            Some(s) => Some(
                GaussianMechanism::with_std_dev(s / (pulls as f64).sqrt())
                    .map_err(|e| crate::error::config("epsilon", e.to_string()))?,
            ),
            None => None,
        };
        points
            .iter()
            .map(|x| {
                let mut sum = 0.0;
                for _ in 0..pulls {
                    sum += federation.pull(self.index, x, &mut self.rng)?;
                }
                let mean = sum / pulls as f64;
                Ok(match &noise {
                    Some(g) => mean + g.noise(&mut self.dp_rng, 1)[0],
                    None => mean,
                })
            })
            .collect()
    }
}

/// What happened in one phase: the record the acceptance test compares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// The depth `h` of `𝒦^p`.
    pub depth: u32,
    /// `𝒦^p`.
    pub nodes: Vec<Node>,
    /// `t_{m,h,i} = ⌈τ_h/M⌉`.
    pub pulls_per_client: u64,
    /// The global means `μ̂_{h,i}` (empty when the budget ran out mid-phase).
    pub means: Vec<f64>,
    /// `ℰ^p` (eq. (1)).
    pub eliminated: Vec<Node>,
}

/// The server (Alg. 2): plans phases and eliminates nodes; it sees only the
/// average of the clients' local means.
#[derive(Debug, Clone)]
pub struct Server {
    partition: Partition,
    active: Vec<Node>,
    depth: u32,
}

impl Server {
    /// Starts at `𝒦¹ = {(0, 1)}`.
    pub fn new(partition: Partition) -> Self {
        Self {
            partition,
            active: vec![Node::ROOT],
            depth: 0,
        }
    }

    /// Alg. 2 lines 5-8: expands `𝒦^p` to the children of its nodes while
    /// `|𝒦^p| τ_h ≤ M` or `τ_h ≤ 1`, then returns `(𝒦^p, h, t_{m,h,i} = ⌈τ_h/M⌉)`.
    pub fn plan(&mut self, params: &ValidFedPneParams) -> (Vec<Node>, u32, u64) {
        let m = params.members as u64;
        while self.depth < self.partition.max_depth() {
            let tau = params.tau(self.depth);
            if (self.active.len() as u64).saturating_mul(tau) > m && tau > 1 {
                break;
            }
            self.expand_all();
        }
        let tau = params.tau(self.depth);
        (self.active.clone(), self.depth, tau.div_ceil(m))
    }

    fn expand_all(&mut self) {
        let p = self.partition;
        self.active = self.active.iter().flat_map(|&n| p.children(n)).collect();
        self.depth += 1;
    }

    /// Eq. (1): with `(h^p, i^p) = argmax μ̂_{h,i}` and `b = c √(log(c₁T/δ)/T_{h,i})`,
    /// `ℰ^p = {(h,i) : μ̂_{h,i} + b_{h,i} + ν₁ρ^h < μ̂_{h^p,i^p} − b_{h^p,i^p}}`
    /// (every node of a phase has the same `T_{h,i} = M t_{m,h,i}`).
    pub fn elimination_set(
        params: &ValidFedPneParams,
        nodes: &[Node],
        means: &[f64],
        depth: u32,
        pulls_per_client: u64,
    ) -> Vec<Node> {
        let b = params.confidence_width(pulls_per_client * params.members as u64);
        let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let smooth = params.nu1 * params.rho.powi(depth as i32);
        nodes
            .iter()
            .zip(means)
            .filter(|(_, &mu)| mu + b + smooth < best - b)
            .map(|(&n, _)| n)
            .collect()
    }

    /// Alg. 2 lines 16-17: `𝒦^{p+1}` = children of the nodes not eliminated.
    /// At [`Partition::max_depth`] the surviving nodes are kept as they are.
    pub fn advance(&mut self, eliminated: &[Node]) {
        self.active.retain(|n| !eliminated.contains(n));
        if self.depth < self.partition.max_depth() {
            self.expand_all();
        }
    }
}

/// A run's result and its phases.
#[derive(Debug, Clone)]
pub struct FedPneReport {
    /// The row of `results.json`.
    pub result: RunResult,
    /// Every phase, in order.
    pub phases: Vec<Phase>,
}

/// One federation's state shared by the bandit methods: the clients, the
/// server's side of the channel and the per-round ledger.
pub(crate) struct Session<'a> {
    federation: Federation,
    clients: Vec<Client>,
    aggregator: Aggregator<'a>,
    ledger: Ledger<'a>,
    members: Vec<MemberId>,
    horizon: usize,
    epsilon: Option<f64>,
    start: Instant,
}

impl<'a> Session<'a> {
    pub(crate) fn new(
        task: &'a Task,
        params: &ValidFedPneParams,
        channel: &'a mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &'a mut dyn FnMut(&RoundProgress),
    ) -> Result<Self, AlgorithmError> {
        let members = roster.members();
        crate::error::check_members(params.members, members.len())?;
        let start = Instant::now();
        let federation = if roster.is_simulation() {
            Federation::new(
                task,
                params.members,
                params.perturbation,
                params.noise_std,
                params.assumed_optimum,
                seed,
            )?
        } else {
            Federation::for_member(task, params.members, params.noise_std)?
        };
        let clients = roster
            .local()
            .iter()
            .map(|l| {
                Client::new(
                    members[l.index].clone(),
                    l.index,
                    l.private_seed,
                    params.dp_sigma(),
                )
            })
            .collect();
        Ok(Self {
            federation,
            clients,
            aggregator: Aggregator::new(channel, params.channel_bound),
            ledger: Ledger::new(task, roster.is_simulation(), observer),
            members: members.to_vec(),
            horizon: params.rounds,
            epsilon: params.dp_sigma().and(params.epsilon),
            start,
        })
    }

    /// Rounds left in the budget.
    pub(crate) fn left(&self) -> u64 {
        (self.horizon - self.ledger.rounds()) as u64
    }

    /// Every client pulls `x` for `n` rounds, reporting nothing.
    pub(crate) fn spend(&mut self, x: &[f64], n: u64) -> Result<(), AlgorithmError> {
        self.ledger.record(&self.federation, x, n, self.epsilon)
    }

    /// One phase: every client pulls every point `pulls` times and the server
    /// learns the average of their local means. When the budget ends inside
    /// the phase, the clients spend what is left on the points in order,
    /// nothing is reported, and the result is `None`.
    pub(crate) fn phase(
        &mut self,
        points: &[Vec<f64>],
        pulls: u64,
    ) -> Result<Option<Vec<f64>>, AlgorithmError> {
        let left = self.left();
        if (points.len() as u64).saturating_mul(pulls) > left {
            let mut spent = 0;
            for x in points {
                let n = pulls.min(left - spent);
                self.spend(x, n)?;
                spent += n;
            }
            return Ok(None);
        }
        let m = self.members.len() as f64;
        let federation = &self.federation;
        let contributions = self
            .clients
            .iter_mut()
            .map(|c| {
                let means = c.local_means(federation, points, pulls)?;
                Ok((c.id().clone(), means.iter().map(|v| v / m).collect()))
            })
            .collect::<Result<Vec<_>, AlgorithmError>>()?;
        let means = self.aggregator.aggregate("local means", contributions)?;
        self.ledger.learn(&means);
        for x in points {
            self.ledger
                .record(&self.federation, x, pulls, self.epsilon)?;
        }
        Ok(Some(means))
    }

    pub(crate) fn finish(self, method: &str, seed: u64) -> RunResult {
        let epsilon = self.epsilon;
        let bytes = self
            .clients
            .iter()
            .map(|c| self.aggregator.bytes_sent(c.id()))
            .sum::<u64>()
            / self.clients.len().max(1) as u64;
        let aggregations = self.aggregator.aggregations();
        self.ledger.finish(
            method,
            seed,
            (self.members.len(), self.clients.len()),
            self.start,
            bytes,
            aggregations,
            epsilon,
        )
    }
}

/// Runs Fed-PNE (or DP-Fed-PNE) on `task` with `members` as clients.
pub fn run_detailed(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<FedPneReport, AlgorithmError> {
    let roster = Roster::simulation(members, seed);
    run_phases(task, params, channel, &roster, seed, &mut |_| {})
}

/// Fed-PNE (or DP-Fed-PNE) for the clients of `roster` (every one in the
/// simulator, one in an agent); the server role runs on every member alike.
pub(crate) fn run_phases(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    roster: &Roster<'_>,
    seed: u64,
    observer: &mut dyn FnMut(&RoundProgress),
) -> Result<FedPneReport, AlgorithmError> {
    let mut session = Session::new(task, params, channel, roster, seed, observer)?;
    let partition = Partition::new(params.arity, task.dim());
    let mut server = Server::new(partition);
    let mut phases = Vec::new();
    while session.left() > 0 {
        let (nodes, depth, pulls) = server.plan(params);
        let points: Vec<Vec<f64>> = nodes.iter().map(|&n| partition.centre(n)).collect();
        let Some(means) = session.phase(&points, pulls)? else {
            phases.push(Phase {
                depth,
                nodes,
                pulls_per_client: pulls,
                means: Vec::new(),
                eliminated: Vec::new(),
            });
            break;
        };
        let eliminated = Server::elimination_set(params, &nodes, &means, depth, pulls);
        server.advance(&eliminated);
        phases.push(Phase {
            depth,
            nodes,
            pulls_per_client: pulls,
            means,
            eliminated,
        });
    }
    let result = session.finish(params.method().name(), seed);
    Ok(FedPneReport { result, phases })
}

/// [`run_detailed`] without the phases.
pub fn run(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    Ok(run_detailed(task, params, channel, members, seed)?.result)
}

/// Per-round bookkeeping shared by the bandit methods: every client pulls the
/// same point in a round, so the average cumulative regret per client is the
/// cumulative regret of that sequence of points. A member running alone
/// cannot evaluate the global objective: its trace is the best global mean
/// the sums revealed so far (in the task's units), with no regret.
pub(crate) struct Ledger<'t> {
    task: &'t Task,
    simulation: bool,
    regret: f64,
    cumulative: Vec<f64>,
    trace: Vec<f64>,
    best: Option<f64>,
    observer: &'t mut dyn FnMut(&RoundProgress),
}

impl<'t> Ledger<'t> {
    pub(crate) fn new(
        task: &'t Task,
        simulation: bool,
        observer: &'t mut dyn FnMut(&RoundProgress),
    ) -> Self {
        Self {
            task,
            simulation,
            regret: 0.0,
            cumulative: Vec::new(),
            trace: Vec::new(),
            best: None,
            observer,
        }
    }

    pub(crate) fn rounds(&self) -> usize {
        self.trace.len()
    }

    fn improve(&mut self, v: f64) {
        self.best = Some(match self.best {
            Some(b) if !self.task.better(v, b) => b,
            _ => v,
        });
    }

    /// A member's view: the global means (utilities) a sum revealed.
    pub(crate) fn learn(&mut self, means: &[f64]) {
        if !self.simulation {
            for m in means {
                self.improve(self.task.utility(*m));
            }
        }
    }

    /// `n` rounds in which every client pulls `x`.
    pub(crate) fn record(
        &mut self,
        fed: &Federation,
        x: &[f64],
        n: u64,
        epsilon: Option<f64>,
    ) -> Result<(), AlgorithmError> {
        let r = if self.simulation {
            let r = fed.regret(x)?;
            self.improve(fed.global_value(x)?);
            r
        } else {
            0.0
        };
        for _ in 0..n {
            if self.simulation {
                self.regret += r;
                self.cumulative.push(self.regret);
            }
            let best = self.best.unwrap_or(f64::NAN);
            self.trace.push(best);
            (self.observer)(&RoundProgress {
                round: self.trace.len(),
                best_so_far: best,
                epsilon,
            });
        }
        Ok(())
    }

    /// The result; `members` is the federation's size and the clients this
    /// process played.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish(
        self,
        method: &str,
        seed: u64,
        (members, local): (usize, usize),
        start: Instant,
        bytes: u64,
        aggregations: usize,
        epsilon: Option<f64>,
    ) -> RunResult {
        let best = self.best.unwrap_or(f64::NAN);
        let rounds = self.trace.len();
        RunResult {
            task: self.task.name().to_string(),
            method: method.to_string(),
            seed,
            members,
            rounds,
            best,
            best_per_member: vec![best; local],
            trace: self.trace,
            seconds: start.elapsed().as_secs_f64(),
            bytes_sent_per_member: bytes,
            aggregations,
            global_steps: aggregations,
            epsilon: epsilon.map(|e| vec![e; rounds]),
            surrogate_rmse: None,
            surrogate_rmse_constant: None,
            releases: None,
            // It refuses a typed space (`FederatedMethod::takes_space`).
            best_point: None,
            cumulative_regret: self.simulation.then_some(self.cumulative),
            maximised: Some(self.task.is_maximised()),
        }
    }
}
