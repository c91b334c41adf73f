//! HCT (Azar, Lazaric & Brunskill 2014, "Online stochastic optimization under
//! correlated bandit feedback", Alg. 2 "HCT-iid"), the centralised baseline of
//! paper 003 §4: it runs on the *global* objective with unlimited
//! communication. Every round all clients pull the point HCT chooses and send
//! their reward through the channel, so HCT sees the average of the local
//! rewards, one noisy evaluation of the global objective (paper 003 Remark
//! 4.1). Its cumulative regret per round is comparable with the federated
//! methods' average cumulative regret per client.
//!
//! The tree lives on the same [`Partition`] as Fed-PNE's (node centres as the
//! evaluated points). With `t⁺ = 2^{⌈log₂ t⌉}` and
//! `δ̃(t) = min{1, c₁δ/t}` (Azar et al., HCT-iid):
//!
//! - `U_{h,i}(t) = μ̂_{h,i}(t) + ν₁ρ^h + √(c² log(1/δ̃(t⁺)) / T_{h,i}(t))`,
//!   `+∞` for a node never pulled;
//! - `B_{h,i}(t) = min{U_{h,i}(t), max_j B_{h+1,j}(t)}` (`U` at a leaf);
//! - `τ_h(t) = ⌈c² log(1/δ̃(t⁺)) ρ^{−2h} / ν₁²⌉`: OptTraverse descends from
//!   the root to the child of larger `B` while the node is internal and
//!   pulled at least `τ_h(t)` times; a leaf pulled `τ_h(t)` times is expanded;
//! - at every `t = t⁺` (a power of two) all `U` and then all `B` (deepest
//!   first) are refreshed; in other rounds only the pulled node's `U` and the
//!   `B` along the traversed path are.
//!
//! Azar et al. write `t⁺ = 2^{⌊log t⌋+1}` and refresh "if `t = t⁺`", which
//! never holds with that floor; we take the smallest power of two `≥ t`, as
//! the refresh is meant to happen at the powers of two (so does the PyXAB
//! implementation of Li et al. 2021, whose settings paper 003 App. E.1.2
//! follows).

use super::params::ValidFedPneParams;
use super::partition::{Node, Partition};
use super::pne::Session;
use crate::{AlgorithmError, RunResult};
use std::collections::HashMap;

/// The statistics of one node of the tree.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stats {
    pulls: u64,
    mean: f64,
    u: f64,
    b: f64,
    expanded: bool,
}

impl Stats {
    const FRESH: Stats = Stats {
        pulls: 0,
        mean: 0.0,
        u: f64::INFINITY,
        b: f64::INFINITY,
        expanded: false,
    };
}

/// `t⁺ = 2^{⌈log₂ t⌉}`, the smallest power of two `≥ t` (`t ≥ 1`).
pub fn t_plus(t: u64) -> u64 {
    t.max(1).next_power_of_two()
}

/// HCT's tree: the nodes expanded so far and their statistics.
#[derive(Debug, Clone)]
pub struct HctTree {
    partition: Partition,
    nodes: HashMap<Node, Stats>,
    nu1: f64,
    rho: f64,
    c: f64,
    c1_delta: f64,
}

impl HctTree {
    /// The tree `{(0,1)} ∪ children(0,1)` of Azar et al.'s initialisation,
    /// with the settings of `params` (`ν₁`, `ρ`, `c`, `c₁`, `δ`).
    pub fn new(partition: Partition, params: &ValidFedPneParams) -> Self {
        let mut tree = Self {
            partition,
            nodes: HashMap::from([(Node::ROOT, Stats::FRESH)]),
            nu1: params.nu1,
            rho: params.rho,
            c: params.c,
            c1_delta: params.c1 * params.confidence_delta(),
        };
        tree.expand(Node::ROOT);
        tree
    }

    /// `log(1/δ̃(t⁺))` with `δ̃(t) = min{1, c₁δ/t}`.
    pub fn log_term(&self, t: u64) -> f64 {
        let delta = (self.c1_delta / t_plus(t) as f64).min(1.0);
        (1.0 / delta).ln()
    }

    /// `τ_h(t) = ⌈c² log(1/δ̃(t⁺)) ρ^{−2h} / ν₁²⌉` (Azar et al. 2014, Alg. 2).
    pub fn tau(&self, depth: u32, t: u64) -> u64 {
        let v = self.c * self.c * self.log_term(t) * self.rho.powi(-2 * depth as i32)
            / (self.nu1 * self.nu1);
        v.ceil().clamp(0.0, u64::MAX as f64 / 4.0) as u64
    }

    /// The nodes of the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty (never: it holds at least the root).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// How often `node` was pulled (0 when it is not in the tree).
    pub fn pulls(&self, node: Node) -> u64 {
        self.nodes.get(&node).map_or(0, |s| s.pulls)
    }

    /// The `B`-value of `node` (`None` when it is not in the tree).
    pub fn b_value(&self, node: Node) -> Option<f64> {
        self.nodes.get(&node).map(|s| s.b)
    }

    fn stats(&self, node: Node) -> Stats {
        self.nodes.get(&node).copied().unwrap_or(Stats::FRESH)
    }

    fn expand(&mut self, node: Node) {
        if node.depth >= self.partition.max_depth() {
            return;
        }
        for child in self.partition.children(node) {
            self.nodes.entry(child).or_insert(Stats::FRESH);
        }
        if let Some(s) = self.nodes.get_mut(&node) {
            s.expanded = true;
        }
    }

    /// `U_{h,i}(t)` from the node's statistics.
    fn u_value(&self, node: Node, s: &Stats, t: u64) -> f64 {
        if s.pulls == 0 {
            return f64::INFINITY;
        }
        s.mean
            + self.nu1 * self.rho.powi(node.depth as i32)
            + (self.c * self.c * self.log_term(t) / s.pulls as f64).sqrt()
    }

    /// `B_{h,i} = min{U_{h,i}, max_j B_{h+1,j}}`, or `U_{h,i}` at a leaf.
    fn b_value_of(&self, node: Node, s: &Stats) -> f64 {
        if !s.expanded {
            return s.u;
        }
        let best_child = self
            .partition
            .children(node)
            .into_iter()
            .map(|c| self.stats(c).b)
            .fold(f64::NEG_INFINITY, f64::max);
        s.u.min(best_child)
    }

    /// The refresh at `t = t⁺`: every `U`, then every `B` from the deepest nodes up.
    pub fn refresh(&mut self, t: u64) {
        let mut order: Vec<Node> = self.nodes.keys().copied().collect();
        order.sort_by(|a, b| b.cmp(a));
        for &n in &order {
            let s = self.stats(n);
            let u = self.u_value(n, &s, t);
            if let Some(e) = self.nodes.get_mut(&n) {
                e.u = u;
            }
        }
        for &n in &order {
            let s = self.stats(n);
            let b = self.b_value_of(n, &s);
            if let Some(e) = self.nodes.get_mut(&n) {
                e.b = b;
            }
        }
    }

    /// OptTraverse: from the root, the child of larger `B` (the lower index on
    /// ties) while the node is internal and, below the root, pulled at least
    /// `τ_h(t)` times. Returns the node to pull and the path to it.
    pub fn traverse(&self, t: u64) -> (Node, Vec<Node>) {
        let mut node = Node::ROOT;
        let mut path = vec![node];
        loop {
            let s = self.stats(node);
            let passes = node == Node::ROOT || s.pulls >= self.tau(node.depth, t);
            if !s.expanded || !passes {
                return (node, path);
            }
            let mut best: Option<(Node, f64)> = None;
            for c in self.partition.children(node) {
                let b = self.stats(c).b;
                if best.is_none_or(|(_, bb)| b > bb) {
                    best = Some((c, b));
                }
            }
            match best {
                Some((c, _)) => {
                    node = c;
                    path.push(c);
                }
                None => return (node, path),
            }
        }
    }

    /// After pulling `path`'s last node with `reward` at round `t`: its mean and
    /// `U`, the `B` along the path (UpdateB), and its expansion once it is a
    /// leaf pulled `τ_h(t)` times.
    pub fn update(&mut self, path: &[Node], reward: f64, t: u64) {
        let Some(&node) = path.last() else {
            return;
        };
        let mut s = self.stats(node);
        s.pulls += 1;
        s.mean += (reward - s.mean) / s.pulls as f64;
        s.u = self.u_value(node, &s, t);
        self.nodes.insert(node, s);
        for &n in path.iter().rev() {
            let s = self.stats(n);
            let b = self.b_value_of(n, &s);
            if let Some(e) = self.nodes.get_mut(&n) {
                e.b = b;
            }
        }
        if !s.expanded && s.pulls >= self.tau(node.depth, t) {
            self.expand(node);
        }
    }
}

/// Runs HCT on the global objective of `session`'s task, in `dim`
/// dimensions: each round the clients pull the chosen node's centre and the
/// server learns the average reward.
pub(crate) fn run(
    mut session: Session<'_>,
    params: &ValidFedPneParams,
    dim: usize,
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let partition = Partition::new(params.arity, dim);
    let mut tree = HctTree::new(partition, params);
    let mut t = 1u64;
    while session.left() > 0 {
        if t == t_plus(t) {
            tree.refresh(t);
        }
        let (node, path) = tree.traverse(t);
        let Some(reward) = session.phase(&[partition.centre(node)], 1)? else {
            break;
        };
        tree.update(&path, reward[0], t);
        t += 1;
    }
    Ok(session.finish("hct", seed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fed_pne::{BanditMethod, FedPneParams};
    use fedhe_crypto::{MemberId, PlainSum};

    fn params(rho: f64) -> ValidFedPneParams {
        let mut p = FedPneParams::paper_defaults();
        p.rho = rho;
        p.c1 = 1.0;
        p.confidence_delta = Some(0.01);
        p.validate(BanditMethod::Hct).unwrap()
    }

    #[test]
    fn threshold_follows_the_doubling_trick() {
        assert_eq!([1, 2, 3, 4, 5, 8, 9].map(t_plus), [1, 2, 4, 4, 8, 8, 16]);
        let tree = HctTree::new(Partition::new(2, 1), &params(0.75));
        // δ̃(t⁺) = 0.01/8 for t = 5: log(1/δ̃) = ln 800.
        assert!((tree.log_term(5) - 800f64.ln()).abs() < 1e-12);
        // τ_3(5) = ⌈0.01 · ln 800 · 0.75^{−6}⌉ = ⌈0.376⌉ = 1;
        // τ_12(5) = ⌈0.01 · ln 800 · 0.75^{−24}⌉ = ⌈66.6⌉ = 67.
        assert_eq!(tree.tau(3, 5), 1);
        assert_eq!(tree.tau(12, 5), 67);
        assert_eq!(tree.tau(12, 5), tree.tau(12, 8));
        assert!(tree.tau(12, 9) > tree.tau(12, 8));
    }

    #[test]
    fn b_values_are_the_min_of_u_and_the_best_child() {
        let p = params(0.5);
        let mut tree = HctTree::new(Partition::new(2, 1), &p);
        assert_eq!(tree.len(), 3);
        // The root is passed; unpulled children have B = +∞; the left one wins ties.
        let (n, path) = tree.traverse(1);
        assert_eq!(n, Node { depth: 1, index: 1 });
        assert_eq!(path, vec![Node::ROOT, n]);
        tree.update(&path, 0.2, 1);
        // (1,1) was pulled once: τ_1(1) = ⌈0.01 · ln 100 · 4⌉ = 1, so it is expanded.
        assert_eq!(tree.len(), 5);
        let u = 0.2 + 0.5 + (0.01 * 100f64.ln()).sqrt();
        // Its children are unpulled (B = ∞): B = min(U, ∞) = U.
        assert!((tree.b_value(n).unwrap() - u).abs() < 1e-12);
        // The root's B is min(U_root = ∞, max(U, ∞)) = ∞: (1,2) still unpulled.
        assert_eq!(tree.b_value(Node::ROOT), Some(f64::INFINITY));
        let (m, path) = tree.traverse(2);
        assert_eq!(m, Node { depth: 1, index: 2 });
        tree.update(&path, 0.9, 2);
        let u2 = 0.9 + 0.5 + (0.01 * 200f64.ln()).sqrt();
        assert!((tree.b_value(m).unwrap() - u2).abs() < 1e-12);
        // Now the better child's B bounds the root's.
        assert!((tree.b_value(Node::ROOT).unwrap() - u2).abs() < 1e-12);
        // A refresh recomputes every U with the new t⁺ and keeps the order.
        tree.refresh(4);
        let u2 = 0.9 + 0.5 + (0.01 * 400f64.ln()).sqrt();
        assert!((tree.b_value(m).unwrap() - u2).abs() < 1e-12);
        assert_eq!(tree.traverse(4).0.depth, 2);
        assert_eq!(tree.pulls(m), 1);
    }

    #[test]
    fn hct_concentrates_its_pulls_near_the_optimum_of_garland() {
        // Garland's maximum on [0, 1] is about 0.997 at x ≈ 0.523: after a few
        // thousand rounds the per-round regret must be small.
        let task = fedhe_tasks::by_name("garland", 1, 0).unwrap();
        let mut p = FedPneParams::paper_defaults();
        p.members = 4;
        p.rounds = 4000;
        p.rho = 0.75;
        p.noise_std = 0.1;
        let p = p.validate(BanditMethod::Hct).unwrap();
        let members: Vec<MemberId> = (0..4)
            .map(|i| MemberId::new(format!("m{i}")).unwrap())
            .collect();
        let r = crate::fed_pne::run(&task, &p, &mut PlainSum, &members, 7).unwrap();
        let c = r.cumulative_regret.unwrap();
        assert_eq!(c.len(), 4000);
        let first = c[999] / 1000.0;
        let last = (c[3999] - c[2999]) / 1000.0;
        assert!(last < 0.06, "last 1000 rounds: {last}");
        assert!(last < first / 2.0, "first {first}, last {last}");
        assert_eq!(r.aggregations, 4000);
        assert_eq!(r.method, "hct");
    }
}
