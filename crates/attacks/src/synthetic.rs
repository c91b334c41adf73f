//! A synthetic federation for the attack tests, and a noised sum.

use crate::{AttackError, MemberView};
use fedhe_gp::kernels::{Kernel, KernelParams, Matern52};
use fedhe_gp::sparse::{Dpitc, LocalSummary};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// A federation of members holding points of a public test function, with
/// the real dPITC local summaries and their (decrypted) sum.
#[derive(Debug, Clone)]
pub struct Federation<K: Kernel> {
    /// The public kernel.
    pub kernel: K,
    /// The public noise variance.
    pub noise_variance: f64,
    /// The public prior mean.
    pub prior_mean: f64,
    /// The public support set.
    pub support: DMatrix<f64>,
    /// Each member's `(x, y)`.
    pub members: Vec<(DMatrix<f64>, DVector<f64>)>,
    /// Each member's local summary (`Dpitc::local_summary`).
    pub summaries: Vec<LocalSummary>,
    /// Their sum: what every member decrypts.
    pub sum: LocalSummary,
}

/// The public test function: a shifted sphere `Σ_d (x_d − 0.35)²`.
pub fn test_function(x: &[f64]) -> f64 {
    x.iter().map(|v| (v - 0.35).powi(2)).sum()
}

/// Support points spread over the cube: greedy max-min selection among
/// `32 · size` uniform candidates.
fn spread_support<R: Rng + ?Sized>(dim: usize, size: usize, rng: &mut R) -> DMatrix<f64> {
    let cands: Vec<Vec<f64>> = (0..32 * size)
        .map(|_| (0..dim).map(|_| rng.gen::<f64>()).collect())
        .collect();
    let mut picked: Vec<usize> = vec![0];
    let mut dist: Vec<f64> = cands.iter().map(|c| sq(c, &cands[0])).collect();
    while picked.len() < size {
        let (best, _) = dist
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .unwrap_or((0, &0.0));
        picked.push(best);
        for (d, c) in dist.iter_mut().zip(&cands) {
            *d = d.min(sq(c, &cands[best]));
        }
    }
    DMatrix::from_fn(size, dim, |i, j| cands[picked[i]][j])
}

fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum()
}

impl Federation<Matern52> {
    /// `members` members with `points_per_member` uniform points each in
    /// `[0,1]^dim`, values of [`test_function`], a max-min spread support set
    /// of `support_size` points; Matérn 5/2 with length-scale `0.25·√dim`,
    /// signal variance 1, noise variance `1e-2`, prior mean 0. Deterministic
    /// in `seed`.
    pub fn synthetic(
        dim: usize,
        members: usize,
        points_per_member: usize,
        support_size: usize,
        seed: u64,
    ) -> Result<Self, AttackError> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let kernel = Matern52::new(KernelParams::isotropic(
            dim,
            0.25 * (dim as f64).sqrt(),
            1.0,
        )?);
        let support = spread_support(dim, support_size, &mut rng);
        let data = (0..members)
            .map(|_| {
                let x = DMatrix::from_fn(points_per_member, dim, |_, _| rng.gen::<f64>());
                let y = DVector::from_fn(points_per_member, |i, _| {
                    let row: Vec<f64> = x.row(i).iter().copied().collect();
                    test_function(&row)
                });
                (x, y)
            })
            .collect();
        Self::new(kernel, 1e-2, 0.0, support, data)
    }
}

impl<K: Kernel> Federation<K> {
    /// A federation of the given members' data under a public model.
    pub fn new(
        kernel: K,
        noise_variance: f64,
        prior_mean: f64,
        support: DMatrix<f64>,
        members: Vec<(DMatrix<f64>, DVector<f64>)>,
    ) -> Result<Self, AttackError> {
        let model = Dpitc::new(kernel.clone(), noise_variance, prior_mean, support.clone())?;
        let summaries = members
            .iter()
            .map(|(x, y)| model.local_summary(x, y))
            .collect::<Result<Vec<_>, _>>()?;
        let sum = LocalSummary::sum(support.nrows(), &summaries);
        Ok(Self {
            kernel,
            noise_variance,
            prior_mean,
            support,
            members,
            summaries,
            sum,
        })
    }

    /// Member `me`'s view of the release `sum` (the federation's own sum, or a
    /// noised one).
    pub fn view(&self, me: usize, sum: LocalSummary) -> MemberView<K> {
        let sizes = self.others_sizes(me);
        MemberView {
            kernel: self.kernel.clone(),
            noise_variance: self.noise_variance,
            prior_mean: self.prior_mean,
            support: self.support.clone(),
            x: self.members[me].0.clone(),
            y: self.members[me].1.clone(),
            sum,
            others_count: sizes.iter().sum(),
            others_sizes: Some(sizes),
        }
    }

    /// The point counts of every member but `me`, in member order.
    pub fn others_sizes(&self, me: usize) -> Vec<usize> {
        self.members
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != me)
            .map(|(_, (x, _))| x.nrows())
            .collect()
    }

    /// The inputs and values of every member but `me`.
    pub fn others_points(&self, me: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for (i, (x, y)) in self.members.iter().enumerate() {
            if i == me {
                continue;
            }
            for r in 0..x.nrows() {
                xs.push(x.row(r).iter().copied().collect());
                ys.push(y[r]);
            }
        }
        (xs, ys)
    }

    /// The median absolute entry of the packed sum (the unit the noise
    /// tables use).
    pub fn median_abs_entry(&self) -> f64 {
        let mut v: Vec<f64> = self.sum.pack().iter().map(|v| v.abs()).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }
}

/// The sum with independent Gaussian noise of standard deviation `std` on
/// every entry of `ṁ_S` and of the upper triangle of `K̇_SS` (mirrored, so
/// the noised `K̇_SS` stays symmetric): a stand-in for a DP mechanism.
pub fn noised<R: Rng + ?Sized>(sum: &LocalSummary, std: f64, rng: &mut R) -> LocalSummary {
    let s = sum.m_s.len();
    let mut out = sum.clone();
    for i in 0..s {
        out.m_s[i] += std * gaussian(rng);
        for j in i..s {
            let e = std * gaussian(rng);
            out.k_ss[(i, j)] += e;
            if j != i {
                out.k_ss[(j, i)] += e;
            }
        }
    }
    out
}

/// A standard normal draw (Box–Muller).
fn gaussian<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
