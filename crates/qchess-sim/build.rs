//! Build script: one cfg for the AVX-512 marginal kernel (`src/kernels/scan.rs`).
//!
//! The AVX-512 intrinsics it calls are stable from Rust 1.89, above the workspace's
//! `rust-version` (1.85). `qchess_avx512_intrinsics` is set when the compiler is at least
//! 1.89; the kernel is compiled only with it (and only when the build targets AVX-512), and
//! the portable kernel, which adds the same masses bit for bit, otherwise. `autocfg` is
//! already in the tree (through num-traits).

fn main() {
    let ac = autocfg::new();
    autocfg::emit_possibility("qchess_avx512_intrinsics");
    if ac.probe_rustc_version(1, 89) {
        autocfg::emit("qchess_avx512_intrinsics");
    }
    autocfg::rerun_path("build.rs");
}
