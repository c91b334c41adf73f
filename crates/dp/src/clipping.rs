//! L2 clipping: x ↦ x · min(1, S/‖x‖₂), which bounds each contribution's L2
//! norm by S and hence a sum's L2 sensitivity (add/remove one member) by S
//! (Abadi et al. 2016, Alg. 1; DP-FTS-DE Alg. 1 clips each agent's vector for
//! each of the P sub-regions to S/√P, so the joint vector has norm ≤ S).

use crate::DpError;

/// Parameters of L2 clipping, before validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipParams {
    /// The clipping norm S > 0.
    pub norm: f64,
}

impl ClipParams {
    /// Checks S > 0 and finite; the error names `S`.
    pub fn validate(self) -> Result<L2Clip, DpError> {
        if self.norm > 0.0 && self.norm.is_finite() {
            Ok(L2Clip { norm: self.norm })
        } else {
            Err(DpError::invalid(
                "S (clipping norm)",
                self.norm,
                "positive and finite",
            ))
        }
    }
}

/// Validated L2 clipping to norm S.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct L2Clip {
    norm: f64,
}

impl L2Clip {
    /// The clipping norm S.
    pub fn norm(&self) -> f64 {
        self.norm
    }

    /// Clips `x` in place to x · min(1, S/‖x‖₂); returns whether it was scaled.
    /// Refuses non-finite coordinates (the error names the index).
    pub fn clip_in_place(&self, x: &mut [f64]) -> Result<bool, DpError> {
        let norm = l2_norm(x)?;
        if norm <= self.norm {
            return Ok(false);
        }
        let factor = self.norm / norm;
        for v in x.iter_mut() {
            *v *= factor;
        }
        // Rounding can leave the norm a few ulps above S; shrink until it is not.
        while l2_norm(x)? > self.norm {
            for v in x.iter_mut() {
                *v *= 1.0 - f64::EPSILON;
            }
        }
        Ok(true)
    }

    /// A clipped copy of `x` ([`Self::clip_in_place`]).
    pub fn clip(&self, x: &[f64]) -> Result<Vec<f64>, DpError> {
        let mut out = x.to_vec();
        self.clip_in_place(&mut out)?;
        Ok(out)
    }
}

/// ‖x‖₂, computed as m·‖x/m‖₂ with m = max |x_i| so that it neither overflows
/// nor underflows; an error for a non-finite coordinate.
pub fn l2_norm(x: &[f64]) -> Result<f64, DpError> {
    let mut max = 0.0f64;
    for (index, &v) in x.iter().enumerate() {
        if !v.is_finite() {
            return Err(DpError::NonFiniteInput { index });
        }
        max = max.max(v.abs());
    }
    if max == 0.0 {
        return Ok(0.0);
    }
    Ok(max * x.iter().map(|v| (v / max).powi(2)).sum::<f64>().sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_long_vectors_and_keeps_short_ones() {
        let clip = ClipParams { norm: 5.0 }.validate().unwrap();
        let mut x = vec![3.0, 4.0];
        assert!(!clip.clip_in_place(&mut x).unwrap());
        assert_eq!(x, vec![3.0, 4.0]);
        let y = clip.clip(&[6.0, 8.0]).unwrap();
        assert!((y[0] - 3.0).abs() < 1e-12 && (y[1] - 4.0).abs() < 1e-12);
        assert!(l2_norm(&y).unwrap() <= 5.0);
        // Direction is kept.
        let z = clip.clip(&[1e200, -1e200, 1e199]).unwrap();
        assert!(l2_norm(&z).unwrap() <= 5.0 && l2_norm(&z).unwrap() > 5.0 * (1.0 - 1e-12));
        assert!((z[0] + z[1]).abs() < 1e-12 && (z[0] / z[2] - 10.0).abs() < 1e-9);
    }

    #[test]
    fn norm_never_exceeds_the_bound() {
        let clip = ClipParams { norm: 0.1 }.validate().unwrap();
        let mut seed = 0x9e3779b97f4a7c15u64;
        for _ in 0..1000 {
            let x: Vec<f64> = (0..50)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
                })
                .collect();
            assert!(l2_norm(&clip.clip(&x).unwrap()).unwrap() <= 0.1);
        }
    }

    #[test]
    fn refuses_bad_norms_and_inputs() {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = ClipParams { norm: s }.validate().unwrap_err();
            assert!(e.to_string().starts_with("invalid S"), "{e}");
        }
        let clip = ClipParams { norm: 1.0 }.validate().unwrap();
        assert_eq!(
            clip.clip(&[1.0, f64::INFINITY]),
            Err(DpError::NonFiniteInput { index: 1 })
        );
        assert_eq!(l2_norm(&[]).unwrap(), 0.0);
    }
}
