//! Support-set selection (paper 004, Algorithm 1) and its ablation baseline.
//!
//! - [`local_kmeans`]: a client's k-means with k-means++ initialisation, stopped
//!   when no centre moves more than the tolerance ε (Alg. 1, lines 1-14).
//! - [`global_clustering`]: the server pools the clients' centres, initialises by
//!   greedy farthest-first selection starting from one client's centres, and runs
//!   k-means over the pool (lines 15-27).
//! - [`uniform_random_support`]: uniform points in the domain (ablation baseline).
//!
//! Points are the rows of a matrix.

use crate::error::invalid;
use crate::optim::Bounds;
use crate::BoError;
use nalgebra::DMatrix;
use rand::Rng;

/// The result of k-means.
#[derive(Debug, Clone, PartialEq)]
pub struct KMeans {
    /// Centres, one per row.
    pub centres: DMatrix<f64>,
    /// The centre index of every input point.
    pub assignments: Vec<usize>,
    /// Sum of squared distances of the points to their centres.
    pub inertia: f64,
    /// Lloyd iterations performed.
    pub iterations: usize,
}

fn sq_dist(a: &DMatrix<f64>, i: usize, b: &DMatrix<f64>, j: usize) -> f64 {
    (0..a.ncols())
        .map(|d| (a[(i, d)] - b[(j, d)]).powi(2))
        .sum()
}

fn nearest(points: &DMatrix<f64>, i: usize, centres: &DMatrix<f64>) -> (usize, f64) {
    (0..centres.nrows())
        .map(|j| (j, sq_dist(points, i, centres, j)))
        .fold(
            (0, f64::INFINITY),
            |best, c| if c.1 < best.1 { c } else { best },
        )
}

fn check_points(points: &DMatrix<f64>, k: usize) -> Result<(), BoError> {
    if k == 0 {
        return Err(invalid("k", "at least one cluster is needed"));
    }
    if points.nrows() < k {
        return Err(invalid(
            "k",
            format!("{k} clusters for {} points", points.nrows()),
        ));
    }
    if points.iter().any(|v| !v.is_finite()) {
        return Err(fedhe_gp::GpError::NonFinite { what: "points" }.into());
    }
    Ok(())
}

/// k-means++ seeding (Arthur & Vassilvitskii 2007): the first centre uniformly,
/// each next one with probability proportional to the squared distance to the
/// nearest centre chosen so far.
pub fn kmeans_plus_plus<R: Rng + ?Sized>(
    points: &DMatrix<f64>,
    k: usize,
    rng: &mut R,
) -> Result<DMatrix<f64>, BoError> {
    check_points(points, k)?;
    let n = points.nrows();
    let mut chosen = vec![rng.gen_range(0..n)];
    let mut d2: Vec<f64> = (0..n)
        .map(|i| sq_dist(points, i, points, chosen[0]))
        .collect();
    while chosen.len() < k {
        let total: f64 = d2.iter().sum();
        let next = if total > 0.0 {
            let mut r = rng.gen::<f64>() * total;
            let mut pick = n - 1;
            for (i, w) in d2.iter().enumerate() {
                if r < *w {
                    pick = i;
                    break;
                }
                r -= w;
            }
            pick
        } else {
            // All remaining points coincide with chosen centres.
            (0..n).find(|i| !chosen.contains(i)).unwrap_or(0)
        };
        chosen.push(next);
        for (i, d) in d2.iter_mut().enumerate() {
            *d = d.min(sq_dist(points, i, points, next));
        }
    }
    Ok(fedhe_gp::linalg::select_rows(points, &chosen))
}

/// Lloyd's k-means from the given initial centres, stopping when the largest
/// centre move is below `tol` or after `max_iters` iterations. An empty cluster
/// keeps its previous centre.
pub fn kmeans_from(
    points: &DMatrix<f64>,
    initial: DMatrix<f64>,
    tol: f64,
    max_iters: usize,
) -> Result<KMeans, BoError> {
    check_points(points, initial.nrows())?;
    if initial.ncols() != points.ncols() {
        return Err(fedhe_gp::GpError::Dimension {
            what: "initial centres",
            expected: points.ncols(),
            got: initial.ncols(),
        }
        .into());
    }
    let (n, d, k) = (points.nrows(), points.ncols(), initial.nrows());
    let mut centres = initial;
    let mut assignments = vec![0; n];
    let mut iterations = 0;
    for _ in 0..max_iters.max(1) {
        iterations += 1;
        for (i, a) in assignments.iter_mut().enumerate() {
            *a = nearest(points, i, &centres).0;
        }
        let mut sums = DMatrix::<f64>::zeros(k, d);
        let mut counts = vec![0usize; k];
        for (i, &a) in assignments.iter().enumerate() {
            counts[a] += 1;
            for j in 0..d {
                sums[(a, j)] += points[(i, j)];
            }
        }
        let mut shift: f64 = 0.0;
        for r in 0..k {
            if counts[r] == 0 {
                continue;
            }
            let mut moved: f64 = 0.0;
            for j in 0..d {
                let c = sums[(r, j)] / counts[r] as f64;
                moved += (c - centres[(r, j)]).powi(2);
                centres[(r, j)] = c;
            }
            shift = shift.max(moved.sqrt());
        }
        if shift < tol {
            break;
        }
    }
    for (i, a) in assignments.iter_mut().enumerate() {
        *a = nearest(points, i, &centres).0;
    }
    let inertia = (0..n)
        .map(|i| sq_dist(points, i, &centres, assignments[i]))
        .sum();
    Ok(KMeans {
        centres,
        assignments,
        inertia,
        iterations,
    })
}

/// A client's local clustering: k-means++ then Lloyd to tolerance `tol`
/// (paper 004, Alg. 1, LOCALCLUSTERING).
pub fn local_kmeans<R: Rng + ?Sized>(
    points: &DMatrix<f64>,
    k: usize,
    tol: f64,
    max_iters: usize,
    rng: &mut R,
) -> Result<KMeans, BoError> {
    let init = kmeans_plus_plus(points, k, rng)?;
    kmeans_from(points, init, tol, max_iters)
}

/// Greedy farthest-first selection: starting from the rows `seed_rows` of `pool`,
/// repeatedly adds the pool point farthest from the selected set until `k` rows
/// are selected (Alg. 1, lines 17-21). Returns the selected row indices.
pub fn farthest_first(
    pool: &DMatrix<f64>,
    seed_rows: &[usize],
    k: usize,
) -> Result<Vec<usize>, BoError> {
    check_points(pool, k)?;
    if seed_rows.is_empty() || seed_rows.iter().any(|&r| r >= pool.nrows()) {
        return Err(invalid(
            "seed rows",
            "need at least one valid row of the pool",
        ));
    }
    let mut selected: Vec<usize> = Vec::with_capacity(k);
    for &r in seed_rows.iter() {
        if selected.len() < k && !selected.contains(&r) {
            selected.push(r);
        }
    }
    let mut min_d2: Vec<f64> = (0..pool.nrows())
        .map(|i| {
            selected
                .iter()
                .map(|&s| sq_dist(pool, i, pool, s))
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    while selected.len() < k {
        let (far, _) = min_d2
            .iter()
            .enumerate()
            .filter(|(i, _)| !selected.contains(i))
            .fold((usize::MAX, f64::NEG_INFINITY), |b, (i, d)| {
                if *d > b.1 {
                    (i, *d)
                } else {
                    b
                }
            });
        selected.push(far);
        for (i, d) in min_d2.iter_mut().enumerate() {
            *d = d.min(sq_dist(pool, i, pool, far));
        }
    }
    Ok(selected)
}

/// The server's global clustering (Alg. 1, GLOBALCLUSTERING): pools the clients'
/// centres, initialises `k` centres by farthest-first from the centres of client
/// `seed_client`, and runs k-means over the pool.
pub fn global_clustering(
    client_centres: &[DMatrix<f64>],
    seed_client: usize,
    k: usize,
    tol: f64,
    max_iters: usize,
) -> Result<KMeans, BoError> {
    let first = client_centres
        .get(seed_client)
        .ok_or_else(|| invalid("seed client", format!("{seed_client} is not a client")))?;
    let d = first.ncols();
    let total: usize = client_centres.iter().map(|c| c.nrows()).sum();
    let mut pool = DMatrix::zeros(total, d);
    let mut row = 0;
    let mut seed_rows = Vec::new();
    for (i, c) in client_centres.iter().enumerate() {
        if c.ncols() != d {
            return Err(fedhe_gp::GpError::Dimension {
                what: "client centres",
                expected: d,
                got: c.ncols(),
            }
            .into());
        }
        for r in 0..c.nrows() {
            pool.row_mut(row).copy_from(&c.row(r));
            if i == seed_client {
                seed_rows.push(row);
            }
            row += 1;
        }
    }
    let init_rows = farthest_first(&pool, &seed_rows, k)?;
    let init = fedhe_gp::linalg::select_rows(&pool, &init_rows);
    kmeans_from(&pool, init, tol, max_iters)
}

/// `k` uniform random points in `bounds` (the ablation baseline for the support set).
pub fn uniform_random_support<R: Rng + ?Sized>(
    bounds: &Bounds,
    k: usize,
    rng: &mut R,
) -> DMatrix<f64> {
    let d = bounds.dim();
    let mut s = DMatrix::zeros(k, d);
    for i in 0..k {
        let p = bounds.sample(rng);
        for j in 0..d {
            s[(i, j)] = p[j];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Three tight blobs around known centres.
    fn blobs(rng: &mut ChaCha8Rng) -> (DMatrix<f64>, Vec<[f64; 2]>) {
        let centres = vec![[0.1, 0.1], [0.9, 0.2], [0.5, 0.9]];
        let per = 30;
        let mut x = DMatrix::zeros(per * 3, 2);
        for (c, centre) in centres.iter().enumerate() {
            for i in 0..per {
                for d in 0..2 {
                    x[(c * per + i, d)] = centre[d] + rng.gen_range(-0.02..0.02);
                }
            }
        }
        (x, centres)
    }

    fn matches_centres(found: &DMatrix<f64>, want: &[[f64; 2]], tol: f64) -> bool {
        want.iter().all(|w| {
            (0..found.nrows()).any(|r| {
                ((found[(r, 0)] - w[0]).powi(2) + (found[(r, 1)] - w[1]).powi(2)).sqrt() < tol
            })
        })
    }

    #[test]
    fn local_kmeans_recovers_separated_blobs() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (x, centres) = blobs(&mut rng);
        let km = local_kmeans(&x, 3, 1e-9, 100, &mut rng).unwrap();
        assert!(matches_centres(&km.centres, &centres, 0.02));
        // Every point is in the same cluster as the rest of its blob.
        for b in 0..3 {
            let a = km.assignments[b * 30];
            assert!(km.assignments[b * 30..(b + 1) * 30].iter().all(|&x| x == a));
        }
    }

    #[test]
    fn lloyd_reaches_the_mean_of_two_points() {
        let x = DMatrix::from_row_slice(4, 1, &[0.0, 1.0, 10.0, 12.0]);
        let init = DMatrix::from_row_slice(2, 1, &[0.0, 12.0]);
        let km = kmeans_from(&x, init, 0.0, 10).unwrap();
        assert_eq!(km.centres[(0, 0)], 0.5);
        assert_eq!(km.centres[(1, 0)], 11.0);
        assert!((km.inertia - (0.25 + 0.25 + 1.0 + 1.0)).abs() < 1e-15);
    }

    #[test]
    fn farthest_first_picks_the_extremes() {
        let pool = DMatrix::from_row_slice(5, 1, &[0.0, 0.1, 0.5, 0.9, 1.0]);
        // From 0.0: farthest is 1.0, then 0.5 (distance 0.5 to both).
        assert_eq!(farthest_first(&pool, &[0], 3).unwrap(), vec![0, 4, 2]);
    }

    #[test]
    fn global_clustering_merges_client_centres() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let (x, centres) = blobs(&mut rng);
        // Two clients see overlapping halves of the data.
        let a = local_kmeans(&x.rows(0, 60).into_owned(), 2, 1e-9, 100, &mut rng).unwrap();
        let b = local_kmeans(&x.rows(30, 60).into_owned(), 2, 1e-9, 100, &mut rng).unwrap();
        let g = global_clustering(&[a.centres, b.centres], 0, 3, 1e-12, 100).unwrap();
        assert_eq!(g.centres.nrows(), 3);
        assert!(matches_centres(&g.centres, &centres, 0.02));
    }

    #[test]
    fn uniform_support_lies_in_the_box() {
        let b = Bounds::new(vec![-1.0, 2.0], vec![1.0, 3.0]).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let s = uniform_random_support(&b, 50, &mut rng);
        assert_eq!(s.shape(), (50, 2));
        for r in 0..50 {
            assert!(b.contains(&[s[(r, 0)], s[(r, 1)]]));
        }
    }

    #[test]
    fn bad_inputs_are_rejected() {
        let x = DMatrix::from_row_slice(2, 1, &[0.0, 1.0]);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(local_kmeans(&x, 3, 1e-6, 10, &mut rng).is_err());
        assert!(local_kmeans(&x, 0, 1e-6, 10, &mut rng).is_err());
        assert!(farthest_first(&x, &[5], 1).is_err());
        assert!(global_clustering(&[x], 1, 1, 1e-6, 10).is_err());
    }
}
