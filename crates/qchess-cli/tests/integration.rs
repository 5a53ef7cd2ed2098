//! The integration tests of this package, one module per file, in one test binary:
//! the `qchess` tool, run as a process.
//! In release mode each test binary instantiates the generic game and simulator code
//! again, so one binary builds in a fraction of the time the separate files took
//! (docs/decisions.md, "One integration-test binary per package"). Run one file's tests
//! with a filter: `cargo test --release -p <package> --test integration <file>::`.

mod cli_bench_demo;
mod cli_bench_move;
mod cli_engine;
mod cli_eval;
mod cli_eval_exact;
mod cli_eval_legal_budget;
mod cli_eval_limits;
mod cli_eval_parity;
mod cli_eval_positions;
mod cli_eval_stream;
mod cli_match;
mod cli_match_cmd;
mod cli_memory;
mod cli_perft;
mod cli_play;
mod cli_play_engine;
mod cli_play_vocabulary;
mod cli_render_plot;
mod cli_serve;
mod cli_threads;
#[allow(dead_code)]
mod common;
mod docs_commands;
