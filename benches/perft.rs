//! Placeholder until the perft benchmark lands.
fn main() {}
