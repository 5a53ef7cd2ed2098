//! Build script: one cfg for the AVX-512 kernels (`src/kernels/scan.rs`: the marginal pass and
//! the f32 probability scan) and one for the AVX2 kernels (the marginal pass and the f32 and
//! f64 probability scans, where AVX-512 is absent).
//!
//! `qchess_avx512` is set when the build targets an x86-64 CPU with AVX-512 (`avx512f` among
//! the target features: the project builds with `target-cpu=native`, on the machine that runs
//! it) and the compiler is at least 1.89, from which the intrinsics the kernels call are
//! stable (the workspace's `rust-version` is 1.85). The kernels are compiled only with it, and
//! the portable paths, which add the same values bit for bit, otherwise. `qchess_avx2` is set
//! likewise for `avx2` (every x86-64 CPU of the last decade; Zen 3 has no AVX-512), with the
//! same compiler floor, so both vector kernels are written alike. `autocfg` is already in the
//! tree (through num-traits).

fn main() {
    let ac = autocfg::new();
    autocfg::emit_possibility("qchess_avx512");
    autocfg::emit_possibility("qchess_avx2");
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    let has = |name: &str| {
        std::env::var("CARGO_CFG_TARGET_FEATURE")
            .is_ok_and(|f| f.split(',').any(|feature| feature == name))
    };
    let stable = ac.probe_rustc_version(1, 89);
    if x86_64 && has("avx512f") && stable {
        autocfg::emit("qchess_avx512");
    }
    if x86_64 && has("avx2") && stable {
        autocfg::emit("qchess_avx2");
    }
    autocfg::rerun_path("build.rs");
}
