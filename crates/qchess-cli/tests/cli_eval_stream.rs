//! Issue 10, Deliver 5 and 6: `qchess eval`'s Cantwell read-outs. `"distribution_limit":
//! "all"` writes every board (and, with `"amplitudes": true`, every basis state) as the state
//! is visited, never building the listing in memory; a numeric limit keeps a running top-N
//! (most probable first, ties by basis state) in memory proportional to N; a bounded read-out
//! that does not fit the memory budget (`--memory`) is the line's `state_too_large` error, and
//! the next line is answered. References are computed here with `qchess_cantwell`/`qchess_sim`
//! (the whole distribution or amplitude list, sorted), never taken from the code under test.

use crate::common;

use common::qchess_bytes;
use qchess_cantwell::Game;
use qchess_cantwell::position::board_squares;
use rand::SeedableRng;
use serde_json::Value;
use std::collections::BTreeMap;

fn eval(args: &[&str], lines: &[String]) -> Vec<Value> {
    let mut full = vec!["eval"];
    full.extend_from_slice(args);
    let run = qchess_bytes(&full, lines.join("\n").as_bytes());
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn request(moves: &[&str], extra: &str) -> String {
    let moves: Vec<String> = moves.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "{{\"variant\": \"cantwell\", \"moves\": [{}]{extra}}}",
        moves.join(",")
    )
}

/// The game after `moves` (none measures, so the seed does not matter).
fn reference_game(moves: &[&str]) -> Game {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut game = Game::new();
    for m in moves {
        game.apply(m, &mut rng)
            .expect("the reference plays the move");
    }
    game
}

/// The whole board distribution, most probable first, ties by board (the simulator's
/// sort-based reference).
fn reference_distribution(game: &Game) -> Vec<(String, f64)> {
    game.state()
        .board_distribution(None)
        .into_iter()
        .map(|(b, p)| (board_squares(b), p))
        .collect()
}

fn distribution(v: &Value) -> BTreeMap<String, f64> {
    v["distribution"]
        .as_object()
        .expect("distribution")
        .iter()
        .map(|(k, p)| (k.clone(), p.as_f64().expect("a probability")))
        .collect()
}

/// Three knight splits: 8 boards, each with probability 1/8 (hand-checkable).
const THREE_SPLITS: [&str; 3] = ["b1^a3c3", "b8^a6c6", "g1^f3h3"];

/// Uneven: each knight splits, then one arm splits again: {1/2, 1/4, 1/4} x {1/2, 1/4, 1/4},
/// 9 boards, ties among the 1/8s and the 1/16s (broken by board).
const UNEVEN: [&str; 7] = [
    "b1^a3c3", "e7e6", "a3^b5c4", "e6e5", "g1^f3h3", "d7d6", "h3^g5f4",
];

#[test]
fn all_lists_every_board_with_its_probability() {
    let all = eval(
        &[],
        &[request(&THREE_SPLITS, r#", "distribution_limit": "all""#)],
    );
    let v = &all[0];
    assert_eq!(v["ok"], true, "{v}");
    let dist = distribution(v);
    assert_eq!(dist.len(), 8);
    assert_eq!(v["distribution_total"], 8);
    assert_eq!(v["distribution_truncated"], false);
    for (board, p) in &dist {
        assert!((p - 0.125).abs() < 1e-12, "{board}: {p}");
    }
    assert!((dist.values().sum::<f64>() - 1.0).abs() < 1e-12);
    // The same boards and probabilities as the simulator's whole distribution.
    let reference: BTreeMap<String, f64> = reference_distribution(&reference_game(&THREE_SPLITS))
        .into_iter()
        .collect();
    assert_eq!(dist.len(), reference.len());
    for (board, p) in &reference {
        assert!((dist[board] - p).abs() < 1e-15, "{board}");
    }
}

#[test]
fn all_equals_the_bounded_answer_and_a_bound_keeps_the_most_probable() {
    let reference = reference_distribution(&reference_game(&UNEVEN));
    assert_eq!(reference.len(), 9);
    let lines = [
        request(&UNEVEN, r#", "distribution_limit": "all""#),
        request(&UNEVEN, r#", "distribution_limit": 9"#),
        request(&UNEVEN, r#", "distribution_limit": 3"#),
        request(&UNEVEN, r#", "distribution_limit": 0"#),
    ];
    let v = eval(&[], &lines);
    let (all, nine, three, zero) = (
        distribution(&v[0]),
        distribution(&v[1]),
        distribution(&v[2]),
        distribution(&v[3]),
    );
    assert_eq!(all, nine);
    assert!((all.values().sum::<f64>() - 1.0).abs() < 1e-12);
    assert_eq!(v[1]["distribution_truncated"], false);
    // The first three of the reference (1/4, then the two 1/8s of the smallest boards).
    let top: BTreeMap<String, f64> = reference[..3].iter().cloned().collect();
    assert_eq!(
        three.keys().collect::<Vec<_>>(),
        top.keys().collect::<Vec<_>>()
    );
    for (board, p) in &top {
        assert!((three[board] - p).abs() < 1e-15, "{board}");
    }
    assert!((reference[0].1 - 0.25).abs() < 1e-12);
    assert!((reference[2].1 - 0.125).abs() < 1e-12);
    for a in &v {
        assert_eq!(a["distribution_total"], 9);
    }
    assert_eq!(v[2]["distribution_truncated"], true);
    assert!(zero.is_empty());
    assert_eq!(v[3]["distribution_truncated"], true);
}

#[test]
fn a_bounded_listing_is_written_most_probable_first() {
    // The answer's text keeps the order (a reader that keeps key order sees it).
    let run = qchess_bytes(
        &["eval"],
        request(&UNEVEN, r#", "distribution_limit": 9"#).as_bytes(),
    );
    let text = run.stdout;
    let reference = reference_distribution(&reference_game(&UNEVEN));
    let at: Vec<usize> = reference
        .iter()
        .map(|(b, _)| {
            text.find(&format!("\"{b}\":"))
                .expect("every board is listed")
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
}

/// Every basis state, most probable first, ties by basis state (ancillas, then board).
fn reference_amplitudes(game: &Game) -> Vec<(String, f64, f64)> {
    let mut all: Vec<_> = game.state().entries().collect();
    all.sort_by(|x, y| {
        y.1.norm_sqr()
            .total_cmp(&x.1.norm_sqr())
            .then(x.0.cmp(&y.0))
    });
    all.into_iter()
        .map(|(k, a)| (board_squares(k.board), a.re, a.im))
        .collect()
}

fn amplitudes(v: &Value) -> Vec<(String, f64, f64)> {
    v["amplitudes"]
        .as_array()
        .expect("amplitudes")
        .iter()
        .map(|e| {
            assert_eq!(e["ancillas"], "0");
            (
                e["board"].as_str().unwrap().to_string(),
                e["re"].as_f64().unwrap(),
                e["im"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn amplitudes_top_n_is_the_first_n_of_the_sorted_list() {
    let game = reference_game(&UNEVEN);
    let reference = reference_amplitudes(&game);
    assert_eq!(reference.len(), 9);
    let lines: Vec<String> = [1, 4, 9, 20]
        .iter()
        .map(|n| {
            request(
                &UNEVEN,
                &format!(r#", "amplitudes": true, "distribution_limit": {n}"#),
            )
        })
        .chain([request(
            &UNEVEN,
            r#", "amplitudes": true, "distribution_limit": "all""#,
        )])
        .collect();
    let v = eval(&[], &lines);
    for (a, n) in v.iter().zip([1usize, 4, 9, 20]) {
        let got = amplitudes(a);
        let want = &reference[..n.min(9)];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.0, w.0, "n = {n}");
            assert_eq!((g.1, g.2), (w.1, w.2), "n = {n}, {}", g.0);
        }
        assert_eq!(a["amplitudes_total"], 9);
        assert_eq!(a["amplitudes_truncated"], n < 9);
    }
    // "all": every basis state once (in the state's order), the same amplitudes.
    let all = &v[4];
    assert_eq!(all["amplitudes_truncated"], false);
    let mut got = amplitudes(all);
    got.sort_by(|x, y| x.0.cmp(&y.0));
    let mut want = reference.clone();
    want.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(got, want);
    let norm: f64 = got.iter().map(|e| e.1 * e.1 + e.2 * e.2).sum();
    assert!((norm - 1.0).abs() < 1e-12);
}

/// 16 pieces, one per 2x2 block, each split once in occupancy mode: 2^16 = 65 536 basis
/// states, every board at 2^-16.
fn sixteen_splits(extra: &str) -> String {
    let files = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let (mut pieces, mut moves) = (Vec::new(), Vec::new());
    for f in (0..8).step_by(2) {
        for r in (1..=8).step_by(2) {
            let x = format!("{}{r}", files[f]);
            let y = format!("{}{}", files[f], r + 1);
            let z = format!("{}{r}", files[f + 1]);
            pieces.push(format!("\"{x}\":\"?\""));
            moves.push(format!("\"{x}^{y}{z}:SPLIT_JUMP:BASIC\""));
        }
    }
    format!(
        "{{\"mode\":\"occupancy\",\"position\":{{\"pieces\":{{{}}}}},\"moves\":[{}]{extra}}}",
        pieces.join(","),
        moves.join(",")
    )
}

#[test]
fn a_read_out_over_the_budget_is_state_too_large_and_the_next_line_is_answered() {
    // 65 536 states hold about 1.6 MB; a read-out of every board and every amplitude kept in
    // memory (the top 100 000) asks for several MB more, over a 4 MB budget. Streamed
    // ("all"), the same read-outs ask for nothing and are answered.
    let big = sixteen_splits(r#","amplitudes":true,"distribution_limit":100000"#);
    let streamed = sixteen_splits(r#","amplitudes":true,"distribution_limit":"all""#);
    let small = r#"{"mode":"occupancy","position":{"pieces":{"a1":"?"}},"moves":["a1^a2b1:SPLIT_JUMP:BASIC"]}"#;
    let v = eval(
        &["--memory", "4000000"],
        &[big, small.to_string(), streamed],
    );
    assert_eq!(v.len(), 3);
    assert_eq!(v[0]["ok"], false, "{}", v[0]);
    assert_eq!(v[0]["error"]["kind"], "state_too_large");
    let message = v[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("bytes"), "{message}");
    assert_eq!(v[1]["ok"], true);
    assert_eq!(v[1]["state_size"], 2);
    let all = &v[2];
    assert_eq!(all["ok"], true, "{all}");
    let applied = all["moves"].as_array().unwrap();
    assert!(applied.iter().all(|m| m["applied"] == true), "{all}");
    assert_eq!(all["state_size"], 65_536);
    assert_eq!(all["distribution_total"], 65_536);
    let dist = distribution(all);
    assert_eq!(dist.len(), 65_536);
    assert!(dist.values().all(|p| (p - 2f64.powi(-16)).abs() < 1e-18));
    assert!((dist.values().sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(all["amplitudes"].as_array().unwrap().len(), 65_536);
    // Without the budget the bounded read-out is answered, the same boards.
    let free = eval(&[], &[sixteen_splits(r#","distribution_limit":100000"#)]);
    assert_eq!(free[0]["distribution_truncated"], false);
    assert_eq!(distribution(&free[0]), dist);
}
