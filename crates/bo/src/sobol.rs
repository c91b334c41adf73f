//! Sobol' low-discrepancy points in the unit cube, with a seeded random
//! digital shift (the raw samples of the acquisition optimiser, as BoTorch's
//! `optimize_acqf` draws its `raw_samples` from a scrambled Sobol' sequence).
//!
//! Construction: Bratley & Fox (1988), Algorithm 659, with the Gray-code order
//! of Antonov & Saleev (1979): point `n` is `x_n = x_{n−1} ⊕ v_c`, where `c` is
//! the position of the lowest zero bit of `n − 1`. The direction numbers of
//! coordinates 2-30 are those of Joe & Kuo (2008), file `new-joe-kuo-6.21201`
//! (`s`, `a`, `m_1..m_s` per coordinate); coordinate 1 is van der Corput's
//! sequence. For `k > s` the recurrence is (Joe & Kuo 2008, eq. 3)
//!
//! `m_k = 2 a_1 m_{k−1} ⊕ 2² a_2 m_{k−2} ⊕ … ⊕ 2^{s−1} a_{s−1} m_{k−s+1} ⊕ 2^s m_{k−s} ⊕ m_{k−s}`,
//!
//! and `v_k = m_k / 2^k`. A digital shift (XOR of every coordinate with a
//! uniform random 32-bit word) keeps the net property of every block of `2^m`
//! points and makes the points uniformly distributed marginally (Owen 2003,
//! §3).

use crate::error::invalid;
use crate::BoError;
use rand::Rng;

/// The largest dimension with Sobol' direction numbers here; further
/// coordinates of [`Sobol`] are uniform random.
pub const SOBOL_MAX_DIM: usize = 30;

/// `(s, a, m_1..m_s)` of Joe & Kuo's `new-joe-kuo-6.21201`, `d` = 2..30.
const JOE_KUO: [(u32, u32, &[u32]); SOBOL_MAX_DIM - 1] = [
    (1, 0, &[1]),
    (2, 1, &[1, 3]),
    (3, 1, &[1, 3, 1]),
    (3, 2, &[1, 1, 1]),
    (4, 1, &[1, 1, 3, 3]),
    (4, 4, &[1, 3, 5, 13]),
    (5, 2, &[1, 1, 5, 5, 17]),
    (5, 4, &[1, 1, 5, 5, 5]),
    (5, 7, &[1, 1, 7, 11, 19]),
    (5, 11, &[1, 1, 5, 1, 1]),
    (5, 13, &[1, 1, 1, 3, 11]),
    (5, 14, &[1, 3, 5, 5, 31]),
    (6, 1, &[1, 3, 3, 9, 7, 49]),
    (6, 13, &[1, 1, 1, 15, 21, 21]),
    (6, 16, &[1, 3, 1, 13, 27, 49]),
    (6, 19, &[1, 1, 1, 15, 7, 5]),
    (6, 22, &[1, 3, 1, 15, 13, 25]),
    (6, 25, &[1, 1, 5, 5, 19, 61]),
    (7, 1, &[1, 3, 7, 11, 23, 15, 103]),
    (7, 4, &[1, 3, 7, 13, 13, 15, 69]),
    (7, 7, &[1, 1, 3, 13, 7, 35, 63]),
    (7, 8, &[1, 3, 5, 9, 1, 25, 53]),
    (7, 14, &[1, 3, 1, 13, 9, 35, 107]),
    (7, 19, &[1, 3, 1, 5, 27, 61, 31]),
    (7, 21, &[1, 1, 5, 11, 19, 41, 61]),
    (7, 28, &[1, 3, 5, 3, 3, 13, 69]),
    (7, 31, &[1, 1, 7, 13, 1, 19, 1]),
    (7, 32, &[1, 3, 7, 5, 13, 19, 59]),
    (7, 37, &[1, 1, 3, 9, 25, 29, 41]),
];

const BITS: usize = 32;

/// The direction integers `v_k · 2^32`, `k = 1..32`, of coordinate `j` (0-based).
fn directions(j: usize) -> [u32; BITS] {
    let mut v = [0u32; BITS];
    if j == 0 {
        for (k, vk) in v.iter_mut().enumerate() {
            *vk = 1 << (BITS - 1 - k);
        }
        return v;
    }
    let (s, a, m_init) = JOE_KUO[j - 1];
    let s = s as usize;
    let mut m = [0u64; BITS];
    m[..s].copy_from_slice(&m_init.iter().map(|x| u64::from(*x)).collect::<Vec<_>>());
    for k in s..BITS {
        let mut val = (m[k - s] << s) ^ m[k - s];
        for i in 1..s {
            // a_i is bit (s − 1 − i) of a (a_1 the most significant of s − 1 bits).
            if (a >> (s - 1 - i)) & 1 == 1 {
                val ^= m[k - i] << i;
            }
        }
        m[k] = val;
    }
    for (k, vk) in v.iter_mut().enumerate() {
        *vk = (m[k] << (BITS - 1 - k)) as u32;
    }
    v
}

/// A Sobol' sequence in `[0, 1)^dim`, starting at the (shifted) origin so
/// that every block of `2^m` points from the start is a `(t, m, s)`-net.
#[derive(Debug, Clone)]
pub struct Sobol {
    direction: Vec<[u32; BITS]>,
    state: Vec<u32>,
    shift: Vec<u32>,
    extra: usize,
    index: u64,
}

impl Sobol {
    /// The unscrambled sequence (its first point is the origin); coordinates
    /// beyond [`SOBOL_MAX_DIM`] are refused.
    pub fn new(dim: usize) -> Result<Self, BoError> {
        if dim == 0 || dim > SOBOL_MAX_DIM {
            return Err(invalid(
                "dim",
                format!("Sobol' points need 1 ≤ dim ≤ {SOBOL_MAX_DIM}, got {dim}"),
            ));
        }
        Ok(Self {
            direction: (0..dim).map(directions).collect(),
            state: vec![0; dim],
            shift: vec![0; dim],
            extra: 0,
            index: 0,
        })
    }

    /// The sequence with a random digital shift drawn from `rng`; any `dim ≥ 1`
    /// (coordinates beyond [`SOBOL_MAX_DIM`] are uniform draws from `rng`).
    pub fn scrambled<R: Rng + ?Sized>(dim: usize, rng: &mut R) -> Result<Self, BoError> {
        if dim == 0 {
            return Err(invalid("dim", "Sobol' points need dim ≥ 1"));
        }
        let mut s = Self::new(dim.min(SOBOL_MAX_DIM))?;
        s.shift = (0..s.direction.len()).map(|_| rng.gen()).collect();
        s.extra = dim.saturating_sub(SOBOL_MAX_DIM);
        Ok(s)
    }

    /// The next point; `rng` supplies coordinates beyond [`SOBOL_MAX_DIM`].
    pub fn next_point<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Vec<f64> {
        const SCALE: f64 = 1.0 / 4_294_967_296.0;
        if self.index > 0 {
            let c = (!(self.index - 1)).trailing_zeros() as usize;
            // 2^32 points exhaust the 32-bit direction numbers; wrap around.
            let c = c.min(BITS - 1);
            for (x, v) in self.state.iter_mut().zip(&self.direction) {
                *x ^= v[c];
            }
        }
        self.index += 1;
        let mut p: Vec<f64> = self
            .state
            .iter()
            .zip(&self.shift)
            .map(|(x, s)| f64::from(x ^ s) * SCALE)
            .collect();
        p.extend((0..self.extra).map(|_| rng.gen::<f64>()));
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn first_points_are_the_published_ones() {
        // The first 8 points of the unscrambled 3-D sequence (Bratley & Fox
        // 1988, Table 2; scipy.stats.qmc.Sobol(3, scramble=False)).
        let want = [
            [0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
            [0.75, 0.25, 0.25],
            [0.25, 0.75, 0.75],
            [0.375, 0.375, 0.625],
            [0.875, 0.875, 0.125],
            [0.625, 0.125, 0.875],
            [0.125, 0.625, 0.375],
        ];
        let mut s = Sobol::new(3).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        for w in want {
            assert_eq!(s.next_point(&mut rng), w.to_vec());
        }
    }

    #[test]
    fn direction_numbers_follow_the_recurrence_for_a_published_row() {
        // d = 20 of new-joe-kuo-6.21201: s = 7, a = 1 (x⁷ + x + 1), so for
        // k > 7: m_k = 2⁷ m_{k−7} ⊕ m_{k−7} ⊕ 2⁶ a_6 m_{k−6} with a_6 = 1
        // (a_1..a_5 = 0).
        let v = directions(19);
        let m: Vec<u64> = (0..BITS)
            .map(|k| u64::from(v[k]) >> (BITS - 1 - k))
            .collect();
        assert_eq!(&m[..7], &[1, 3, 7, 11, 23, 15, 103]);
        for k in 7..BITS {
            assert_eq!(
                m[k],
                (m[k - 7] << 7) ^ m[k - 7] ^ (m[k - 6] << 6),
                "k = {k}"
            );
            assert_eq!(m[k] % 2, 1, "m_k is odd");
            assert!(m[k] < 1 << (k + 1));
        }
    }

    #[test]
    fn every_block_stratifies_each_coordinate_and_the_first_pair() {
        // A (0, m, 1)-net in every coordinate: 2^m points, one per interval of
        // width 2^−m; and the first two coordinates a (0, m, 2)-net: one point
        // in every elementary box 2^−a × 2^−(m−a). A digital shift keeps both.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut s = Sobol::scrambled(SOBOL_MAX_DIM, &mut rng).unwrap();
        let m = 9;
        let n = 1usize << m;
        let pts: Vec<Vec<f64>> = (0..n).map(|_| s.next_point(&mut rng)).collect();
        for j in 0..SOBOL_MAX_DIM {
            let mut seen = vec![false; n];
            for p in &pts {
                assert!((0.0..1.0).contains(&p[j]));
                let cell = (p[j] * n as f64) as usize;
                assert!(!seen[cell], "coordinate {j}: cell {cell} twice");
                seen[cell] = true;
            }
        }
        for a in 0..=m {
            let mut seen = vec![false; n];
            for p in &pts {
                let c0 = (p[0] * (1usize << a) as f64) as usize;
                let c1 = (p[1] * (1usize << (m - a)) as f64) as usize;
                let cell = c0 * (1 << (m - a)) + c1;
                assert!(!seen[cell], "a = {a}: box twice");
                seen[cell] = true;
            }
        }
    }

    #[test]
    fn dimensions_beyond_the_table_are_filled_and_zero_is_refused() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut s = Sobol::scrambled(40, &mut rng).unwrap();
        let p = s.next_point(&mut rng);
        assert_eq!(p.len(), 40);
        assert!(p.iter().all(|v| (0.0..1.0).contains(v)));
        assert!(Sobol::new(31).unwrap_err().to_string().contains("dim"));
        assert!(Sobol::scrambled(0, &mut rng).is_err());
    }
}
