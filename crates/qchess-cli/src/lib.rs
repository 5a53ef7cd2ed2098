//! The library side of the `qchess` tool: the `qchess eval` request evaluator and the
//! `qchess engine` protocol loop, callable without the binary (by embedders and by the fuzz
//! targets in `fuzz/`). The binary
//! (`src/main.rs`) uses these modules; nothing here behaves differently from the binary.
#![forbid(unsafe_code)]

pub mod error;
pub mod eval;
pub mod plain_move;
pub mod protocol;
