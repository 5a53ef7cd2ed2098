//! `qchess engine` through a pipe: the exact protocol lines of issue 12 (handshake, options,
//! positions with outcomes attached, go, stop, quit), bad input answered with
//! `info string error: ...` while the engine keeps running, and every `bestmove` accepted by
//! `qchess eval` as one entry of "moves".

use serde_json::{Value, json};

use crate::common;
use common::qchess_bytes;

/// Runs `qchess engine` on `lines` as a GUI would: after a `go` that is not `infinite` it
/// waits for the `bestmove` before sending the next line (a `quit` sent during a search ends
/// it at once), or for the error that refuses it. Returns the output lines; fails after 60 s.
fn engine(lines: &[&str]) -> Vec<String> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    let mut child = Command::new(env!("CARGO_BIN_EXE_qchess"))
        .arg("engine")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the qchess binary starts");
    let mut input = child.stdin.take().expect("piped stdin");
    let output = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut out = Vec::new();
    for line in lines {
        // A closed pipe (the engine quit) is not an error here.
        let _ = writeln!(input, "{line}");
        let _ = input.flush();
        if line.starts_with("go") && !line.contains("infinite") {
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let got = rx.recv_timeout(left).expect("a bestmove within 60 s");
                // A refused `go` answers with an error instead.
                let done = got.starts_with("bestmove ") || got.starts_with("info string error: ");
                out.push(got);
                if done {
                    break;
                }
            }
        }
    }
    drop(input);
    let status = child.wait().expect("qchess engine ends");
    reader.join().expect("reader");
    out.extend(rx.try_iter());
    assert!(status.success(), "qchess engine failed: {status:?}");
    out
}

fn bestmoves(out: &[String]) -> Vec<String> {
    out.iter()
        .filter_map(|l| l.strip_prefix("bestmove ").map(str::to_string))
        .collect()
}

fn eval(request: Value) -> Value {
    let run = qchess_bytes(&["eval"], format!("{request}\n").as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    serde_json::from_str(run.stdout.trim()).unwrap()
}

#[test]
fn the_handshake_is_exactly_the_issues_lines() {
    let out = engine(&["uci", "isready", "quit"]);
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        out,
        vec![
            format!("id name qchess {version}"),
            "id author qchess developers".to_string(),
            "option name UCI_Variant type combo default cantwell var cantwell var niels var akl"
                .to_string(),
            "option name Rules type string default <empty>".to_string(),
            "option name Board type string default 8x8".to_string(),
            "option name Level type spin default 3 min 1 max 5".to_string(),
            "option name Seed type spin default 0 min 0 max 9223372036854775807".to_string(),
            "uciok".to_string(),
            "readyok".to_string(),
        ]
    );
}

#[test]
fn bad_input_is_answered_and_the_engine_keeps_running() {
    let out = engine(&[
        "hello",
        "setoption name Level value 9",
        "setoption name Nonsense value 1",
        "setoption name UCI_Variant value chess",
        "setoption value 3",
        "setoption name Board value 5x6",
        "position sideways",
        "position startpos moves e2e5",
        "position fen not-a-fen",
        "go depth",
        "go sideways 3",
        "isready",
        // The refused position changed nothing: the engine still plays from the start.
        "go depth 1",
        "quit",
    ]);
    let errors: Vec<&String> = out
        .iter()
        .filter(|l| l.starts_with("info string error: "))
        .collect();
    assert_eq!(errors.len(), 11, "{out:?}");
    assert!(
        errors[0].contains("unknown command \"hello\""),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("Level must be 1..5"), "{}", errors[1]);
    assert!(errors[7].contains("e2e5"), "{}", errors[7]);
    assert!(out.contains(&"readyok".to_string()));
    let best = bestmoves(&out);
    assert_eq!(best.len(), 1, "{out:?}");
    let v = eval(json!({"variant": "cantwell", "moves": [best[0]]}));
    assert_eq!(v["moves"][0]["applied"], true, "{v}");
}

#[test]
fn cantwell_moves_carry_their_measurement_and_bestmove_is_an_eval_entry() {
    // The knight splits, a pawn comes to d5, and the capture from c3 measures: .m0 (the
    // knight was not on c3) is replayed exactly.
    let moves = ["b1^a3c3", "d7d5", "c3d5.m0", "e7e6"];
    let position = format!("position startpos moves {}", moves.join(" "));
    let out = engine(&[
        "setoption name UCI_Variant value cantwell",
        &position,
        "go depth 2",
        "quit",
    ]);
    let info: Vec<&String> = out
        .iter()
        .filter(|l| l.starts_with("info depth "))
        .collect();
    assert_eq!(info.len(), 2, "{out:?}");
    for (d, l) in info.iter().enumerate() {
        assert!(
            l.starts_with(&format!("info depth {} score cp ", d + 1)),
            "{l}"
        );
        assert!(
            l.contains(" nodes ") && l.contains(" nps ") && l.contains(" pv "),
            "{l}"
        );
    }
    let best = bestmoves(&out);
    assert_eq!(best.len(), 1);
    let mut all: Vec<&str> = moves.to_vec();
    all.push(&best[0]);
    let v = eval(json!({"variant": "cantwell", "moves": all}));
    for i in 0..all.len() {
        assert_eq!(v["moves"][i]["applied"], true, "{v}");
    }
    assert_eq!(v["moves"][2]["notation"], "c3d5.m0", "{v}");
}

#[test]
fn niels_rolls_ride_on_the_move_and_bestmove_is_an_eval_entry() {
    // Schools paper Fig. 4-5: the pawn on f5 attempts to capture the rook pair; Black rolls 3.
    let fen = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1";
    let position = format!("position fen {fen} moves f5e6[3]");
    let out = engine(&[
        "setoption name UCI_Variant value niels",
        &position,
        "go depth 1",
        "quit",
    ]);
    let best = bestmoves(&out);
    assert_eq!(best.len(), 1, "{out:?}");
    let v = eval(json!({"variant": "niels", "position": fen, "moves": ["f5e6[3]", best[0]]}));
    assert_eq!(v["moves"][0]["applied"], true, "{v}");
    assert_eq!(v["moves"][0]["outcome"]["captured"], "r", "{v}");
    assert_eq!(v["moves"][1]["applied"], true, "{v}");
    // A wrong roll count in the token is refused and named.
    let out = engine(&[
        "setoption name UCI_Variant value niels",
        &format!("position fen {fen} moves f5e6[3,4]"),
        "quit",
    ]);
    assert!(
        out[0].starts_with("info string error: move 1 \"f5e6[3,4]\""),
        "{out:?}"
    );
}

#[test]
fn akl_views_with_unseen_types_are_positions_and_turns_finish_in_two_answers() {
    // White's view: own pieces and Black's with only their public primary types.
    let view = "(r?)(n?)(b?)(q?)k(b?)(n?)(r?)/(p?)(p?)(p?)(p?)(p?)(p?)(p?)(p?)/8/8/8/8/(P?)(P?)(P?)(P?)(P?)(P?)(P?)(P?)/(R?)(N?)(B?)(Q?)K(B?)(N?)(R?) w KQkq 0 1";
    let out = engine(&[
        "setoption name UCI_Variant value akl",
        "setoption name Seed value 3",
        &format!("position fen {view}"),
        "go depth 1",
        // The runner touched g1 and it collapsed to a knight: the view after the touch, then
        // the touched square.
        &format!(
            "position fen {} moves g1",
            view.replace("K(B?)(N?)(R?)", "K(B?)[N*?](R?)")
                .replace(" KQkq ", " Qkq ")
        ),
        "go depth 1",
        "quit",
    ]);
    let best = bestmoves(&out);
    assert_eq!(best.len(), 2, "{out:?}");
    // The first answer touches a piece: eval takes it as an entry of the view.
    let v = eval(json!({"variant": "akl", "position": view, "seed": 3, "moves": [best[0]]}));
    assert_eq!(v["moves"][0]["applied"], true, "{v}");
    // The second moves the touched knight: a whole turn entry.
    assert!(best[1].starts_with("g1->"), "{}", best[1]);
    let v =
        eval(json!({"variant": "akl", "position": view, "seed": 3, "moves": ["<N|g1>", best[1]]}));
    assert_eq!(v["moves"][1]["applied"], true, "{v}");
}

#[test]
fn stop_ends_an_infinite_search_with_a_bestmove_and_quit_ends_the_process() {
    let out = engine(&[
        "position startpos",
        "go infinite",
        "isready",
        "stop",
        "quit",
    ]);
    assert!(out.contains(&"readyok".to_string()));
    assert_eq!(bestmoves(&out).len(), 1, "{out:?}");
    let out = engine(&["go movetime 100 depth 64", "quit"]);
    assert_eq!(bestmoves(&out).len(), 1, "{out:?}");
    // Input after quit is not read.
    let out = engine(&["quit", "uci"]);
    assert!(out.is_empty(), "{out:?}");
}
