//! Probe (issue 14, item 4): can egobox's EGO run the lone protocol
//! (4 random points + 50 steps, D = 10)? A shifted sphere of CEC-2005 F1's
//! form (Σ (x − 17)² − 450 on [−100, 100]¹⁰, searched in the unit cube);
//! prints, per infill setting and seed, the best value, the evaluations made
//! and the time. Not part of fedhe: `cargo run --release` in this folder.
use egobox_ego::{EgorBuilder, InfillStrategy};
use ndarray::{Array2, ArrayView2};
use std::time::Instant;

fn shifted_sphere(x: &ArrayView2<f64>) -> Array2<f64> {
    let mut y = Array2::zeros((x.nrows(), 1));
    for (i, row) in x.rows().into_iter().enumerate() {
        y[[i, 0]] = row
            .iter()
            .map(|u| {
                let v = -100.0 + 200.0 * u;
                (v - 17.0) * (v - 17.0)
            })
            .sum::<f64>()
            - 450.0;
    }
    y
}

fn main() {
    let unit_cube = Array2::from_shape_fn((10, 2), |(_, j)| j as f64);
    let settings = [
        ("LogEI, 4 initial + 50", InfillStrategy::LogEI, false, 4),
        ("EI, 4 initial + 50", InfillStrategy::EI, false, 4),
        ("WB2S, 4 initial + 50", InfillStrategy::WB2S, false, 4),
        (
            "LogEI + TREGO, 4 initial + 50",
            InfillStrategy::LogEI,
            true,
            4,
        ),
        ("LogEI, 11 initial + 43", InfillStrategy::LogEI, false, 11),
    ];
    for (name, infill, trego, initial) in settings {
        for seed in 0..3 {
            let started = Instant::now();
            let res = EgorBuilder::optimize(shifted_sphere)
                .configure(|c| {
                    c.n_doe(initial)
                        .max_iters(54 - initial)
                        .infill_strategy(infill.clone())
                        .trego(trego)
                        .seed(seed)
                })
                .min_within(&unit_cube)
                .expect("configured")
                .run()
                .expect("ran");
            println!(
                "{name}, seed {seed}: best {:.2} after {} evaluations, {:.1} s",
                res.y_opt[0],
                res.y_doe.nrows(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    given_design_runs(&unit_cube);
}

/// The protocol's 4 uniform random points given as egobox's
/// design (`doe`, which egobox evaluates), as `scripts/peers_standard.py
/// --method egobox` gives them to the Python binding (egobox 1.0.0), with
/// 50 LogEI steps.
fn given_design_runs(unit_cube: &Array2<f64>) {
    for seed in 0..3u64 {
        // 4 uniform random points from a small LCG (seeded per run).
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (seed + 1);
        let doe = Array2::from_shape_fn((4, 10), |_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        });
        let started = Instant::now();
        let res = EgorBuilder::optimize(shifted_sphere)
            .configure(|c| {
                c.doe(&doe)
                    .max_iters(50)
                    .infill_strategy(InfillStrategy::LogEI)
                    .seed(seed)
            })
            .min_within(unit_cube)
            .expect("configured")
            .run();
        match res {
            Ok(res) => println!(
                "LogEI, given 4-point doe, seed {seed}: best {:.2} after {} evaluations, {:.1} s",
                res.y_opt[0],
                res.y_doe.nrows(),
                started.elapsed().as_secs_f64()
            ),
            Err(e) => println!("seed {seed}: error {e}"),
        }
    }
}
