use fedhe_attacks::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
#[ignore]
fn explore() {
    for (dim, members, ppm) in [(2usize, 3usize, 3usize), (10, 3, 4)] {
        let fed = Federation::synthetic(dim, members, ppm, 16, 7).unwrap();
        let view = fed.view(0, fed.sum.clone());
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let opts = AttackOptions {
            starts: 300,
            distinct: 1e-3,
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let rec = subspace_attack(&view, &opts, &mut rng).unwrap();
        let (tx, ty) = fed.others_points(0);
        eprintln!(
            "dim {dim} time {:?} found {}",
            t.elapsed(),
            rec.inputs.len()
        );
        for x in &rec.inputs {
            let d = tx.iter().map(|t| linf(t, x)).fold(f64::INFINITY, f64::min);
            eprintln!("  nearest true {d:.2e}");
        }
        let r = Recovery::evaluate(&tx, &ty, &rec.inputs, rec.values.as_deref(), 200, &mut rng);
        eprintln!("{r:?}");
    }
}
