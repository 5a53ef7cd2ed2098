//! The integration tests of this package, one module per file, in one test binary:
//! the simulator against the paper, the dense reference and its budgets.
//! In release mode each test binary instantiates the generic game and simulator code
//! again, so one binary builds in a fraction of the time the separate files took
//! (docs/decisions.md, "One integration-test binary per package"). Run one file's tests
//! with a filter: `cargo test --release -p <package> --test integration <file>::`.

mod budget_distribution;
mod budget_kept;
mod common;
mod controlled_large;
mod entries_order;
mod exact;
mod marginals_of;
mod paper;
mod project_any;
mod recorded_projection;
mod reference;
mod states;
mod try_board_distribution;
