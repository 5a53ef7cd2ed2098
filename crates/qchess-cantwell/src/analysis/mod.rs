//! Research read-outs of a Cantwell state: Bell measures and log negativity of two squares,
//! the entanglement of one square with the rest, and the superposition bounds of the paper's
//! section 9 (eq. 38-40, Figure 37), and the section 11 results replayed through layer-1 moves
//! ([`paper_reproductions`], what `qchess demo` prints).

mod bell;
mod bound;
mod entanglement;
mod hermitian;
mod reproduce;

pub use bell::{BellMeasures, DensityMatrix};
pub use bound::{
    Figure37Point, PIECE_ORDER, SuperpositionBound, Zeta, allocation_is_valid, binomial,
    figure37_series, naive_superposition_bound, occupancy_bound, piece_value_size,
    superposition_upper_bound,
};
pub use entanglement::{
    SquareEntanglement, log_negativity, pair_log_negativity, pair_log_negativity_on,
    partial_transpose, square_entanglement, square_entanglement_on,
};
pub use hermitian::hermitian_eigenvalues;
pub use reproduce::{
    AmplitudeRow, BellReadout, Reproduction, Step, capture_bell_states, interference,
    paper_reproductions, pure_bell_states, split_definition_e5,
};
