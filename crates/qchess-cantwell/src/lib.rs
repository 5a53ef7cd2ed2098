//! qchess-cantwell (under construction).
#![forbid(unsafe_code)]
