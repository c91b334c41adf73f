//! GP benchmarks: exact GP fit + predict for n ∈ {50, 200, 800} in D = 10, and the
//! dPITC local summary and global predictive for |S| ∈ {8, 16, 32, 64}.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fedhe_gp::sparse::{Dpitc, LocalSummary};
use fedhe_gp::{ExactGpParams, KernelParams, Matern52};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

const DIM: usize = 10;

fn data(rng: &mut ChaCha8Rng, n: usize) -> (DMatrix<f64>, DVector<f64>) {
    let x = DMatrix::from_fn(n, DIM, |_, _| rng.gen_range(0.0..1.0));
    let y = DVector::from_fn(n, |i, _| {
        x.row(i).iter().map(|v: &f64| (3.0 * v).sin()).sum()
    });
    (x, y)
}

fn kernel() -> Matern52 {
    Matern52::new(KernelParams::isotropic(DIM, 0.8, 1.0).expect("valid"))
}

fn exact_fit_predict(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut group = c.benchmark_group("exact_fit_predict_d10");
    group.sample_size(10);
    for n in [50, 200, 800] {
        let (x, y) = data(&mut rng, n);
        let (xs, _) = data(&mut rng, 100);
        let params = ExactGpParams::new(kernel())
            .noise_variance(1e-3)
            .standardize(true);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                let gp = params.fit(black_box(&x), black_box(&y)).expect("fits");
                black_box(gp.predict(&xs).expect("predicts"))
            })
        });
    }
    group.finish();
}

fn dpitc(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (x, y) = data(&mut rng, 100);
    let (xs, _) = data(&mut rng, 100);
    let mut local = c.benchmark_group("dpitc_local_summary_n100_d10");
    for s in [8, 16, 32, 64] {
        let (support, _) = data(&mut rng, s);
        let model = Dpitc::new(kernel(), 1e-3, 0.0, support).expect("valid");
        local.bench_with_input(BenchmarkId::from_parameter(s), &s, |b, _| {
            b.iter(|| {
                black_box(
                    model
                        .local_summary(black_box(&x), black_box(&y))
                        .expect("summary"),
                )
            })
        });
    }
    local.finish();
    let mut global = c.benchmark_group("dpitc_global_predict_100pts_d10");
    for s in [8, 16, 32, 64] {
        let (support, _) = data(&mut rng, s);
        let model = Dpitc::new(kernel(), 1e-3, 0.0, support).expect("valid");
        let summed: LocalSummary = model.local_summary(&x, &y).expect("summary");
        global.bench_with_input(BenchmarkId::from_parameter(s), &s, |b, _| {
            b.iter(|| {
                let g = model.global_summary(black_box(&summed)).expect("global");
                black_box(model.predict(&g, &xs).expect("predicts"))
            })
        });
    }
    global.finish();
}

/// criterion's generated group function carries no docs of its own.
#[allow(missing_docs)]
mod harness {
    use super::*;
    criterion_group!(benches, exact_fit_predict, dpitc);
}
criterion_main!(harness::benches);
