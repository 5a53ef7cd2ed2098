//! Researcher read-outs: Bell measures, log negativity, superposition bound (under construction).
