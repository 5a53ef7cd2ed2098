//! End-to-end tests of the fields every variant of `qchess eval` shares (issue 13): exact
//! probabilities beside the floats, refusal reason codes, Niel's outcome distributions and
//! check for both colours, Akl collapse and capture chances, Cantwell legal moves and
//! amplitudes, and bounded listings. Expected values are computed by hand in the comments.

use serde_json::{Value, json};

use crate::common;
use common::qchess_bytes;

/// Runs `qchess eval` on one request per line and parses every answer.
fn eval_lines(lines: &[Value]) -> Vec<Value> {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let run = qchess_bytes(&["eval"], input.as_bytes());
    assert_eq!(run.code, Some(0), "qchess eval failed: {}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

fn eval_one(request: Value) -> Value {
    let mut out = eval_lines(&[request]);
    assert_eq!(out.len(), 1);
    let a = out.pop().unwrap();
    assert_eq!(a["ok"], true, "{a}");
    a
}

/// The reason codes of a request's moves, `None` for an applied move.
fn codes(answer: &Value) -> Vec<Option<String>> {
    answer["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| {
            if m["applied"] == true {
                None
            } else {
                Some(
                    m["error"]["reason_code"]
                        .as_str()
                        .expect("a code")
                        .to_string(),
                )
            }
        })
        .collect()
}

#[test]
fn akl_touch_and_capture_chances_and_a_two_capture_sequence() {
    // White's (RN) on d1 collapses to R (1/2) and captures the black (pq) on d5, which
    // collapses to Q (1/2): the entry has probability 1/4. Black's (rq) on d8 collapses to r
    // (1/2) and captures the rook, classical now (1): 1/2. The sequence: 1/4 * 1/2 = 1/8.
    let a = eval_one(json!({"variant": "akl",
        "position": "3(rq)k3/8/8/3(pq)4/8/8/8/3(RN)K3 w - 0 1",
        "moves": ["<R|d1> -> <R|Q>d5", "<R|d8> -> <R|R>d5"]}));
    let first = &a["moves"][0]["outcome"];
    assert_eq!(first["collapse_probabilities"], json!({"R": 0.5, "N": 0.5}));
    assert_eq!(
        first["collapse_probabilities_exact"],
        json!({"R": "1/2", "N": "1/2"})
    );
    assert_eq!(first["captured_probabilities"], json!({"P": 0.5, "Q": 0.5}));
    assert_eq!(
        first["captured_probabilities_exact"],
        json!({"P": "1/2", "Q": "1/2"})
    );
    assert_eq!(first["probability"], 0.25);
    assert_eq!(first["probability_exact"], "1/4");
    let second = &a["moves"][1]["outcome"];
    assert_eq!(
        second["collapse_probabilities_exact"],
        json!({"R": "1/2", "Q": "1/2"})
    );
    assert_eq!(second["captured_probabilities_exact"], json!({"R": "1"}));
    assert_eq!(second["probability_exact"], "1/2");
    let product = first["probability"].as_f64().unwrap() * second["probability"].as_f64().unwrap();
    assert_eq!(product, 0.125);
}

#[test]
fn akl_a_pair_of_one_type_is_certain_and_a_move_without_capture_has_no_captured_field() {
    // (NN): both halves are a knight, so the touch reveals N with probability 1.
    let a = eval_one(json!({"variant": "akl",
        "position": "4k3/8/8/8/8/8/8/1(NN)2K3 w - 0 1", "moves": ["b1", "-> c3"]}));
    let touch = &a["moves"][0]["outcome"];
    assert_eq!(touch["turn"], "awaiting_move");
    assert_eq!(touch["collapse_probabilities_exact"], json!({"N": "1"}));
    assert_eq!(touch["probability_exact"], "1");
    let moved = &a["moves"][1]["outcome"];
    assert!(moved.get("captured_probabilities").is_none(), "{moved}");
    assert_eq!(moved["probability"], 1.0);
    // A forced collapse of probability 0 stays refused.
    let a = eval_one(json!({"variant": "akl",
        "position": "4k3/8/8/8/8/8/8/1(RN)2K3 w - 0 1", "moves": ["<Q|b1>"]}));
    assert_eq!(codes(&a), [Some("outcome_impossible".to_string())]);
}

#[test]
fn niels_move_with_four_branches() {
    // The white rook half on e4 attacks the black rook half on e6; each pair collapses by one
    // die (three faces each way): four outcomes of 1/4, the capture only when both halves
    // are there.
    let a = eval_one(json!({"variant": "niels",
        "position": "[rbo|1]3k3/8/4[rro|1]3/8/4[Rro|1]3/8/8/6K[Rbo|1] w - - 0 1",
        "moves": ["e4e6"], "rolls": [[2, 2]], "outcomes": true}));
    let m = &a["moves"][0];
    assert_eq!(m["applied"], true, "{m}");
    assert_eq!(m["outcome"]["captured"], "r");
    let outs = m["outcomes"].as_array().expect("outcomes");
    assert_eq!(outs.len(), 4, "{m}");
    let mut positions: Vec<&str> = outs
        .iter()
        .map(|o| o["position"].as_str().unwrap())
        .collect();
    positions.sort_unstable();
    assert_eq!(
        positions,
        [
            "4k3/8/4R3/8/8/8/8/6K1 b - - 0 1",
            "4k3/8/4r3/8/8/8/8/6KR b - - 0 1",
            "r3k3/8/4R3/8/8/8/8/6K1 b - - 0 1",
            "r3k3/8/8/8/8/8/8/6KR b - - 0 1",
        ]
    );
    for o in outs {
        assert_eq!(o["probability"], 0.25);
        assert_eq!(o["probability_exact"], "1/4");
    }
    let captures: Vec<&Value> = outs
        .iter()
        .filter(|o| o["outcome"]["captured"] == "r")
        .collect();
    assert_eq!(captures.len(), 1);
    // Without the switch the entry has no "outcomes"; a refused move has null.
    let a = eval_one(json!({"variant": "niels", "moves": ["e2e4", "e2e4"], "outcomes": true}));
    assert_eq!(a["moves"][0]["outcomes"][0]["probability_exact"], "1");
    assert_eq!(a["moves"][1]["outcomes"], Value::Null);
    let a = eval_one(json!({"variant": "niels", "moves": ["e2e4"]}));
    assert!(a["moves"][0].get("outcomes").is_none());
}

#[test]
fn niels_check_and_mate_for_both_colours() {
    // The white rook pair: one half on e4 sees the black king on e8 (1/2: its die).
    let a = eval_one(json!({"variant": "niels",
        "position": "4k3/8/8/8/4[Rro|1]3/8/8/6K[Rbo|1] b - - 0 1"}));
    assert_eq!(
        a["check"]["black"],
        json!({"check": "possible", "probability": 0.5, "probability_exact": "1/2", "mate": "none"})
    );
    assert_eq!(a["check"]["white"]["check"], "none");
    assert_eq!(a["in_check"], true);
    // Queen b7 guarded by the king on c6: black is mated (certain check, no move).
    let a = eval_one(json!({"variant": "niels", "position": "k7/1Q6/2K5/8/8/8/8/8 b - - 0 1"}));
    assert_eq!(a["check"]["black"]["check"], "certain");
    assert_eq!(a["check"]["black"]["probability_exact"], "1");
    assert_eq!(a["check"]["black"]["mate"], "checkmate");
    assert_eq!(a["status"], "checkmate");
    // White to move; black, were it to move, would be stalemated (queen b6, king a8).
    let a = eval_one(json!({"variant": "niels", "position": "k7/8/1Q6/8/8/8/8/K7 w - - 0 1"}));
    assert_eq!(a["check"]["black"]["mate"], "stalemate");
    assert_eq!(a["check"]["white"]["mate"], "none");
    assert_eq!(a["status"], "ongoing");
}

#[test]
fn niels_pair_and_group_probabilities_have_exact_twins() {
    let a = eval_one(json!({"variant": "niels", "board": "5x6", "moves": ["b1^a3c3:oo"]}));
    assert_eq!(a["pairs"][0]["probabilities"]["a3"], 0.5);
    assert_eq!(a["pairs"][0]["probabilities_exact"]["a3"], "1/2");
    assert_eq!(a["pairs"][0]["probabilities_exact"]["c3"], "1/2");
}

#[test]
fn every_reason_code_through_the_binary() {
    let answers = eval_lines(&[
        // Cantwell, game mode.
        json!({"variant": "cantwell", "moves": ["zz", "e7e5", "b1b3", "a1a3", "a1a2"]}),
        json!({"variant": "cantwell", "position": "4k3/8/8/8/8/N1N5/8/1N2K3 w - - 0 1",
               "moves": ["b1^a3c3"]}),
        // Niel's Chess.
        json!({"variant": "niels", "moves": ["e3e4", "b1^a3c3:oo", "e7e5", "h:c3", "e5e4"]}),
        json!({"variant": "niels", "position": "[rbo|1]3k3/8/4[rro|1]3/8/4[Rro|1]3/8/8/4K2[Rbo|1] w - - 0 1",
               "moves": ["e4e6"]}),
        json!({"variant": "niels", "rules": "tunnelling",
               "position": "4k3/8/8/8/4p3/8/4R3/4K3 w - - 0 1", "moves": ["e2~e5"], "rolls": [[]]}),
        // Akl-style.
        json!({"variant": "akl", "position": "4k3/8/8/8/8/8/3[P*P]4/[R*R]2[R*R]K3 w - 0 1",
               "moves": ["d1 -> e1", "d1 -> d3", "-> c3", "e8 -> e7", "<Q|e1>"]}),
        json!({"variant": "akl", "position": "4k3/8/8/3(pq?)4/8/8/8/3[R*R]K3 w - 0 1",
               "moves": ["d1 -> d5|psi>"]}),
        json!({"variant": "akl", "position": "3[r*r]k3/8/8/8/8/8/8/4K3 w - 0 1",
               "moves": ["e1 -> d1", "d8 -> <R|K>d1", "e8 -> e7"]}),
    ]);
    let s = |c: &str| Some(c.to_string());
    assert_eq!(
        codes(&answers[0]),
        [
            s("parse_error"),
            s("wrong_colour"),
            s("not_a_move_of_this_piece"),
            s("path_blocked"),
            s("target_occupied_by_own"),
        ]
    );
    assert_eq!(codes(&answers[1]), [s("no_effect")]);
    assert_eq!(
        codes(&answers[2]),
        [
            s("no_piece"),
            None,
            None,
            s("forbidden_by_rules_variant"),
            s("wrong_colour")
        ]
    );
    assert_eq!(codes(&answers[3]), [s("leaves_king_in_check")]);
    assert_eq!(codes(&answers[4]), [s("bad_rolls")]);
    assert_eq!(
        codes(&answers[5]),
        [
            s("target_occupied_by_own"),
            s("path_blocked"),
            s("touch_move"),
            s("wrong_colour"),
            s("outcome_impossible"),
        ]
    );
    assert_eq!(codes(&answers[6]), [s("entry_mismatch")]);
    assert_eq!(codes(&answers[7]), [None, None, s("game_over")]);
    // The kind stays the variant's own and the message still says it in words.
    let m = &answers[0]["moves"][3]["error"];
    assert_eq!(m["kind"], "no_effect");
    assert!(m["message"].as_str().unwrap().contains("a1a3"), "{m}");
}

#[test]
fn cantwell_legal_moves_and_amplitudes() {
    // After the knight split b1^a3c3, black has 16 pawn moves and, per knight, two jumps and
    // two split orders: 24 moves.
    let a = eval_one(json!({"variant": "cantwell", "moves": ["b1^a3c3"],
        "legal_moves": true, "amplitudes": true}));
    let legal: Vec<&str> = a["legal_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(legal.len(), 24, "{legal:?}");
    for m in ["e7e5", "b8c6", "g8^f6h6", "g8^h6f6"] {
        assert!(legal.contains(&m), "{m}");
    }
    // Every listed move is accepted by "moves".
    let tries: Vec<Value> = legal
        .iter()
        .map(|m| json!({"variant": "cantwell", "moves": ["b1^a3c3", m]}))
        .collect();
    for t in eval_lines(&tries) {
        assert_eq!(t["moves"][1]["applied"], true, "{t}");
    }
    // The split's square-root-of-iSwap gives each branch the amplitude i/sqrt(2).
    let amps = a["amplitudes"].as_array().unwrap();
    assert_eq!(amps.len(), 2);
    assert_eq!(a["amplitudes_total"], 2);
    assert_eq!(a["amplitudes_truncated"], false);
    for e in amps {
        assert!(e["re"].as_f64().unwrap().abs() < 1e-15, "{e}");
        assert!(
            (e["im"].as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-15,
            "{e}"
        );
        assert_eq!(e["ancillas"], "0");
    }
    // Occupancy mode knows no types: legal moves are a request error.
    let e = eval_lines(&[json!({"variant": "cantwell", "mode": "occupancy", "legal_moves": true})]);
    assert_eq!(e[0]["ok"], false);
    assert_eq!(e[0]["error"]["at"], "legal_moves");
}

#[test]
fn cantwell_distribution_is_bounded() {
    // Two knight splits: four equally likely boards.
    let moves = json!(["b1^a3c3", "g8^f6h6"]);
    let answers = eval_lines(&[
        json!({"variant": "cantwell", "moves": moves}),
        json!({"variant": "cantwell", "moves": moves, "distribution_limit": 3, "amplitudes": true}),
        json!({"variant": "cantwell", "moves": moves, "distribution_limit": "all", "amplitudes": true}),
        json!({"variant": "cantwell", "moves": moves, "distribution_limit": "most"}),
    ]);
    let dist = |a: &Value| a["distribution"].as_object().unwrap().len();
    assert_eq!(dist(&answers[0]), 4);
    assert_eq!(answers[0]["distribution_total"], 4);
    assert_eq!(answers[0]["distribution_truncated"], false);
    assert_eq!(dist(&answers[1]), 3);
    assert_eq!(answers[1]["distribution_total"], 4);
    assert_eq!(answers[1]["distribution_truncated"], true);
    assert_eq!(answers[1]["amplitudes"].as_array().unwrap().len(), 3);
    assert_eq!(answers[1]["amplitudes_truncated"], true);
    for p in answers[1]["distribution"].as_object().unwrap().values() {
        assert_eq!(p.as_f64().unwrap(), 0.25);
    }
    assert_eq!(dist(&answers[2]), 4);
    assert_eq!(answers[2]["distribution_truncated"], false);
    assert_eq!(answers[2]["amplitudes"].as_array().unwrap().len(), 4);
    assert_eq!(answers[2]["distribution"], answers[0]["distribution"]);
    assert_eq!(answers[3]["ok"], false);
    assert_eq!(answers[3]["error"]["at"], "distribution_limit");
}

#[test]
fn cantwell_default_limit_is_a_thousand_boards() {
    // Occupancy mode: eleven pieces, each split once onto two empty squares: 2^11 = 2048
    // equally likely boards; the answer carries the first 1000, each 1/2048.
    let pieces: serde_json::Map<String, Value> = [
        "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "a2", "b2", "c2",
    ]
    .iter()
    .map(|s| (s.to_string(), json!("?")))
    .collect();
    let moves: Vec<String> = ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .map(|f| format!("{f}1^{f}4{f}5:SPLIT_JUMP:BASIC"))
        .chain(
            ["a", "b", "c"]
                .iter()
                .map(|f| format!("{f}2^{f}6{f}7:SPLIT_JUMP:BASIC")),
        )
        .collect();
    let a = eval_one(json!({"variant": "cantwell", "mode": "occupancy",
        "position": {"pieces": pieces}, "moves": moves}));
    assert!(
        a["moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["applied"] == true),
        "{a}"
    );
    assert_eq!(a["state_size"], 2048);
    assert_eq!(a["distribution_total"], 2048);
    assert_eq!(a["distribution_truncated"], true);
    let dist = a["distribution"].as_object().unwrap();
    assert_eq!(dist.len(), 1000);
    for p in dist.values() {
        assert!((p.as_f64().unwrap() - 1.0 / 2048.0).abs() < 1e-15, "{p}");
    }
}

#[test]
fn docs_list_every_reason_code() {
    let doc = include_str!("../../../docs/architecture.md");
    for code in [
        "parse_error",
        "no_piece",
        "wrong_colour",
        "path_blocked",
        "target_occupied_by_own",
        "leaves_king_in_check",
        "not_a_move_of_this_piece",
        "forbidden_by_rules_variant",
        "outcome_impossible",
        "no_effect",
        "game_over",
        "bad_rolls",
        "touch_move",
        "entry_mismatch",
        "resource_limit",
        "other",
    ] {
        assert!(
            doc.contains(&format!("`{code}`")),
            "{code} is not in docs/architecture.md"
        );
    }
}

#[test]
fn akl_legal_moves_are_whole_turns_that_apply() {
    // (NR) on b1: as a knight a3, c3, d2 (3); as a rook b2-b8, a1, c1, d1 (10); the king on e1:
    // d1, d2, e2, f2, f1 (5; kings may stand in check). 18 entries.
    let fen = "4k3/8/8/8/8/8/8/1(NR)2K3 w - 0 1";
    let a = eval_one(json!({"variant": "akl", "position": fen, "legal_moves": true}));
    let legal: Vec<String> = a["legal_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert_eq!(legal.len(), 18, "{legal:?}");
    for m in ["<N|b1> -> c3", "<R|b1> -> b8", "<R|b1> -> d1", "e1 -> f2"] {
        assert!(legal.iter().any(|l| l == m), "{m} in {legal:?}");
    }
    let tries: Vec<Value> = legal
        .iter()
        .map(|m| json!({"variant": "akl", "position": fen, "moves": [m]}))
        .collect();
    for t in eval_lines(&tries) {
        assert_eq!(t["moves"][0]["applied"], true, "{t}");
    }
    // While a touch is pending: the touched piece's destinations.
    let a = eval_one(
        json!({"variant": "akl", "position": fen, "moves": ["<N|b1>"],
        "legal_moves": true}),
    );
    assert_eq!(a["legal_moves"], json!(["-> d2", "-> a3", "-> c3"]));
}
