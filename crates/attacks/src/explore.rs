use super::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
#[ignore]
fn explore() {
    let seeds: Vec<u64> = std::env::var("SEEDS")
        .map(|s| s.split(',').map(|v| v.parse().unwrap()).collect())
        .unwrap_or(vec![7, 1, 2, 3, 4, 5]);
    let rels: Vec<f64> = std::env::var("RELS")
        .map(|s| s.split(',').map(|v| v.parse().unwrap()).collect())
        .unwrap_or(vec![0.0, 1e-12, 1e-9, 1e-6]);
    let starts: usize = std::env::var("STARTS")
        .map(|s| s.parse().unwrap())
        .unwrap_or(200);
    for &seed in &seeds {
        let fed = Federation::synthetic(10, 3, 4, 16, seed).unwrap();
        let (tx, ty) = fed.others_points(0);
        *TRUTH.lock().unwrap() = tx.clone();
        for &rel in &rels {
            let mut rng = ChaCha20Rng::seed_from_u64(11);
            let sum = if rel > 0.0 {
                noised(&fed.sum, rel * fed.median_abs_entry(), &mut rng)
            } else {
                fed.sum.clone()
            };
            let view = fed.view(0, sum);
            let t = std::time::Instant::now();
            let opts = AttackOptions {
                starts,
                ..AttackOptions::default()
            };
            let rec = subspace_attack(&view, &opts, &mut rng).unwrap();
            let mut r2 = ChaCha20Rng::seed_from_u64(5);
            let r = Recovery::evaluate(&tx, &ty, &rec.inputs, rec.values.as_deref(), 50, &mut r2);
            eprintln!(
                "\nseed {seed} rel {rel:e}: {:.2?} found {} in1 {:.2} both {:.2}",
                t.elapsed(),
                rec.inputs.len(),
                r.inputs_1pct,
                r.both_1pct
            );
        }
    }
}

#[test]
#[ignore]
fn explore_full() {
    for seed in [7u64, 2] {
        let fed = Federation::synthetic(10, 3, 4, 16, seed).unwrap();
        let (tx, _ty) = fed.others_points(0);
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let sum = noised(&fed.sum, 1e-12 * fed.median_abs_entry(), &mut rng);
        let view = fed.view(0, sum);
        let others = build_others(&view, RankRule::KnownCount, 8).unwrap();
        let ctx = Context {
            view: &view,
            srows: rows_of(&view.support),
            sigma_ss_inv: sigma_ss_inv(&view),
            known: DMatrix::zeros(16, 0),
            others,
        };
        let opts = AttackOptions::default();
        let accept = threshold(&ctx, &opts);
        let mut cands = Vec::new();
        while cands.len() < 100 {
            let x0: Vec<f64> = (0..10).map(|_| rng.gen::<f64>()).collect();
            let f = |x: &[f64]| ctx.point_residual(x);
            let (x, cost) = lm::minimise_with(&f, |x, _| ctx.point_residual_jac(x).1, &x0, 60);
            if cost < accept {
                cands.push(x);
            }
        }
        for size in [4usize, 5, 6, 8] {
            let t = std::time::Instant::now();
            let mut hist = vec![0; 9];
            let mut ok = 0;
            for _ in 0..40 {
                let mut pick: Vec<Vec<f64>> = Vec::new();
                while pick.len() < size {
                    let c = &cands[rng.gen_range(0..cands.len())];
                    if pick.iter().all(|p| linf(p, c) > 0.02) {
                        pick.push(c.clone());
                    }
                }
                let (pts, cost) = ctx.refine(&pick, 200);
                let good = pts
                    .iter()
                    .filter(|p| tx.iter().any(|t| linf(t, p) < 0.01))
                    .count();
                if cost < accept {
                    ok += 1;
                }
                hist[good] += 1;
            }
            eprintln!(
                "seed {seed} size {size}: {:.2?} accepted {ok}/40 good-hist {hist:?}",
                t.elapsed()
            );
        }
    }
}
