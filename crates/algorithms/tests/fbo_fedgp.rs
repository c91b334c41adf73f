//! FBO-FedGP end to end over the channel: the global posterior through the real
//! multiparty encryption equals the plaintext one, runs repeat for a seed, and
//! the federation improves on its initial design.

use fedhe_algorithms::fbo_fedgp::{
    run, run_member, simulated_client_seed, Client, FboFedGpParams, Hyperparameters, Method,
    OutputScaling, OutputWarping, Server, SummaryScaling,
};
use fedhe_crypto::{
    CeremonyId, HeSum, InsecurePolicy, MemberId, ParameterSet, PlainSum, SecureSum,
};
use fedhe_gp::sparse::Dpitc;
use fedhe_gp::{KernelParams, Matern52};
use fedhe_ring::Csprng;
use fedhe_tasks::Task;
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn members(n: usize) -> Vec<MemberId> {
    (1..=n)
        .map(|i| MemberId::new(format!("site-{i}")).unwrap())
        .collect()
}

/// The global posterior (mean, variance at test points) after one summary
/// aggregation through `channel`, from clients with fixed data.
fn global_posterior(channel: &mut dyn SecureSum, members: &[MemberId]) -> (Vec<f64>, Vec<f64>) {
    let (mean, var, _) = global_posterior_with(channel, members, false);
    (mean, var)
}

/// [`global_posterior`], with the GLS constant mean fitted from the same sum
/// when `gls` (its value is returned; zero otherwise).
fn global_posterior_with(
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    gls: bool,
) -> (Vec<f64>, Vec<f64>, f64) {
    let task = fedhe_tasks::by_name("cec2005-f6", 10, 0).unwrap();
    let warping = OutputWarping::SignedLog;
    let mut clients: Vec<Client> = members
        .iter()
        .enumerate()
        .map(|(i, m)| Client::new(m.clone(), i, 100 + i as u64))
        .collect();
    for c in clients.iter_mut() {
        c.initial_design(&task, 12, &[0.0; 10], &[1.0; 10]).unwrap();
    }
    let n_max = 60.0;
    let mut server = Server::new(channel, 1024.0);
    let stats = clients
        .iter()
        .map(|c| {
            (
                c.id().clone(),
                c.statistics_contribution(&task, warping, n_max),
            )
        })
        .collect();
    let scaling =
        OutputScaling::from_sums(&server.aggregate("statistics", stats).unwrap()).unwrap();
    let hyper = Hyperparameters::new(vec![0.7; 10], 1.3, 1e-3).unwrap();
    let family = Matern52::new(KernelParams::isotropic(10, 1.0, 1.0).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let support = DMatrix::from_fn(16, 10, |_, _| rng.gen::<f64>());
    let model = Dpitc::new(hyper.kernel(&family).unwrap(), hyper.noise(), 0.0, support).unwrap();
    let summary_scaling = SummaryScaling::new(16, &hyper, n_max);
    let contributions = clients
        .iter()
        .map(|c| {
            let v = c
                .summary_contribution(
                    &task,
                    warping,
                    &scaling,
                    &model,
                    &summary_scaling,
                    gls,
                    None,
                )
                .unwrap();
            (c.id().clone(), v)
        })
        .collect();
    let sum = server.aggregate("local summaries", contributions).unwrap();
    let at = fedhe_gp::sparse::packed_len(16);
    let summed = summary_scaling.from_channel(&sum[..at]).unwrap();
    let (model, summed, mu) = if gls {
        let terms = summary_scaling.mean_terms_from_channel(&sum[at..]).unwrap();
        let mu = model.gls_mean(&summed, &terms).unwrap();
        let (model, summed) = model.with_prior_mean(mu, &summed, &terms).unwrap();
        (model, summed, mu)
    } else {
        (model, summed, 0.0)
    };
    let global = model.global_summary(&summed).unwrap();
    let test = DMatrix::from_fn(50, 10, |_, _| rng.gen::<f64>());
    let (mean, var) = model.predict(&global, &test).unwrap();
    (
        mean.iter().copied().collect(),
        var.iter().copied().collect(),
        mu,
    )
}

/// The real multiparty channel at the default parameter set, bound 1024.
fn he_channel(ceremony: &str, members: &[MemberId], seed: u128) -> HeSum {
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    HeSum::new(
        params,
        &CeremonyId::new(ceremony).unwrap(),
        members.to_vec(),
        1024.0,
        Csprng::from_u128_seed(seed),
    )
    .unwrap()
    .with_precision(fedhe_crypto::Precision::TwoLimb)
    .unwrap()
}

#[test]
fn global_posterior_through_he_equals_plain_sum() {
    let m = members(5);
    let mut he = he_channel("posterior-test", &m, 7);
    let (he_mean, he_var) = global_posterior(&mut he, &m);
    let (plain_mean, plain_var) = global_posterior(&mut PlainSum, &m);
    let diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let (dm, dv) = (diff(&he_mean, &plain_mean), diff(&he_var, &plain_var));
    eprintln!("max |Δmean| = {dm:e}, max |Δvar| = {dv:e}");
    assert!(dm <= 1e-9, "mean differs by {dm:e}");
    assert!(dv <= 1e-9, "variance differs by {dv:e}");
    // The posterior is not trivial: the means vary across test points.
    let spread = he_mean.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(spread > 1e-3, "{spread}");
}

#[test]
fn the_gls_mean_through_he_equals_plain_sum() {
    let m = members(5);
    let mut he = he_channel("gls-mean-test", &m, 9);
    let (he_mean, he_var, he_mu) = global_posterior_with(&mut he, &m, true);
    let (plain_mean, plain_var, plain_mu) = global_posterior_with(&mut PlainSum, &m, true);
    let (zero_mean, _, _) = global_posterior_with(&mut PlainSum, &m, false);
    let diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    eprintln!("GLS mean through HE {he_mu}, plaintext {plain_mu}");
    assert!(
        (he_mu - plain_mu).abs() <= 1e-9,
        "{he_mu} against {plain_mu}"
    );
    assert!(diff(&he_mean, &plain_mean) <= 1e-9);
    assert!(diff(&he_var, &plain_var) <= 1e-9);
    // The fitted mean is not zero, and it moves the posterior.
    assert!(plain_mu.abs() > 1e-3, "{plain_mu}");
    assert!(diff(&plain_mean, &zero_mean) > 1e-3);
}

fn small_params() -> FboFedGpParams {
    let mut p = FboFedGpParams::paper_defaults();
    p.members = 3;
    p.rounds = 8;
    p.initial_points = 3;
    p.support.size = 6;
    p.acquisition.candidates = 200;
    p.hypers.lengthscale_prior = fedhe_algorithms::fbo_fedgp::LengthscalePrior::None;
    p
}

#[test]
fn a_run_repeats_for_a_seed_and_improves_on_its_initial_points() {
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = small_params().validate().unwrap();
    let m = members(3);
    let a = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, 3).unwrap();
    let b = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, 3).unwrap();
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.best_per_member, b.best_per_member);
    assert_eq!(a.trace.len(), 8);
    assert!(a.trace.windows(2).all(|w| w[1] <= w[0]), "{:?}", a.trace);
    assert_eq!(a.best, *a.trace.last().unwrap());
    let initial = run(
        &task,
        Method::RandomSearch,
        &FboFedGpParams {
            rounds: 1,
            ..small_params()
        }
        .validate()
        .unwrap(),
        &mut PlainSum,
        &m,
        3,
    )
    .unwrap();
    // Same seed, same initial design; BO must beat it and come near the optimum.
    assert!(
        a.best < initial.trace[0],
        "{} vs {}",
        a.best,
        initial.trace[0]
    );
    // Near the optimum in the median over seeds (one seed's 8 rounds can
    // stay far: seed 3 ends at a regret of 620 with lone local steps, while
    // their median over seeds 0-9 is 6, the paper's local steps' 39).
    let mut regrets: Vec<f64> = (0..7)
        .map(|seed| {
            let r = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, seed).unwrap();
            r.best - task.optimum()
        })
        .collect();
    regrets.sort_by(f64::total_cmp);
    assert!(regrets[3] < 100.0, "median regret over seeds: {regrets:?}");
    assert!(a.aggregations >= 2 && a.global_steps >= 1);
    assert!(a.bytes_sent_per_member > 0);
    // The global posterior has learnt the function: at the diagnostic's
    // points its mean is nearer the truth than the best constant is.
    let rmse = a.surrogate_rmse.expect("a global posterior was built");
    let constant = a.surrogate_rmse_constant.expect("and its baseline");
    assert!(
        rmse.is_finite() && constant > 0.0 && rmse < 0.5 * constant,
        "surrogate rmse {rmse} against a constant's {constant}"
    );
}

#[test]
fn variants_use_the_channel_as_specified() {
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = small_params().validate().unwrap();
    let m = members(3);
    let local = run(&task, Method::LocalOnly, &params, &mut PlainSum, &m, 1).unwrap();
    assert_eq!(
        local.global_steps, 0,
        "local-only never aggregates summaries"
    );
    let global = run(&task, Method::GlobalOnly, &params, &mut PlainSum, &m, 1).unwrap();
    assert_eq!(global.global_steps, 8, "global-only aggregates every round");
    for method in [
        Method::IndependentBo,
        Method::RandomSearch,
        Method::PooledBo,
    ] {
        let r = run(&task, method, &params, &mut PlainSum, &m, 1).unwrap();
        assert_eq!(
            (r.aggregations, r.bytes_sent_per_member),
            (0, 0),
            "{method:?}"
        );
    }
    let wrong = run(
        &task,
        Method::FboFedGp,
        &params,
        &mut PlainSum,
        &members(2),
        1,
    );
    assert!(wrong.unwrap_err().to_string().contains("members"));
}

/// A channel shared by threads, one member each: a round's sum is returned to
/// every member once all of them contributed (what the service does across
/// processes).
/// The last round summed, the contributions waiting, the sums so far.
type RendezvousState = (u64, Vec<(MemberId, Vec<f64>)>, Vec<Vec<f64>>);

struct Rendezvous {
    members: usize,
    state: std::sync::Mutex<RendezvousState>,
    ready: std::sync::Condvar,
}

struct MemberEnd(std::sync::Arc<Rendezvous>);

impl SecureSum for MemberEnd {
    fn sum(
        &mut self,
        round: fedhe_crypto::RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, fedhe_crypto::ChannelError> {
        assert_eq!(
            contributions.len(),
            1,
            "a member contributes only its own vector"
        );
        let r = &self.0;
        let mut st = r.state.lock().unwrap();
        assert_eq!(st.0 + 1, round.0, "members agree on the round numbering");
        st.1.extend(contributions);
        if st.1.len() == r.members {
            // In member order, as the in-process run adds them.
            let mut contributions = std::mem::take(&mut st.1);
            contributions.sort_by(|a, b| a.0.cmp(&b.0));
            let sum = PlainSum.sum(round, contributions)?;
            st.2.push(sum);
            st.0 = round.0;
            r.ready.notify_all();
        }
        while st.2.len() < round.0 as usize {
            st = r.ready.wait(st).unwrap();
        }
        Ok(st.2[round.0 as usize - 1].clone())
    }
}

#[test]
fn members_in_separate_threads_reproduce_the_in_process_federation() {
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = small_params().validate().unwrap();
    let ids = members(3);
    let seed = 11;
    members_reproduce(&task, Method::FboFedGp, &params, &ids, seed);
    let me = MemberId::new("stranger").unwrap();
    let err = run_member(
        &task,
        Method::FboFedGp,
        &params,
        &mut PlainSum,
        &ids,
        &me,
        seed,
        1u64.into(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("stranger"), "{err}");
}

#[test]
fn local_scaling_changes_local_steps_only() {
    use fedhe_algorithms::fbo_fedgp::LocalScaling;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let with = |method, scaling| {
        // The option is about the paper's local steps.
        let params = {
            let mut p = small_params();
            p.model.local_scaling = scaling;
            p.steps.local = fedhe_algorithms::fbo_fedgp::LocalSteps::Federated;
            p
        }
        .validate()
        .unwrap();
        run(&task, method, &params, &mut PlainSum, &m, 5).unwrap()
    };
    // Global steps use the federation's scaling whatever the option says.
    assert_eq!(
        with(Method::GlobalOnly, LocalScaling::Own).trace,
        with(Method::GlobalOnly, LocalScaling::Federation).trace
    );
    // Local steps standardise differently, so they propose other points.
    assert_ne!(
        with(Method::LocalOnly, LocalScaling::Own).best_per_member,
        with(Method::LocalOnly, LocalScaling::Federation).best_per_member
    );
}

#[test]
fn a_clients_own_scaling_is_the_mean_and_deviation_of_its_warped_utilities() {
    use fedhe_algorithms::fbo_fedgp::{Client, OutputWarping};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let mut client = Client::new(members(1)[0].clone(), 0, 11);
    client
        .initial_design(&task, 6, &[0.0, 0.0], &[1.0, 1.0])
        .unwrap();
    let warping = OutputWarping::SignedLog;
    // The reference: the utilities recomputed from the client's points.
    let (x, _) = client.data(
        &task,
        warping,
        &fedhe_algorithms::fbo_fedgp::OutputScaling {
            mean: 0.0,
            std: 1.0,
        },
    );
    let u: Vec<f64> = (0..x.nrows())
        .map(|i| {
            let point: Vec<f64> = x.row(i).iter().copied().collect();
            let y = task.evaluate(0, &point, &mut ChaCha8Rng::seed_from_u64(0));
            warping.apply(task.utility(y.unwrap().noise_free))
        })
        .collect();
    let mean = u.iter().sum::<f64>() / u.len() as f64;
    let std = (u.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / u.len() as f64).sqrt();
    let own = client.own_scaling(&task, warping).unwrap();
    assert!((own.mean - mean).abs() < 1e-12, "{} vs {mean}", own.mean);
    assert!((own.std - std).abs() < 1e-12, "{} vs {std}", own.std);
}

/// One client per member, client `i` seeded `seed + i` with `points(i)`
/// uniform points of `task`'s unit cube.
fn designed_clients(
    task: &Task,
    members: &[MemberId],
    seed: u64,
    points: impl Fn(usize) -> usize,
) -> Vec<Client> {
    let dim = task.dim();
    members
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let mut c = Client::new(id.clone(), i, seed + i as u64);
            c.initial_design(task, points(i), &vec![0.0; dim], &vec![1.0; dim])
                .unwrap();
            c
        })
        .collect()
}

/// The pooled reference: every client's raw utility in one place, each
/// recomputed from its input by evaluating `task` again (noise-free).
fn pooled_utilities(task: &Task, clients: &[Client]) -> Vec<f64> {
    let mut pooled = Vec::new();
    for c in clients {
        let (x, _) = c.data(
            task,
            OutputWarping::None,
            &OutputScaling {
                mean: 0.0,
                std: 1.0,
            },
        );
        for i in 0..x.nrows() {
            let p: Vec<f64> = x.row(i).iter().copied().collect();
            let y = task
                .evaluate(0, &p, &mut ChaCha8Rng::seed_from_u64(0))
                .unwrap();
            pooled.push(task.utility(y.noise_free));
        }
    }
    pooled
}

/// The federation's choice among `warps` and its output scaling: one secure
/// sum of every client's warp contribution through `server`.
fn federated_warping(
    server: &mut Server<'_>,
    task: &Task,
    clients: &[Client],
    warps: &[OutputWarping],
    n_max: f64,
) -> (OutputWarping, OutputScaling) {
    use fedhe_algorithms::fbo_fedgp::choose_warping_and_scaling;
    let sums = server
        .aggregate(
            "statistics",
            clients
                .iter()
                .map(|c| (c.id().clone(), c.warp_contribution(task, warps, n_max)))
                .collect(),
        )
        .unwrap();
    choose_warping_and_scaling(warps, &sums).unwrap()
}

/// The federation's clipped warping and output scaling: one secure sum of
/// the clients' log-magnitudes (the threshold), then [`federated_warping`].
fn federated_clipped_warping(
    server: &mut Server<'_>,
    task: &Task,
    clients: &[Client],
    n_max: f64,
) -> (OutputWarping, OutputScaling) {
    let magnitudes = server
        .aggregate(
            "log-magnitudes",
            clients
                .iter()
                .map(|c| (c.id().clone(), c.magnitude_contribution(task, n_max)))
                .collect(),
        )
        .unwrap();
    let warps = fedhe_algorithms::fbo_fedgp::Warping::Clipped
        .candidates(Some(&magnitudes))
        .unwrap();
    federated_warping(server, task, clients, &warps, n_max)
}

/// The clipped warping through the HE channel at its default bound: the
/// threshold is `exp(μ + 3σ) − 1` of the pooled log-magnitudes and the
/// standardisation that of the pooled clipped utilities, both computed here
/// from the raw utilities in one place by the textbook formulas; on F6, whose
/// raw sums of squares the same channel refuses, the clip binds on few values
/// and the standardised values equal the unwarped ones wherever it does not.
#[test]
fn clipped_warping_through_he_is_the_pooled_standardisation_within_the_bound() {
    use fedhe_algorithms::AlgorithmError;
    let task = fedhe_tasks::by_name("cec2005-f6", 10, 0).unwrap();
    let m = members(4);
    let clients = designed_clients(&task, &m, 70, |i| 5 + 4 * i);
    let n_max = 54.0;
    let mut he = he_channel("clipped-warping", &m, 11);
    let mut server = Server::new(&mut he, 1024.0);
    let (warp, scaling) = federated_clipped_warping(&mut server, &task, &clients, n_max);
    let OutputWarping::Clipped(t) = warp else {
        panic!("{warp:?}")
    };

    let u = pooled_utilities(&task, &clients);
    let n = u.len() as f64;
    let logs: Vec<f64> = u.iter().map(|v| (1.0 + v.abs()).ln()).collect();
    let mu = logs.iter().sum::<f64>() / n;
    let sigma = (logs.iter().map(|l| (l - mu).powi(2)).sum::<f64>() / n).sqrt();
    let t_ref = (mu + 3.0 * sigma).exp() - 1.0;
    assert!(
        (t - t_ref).abs() <= 1e-9 * t_ref,
        "T = {t}, reference {t_ref}"
    );
    let clipped: Vec<f64> = u.iter().map(|v| v.clamp(-t_ref, t_ref)).collect();
    let mean = clipped.iter().sum::<f64>() / n;
    let std = (clipped.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let raw_mean = u.iter().sum::<f64>() / n;
    let raw_std = (u.iter().map(|v| (v - raw_mean).powi(2)).sum::<f64>() / n).sqrt();
    let mut unclipped = 0;
    for (v, c) in u.iter().zip(&clipped) {
        let z = scaling.standardise(warp.apply(*v));
        assert!((z - (c - mean) / std).abs() < 1e-6, "{z} at u = {v}");
        if v.abs() <= t_ref {
            unclipped += 1;
        }
    }
    // The clip keeps nearly all values.
    assert!(unclipped as f64 >= 0.95 * n, "{unclipped} of {n}");
    if unclipped == u.len() {
        assert!((mean - raw_mean).abs() < 1e-12 * raw_std);
    }
    // The same data unwarped: refused by the same bound before sending.
    let none = [OutputWarping::None];
    let err = server
        .aggregate(
            "statistics",
            clients
                .iter()
                .map(|c| (c.id().clone(), c.warp_contribution(&task, &none, n_max)))
                .collect(),
        )
        .unwrap_err();
    assert!(matches!(err, AlgorithmError::OutOfBound { .. }), "{err}");
}

/// The federation's hyper-parameter choice (one secure sum of every client's
/// clamped log-likelihoods of the public candidates, then [`pooled_map`]) is
/// the argmax over the same candidates of the pooled log-likelihood
/// `Σ_i log p(y_i | θ)` plus the log prior, computed here in plaintext from the
/// clients' data without clamping or fixed-point rounding; and its warping
/// (through `PlainSum`) is the one chosen on the pooled raw utilities.
#[test]
fn federated_hyperparameters_and_warping_are_the_pooled_choice() {
    use fedhe_algorithms::fbo_fedgp::{
        choose_warping_and_scaling, pooled_map, warp_contribution, Warping,
    };
    use fedhe_gp::hyperfit::HyperPrior;
    use fedhe_gp::ExactGpParams;
    let task = fedhe_tasks::by_name("cec2005-f9", 10, 0).unwrap();
    let m = members(4);
    let clients = designed_clients(&task, &m, 40, |i| 6 + 3 * i);
    let n_max = 54.0;
    let setting = Warping::Likelihood;
    let warps = setting.candidates(None).unwrap();
    // The warping through PlainSum (see `Warping::Likelihood` for its limit
    // through the fixed-point channel), the hyper-parameters through HE.
    let mut plain = PlainSum;
    let (warp, scaling) = federated_warping(
        &mut Server::new(&mut plain, 1024.0),
        &task,
        &clients,
        &warps,
        n_max,
    );
    let pooled_u = pooled_utilities(&task, &clients);
    let (pooled_warp, pooled_scaling) =
        choose_warping_and_scaling(&warps, &warp_contribution(&warps, &pooled_u, 1.0)).unwrap();
    assert_eq!(warp, pooled_warp);
    assert!((scaling.mean - pooled_scaling.mean).abs() < 1e-9);
    assert!((scaling.std - pooled_scaling.std).abs() < 1e-9);

    let mut he = he_channel("pooled-map", &m, 3);
    let mut server = Server::new(&mut he, 1024.0);
    let family = Matern52::new(KernelParams::isotropic(10, 1.0, 1.0).unwrap());
    let current = Hyperparameters::new(vec![0.8; 10], 1.0, 1e-2).unwrap();
    let bounds = fedhe_gp::hyperfit::HyperBounds {
        lengthscale: (1e-2, 1e2),
        signal_variance: (0.05, 20.0),
        noise_variance: (1e-4, 1.0),
    };
    let candidates = current.candidates(&bounds, 64, &mut ChaCha8Rng::seed_from_u64(9));
    let summed = server
        .aggregate(
            "log-likelihoods",
            clients
                .iter()
                .map(|c| {
                    let v = c.log_likelihoods(&task, warp, &scaling, &candidates, &family, n_max);
                    (c.id().clone(), v)
                })
                .collect(),
        )
        .unwrap();
    let prior = HyperPrior::dim_scaled(10);
    let reference = |prior: Option<&HyperPrior>| {
        candidates
            .iter()
            .map(|h| {
                let lml: f64 = clients
                    .iter()
                    .map(|c| {
                        let (x, y) = c.data(&task, warp, &scaling);
                        ExactGpParams::new(h.kernel(&family).unwrap())
                            .noise_variance(h.noise())
                            .fit(&x, &y)
                            .unwrap()
                            .log_marginal_likelihood()
                    })
                    .sum();
                lml + prior.map_or(0.0, |p| p.log_prior(h.log()).0)
            })
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap()
            .0
    };
    let map = pooled_map(&candidates, &summed, n_max, Some(&prior)).unwrap();
    let ml = pooled_map(&candidates, &summed, n_max, None).unwrap();
    assert_eq!(map, reference(Some(&prior)));
    assert_eq!(ml, reference(None));
    // The prior matters here: MAP and ML pick different candidates.
    eprintln!("MAP candidate {map}, ML candidate {ml}");
}

#[test]
fn sparse_hyperparameter_choice_through_he_is_the_argmax_of_the_dense_pitc_evidence() {
    use fedhe_algorithms::fbo_fedgp::{pooled_map, sparse_evidences};
    use fedhe_gp::hyperfit::HyperPrior;
    let task = fedhe_tasks::by_name("cec2005-f9", 10, 0).unwrap();
    let m = members(4);
    let clients = designed_clients(&task, &m, 60, |i| 5 + 2 * i);
    let n_max = 54.0;
    let warp = OutputWarping::SignedLog;
    let scaling = OutputScaling {
        mean: -5.5,
        std: 0.2,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let support = DMatrix::from_fn(8, 10, |_, _| rng.gen::<f64>());
    let family = Matern52::new(KernelParams::isotropic(10, 1.0, 1.0).unwrap());
    let current = Hyperparameters::new(vec![0.8; 10], 1.0, 1e-2).unwrap();
    let bounds = fedhe_gp::hyperfit::HyperBounds {
        lengthscale: (1e-2, 1e2),
        signal_variance: (0.05, 20.0),
        noise_variance: (1e-4, 1.0),
    };
    let candidates = current.candidates(&bounds, 32, &mut ChaCha8Rng::seed_from_u64(9));
    let mut he = he_channel("sparse-map", &m, 4);
    let summed = Server::new(&mut he, 1024.0)
        .aggregate(
            "sparse evidence",
            clients
                .iter()
                .map(|c| {
                    let v = c.sparse_evidence(
                        &task,
                        warp,
                        &scaling,
                        &candidates,
                        &family,
                        &support,
                        n_max,
                    );
                    (c.id().clone(), v)
                })
                .collect(),
        )
        .unwrap();
    let evidence = sparse_evidences(&candidates, &family, &support, &summed, n_max).unwrap();
    let blocks: Vec<_> = clients
        .iter()
        .map(|c| c.data(&task, warp, &scaling))
        .collect();
    let mut worst: f64 = 0.0;
    let reference: Vec<f64> = candidates
        .iter()
        .zip(&evidence)
        .map(|(h, ours)| {
            let dense = fedhe_gp::sparse::dense_pitc_log_marginal_likelihood(
                &h.kernel(&family).unwrap(),
                h.noise(),
                0.0,
                &support,
                &blocks,
            )
            .unwrap();
            worst = worst.max((ours - dense).abs() / dense.abs().max(1.0));
            dense
        })
        .collect();
    assert!(
        worst < 1e-6,
        "largest relative deviation from the dense evidence {worst:e}"
    );
    let prior = HyperPrior::dim_scaled(10);
    let argmax = |values: &[f64], prior: Option<&HyperPrior>| {
        values
            .iter()
            .zip(&candidates)
            .map(|(v, h)| v + prior.map_or(0.0, |p| p.log_prior(h.log()).0))
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap()
            .0
    };
    let map = pooled_map(&candidates, &evidence, 1.0, Some(&prior)).unwrap();
    assert_eq!(map, argmax(&reference, Some(&prior)));
    assert_eq!(
        pooled_map(&candidates, &evidence, 1.0, None).unwrap(),
        argmax(&reference, None)
    );
    // The evidence of the global model is not the sum of the clients' own.
    let experts: Vec<f64> = candidates
        .iter()
        .map(|h| {
            blocks
                .iter()
                .map(|(x, y)| {
                    fedhe_gp::ExactGpParams::new(h.kernel(&family).unwrap())
                        .noise_variance(h.noise())
                        .fit(x, y)
                        .unwrap()
                        .log_marginal_likelihood()
                })
                .sum()
        })
        .collect();
    assert!(
        experts
            .iter()
            .zip(&reference)
            .any(|(e, r)| (e - r).abs() > 1.0),
        "{experts:?} vs {reference:?}"
    );
}

#[test]
fn auto_warping_standardises_a_lone_agent_and_keeps_the_federation_in_the_channel() {
    use fedhe_algorithms::fbo_fedgp::Warping;
    // F6 (shifted Rosenbrock) reaches 10^10 in the box: raw sums of squares
    // would exceed the channel's bound, signed-log values do not.
    let task = fedhe_tasks::by_name("cec2005-f6", 2, 0).unwrap();
    let m = members(3);
    // The paper's local steps, so the federation's warping is the only one
    // used (lone local steps warp as a lone agent does).
    let with = |warping: Warping| {
        {
            let mut p = small_params();
            p.model.warping = warping;
            p.steps.local = fedhe_algorithms::fbo_fedgp::LocalSteps::Federated;
            p
        }
        .validate()
        .unwrap()
    };
    // One 2-round run of `method` with `warping`.
    let go =
        |method: Method, warping: Warping| run(&task, method, &with(warping), &mut PlainSum, &m, 2);
    assert_eq!(
        FboFedGpParams::paper_defaults().model.warping,
        Warping::Auto
    );
    let lone = go(Method::IndependentBo, Warping::Auto).unwrap();
    let standardised = go(Method::IndependentBo, Warping::None).unwrap();
    let signed_log = go(Method::IndependentBo, Warping::SignedLog).unwrap();
    assert_eq!(lone.trace, standardised.trace);
    assert_ne!(lone.trace, signed_log.trace, "the setting must matter");
    let fed = go(Method::FboFedGp, Warping::Auto).unwrap();
    let fed_signed_log = go(Method::FboFedGp, Warping::SignedLog).unwrap();
    // Standardised raw values in a federation are refused by the channel's
    // bound, naming what was sent.
    let err = go(Method::FboFedGp, Warping::None).unwrap_err().to_string();
    assert!(err.contains("statistics"), "{err}");
    // Clipped standardised values fit it, at the cost of a secure sum of the
    // log-magnitudes before each sum of the statistics.
    // A federation's default.
    let fed_clipped = go(Method::FboFedGp, Warping::Clipped).unwrap();
    assert!(fed_clipped.aggregations > fed_signed_log.aggregations);
    assert_eq!(fed.trace, fed_clipped.trace);
    assert_eq!(fed.aggregations, fed_clipped.aggregations);
}

/// Issue 14 diagnosis: a fitted constant prior mean (`prior_mean =
/// "constant"`) changes a lone agent's run, and a federation, whose global
/// posterior has a zero mean, refuses it naming the field.
#[test]
fn a_constant_prior_mean_is_fitted_by_a_lone_agent_and_from_sums_by_a_federation() {
    use fedhe_algorithms::fbo_fedgp::{PriorMean, Warping};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let with = |prior_mean: PriorMean| {
        {
            let mut p = small_params();
            p.model.prior_mean = prior_mean;
            p.model.warping = Warping::Auto;
            p
        }
        .validate()
        .unwrap()
    };
    let go = |method: Method, prior_mean: PriorMean| {
        run(&task, method, &with(prior_mean), &mut PlainSum, &m, 3)
    };
    let zero = go(Method::IndependentBo, PriorMean::Zero).unwrap();
    let constant = go(Method::IndependentBo, PriorMean::Constant).unwrap();
    assert_ne!(zero.trace, constant.trace, "the setting must matter");
    assert_eq!(
        constant.trace,
        go(Method::IndependentBo, PriorMean::Constant)
            .unwrap()
            .trace,
        "seeded runs repeat"
    );
    // A federation fits the global posterior's constant mean from the same
    // summary aggregation: as many secure sums, |S| + 2 more values each.
    // Global steps only, so that the lone recipe of local steps (which the
    // setting also sets) plays no part.
    let fed_zero = go(Method::GlobalOnly, PriorMean::Zero).unwrap();
    let fed_constant = go(Method::GlobalOnly, PriorMean::Constant).unwrap();
    assert_ne!(
        fed_zero.trace, fed_constant.trace,
        "the setting must matter"
    );
    assert_eq!(fed_zero.aggregations, fed_constant.aggregations);
    assert!(fed_constant.bytes_sent_per_member >= fed_zero.bytes_sent_per_member);
    assert_eq!(
        go(Method::GlobalOnly, PriorMean::Auto).unwrap().trace,
        fed_zero.trace,
        "a federation's global posterior keeps a zero mean by default"
    );
    go(Method::FboFedGp, PriorMean::Constant).unwrap();
    // Members in separate threads reproduce it.
    members_reproduce(&task, Method::GlobalOnly, &with(PriorMean::Constant), &m, 3);
}

/// A channel that counts the secure sums it is asked for (and refuses
/// none), to show a refusal comes before the first one.
struct CountingSum(usize);

impl SecureSum for CountingSum {
    fn sum(
        &mut self,
        round: fedhe_crypto::RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, fedhe_crypto::ChannelError> {
        self.0 += 1;
        PlainSum.sum(round, contributions)
    }
}

/// Issue 14, Deliver item 2: a quadratic trend as a lone agent's prior mean
/// (`prior_mean = "quadratic"`, chosen against the constant by BIC at each
/// refit, `"bic"`, or stepped on in turn with the constant, `"alternate"`)
/// changes its run from the constant's once it holds `D + 4` points, repeats
/// when seeded, serves `pooled-bo` too, and a federation refuses each by
/// name before any secure sum (their weights would need sums no summary
/// carries).
#[test]
fn a_quadratic_trend_is_fitted_by_lone_agents_chosen_by_bic_and_refused_by_a_federation_before_any_sum(
) {
    use fedhe_algorithms::fbo_fedgp::PriorMean;
    use fedhe_algorithms::AlgorithmError;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let with = |prior_mean: PriorMean| {
        {
            let mut p = small_params();
            p.model.prior_mean = prior_mean;
            p
        }
        .validate()
        .unwrap()
    };
    let go = |method: Method, prior_mean: PriorMean| {
        run(&task, method, &with(prior_mean), &mut PlainSum, &m, 3)
    };
    for method in [Method::IndependentBo, Method::PooledBo] {
        let constant = go(method, PriorMean::Constant).unwrap();
        let quadratic = go(method, PriorMean::Quadratic).unwrap();
        assert_ne!(
            constant.trace, quadratic.trace,
            "{method:?}: the setting must matter"
        );
        assert_eq!(
            quadratic.trace,
            go(method, PriorMean::Quadratic).unwrap().trace,
            "{method:?}: seeded runs repeat"
        );
    }
    // Chosen by BIC at each refit: on a sphere the quadratic wins once the
    // agent holds enough points, so the run leaves the constant's.
    let constant = go(Method::IndependentBo, PriorMean::Constant).unwrap();
    let bic = go(Method::IndependentBo, PriorMean::Bic).unwrap();
    assert_ne!(constant.trace, bic.trace, "the BIC must choose the trend");
    assert_eq!(
        bic.trace,
        go(Method::IndependentBo, PriorMean::Bic).unwrap().trace
    );
    // Alternating, every other step takes the constant's fit where BIC
    // keeps the trend's, so the run leaves BIC's as well as the constant's.
    let alternate = go(Method::IndependentBo, PriorMean::Alternate).unwrap();
    assert_ne!(
        alternate.trace, bic.trace,
        "the constant's steps must count"
    );
    assert_ne!(alternate.trace, constant.trace);
    assert_eq!(
        alternate.trace,
        go(Method::IndependentBo, PriorMean::Alternate)
            .unwrap()
            .trace
    );
    for (method, mean) in [
        (Method::FboFedGp, PriorMean::Quadratic),
        (Method::GlobalOnly, PriorMean::Quadratic),
        (Method::FboFedGp, PriorMean::Bic),
        (Method::FboFedGp, PriorMean::Alternate),
    ] {
        let mut channel = CountingSum(0);
        let err = run(&task, method, &with(mean), &mut channel, &m, 3).unwrap_err();
        assert!(
            matches!(&err, AlgorithmError::Config { field, .. } if *field == "prior_mean"),
            "{method:?}: {err}"
        );
        assert_eq!(channel.0, 0, "{method:?}: refused before any secure sum");
        // The same federation with the constant mean does sum.
        let mut channel = CountingSum(0);
        run(
            &task,
            method,
            &with(PriorMean::Constant),
            &mut channel,
            &m,
            3,
        )
        .unwrap();
        assert!(channel.0 > 0);
    }
}

/// Issue 14: the defaults are per method. A lone agent's defaults are the
/// measured best lone recipe (standardised outputs, LogEI, a constant and a
/// quadratic prior mean in turn); a federation's are clipped standardised outputs, GP-UCB
/// and a zero mean, its local steps the lone recipe with a fitted constant
/// mean; so each seeded run equals the explicit settings bit for bit.
#[test]
fn the_default_settings_resolve_per_method() {
    use fedhe_algorithms::fbo_fedgp::{LocalSteps, PriorMean, Warping};
    use fedhe_algorithms::surrogate::AcquisitionKind;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let defaults = FboFedGpParams::paper_defaults();
    assert_eq!(defaults.acquisition.kind, None);
    assert_eq!(defaults.model.prior_mean, PriorMean::Auto);
    let valid = small_params().validate().unwrap();
    assert_eq!(
        valid.acquisition_for(Method::IndependentBo),
        AcquisitionKind::Ei
    );
    assert_eq!(
        valid.acquisition_for(Method::FboFedGp),
        AcquisitionKind::Ucb
    );
    let explicit = |warping, acquisition, prior_mean| {
        {
            let mut p = small_params();
            p.model.warping = warping;
            p.acquisition.kind = Some(acquisition);
            p.model.prior_mean = prior_mean;
            p
        }
        .validate()
        .unwrap()
    };
    let go = |method: Method, p: &fedhe_algorithms::fbo_fedgp::ValidParams| {
        run(&task, method, p, &mut PlainSum, &m, 5).unwrap().trace
    };
    let lone_recipe = explicit(Warping::None, AcquisitionKind::Ei, PriorMean::Alternate);
    assert_eq!(
        PriorMean::Auto.resolve(Method::IndependentBo),
        PriorMean::Alternate
    );
    assert_eq!(
        PriorMean::Auto.resolve(Method::PooledBo),
        PriorMean::Constant
    );
    assert_eq!(PriorMean::Auto.resolve(Method::FboFedGp), PriorMean::Zero);
    assert_eq!(
        PriorMean::Auto.resolve_lone(Method::FboFedGp),
        PriorMean::Constant
    );
    let federated_recipe = explicit(Warping::Clipped, AcquisitionKind::Ucb, PriorMean::Zero);
    // The federation's own settings resolve as before; compared with the
    // paper's local steps, which use only the federation's settings.
    assert_eq!(defaults.steps.local, LocalSteps::Lone);
    let paper_local = |p: &fedhe_algorithms::fbo_fedgp::ValidParams| {
        {
            let mut p = (**p).clone();
            p.steps.local = LocalSteps::Federated;
            p
        }
        .validate()
        .unwrap()
    };
    let lone = go(Method::IndependentBo, &valid);
    assert_eq!(lone, go(Method::IndependentBo, &lone_recipe));
    assert_ne!(
        lone,
        go(Method::IndependentBo, &federated_recipe),
        "the recipes must differ on this run"
    );
    for method in [Method::FboFedGp, Method::LocalOnly] {
        assert_eq!(
            go(method, &paper_local(&valid)),
            go(method, &paper_local(&federated_recipe)),
            "{method:?}"
        );
    }
    // Lone local steps: a local-only federation's members step exactly as
    // lone agents with the fitted constant mean on the whole cube do (the
    // alternating trend and the trust region, a lone agent's defaults, are
    // not a federation's).
    let local_only = run(&task, Method::LocalOnly, &valid, &mut PlainSum, &m, 5).unwrap();
    let lone_constant = {
        let mut p = (*explicit(Warping::None, AcquisitionKind::Ei, PriorMean::Constant)).clone();
        p.acquisition.trust_region = Some(false);
        p
    }
    .validate()
    .unwrap();
    let lone_run = run(
        &task,
        Method::IndependentBo,
        &lone_constant,
        &mut PlainSum,
        &m,
        5,
    )
    .unwrap();
    assert_eq!(local_only.best_per_member, lone_run.best_per_member);
    assert_ne!(
        lone,
        go(Method::IndependentBo, &lone_constant),
        "the lone default must alternate, not fit the constant alone"
    );
    let lone_bic = explicit(Warping::None, AcquisitionKind::Ei, PriorMean::Bic);
    assert_ne!(
        lone,
        go(Method::IndependentBo, &lone_bic),
        "the lone default must alternate, not keep BIC's choice"
    );
    // A lone agent's steps take a trust region by default, a federation's
    // local steps do not.
    assert_eq!(defaults.acquisition.trust_region, None);
    assert!(valid.trust_region_for(Method::IndependentBo));
    for method in [Method::PooledBo, Method::FboFedGp, Method::LocalOnly] {
        assert!(!valid.trust_region_for(method), "{method:?}");
    }
    let whole_cube = {
        let mut p = (*lone_recipe).clone();
        p.acquisition.trust_region = Some(false);
        p
    }
    .validate()
    .unwrap();
    assert_ne!(
        lone,
        go(Method::IndependentBo, &whole_cube),
        "the lone default must take the trust region"
    );
}

/// Issue 14: with penalised global steps every member computes the public
/// batch up to its own slot alone; the members in separate threads still
/// reproduce the in-process federation, and the setting changes the run (the
/// spread of a batch is tested in `surrogate::tests`).
#[test]
fn penalised_global_steps_are_reproduced_by_separate_members_and_differ() {
    use fedhe_algorithms::fbo_fedgp::GlobalSteps;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = {
        let mut p = small_params();
        p.steps.global = GlobalSteps::Penalised;
        p
    }
    .validate()
    .unwrap();
    let ids = members(3);
    members_reproduce(&task, Method::GlobalOnly, &params, &ids, 11);
    let shared = run(
        &task,
        Method::GlobalOnly,
        &small_params().validate().unwrap(),
        &mut PlainSum,
        &ids,
        11,
    )
    .unwrap();
    let penalised = run(&task, Method::GlobalOnly, &params, &mut PlainSum, &ids, 11).unwrap();
    assert_ne!(shared.trace, penalised.trace, "the setting must matter");
}

#[test]
fn a_public_support_set_grows_without_secure_kmeans_is_the_default_for_growth_and_separate_members_reproduce_it(
) {
    use fedhe_algorithms::fbo_fedgp::{SupportGrowth, SupportSelection};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let grown = |selection| {
        {
            let mut p = small_params();
            p.support.selection = selection;
            p.support.growth = Some(SupportGrowth { step: 2, every: 2 });
            p
        }
        .validate()
        .unwrap()
    };
    let ids = members(3);
    let public = grown(SupportSelection::Public);
    // Members in separate threads must grow the same set from the global
    // posterior they each decode, or their summaries would not add up.
    members_reproduce(&task, Method::FboFedGp, &public, &ids, 5);
    let by = |params: &fedhe_algorithms::fbo_fedgp::ValidParams| {
        run(&task, Method::FboFedGp, params, &mut PlainSum, &ids, 5).unwrap()
    };
    let (public, random, kmeans) = (
        by(&public),
        by(&grown(SupportSelection::Random)),
        by(&grown(SupportSelection::SecureKmeans)),
    );
    // The local/global draws are public coin flips, so the three runs make
    // the same summary and fit aggregations; only secure k-means adds its
    // Lloyd steps' sums, at the start and at each of the three growths.
    assert_eq!(public.global_steps, kmeans.global_steps);
    assert_eq!(public.aggregations, random.aggregations);
    assert!(
        kmeans.aggregations >= public.aggregations + 4,
        "secure k-means {} against public {}",
        kmeans.aggregations,
        public.aggregations
    );
    assert_ne!(public.trace, random.trace, "the grown points must matter");
    // The default selection is public when the set grows and secure k-means
    // (once, on the uniform initial points) when it does not.
    let auto = by(&grown(SupportSelection::Auto));
    assert_eq!(auto.trace, public.trace);
    assert_eq!(auto.aggregations, public.aggregations);
    let fixed = |selection| {
        {
            let mut p = small_params();
            p.support.selection = selection;
            p
        }
        .validate()
        .unwrap()
    };
    let (auto_fixed, kmeans_fixed) = (
        by(&fixed(SupportSelection::Auto)),
        by(&fixed(SupportSelection::SecureKmeans)),
    );
    assert_eq!(auto_fixed.trace, kmeans_fixed.trace);
    assert_eq!(auto_fixed.aggregations, kmeans_fixed.aggregations);
    assert_eq!(SupportSelection::default(), SupportSelection::Auto);
}

/// Runs `method` in process and as one thread per member through a
/// rendezvous channel, and checks that every member's result is its part of
/// the in-process run.
fn members_reproduce(
    task: &Task,
    method: Method,
    params: &fedhe_algorithms::fbo_fedgp::ValidParams,
    ids: &[MemberId],
    seed: u64,
) {
    let whole = run(task, method, params, &mut PlainSum, ids, seed).unwrap();
    assert!(
        whole.aggregations > 3,
        "the run aggregates: {}",
        whole.aggregations
    );

    let shared = std::sync::Arc::new(Rendezvous {
        members: ids.len(),
        state: std::sync::Mutex::new((0, Vec::new(), Vec::new())),
        ready: std::sync::Condvar::new(),
    });
    let handles: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(i, me)| {
            let (task, params, ids, me) = (task.clone(), params.clone(), ids.to_vec(), me.clone());
            let mut end = MemberEnd(shared.clone());
            std::thread::spawn(move || {
                let mut events = Vec::new();
                let r = run_member(
                    &task,
                    method,
                    &params,
                    &mut end,
                    &ids,
                    &me,
                    seed,
                    simulated_client_seed(seed, i),
                    &mut |e| events.push(e.aggregated),
                )
                .unwrap();
                (r, events)
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let (r, aggregated) = h.join().unwrap();
        assert_eq!(
            r.best_per_member,
            vec![whole.best_per_member[i]],
            "member {i}"
        );
        assert_eq!(r.best, whole.best_per_member[i]);
        assert_eq!(r.aggregations, whole.aggregations);
        assert_eq!(r.global_steps, whole.global_steps);
        assert_eq!(r.members, 3);
        assert_eq!(
            aggregated.iter().filter(|a| **a).count(),
            whole.global_steps
        );
    }
}

/// The shifted sphere in 2-D for three clients, recording every point a
/// client evaluates, in order.
#[derive(Debug)]
struct RecordingSphere {
    base: Task,
    log: std::sync::Mutex<Vec<Vec<Vec<f64>>>>,
}

impl fedhe_tasks::problem::Problem for RecordingSphere {
    fn clients(&self) -> usize {
        3
    }

    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<fedhe_tasks::Evaluation, fedhe_tasks::TaskError> {
        self.log.lock().unwrap()[client].push(unit.to_vec());
        self.base.evaluate(0, unit, rng)
    }

    fn noise_free(
        &self,
        _client: usize,
        unit: &[f64],
        rng: &mut ChaCha8Rng,
    ) -> Result<f64, fedhe_tasks::TaskError> {
        self.base.noise_free(0, unit, rng)
    }

    fn optimum(&self, _client: usize) -> Option<f64> {
        Some(self.base.optimum())
    }
}

#[test]
fn pooled_bo_spreads_each_round_over_the_members_and_beats_members_alone() {
    let base = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    // One recipe for both: pooled-bo's default, the fitted constant mean (a
    // lone agent's default trend solves a 2-D sphere exactly, which says
    // nothing about pooling).
    let params = {
        let mut p = small_params();
        p.model.prior_mean = fedhe_algorithms::fbo_fedgp::PriorMean::Constant;
        p
    }
    .validate()
    .unwrap();
    let m = members(3);
    let recorder = std::sync::Arc::new(RecordingSphere {
        base: base.clone(),
        log: std::sync::Mutex::new(vec![Vec::new(); 3]),
    });
    let task = Task::per_client(
        "sphere",
        2,
        base.sense(),
        Some(base.optimum()),
        recorder.clone(),
    );
    let pooled = run(&task, Method::PooledBo, &params, &mut PlainSum, &m, 4).unwrap();
    assert_eq!(pooled.trace.len(), 8);
    let log = recorder.log.lock().unwrap().clone();
    assert!(log.iter().all(|points| points.len() == 3 + 8), "{log:?}");
    // Round t's batch is every member's point t after its initial design:
    // local penalisation must keep them apart (three members maximising one
    // acquisition alone would land on one point).
    for round in 1..=8 {
        let batch: Vec<&Vec<f64>> = log.iter().map(|points| &points[2 + round]).collect();
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let d: f64 = batch[a]
                .iter()
                .zip(batch[b])
                .map(|(x, y)| (x - y).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(d > 1e-3, "round {round}: members {a} and {b} {d}");
        }
    }
    // With every member's data in one model, the federation's best beats the
    // best of three agents alone, in the median over seeds.
    let median_regret = |method: Method| {
        let mut regrets: Vec<f64> = (0..7)
            .map(|seed| {
                run(&base, method, &params, &mut PlainSum, &m, seed)
                    .unwrap()
                    .best
                    - base.optimum()
            })
            .collect();
        regrets.sort_by(f64::total_cmp);
        regrets[3]
    };
    let (pooled, alone) = (
        median_regret(Method::PooledBo),
        median_regret(Method::IndependentBo),
    );
    assert!(pooled < alone, "pooled {pooled} vs alone {alone}");
}

#[test]
fn pooled_bo_never_runs_as_a_member() {
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = small_params().validate().unwrap();
    let m = members(3);
    let err = run_member(
        &task,
        Method::PooledBo,
        &params,
        &mut PlainSum,
        &m,
        &m[0],
        1,
        2u64.into(),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("method") && err.contains("pooled-bo"), "{err}");
}

#[test]
fn a_trust_region_changes_lone_steps_repeats_for_a_seed_and_is_refused_where_no_step_takes_it() {
    use fedhe_algorithms::fbo_fedgp::LocalSteps;
    use fedhe_algorithms::AlgorithmError;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let with = |trust_region: bool, local_steps: LocalSteps| {
        {
            let mut p = FboFedGpParams {
                rounds: 12,
                ..small_params()
            };
            p.acquisition.trust_region = Some(trust_region);
            p.steps.local = local_steps;
            p
        }
        .validate()
        .unwrap()
    };
    for method in [Method::IndependentBo, Method::FboFedGp] {
        let go = |trust_region| {
            run(
                &task,
                method,
                &with(trust_region, LocalSteps::Lone),
                &mut PlainSum,
                &m,
                3,
            )
            .unwrap()
        };
        let (off, on) = (go(false), go(true));
        assert_ne!(off.trace, on.trace, "{method:?}: the setting must matter");
        assert_eq!(on.trace, go(true).trace, "{method:?}: seeded runs repeat");
    }
    // With federated local steps no step is a lone agent's: refused, naming
    // the field, before any secure sum.
    let mut channel = CountingSum(0);
    let err = run(
        &task,
        Method::FboFedGp,
        &with(true, LocalSteps::Federated),
        &mut channel,
        &m,
        3,
    )
    .unwrap_err();
    assert!(
        matches!(&err, AlgorithmError::Config { field, .. } if *field == "trust_region"),
        "{err}"
    );
    assert_eq!(channel.0, 0);
}

/// A trust region leaves a categorical's choice free (issue 46): an agent
/// whose best point holds `h1 = 0` on CoCaBO's func2c, in a region at its
/// starting side, proposes the choice a surrogate prefers (`h1 = 2`, far
/// outside a box around the best point's one-hot vertex), with the floats
/// still inside the region. Boxing the one-hot coordinates as well held every
/// proposal at `h1 = 0` (checked by reverting).
#[test]
fn a_trust_region_leaves_a_categorical_free_and_bounds_the_floats() {
    use fedhe_algorithms::surrogate::Surrogate;
    use fedhe_algorithms::AlgorithmError;
    use fedhe_gp::exact::PointPrediction;
    use fedhe_tasks::mixed;
    use nalgebra::DVector;
    /// Utility rising with the one-hot coordinate of `h1 = 2` (coordinate
    /// 4: two floats, then `h1`'s three coordinates) and nothing else.
    struct PrefersTwo;
    impl Surrogate for PrefersTwo {
        fn predict_point(&self, x: &[f64]) -> Result<PointPrediction, AlgorithmError> {
            let mut mean_grad = vec![0.0; x.len()];
            mean_grad[4] = 5.0;
            Ok(PointPrediction {
                mean: 5.0 * x[4],
                variance: 1e-4,
                mean_grad,
                variance_grad: vec![0.0; x.len()],
            })
        }
        fn sample_joint(
            &self,
            xs: &DMatrix<f64>,
            _rng: &mut ChaCha8Rng,
        ) -> Result<DVector<f64>, AlgorithmError> {
            Ok(DVector::from_fn(xs.nrows(), |i, _| 5.0 * xs[(i, 4)]))
        }
    }
    let task = mixed::task(mixed::FUNC2C, 10).unwrap().unwrap();
    let space = task.space().unwrap();
    let params = FboFedGpParams::paper_defaults().validate().unwrap();
    let step = params.acquisition_step(Method::IndependentBo);
    for seed in 0..4u64 {
        let mut client = Client::new(members(1).remove(0), 0, seed);
        // Its points: h1 = 0, h2 = 0 near the middle of the floats.
        for k in 0..4 {
            let mut x = vec![0.0; 10];
            x[0] = 0.45 + 0.03 * k as f64;
            x[1] = 0.5;
            x[2] = 1.0;
            x[5] = 1.0;
            client.evaluate(&task, x).unwrap();
        }
        let best = client.best_points(&task, 1).remove(0);
        // The surrogate's value at the best point.
        let incumbent = 0.0;
        let proposal = client
            .propose(
                &task,
                &step,
                &PrefersTwo,
                2,
                incumbent,
                Some(&[0.0; 10]),
                None,
            )
            .unwrap();
        let values = space.decode(&task.canonical(proposal.clone()));
        assert_eq!(
            values["h1"],
            serde_json::json!(2),
            "seed {seed}: {values:?}"
        );
        // The floats stay in the region: side 0.8 around the best point.
        for d in 0..2 {
            assert!(
                (proposal[d] - best[d]).abs() <= 0.4 + 1e-12,
                "seed {seed}: coordinate {d} left the region: {proposal:?}"
            );
        }
    }
}

/// `global_trend = "quadratic"` (issue 14): the federation's trend from one
/// secure sum through the real multiparty channel is the least-squares
/// quadratic of the pooled unclipped standardised values, computed here in
/// one place by SVD; a run with it reaches the minimum of a quadratic task
/// (CEC-2005 F1, a shifted sphere, in 2-D) that the same run without it
/// does not, and repeats for a seed; a member running apart and a method
/// without a global posterior refuse it naming the field, before any
/// secure sum.
#[test]
fn a_quadratic_global_trend_is_the_pooled_least_squares_and_finds_the_minimum_of_a_bowl() {
    use fedhe_algorithms::fbo_fedgp::{clip_threshold, GlobalTrend};
    use fedhe_algorithms::AlgorithmError;
    use fedhe_gp::trend::{quadratic_features, quadratic_len, TrendSums};
    use nalgebra::DVector;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(4);
    let clients = designed_clients(&task, &m, 40, |i| 4 + i);
    let n_max = 60.0;
    let mut he = he_channel("trend-test", &m, 11);
    let mut server = Server::new(&mut he, 1024.0);
    let (warp, scaling) = federated_clipped_warping(&mut server, &task, &clients, n_max);
    let sums = server
        .aggregate(
            "trend sums",
            clients
                .iter()
                .map(|c| {
                    let v = c.trend_contribution(&task, warp, &scaling, n_max).unwrap();
                    (c.id().clone(), v)
                })
                .collect(),
        )
        .unwrap();
    let trend = TrendSums::unpack(2, &sums)
        .unwrap()
        .fit(n_max, 1.0, 0.0)
        .unwrap();
    // The reference: pooled raw utilities, the clip threshold by its
    // formula, the unclipped ones standardised and fitted by SVD.
    let t = clip_threshold(&{
        let raw = pooled_utilities(&task, &clients);
        let logs: Vec<f64> = raw.iter().map(|u| u.abs().ln_1p()).collect();
        vec![
            logs.len() as f64,
            logs.iter().sum::<f64>(),
            logs.iter().map(|l| l * l).sum::<f64>(),
        ]
    })
    .unwrap();
    assert_eq!(warp, OutputWarping::Clipped(t));
    let xs: Vec<Vec<f64>> = clients
        .iter()
        .flat_map(|c| {
            let (x, _) = c.data(&task, warp, &scaling);
            (0..x.nrows())
                .map(|r| x.row(r).iter().copied().collect::<Vec<f64>>())
                .collect::<Vec<_>>()
        })
        .collect();
    let raw = pooled_utilities(&task, &clients);
    let kept: Vec<usize> = (0..raw.len()).filter(|i| raw[*i].abs() < t).collect();
    assert!(kept.len() >= quadratic_len(2), "{kept:?}");
    let mut phi = Vec::new();
    let design = DMatrix::from_fn(kept.len(), quadratic_len(2), |r, c| {
        quadratic_features(&xs[kept[r]], &mut phi);
        phi[c]
    });
    let targets = DVector::from_iterator(
        kept.len(),
        kept.iter().map(|i| scaling.standardise(raw[*i] / t)),
    );
    let reference = design.svd(true, true).solve(&targets, 1e-14).unwrap();
    for (w, r) in trend.weights().iter().zip(reference.iter()) {
        assert!((w - r).abs() <= 1e-6 * (1.0 + r.abs()), "{w} vs {r}");
    }

    // A run: the sphere's minimum with the trend, not without.
    let params = |global_trend| {
        {
            let mut p = FboFedGpParams {
                members: 4,
                rounds: 10,
                initial_points: 4,
                ..small_params()
            };
            p.support.size = 6;
            p.model.prior_mean = fedhe_algorithms::fbo_fedgp::PriorMean::Constant;
            p.model.global_trend = global_trend;
            p
        }
        .validate()
        .unwrap()
    };
    let go = |trend| {
        run(
            &task,
            Method::FboFedGp,
            &params(trend),
            &mut PlainSum,
            &m,
            2,
        )
        .unwrap()
    };
    let (with, without) = (go(GlobalTrend::Quadratic), go(GlobalTrend::None));
    eprintln!(
        "best with the trend {}, without {}",
        with.best, without.best
    );
    assert!(with.best - task.optimum() < 1e-3, "{}", with.best);
    assert!(without.best - task.optimum() > 1e-2, "{}", without.best);
    assert!(with.aggregations > without.aggregations);
    assert_eq!(with.trace, go(GlobalTrend::Quadratic).trace);
    // Its sums reveal the points added between two fits: a member running
    // apart (the service's agent) refuses it, naming the field.
    let mut channel = CountingSum(0);
    let err = run_member(
        &task,
        Method::FboFedGp,
        &params(GlobalTrend::Quadratic),
        &mut channel,
        &m,
        &m[0],
        2,
        simulated_client_seed(2, 0),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, AlgorithmError::Config { field, .. } if *field == "global_trend"),
        "{err}"
    );
    assert_eq!(channel.0, 0);
    for method in [
        Method::IndependentBo,
        Method::PooledBo,
        Method::RandomSearch,
    ] {
        let mut channel = CountingSum(0);
        let err = run(
            &task,
            method,
            &params(GlobalTrend::Quadratic),
            &mut channel,
            &m,
            2,
        )
        .unwrap_err();
        assert!(
            matches!(&err, AlgorithmError::Config { field, .. } if *field == "global_trend"),
            "{err}"
        );
        assert_eq!(channel.0, 0);
    }
}

/// A channel that keeps every round's contributions (and sums them in the
/// clear).
struct RecordingSum(Vec<Vec<(MemberId, Vec<f64>)>>);

impl SecureSum for RecordingSum {
    fn sum(
        &mut self,
        round: fedhe_crypto::RoundId,
        contributions: Vec<(MemberId, Vec<f64>)>,
    ) -> Result<Vec<f64>, fedhe_crypto::ChannelError> {
        self.0.push(contributions.clone());
        PlainSum.sum(round, contributions)
    }
}

/// `global_trend = "quadratic-spaced"` (issue 14): every release
/// of the trend's sums holds, in each member's own view (the total less
/// its own contribution, which it knows), at least `2 ·
/// determinable_points(D)` unclipped points of others that the previous
/// release did not hold; it releases fewer sums than the per-round trend
/// and still finds the minimum of a bowl the run without a trend does not;
/// members running apart accept it and reproduce the in-process run; a
/// logarithmic warping is refused naming the field.
#[test]
fn a_spaced_quadratic_trend_releases_only_sums_whose_new_points_of_others_cannot_be_determined() {
    use fedhe_algorithms::fbo_fedgp::{GlobalTrend, PriorMean, Warping};
    use fedhe_algorithms::AlgorithmError;
    use fedhe_gp::trend::{determinable_points, TrendSums};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let params = |global_trend| {
        {
            let mut p = FboFedGpParams {
                rounds: 14,
                initial_points: 4,
                ..small_params()
            };
            p.model.prior_mean = PriorMean::Constant;
            p.model.global_trend = global_trend;
            p
        }
        .validate()
        .unwrap()
    };
    let needed = 2.0 * determinable_points(2) as f64;
    let n_max = params(GlobalTrend::None).max_points();
    // The trend's sums are the rounds whose contributions have its length;
    // each member's own count is the last entry of its own contribution.
    let releases = |trend| {
        let mut channel = RecordingSum(Vec::new());
        let result = run(&task, Method::FboFedGp, &params(trend), &mut channel, &m, 2).unwrap();
        let counts: Vec<Vec<f64>> = channel
            .0
            .iter()
            .filter(|round| round[0].1.len() == TrendSums::packed_len(2))
            .map(|round| {
                round
                    .iter()
                    .map(|(_, v)| (v.last().unwrap() * n_max).round())
                    .collect()
            })
            .collect();
        (result, counts)
    };
    let (spaced, counts) = releases(GlobalTrend::QuadraticSpaced);
    assert!(counts.len() >= 2, "{counts:?}");
    let mut before = vec![0.0; m.len()];
    for release in &counts {
        let total: f64 = release.iter().sum();
        let total_before: f64 = before.iter().sum();
        for j in 0..m.len() {
            let others_new = (total - release[j]) - (total_before - before[j]);
            assert!(
                others_new >= needed,
                "member {j} sees {others_new} new points of others: {counts:?}"
            );
        }
        before = release.clone();
    }
    let (every_round, per_round) = releases(GlobalTrend::Quadratic);
    assert!(
        per_round.len() > counts.len(),
        "{} vs {}",
        per_round.len(),
        counts.len()
    );
    let without = run(
        &task,
        Method::FboFedGp,
        &params(GlobalTrend::None),
        &mut PlainSum,
        &m,
        2,
    )
    .unwrap();
    eprintln!(
        "best with the spaced trend {}, the per-round trend {}, none {}",
        spaced.best, every_round.best, without.best
    );
    assert!(spaced.best - task.optimum() < 1e-3, "{}", spaced.best);
    assert!(without.best - task.optimum() > 1e-2, "{}", without.best);

    members_reproduce(
        &task,
        Method::FboFedGp,
        &params(GlobalTrend::QuadraticSpaced),
        &m,
        2,
    );

    // Trend sums over other points than the count released (here one more
    // in the sums' own count): the run ends, naming the setting.
    struct OneMorePoint(f64);
    impl SecureSum for OneMorePoint {
        fn sum(
            &mut self,
            round: fedhe_crypto::RoundId,
            contributions: Vec<(MemberId, Vec<f64>)>,
        ) -> Result<Vec<f64>, fedhe_crypto::ChannelError> {
            let trend = contributions[0].1.len() == TrendSums::packed_len(2);
            let mut sum = PlainSum.sum(round, contributions)?;
            if trend {
                *sum.last_mut().unwrap() += 1.0 / self.0;
            }
            Ok(sum)
        }
    }
    let err = run(
        &task,
        Method::FboFedGp,
        &params(GlobalTrend::QuadraticSpaced),
        &mut OneMorePoint(n_max),
        &m,
        2,
    )
    .unwrap_err();
    assert!(
        matches!(&err, AlgorithmError::Config { field, .. } if *field == "global_trend")
            && err.to_string().contains("count sum"),
        "{err}"
    );

    let err = {
        let mut p = FboFedGpParams::clone(&params(GlobalTrend::QuadraticSpaced));
        p.model.warping = Warping::SignedLog;
        p
    }
    .validate()
    .unwrap_err();
    assert!(
        matches!(&err, AlgorithmError::Config { field, .. } if *field == "global_trend"),
        "{err}"
    );
}

/// A run on a typed space names its best point (issue 46): the federation's
/// best value, its parameters by the space's names, and CoCaBO's func2c
/// evaluated directly at those named values gives that value. A task
/// without a space names none.
#[test]
fn a_run_on_a_typed_space_names_its_best_point_and_the_point_has_its_value() {
    use fedhe_tasks::mixed;
    let task = mixed::task(mixed::FUNC2C, 10).unwrap().unwrap();
    let m = members(3);
    let params = FboFedGpParams {
        rounds: 3,
        ..small_params()
    }
    .validate()
    .unwrap();
    for method in [Method::FboFedGp, Method::IndependentBo] {
        let r = run(&task, method, &params, &mut PlainSum, &m, 5).unwrap();
        let point = r.best_point.clone().expect("a typed space names its best");
        assert_eq!(point.value, r.best, "{method:?}");
        let names: Vec<&str> = point.params.keys().map(String::as_str).collect();
        assert_eq!(names, ["h1", "h2", "x1", "x2"], "{method:?}");
        let num = |k: &str| point.params[k].as_f64().unwrap();
        let cat = |k: &str| point.params[k].as_u64().unwrap() as usize;
        let direct = mixed::func2c([num("x1"), num("x2")], [cat("h1"), cat("h2")]);
        assert!(
            (direct - point.value).abs() <= 1e-12 * direct.abs().max(1.0),
            "{method:?}: {direct} vs {}",
            point.value
        );
        // It is the best of the run's evaluations (through `results.json`).
        let back: fedhe_algorithms::RunResult =
            serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.best_point, Some(point));
    }
    let plain = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = small_params().validate().unwrap();
    let r = run(&plain, Method::IndependentBo, &params, &mut PlainSum, &m, 5).unwrap();
    assert_eq!(r.best_point, None);
}

/// A private study of `small_params`' size: the releases `fbo_fedgp::private`
/// allows (fixed hyper-parameters, a public support set, the signed-log
/// warping) at `epsilon` per member, δ = 1e-6.
fn private_params(epsilon: f64) -> FboFedGpParams {
    {
        let mut p = small_params();
        p.hypers.lengthscale = Some(0.3);
        p
    }
    .private(epsilon)
}

/// The rounds of a run of `params` in which some member stepped globally
/// (a summary was released), from the run's round events.
fn run_rounds_with_global_steps(
    task: &Task,
    params: &fedhe_algorithms::fbo_fedgp::ValidParams,
    m: &[MemberId],
    seed: u64,
) -> Vec<usize> {
    let mut rounds = Vec::new();
    fedhe_algorithms::fbo_fedgp::run_observed(
        task,
        Method::FboFedGp,
        params,
        &mut PlainSum,
        m,
        seed,
        &mut |e| {
            if e.aggregated {
                rounds.push(e.round)
            }
        },
    )
    .unwrap();
    rounds
}

#[test]
fn a_private_federation_spends_its_ledger_within_the_budget_and_members_reproduce_it() {
    use fedhe_algorithms::fbo_fedgp::private::plan;
    use fedhe_dp::distributed::{mechanism_for, PrivacyLedger};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = private_params(4.0).validate().unwrap();
    let m = members(3);
    let r = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, 3).unwrap();
    let spent = r.epsilon.clone().expect("a private run reports ε");
    assert_eq!(spent.len(), r.rounds);
    assert!(spent.windows(2).all(|w| w[1] >= w[0]), "{spent:?}");
    let last = *spent.last().unwrap();
    assert!(last > 0.5 && last <= 4.0, "{spent:?}");
    // The ledger's ε is that of the releases made: the statistics at the
    // start and each refit, one summary per global step, at the noise the
    // budget's plan calibrated (recomputed here from fedhe-dp's functions).
    let dp = params.privacy.validate(3).unwrap().unwrap();
    // The rounds with a global step: the public schedule's, which this run
    // took (its trace shows none; the plan of every round is larger).
    let all: Vec<usize> = (1..=params.rounds).collect();
    let every_round = dp
        .noise_multiplier(&plan(&params, &dp, &all), params.channel_bound)
        .unwrap();
    let stepped = run_rounds_with_global_steps(&task, &params, &m, 3);
    assert_eq!(stepped.len(), r.global_steps);
    let plan = plan(&params, &dp, &stepped);
    let z = dp.noise_multiplier(&plan, params.channel_bound).unwrap();
    assert!(
        r.global_steps == r.rounds || z < every_round,
        "{z} vs {every_round}"
    );
    let mut ledger = PrivacyLedger::new();
    let refits = (params.rounds - 1) / params.hypers.refit_every;
    let (stats, summary) = (&plan[0].0, &plan[1].0);
    // The shares nobody the guarantee keeps out knows: 3 members, 1 colluder.
    let shares = dp.unknown_shares();
    assert_eq!(shares, 2);
    for _ in 0..=refits {
        let mech = mechanism_for(z, stats, shares, fedhe_algorithms::privacy::FINEST_GRID).unwrap();
        ledger.record(&mech, stats, shares).unwrap();
    }
    for _ in 0..r.global_steps {
        let mech =
            mechanism_for(z, summary, shares, fedhe_algorithms::privacy::FINEST_GRID).unwrap();
        ledger.record(&mech, summary, shares).unwrap();
    }
    // Summaries go in units of their clip: every release is the plan's.
    let expected = ledger.epsilon(1e-6).unwrap().epsilon;
    assert!(
        (last - expected).abs() <= 1e-9 * expected,
        "{last} vs {expected}"
    );
    assert_eq!(r.aggregations, 1 + refits + r.global_steps);
    // The plan is the releases made: the budget is spent, less the
    // calibration's margin of 1e-3.
    assert!(last <= 4.0 && last > 4.0 * (1.0 - 2e-3), "{last}");
    // Seeded: the same run again; the noise is the members' own.
    let again = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, 3).unwrap();
    assert_eq!(again.trace, r.trace);
    let noise_free = FboFedGpParams {
        privacy: Default::default(),
        ..private_params(4.0)
    }
    .validate()
    .unwrap();
    let plain = run(&task, Method::FboFedGp, &noise_free, &mut PlainSum, &m, 3).unwrap();
    assert!(plain.epsilon.is_none());
    assert_ne!(plain.best_per_member, r.best_per_member);
    // Members running apart draw the same noise from their private seeds.
    members_reproduce(&task, Method::FboFedGp, &params, &m, 3);
}

/// The signal ceiling `fedhe simulate --check` and `fedhe study create`
/// print: the rounds it plans for are the run's, and the ratio it states is
/// what the mechanism's real noise leaves of the most coherent signal a sum
/// of clipped summaries can hold (every member's contribution the same unit
/// vector), against the noise drawn by the members' own generators and the
/// mechanism's variance.
#[test]
fn the_signal_ceiling_is_what_a_real_summary_release_of_the_study_can_carry() {
    use fedhe_algorithms::fbo_fedgp::{global_step_rounds, private::signal_ceiling};
    use fedhe_algorithms::privacy::PrivateReleases;
    use fedhe_dp::distributed::ReleaseShape;
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = private_params(4.0).validate().unwrap();
    let m = members(3);
    let planned = global_step_rounds(Method::FboFedGp, &params, 3).unwrap();
    assert!(!planned.is_empty());
    assert_eq!(planned, run_rounds_with_global_steps(&task, &params, &m, 3));
    let c = signal_ceiling(&params, Method::FboFedGp, 3)
        .unwrap()
        .expect("a private study with global steps has a ceiling");
    assert_eq!(c.releases, planned.len());
    let values = fedhe_gp::sparse::packed_len(params.support_size_at(planned[0] - 1));
    assert_eq!(c.values, values);
    // Its `z` is the one that spends the budget (the ledger test above ties
    // that to the run's ε).
    let dp = params.privacy.validate(3).unwrap().unwrap();
    let plan = fedhe_algorithms::fbo_fedgp::private::plan(&params, &dp, &planned);
    let z = dp.noise_multiplier(&plan, params.channel_bound).unwrap();
    assert_eq!(c.noise_multiplier, z);
    // The members' real noise on `draws` releases of the summary's size.
    let release = ReleaseShape {
        dim: values,
        l2_sensitivity: 2.0,
    };
    let mut releases = PrivateReleases::new(dp, z, vec![[1; 32], [2; 32], [3; 32]]);
    let unit = vec![1.0 / (values as f64).sqrt(); values];
    let draws = 40;
    let mut noise_energy = 0.0;
    for _ in 0..draws {
        let mut sum = vec![0.0; values];
        for position in 0..3 {
            let share = releases.share(position, 2.0, &unit).unwrap();
            sum.iter_mut().zip(share).for_each(|(s, v)| *s += v);
        }
        noise_energy += sum
            .iter()
            .zip(&unit)
            .map(|(s, u)| (s - 3.0 * u).powi(2))
            .sum::<f64>();
    }
    let noise_norm = (noise_energy / draws as f64).sqrt();
    let mech = releases.mechanism(&release).unwrap();
    let expected = mech.sum_std_dev(3) * (values as f64).sqrt();
    assert!(
        (noise_norm / expected - 1.0).abs() < 0.1,
        "{noise_norm} vs {expected}"
    );
    // Every sum carries at least z·Δ₂ per value, so the ceiling bounds the
    // ratio from above; 3 contributors of 2 unknown shares carry √(3/2) of it.
    let measured = 3.0 / noise_norm;
    assert!(measured <= c.ratio, "{measured} vs {}", c.ratio);
    assert!(
        measured >= c.ratio * (2.0f64 / 3.0).sqrt() * 0.9,
        "{measured} vs {}",
        c.ratio
    );
    // The members a ratio of 1 needs: that many reach it, one fewer does not.
    let per_member = c.ratio / 3.0;
    assert!(per_member * c.members_for_one as f64 >= 1.0);
    assert!(per_member * ((c.members_for_one - 1) as f64) < 1.0);
    // A noise-free study states none.
    let noise_free = FboFedGpParams {
        privacy: Default::default(),
        ..private_params(4.0)
    }
    .validate()
    .unwrap();
    assert_eq!(
        signal_ceiling(&noise_free, Method::FboFedGp, 3).unwrap(),
        None
    );
}

#[test]
fn a_private_run_through_he_equals_its_plain_sum_run() {
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let params = FboFedGpParams {
        rounds: 4,
        ..private_params(4.0)
    }
    .validate()
    .unwrap();
    let m = members(3);
    let mut he = he_channel("private-run", &m, 13);
    let a = run(&task, Method::FboFedGp, &params, &mut he, &m, 5).unwrap();
    let b = run(&task, Method::FboFedGp, &params, &mut PlainSum, &m, 5).unwrap();
    assert!(a.global_steps >= 1, "{a:?}");
    for (x, y) in a.trace.iter().zip(&b.trace) {
        assert!(
            (x - y).abs() <= 1e-9 * y.abs().max(1.0),
            "{:?} vs {:?}",
            a.trace,
            b.trace
        );
    }
    assert_eq!(a.best_per_member, b.best_per_member);
    assert_eq!(a.epsilon, b.epsilon);
}

#[test]
fn a_private_study_refuses_every_release_it_cannot_make_private_by_name() {
    use fedhe_algorithms::fbo_fedgp::{HyperparameterMode, PriorMean, SupportSelection, Warping};
    let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
    let m = members(3);
    let refused = |p: FboFedGpParams| {
        let mut channel = PlainSum;
        run(
            &task,
            Method::FboFedGp,
            &p.validate().unwrap(),
            &mut channel,
            &m,
            1,
        )
        .unwrap_err()
        .to_string()
    };
    let ok = private_params(4.0);
    for (p, field) in [
        (
            {
                let mut p = ok.clone();
                p.hypers.mode = HyperparameterMode::FederatedMle;
                p
            },
            "hyperparameters",
        ),
        (
            {
                let mut p = ok.clone();
                p.support.selection = SupportSelection::SecureKmeans;
                p
            },
            "support_selection",
        ),
        (
            {
                let mut p = ok.clone();
                p.support.selection = SupportSelection::Auto;
                p
            },
            "support_selection",
        ),
        (
            {
                let mut p = ok.clone();
                p.model.warping = Warping::Auto;
                p
            },
            "warping",
        ),
        (
            {
                let mut p = ok.clone();
                p.model.global_trend = fedhe_algorithms::fbo_fedgp::GlobalTrend::QuadraticSpaced;
                p.model.warping = Warping::SignedLog;
                p
            },
            "global_trend",
        ),
        (
            {
                let mut p = ok.clone();
                p.model.prior_mean = PriorMean::Constant;
                p
            },
            "prior_mean",
        ),
    ] {
        let e = match p.validate() {
            Err(e) => e.to_string(),
            Ok(_) => refused(p),
        };
        assert!(e.contains(field), "{field}: {e}");
    }
    // A budget the study cannot meet is refused naming the field, before
    // any sum.
    let tiny = FboFedGpParams {
        channel_bound: 1.0,
        ..private_params(1e-3)
    };
    assert!(refused(tiny).contains("privacy.epsilon"));
    // Plaintext baselines release nothing and run with the setting.
    let lone = run(
        &task,
        Method::IndependentBo,
        &{
            let mut p = ok;
            p.hypers.mode = HyperparameterMode::FederatedMle;
            p
        }
        .validate()
        .unwrap(),
        &mut PlainSum,
        &m,
        1,
    )
    .unwrap();
    assert!(lone.epsilon.is_none());
}

#[test]
fn a_members_private_contributions_stay_within_their_sensitivity_whatever_its_data() {
    use fedhe_algorithms::fbo_fedgp::private::{clipped_summary, summary_clip};
    let task = fedhe_tasks::by_name("cec2005-f6", 10, 0).unwrap();
    let warping = OutputWarping::SignedLog;
    let n_max = 20.0;
    let l2 = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    // The output statistics of any two data sets of at most n_max points
    // differ by at most √5 (one member's data replaced).
    let mut worst = 0.0f64;
    let mut members = Vec::new();
    for (i, points) in [1usize, 7, 20].into_iter().enumerate() {
        let mut c = Client::new(members_named(i), 0, 70 + i as u64);
        c.initial_design(&task, points, &[0.0; 10], &[1.0; 10])
            .unwrap();
        members.push(c.clipped_statistics_contribution(&task, warping, 30.0, n_max));
    }
    for a in &members {
        for b in &members {
            worst = worst.max(l2(a, b));
        }
        assert!(a[0].abs() <= 1.0 && (0.0..=1.0).contains(&a[1]), "{a:?}");
    }
    assert!(worst <= 5f64.sqrt(), "{worst}");
    // A summary is clipped to B, which follows the public model: a member
    // whose points sit at the support points is scaled down to exactly B.
    let hyper = Hyperparameters::new(vec![0.5; 10], 1.0, 1e-3).unwrap();
    let family = Matern52::new(KernelParams::isotropic(10, 1.0, 1.0).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let support = DMatrix::from_fn(16, 10, |_, _| rng.gen::<f64>());
    let model = Dpitc::new(
        hyper.kernel(&family).unwrap(),
        hyper.noise(),
        0.0,
        support.clone(),
    )
    .unwrap();
    let channel = SummaryScaling::new(16, &hyper, n_max);
    let bound = summary_clip(&model, &channel, n_max, 2.0, 4).unwrap();
    assert_eq!(
        bound,
        summary_clip(&model, &channel, n_max, 2.0, 4).unwrap()
    );
    assert!(bound > 0.0);
    let scaling = OutputScaling {
        mean: 20.0,
        std: 1.0,
    };
    let mut c = Client::new(members_named(0), 0, 5);
    for r in 0..16 {
        c.evaluate(&task, support.row(r).iter().copied().collect())
            .unwrap();
    }
    let v = c
        .summary_contribution(&task, warping, &scaling, &model, &channel, false, None)
        .unwrap();
    let norm = l2(&v, &vec![0.0; v.len()]);
    assert!(norm > bound, "{norm} vs {bound}: the clip binds here");
    let clipped = clipped_summary(&c, &task, &scaling, &model, &channel, bound).unwrap();
    assert!(l2(&clipped, &vec![0.0; v.len()]) <= bound * (1.0 + 1e-12));
    // Clipping scales the summary: its direction is the unclipped one's.
    let ratio = clipped[0] / v[0];
    assert!(clipped
        .iter()
        .zip(&v)
        .all(|(a, b)| (a - ratio * b).abs() <= 1e-12 * b.abs().max(1e-300)));
    // A shorter length-scale makes every summary smaller, and B with it.
    let short = Hyperparameters::new(vec![0.1; 10], 1.0, 1e-3).unwrap();
    let short_model =
        Dpitc::new(short.kernel(&family).unwrap(), short.noise(), 0.0, support).unwrap();
    assert!(summary_clip(&short_model, &channel, n_max, 2.0, 4).unwrap() < bound);
}

fn members_named(i: usize) -> MemberId {
    MemberId::new(format!("site-{i}")).unwrap()
}
