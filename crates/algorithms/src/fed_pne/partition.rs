//! The k-ary hierarchical partition of the unit cube (paper 003 §2.2):
//! `P_{0,1} = 𝒳`, `P_{h,i} = ∪_{j=0}^{k−1} P_{h+1, ki−j}`. A node is split into
//! `k` equal slabs along its longest side (the lowest dimension on ties), and
//! is evaluated at its centre (Azar et al.'s pre-defined point).

use serde::{Deserialize, Serialize};

/// A node `(h, i)`: depth `h` and index `i ∈ [1, k^h]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Node {
    /// The depth `h`.
    pub depth: u32,
    /// The index `i` (from 1).
    pub index: u64,
}

impl Node {
    /// The root `(0, 1)`.
    pub const ROOT: Node = Node { depth: 0, index: 1 };
}

/// The partition with arity `k` of `[0, 1]^D`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    arity: u64,
    dim: usize,
}

impl Partition {
    /// The partition of `[0, 1]^dim` into `arity ≥ 2` children per node.
    pub fn new(arity: u64, dim: usize) -> Self {
        Self {
            arity: arity.max(2),
            dim,
        }
    }

    /// The arity `k`.
    pub fn arity(&self) -> u64 {
        self.arity
    }

    /// The deepest depth whose nodes may still be split: the indices of their
    /// children, up to `k^{h+1}`, fit in a `u64`, and at most 59 (cells of width `k^{−60}` are far below
    /// any objective's resolution): 59 for `k = 2`, 39 for `k = 3`.
    pub fn max_depth(&self) -> u32 {
        let mut h = 0u32;
        let mut width = self.arity; // k^{h+1}, the largest index of depth h + 1
        while let Some(next) = width.checked_mul(self.arity) {
            if h + 1 >= 60 {
                break;
            }
            width = next;
            h += 1;
        }
        h
    }

    /// The children `(h + 1, ki − j)`, `j = k−1, …, 0` (in increasing index).
    pub fn children(&self, node: Node) -> Vec<Node> {
        let k = self.arity;
        (0..k)
            .rev()
            .map(|j| Node {
                depth: node.depth + 1,
                index: k * node.index - j,
            })
            .collect()
    }

    /// The cell `[lo, hi]` of `node`, found by descending from the root.
    pub fn cell(&self, node: Node) -> (Vec<f64>, Vec<f64>) {
        let k = self.arity;
        // The position of each ancestor among its siblings, root first.
        let mut path = Vec::with_capacity(node.depth as usize);
        let mut i = node.index;
        for _ in 0..node.depth {
            let parent = i.div_ceil(k);
            path.push(i - k * (parent - 1) - 1);
            i = parent;
        }
        let (mut lo, mut hi) = (vec![0.0f64; self.dim], vec![1.0f64; self.dim]);
        for c in path.into_iter().rev() {
            let d = (0..self.dim)
                .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])).then(b.cmp(&a)))
                .unwrap_or(0);
            let w = (hi[d] - lo[d]) / k as f64;
            lo[d] += w * c as f64;
            hi[d] = lo[d] + w;
        }
        (lo, hi)
    }

    /// The centre of `node`'s cell, where it is evaluated.
    pub fn centre(&self, node: Node) -> Vec<f64> {
        let (lo, hi) = self.cell(node);
        lo.iter().zip(&hi).map(|(a, b)| 0.5 * (a + b)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_partition_of_the_interval_has_dyadic_cells() {
        let p = Partition::new(2, 1);
        assert_eq!(p.cell(Node::ROOT), (vec![0.0], vec![1.0]));
        let c = p.children(Node::ROOT);
        assert_eq!(
            c,
            vec![Node { depth: 1, index: 1 }, Node { depth: 1, index: 2 }]
        );
        assert_eq!(p.cell(c[1]), (vec![0.5], vec![1.0]));
        // (3, 6): path 2 → 3 → 6 = right, left, right: [0.625, 0.75].
        let n = Node { depth: 3, index: 6 };
        assert_eq!(p.cell(n), (vec![0.625], vec![0.75]));
        assert_eq!(p.centre(n), vec![0.6875]);
        // The nodes of one depth tile the interval.
        let total: f64 = (1..=8)
            .map(|i| {
                let (lo, hi) = p.cell(Node { depth: 3, index: i });
                hi[0] - lo[0]
            })
            .sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn splits_follow_the_longest_side_and_ternary_children() {
        let p = Partition::new(2, 2);
        // Depth 1 splits x, depth 2 splits y (now longest), depth 3 x again.
        assert_eq!(
            p.cell(Node { depth: 1, index: 2 }),
            (vec![0.5, 0.0], vec![1.0, 1.0])
        );
        assert_eq!(
            p.cell(Node { depth: 2, index: 3 }),
            (vec![0.5, 0.0], vec![1.0, 0.5])
        );
        let t = Partition::new(3, 1);
        assert_eq!(t.children(Node { depth: 1, index: 2 }).len(), 3);
        // The children of the deepest splittable node still have valid indices.
        for q in [p, t, Partition::new(7, 1)] {
            let h = q.max_depth();
            let last = q.arity().checked_pow(h + 1);
            assert!(last.is_some(), "k = {}, h = {h}", q.arity());
            assert!(h == 59 || q.arity().checked_pow(h + 2).is_none());
        }
        assert_eq!(p.max_depth(), 59);
        let (lo, hi) = t.cell(Node { depth: 2, index: 6 });
        assert!((lo[0] - 5.0 / 9.0).abs() < 1e-12 && (hi[0] - 6.0 / 9.0).abs() < 1e-12);
    }
}
