//! Soak test (bounded, ignored by default; docs/reliability.md): 10^4 random games per variant
//! with random undo, redo and save/load round trips, every invariant of `invariants` checked
//! after every step, and the resident memory flat from the first thousand games to the end.
//!
//! Run: `cargo test --release --test soak -- --ignored --nocapture`
//! (`QCHESS_SOAK_GAMES=<n>` for another number of games per variant).

mod invariants;

use invariants::{Variant, play_script, random_script};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resident set size in bytes (Linux `/proc/self/statm`, 4 KiB pages); `None` elsewhere.
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn soak(variant: Variant) {
    let games: u64 = std::env::var("QCHESS_SOAK_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let mut rng = ChaCha8Rng::seed_from_u64(0x50a4 ^ variant as u64);
    let mut warm = None;
    let mut peak = 0u64;
    let started = std::time::Instant::now();
    for game in 0..games {
        let len = rng.random_range(1..80);
        let script = random_script(&mut rng, len);
        play_script(variant, rng.random(), &script);
        if let Some(rss) = rss_bytes() {
            if game + 1 == games.min(1000) {
                warm = Some(rss);
            }
            peak = peak.max(rss);
        }
    }
    let end = rss_bytes();
    println!(
        "soak {variant:?}: {games} games in {:.1} s; rss after warm-up {:?} MiB, end {:?} MiB, peak {} MiB",
        started.elapsed().as_secs_f64(),
        warm.map(|b| b >> 20),
        end.map(|b| b >> 20),
        peak >> 20
    );
    if let (Some(warm), Some(end)) = (warm, end) {
        // Flat: what the allocator keeps after the first thousand games is all it needs.
        assert!(
            end <= warm + (32 << 20),
            "memory grew from {} MiB to {} MiB",
            warm >> 20,
            end >> 20
        );
    }
}

#[test]
#[ignore = "soak: minutes; run with --ignored"]
fn soak_cantwell() {
    soak(Variant::Cantwell);
}

#[test]
#[ignore = "soak: minutes; run with --ignored"]
fn soak_niels() {
    soak(Variant::Niels);
}

#[test]
#[ignore = "soak: minutes; run with --ignored"]
fn soak_akl() {
    soak(Variant::Akl);
}

/// A short run of the same scripts on every `cargo test`, so the driver itself stays right.
#[test]
fn short_random_games_keep_every_invariant() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for variant in [Variant::Cantwell, Variant::Niels, Variant::Akl] {
        for _ in 0..5 {
            let script = random_script(&mut rng, 40);
            play_script(variant, rng.random(), &script);
        }
    }
}
