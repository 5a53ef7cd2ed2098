//! The passes that touch amplitude arrays. Each works on one key-sorted run (a sector) and
//! knows nothing of logical qubits: every bit here is a physical bit.

pub(crate) mod compact;
pub(crate) mod dense;
pub(crate) mod expand;
pub(crate) mod handoff;
pub(crate) mod pair;
pub(crate) mod permute;
pub(crate) mod scan;
pub(crate) mod spread;
