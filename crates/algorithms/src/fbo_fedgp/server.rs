//! The server role of FBO-FedGP: it runs the secure sums (Alg. 2, lines 20-21),
//! keeps the round numbering and the traffic accounting, and turns summed
//! k-means statistics into public centres.

pub use crate::channel::Aggregator;
use crate::AlgorithmError;
use nalgebra::DMatrix;

/// The server role of FBO-FedGP: the generic [`Aggregator`] plus the
/// k-means update of the support-set selection.
pub type Server<'c> = Aggregator<'c>;

/// One Lloyd step of secure federated k-means from the summed per-cluster
/// coordinate sums (`k·d`, row by row) and counts (`k`), as produced by
/// [`super::Client::kmeans_contribution`]: the new centres (an empty cluster
/// keeps its centre) and the largest centre move.
pub fn kmeans_update(
    centres: &DMatrix<f64>,
    summed: &[f64],
) -> Result<(DMatrix<f64>, f64), AlgorithmError> {
    let (k, d) = (centres.nrows(), centres.ncols());
    if summed.len() != k * (d + 1) {
        return Err(crate::error::config(
            "k-means sums",
            format!("expected {} values, got {}", k * (d + 1), summed.len()),
        ));
    }
    let mut next = centres.clone();
    let mut shift: f64 = 0.0;
    for r in 0..k {
        let count = summed[k * d + r];
        // Counts arrive as fixed-point sums of 1/n_max; far below one point is rounding.
        if count <= 1e-6 {
            continue;
        }
        let mut moved = 0.0;
        for j in 0..d {
            let c = summed[r * d + j] / count;
            moved += (c - centres[(r, j)]).powi(2);
            next[(r, j)] = c;
        }
        shift = shift.max(f64::sqrt(moved));
    }
    Ok((next, shift))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbo_fedgp::Client;
    use fedhe_crypto::MemberId;

    #[test]
    fn secure_kmeans_step_equals_a_pooled_lloyd_step() {
        let task = fedhe_tasks::by_name("cec2005-f1", 2, 0).unwrap();
        let mut a = Client::new(MemberId::new("a").unwrap(), 0, 1);
        let mut b = Client::new(MemberId::new("b").unwrap(), 1, 2);
        for (c, pts) in [
            (&mut a, vec![[0.1, 0.1], [0.2, 0.1]]),
            (&mut b, vec![[0.9, 0.8], [0.15, 0.2]]),
        ] {
            for p in pts {
                c.evaluate(&task, p.to_vec()).unwrap();
            }
        }
        let centres = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 1.0, 1.0, 0.5, 0.9]);
        let mut sum = a.kmeans_contribution(&centres, 10.0);
        for (s, v) in sum.iter_mut().zip(b.kmeans_contribution(&centres, 10.0)) {
            *s += v;
        }
        let (next, shift) = kmeans_update(&centres, &sum).unwrap();
        // Cluster 0 holds the three points near the origin; cluster 1 the far one;
        // cluster 2 is empty and keeps its centre.
        assert!((next[(0, 0)] - 0.15).abs() < 1e-12 && (next[(0, 1)] - 0.4 / 3.0).abs() < 1e-12);
        assert!((next[(1, 0)] - 0.9).abs() < 1e-12 && (next[(1, 1)] - 0.8).abs() < 1e-12);
        assert_eq!((next[(2, 0)], next[(2, 1)]), (0.5, 0.9));
        let expected_shift = f64::hypot(0.15, 0.4 / 3.0).max(f64::hypot(0.1, 0.2));
        assert!((shift - expected_shift).abs() < 1e-12);
        assert!(kmeans_update(&centres, &sum[1..]).is_err());
    }

    #[test]
    fn a_contribution_beyond_the_bound_is_refused_before_sending() {
        let mut channel = fedhe_crypto::PlainSum;
        let mut server = Server::new(&mut channel, 10.0);
        let m = MemberId::new("a").unwrap();
        let err = server
            .aggregate("statistics", vec![(m.clone(), vec![1.0, -11.0])])
            .unwrap_err();
        assert!(err.to_string().contains("statistics"), "{err}");
        assert_eq!(server.aggregations(), 0);
        assert_eq!(server.bytes_sent(&m), 0);
        let sum = server
            .aggregate("statistics", vec![(m.clone(), vec![1.0, 2.0])])
            .unwrap();
        assert_eq!(sum, vec![1.0, 2.0]);
        assert_eq!(server.bytes_sent(&m), 32, "two values, split in four");
    }
}
