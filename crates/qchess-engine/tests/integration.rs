//! The integration tests of this package, one module per file, in one test binary:
//! the engine.
//! In release mode each test binary instantiates the generic game and simulator code
//! again, so one binary builds in a fraction of the time the separate files took
//! (docs/decisions.md, "One integration-test binary per package"). Run one file's tests
//! with a filter: `cargo test --release -p <package> --test integration <file>::`.

mod cantwell_budget;
mod engine;
