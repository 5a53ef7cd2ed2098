//! qchess-akl (under construction).
#![forbid(unsafe_code)]
