//! The `covid-seir` task on a grid of doses: each of the first `M` regions'
//! best dose and the global objective's (their mean's) minimum, for the
//! results summary of paper 003's vaccine-dosage experiment (and the first
//! ten regions' supply, capacity, R0 and best dose).
//!
//! `cargo run --example covid_grid -p fedhe-tasks -- 5 10 50`

use fedhe_tasks::seir::regions;

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number of regions"))
        .collect();
    let regions = regions();
    let grid: Vec<f64> = (0..=1000).map(|i| f64::from(i) / 1000.0).collect();
    let argmin = |values: &[f64]| {
        values
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, v)| (grid[i], *v))
            .expect("a non-empty grid")
    };
    let curves: Vec<Vec<f64>> = regions
        .iter()
        .take(counts.iter().copied().max().unwrap_or(0))
        .map(|r| grid.iter().map(|&x| r.infected_percentage(x)).collect())
        .collect();
    println!("region | D/N per day | K/N per day | R0 | best dose");
    for (m, (r, c)) in regions.iter().zip(&curves).take(10).enumerate() {
        println!(
            "{m} | {:.4} | {:.4} | {:.2} | {:.3}",
            r.doses_per_day / r.population,
            r.capacity_per_day / r.population,
            r.beta / r.gamma,
            argmin(c).0
        );
    }
    for &m in &counts {
        let mean: Vec<f64> = (0..grid.len())
            .map(|i| curves[..m].iter().map(|c| c[i]).sum::<f64>() / m as f64)
            .collect();
        let (x, v) = argmin(&mean);
        let local: Vec<f64> = curves[..m].iter().map(|c| argmin(c).0).collect();
        let lo = local.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = local.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        println!(
            "M = {m}: global minimum {v:.4} % at x = {x:.3}; at x = 1 {:.4} %; local best doses {lo:.3} … {hi:.3}",
            mean[grid.len() - 1]
        );
    }
}
