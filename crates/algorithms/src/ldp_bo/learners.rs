//! The learners of paper 001 on a finite domain `𝒟` (the server role): each
//! picks the next point by UCB and takes the (mean) reward the institutions
//! returned for it.
//!
//! All three keep their statistics per domain point. For the exact GP of
//! TGP-UCB this is exact: `n` observations at one point with noise `λ` carry the
//! same likelihood as their mean with noise `λ/n`, so eqs. (2)-(3) reduce to a
//! system in the distinct points (at most `|𝒟|`). For the Nyström learners a
//! dictionary with repeated points spans the same feature space as its distinct
//! points, so the dictionary keeps distinct points (`m_t ≤ |𝒟|`).

use crate::AlgorithmError;
use fedhe_gp::linalg::select_rows;
use fedhe_gp::nystrom::{sample_dictionary, NystromEmbedding};
use fedhe_gp::Kernel;
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The public constants the confidence widths and truncations use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constants {
    /// `B`, the bound on `f`.
    pub b: f64,
    /// `R`, the noise bound (uniform) or scale.
    pub r: f64,
    /// The Laplace scale `𝓛` of CTL(ε), `None` without privacy.
    pub laplace_scale: Option<f64>,
    /// `ε` of CTL(ε), `None` without privacy.
    pub epsilon: Option<f64>,
    /// The variance of the raw noise `η`.
    pub noise_variance: f64,
    /// `λ`.
    pub lambda: f64,
    /// `δ`.
    pub delta: f64,
    /// The horizon `T`.
    pub horizon: usize,
    /// The multiplier on `β_t`.
    pub beta_scale: f64,
    /// Nyström accuracy `ε̃`.
    pub accuracy: f64,
    /// Dictionary oversampling `q`.
    pub q: f64,
}

impl Constants {
    /// The `(1+α)`-th (here second) moment bound of a reward:
    /// with CTL, `v = B² + R² + 8(B + R)²/ε²` (Theorem 2); without it,
    /// `v = B² + Var(η)` (§5.1: `B² + 3` for Student-t with 3 d.o.f.).
    pub fn moment_v(&self) -> f64 {
        match self.epsilon {
            Some(e) => {
                self.b * self.b + self.r * self.r + 8.0 * (self.b + self.r).powi(2) / (e * e)
            }
            None => self.b * self.b + self.noise_variance,
        }
    }

    /// The noise moment bound `c` of Theorem 4: with CTL, `c = R² + 8(B + R)²/ε²`
    /// (Corollary 1); without it, `c = Var(η)` (§5.1: 3).
    pub fn moment_c(&self) -> f64 {
        match self.epsilon {
            Some(e) => self.r * self.r + 8.0 * (self.b + self.r).powi(2) / (e * e),
            None => self.noise_variance,
        }
    }
}

/// A UCB learner on the points of `𝒟`.
pub trait Learner {
    /// The index of the domain point to query at round `t` (from 1).
    fn next(&mut self, t: usize, rng: &mut ChaCha8Rng) -> usize;
    /// The reward received at round `t` for point `index`.
    fn observe(
        &mut self,
        t: usize,
        index: usize,
        reward: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), AlgorithmError>;
}

/// `argmax_x μ(x) + β σ(x)`, ties broken uniformly at random.
fn ucb_argmax(mean: &[f64], var: &[f64], beta: f64, rng: &mut ChaCha8Rng) -> usize {
    let ucb: Vec<f64> = mean
        .iter()
        .zip(var)
        .map(|(m, v)| m + beta * v.max(0.0).sqrt())
        .collect();
    let best = ucb.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ties: Vec<usize> = (0..ucb.len())
        .filter(|&i| ucb[i] >= best - 1e-12 * best.abs().max(1.0))
        .collect();
    ties[rng.gen_range(0..ties.len())]
}

/// LDP-TGP-UCB (paper 001, Alg. 2) and, without privacy, TGP-UCB
/// (Chowdhury & Gopalan 2019): an exact GP on truncated rewards.
#[derive(Debug, Clone)]
pub struct TgpUcb {
    gram: DMatrix<f64>,
    consts: Constants,
    counts: Vec<usize>,
    sums: Vec<f64>,
    mean: Vec<f64>,
    var: Vec<f64>,
    /// `γ_t` (see [`TgpUcb::information_gain`]).
    gamma: f64,
}

impl TgpUcb {
    /// A learner on the domain with Gram matrix `gram = [k(x, x')]_{𝒟}`.
    pub fn new(gram: DMatrix<f64>, consts: Constants) -> Self {
        let n = gram.nrows();
        let var = (0..n).map(|i| gram[(i, i)]).collect();
        Self {
            gram,
            consts,
            counts: vec![0; n],
            sums: vec![0.0; n],
            mean: vec![0.0; n],
            var,
            gamma: 0.0,
        }
    }

    /// The truncation point `b_t`: with CTL, `b_t = B + R + 𝓛 ln t` (Alg. 2
    /// line 4); without it, `b_t = √v · t^{1/4}` (TGP-UCB's `Θ(t^{1/4})` for a
    /// finite variance, §4.3).
    pub fn truncation(&self, t: usize) -> f64 {
        let t = t.max(1) as f64;
        match self.consts.laplace_scale {
            Some(l) => self.consts.b + self.consts.r + l * t.ln(),
            None => self.consts.moment_v().sqrt() * t.powf(0.25),
        }
    }

    /// `γ_t`, computed as the information gain of the points played,
    /// `½ ln|I + λ⁻¹K_t| = ½ Σ_τ ln(1 + σ²_{τ−1}(x_τ)/λ)` (the maximum over
    /// sets of `t` points is not computable; this is the usual surrogate).
    pub fn information_gain(&self) -> f64 {
        self.gamma
    }

    /// `β_t` with the current `γ_{t−1}`. With CTL (Alg. 2 line 5):
    /// `β_t = B + (2√2/√λ) b_{t−1} √(γ_{t−1} + ln(1/δ)) + (1/√λ) √(K (ln(t−1) + 1))`,
    /// `K = B² + R² + 2𝓛²`. Without it the same proof (App. D.2) with
    /// `E[η̂_τ | 𝓕]² ≤ v²/b_τ² = v/√τ` gives the last term `(1/√λ) √(2v) t^{1/4}`.
    pub fn beta(&self, t: usize) -> f64 {
        let c = &self.consts;
        let s = (t.max(2) - 1) as f64;
        let sl = c.lambda.sqrt();
        let first = c.b
            + 2.0 * 2f64.sqrt() / sl
                * self.truncation(t.max(2) - 1)
                * (self.gamma + (1.0 / c.delta).ln()).sqrt();
        let last = match c.laplace_scale {
            Some(l) => {
                let k = c.b * c.b + c.r * c.r + 2.0 * l * l;
                (k * (s.ln() + 1.0)).sqrt() / sl
            }
            None => (2.0 * c.moment_v()).sqrt() * s.powf(0.25) / sl,
        };
        c.beta_scale * (first + last)
    }

    fn update_posterior(&mut self) -> Result<(), AlgorithmError> {
        let seen: Vec<usize> = (0..self.counts.len())
            .filter(|&i| self.counts[i] > 0)
            .collect();
        let k_oo = DMatrix::from_fn(seen.len(), seen.len(), |a, b| {
            let v = self.gram[(seen[a], seen[b])];
            if a == b {
                v + self.consts.lambda / self.counts[seen[a]] as f64
            } else {
                v
            }
        });
        let chol = fedhe_gp::linalg::JitteredCholesky::new(&k_oo)?;
        let ybar = DVector::from_fn(seen.len(), |a, _| {
            self.sums[seen[a]] / self.counts[seen[a]] as f64
        });
        let alpha = chol.solve_vec(&ybar);
        let k_od = DMatrix::from_fn(seen.len(), self.gram.nrows(), |a, j| {
            self.gram[(seen[a], j)]
        });
        let v = chol.solve(&k_od);
        for j in 0..self.gram.nrows() {
            let col = k_od.column(j);
            self.mean[j] = col.dot(&alpha);
            self.var[j] = (self.gram[(j, j)] - col.dot(&v.column(j))).max(0.0);
        }
        Ok(())
    }
}

impl Learner for TgpUcb {
    fn next(&mut self, t: usize, rng: &mut ChaCha8Rng) -> usize {
        let beta = self.beta(t);
        ucb_argmax(&self.mean, &self.var, beta, rng)
    }

    /// Alg. 2 lines 8-10: `ŷ_t = ȳ_t 1{|ȳ_t| ≤ b_t}`, then eqs. (2)-(3).
    fn observe(
        &mut self,
        t: usize,
        index: usize,
        reward: f64,
        _rng: &mut ChaCha8Rng,
    ) -> Result<(), AlgorithmError> {
        self.gamma += 0.5 * (1.0 + self.var[index] / self.consts.lambda).ln();
        let truncated = if reward.abs() <= self.truncation(t) {
            reward
        } else {
            0.0
        };
        self.counts[index] += 1;
        self.sums[index] += truncated;
        self.update_posterior()
    }
}

/// A Nyström feature space over the domain: `φ̃(x)` for every point of `𝒟` and
/// `Ṽ = Σ_i φ̃(x_i)φ̃(x_i)ᵀ + λI` over the points played.
struct FeatureSpace {
    /// `|𝒟| × m`: row `x` is `φ̃(x)ᵀ`.
    phi: DMatrix<f64>,
    /// `Ṽ`.
    v: DMatrix<f64>,
}

impl FeatureSpace {
    /// The embedding of Alg. 4 from the points played (`played[i]` a domain
    /// index, repeated as played) with posterior variances `var` over `𝒟`:
    /// each `x_i` enters the dictionary with probability `min(q σ̃²(x_i), 1)`;
    /// `None` when the dictionary is empty.
    fn sample<K: Kernel>(
        kernel: &K,
        domain: &DMatrix<f64>,
        played: &[usize],
        var: &[f64],
        q: f64,
        lambda: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Self>, AlgorithmError> {
        let variances: Vec<f64> = played.iter().map(|&i| var[i]).collect();
        let mut dict: Vec<usize> = sample_dictionary(&variances, q, rng)?
            .into_iter()
            .map(|i| played[i])
            .collect();
        dict.sort_unstable();
        dict.dedup();
        if dict.is_empty() {
            return Ok(None);
        }
        let emb = NystromEmbedding::new(kernel.clone(), select_rows(domain, &dict))?;
        let m = emb.len();
        let mut phi = DMatrix::zeros(domain.nrows(), m);
        for x in 0..domain.nrows() {
            let row: Vec<f64> = domain.row(x).iter().copied().collect();
            phi.set_row(x, &emb.embed(&row)?.transpose());
        }
        let mut v = DMatrix::identity(m, m) * lambda;
        for &i in played {
            let f = phi.row(i).transpose();
            v += &f * f.transpose();
        }
        Ok(Some(Self { phi, v }))
    }

    fn dim(&self) -> usize {
        self.phi.ncols()
    }

    /// `σ̃²(x) = k(x, x) − φ̃ᵀφ̃ + λ φ̃ᵀṼ⁻¹φ̃` (Alg. 1 line 13, Alg. 3 line 14),
    /// given `w_x = Ṽ^{−1/2}φ̃(x)` as the rows of `w`.
    fn variances(&self, prior: &[f64], w: &DMatrix<f64>, lambda: f64) -> Vec<f64> {
        (0..self.phi.nrows())
            .map(|x| {
                let p = self.phi.row(x);
                (prior[x] - p.dot(&p) + lambda * w.row(x).dot(&w.row(x))).max(0.0)
            })
            .collect()
    }
}

/// `k(x, x)` for every row of `domain`.
fn prior_variances<K: Kernel>(kernel: &K, domain: &DMatrix<f64>) -> Vec<f64> {
    (0..domain.nrows())
        .map(|i| {
            let x: Vec<f64> = domain.row(i).iter().copied().collect();
            kernel.eval(&x, &x)
        })
        .collect()
}

/// `Ṽ^{−1/2}` of a symmetric positive definite `Ṽ`.
fn inverse_sqrt(v: &DMatrix<f64>) -> DMatrix<f64> {
    let eig = SymmetricEigen::new(v.clone());
    let d = eig
        .eigenvalues
        .map(|l| 1.0 / l.max(f64::MIN_POSITIVE).sqrt());
    &eig.eigenvectors * DMatrix::from_diagonal(&d) * eig.eigenvectors.transpose()
}

/// LDP-ATA-GP-UCB (paper 001, Alg. 1) and, without privacy, ATA-GP-UCB
/// (Chowdhury & Gopalan 2019): Nyström features, rewards truncated per
/// feature coordinate.
#[derive(Debug, Clone)]
pub struct AtaGpUcb<K: Kernel> {
    kernel: K,
    domain: DMatrix<f64>,
    prior: Vec<f64>,
    consts: Constants,
    played: Vec<usize>,
    rewards: Vec<f64>,
    /// `b_τ` of every round so far: Alg. 1 line 10 truncates reward `τ` at its
    /// own round's threshold, which depends on that round's `m_τ`.
    thresholds: Vec<f64>,
    mean: Vec<f64>,
    var: Vec<f64>,
    m: usize,
}

impl<K: Kernel> AtaGpUcb<K> {
    /// A learner on the rows of `domain`.
    pub fn new(kernel: K, domain: DMatrix<f64>, consts: Constants) -> Self {
        let prior = prior_variances(&kernel, &domain);
        Self {
            kernel,
            mean: vec![0.0; domain.nrows()],
            var: prior.clone(),
            prior,
            domain,
            consts,
            played: Vec::new(),
            rewards: Vec::new(),
            thresholds: Vec::new(),
            m: 0,
        }
    }

    /// `ln(4 m_t T/δ)` with `m_t ≥ 1`.
    fn log_term(&self) -> f64 {
        (4.0 * self.m.max(1) as f64 * self.consts.horizon as f64 / self.consts.delta).ln()
    }

    /// The truncation `b_t = √(v / ln(4 m_t T/δ))` (Theorem 2, `α = 1`) with the
    /// current `m_t`.
    pub fn truncation(&self) -> f64 {
        (self.consts.moment_v() / self.log_term()).sqrt()
    }

    /// `β_{t+1} = B(1 + 1/√(1−ε̃)) + 4 √(ln(4 m_t T/δ) v m_t / λ)` (Theorem 2).
    pub fn beta(&self) -> f64 {
        let c = &self.consts;
        let first = c.b * (1.0 + 1.0 / (1.0 - c.accuracy).sqrt());
        let second = 4.0 * (self.log_term() * c.moment_v() * self.m as f64 / c.lambda).sqrt();
        c.beta_scale * (first + second)
    }

    /// The current dictionary size `m_t`.
    pub fn features(&self) -> usize {
        self.m
    }
}

impl<K: Kernel> Learner for AtaGpUcb<K> {
    fn next(&mut self, _t: usize, rng: &mut ChaCha8Rng) -> usize {
        let beta = self.beta();
        ucb_argmax(&self.mean, &self.var, beta, rng)
    }

    /// Alg. 1 lines 6-13: re-embed, truncate `u_{i,τ}ȳ_τ` at `b_τ` coordinate by
    /// coordinate, `θ̃_t = Ṽ^{−1/2} r̂`.
    fn observe(
        &mut self,
        _t: usize,
        index: usize,
        reward: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), AlgorithmError> {
        self.played.push(index);
        self.rewards.push(reward);
        let c = self.consts;
        let Some(space) = FeatureSpace::sample(
            &self.kernel,
            &self.domain,
            &self.played,
            &self.var,
            c.q,
            c.lambda,
            rng,
        )?
        else {
            self.m = 0;
            self.thresholds.push(self.truncation());
            self.mean.iter_mut().for_each(|m| *m = 0.0);
            self.var.clone_from(&self.prior);
            return Ok(());
        };
        self.m = space.dim();
        self.thresholds.push(self.truncation());
        let v_isqrt = inverse_sqrt(&space.v);
        // Row x of w is u_x = Ṽ^{−1/2} φ̃(x) (Ṽ^{−1/2} is symmetric).
        let w = &space.phi * &v_isqrt;
        let mut r_hat = DVector::zeros(self.m);
        let history = self.played.iter().zip(&self.rewards).zip(&self.thresholds);
        for ((&x, &y), &b_tau) in history {
            for i in 0..self.m {
                let term = w[(x, i)] * y;
                if term.abs() <= b_tau {
                    r_hat[i] += term;
                }
            }
        }
        let theta = &v_isqrt * r_hat;
        let mean = &space.phi * theta;
        self.mean = mean.iter().copied().collect();
        self.var = space.variances(&self.prior, &w, c.lambda);
        Ok(())
    }
}

/// MoMA-GP-UCB (paper 001, Alg. 3), private (rewards through CTL(ε)) or not:
/// epochs of `k` plays of one point, `k` least-squares estimates in Nyström
/// features, and the one closest (median distance) to the others.
#[derive(Debug, Clone)]
pub struct MomaGpUcb<K: Kernel> {
    kernel: K,
    domain: DMatrix<f64>,
    prior: Vec<f64>,
    consts: Constants,
    plays: usize,
    /// `x_1..x_n`, one per epoch.
    points: Vec<usize>,
    /// `y_{n,1..k}` of every epoch; the last may be incomplete.
    rewards: Vec<Vec<f64>>,
    mean: Vec<f64>,
    var: Vec<f64>,
    m: usize,
}

impl<K: Kernel> MomaGpUcb<K> {
    /// A learner on the rows of `domain` with `plays` = `k` plays per epoch.
    pub fn new(kernel: K, domain: DMatrix<f64>, consts: Constants, plays: usize) -> Self {
        let prior = prior_variances(&kernel, &domain);
        Self {
            kernel,
            mean: vec![0.0; domain.nrows()],
            var: prior.clone(),
            prior,
            domain,
            consts,
            plays: plays.max(1),
            points: Vec::new(),
            rewards: Vec::new(),
            m: 0,
        }
    }

    /// `β_{n+1} = B(1 + 1/√(1−ε̃)) + λ^{−1/2} · 3 (9 m_n c)^{1/(1+α)} n^{(1−α)/(2(1+α))}`
    /// with `α = 1` (Theorem 4; the `λ^{−1/2}` is eq. (21) of App. D.3).
    pub fn beta(&self) -> f64 {
        let c = &self.consts;
        let first = c.b * (1.0 + 1.0 / (1.0 - c.accuracy).sqrt());
        let second = 3.0 * (9.0 * self.m as f64 * c.moment_c()).sqrt() / c.lambda.sqrt();
        c.beta_scale * (first + second)
    }

    /// Lines 7-14 of Alg. 3 at the end of epoch `n`.
    fn end_epoch(&mut self, rng: &mut ChaCha8Rng) -> Result<(), AlgorithmError> {
        let c = self.consts;
        let Some(space) = FeatureSpace::sample(
            &self.kernel,
            &self.domain,
            &self.points,
            &self.var,
            c.q,
            c.lambda,
            rng,
        )?
        else {
            return Ok(());
        };
        self.m = space.dim();
        let chol = fedhe_gp::linalg::JitteredCholesky::new(&space.v)?;
        let l = chol.l();
        // θ̃_{n,j} = Ṽ⁻¹ Σ_i y_{i,j} φ̃(x_i), and z_j = Lᵀθ̃_{n,j} so that
        // ‖θ̃_j − θ̃_s‖_Ṽ = ‖z_j − z_s‖.
        let thetas: Vec<DVector<f64>> = (0..self.plays)
            .map(|j| {
                let mut g = DVector::zeros(self.m);
                for (n, &x) in self.points.iter().enumerate() {
                    g += space.phi.row(x).transpose() * self.rewards[n][j];
                }
                chol.solve_vec(&g)
            })
            .collect();
        let z: Vec<DVector<f64>> = thetas.iter().map(|t| l.transpose() * t).collect();
        let best = (0..self.plays)
            .map(|j| {
                let mut d: Vec<f64> = (0..self.plays)
                    .filter(|&s| s != j)
                    .map(|s| (&z[j] - &z[s]).norm())
                    .collect();
                d.sort_by(f64::total_cmp);
                // The median of k − 1 distances (the lower one when k − 1 is even).
                let r = if d.is_empty() {
                    0.0
                } else {
                    d[(d.len() - 1) / 2]
                };
                (j, r)
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |(j, _)| j);
        let w = &space.phi * inverse_sqrt(&space.v);
        self.mean = (&space.phi * &thetas[best]).iter().copied().collect();
        self.var = space.variances(&self.prior, &w, c.lambda);
        Ok(())
    }
}

impl<K: Kernel> Learner for MomaGpUcb<K> {
    fn next(&mut self, _t: usize, rng: &mut ChaCha8Rng) -> usize {
        match self.rewards.last() {
            Some(r) if r.len() < self.plays => *self.points.last().expect("an epoch is open"),
            _ => {
                let beta = self.beta();
                let x = ucb_argmax(&self.mean, &self.var, beta, rng);
                self.points.push(x);
                self.rewards.push(Vec::with_capacity(self.plays));
                x
            }
        }
    }

    fn observe(
        &mut self,
        _t: usize,
        _index: usize,
        reward: f64,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), AlgorithmError> {
        let epoch = self.rewards.last_mut().expect("next() opened an epoch");
        epoch.push(reward);
        if epoch.len() == self.plays {
            self.end_epoch(rng)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fedhe_gp::{KernelParams, SquaredExponential};
    use rand::SeedableRng;

    fn consts(private: bool) -> Constants {
        Constants {
            b: 1.0,
            r: 1.0,
            laplace_scale: private.then_some(4.0),
            epsilon: private.then_some(1.0),
            noise_variance: 3.0,
            lambda: 1.0,
            delta: 0.1,
            horizon: 100,
            beta_scale: 1.0,
            accuracy: 0.5,
            q: 50.0,
        }
    }

    fn domain(n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, 1, |i, _| i as f64 / (n - 1) as f64)
    }

    #[test]
    fn tgp_posterior_equals_the_exact_gp_with_repeated_points() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let d = domain(7);
        let gram = k.gram(&d);
        let mut l = TgpUcb::new(gram, consts(false));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let obs = [(2usize, 0.5), (2, 0.7), (5, -0.2), (2, 0.1)];
        for (t, &(i, y)) in obs.iter().enumerate() {
            l.observe(t + 1, i, y, &mut rng).unwrap();
        }
        // Eq. (2)-(3) with all four observations as rows.
        let x = DMatrix::from_fn(4, 1, |r, _| d[(obs[r].0, 0)]);
        let y = DVector::from_fn(4, |r, _| obs[r].1);
        let kt = k.gram(&x) + DMatrix::identity(4, 4);
        let inv = kt.try_inverse().unwrap();
        for j in 0..7 {
            let kx = DVector::from_fn(4, |r, _| k.eval(&[d[(j, 0)]], &[x[(r, 0)]]));
            let mu = kx.dot(&(&inv * &y));
            let var = 1.0 - kx.dot(&(&inv * &kx));
            assert!((l.mean[j] - mu).abs() < 1e-9, "{j}: {} vs {mu}", l.mean[j]);
            assert!((l.var[j] - var).abs() < 1e-9);
        }
        // γ_t = ½ ln|I + K_t/λ|.
        let det = (k.gram(&x) + DMatrix::identity(4, 4)).determinant();
        assert!((l.information_gain() - 0.5 * det.ln()).abs() < 1e-9);
    }

    #[test]
    fn private_truncation_and_beta_follow_algorithm_2() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let l = TgpUcb::new(k.gram(&domain(5)), consts(true));
        // b_t = B + R + 𝓛 ln t = 2 + 4 ln t.
        assert!((l.truncation(1) - 2.0).abs() < 1e-12);
        assert!((l.truncation(10) - (2.0 + 4.0 * 10f64.ln())).abs() < 1e-12);
        // β_3 with γ_2 = 0: B + 2√2 b_2 √ln 10 + √(K (ln 2 + 1)), K = 1 + 1 + 32.
        let b2 = 2.0 + 4.0 * 2f64.ln();
        let want =
            1.0 + 2.0 * 2f64.sqrt() * b2 * 10f64.ln().sqrt() + (34.0 * (2f64.ln() + 1.0)).sqrt();
        assert!((l.beta(3) - want).abs() < 1e-9);
    }

    #[test]
    fn moma_median_of_means_rejects_an_outlying_row() {
        // One point, k = 5 plays per epoch; row 4 of the epoch is wild.
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let mut c = consts(false);
        c.q = 1e6;
        let mut l = MomaGpUcb::new(k, domain(3), c, 5);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for epoch in 0..3 {
            let x = l.next(epoch + 1, &mut rng);
            for j in 0..5 {
                assert_eq!(l.next(epoch + 1, &mut rng), x);
                let y = if j == 4 {
                    1000.0
                } else {
                    0.5 + 0.01 * j as f64
                };
                l.observe(epoch + 1, x, y, &mut rng).unwrap();
            }
        }
        assert!(l.mean.iter().all(|m| m.abs() < 1.0), "{:?}", l.mean);
        assert!(l.beta() > 0.0 && l.m >= 1);
    }

    #[test]
    fn ata_truncates_each_reward_at_its_own_rounds_threshold() {
        // Points 0 and 1 of a 5-point grid with l = 0.3 are nearly orthogonal
        // (k = e^{−1/0.18} ≈ 0.004), so u_{0,τ=1} ≈ 1/√2 after both rounds.
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let mut c = consts(false);
        c.q = 1e6;
        let mut l = AtaGpUcb::new(k, domain(5), c);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // |u_{1,1} ȳ_1| ≈ 0.962/√2 ≈ 0.680 lies between b_2 and b_1.
        l.observe(1, 0, 0.962, &mut rng).unwrap();
        l.observe(2, 4, 0.0, &mut rng).unwrap();
        assert_eq!(l.features(), 2);
        // Theorem 2: b_τ = √(v / ln(4 m_τ T/δ)), v = B² + Var(η) = 4, T = 100, δ = 0.1.
        let b1 = (4.0 / 4000f64.ln()).sqrt();
        let b2 = (4.0 / 8000f64.ln()).sqrt();
        assert!((l.thresholds[0] - b1).abs() < 1e-12);
        assert!((l.thresholds[1] - b2).abs() < 1e-12);
        assert!((l.truncation() - b2).abs() < 1e-12);
        assert!(b2 < 0.68 && 0.68 < b1);
        // Kept at b_1, so μ̃(x_1) ≈ u·(u ȳ_1) ≈ 0.48; truncating at b_2 would give ≈ 0.
        assert!(l.mean[0] > 0.4, "{}", l.mean[0]);
    }

    #[test]
    fn ata_and_moma_beta_follow_theorems_2_and_4() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let mut c = consts(false);
        c.q = 1e6;
        let mut ata = AtaGpUcb::new(k.clone(), domain(5), c);
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        ata.observe(1, 0, 0.5, &mut rng).unwrap();
        ata.observe(2, 4, 0.5, &mut rng).unwrap();
        assert_eq!(ata.features(), 2);
        // β = B(1 + 1/√(1−ε̃)) + 4√(ln(4 m_t T/δ) v m_t/λ), B = 1, ε̃ = 0.5, v = 4, m_t = 2.
        let head = 1.0 + 1.0 / 0.5f64.sqrt();
        let want = head + 4.0 * (8000f64.ln() * 4.0 * 2.0).sqrt();
        assert!((ata.beta() - want).abs() < 1e-9, "{} vs {want}", ata.beta());
        // MoMA, one epoch of k = 2 plays: m_1 = 1 and β_2 = B(1 + 1/√(1−ε̃)) + 3√(9 m_1 c), c = 3.
        let mut moma = MomaGpUcb::new(k, domain(5), c, 2);
        let x = moma.next(1, &mut rng);
        moma.observe(1, x, 0.5, &mut rng).unwrap();
        moma.observe(2, x, 0.5, &mut rng).unwrap();
        assert_eq!(moma.m, 1);
        let want = head + 3.0 * (9.0f64 * 3.0).sqrt();
        assert!(
            (moma.beta() - want).abs() < 1e-9,
            "{} vs {want}",
            moma.beta()
        );
    }

    #[test]
    fn ata_truncation_discards_a_huge_reward() {
        let k = SquaredExponential::new(KernelParams::isotropic(1, 0.3, 1.0).unwrap());
        let mut c = consts(false);
        c.q = 1e6;
        let mut l = AtaGpUcb::new(k, domain(5), c);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for t in 1..=6 {
            l.observe(t, 2, 0.8, &mut rng).unwrap();
        }
        let before = l.mean[2];
        assert!(before > 0.3, "{before}");
        l.observe(7, 2, 1e6, &mut rng).unwrap();
        assert!(l.mean[2].abs() < 2.0, "{}", l.mean[2]);
        assert!(l.var[2] < l.prior[2]);
        assert_eq!(l.features(), 1);
    }
}
