//! The load test (ignored by default; run it by hand, figures in docs/benchmarks.md):
//!
//! ```text
//! cargo test --release -p qchess-web --test load -- --ignored --nocapture
//! ```
//!
//! 200 concurrent games (Cantwell, Niel's Chess and Akl in turn) of random legal moves over
//! loopback for 30 s (`QCHESS_LOAD_SECS`, `QCHESS_LOAD_GAMES` change both). A finished game,
//! or one of 300 plies, is replaced by a new one; idle games expire after 5 s. It fails on any
//! error answer other than the memory cap refusing a superposition (counted apart), and when
//! the resident memory at the end is more than 1.5 times what it was after the first third.

mod common;

use common::{create, get, mv};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    moves: AtomicU64,
    games: AtomicU64,
    capped: AtomicU64,
    errors: AtomicU64,
}

fn env_or(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "a 30 s load test: run by hand, figures in docs/benchmarks.md"]
fn two_hundred_concurrent_random_games() {
    let games = env_or("QCHESS_LOAD_GAMES", 200) as usize;
    let secs = env_or("QCHESS_LOAD_SECS", 30);
    let limits = qchess_web::Limits {
        idle: Duration::from_secs(5),
        ..qchess_web::Limits::default()
    };
    let addr = common::start(limits);
    let counts = Arc::new(Counts::default());
    let latencies = Arc::new(Mutex::new(Vec::<u32>::new()));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let variants = ["cantwell", "niels", "akl"];
    let mut threads = Vec::new();
    for g in 0..games {
        let counts = counts.clone();
        let latencies = latencies.clone();
        let errors = errors.clone();
        let variant = variants[g % 3];
        threads.push(std::thread::spawn(move || {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(g as u64);
            let mut lat = Vec::new();
            let mut timed = |f: &mut dyn FnMut() -> common::Answer| {
                let t = Instant::now();
                let a = f();
                lat.push(t.elapsed().as_micros() as u32);
                counts.requests.fetch_add(1, Ordering::Relaxed);
                a
            };
            'games: while Instant::now() < deadline {
                let body = format!(r#"{{"variant": "{variant}"}}"#);
                let (id, w, b, created) = create(addr, &body);
                counts.games.fetch_add(1, Ordering::Relaxed);
                let mut side = created.body["state"]["side_to_move"]
                    .as_str()
                    .unwrap()
                    .to_string();
                for _ in 0..300 {
                    if Instant::now() >= deadline {
                        break 'games;
                    }
                    let token = if side == "w" { &w } else { &b };
                    let legal =
                        timed(&mut || get(addr, &format!("/api/games/{id}/legal?token={token}")));
                    let list = |v: &Value, k: &str| -> Vec<String> {
                        v[k].as_array().map_or(Vec::new(), |a| {
                            a.iter()
                                .filter_map(|m| m.as_str().map(str::to_string))
                                .collect()
                        })
                    };
                    let mut choices = list(&legal.body, "legal_moves");
                    if choices.is_empty() {
                        choices = list(&legal.body, "touchable");
                    }
                    let Some(m) = choices.choose(&mut rng).cloned() else {
                        break;
                    };
                    let a = timed(&mut || mv(addr, &id, token, &m));
                    if a.status == 200 {
                        counts.moves.fetch_add(1, Ordering::Relaxed);
                        side = a.body["state"]["side_to_move"]
                            .as_str()
                            .unwrap()
                            .to_string();
                        if a.body["state"]["status"] != "ongoing" {
                            break;
                        }
                    } else if a.body["error"]["kind"] == "simulation" {
                        // The game's share of the memory budget refused the superposition.
                        counts.capped.fetch_add(1, Ordering::Relaxed);
                    } else {
                        counts.errors.fetch_add(1, Ordering::Relaxed);
                        errors
                            .lock()
                            .unwrap()
                            .push(format!("{variant} {m}: {}", a.text));
                        break;
                    }
                }
            }
            latencies.lock().unwrap().extend(lat);
        }));
    }
    let start = Instant::now();
    let mut samples = Vec::new();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(1));
        samples.push((start.elapsed().as_secs(), rss_bytes()));
    }
    for t in threads {
        t.join().unwrap();
    }
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    let requests = counts.requests.load(Ordering::Relaxed);
    let third = samples[samples.len() / 3].1;
    let peak = samples.iter().map(|s| s.1).max().unwrap_or(0);
    let end = samples.last().map_or(0, |s| s.1);
    println!(
        "{games} games for {secs} s: {} games started, {requests} requests ({:.0}/s), {} moves, {} refused by the memory cap, {} errors",
        counts.games.load(Ordering::Relaxed),
        requests as f64 / secs as f64,
        counts.moves.load(Ordering::Relaxed),
        counts.capped.load(Ordering::Relaxed),
        counts.errors.load(Ordering::Relaxed),
    );
    println!(
        "latency p50 {} us, p90 {} us, p99 {} us, max {} us",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        lat.last().copied().unwrap_or(0)
    );
    println!(
        "resident memory (server and clients): {:.1} MiB after {} s, {:.1} MiB peak, {:.1} MiB at the end",
        third as f64 / 1048576.0,
        samples[samples.len() / 3].0,
        peak as f64 / 1048576.0,
        end as f64 / 1048576.0
    );
    let errors = errors.lock().unwrap();
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        errors.first()
    );
    assert!(
        end as f64 <= third as f64 * 1.5,
        "memory grew from {third} to {end} bytes"
    );
}
