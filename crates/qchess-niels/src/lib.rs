//! qchess-niels (under construction).
#![forbid(unsafe_code)]
