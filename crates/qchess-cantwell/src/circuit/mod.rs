//! Layer 1: occupancy circuits of the paper's section 8 (under construction).
