//! Fed1-UCB (Shi & Shen 2021), the federated multi-armed bandit baseline of
//! paper 003 §4, on a meshgrid of arms (App. E.1.1).
//!
//! Reconstructed from paper 003's description (the reference implementation is
//! not in this repository): `K` arms per dimension at `s + j/K` with a random
//! offset `s ~ U[0, 1/K)`; in phase `p` every client pulls every active arm
//! `f(p) = ⌈κ 2^p ln T⌉` times and sends its local means through the channel;
//! the server keeps the global mean over `F(p) = Σ_{q ≤ p} f(q)` pulls per
//! client and eliminates arm `a` when
//! `μ̂_a + B_p < max_a' μ̂_a' − B_p`, `B_p = √(2 ln T / (M F(p)))`.
//! With one arm left the clients pull it until `T`.

use super::params::ValidFedPneParams;
use super::pne::Session;
use crate::error::stream_seed;
use crate::roster::{Roster, RoundProgress};
use crate::{AlgorithmError, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_tasks::Task;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The largest meshgrid accepted.
const MAX_ARMS: usize = 20_000;

/// The meshgrid `{s + j/K}^D` with a random offset `s ~ U[0, 1/K)` per dimension.
pub fn meshgrid(
    k: usize,
    dim: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<Vec<f64>>, AlgorithmError> {
    let total = (0..dim)
        .try_fold(1usize, |a, _| a.checked_mul(k))
        .filter(|&t| t <= MAX_ARMS);
    let Some(total) = total else {
        return Err(crate::error::config(
            "arms_per_dim",
            format!("K^D exceeds {MAX_ARMS} arms"),
        ));
    };
    let offsets: Vec<f64> = (0..dim)
        .map(|_| rng.gen_range(0.0..1.0 / k as f64))
        .collect();
    Ok((0..total)
        .map(|i| {
            (0..dim)
                .map(|d| offsets[d] + ((i / k.pow(d as u32)) % k) as f64 / k as f64)
                .collect()
        })
        .collect())
}

/// Runs Fed1-UCB on `task` with `members` as clients, every one in this process.
pub fn run(
    task: &Task,
    params: &ValidFedPneParams,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let roster = Roster::simulation(members, seed);
    let mut silent = |_: &RoundProgress| {};
    let mut session = Session::new(task, params, channel, &roster, seed, &mut silent)?;
    run_session(task, params, &mut session, seed)?;
    Ok(session.finish("fed1-ucb", seed))
}

/// Fed1-UCB on a session (the server role runs on every member alike).
pub(crate) fn run_session(
    task: &Task,
    params: &ValidFedPneParams,
    session: &mut Session<'_>,
    seed: u64,
) -> Result<(), AlgorithmError> {
    let mut public = ChaCha8Rng::seed_from_u64(stream_seed(seed, 0));
    let arms = meshgrid(params.arms_per_dim, task.dim(), &mut public)?;
    let m = params.members as f64;
    let ln_t = (params.rounds as f64).ln().max(1.0);
    let mut active: Vec<usize> = (0..arms.len()).collect();
    let mut means = vec![0.0; arms.len()];
    let mut total_pulls = 0u64;
    let mut p = 1i32;
    while session.left() > 0 {
        if active.len() == 1 {
            let left = session.left();
            session.spend(&arms[active[0]], left)?;
            break;
        }
        let f = (params.kappa * 2f64.powi(p) * ln_t).ceil() as u64;
        let points: Vec<Vec<f64>> = active.iter().map(|&a| arms[a].clone()).collect();
        let Some(phase_means) = session.phase(&points, f)? else {
            break;
        };
        let new_total = total_pulls + f;
        for (&a, mu) in active.iter().zip(&phase_means) {
            means[a] = (means[a] * total_pulls as f64 + mu * f as f64) / new_total as f64;
        }
        total_pulls = new_total;
        let width = (2.0 * ln_t / (m * total_pulls as f64)).sqrt();
        let best = active
            .iter()
            .map(|&a| means[a])
            .fold(f64::NEG_INFINITY, f64::max);
        active.retain(|&a| means[a] + width >= best - width);
        p += 1;
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meshgrid_has_k_arms_per_dimension_with_one_offset() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let g = meshgrid(4, 2, &mut rng).unwrap();
        assert_eq!(g.len(), 16);
        let s = g[0].clone();
        assert!(s.iter().all(|v| (0.0..0.25).contains(v)));
        assert!((g[1][0] - s[0] - 0.25).abs() < 1e-12 && (g[4][1] - s[1] - 0.25).abs() < 1e-12);
        assert!(meshgrid(1000, 3, &mut rng).is_err());
    }
}
