//! LDP-BO and Fed-PNE end to end over the channel: the encrypted sum drives the
//! same decisions as the plaintext one, runs repeat for a seed, and regret
//! behaves as the papers' analyses say on small instances.

use fedhe_algorithms::fed_pne::{self, BanditMethod, FedPneParams};
use fedhe_algorithms::ldp_bo::{self, LdpBoParams, LdpMethod};
use fedhe_crypto::{CeremonyId, HeSum, InsecurePolicy, MemberId, ParameterSet, PlainSum};
use fedhe_ring::Csprng;
use fedhe_tasks::synthetic::kernel_sum as synthetic;

fn members(n: usize) -> Vec<MemberId> {
    (1..=n)
        .map(|i| MemberId::new(format!("site-{i}")).unwrap())
        .collect()
}

fn he(m: &[MemberId], name: &str) -> HeSum {
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    HeSum::new(
        params,
        &CeremonyId::new(name).unwrap(),
        m.to_vec(),
        1024.0,
        Csprng::from_u128_seed(9),
    )
    .unwrap()
    .with_precision(fedhe_crypto::Precision::TwoLimb)
    .unwrap()
}

fn pne_params(method: BanditMethod) -> fedhe_algorithms::fed_pne::ValidFedPneParams {
    let mut p = FedPneParams::paper_defaults();
    p.members = 3;
    p.rounds = 400;
    p.noise_std = 0.1;
    p.epsilon = Some(1.0);
    p.dp_delta = Some(0.1);
    p.validate(method).unwrap()
}

#[test]
fn fed_pne_eliminates_the_same_nodes_through_he_as_through_plain_sum() {
    let task = fedhe_tasks::by_name("garland", 1, 0).unwrap();
    let m = members(3);
    for method in [BanditMethod::FedPne, BanditMethod::DpFedPne] {
        let params = pne_params(method);
        for seed in [1, 2] {
            let plain = fed_pne::run_detailed(&task, &params, &mut PlainSum, &m, seed).unwrap();
            let mut channel = he(&m, &format!("pne-{seed}"));
            let enc = fed_pne::run_detailed(&task, &params, &mut channel, &m, seed).unwrap();
            assert!(plain.phases.len() >= 3, "{}", plain.phases.len());
            let eliminated = |r: &fed_pne::FedPneReport| {
                r.phases
                    .iter()
                    .map(|p| p.eliminated.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                eliminated(&plain),
                eliminated(&enc),
                "{method:?} seed {seed}"
            );
            assert!(plain.phases.iter().any(|p| !p.eliminated.is_empty()));
            assert_eq!(plain.result.cumulative_regret, enc.result.cumulative_regret);
            for (a, b) in plain.phases.iter().zip(&enc.phases) {
                for (x, y) in a.means.iter().zip(&b.means) {
                    assert!((x - y).abs() < 1e-9, "{x} vs {y}");
                }
            }
        }
    }
}

#[test]
fn hct_and_fed1_ucb_pull_the_same_points_through_he_as_through_plain_sum() {
    // HCT aggregates every round: its regret sequence (the points it pulls)
    // depends on every encrypted average; Fed1-UCB on its phases' means.
    let task = fedhe_tasks::by_name("doublesine", 1, 0).unwrap();
    let m = members(3);
    for (method, rounds) in [(BanditMethod::Hct, 24), (BanditMethod::Fed1Ucb, 400)] {
        let mut p = FedPneParams::paper_defaults();
        p.members = 3;
        p.rounds = rounds;
        p.noise_std = 0.1;
        p.arms_per_dim = 8;
        let params = p.validate(method).unwrap();
        let plain = fed_pne::run(&task, &params, &mut PlainSum, &m, 5).unwrap();
        let mut channel = he(&m, &format!("{}-5", method.name()));
        let enc = fed_pne::run(&task, &params, &mut channel, &m, 5).unwrap();
        assert_eq!(plain.cumulative_regret, enc.cumulative_regret, "{method:?}");
        let regret = plain.cumulative_regret.unwrap();
        assert_eq!(regret.len(), rounds);
        // Not one point pulled over and over.
        assert!(regret.windows(2).any(|w| (w[1] - w[0]) != regret[0]));
        assert_eq!(enc.aggregations, plain.aggregations, "{method:?}");
        if method == BanditMethod::Hct {
            assert_eq!(plain.aggregations, rounds);
        }
    }
}

#[test]
fn fed_pne_regret_flattens_and_phases_grow_logarithmically() {
    let task = fedhe_tasks::by_name("garland", 1, 0).unwrap();
    let m = members(10);
    let mut phases = Vec::new();
    for t in [1000, 4000, 16000] {
        let mut p = FedPneParams::paper_defaults();
        p.rounds = t;
        p.noise_std = 0.1;
        let params = p.validate(BanditMethod::FedPne).unwrap();
        let r = fed_pne::run(&task, &params, &mut PlainSum, &m, 7).unwrap();
        let reg = r.cumulative_regret.unwrap();
        assert_eq!(reg.len(), t);
        // Regret in the last quarter is smaller than in the first.
        let q = t / 4;
        let first = reg[q - 1];
        let last = reg[t - 1] - reg[t - 1 - q];
        assert!(last < first, "T = {t}: first {first}, last {last}");
        phases.push(r.aggregations);
    }
    // Quadrupling T adds a bounded number of phases (log T growth), far from 4×.
    assert!(phases[2] < 2 * phases[0] + 4, "{phases:?}");
}

#[test]
fn a_ldp_run_repeats_for_a_seed_and_through_he() {
    let task = synthetic::kernel_sum_task("kernel-sum-se", 3).unwrap();
    let m = members(2);
    for method in [
        LdpMethod::LdpTgpUcb,
        LdpMethod::LdpMomaGpUcb,
        LdpMethod::LdpAtaGpUcb,
    ] {
        let mut p = LdpBoParams::paper_defaults();
        p.members = 2;
        p.rounds = 12;
        p.moma_plays = Some(3);
        let params = p.validate(method).unwrap();
        let a = ldp_bo::run(&task, &params, &mut PlainSum, &m, 5).unwrap();
        let b = ldp_bo::run(&task, &params, &mut PlainSum, &m, 5).unwrap();
        assert_eq!(a.cumulative_regret, b.cumulative_regret);
        let mut channel = he(&m, "ldp");
        let c = ldp_bo::run(&task, &params, &mut channel, &m, 5).unwrap();
        assert_eq!(a.cumulative_regret, c.cumulative_regret, "{method:?}");
        let reg = a.cumulative_regret.unwrap();
        assert!(reg.windows(2).all(|w| w[1] >= w[0] - 1e-12));
        assert_eq!(a.epsilon.as_ref().unwrap().len(), 12);
        assert_eq!(a.aggregations, 12);
    }
}

#[test]
fn a_noise_free_learner_finds_the_optimum_of_a_kernel_sum() {
    // Without privacy, with tiny noise and little exploration (β scaled to
    // about 1), TGP-UCB's regret per round falls and it finds the maximiser.
    let task = synthetic::kernel_sum_task("kernel-sum-matern", 1).unwrap();
    let mut p = LdpBoParams::paper_defaults();
    p.kernel = ldp_bo::LdpKernel::Matern;
    p.rounds = 150;
    p.noise_bound = 0.01;
    p.beta_scale = 0.005;
    let params = p.validate(LdpMethod::TgpUcb).unwrap();
    let r = ldp_bo::run(&task, &params, &mut PlainSum, &members(1), 2).unwrap();
    let reg = r.cumulative_regret.unwrap();
    let (early, late) = (reg[49], reg[149] - reg[99]);
    assert!(
        late < early / 5.0,
        "regret of rounds 1-50 {early}, 101-150 {late}"
    );
    assert!((r.best - task.optimum()).abs() < 1e-9);
}
