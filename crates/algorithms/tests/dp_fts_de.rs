//! DP-FTS-DE end to end over the channel: the broadcast vectors through the
//! real multiparty encryption equal the `PlainSum` ones (central noise), the
//! accountant reports the paper's ε each round, distributed noise carries the
//! configured variance, and runs repeat for a seed.

use fedhe_algorithms::dp_fts_de::{run, run_observed, DpFtsDeParams, NoiseMode, RoundEvent};
use fedhe_crypto::{
    CeremonyId, HeSum, InsecurePolicy, MemberId, ParameterSet, PlainSum, SecureSum,
};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;

fn members(n: usize) -> Vec<MemberId> {
    (1..=n)
        .map(|i| MemberId::new(format!("agent-{i}")).unwrap())
        .collect()
}

fn small(members: usize, rounds: usize) -> DpFtsDeParams {
    let mut p = DpFtsDeParams::new(members, rounds);
    p.initial_points = 3;
    p.features = 20;
    p.subregions = 2;
    p.sampling_rate = 0.5;
    p.acq_candidates = 200;
    p.acq_polish = 1;
    p.acq_iters = 10;
    p
}

fn broadcasts(channel: &mut dyn SecureSum, params: &DpFtsDeParams, seed: u64) -> Vec<RoundEvent> {
    let task = fedhe_tasks::by_name("gp-sample-4", 1, 0).unwrap();
    let valid = params.clone().validate().unwrap();
    let mut events = Vec::new();
    run_observed(
        &task,
        &valid,
        channel,
        &members(params.members),
        seed,
        &mut |e| events.push(e.clone()),
    )
    .unwrap();
    events
}

#[test]
fn broadcast_through_he_equals_plain_sum_in_central_mode() {
    let params = small(4, 4);
    let m = members(4);
    let valid = params.clone().validate().unwrap();
    let mut he = HeSum::new(
        ParameterSet::DEFAULT
            .validate(InsecurePolicy::Refuse)
            .unwrap(),
        &CeremonyId::new("dp-fts-de-test").unwrap(),
        m,
        valid.channel_bound(),
        Csprng::from_u128_seed(11),
    )
    .unwrap()
    .with_precision(fedhe_crypto::Precision::TwoLimb)
    .unwrap();
    let he_events = broadcasts(&mut he, &params, 7);
    let plain_events = broadcasts(&mut PlainSum, &params, 7);
    assert_eq!(he_events.len(), 4);
    let mut worst = 0.0f64;
    for (h, p) in he_events.iter().zip(&plain_events) {
        assert_eq!(h.batch, p.batch);
        assert_eq!(h.broadcast.len(), 2);
        for (a, b) in h.broadcast.iter().zip(&p.broadcast) {
            worst = worst.max((a - b).amax());
        }
    }
    eprintln!("max |broadcast(he) − broadcast(plain)| = {worst:e}");
    assert!(worst <= 1e-9, "broadcasts differ by {worst:e}");
    // The broadcasts are not trivial.
    assert!(plain_events.iter().any(|e| e.broadcast[0].amax() > 1e-3));
}

#[test]
fn epsilon_after_each_round_is_the_moments_accountants() {
    // Paper 000 Fig. 2c: q = 0.25, z = 1, T = 40, δ = 1/N^1.1 with N = 200.
    // Fewer agents here, so the same δ is configured explicitly.
    let mut p = small(6, 40);
    p.sampling_rate = 0.25;
    p.delta = Some(200f64.powf(-1.1));
    p.features = 10;
    p.acq_candidates = 50;
    let task = fedhe_tasks::by_name("gp-sample-4", 1, 0).unwrap();
    let r = run(&task, &p.validate().unwrap(), &mut PlainSum, &members(6), 1).unwrap();
    let eps = r.epsilon.expect("a private run reports ε");
    assert_eq!(eps.len(), 40);
    assert!(eps.windows(2).all(|w| w[1] >= w[0]));
    assert_eq!(format!("{:.2}", eps[39]), "9.91");
}

#[test]
fn no_noise_reports_no_epsilon_and_runs_repeat() {
    let mut p = small(5, 5);
    p.noise = NoiseMode::None;
    p.sampling_rate = 1.0;
    let task = fedhe_tasks::by_name("gp-sample-4", 1, 0).unwrap();
    let v = p.validate().unwrap();
    let a = run(&task, &v, &mut PlainSum, &members(5), 3).unwrap();
    let b = run(&task, &v, &mut PlainSum, &members(5), 3).unwrap();
    assert!(a.epsilon.is_none());
    assert_eq!(a.trace, b.trace);
    assert!(a.trace.windows(2).all(|w| w[1] <= w[0]));
    assert_eq!(a.aggregations, 5);
}

/// Without noise and with `q = 1`, the broadcast is the φ-weighted average of
/// the clipped draws; with distributed noise, its deviation from that average
/// has the configured standard deviation `z·φ_max·S/q`.
#[test]
fn distributed_noise_has_the_central_variance() {
    let mut p = small(40, 1);
    p.subregions = 1;
    p.sampling_rate = 1.0;
    p.features = 50;
    p.noise_multiplier = 2.0;
    let quiet = {
        let mut q = p.clone();
        q.noise = NoiseMode::None;
        broadcasts(&mut PlainSum, &q, 5)
    };
    p.noise = NoiseMode::Distributed;
    let noisy = broadcasts(&mut PlainSum, &p, 5);
    let diff = &noisy[0].broadcast[0] - &quiet[0].broadcast[0];
    let var = diff.iter().map(|d| d * d).sum::<f64>() / diff.len() as f64;
    // σ = z·φ_max·S/q = 2 · (1/40) · 11 = 0.55; the sample variance of 50
    // values lies within ±45% of σ² with overwhelming probability.
    let want = 0.55f64.powi(2);
    assert!((var / want - 1.0).abs() < 0.45, "variance {var} vs {want}");
    assert_eq!(noisy[0].batch, 40);
}

/// Client `n` minimises `n + x₀²` on the unit cube: every value it can see
/// lies in `[n, n + 1]`, so a client's result shows whose objective it
/// evaluated. No optimum is declared, like the real federated tasks.
#[derive(Debug)]
struct OffsetClients(usize);

impl fedhe_tasks::Problem for OffsetClients {
    fn clients(&self) -> usize {
        self.0
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        _rng: &mut rand_chacha::ChaCha8Rng,
    ) -> Result<fedhe_tasks::Evaluation, fedhe_tasks::TaskError> {
        let v = client as f64 + unit[0] * unit[0];
        Ok(fedhe_tasks::Evaluation::exact(v))
    }
}

fn offset_task(clients: usize) -> Task {
    Task::per_client(
        "offset-clients",
        2,
        fedhe_tasks::Sense::Minimise,
        None,
        std::sync::Arc::new(OffsetClients(clients)),
    )
}

/// DP-FTS-DE (and TS, FTS) on a task of per-client objectives with no known
/// optimum, as `fedhe simulate` runs the real federated tasks: agent `n`
/// evaluates client `n`'s objective, and the run reports the agents' mean best
/// value (there is no regret to report), never NaN.
#[test]
fn per_client_tasks_report_the_agents_mean_best_value() {
    use fedhe_algorithms::fts::{self, FtsParams, FtsVariant};
    let task = offset_task(4);
    let mut p = small(4, 3);
    p.subregions = 4;
    let dp = run(
        &task,
        &p.clone().validate().unwrap(),
        &mut PlainSum,
        &members(4),
        2,
    )
    .unwrap();
    let ts_params = FtsParams {
        members: 4,
        rounds: 3,
        initial_points: 3,
        features: 20,
        lengthscale: 0.2,
        noise_variance: 0.01,
        mixing_exponent: 0.5,
        messages: Default::default(),
        straggler_rate: 0.0,
        acq_candidates: 100,
        acq_polish: 1,
        acq_iters: 10,
        gp_prior_features: 100,
        channel_bound: 1024.0,
    };
    let ts = fts::run(
        &task,
        FtsVariant::Ts,
        &ts_params.validate().unwrap(),
        &mut PlainSum,
        &members(4),
        2,
    )
    .unwrap();
    for r in [&dp, &ts] {
        assert_eq!(r.best_per_member.len(), 4);
        for (n, b) in r.best_per_member.iter().enumerate() {
            assert!(
                (n as f64..=n as f64 + 1.0).contains(b),
                "{}: agent {n} reports {b}",
                r.method
            );
        }
        let mean = r.best_per_member.iter().sum::<f64>() / 4.0;
        assert!((r.best - mean).abs() < 1e-12, "{} vs {mean}", r.best);
        assert_eq!(r.trace.len(), 3);
        assert!(r.trace.windows(2).all(|w| w[1] <= w[0]), "{:?}", r.trace);
        assert!(r.cumulative_regret.is_none());
    }
    assert_eq!(dp.epsilon.as_ref().map(Vec::len), Some(3));
    // More agents than the task has clients is refused, naming `members`.
    let e = run(
        &offset_task(3),
        &p.validate().unwrap(),
        &mut PlainSum,
        &members(4),
        2,
    )
    .unwrap_err();
    assert!(e.to_string().contains("members"), "{e}");
}
