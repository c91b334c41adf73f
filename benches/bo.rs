//! BO benchmarks: maximising log-EI of a 100-point GP in D = 10
//! (2048 random candidates, L-BFGS polish of the best 5).

use criterion::{criterion_group, criterion_main, Criterion};
use fedhe_bo::acquisition::Acquisition;
use fedhe_bo::optim::{maximize, Bounds, OptimizerConfig};
use fedhe_gp::{ExactGpParams, KernelParams, Matern52};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

fn acquisition_optimisation(c: &mut Criterion) {
    let dim = 10;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let x = DMatrix::from_fn(100, dim, |_, _| rng.gen_range(0.0..1.0));
    let y = DVector::from_fn(100, |i, _| {
        -x.row(i)
            .iter()
            .map(|v: &f64| (v - 0.3).powi(2))
            .sum::<f64>()
    });
    let gp = ExactGpParams::new(Matern52::new(
        KernelParams::isotropic(dim, 0.8, 1.0).expect("valid"),
    ))
    .noise_variance(1e-4)
    .standardize(true)
    .fit(&x, &y)
    .expect("fits");
    let acq = Acquisition::LogEi { best: y.max() };
    let bounds = Bounds::unit(dim).expect("valid");
    let config = OptimizerConfig {
        max_iters: 50,
        ..OptimizerConfig::default()
    };
    let mut group = c.benchmark_group("acquisition_optimisation_d10");
    group.sample_size(10);
    group.bench_function("log_ei_n100", |b| {
        b.iter(|| {
            black_box(
                maximize(
                    |p| {
                        acq.evaluate(&gp, p)
                            .unwrap_or((f64::NEG_INFINITY, vec![0.0; p.len()]))
                    },
                    &bounds,
                    black_box(&config),
                )
                .expect("optimises"),
            )
        })
    });
    group.finish();
}

/// criterion's generated group function carries no docs of its own.
#[allow(missing_docs)]
mod harness {
    use super::*;
    criterion_group!(benches, acquisition_optimisation);
}
criterion_main!(harness::benches);
