//! Engine benchmarks (placeholder).
fn main() {}
