//! Distributed exploration (paper 000 §3.2): the sub-regions `X_1 … X_P` and
//! the adaptive softmax weights `φ_n^(i)`.

use crate::error::config;
use crate::AlgorithmError;
use fedhe_bo::optim::Bounds;

/// The unit cube cut into `P` hyper-rectangles of equal volume (footnote 6,
/// App. B.2.1): `P`'s prime factors, largest first, each multiply the number of
/// cuts of the coordinate with the fewest so far (lowest index on ties). So
/// `D = 1` gives `P` intervals and `D = 2, 3` with `P = 4` give the paper's
/// 2 × 2 (× 1) grids. Agent `n` explores `X_{n mod P}` at initialisation
/// (≈ N/P agents each).
#[derive(Debug, Clone, PartialEq)]
pub struct SubRegions {
    cuts: Vec<usize>,
    boxes: Vec<Bounds>,
}

impl SubRegions {
    /// The partition of `[0, 1]^dim` into `count` sub-regions.
    pub fn new(dim: usize, count: usize) -> Result<Self, AlgorithmError> {
        if count == 0 {
            return Err(config("subregions", "at least one sub-region"));
        }
        if dim == 0 {
            return Err(config("dim", "at least one dimension"));
        }
        let mut cuts = vec![1usize; dim];
        for f in prime_factors(count).into_iter().rev() {
            let j = (0..dim).min_by_key(|&j| cuts[j]).expect("dim ≥ 1");
            cuts[j] *= f;
        }
        let boxes = (0..count)
            .map(|i| {
                let cell = Self::cell(&cuts, i);
                let lower: Vec<f64> = (0..dim).map(|j| cell[j] as f64 / cuts[j] as f64).collect();
                let upper = (0..dim)
                    .map(|j| (cell[j] + 1) as f64 / cuts[j] as f64)
                    .collect();
                Bounds::new(lower, upper)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { cuts, boxes })
    }

    /// Region `i`'s cell index along each coordinate (mixed radix, first
    /// coordinate most significant).
    fn cell(cuts: &[usize], mut i: usize) -> Vec<usize> {
        let mut cell = vec![0; cuts.len()];
        for j in (0..cuts.len()).rev() {
            cell[j] = i % cuts[j];
            i /= cuts[j];
        }
        cell
    }

    /// `P`.
    pub fn len(&self) -> usize {
        self.boxes.len()
    }

    /// Always false (`P ≥ 1`).
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty()
    }

    /// The box of `X_i`.
    pub fn bounds(&self, i: usize) -> &Bounds {
        &self.boxes[i]
    }

    /// The sub-region agent `n` explores at initialisation.
    pub fn assigned(&self, agent: usize) -> usize {
        agent % self.len()
    }

    /// How many of `agents` agents are assigned to `X_i`.
    pub fn assigned_count(&self, i: usize, agents: usize) -> usize {
        (0..agents).filter(|&n| self.assigned(n) == i).count()
    }

    /// The sub-region containing `x` (upper faces belong to the last cell).
    pub fn region_of(&self, x: &[f64]) -> usize {
        x.iter().zip(&self.cuts).fold(0, |acc, (v, c)| {
            let k = ((v.clamp(0.0, 1.0) * *c as f64) as usize).min(c - 1);
            acc * c + k
        })
    }
}

/// The prime factors of `n ≥ 1`, in increasing order.
fn prime_factors(mut n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// The adaptive weights of App. B: for sub-region `i`,
/// `φ_n^(i) = exp((a·I_n^(i) + 1)/𝒯_t) / Σ_m exp((a·I_m^(i) + 1)/𝒯_t)` with
/// `I_n^(i) = 1` iff agent `n` explores `X_i`, and temperature
/// `𝒯_t = a/(a_t − 1)`, where `a_t = a + 1` for `t ≤ warmup`, falls linearly
/// to 1 over the next `decay` rounds (both ends included: `a = 15`,
/// `decay = 5` gives 16, 12.25, 8.5, 4.75, 1) and stays 1 (`𝒯 = ∞`, uniform
/// weights) after.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightSchedule {
    /// `a > 0` (15 in the paper).
    pub a: f64,
    /// Rounds at `𝒯 = 1`.
    pub warmup: usize,
    /// Rounds of the linear decay of `a_t`.
    pub decay: usize,
}

/// The weights of one round: per sub-region, the weight of an agent that
/// explores it and of one that does not.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundWeights {
    explorer: Vec<f64>,
    other: Vec<f64>,
    assigned: Vec<usize>,
}

impl RoundWeights {
    /// `φ_n^(i)`.
    pub fn weight(&self, region: usize, agent: usize) -> f64 {
        if agent % self.assigned.len() == region {
            self.explorer[region]
        } else {
            self.other[region]
        }
    }

    /// `(φ_n^(i))_{i ∈ [P]}` for agent `n`.
    pub fn of_agent(&self, agent: usize) -> Vec<f64> {
        (0..self.explorer.len())
            .map(|i| self.weight(i, agent))
            .collect()
    }

    /// `φ_max = max_{i, n} φ_n^(i)` (the sensitivity factor of Alg. 1 line 11).
    pub fn max(&self) -> f64 {
        self.explorer
            .iter()
            .zip(&self.other)
            .zip(&self.assigned)
            .map(|((e, o), &k)| if k > 0 { e.max(*o) } else { *o })
            .fold(0.0, f64::max)
    }
}

impl WeightSchedule {
    /// `a_t` (struct docs).
    pub fn a_t(&self, t: usize) -> f64 {
        let top = self.a + 1.0;
        if t <= self.warmup {
            top
        } else if self.decay <= 1 || t > self.warmup + self.decay {
            1.0
        } else {
            top - self.a * (t - self.warmup - 1) as f64 / (self.decay - 1) as f64
        }
    }

    /// The weights of round `t` for `agents` agents over `regions`.
    pub fn weights(&self, t: usize, regions: &SubRegions, agents: usize) -> RoundWeights {
        // (aI + 1)/𝒯 = (aI + 1)(a_t − 1)/a; shifting by the larger exponent keeps
        // exp(·) ≤ 1.
        let inv_temp = (self.a_t(t) - 1.0) / self.a;
        let (hi, lo) = ((self.a + 1.0) * inv_temp, inv_temp);
        let (e_hi, e_lo) = (1.0, (lo - hi).exp());
        let assigned: Vec<usize> = (0..regions.len())
            .map(|i| regions.assigned_count(i, agents))
            .collect();
        let (explorer, other) = assigned
            .iter()
            .map(|&k| {
                let total = k as f64 * e_hi + (agents - k) as f64 * e_lo;
                (e_hi / total, e_lo / total)
            })
            .unzip();
        RoundWeights {
            explorer,
            other,
            assigned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_match_the_paper() {
        let one = SubRegions::new(1, 4).unwrap();
        assert_eq!(one.bounds(2).lower(), &[0.5]);
        assert_eq!(one.bounds(2).upper(), &[0.75]);
        assert_eq!(one.region_of(&[0.6]), 2);
        assert_eq!(one.region_of(&[1.0]), 3);
        // D = 2, P = 4: X_2 = [0, 0.5] × [0.5, 1] (App. B.2.1, numbered from 1).
        let two = SubRegions::new(2, 4).unwrap();
        assert_eq!(two.bounds(1).lower(), &[0.0, 0.5]);
        assert_eq!(two.bounds(1).upper(), &[0.5, 1.0]);
        let three = SubRegions::new(3, 4).unwrap();
        assert_eq!(three.bounds(3).lower(), &[0.5, 0.5, 0.0]);
        assert_eq!(three.bounds(3).upper(), &[1.0, 1.0, 1.0]);
        for (p, r) in [(&two, [0.7, 0.2]), (&two, [0.2, 0.9])] {
            let i = p.region_of(&r);
            assert!(p.bounds(i).contains(&r));
        }
        assert!(SubRegions::new(2, 0).is_err());
        assert_eq!(prime_factors(12), vec![2, 2, 3]);
    }

    #[test]
    fn weights_follow_the_temperature_schedule() {
        let s = WeightSchedule {
            a: 15.0,
            warmup: 5,
            decay: 5,
        };
        let a_t: Vec<f64> = (5..=11).map(|t| s.a_t(t)).collect();
        assert_eq!(a_t, vec![16.0, 16.0, 12.25, 8.5, 4.75, 1.0, 1.0]);
        let regions = SubRegions::new(1, 2).unwrap();
        let w = s.weights(1, &regions, 200);
        // 𝒯 = 1: explorers weigh e^16 against e^1.
        let ratio = w.weight(0, 0) / w.weight(0, 1);
        assert!((ratio - 15f64.exp()).abs() < 1e-6 * ratio);
        for i in 0..2 {
            let sum: f64 = (0..200).map(|n| w.weight(i, n)).sum();
            assert!((sum - 1.0).abs() < 1e-12);
        }
        assert_eq!(w.max(), w.weight(0, 0));
        let uniform = s.weights(11, &regions, 200);
        assert!((uniform.max() - 1.0 / 200.0).abs() < 1e-15);
        // P = 1 (DP-FTS): uniform from the start.
        let single = s.weights(1, &SubRegions::new(1, 1).unwrap(), 50);
        assert!((single.max() - 1.0 / 50.0).abs() < 1e-15);
    }
}
