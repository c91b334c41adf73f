//! The CEC-2005 real-parameter benchmark functions F1-F20 (Suganthan et al.,
//! "Problem Definitions and Evaluation Criteria for the CEC 2005 Special Session
//! on Real-Parameter Optimization", 2005), ported from the organisers' MATLAB
//! code and verified against their `test_data_func*.txt` points at D = 50.
//!
//! These are *minimisation* problems with minimum `f(o) = bias`; negate them to
//! maximise. The data (shift vectors, rotations, F5/F12 matrices) are the official
//! files in `crates/tasks/data/cec2005`, embedded at compile time.
//!
//! Conventions that ports get wrong (see that folder's README):
//! - rotations act on row vectors, `z = (x − o) M`, i.e. `z_j = Σ_i (x − o)_i M_ij`;
//! - F2 and F4 sum the squares of *every* partial sum, including the last;
//! - F5 sets `o_i = −100` for `i ≤ ⌈D/4⌉` and `o_i = 100` for
//!   `i ≥ max(⌊0.75 D⌋, 1)` (1-based);
//! - F8 sets the odd (1-based) coordinates of `o` to −32;
//! - F18-F20 set the 10th optimum of the composition to 0; F20 also sets the even
//!   (1-based) coordinates of the first optimum to 5.
//!
//! F4 and F17 are noisy: [`Cec2005::evaluate`] is noise-free, and
//! [`Cec2005::evaluate_noisy`] draws the noise from a caller's RNG.

use crate::error::invalid;
use crate::TaskError;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use std::f64::consts::{E, PI};

/// The dimensions the official rotation matrices exist for.
pub const DIMENSIONS: [usize; 4] = [2, 10, 30, 50];

/// The number of functions implemented (F1-F20).
pub const COUNT: u8 = 20;

macro_rules! data_file {
    ($name:literal) => {
        include_str!(concat!("../../data/cec2005/", $name))
    };
}

macro_rules! matrix_file {
    ($base:literal, $dim:expr) => {
        match $dim {
            2 => include_str!(concat!("../../data/cec2005/", $base, "_M_D2.txt")),
            10 => include_str!(concat!("../../data/cec2005/", $base, "_M_D10.txt")),
            30 => include_str!(concat!("../../data/cec2005/", $base, "_M_D30.txt")),
            _ => include_str!(concat!("../../data/cec2005/", $base, "_M_D50.txt")),
        }
    };
}

/// Parses a CEC-2005 data file (whitespace-separated numbers, one row per
/// non-empty line), e.g. the organisers' `test_data_func*.txt`.
///
/// # Panics
/// If a token is not a number; the embedded official files all parse.
pub fn parse_rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .map(|t| t.parse::<f64>().expect("CEC-2005 data file parses"))
                .collect::<Vec<f64>>()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// The first `dim` entries of the first row of `text`.
fn shift(text: &str, dim: usize) -> Vec<f64> {
    parse_rows(text)[0][..dim].to_vec()
}

/// The rows `first..first + dim`, truncated to `dim` columns.
fn square(rows: &[Vec<f64>], first: usize, dim: usize) -> Vec<Vec<f64>> {
    rows[first..first + dim]
        .iter()
        .map(|r| r[..dim].to_vec())
        .collect()
}

/// `z = v M` for a row vector `v`: `z_j = Σ_i v_i M_ij`.
fn rotate(v: &[f64], m: &[Vec<f64>]) -> Vec<f64> {
    let d = v.len();
    (0..d)
        .map(|j| (0..d).map(|i| v[i] * m[i][j]).sum())
        .collect()
}

// Basic functions (unshifted), as in the organisers' code.

fn sphere(z: &[f64]) -> f64 {
    z.iter().map(|v| v * v).sum()
}

/// `Σ_i (Σ_{j ≤ i} z_j)²` over every partial sum, including the last.
fn schwefel_102(z: &[f64]) -> f64 {
    let mut partial = 0.0;
    z.iter()
        .map(|v| {
            partial += v;
            partial * partial
        })
        .sum()
}

fn elliptic(z: &[f64]) -> f64 {
    let d = z.len();
    z.iter()
        .enumerate()
        .map(|(i, v)| 1e6f64.powf(i as f64 / (d as f64 - 1.0)) * v * v)
        .sum()
}

fn rosenbrock(z: &[f64]) -> f64 {
    z.windows(2)
        .map(|w| 100.0 * (w[0] * w[0] - w[1]).powi(2) + (w[0] - 1.0).powi(2))
        .sum()
}

fn griewank(z: &[f64]) -> f64 {
    let s: f64 = z.iter().map(|v| v * v).sum::<f64>() / 4000.0;
    let p: f64 = z
        .iter()
        .enumerate()
        .map(|(i, v)| (v / ((i + 1) as f64).sqrt()).cos())
        .product();
    s - p + 1.0
}

fn ackley(z: &[f64]) -> f64 {
    let d = z.len() as f64;
    let s1: f64 = z.iter().map(|v| v * v).sum::<f64>() / d;
    let s2: f64 = z.iter().map(|v| (2.0 * PI * v).cos()).sum::<f64>() / d;
    -20.0 * (-0.2 * s1.sqrt()).exp() - s2.exp() + 20.0 + E
}

fn rastrigin(z: &[f64]) -> f64 {
    z.iter()
        .map(|v| v * v - 10.0 * (2.0 * PI * v).cos() + 10.0)
        .sum()
}

/// Weierstrass with `a = 0.5`, `b = 3`, `k_max = 20`:
/// `Σ_i Σ_k a^k cos(2π b^k (z_i + 0.5)) − D Σ_k a^k cos(π b^k)`.
fn weierstrass(z: &[f64]) -> f64 {
    let (a, b, kmax) = (0.5f64, 3.0f64, 20);
    let mut f = 0.0;
    for v in z {
        for k in 0..=kmax {
            f += a.powi(k) * (2.0 * PI * b.powi(k) * (v + 0.5)).cos();
        }
    }
    let mut c = 0.0;
    for k in 0..=kmax {
        c += a.powi(k) * (PI * b.powi(k)).cos();
    }
    f - z.len() as f64 * c
}

/// F8F2: Griewank of Rosenbrock on consecutive pairs, wrapping `(z_D, z_1)`.
fn f8f2(z: &[f64]) -> f64 {
    let d = z.len();
    (0..d)
        .map(|i| {
            let (x, y) = (z[i], z[(i + 1) % d]);
            let r = 100.0 * (x * x - y).powi(2) + (x - 1.0).powi(2);
            r * r / 4000.0 - r.cos() + 1.0
        })
        .sum()
}

/// Expanded Scaffer F6 on consecutive pairs, wrapping `(z_D, z_1)`.
fn scaffer_f6_expanded(z: &[f64]) -> f64 {
    let d = z.len();
    (0..d)
        .map(|i| {
            let s = z[i] * z[i] + z[(i + 1) % d].powi(2);
            0.5 + (s.sqrt().sin().powi(2) - 0.5) / (1.0 + 0.001 * s).powi(2)
        })
        .sum()
}

type Basic = fn(&[f64]) -> f64;

/// A hybrid composition function (F15-F20): ten basic functions around ten
/// optima, weighted by closeness.
#[derive(Debug, Clone)]
struct Composition {
    functions: [Basic; 10],
    optima: Vec<Vec<f64>>,
    sigma: [f64; 10],
    lambda: [f64; 10],
    rotations: Option<Vec<Vec<Vec<f64>>>>,
    /// `f_i((5/λ_i) M_i)` for the normalisation `C f_i / f_max,i` with `C = 2000`.
    f_max: Vec<f64>,
}

impl Composition {
    const BIAS_STEP: f64 = 100.0;
    const C: f64 = 2000.0;

    fn transform(&self, i: usize, v: &[f64]) -> Vec<f64> {
        let scaled: Vec<f64> = v.iter().map(|x| x / self.lambda[i]).collect();
        match &self.rotations {
            Some(ms) => rotate(&scaled, &ms[i]),
            None => scaled,
        }
    }

    fn new(
        functions: [Basic; 10],
        optima: Vec<Vec<f64>>,
        sigma: [f64; 10],
        lambda: [f64; 10],
        rotations: Option<Vec<Vec<Vec<f64>>>>,
    ) -> Self {
        let mut c = Self {
            functions,
            optima,
            sigma,
            lambda,
            rotations,
            f_max: Vec::new(),
        };
        let d = c.optima[0].len();
        let five = vec![5.0; d];
        c.f_max = (0..10)
            .map(|i| (c.functions[i])(&c.transform(i, &five)))
            .collect();
        c
    }

    /// The composition without its final bias (official `hybrid_composition_func`):
    /// `w_i = exp(−‖x − o_i‖²/(2 D σ_i²))`; every weight but the largest is
    /// multiplied by `1 − max(w)^10`; weights are normalised; the value is
    /// `Σ w_i (C f_i((x − o_i)/λ_i M_i)/f_max,i + 100 i)`.
    fn eval(&self, x: &[f64]) -> f64 {
        let d = x.len() as f64;
        let mut w: Vec<f64> = (0..10)
            .map(|i| {
                let s: f64 = x
                    .iter()
                    .zip(&self.optima[i])
                    .map(|(a, o)| (a - o).powi(2))
                    .sum();
                (-s / (2.0 * d * self.sigma[i] * self.sigma[i])).exp()
            })
            .collect();
        let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for wi in w.iter_mut() {
            if *wi != max {
                *wi *= 1.0 - max.powi(10);
            }
        }
        let total: f64 = w.iter().sum();
        if total == 0.0 {
            w.iter_mut().for_each(|wi| *wi = 0.1);
        } else {
            w.iter_mut().for_each(|wi| *wi /= total);
        }
        (0..10)
            .map(|i| {
                let v: Vec<f64> = x.iter().zip(&self.optima[i]).map(|(a, o)| a - o).collect();
                let f = (self.functions[i])(&self.transform(i, &v));
                w[i] * (Self::C * f / self.f_max[i] + Self::BIAS_STEP * i as f64)
            })
            .sum()
    }
}

/// What a function needs beyond its number.
#[derive(Debug, Clone)]
enum Kind {
    /// `f(z)` with `z = (x − o) M` (or `x − o` without rotation), plus an offset on z.
    Shifted {
        basic: Basic,
        rotation: Option<Vec<Vec<f64>>>,
        z_offset: f64,
    },
    /// F5: `max_i |A_i x − B_i|`, `B = A o`.
    Schwefel206 { a: Vec<Vec<f64>>, b: Vec<f64> },
    /// F12: `Σ_i (A_i − B_i(x))²`.
    Schwefel213 {
        a: Vec<Vec<f64>>,
        b: Vec<Vec<f64>>,
        target: Vec<f64>,
    },
    /// F15-F20.
    Hybrid(Box<Composition>),
}

/// One CEC-2005 function at one dimension.
#[derive(Debug, Clone)]
pub struct Cec2005 {
    number: u8,
    dim: usize,
    optimum: Vec<f64>,
    kind: Kind,
}

/// The bias `f(o)` of F1..F25 (`fbias_data.txt`).
fn biases() -> Vec<f64> {
    parse_rows(data_file!("fbias_data.txt")).concat()
}

impl Cec2005 {
    /// Function `number` (1..=20) at dimension `dim` (one of [`DIMENSIONS`]).
    pub fn new(number: u8, dim: usize) -> Result<Self, TaskError> {
        if !(1..=COUNT).contains(&number) {
            return Err(invalid(
                "CEC-2005 function",
                format!("F{number} is not implemented (F1-F{COUNT})"),
            ));
        }
        if !DIMENSIONS.contains(&dim) {
            return Err(invalid(
                "dimension",
                format!("{dim} is not one of the official dimensions 2, 10, 30, 50"),
            ));
        }
        let d = dim;
        let shifted = |basic: Basic, file: &str, rotation: Option<&str>, z_offset: f64| {
            let o = shift(file, d);
            let rotation = rotation.map(|m| square(&parse_rows(m), 0, d));
            (
                o,
                Kind::Shifted {
                    basic,
                    rotation,
                    z_offset,
                },
            )
        };
        let (optimum, kind) = match number {
            1 => shifted(sphere, data_file!("sphere_func_data.txt"), None, 0.0),
            2 | 4 => shifted(schwefel_102, data_file!("schwefel_102_data.txt"), None, 0.0),
            3 => shifted(
                elliptic,
                data_file!("high_cond_elliptic_rot_data.txt"),
                Some(matrix_file!("elliptic", d)),
                0.0,
            ),
            5 => {
                let rows = parse_rows(data_file!("schwefel_206_data.txt"));
                let mut o = rows[0][..d].to_vec();
                let quarter = d.div_ceil(4);
                for v in o.iter_mut().take(quarter) {
                    *v = -100.0;
                }
                let from = ((0.75 * d as f64).floor() as usize).max(1);
                for v in o.iter_mut().skip(from - 1) {
                    *v = 100.0;
                }
                let a = square(&rows, 1, d);
                let b = a
                    .iter()
                    .map(|r| r.iter().zip(&o).map(|(x, y)| x * y).sum())
                    .collect();
                (o, Kind::Schwefel206 { a, b })
            }
            6 => shifted(
                rosenbrock,
                data_file!("rosenbrock_func_data.txt"),
                None,
                1.0,
            ),
            7 => shifted(
                griewank,
                data_file!("griewank_func_data.txt"),
                Some(matrix_file!("griewank", d)),
                0.0,
            ),
            8 => {
                let (mut o, kind) = shifted(
                    ackley,
                    data_file!("ackley_func_data.txt"),
                    Some(matrix_file!("ackley", d)),
                    0.0,
                );
                for v in o.iter_mut().step_by(2) {
                    *v = -32.0;
                }
                (o, kind)
            }
            9 => shifted(rastrigin, data_file!("rastrigin_func_data.txt"), None, 0.0),
            10 => shifted(
                rastrigin,
                data_file!("rastrigin_func_data.txt"),
                Some(matrix_file!("rastrigin", d)),
                0.0,
            ),
            11 => shifted(
                weierstrass,
                data_file!("weierstrass_data.txt"),
                Some(matrix_file!("weierstrass", d)),
                0.0,
            ),
            12 => {
                let rows = parse_rows(data_file!("schwefel_213_data.txt"));
                let a = square(&rows, 0, d);
                let b = square(&rows, 100, d);
                let alpha = rows[200][..d].to_vec();
                let target = schwefel_213_inner(&a, &b, &alpha);
                (alpha, Kind::Schwefel213 { a, b, target })
            }
            13 => shifted(f8f2, data_file!("EF8F2_func_data.txt"), None, 1.0),
            14 => shifted(
                scaffer_f6_expanded,
                data_file!("E_ScafferF6_func_data.txt"),
                Some(matrix_file!("E_ScafferF6", d)),
                0.0,
            ),
            15..=17 => {
                let optima: Vec<Vec<f64>> = parse_rows(data_file!("hybrid_func1_data.txt"))
                    .iter()
                    .take(10)
                    .map(|r| r[..d].to_vec())
                    .collect();
                let rotations = (number > 15).then(|| {
                    let rows = parse_rows(matrix_file!("hybrid_func1", d));
                    (0..10).map(|i| square(&rows, i * d, d)).collect()
                });
                let l = [
                    1.0,
                    1.0,
                    10.0,
                    10.0,
                    5.0 / 60.0,
                    5.0 / 60.0,
                    5.0 / 32.0,
                    5.0 / 32.0,
                    5.0 / 100.0,
                    5.0 / 100.0,
                ];
                let f: [Basic; 10] = [
                    rastrigin,
                    rastrigin,
                    weierstrass,
                    weierstrass,
                    griewank,
                    griewank,
                    ackley,
                    ackley,
                    sphere,
                    sphere,
                ];
                let c = Composition::new(f, optima.clone(), [1.0; 10], l, rotations);
                (optima[0].clone(), Kind::Hybrid(Box::new(c)))
            }
            _ => {
                let mut optima: Vec<Vec<f64>> = parse_rows(data_file!("hybrid_func2_data.txt"))
                    .iter()
                    .take(10)
                    .map(|r| r[..d].to_vec())
                    .collect();
                optima[9] = vec![0.0; d];
                if number == 20 {
                    for v in optima[0].iter_mut().skip(1).step_by(2) {
                        *v = 5.0;
                    }
                }
                let rows = parse_rows(matrix_file!("hybrid_func2", d));
                let rotations = Some((0..10).map(|i| square(&rows, i * d, d)).collect());
                let first_sigma = if number == 19 { 0.1 } else { 1.0 };
                let first_lambda = if number == 19 {
                    0.1 * 5.0 / 32.0
                } else {
                    2.0 * 5.0 / 32.0
                };
                let sigma = [first_sigma, 2.0, 1.5, 1.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0];
                let l = [
                    first_lambda,
                    5.0 / 32.0,
                    2.0,
                    1.0,
                    2.0 * 5.0 / 100.0,
                    5.0 / 100.0,
                    20.0,
                    10.0,
                    2.0 * 5.0 / 60.0,
                    5.0 / 60.0,
                ];
                let f: [Basic; 10] = [
                    ackley,
                    ackley,
                    rastrigin,
                    rastrigin,
                    sphere,
                    sphere,
                    weierstrass,
                    weierstrass,
                    griewank,
                    griewank,
                ];
                let c = Composition::new(f, optima.clone(), sigma, l, rotations);
                (optima[0].clone(), Kind::Hybrid(Box::new(c)))
            }
        };
        Ok(Self {
            number,
            dim,
            optimum,
            kind,
        })
    }

    /// The function number (1..=20).
    pub fn number(&self) -> u8 {
        self.number
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The global minimiser `o` (for F7 it lies outside the initialisation range).
    pub fn optimum(&self) -> &[f64] {
        &self.optimum
    }

    /// The bias, `f(o)`, the global minimum.
    pub fn bias(&self) -> f64 {
        biases()[self.number as usize - 1]
    }

    /// The official search range `[lo, hi]` in every coordinate (for F7, the
    /// initialisation range `[0, 600]`; its optimum lies outside).
    pub fn bounds(&self) -> (f64, f64) {
        bounds_of(self.number)
    }

    /// Whether the function is noisy (F4, F17).
    pub fn is_noisy(&self) -> bool {
        matches!(self.number, 4 | 17)
    }

    /// The noise-free value at `x` (length `dim`, finite).
    pub fn evaluate(&self, x: &[f64]) -> Result<f64, TaskError> {
        self.evaluate_with_noise(x, 0.0)
    }

    /// The value with F4's factor `1 + 0.4|N|` and F17's `1 + 0.2|N|`, `N ~ N(0, 1)`
    /// drawn from `rng`; the other functions ignore `rng`.
    pub fn evaluate_noisy<R: Rng + ?Sized>(
        &self,
        x: &[f64],
        rng: &mut R,
    ) -> Result<f64, TaskError> {
        let n: f64 = StandardNormal.sample(rng);
        self.evaluate_with_noise(x, n.abs())
    }

    /// The value with the noise magnitude `|N|` given explicitly.
    pub fn evaluate_with_noise(&self, x: &[f64], abs_normal: f64) -> Result<f64, TaskError> {
        if x.len() != self.dim {
            return Err(fedhe_gp::GpError::Dimension {
                what: "CEC-2005 point",
                expected: self.dim,
                got: x.len(),
            }
            .into());
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(fedhe_gp::GpError::NonFinite {
                what: "CEC-2005 point",
            }
            .into());
        }
        let value = match &self.kind {
            Kind::Shifted {
                basic,
                rotation,
                z_offset,
            } => {
                let v: Vec<f64> = x.iter().zip(&self.optimum).map(|(a, o)| a - o).collect();
                let mut z = match rotation {
                    Some(m) => rotate(&v, m),
                    None => v,
                };
                z.iter_mut().for_each(|zi| *zi += z_offset);
                let f = basic(&z);
                if self.number == 4 {
                    f * (1.0 + 0.4 * abs_normal)
                } else {
                    f
                }
            }
            Kind::Schwefel206 { a, b } => a
                .iter()
                .zip(b)
                .map(|(row, bi)| (row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>() - bi).abs())
                .fold(f64::NEG_INFINITY, f64::max),
            Kind::Schwefel213 { a, b, target } => schwefel_213_inner(a, b, x)
                .iter()
                .zip(target)
                .map(|(bx, t)| (t - bx).powi(2))
                .sum(),
            Kind::Hybrid(c) => {
                let f = c.eval(x);
                if self.number == 17 {
                    f * (1.0 + 0.2 * abs_normal)
                } else {
                    f
                }
            }
        };
        Ok(value + self.bias())
    }
}

/// `Σ_j (a_ij sin v_j + b_ij cos v_j)` for every row `i`.
fn schwefel_213_inner(a: &[Vec<f64>], b: &[Vec<f64>], v: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(ar, br)| {
            ar.iter()
                .zip(br)
                .zip(v)
                .map(|((p, q), x)| p * x.sin() + q * x.cos())
                .sum()
        })
        .collect()
}

/// The official search range of F`number`.
pub fn bounds_of(number: u8) -> (f64, f64) {
    match number {
        7 => (0.0, 600.0),
        8 => (-32.0, 32.0),
        9 | 10 | 15..=20 => (-5.0, 5.0),
        11 => (-0.5, 0.5),
        12 => (-PI, PI),
        13 => (-3.0, 1.0),
        _ => (-100.0, 100.0),
    }
}

/// The box an optimiser searches for F`number`: the official range, except F7,
/// which has no bounds and whose optimum lies outside its initialisation range
/// `[0, 600]`; it is searched in `[−600, 600]`, the classic Griewank range,
/// which contains its optimum (test below).
pub fn search_bounds_of(number: u8) -> (f64, f64) {
    match number {
        7 => (-600.0, 600.0),
        n => bounds_of(n),
    }
}

/// The bias (global minimum) of F`number`, 1..=20.
pub fn bias_of(number: u8) -> Option<f64> {
    (1..=COUNT)
        .contains(&number)
        .then(|| biases()[number as usize - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_at_the_optimum_is_the_bias_at_d10() {
        for n in 1..=COUNT {
            let f = Cec2005::new(n, 10).unwrap();
            let v = f.evaluate(f.optimum()).unwrap();
            assert!(
                (v - f.bias()).abs() < 1e-8 * (1.0 + f.bias().abs()),
                "F{n}: f(o) = {v}, bias {}",
                f.bias()
            );
        }
    }

    #[test]
    fn biases_are_the_official_ones() {
        let want = [
            -450.0, -450.0, -450.0, -450.0, -310.0, 390.0, -180.0, -140.0, -330.0, -330.0, 90.0,
            -460.0, -130.0, -300.0, 120.0, 120.0, 120.0, 10.0, 10.0, 10.0,
        ];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(bias_of(i as u8 + 1), Some(*w));
        }
    }

    #[test]
    fn noise_of_f4_and_f17_is_injected_and_scales_the_unbiased_value() {
        use rand::SeedableRng;
        let x = vec![1.5; 10];
        for (n, scale) in [(4u8, 0.4), (17, 0.2)] {
            let f = Cec2005::new(n, 10).unwrap();
            assert!(f.is_noisy());
            let clean = f.evaluate(&x).unwrap() - f.bias();
            let noisy = f.evaluate_with_noise(&x, 2.0).unwrap() - f.bias();
            assert!((noisy - clean * (1.0 + 2.0 * scale)).abs() < 1e-9 * noisy.abs());
            let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let a = f.evaluate_noisy(&x, &mut r1).unwrap();
            assert_eq!(a, f.evaluate_noisy(&x, &mut r2).unwrap());
            assert!(a - f.bias() >= clean);
        }
        // Noise-free functions ignore the noise.
        let f1 = Cec2005::new(1, 10).unwrap();
        assert_eq!(
            f1.evaluate_with_noise(&x, 3.0).unwrap(),
            f1.evaluate(&x).unwrap()
        );
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(Cec2005::new(21, 10).is_err());
        assert!(Cec2005::new(0, 10).is_err());
        assert!(Cec2005::new(1, 7).is_err());
        let f = Cec2005::new(1, 2).unwrap();
        assert!(matches!(
            f.evaluate(&[0.0]),
            Err(TaskError::Gp(fedhe_gp::GpError::Dimension { .. }))
        ));
        assert!(matches!(
            f.evaluate(&[0.0, f64::NAN]),
            Err(TaskError::Gp(fedhe_gp::GpError::NonFinite { .. }))
        ));
    }

    #[test]
    fn every_optimum_lies_in_its_search_box() {
        for number in 1..=COUNT {
            let f = Cec2005::new(number, 10).unwrap();
            let (lo, hi) = search_bounds_of(number);
            assert!(
                f.optimum().iter().all(|v| (lo..=hi).contains(v)),
                "F{number}"
            );
        }
        let f7 = Cec2005::new(7, 10).unwrap();
        let (lo, hi) = bounds_of(7);
        assert!(!f7.optimum().iter().all(|v| (lo..=hi).contains(v)));
    }
}
