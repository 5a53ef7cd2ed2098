//! Akl's hidden information: every answer the server gives Black is inspected for White's
//! secret secondary types, in whole games played through the API by both sides.

mod common;

use common::{create, get, mv, start};
use qchess_akl::GameRecord;
use qchess_board::Color;
use qchess_web::Limits;
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use serde_json::Value;

/// Inspects one answer to Black: no piece of White may carry a type Black was not shown.
/// `truth` is White's own view (under `own-pairs` it holds both types of each White piece).
fn inspect(answer: &Value, text: &str, truth: &Value, white_token: &str) {
    assert!(!text.contains(white_token), "White's token sent to Black");
    assert!(
        !text.contains("\"types\""),
        "true types sent to Black: {text}"
    );
    assert!(
        !text.contains("[Position"),
        "the secret start position sent to Black"
    );
    let Some(pieces) = answer.get("pieces").and_then(Value::as_object) else {
        return;
    };
    assert_eq!(answer["viewer"], "b");
    for (sq, p) in pieces {
        if p["color"] != "w" || !p["quantum"].as_bool().unwrap() {
            continue;
        }
        let known: Vec<&str> = p["known"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        let pair = &truth["pieces"][sq]["pair"];
        let pair: Vec<&str> = pair
            .as_array()
            .expect("White knows its pairs under own-pairs")
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        // Black knows the public primary type, and what collapses revealed: a subset.
        assert!(
            known.iter().all(|k| pair.contains(k)),
            "{sq}: {known:?} not in {pair:?}"
        );
        if known.len() < 2 && pair[0] != pair[1] {
            assert!(
                p["pair"].is_null(),
                "{sq}: White's secret pair {pair:?} sent to Black"
            );
            let secret: Vec<&&str> = pair.iter().filter(|t| !known.contains(t)).collect();
            assert_eq!(secret.len(), 1);
            let entry = p.to_string();
            assert!(
                !entry.contains(&format!("\"{}\"", secret[0])),
                "{sq}: secret type {} in {entry}",
                secret[0]
            );
        }
    }
}

fn play_one_game(seed: u64) -> (usize, bool) {
    let addr = start(Limits::default());
    let (id, w, b, _) = create(addr, r#"{"variant": "akl", "rules": ["own-pairs"]}"#);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut answers_to_black = 0;
    let mut first_black_view = None;
    for _ply in 0..400 {
        let truth = get(addr, &format!("/api/games/{id}?token={w}")).body;
        let seen = get(addr, &format!("/api/games/{id}?token={b}"));
        inspect(&seen.body, &seen.text, &truth, &w);
        answers_to_black += 1;
        first_black_view.get_or_insert(seen.body.clone());
        if truth["status"] != "ongoing" {
            break;
        }
        let (token, side) = if truth["side_to_move"] == "w" {
            (&w, "w")
        } else {
            (&b, "b")
        };
        let legal = get(addr, &format!("/api/games/{id}/legal?token={token}")).body;
        let touch: Vec<String> = legal["touchable"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let sq = touch.choose(&mut rng).expect("a piece to touch").clone();
        let a = mv(addr, &id, token, &sq);
        assert_eq!(a.status, 200, "{}", a.text);
        if side == "b" {
            inspect(
                &a.body["state"],
                &a.text,
                &get(addr, &format!("/api/games/{id}?token={w}")).body,
                &w,
            );
            answers_to_black += 1;
        }
        let legal = get(addr, &format!("/api/games/{id}/legal?token={token}"));
        if side == "b" {
            inspect(&legal.body, &legal.text, &truth, &w);
        }
        let moves: Vec<String> = legal.body["legal_moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        if let Some(m) = moves.choose(&mut rng) {
            let a = mv(addr, &id, token, m);
            assert_eq!(a.status, 200, "{}", a.text);
            if side == "b" {
                inspect(
                    &a.body["state"],
                    &a.text,
                    &get(addr, &format!("/api/games/{id}?token={w}")).body,
                    &w,
                );
                answers_to_black += 1;
            }
        }
        let rec = get(addr, &format!("/api/games/{id}/record"));
        if rec.body["complete"] == false {
            assert!(
                !rec.text.contains("[Position"),
                "the start position published while the game goes on"
            );
        }
    }
    // The game over, the whole record is published: check against it that Black's first
    // view really lacked White's secondary types (they are real and mostly differ).
    let rec = get(addr, &format!("/api/games/{id}/record")).body;
    let first = first_black_view.unwrap();
    if rec["complete"] == true {
        let record = GameRecord::parse(rec["record"].as_str().unwrap()).unwrap();
        let mut differing = 0;
        for (sq, p) in record.start.pieces() {
            if p.color != Color::White || p.is_king() {
                continue;
            }
            let seen = &first["pieces"][sq.to_string()];
            let primary = p.pair.primary.to_char().to_ascii_uppercase().to_string();
            let secondary = p.pair.secondary.to_char().to_ascii_uppercase().to_string();
            assert_eq!(seen["known"], serde_json::json!([primary]));
            assert!(seen["pair"].is_null());
            if secondary != primary {
                differing += 1;
            }
        }
        assert!(differing > 0);
    }
    (answers_to_black, rec["complete"] == true)
}

#[test]
fn black_never_sees_whites_secret_types() {
    let mut total = 0;
    let mut finished = 0;
    for seed in 0..3 {
        let (answers, over) = play_one_game(seed);
        total += answers;
        finished += usize::from(over);
    }
    assert!(total > 30, "only {total} answers inspected");
    assert!(
        finished > 0,
        "no game ended: the start position was never checked"
    );
    println!("{total} answers to Black inspected, {finished} of 3 games finished");
}
