//! A small box-constrained Levenberg–Marquardt solver with a central
//! finite-difference Jacobian, for the zero-residual problems of the attacks.

use nalgebra::{DMatrix, DVector};

/// Minimises `½‖f(x)‖²` over the box `[0, 1]^n` (every coordinate clamped) from
/// `x0`; returns the last accepted point and its cost `‖f(x)‖²`.
pub(crate) fn minimise<F>(f: F, x0: &[f64], max_iter: usize) -> (Vec<f64>, f64)
where
    F: Fn(&[f64]) -> Vec<f64>,
{
    minimise_with(
        &f,
        |x: &[f64], m: usize| numeric_jacobian(&f, x, m),
        x0,
        max_iter,
    )
}

/// The step of the central finite differences.
pub(crate) const H: f64 = 1e-6;

/// The central finite-difference Jacobian (one-sided at the box edges) of
/// `f` at `x`, with `m` residuals.
pub(crate) fn numeric_jacobian<F>(f: &F, x: &[f64], m: usize) -> DMatrix<f64>
where
    F: Fn(&[f64]) -> Vec<f64>,
{
    let n = x.len();
    let mut jac = DMatrix::zeros(m, n);
    let mut probe = x.to_vec();
    for k in 0..n {
        let lo = (x[k] - H).max(0.0);
        let hi = (x[k] + H).min(1.0);
        probe[k] = hi;
        let rp = f(&probe);
        probe[k] = lo;
        let rm = f(&probe);
        probe[k] = x[k];
        let step = hi - lo;
        for i in 0..m {
            jac[(i, k)] = (rp[i] - rm[i]) / step;
        }
    }
    jac
}

/// [`minimise`] with a given Jacobian `jac(x, m)`.
pub(crate) fn minimise_with<F, J>(f: &F, jac: J, x0: &[f64], max_iter: usize) -> (Vec<f64>, f64)
where
    F: Fn(&[f64]) -> Vec<f64>,
    J: Fn(&[f64], usize) -> DMatrix<f64>,
{
    let n = x0.len();
    let mut x: Vec<f64> = x0.iter().map(|v| v.clamp(0.0, 1.0)).collect();
    let mut r = f(&x);
    let mut cost: f64 = r.iter().map(|v| v * v).sum();
    let mut lambda = 1e-3;
    for _ in 0..max_iter {
        if cost < 1e-30 {
            break;
        }
        let jac = jac(&x, r.len());
        let rv = DVector::from_column_slice(&r);
        let jtj = jac.transpose() * &jac;
        let jtr = jac.transpose() * &rv;
        let mut improved = false;
        for _ in 0..12 {
            let mut a = jtj.clone();
            for k in 0..n {
                a[(k, k)] += lambda * (jtj[(k, k)] + 1e-12);
            }
            let Some(chol) = a.cholesky() else {
                lambda *= 10.0;
                continue;
            };
            let delta = chol.solve(&(-&jtr));
            let trial: Vec<f64> = x
                .iter()
                .zip(delta.iter())
                .map(|(a, d)| (a + d).clamp(0.0, 1.0))
                .collect();
            let rt = f(&trial);
            let ct: f64 = rt.iter().map(|v| v * v).sum();
            if ct.is_finite() && ct < cost {
                let gain = (cost - ct) / cost.max(1e-300);
                x = trial;
                r = rt;
                cost = ct;
                lambda = (lambda / 3.0).max(1e-12);
                improved = true;
                if gain < 1e-10 {
                    return (x, cost);
                }
                break;
            }
            lambda *= 4.0;
        }
        if !improved {
            break;
        }
    }
    (x, cost)
}
