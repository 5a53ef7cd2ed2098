//! Placeholder until the sim benchmark lands.
fn main() {}
