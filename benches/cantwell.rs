//! Placeholder until the cantwell benchmark lands.
fn main() {}
