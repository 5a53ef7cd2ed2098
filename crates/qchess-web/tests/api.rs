//! The JSON API over a real socket on 127.0.0.1.

mod common;

use common::{create, get, mv, post, start};
use qchess_web::Limits;
use serde_json::Value;

fn prob(state: &Value, sq: &str) -> f64 {
    state["probabilities"][sq].as_f64().unwrap_or(0.0)
}

#[test]
fn cantwell_create_split_errors_undo_and_record() {
    let addr = start(Limits::default());
    let (id, w, b, created) = create(addr, r#"{"variant": "cantwell"}"#);
    assert_eq!(id.len(), 16);
    assert_eq!(w.len(), 32);
    assert_ne!(w, b);
    let state = &created.body["state"];
    assert_eq!(state["probabilities"].as_object().unwrap().len(), 32);
    assert!(
        state["probabilities"]
            .as_object()
            .unwrap()
            .values()
            .all(|p| p == 1.0)
    );
    assert_eq!(state["state_size"], 1);
    assert_eq!(state["side_to_move"], "w");

    // Tokens: none 401, a wrong one 403, an unknown game 404.
    let a = get(addr, &format!("/api/games/{id}"));
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (401, Some("unauthorized"))
    );
    let a = get(addr, &format!("/api/games/{id}?token={}", "0".repeat(32)));
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (403, Some("forbidden"))
    );
    let a = get(addr, &format!("/api/games/ffff?token={w}"));
    assert_eq!(a.status, 404);
    assert_eq!(a.body["ok"], false);

    // Legal moves: White's include the knight split; Black has none while White moves.
    let legal = get(addr, &format!("/api/games/{id}/legal?token={w}"));
    let list: Vec<&str> = legal.body["legal_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        list.contains(&"e2e4") && list.contains(&"b1^a3c3"),
        "{list:?}"
    );
    let legal = get(addr, &format!("/api/games/{id}/legal?token={b}"));
    assert_eq!(legal.body["legal_moves"].as_array().unwrap().len(), 0);

    // Black may not move for White; an illegal move is `illegal_move` and changes nothing.
    let a = mv(addr, &id, &b, "e7e5");
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (409, Some("not_your_turn"))
    );
    let a = mv(addr, &id, &w, "e2e5");
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (422, Some("illegal_move")),
        "{}",
        a.text
    );
    let a = mv(addr, &id, &w, "zz");
    assert_eq!(a.body["error"]["kind"], "notation");
    let a = post(
        addr,
        &format!("/api/games/{id}/moves?token={w}"),
        "{not json",
    );
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (400, Some("json"))
    );
    let a = post(
        addr,
        &format!("/api/games/{id}/moves?token={w}"),
        r#"{"move": 3}"#,
    );
    assert_eq!(a.body["error"]["at"], "move");

    // The knight split: both targets at exactly 1/2, two basis states.
    let a = mv(addr, &id, &w, "b1^a3c3");
    assert_eq!(a.status, 200, "{}", a.text);
    let s = &a.body["state"];
    assert_eq!(prob(s, "a3"), 0.5);
    assert_eq!(prob(s, "c3"), 0.5);
    assert_eq!(prob(s, "b1"), 0.0);
    assert_eq!(s["state_size"], 2);
    assert_eq!(s["history"], serde_json::json!(["b1^a3c3"]));
    assert_eq!(s["side_to_move"], "b");
    // Black sees the same state (nothing is hidden in Cantwell chess).
    let seen = get(addr, &format!("/api/games/{id}?token={b}"));
    assert_eq!(seen.body["probabilities"], s["probabilities"]);
    let bell = get(addr, &format!("/api/games/{id}/bell?token={b}&a=a3&b=c3"));
    // The split leaves a3, c3 in a Bell state: Psi+ (the crate's psi0) has overlap 1.
    assert!(
        (bell.body["psi"][0].as_f64().unwrap() - 1.0).abs() < 1e-12,
        "{}",
        bell.text
    );
    assert_eq!(bell.body["phi"], serde_json::json!([0.0, 0.0, 0.0, 0.0]));
    assert_eq!(mv(addr, &id, &b, "e7e5").status, 200);

    // The record replays into a new game with the same numbers.
    let rec = get(addr, &format!("/api/games/{id}/record"));
    assert_eq!(rec.body["complete"], true);
    let body = serde_json::json!({"variant": "cantwell", "record": rec.body["record"]}).to_string();
    let (_, _, _, imported) = create(addr, &body);
    assert_eq!(
        imported.body["state"]["probabilities"],
        get(addr, &format!("/api/games/{id}?token={w}")).body["probabilities"]
    );
    assert_eq!(
        imported.body["state"]["history"],
        serde_json::json!(["b1^a3c3", "e7e5"])
    );

    // Undo twice: back to the start.
    for _ in 0..2 {
        let a = post(addr, &format!("/api/games/{id}/undo?token={w}"), "{}");
        assert_eq!(a.status, 200, "{}", a.text);
    }
    let s = get(addr, &format!("/api/games/{id}?token={w}")).body;
    assert_eq!(prob(&s, "b1"), 1.0);
    assert_eq!(s["state_size"], 1);
    let a = post(addr, &format!("/api/games/{id}/undo?token={w}"), "{}");
    assert_eq!(a.body["error"]["kind"], "undo");
}

#[test]
fn bad_new_games_are_refused_with_the_field() {
    let addr = start(Limits::default());
    for (body, at) in [
        (r#"{}"#, "variant"),
        (r#"{"variant": "chess960"}"#, "variant"),
        (r#"{"variant": "cantwell", "board": "5x6"}"#, "board"),
        (r#"{"variant": "niels", "rules": ["quantum"]}"#, "rules"),
        (
            r#"{"variant": "niels", "opponent": "engine:level=9"}"#,
            "opponent",
        ),
        (
            r#"{"variant": "niels", "opponent": "stockfish"}"#,
            "opponent",
        ),
        (r#"{"variant": "akl", "rules": "secret"}"#, "rules"),
        (r#"{"variant": "cantwell", "record": "{}"}"#, "record"),
    ] {
        let a = post(addr, "/api/games", body);
        assert_eq!(a.status, 400, "{body}: {}", a.text);
        assert_eq!(a.body["error"]["at"], at, "{body}: {}", a.text);
    }
    let a = post(addr, "/api/games", "[1]");
    assert_eq!(a.body["error"]["kind"], "request");
}

#[test]
fn limits_body_size_game_count_and_memory() {
    let limits = Limits {
        max_games: 2,
        // 2 games share 960 bytes: a game's superposition may hold 10 basis states.
        memory: 960,
        body_bytes: 1024,
        ..Limits::default()
    };
    let addr = start(limits);
    let big = format!(
        r#"{{"variant": "cantwell", "record": "{}"}}"#,
        "x".repeat(4000)
    );
    assert_eq!(post(addr, "/api/games", &big).status, 413);
    let (id, w, b, _) = create(addr, r#"{"variant": "cantwell"}"#);
    create(addr, r#"{"variant": "niels"}"#);
    let a = post(addr, "/api/games", r#"{"variant": "akl"}"#);
    assert_eq!(
        (a.status, a.body["error"]["kind"].as_str()),
        (503, Some("capacity"))
    );
    // Splits double the superposition until the game's share of the budget refuses one; the
    // refused move changes nothing and the server keeps serving.
    let splits = [
        ("b1^a3c3", &w),
        ("b8^a6c6", &b),
        ("g1^f3h3", &w),
        ("g8^f6h6", &b),
        ("c3^b5d5", &w),
        ("c6^b4d4", &b),
        ("f3^e5g5", &w),
        ("f6^e4g4", &b),
        ("a3^b5c4", &w),
    ];
    let mut refused = None;
    for (m, token) in splits {
        let a = mv(addr, &id, token, m);
        if a.status != 200 {
            refused = Some(a);
            break;
        }
    }
    let refused = refused.expect("the memory cap refused a split");
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.body["error"]["kind"], "simulation",
        "{}",
        refused.text
    );
    let s = get(addr, &format!("/api/games/{id}?token={w}")).body;
    assert!(s["state_size"].as_u64().unwrap() <= 10);
    assert_eq!(get(addr, "/").status, 200);
}

#[test]
fn idle_games_expire() {
    let limits = Limits {
        idle: std::time::Duration::from_millis(300),
        ..Limits::default()
    };
    let addr = start(limits);
    let (id, w, _, _) = create(addr, r#"{"variant": "niels"}"#);
    assert_eq!(get(addr, &format!("/api/games/{id}?token={w}")).status, 200);
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert_eq!(get(addr, &format!("/api/games/{id}?token={w}")).status, 404);
}

#[test]
fn niels_moves_dice_random_opponent_and_record() {
    let addr = start(Limits::default());
    let (id, w, b, created) = create(
        addr,
        r#"{"variant": "niels", "board": "5x6", "rules": ["simplified"]}"#,
    );
    assert_eq!(created.body["state"]["board"], "5x6");
    let a = mv(addr, &id, &w, "b1^a3c3:oo");
    assert_eq!(a.status, 200, "{}", a.text);
    let pair = &a.body["state"]["pairs"][0];
    assert_eq!(pair["probabilities"]["a3"], 0.5);
    assert_eq!(pair["probabilities"]["c3"], 0.5);
    let a = mv(addr, &id, &b, "b1^a3c3:po");
    assert_eq!(a.body["error"]["kind"], "illegal_move");
    let a = post(
        addr,
        &format!("/api/games/{id}/moves?token={b}"),
        r#"{"move": "e5e4", "rolls": [9]}"#,
    );
    assert_eq!(a.body["error"]["at"], "rolls[0]");
    assert_eq!(mv(addr, &id, &b, "e5e4").status, 200);
    let rec = get(addr, &format!("/api/games/{id}/record")).body;
    let (_, _, _, imported) = create(
        addr,
        &serde_json::json!({"variant": "niels", "record": rec["record"]}).to_string(),
    );
    assert_eq!(
        imported.body["state"]["position"],
        get(addr, &format!("/api/games/{id}?token={w}")).body["position"]
    );

    // Against the random mover: each move is answered at once.
    let (id, w, _, _) = create(addr, r#"{"variant": "niels", "opponent": "random"}"#);
    let a = mv(addr, &id, &w, "e2e4");
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.body["state"]["history"].as_array().unwrap().len(), 2);
    assert_eq!(a.body["state"]["last"].as_array().unwrap().len(), 2);
    assert_eq!(a.body["state"]["side_to_move"], "w");
    // Undo takes back the reply too.
    let a = post(addr, &format!("/api/games/{id}/undo?token={w}"), "");
    assert_eq!(
        a.body["state"]["history"].as_array().unwrap().len(),
        0,
        "{}",
        a.text
    );
}

#[test]
fn the_engine_answers_in_every_variant() {
    let addr = start(Limits::default());
    for variant in ["cantwell", "niels"] {
        let body = format!(r#"{{"variant": "{variant}", "opponent": "engine:level=1"}}"#);
        let (id, w, _, created) = create(addr, &body);
        assert_eq!(created.body["state"]["opponent"], "engine");
        assert_eq!(created.body["state"]["level"], 1);
        let a = mv(addr, &id, &w, "e2e4");
        assert_eq!(a.status, 200, "{variant}: {}", a.text);
        let state = &a.body["state"];
        assert_eq!(
            state["history"].as_array().unwrap().len(),
            2,
            "{variant}: {state}"
        );
        assert_eq!(state["last"][1]["applied"], true, "{variant}: {state}");
        assert_eq!(state["side_to_move"], "w");
        // Undo takes back the engine's reply too.
        let a = post(addr, &format!("/api/games/{id}/undo?token={w}"), "{}");
        assert_eq!(
            a.body["state"]["history"].as_array().unwrap().len(),
            0,
            "{}",
            a.text
        );
    }
    // "engine" alone is level 3. In Akl the engine plays White here: it touches and moves at
    // once, from its own view, and Black's state shows only what Black may know.
    let (id, _, b, created) = create(
        addr,
        r#"{"variant": "akl", "opponent": "engine", "color": "black"}"#,
    );
    let state = &created.body["state"];
    assert_eq!(state["level"], 3);
    assert_eq!(state["you"], "black", "{state}");
    assert_eq!(state["side_to_move"], "b", "{state}");
    assert_eq!(state["history"].as_array().unwrap().len(), 1, "{state}");
    let legal = get(addr, &format!("/api/games/{id}/legal?token={b}"));
    assert!(
        !legal.body["touchable"].as_array().unwrap().is_empty(),
        "{}",
        legal.text
    );
}
