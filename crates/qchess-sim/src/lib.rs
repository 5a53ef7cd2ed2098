//! qchess-sim (under construction).
#![forbid(unsafe_code)]
