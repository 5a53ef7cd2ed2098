//! qchess-board (under construction).
#![forbid(unsafe_code)]
