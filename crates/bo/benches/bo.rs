//! Benchmarks (placeholder).
fn main() {}
