//! The integration tests of this package, one module per file, in one test binary:
//! the Cantwell rules, circuits, game API, budgets and undo.
//! In release mode each test binary instantiates the generic game and simulator code
//! again, so one binary builds in a fraction of the time the separate files took
//! (docs/decisions.md, "One integration-test binary per package"). Run one file's tests
//! with a filter: `cargo test --release -p <package> --test integration <file>::`.

mod backend_generic;
mod circuit_analysis;
mod circuit_notation;
mod circuit_paper;
mod circuit_reference;
mod clone_budget;
mod clone_undo_records;
#[allow(dead_code)]
mod common;
mod fuzz_regressions;
mod game_bad_input;
mod game_budget;
mod game_exact;
mod game_paper;
mod game_paper_exact;
mod game_pawns;
mod game_properties;
mod game_rules;
mod jump_without_copy;
mod legal_budget;
mod legal_equivalence;
mod measure_without_record;
mod read_budget;
mod undo_journal;
