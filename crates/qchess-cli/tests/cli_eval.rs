//! End-to-end tests of `qchess eval`: the JSON-lines protocol (one answer per non-blank line,
//! errors as `{"ok": false, "error": {"kind", "message", "at"}}`, the run never stops) and real
//! values of the three rule systems (Cantwell's knight split and section 11.2 interference,
//! Niel's Chess pairs and dice, Akl-style set-up and collapses), through the real binary.

use serde_json::{Value, json};

use crate::common;
use common::{Run, qchess_bytes};

fn qchess(args: &[&str], stdin: &str) -> Run {
    qchess_bytes(args, stdin.as_bytes())
}

/// Runs `qchess eval` on `lines` (joined by newlines) and parses every output line.
fn eval_lines(lines: &[&str]) -> Vec<Value> {
    let input = lines.join("\n") + "\n";
    let run = qchess(&["eval"], &input);
    assert_eq!(run.code, Some(0), "qchess eval failed: {}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// The single answer to one request.
fn eval_one(request: &Value) -> Value {
    let mut out = eval_lines(&[&request.to_string()]);
    assert_eq!(out.len(), 1, "one answer per line");
    out.pop().expect("one answer")
}

/// The probability of `square` in an answer (absent squares have probability 0).
fn prob(answer: &Value, square: &str) -> f64 {
    match answer["probabilities"].get(square) {
        None => 0.0,
        Some(p) => p
            .as_f64()
            .unwrap_or_else(|| panic!("p({square}) is not a number: {p}")),
    }
}

fn assert_error_shape(answer: &Value) {
    assert_eq!(answer["ok"], false, "{answer}");
    let obj = answer.as_object().expect("an object");
    assert_eq!(obj.len(), 2, "exactly ok and error: {answer}");
    let err = answer["error"].as_object().expect("an error object");
    let mut keys: Vec<&str> = err.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["at", "kind", "message"], "{answer}");
    assert!(
        err["kind"].as_str().is_some_and(|k| !k.is_empty()),
        "{answer}"
    );
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{answer}"
    );
}

// ---------------------------------------------------------------- the protocol

#[test]
fn one_answer_per_non_blank_line_and_bad_lines_do_not_stop_the_run() {
    let lines = [
        r#"{"variant": "cantwell", "moves": ["e2e4"]}"#,
        "",
        "   \t  ",
        "{not json",
        "[1, 2]",
        r#"{"variant": "chess960"}"#,
        r#"{"variant": 3}"#,
        r#"{"variant": "niels", "moves": ["e2e4"]}"#,
        r#"{"variant": "cantwell", "mode": "quantum"}"#,
        r#"{"variant": "akl", "moves": ["<P|e2> -> e4"]}"#,
        "",
        r#"{"moves": ["d2d4"]}"#,
    ];
    let out = eval_lines(&lines);
    assert_eq!(out.len(), 9, "{out:#?}");
    let oks: Vec<bool> = out
        .iter()
        .map(|a| a["ok"].as_bool().expect("ok is a bool"))
        .collect();
    assert_eq!(
        oks,
        [true, false, false, false, false, true, false, true, true]
    );
    for bad in [1, 2, 3, 4, 6] {
        assert_error_shape(&out[bad]);
    }
    assert_eq!(out[1]["error"]["kind"], "json");
    assert!(
        out[1]["error"]["at"].is_object(),
        "a JSON error says where: {}",
        out[1]
    );
    assert!(
        out[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("chess960")
    );
    assert_eq!(out[3]["error"]["at"], "variant");
    assert_eq!(out[6]["error"]["at"], "mode");
    // The good lines were answered in order, each by its own variant.
    assert_eq!(out[0]["pieces"]["e4"], "P");
    assert_eq!(out[5]["pieces"]["e4"], "P");
    assert!(
        out[5]["pairs"].is_array(),
        "a Niel's Chess answer: {}",
        out[5]
    );
    assert_eq!(out[7]["pieces"]["e4"]["type"], "P");
    assert_eq!(out[8]["pieces"]["d4"], "P");
}

#[test]
fn the_last_line_needs_no_newline_and_crlf_is_accepted() {
    let run = qchess(
        &["eval"],
        "{\"moves\": [\"e2e4\"]}\r\n{\"moves\": [\"d2d4\"]}",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 2, "{}", run.stdout);
    assert_eq!(out[0]["pieces"]["e4"], "P");
    assert_eq!(out[1]["pieces"]["d4"], "P");
    // No input at all: no output, success.
    let run = qchess(&["eval"], "");
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""));
    // Two objects on one line are one bad line: one error answer.
    let out = eval_lines(&[r#"{"moves": []} {"moves": []}"#]);
    assert_eq!(out.len(), 1);
    assert_error_shape(&out[0]);
    assert_eq!(out[0]["error"]["kind"], "json");
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_answer_and_the_run_goes_on() {
    let mut input = b"\xff\xfe{\"moves\": []}\n".to_vec();
    input.extend_from_slice(b"{\"moves\": [\"e2e4\"]}\n");
    let run = qchess_bytes(&["eval"], &input);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(out.len(), 2, "{}", run.stdout);
    assert_error_shape(&out[0]);
    assert_eq!(out[1]["pieces"]["e4"], "P");
}

#[test]
fn cantwell_is_the_default_variant() {
    let moves = json!(["b1^a3c3", "e7e5", "a3b5"]);
    let explicit = eval_one(&json!({"variant": "cantwell", "moves": moves, "seed": 3}));
    let default = eval_one(&json!({"moves": moves, "seed": 3}));
    assert_eq!(explicit["ok"], true, "{explicit}");
    assert_eq!(explicit, default);
}

// ---------------------------------------------------------------- Cantwell

#[test]
fn cantwell_knight_split_from_the_start() {
    let a = eval_one(&json!({
        "variant": "cantwell", "mode": "game", "position": "startpos",
        "moves": ["b1^a3c3"], "seed": 7,
    }));
    assert_eq!(a["ok"], true, "{a}");
    assert!((prob(&a, "a3") - 0.5).abs() <= 1e-15, "{a}");
    assert!((prob(&a, "c3") - 0.5).abs() <= 1e-15, "{a}");
    assert_eq!(prob(&a, "b1"), 0.0, "{a}");
    assert_eq!(prob(&a, "e2"), 1.0, "{a}");
    let dist = a["distribution"]
        .as_object()
        .expect("distribution is an object");
    assert_eq!(dist.len(), 2, "{a}");
    let mut with_a3 = 0;
    for (board, p) in dist {
        assert!((p.as_f64().unwrap() - 0.5).abs() <= 1e-15, "{board}: {p}");
        let squares: Vec<&str> = board.split(' ').collect();
        assert_eq!(squares.len(), 32, "{board}");
        assert!(!squares.contains(&"b1"), "{board}");
        assert!(
            squares.contains(&"a3") != squares.contains(&"c3"),
            "{board}"
        );
        with_a3 += usize::from(squares.contains(&"a3"));
    }
    assert_eq!(with_a3, 1);
    assert_eq!(a["state_size"], 2);
    assert_eq!(a["side_to_move"], "b");
    assert_eq!(a["status"], "ongoing");
    assert_eq!(a["pieces"]["a3"], "N");
    assert_eq!(a["pieces"]["c3"], "N");
    assert!(a["pieces"].get("b1").is_none(), "{a}");
    let m = &a["moves"][0];
    assert_eq!(
        (&m["move"], &m["applied"], &m["error"]),
        (&json!("b1^a3c3"), &json!(true), &Value::Null)
    );
    assert!(m["outcome"].is_null(), "a split measures nothing: {m}");
}

/// Section 11.2: p(a1) = (3 + 2 sqrt 2) / 8, p(b1) = 1/4, p(b2) = (3 - 2 sqrt 2) / 8.
fn assert_interference(a: &Value) {
    assert_eq!(a["ok"], true, "{a}");
    let r2 = std::f64::consts::SQRT_2;
    let expected = [
        ("a1", (3.0 + 2.0 * r2) / 8.0),
        ("b1", 0.25),
        ("b2", (3.0 - 2.0 * r2) / 8.0),
    ];
    for (square, p) in expected {
        assert!(
            (prob(a, square) - p).abs() < 1e-12,
            "p({square}) = {} not {p}: {a}",
            prob(a, square)
        );
    }
    assert!((prob(a, "a1") - 0.7285533905932737).abs() < 1e-12);
    assert!((prob(a, "b2") - 0.0214466094067262).abs() < 1e-12);
    assert_eq!(
        prob(a, "a2"),
        0.0,
        "destructive interference empties a2: {a}"
    );
    assert_eq!(a["state_size"], 3, "{a}");
    let dist = a["distribution"].as_object().expect("distribution");
    assert_eq!(dist.len(), 3, "{a}");
    let total: f64 = dist.values().map(|p| p.as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-12, "{a}");
}

#[test]
fn cantwell_interference_of_section_11_2() {
    // Game mode: a lone king on a1 each side (Black only shuffles its king).
    let moves = json!(["a1^a2b1", "h8h7", "a2^a1b2", "h7h8", "b1^a1b2"]);
    let from_fen = eval_one(&json!({
        "position": "7k/8/8/8/8/8/8/K7 w - - 0 1", "moves": moves, "seed": 1,
    }));
    assert_interference(&from_fen);
    assert!(
        from_fen["moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["applied"] == true),
        "{from_fen}"
    );
    assert_eq!(from_fen["pieces"]["a1"], "K");
    assert!(
        from_fen["pieces"].get("a2").is_none(),
        "a2 keeps no letter: {from_fen}"
    );
    // The same through a pieces object.
    let from_pieces = eval_one(&json!({
        "position": {"pieces": {"a1": "K", "h8": "k"}, "side_to_move": "w"}, "moves": moves, "seed": 1,
    }));
    assert_interference(&from_pieces);
    for key in [
        "probabilities",
        "distribution",
        "pieces",
        "state_size",
        "side_to_move",
        "status",
    ] {
        assert_eq!(from_fen[key], from_pieces[key], "{key}");
    }
    // Occupancy mode: layer-1 long-form moves on an occupied square of unknown type.
    let occupancy = eval_one(&json!({
        "variant": "cantwell", "mode": "occupancy",
        "position": {"pieces": {"a1": "?"}, "side_to_move": "w"},
        "moves": ["a1^a2b1:SPLIT_JUMP:BASIC", "a2^a1b2:SPLIT_JUMP:BASIC", "b1^a1b2:SPLIT_JUMP:BASIC"],
    }));
    assert_interference(&occupancy);
    assert_eq!(occupancy["pieces"]["a1"], "?");
}

#[test]
fn cantwell_probabilities_are_printed_in_full_precision() {
    let run = qchess(
        &["eval"],
        r#"{"position": "7k/8/8/8/8/8/8/K7 w - - 0 1", "moves": ["a1^a2b1", "h8h7", "a2^a1b2", "h7h8", "b1^a1b2"]}"#,
    );
    assert!(run.stdout.contains("0.72855339059327"), "{}", run.stdout);
    assert!(run.stdout.contains("0.0214466094067262"), "{}", run.stdout);
}

#[test]
fn cantwell_occupancy_mode_reads_unknown_types() {
    let a = eval_one(&json!({
        "variant": "cantwell", "mode": "occupancy",
        "position": {"pieces": {"e2": "P", "d4": "?"}, "side_to_move": "w"},
        "moves": ["d4^c6e6:SPLIT_JUMP:BASIC"],
    }));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["moves"][0]["applied"], true, "{a}");
    assert_eq!(prob(&a, "e2"), 1.0);
    assert_eq!(prob(&a, "d4"), 0.0);
    assert!((prob(&a, "c6") - 0.5).abs() <= 1e-15, "{a}");
    assert!((prob(&a, "e6") - 0.5).abs() <= 1e-15, "{a}");
    assert_eq!(a["state_size"], 2, "{a}");
    assert_eq!(a["distribution"]["e2 c6"], 0.5, "{a}");
    assert_eq!(a["pieces"]["c6"], "?", "occupancy mode tracks no types");
    assert_eq!(a["side_to_move"], "b");
    // Game mode needs every type: "?" is a position error of the whole line.
    let g = eval_one(&json!({
        "variant": "cantwell", "mode": "game",
        "position": {"pieces": {"e2": "P", "d4": "?", "e1": "K", "e8": "k"}},
    }));
    assert_error_shape(&g);
    assert_eq!(g["error"]["kind"], "position");
}

/// The answer with the `moves` and `history` reports left out: the resulting state only.
fn state_of(answer: &Value) -> Value {
    let mut a = answer.clone();
    let obj = a.as_object_mut().expect("an object");
    obj.remove("moves");
    a
}

#[test]
fn cantwell_bad_moves_are_reported_per_move_and_change_nothing() {
    let clean = eval_one(&json!({"moves": ["b1^a3c3", "e7e5", "a3b5"], "seed": 2}));
    let noisy = eval_one(&json!({
        "moves": ["zz", "b1^a3c3", "e7e9", "e2e5", "e7e5", "b1^a3c3:", "a3b5"], "seed": 2,
    }));
    assert_eq!(noisy["ok"], true, "{noisy}");
    let applied: Vec<bool> = noisy["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["applied"].as_bool().unwrap())
        .collect();
    assert_eq!(
        applied,
        [false, true, false, false, true, false, true],
        "{noisy}"
    );
    let m = &noisy["moves"];
    assert_eq!(m[0]["error"]["kind"], "notation");
    assert_eq!(m[0]["error"]["at"]["column"], 0);
    assert_eq!(m[2]["error"]["kind"], "notation", "e9 is not a square");
    assert_eq!(m[3]["error"]["kind"], "illegal_move");
    for i in [0, 2, 3, 5] {
        assert!(
            m[i]["error"]["message"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{}",
            m[i]
        );
        assert!(m[i]["outcome"].is_null());
    }
    assert_eq!(
        state_of(&clean),
        state_of(&noisy),
        "refused moves change nothing"
    );
}

#[test]
fn cantwell_same_seed_same_answer_and_the_seed_drives_measurements() {
    // g1^f3h3, e7e5, then the capture jump f3e5 measures "is the knight on f3".
    let request =
        |seed: u64| json!({"moves": ["g1^f3h3", "e7e5", "f3e5"], "seed": seed}).to_string();
    let twice = qchess(&["eval"], &format!("{}\n{}\n", request(5), request(5)));
    let lines: Vec<&str> = twice.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1], "same seed, same bytes");
    let again = qchess(&["eval"], &format!("{}\n", request(5)));
    assert_eq!(
        again.stdout.lines().next(),
        Some(lines[0]),
        "and across processes"
    );

    let seeds: Vec<String> = (0..16).map(request).collect();
    let answers = eval_lines(&seeds.iter().map(String::as_str).collect::<Vec<_>>());
    let mut seen = [false, false];
    for a in &answers {
        let m = &a["moves"][2];
        assert_eq!(m["applied"], true, "{a}");
        let outcome = m["outcome"]
            .as_u64()
            .expect("a measured move reports its outcome");
        seen[outcome as usize] = true;
        assert_eq!(m["notation"], format!("f3e5.m{outcome}"));
        assert_eq!(
            a["state_size"], 1,
            "the measurement collapses the split: {a}"
        );
        assert_eq!(prob(a, "e5"), 1.0);
        assert_eq!(prob(a, "f3"), 0.0);
        if outcome == 1 {
            assert_eq!(a["pieces"]["e5"], "N", "the knight captured: {a}");
            assert_eq!(prob(a, "h3"), 0.0);
        } else {
            assert_eq!(a["pieces"]["e5"], "p", "the knight was on h3: {a}");
            assert_eq!(a["pieces"]["h3"], "N");
            assert_eq!(prob(a, "h3"), 1.0);
        }
    }
    assert_eq!(
        seen,
        [true, true],
        "16 seeds give both outcomes of a 1/2 measurement"
    );
    // A forced outcome ignores the seed.
    for (forced, piece) in [("f3e5.m1", "N"), ("f3e5.m0", "p")] {
        for seed in [0, 1, 2] {
            let a = eval_one(&json!({"moves": ["g1^f3h3", "e7e5", forced], "seed": seed}));
            assert_eq!(a["pieces"]["e5"], piece, "{forced} seed {seed}: {a}");
        }
    }
}

#[test]
fn cantwell_a_captured_king_ends_the_game() {
    let a =
        eval_one(&json!({"position": "R3k3/8/8/8/8/8/8/4K3 w - - 0 1", "moves": ["a8e8", "e1e2"]}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["moves"][0]["applied"], true, "{a}");
    assert_eq!(a["status"], "white_wins", "{a}");
    assert_eq!(a["moves"][1]["applied"], false);
    assert_eq!(a["moves"][1]["error"]["kind"], "game_over", "{a}");
    assert_eq!(a["pieces"]["e8"], "R");
    assert_eq!(prob(&a, "a8"), 0.0);
}

#[test]
fn cantwell_bad_requests_are_line_errors() {
    for (request, kind, at) in [
        (json!({"position": "rnbqkbnr/8 w - - 0 1"}), "fen", None),
        (json!({"moves": [3]}), "request", Some(json!("moves[0]"))),
        (json!({"moves": "e2e4"}), "request", Some(json!("moves"))),
        (json!({"mode": "quantum"}), "request", Some(json!("mode"))),
        (json!({"seed": -1}), "request", Some(json!("seed"))),
        (json!({"position": 5}), "position", Some(json!("position"))),
    ] {
        let a = eval_one(&request);
        assert_error_shape(&a);
        assert_eq!(a["error"]["kind"], kind, "{request}: {a}");
        if let Some(at) = at {
            assert_eq!(a["error"]["at"], at, "{request}: {a}");
        }
    }
}

// ---------------------------------------------------------------- Niel's Chess

const FIG_4: &str = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1";

#[test]
fn niels_opening_superposition_and_errors() {
    let a = eval_one(&json!({
        "variant": "niels", "moves": ["e2e4", "b8^a6c6:oo", "e2e5", "zz", "a6c6"], "seed": 1,
    }));
    assert_eq!(a["ok"], true, "{a}");
    let m = &a["moves"];
    assert_eq!(m[0]["applied"], true);
    assert_eq!(m[0]["notation"], "e2e4");
    assert_eq!(m[1]["applied"], true);
    assert_eq!(m[2]["applied"], false);
    assert_eq!(m[2]["error"]["kind"], "illegal_move");
    assert_eq!(m[3]["error"]["kind"], "notation");
    assert_eq!(m[3]["error"]["at"]["column"], 0);
    assert_eq!(
        m[4]["applied"], false,
        "Black's half cannot move on White's turn"
    );
    assert_eq!(a["pieces"]["e4"], "P");
    assert!(
        a["pieces"].get("e2").is_none() && a["pieces"].get("b8").is_none(),
        "{a}"
    );
    let pairs = a["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 1, "{a}");
    let pair = &pairs[0];
    assert_eq!(
        (&pair["piece"], &pair["red"], &pair["blue"]),
        (&json!("n"), &json!("a6"), &json!("c6"))
    );
    assert_eq!(pair["kind"], "equal");
    assert_eq!(pair["probabilities"]["a6"], 0.5);
    assert_eq!(pair["probabilities"]["c6"], 0.5);
    let amp = pair["amplitudes"]["a6"].as_f64().unwrap();
    assert!(
        (amp - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15,
        "{pair}"
    );
    assert_eq!(a["side_to_move"], "w");
    assert_eq!(a["status"], "ongoing");
    assert_eq!(a["in_check"], false);
    assert!(a["position"].as_str().unwrap().contains("[nro|1]"), "{a}");
}

#[test]
fn niels_classical_legal_moves_match_perft() {
    let a = eval_one(&json!({"variant": "niels", "legal_moves": true}));
    let mut classical: Vec<String> = a["legal_moves"]
        .as_array()
        .expect("legal_moves listed")
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .filter(|m| m.chars().all(|c| c.is_ascii_alphanumeric()))
        .collect();
    classical.sort();
    let divide = qchess(&["perft", "--depth", "1", "--divide"], "");
    let mut perft: Vec<String> = divide
        .stdout
        .lines()
        .filter_map(|l| l.split_once(':').map(|(m, _)| m.trim().to_string()))
        .collect();
    perft.sort();
    assert_eq!(perft.len(), 20);
    assert_eq!(
        classical, perft,
        "the ordinary moves of the start are chess's 20"
    );
}

#[test]
fn niels_forced_and_seeded_dice() {
    // Schools paper Fig. 4-5: the pawn on f5 attempts to capture the rook pair on e6/d4. The
    // equal opponent-facing pair collapses to red (d4) on an even roll, to blue (e6) on odd.
    for (roll, captured, rook) in [(3, json!("r"), "e6"), (4, Value::Null, "d4")] {
        let a = eval_one(
            &json!({"variant": "niels", "position": FIG_4, "moves": ["f5e6"], "rolls": [[roll]]}),
        );
        let m = &a["moves"][0];
        assert_eq!(m["applied"], true, "{a}");
        assert_eq!(m["outcome"]["rolls"][0]["value"], roll);
        assert_eq!(m["outcome"]["captured"], captured, "roll {roll}: {a}");
        assert_eq!(
            m["outcome"]["collapses"][0]["square"], rook,
            "roll {roll}: {a}"
        );
        assert_eq!(a["pieces"]["e6"], "P");
        assert_eq!(a["pairs"], json!([]));
        assert_eq!(a["pieces"].get("d4").is_some(), rook == "d4");
    }
    let request = |seed: u64| {
        json!({"variant": "niels", "position": FIG_4, "moves": ["f5e6"], "seed": seed}).to_string()
    };
    let twice = qchess(&["eval"], &format!("{}\n{}\n", request(9), request(9)));
    let lines: Vec<&str> = twice.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1], "same seed, same answer");
    let seeds: Vec<String> = (0..12).map(request).collect();
    let answers = eval_lines(&seeds.iter().map(String::as_str).collect::<Vec<_>>());
    let mut parities = [false, false];
    for a in &answers {
        let m = &a["moves"][0]["outcome"];
        let roll = m["rolls"][0]["value"].as_u64().expect("a roll");
        assert!((1..=6).contains(&roll));
        parities[(roll % 2) as usize] = true;
        let expected = if roll % 2 == 1 {
            json!("r")
        } else {
            Value::Null
        };
        assert_eq!(m["captured"], expected, "roll {roll}: {a}");
        assert!(
            a["record"]
                .as_str()
                .unwrap()
                .contains(&format!("f5e6 [{roll}]")),
            "{a}"
        );
    }
    assert_eq!(parities, [true, true], "12 seeds roll both parities");
}

#[test]
fn niels_small_board_and_bad_requests() {
    let a = eval_one(
        &json!({"variant": "niels", "board": "5x6", "rules": ["simplified"], "moves": ["b1^a3c3:oo", "e5e4"]}),
    );
    assert_eq!(a["board"], "5x6");
    assert_eq!(a["rules"], json!(["simplified"]));
    assert_eq!(a["moves"][1]["applied"], true, "{a}");
    assert_eq!(a["pieces"]["e4"], "p");
    for (request, at) in [
        (
            json!({"variant": "niels", "rules": ["quantum"]}),
            json!("rules"),
        ),
        (json!({"variant": "niels", "board": "9x9"}), json!("board")),
        (
            json!({"variant": "niels", "moves": ["e2e4"], "rolls": [[7]]}),
            json!("rolls[0][0]"),
        ),
    ] {
        let e = eval_one(&request);
        assert_error_shape(&e);
        assert_eq!(e["error"]["at"], at, "{request}: {e}");
    }
    let e = eval_one(&json!({"variant": "niels", "position": "8/8 w - - 0 1"}));
    assert_error_shape(&e);
    assert_eq!(e["error"]["kind"], "fen");
}

// ---------------------------------------------------------------- Akl-style

#[test]
fn akl_opening_move_dark_squares_and_errors() {
    let a = eval_one(&json!({
        "variant": "akl", "seed": 4,
        "moves": ["<P|e2> -> e4", "<P|e2> -> e5", "e7 -> e9", "<P|e7> -> e5"],
    }));
    assert_eq!(a["ok"], true, "{a}");
    let m = &a["moves"];
    assert_eq!(m[0]["applied"], true);
    assert_eq!(m[0]["notation"], "<P|e2> -> e4");
    assert_eq!(m[0]["outcome"]["turn"], "moved");
    assert_eq!(m[1]["applied"], false);
    assert_eq!(m[1]["error"]["kind"], "illegal_move", "e2 is empty now");
    assert_eq!(m[2]["error"]["kind"], "notation");
    assert!(m[2]["error"]["at"]["column"].is_u64(), "{}", m[2]);
    assert_eq!(m[3]["applied"], true);
    assert_eq!(m[3]["notation"], "<P|e7> -> e5|psi>", "e5 is a dark square");
    // e4 is light: the pawn stays classical; e5 is dark: back in superposition.
    assert_eq!(a["pieces"]["e4"]["quantum"], false);
    assert_eq!(a["pieces"]["e4"]["type"], "P");
    assert_eq!(a["pieces"]["e5"]["quantum"], true);
    assert!(a["pieces"].get("e2").is_none());
    assert_eq!(a["side_to_move"], "w");
    assert_eq!(a["status"], "ongoing");
    assert_eq!(a["quiet_plies"], 0, "pawn moves reset the counter");
    let record = a["record"].as_str().unwrap();
    assert!(
        record.contains("<P|e2> -> e4") && record.contains("<P|e7> -> e5|psi>"),
        "{record}"
    );
}

#[test]
fn akl_seeded_setup_is_a_permutation_and_reproducible() {
    let standard = ["R", "N", "B", "Q", "B", "N", "R"];
    let mut positions = Vec::new();
    for seed in 0..6u64 {
        let a = eval_one(&json!({"variant": "akl", "seed": seed}));
        assert_eq!(
            a,
            eval_one(&json!({"variant": "akl", "seed": seed})),
            "seed {seed}"
        );
        for (color, back, front) in [("w", '1', '2'), ("b", '8', '7')] {
            let mut primaries = Vec::new();
            let mut secondaries = Vec::new();
            for (file, rank) in "abcdefgh".chars().flat_map(|f| [(f, back), (f, front)]) {
                let sq = format!("{file}{rank}");
                let p = &a["pieces"][&sq];
                assert_eq!(p["color"], color, "{sq}: {a}");
                if sq.starts_with('e') && rank == back {
                    assert_eq!(p["types"], json!(["K"]));
                    assert_eq!(p["quantum"], false);
                    continue;
                }
                assert_eq!(
                    p["quantum"], true,
                    "every non-king piece starts quantum: {sq}"
                );
                let types = p["types"].as_array().expect("types");
                assert_eq!(types.len(), 2, "{sq}: {p}");
                primaries.push(types[0].as_str().unwrap().to_string());
                secondaries.push(types[1].as_str().unwrap().to_string());
            }
            let mut expected: Vec<String> = standard.iter().map(|s| s.to_string()).collect();
            expected.extend(std::iter::repeat_n("P".to_string(), 8));
            expected.sort();
            primaries.sort();
            secondaries.sort();
            assert_eq!(
                primaries, expected,
                "seed {seed} {color}: primaries are the standard set"
            );
            assert_eq!(
                secondaries, expected,
                "seed {seed} {color}: secondaries permute them"
            );
        }
        positions.push(a["position"].clone());
    }
    positions.sort_by_key(|p| p.to_string());
    positions.dedup();
    assert!(positions.len() >= 2, "the seed draws the secondary types");
}

#[test]
fn akl_a_bare_touch_collapses_to_one_of_the_pair() {
    for seed in 0..4u64 {
        let before = eval_one(&json!({"variant": "akl", "seed": seed}));
        let types = before["pieces"]["g1"]["types"].clone();
        let a = eval_one(&json!({"variant": "akl", "seed": seed, "moves": ["g1"]}));
        let outcome = &a["moves"][0]["outcome"];
        assert_eq!(a["moves"][0]["applied"], true, "{a}");
        let collapse = &outcome["collapse"];
        assert!(
            types.as_array().unwrap().contains(collapse),
            "{collapse} not in {types}"
        );
        assert_eq!(a["pieces"]["g1"]["quantum"], false);
        assert_eq!(&a["pieces"]["g1"]["type"], collapse);
        if outcome["turn"] == "awaiting_move" {
            assert_eq!(a["pending"]["square"], "g1", "{a}");
            assert_eq!(a["side_to_move"], "w");
        }
    }
}

#[test]
fn akl_bad_requests_are_line_errors() {
    for (request, kind, at) in [
        (json!({"variant": "akl", "seed": -1}), "request", "seed"),
        (
            json!({"variant": "akl", "moves": "e2e4"}),
            "request",
            "moves",
        ),
        (
            json!({"variant": "akl", "position": "8/8 w"}),
            "position",
            "position",
        ),
        (
            json!({"variant": "akl", "visibility": "all"}),
            "request",
            "visibility",
        ),
    ] {
        let a = eval_one(&request);
        assert_error_shape(&a);
        assert_eq!(
            (&a["error"]["kind"], &a["error"]["at"]),
            (&json!(kind), &json!(at)),
            "{request}"
        );
    }
}
