//! Attack (a) on the synthetic federation: it succeeds on the noise-free sum
//! and fails on a noised one.

use fedhe_attacks::{
    noised, subspace_attack, AttackOptions, Federation, RankRule, Recovered, Recovery, ValueMethod,
};
use fedhe_gp::Matern52;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn score(fed: &Federation<Matern52>, rec: &Recovered, seed: u64) -> Recovery {
    let (tx, ty) = fed.others_points(0);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    Recovery::evaluate(&tx, &ty, &rec.inputs, rec.values.as_deref(), 200, &mut rng)
}

fn attack(fed: &Federation<Matern52>, std: f64, options: &AttackOptions) -> Recovery {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let sum = if std > 0.0 {
        noised(&fed.sum, std, &mut rng)
    } else {
        fed.sum.clone()
    };
    let view = fed.view(0, sum);
    let rec = subspace_attack(&view, options, &mut rng).expect("attack runs");
    score(fed, &rec, 5)
}

#[test]
fn noise_free_10d_recovers_inputs_and_values() {
    let fed = Federation::synthetic(10, 3, 4, 16, 7).unwrap();
    let r = attack(&fed, 0.0, &AttackOptions::default());
    eprintln!("{r:?}");
    assert!(r.inputs_1pct >= 0.9, "{r:?}");
    assert!(r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
}

#[test]
fn noise_free_2d_recovers_inputs_and_values() {
    let fed = Federation::synthetic(2, 3, 3, 16, 3).unwrap();
    let r = attack(&fed, 0.0, &AttackOptions::default());
    eprintln!("{r:?}");
    assert!(r.inputs_1pct >= 0.9, "{r:?}");
    assert!(r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
}

#[test]
fn values_without_grouping_and_estimated_rank() {
    let fed = Federation::synthetic(2, 3, 3, 16, 4).unwrap();
    let options = AttackOptions {
        rank: RankRule::Threshold(1e-9),
        values: ValueMethod::Moment,
        ..AttackOptions::default()
    };
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let rec = subspace_attack(&fed.view(0, fed.sum.clone()), &options, &mut rng).unwrap();
    assert_eq!(rec.rank, 6);
    let r = score(&fed, &rec, 5);
    eprintln!("{r:?}");
    assert!(r.both_1pct >= 0.9, "{r:?}");
}

/// The default options: the acceptance threshold follows the noise floor
/// the attacker estimates from the sum itself.
fn noisy_options(_rel: f64) -> AttackOptions {
    AttackOptions::default()
}

/// Perturbed sums (1e-12 of the median |entry|) over five federations: the
/// attack recovers at least 90 % of the points, inputs and values.
#[test]
fn perturbed_10d_sums_over_seeds_recover_inputs_and_values() {
    for seed in 1..=5 {
        let fed = Federation::synthetic(10, 3, 4, 16, seed).unwrap();
        for rel in [1e-12, 1e-9] {
            let r = attack(
                &fed,
                rel * fed.median_abs_entry(),
                &AttackOptions::default(),
            );
            eprintln!("seed {seed} rel {rel:e}: {r:?}");
            assert!(r.inputs_1pct >= 0.9, "seed {seed} rel {rel:e}: {r:?}");
            assert!(r.both_1pct >= 0.9, "seed {seed} rel {rel:e}: {r:?}");
        }
    }
}

#[test]
fn noised_sum_is_within_random_baseline() {
    let fed = Federation::synthetic(2, 3, 3, 16, 3).unwrap();
    let std = NOISE_BREAKS * fed.median_abs_entry();
    let r = attack(&fed, std, &noisy_options(NOISE_BREAKS));
    eprintln!("{r:?}");
    assert!(r.within_random_baseline(), "{r:?}");
}

#[test]
fn noised_sum_10d_is_within_random_baseline() {
    let fed = Federation::synthetic(10, 3, 4, 16, 7).unwrap();
    let rel = 1e-2;
    let r = attack(&fed, rel * fed.median_abs_entry(), &noisy_options(rel));
    eprintln!("{r:?}");
    assert!(r.within_random_baseline(), "{r:?}");
}

/// A noise standard deviation, in units of the sum's median |entry|, that
/// breaks the attack (see `noise_table`).
const NOISE_BREAKS: f64 = 1.0;

/// Prints recovery against noise (run with `--ignored --nocapture`).
#[test]
#[ignore]
fn noise_table() {
    for (dim, ppm, seed) in [(2usize, 3usize, 3u64), (10, 4, 7)] {
        let fed = Federation::synthetic(dim, 3, ppm, 16, seed).unwrap();
        let unit = fed.median_abs_entry();
        eprintln!("dim {dim}: median |entry| {unit:.3e}");
        for rel in [0.0, 1e-12, 1e-9, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0] {
            let t = std::time::Instant::now();
            let r = attack(&fed, rel * unit, &noisy_options(rel));
            eprintln!(
                "  std {rel:.0e}: inputs 1% {:.2} 5% {:.2}, inputs+values 1% {:.2} 5% {:.2}, baseline mean {:.3} upper {:.3} ({:.1?})",
                r.inputs_1pct, r.inputs_5pct, r.both_1pct, r.both_5pct, r.baseline_mean, r.baseline_upper, t.elapsed()
            );
        }
    }
}
