//! Channel benchmarks (placeholder until the encrypted-sum channel lands).
fn main() {}
