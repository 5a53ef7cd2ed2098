//! End-to-end tests of issue 13's remaining fields: positions as JSON that a request takes
//! back (every variant), a Niel's remote collapse as one entry, and Akl chances that a view
//! implies (a second type constrained by the other pieces). Expected values by hand.

use serde_json::{Value, json};

use crate::common;
use common::qchess_bytes;

fn eval_one(request: Value) -> Value {
    let run = qchess_bytes(&["eval"], format!("{request}\n").as_bytes());
    assert_eq!(run.code, Some(0), "qchess eval failed: {}", run.stderr);
    let a: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON answer");
    assert_eq!(a["ok"], true, "{a}");
    a
}

/// The same answer fields, compared one by one so a failure names the field.
fn assert_same(a: &Value, b: &Value, fields: &[&str]) {
    for f in fields {
        assert!(a.get(*f).is_some(), "field {f} missing in {a}");
        assert_eq!(a[*f], b[*f], "field {f} differs after the round trip");
    }
}

#[test]
fn cantwell_position_object_round_trips_a_superposition_with_a_capture() {
    // Two splits, then a capture that measures: amplitudes with phases and an ancilla sector.
    let first = eval_one(json!({"variant": "cantwell", "seed": 5,
        "moves": ["g1^f3h3", "b8^a6c6", "e2e4", "c6d4", "f3d4.m1"]}));
    let position = first["position"].clone();
    assert!(
        position["amplitudes"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "{first}"
    );
    let again = eval_one(json!({"variant": "cantwell", "position": position}));
    assert_same(
        &first,
        &again,
        &[
            "position",
            "fen",
            "probabilities",
            "distribution",
            "state_size",
            "side_to_move",
            "status",
            "pieces",
        ],
    );
    // Both continue identically.
    let a =
        eval_one(json!({"variant": "cantwell", "position": first["position"], "moves": ["d7d5"]}));
    let b =
        eval_one(json!({"variant": "cantwell", "position": again["position"], "moves": ["d7d5"]}));
    assert_same(&a, &b, &["position", "moves"]);
}

#[test]
fn cantwell_position_is_null_beyond_the_distribution_limit() {
    let a = eval_one(json!({"variant": "cantwell", "distribution_limit": 1,
        "moves": ["g1^f3h3"]}));
    assert_eq!(a["state_size"], 2);
    assert_eq!(a["position"], Value::Null);
    let b = eval_one(json!({"variant": "cantwell", "distribution_limit": "all",
        "moves": ["g1^f3h3"]}));
    assert_eq!(
        b["position"]["amplitudes"].as_array().map(Vec::len),
        Some(2)
    );
}

#[test]
fn niels_position_object_round_trips_pairs_marks_and_entanglement() {
    // Two entangled groups (both diagonals), equal pairs on the mid-line, black to move.
    let fen = "4k2[nbo-1]/7[nro-1]/K4n2/3[Qbo|1]4/3[Qro|1]4/[Rbo-1]7/[Rro-1]2[Bbo+1]4/2[Bro+1]3[rbo+1][rro+1] b - - 0 1";
    let first = eval_one(json!({"variant": "niels", "position": fen,
        "rules": ["hadamard"]}));
    assert_eq!(first["position_json"]["fen"], fen);
    assert_eq!(first["position_json"]["board"], "8x8");
    assert_eq!(first["position_json"]["rules"], json!(["hadamard"]));
    assert_eq!(first["groups"].as_array().map(Vec::len), Some(2), "{first}");
    let again = eval_one(json!({"variant": "niels", "position": first["position_json"]}));
    assert_same(
        &first,
        &again,
        &[
            "position_json",
            "position",
            "pairs",
            "groups",
            "check",
            "rules",
            "board",
            "status",
        ],
    );
}

#[test]
fn niels_remote_collapse_is_one_entry_and_round_trips_its_pending_move() {
    // Knight b1 split to a3 (red, facing the opponent) and c3 (blue). A remote collapse rolls
    // for it: an even roll (4) sends it to the red half, a3, and it must then move.
    let line = |moves: Value, rolls: Value| {
        eval_one(json!({"variant": "niels", "rules": "remote-collapse",
            "moves": moves, "rolls": rolls}))
    };
    let a = line(
        json!(["b1^a3c3:oo", "e7e5", "c:c3 a3b5"]),
        json!([null, null, [4]]),
    );
    let turn = &a["moves"][2];
    assert_eq!(turn["applied"], true, "{a}");
    assert_eq!(turn["notation"], "c:c3 a3b5");
    assert_eq!(
        turn["outcome"]["rolls"],
        json!([{"player": "w", "value": 4}])
    );
    assert_eq!(
        turn["outcome"]["collapses"],
        json!([{"mark": "red", "piece": "N", "square": "a3"}])
    );
    assert_eq!(turn["outcome"]["remote_collapse"]["rolls"][0]["value"], 4);
    assert_eq!(a["pieces"]["b5"], "N");
    assert_eq!(a["side_to_move"], "b");
    // The piece went to a3, so a follow-up from c3 refuses the whole entry: nothing changes,
    // and the same collapse with an odd roll (3, blue: c3) is then played in full.
    let b = line(
        json!(["b1^a3c3:oo", "e7e5", "c:c3 c3d5", "c:c3[3] c3d5"]),
        json!([null, null, [4], null]),
    );
    assert_eq!(b["moves"][2]["applied"], false, "{b}");
    assert_eq!(b["moves"][2]["error"]["reason_code"], "no_piece");
    assert_eq!(b["moves"][3]["applied"], true, "{b}");
    assert_eq!(b["pieces"]["d5"], "N");
    assert!(b["pieces"].get("c3").is_none() && b["pieces"].get("a3").is_none());
    // The collapse alone leaves a pending move; the position object keeps it.
    let c = line(
        json!(["b1^a3c3:oo", "e7e5", "c:c3"]),
        json!([null, null, [4]]),
    );
    assert!(
        c["position_json"]["fen"].as_str().unwrap().ends_with(" a3"),
        "{c}"
    );
    let d = eval_one(json!({"variant": "niels", "position": c["position_json"],
        "moves": ["a3b5"]}));
    let e = line(
        json!(["b1^a3c3:oo", "e7e5", "c:c3", "a3b5"]),
        json!([null, null, [4], null]),
    );
    assert_same(
        &d,
        &e,
        &["position_json", "pieces", "pairs", "side_to_move"],
    );
}

#[test]
fn akl_position_object_round_trips_secrets_views_and_a_pending_touch() {
    // A seeded start: every pair secret. White touches g1 (b1's knight pair collapses) and
    // the touch leaves the piece waiting for its move.
    let first = eval_one(
        json!({"variant": "akl", "seed": 4, "visibility": "own-pairs",
        "moves": ["e2 e4", "d7 d5", "b1"]}),
    );
    let pj = &first["position_json"];
    assert_eq!(pj["visibility"], "own-pairs");
    assert_eq!(pj["fen"], first["position"]);
    let again = eval_one(json!({"variant": "akl", "position": pj}));
    assert_same(
        &first,
        &again,
        &[
            "position_json",
            "position",
            "pieces",
            "views",
            "pending",
            "side_to_move",
            "status",
        ],
    );
}

#[test]
fn akl_touch_whose_second_type_the_other_pieces_constrain() {
    // White's view: every other White pair is public, and their secondaries use up 14 of the
    // 15 set-up types (8 pawns, 2 knights, 2 bishops, 2 rooks), so the hidden second type of
    // the pawn pair on h2 can only be the queen: P 1/2, Q 1/2. (No public pair has two equal
    // types: a (PP) pair's second type can never be told apart from its first, so it stays
    // unseen.)
    let view =
        "4k3/8/8/8/8/8/(NP)(PN)(PN)(PB)(PB)(PR)(PR)(P?)/(RP)(NP)(BP)(QP)K(BP)(NP)(RP) w - 0 1";
    let a = eval_one(json!({"variant": "akl", "position": view, "moves": ["h2"]}));
    let touch = &a["moves"][0]["outcome"];
    assert_eq!(
        touch["collapse_probabilities_exact"],
        json!({"P": "1/2", "Q": "1/2"}),
        "{a}"
    );
    assert_eq!(touch["collapse_probabilities"], json!({"P": 0.5, "Q": 0.5}));
    // With the a1 pair hidden too, the known secondaries are 7 pawns, 2 knights, 2 bishops and
    // 2 rooks: the pool left is {P, Q}, dealt to a1 and h2, so h2's second type is a pawn or
    // the queen with 1/2 each, and the touch gives P 1/2 + 1/4 = 3/4, Q 1/4.
    let view =
        "4k3/8/8/8/8/8/(NP)(PN)(PN)(PB)(PB)(PR)(PR)(P?)/(R?)(NP)(BP)(QP)K(BP)(NP)(RP) w - 0 1";
    let a = eval_one(json!({"variant": "akl", "position": view, "moves": ["h2"]}));
    let touch = &a["moves"][0]["outcome"];
    assert_eq!(
        touch["collapse_probabilities_exact"],
        json!({"P": "3/4", "Q": "1/4"}),
        "{a}"
    );
    let p = touch["probability_exact"].as_str().unwrap();
    let kind = touch["type"].as_str().unwrap();
    assert_eq!(p, if kind == "P" { "3/4" } else { "1/4" }, "{touch}");
}
