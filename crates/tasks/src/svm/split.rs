//! How rows are dealt to institutions, and how each institution splits its own
//! rows into a training and a validation part.

use crate::TaskError;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Dirichlet, Distribution};
use std::collections::BTreeMap;

/// The rows of each client, by client.
pub type Partition = Vec<Vec<usize>>;

/// The natural split: one client per distinct value of `groups`, clients in the
/// order of `order` (values not listed there are refused); `merge` maps small
/// groups into another one first (e.g. `("ignore", "other")`).
pub fn by_group(
    groups: &[String],
    order: &[&str],
    merge: &[(&str, &str)],
) -> Result<Partition, TaskError> {
    let mut out = vec![Vec::new(); order.len()];
    for (row, g) in groups.iter().enumerate() {
        let g = merge
            .iter()
            .find(|(from, _)| from == g)
            .map_or(g.as_str(), |(_, to)| to);
        let client = order
            .iter()
            .position(|o| *o == g)
            .ok_or_else(|| TaskError::Config {
                field: "group",
                reason: format!("row {row} has group {g:?}, not one of {order:?}"),
            })?;
        out[client].push(row);
    }
    Ok(out)
}

/// Dirichlet quantity skew (Archetti et al. 2023, as Li et al.'s NIID-Bench):
/// proportions q ~ Dir(α·1_M), then the shuffled rows are cut into blocks of
/// sizes ⌊q_i·n⌋ (the rounding remainder goes to the last client). Draws again
/// until every client has at least `min_rows` rows. Labels are not looked at:
/// the clients differ in how much data they hold, not in its distribution.
pub fn dirichlet_quantity(
    rows: usize,
    clients: usize,
    alpha: f64,
    min_rows: usize,
    seed: u64,
) -> Result<Partition, TaskError> {
    if clients < 2 || alpha.is_nan() || alpha <= 0.0 || clients * min_rows > rows {
        return Err(TaskError::Config {
            field: "dirichlet",
            reason: format!(
                "{clients} clients of at least {min_rows} rows from {rows} rows with α = {alpha}"
            ),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dirichlet = Dirichlet::new(&vec![alpha; clients]).map_err(|e| TaskError::Config {
        field: "dirichlet",
        reason: e.to_string(),
    })?;
    let mut order: Vec<usize> = (0..rows).collect();
    order.shuffle(&mut rng);
    for _ in 0..10_000 {
        let q = dirichlet.sample(&mut rng);
        let mut sizes: Vec<usize> = q
            .iter()
            .map(|p| (p * rows as f64).floor() as usize)
            .collect();
        let assigned: usize = sizes.iter().sum();
        sizes[clients - 1] += rows - assigned;
        if sizes.iter().all(|&s| s >= min_rows) {
            let mut start = 0;
            return Ok(sizes
                .iter()
                .map(|&s| {
                    let block = order[start..start + s].to_vec();
                    start += s;
                    block
                })
                .collect());
        }
    }
    Err(TaskError::Config {
        field: "dirichlet",
        reason: format!("no draw gave every client {min_rows} rows"),
    })
}

/// Splits `rows` into (train, validation), stratified by `labels`: in each
/// class, a shuffled `train_fraction` (rounded) goes to training. Each part is
/// then capped at `max_train` / `max_validation` rows by a stratified
/// subsample, which keeps one SVM fit fast on the large SUPPORT2 groups.
pub fn train_validation(
    rows: &[usize],
    labels: &[bool],
    train_fraction: f64,
    max_train: usize,
    max_validation: usize,
    seed: u64,
) -> (Vec<usize>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut by_class: BTreeMap<bool, Vec<usize>> = BTreeMap::new();
    for &r in rows {
        by_class.entry(labels[r]).or_default().push(r);
    }
    let (mut train, mut validation) = (Vec::new(), Vec::new());
    for class in by_class.values_mut() {
        class.shuffle(&mut rng);
        let k = (class.len() as f64 * train_fraction).round() as usize;
        train.extend_from_slice(&class[..k]);
        validation.extend_from_slice(&class[k..]);
    }
    let train = stratified_cap(train, labels, max_train);
    let validation = stratified_cap(validation, labels, max_validation);
    (train, validation)
}

/// At most `cap` of `rows` (already in random order within each class),
/// keeping the class proportions: each class keeps ⌈cap·share⌉ rows.
fn stratified_cap(mut rows: Vec<usize>, labels: &[bool], cap: usize) -> Vec<usize> {
    if rows.len() > cap {
        let n = rows.len() as f64;
        let positives = rows.iter().filter(|&&r| labels[r]).count() as f64;
        let keep_pos = ((cap as f64) * positives / n).round() as usize;
        let keep_neg = cap - keep_pos;
        let (mut pos, mut neg) = (0, 0);
        rows.retain(|&r| {
            let (count, keep) = if labels[r] {
                (&mut pos, keep_pos)
            } else {
                (&mut neg, keep_neg)
            };
            *count += 1;
            *count <= keep
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirichlet_partition_covers_every_row_once_and_is_reproducible() {
        let p = dirichlet_quantity(532, 5, 10.0, 20, 7).unwrap();
        let mut all: Vec<usize> = p.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, (0..532).collect::<Vec<_>>());
        assert_eq!(p, dirichlet_quantity(532, 5, 10.0, 20, 7).unwrap());
        assert_ne!(p, dirichlet_quantity(532, 5, 10.0, 20, 8).unwrap());
        assert!(p.iter().all(|c| c.len() >= 20));
        // α = 10 skews the sizes, but mildly: not all equal, none tiny.
        let sizes: Vec<usize> = p.iter().map(Vec::len).collect();
        assert!(sizes.iter().any(|&s| s != sizes[0]), "{sizes:?}");
        assert!(dirichlet_quantity(10, 5, 10.0, 3, 1).is_err());
        assert!(dirichlet_quantity(100, 5, 0.0, 1, 1).is_err());
    }

    #[test]
    fn dirichlet_proportions_average_to_one_over_m() {
        // Over many seeds, the mean share of each client is close to 1/M and
        // its spread matches Dir(α·1): var = (1/M)(1 − 1/M)/(Mα + 1).
        let (m, alpha, n) = (5usize, 10.0, 10_000usize);
        let mut shares = vec![Vec::new(); m];
        for seed in 0..300 {
            for (i, c) in dirichlet_quantity(n, m, alpha, 1, seed)
                .unwrap()
                .iter()
                .enumerate()
            {
                shares[i].push(c.len() as f64 / n as f64);
            }
        }
        let expected_var = (0.2 * 0.8) / (m as f64 * alpha + 1.0);
        for s in &shares {
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (s.len() - 1) as f64;
            assert!((mean - 0.2).abs() < 0.01, "mean share {mean}");
            assert!(
                (var / expected_var - 1.0).abs() < 0.35,
                "var {var} vs {expected_var}"
            );
        }
    }

    #[test]
    fn groups_become_clients_in_order_with_merges() {
        let g: Vec<String> = ["a", "b", "x", "a"].iter().map(|s| s.to_string()).collect();
        let p = by_group(&g, &["a", "b"], &[("x", "b")]).unwrap();
        assert_eq!(p, vec![vec![0, 3], vec![1, 2]]);
        assert!(by_group(&g, &["a", "b"], &[]).is_err());
    }

    #[test]
    fn train_validation_is_stratified_disjoint_and_capped() {
        let labels: Vec<bool> = (0..100).map(|i| i % 4 == 0).collect();
        let rows: Vec<usize> = (0..100).collect();
        let (t, v) = train_validation(&rows, &labels, 0.7, 1000, 1000, 3);
        assert_eq!(t.len() + v.len(), 100);
        assert!(t.iter().all(|r| !v.contains(r)));
        assert_eq!(t.iter().filter(|&&r| labels[r]).count(), 18); // round(25·0.7)
        assert_eq!(v.iter().filter(|&&r| labels[r]).count(), 7);
        let (t2, v2) = train_validation(&rows, &labels, 0.7, 40, 20, 3);
        assert_eq!((t2.len(), v2.len()), (40, 20));
        assert_eq!(t2.iter().filter(|&&r| labels[r]).count(), 10);
        assert!(t2.iter().all(|r| t.contains(r)));
        assert_eq!((t, v), train_validation(&rows, &labels, 0.7, 1000, 1000, 3));
    }
}
