//! End-to-end tests of `qchess render` and `qchess plot` through the real binary: the SVG
//! files they write are parsed back as XML.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::common;
use common::{Run, qchess_bytes};

fn qchess(args: &[&str], stdin: &str) -> Run {
    qchess_bytes(args, stdin.as_bytes())
}

/// A fresh path in the target directory's temporary folder.
fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_render_plot");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// square -> (attributes, texts) of every `data-square` element.
type Squares = BTreeMap<String, (BTreeMap<String, String>, Vec<String>)>;

fn squares(svg: &str) -> Squares {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    doc.descendants()
        .filter(|n| n.has_attribute("data-square"))
        .map(|n| {
            let attrs = n
                .attributes()
                .map(|a| (a.name().to_string(), a.value().to_string()))
                .collect();
            let texts = n
                .descendants()
                .filter(|t| t.has_tag_name("text"))
                .filter_map(|t| t.text().map(str::to_string))
                .collect();
            (
                n.attribute("data-square").unwrap().to_string(),
                (attrs, texts),
            )
        })
        .collect()
}

/// Runs `qchess eval` on one request and returns the answer line.
fn eval(request: &str) -> String {
    let run = qchess(&["eval"], request);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout
}

/// Renders `input` (given on stdin) with `extra` flags; returns the SVG.
fn render(input: &str, name: &str, extra: &[&str]) -> String {
    let out = temp(name);
    let mut args = vec!["render", "--input", "-", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let run = qchess(&args, input);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn render_a_split_knight_from_an_eval_answer() {
    let answer = eval(r#"{"moves": ["b1^a3c3"]}"#);
    let all = squares(&render(&answer, "split.svg", &[]));
    assert_eq!(all.len(), 64);
    let half: Vec<_> = all
        .iter()
        .filter(|(_, (a, _))| a["data-probability"].parse::<f64>().unwrap() == 0.5)
        .collect();
    assert_eq!(half.len(), 2);
    for (sq, (attrs, texts)) in half {
        assert!(sq == "a3" || sq == "c3");
        assert_eq!(attrs["data-piece"], "N");
        assert!(texts.contains(&"50%".to_string()), "{texts:?}");
    }
    assert_eq!(all["b1"].0["data-probability"], "0");
    let full = all
        .values()
        .filter(|(a, _)| a["data-probability"] == "1")
        .count();
    assert_eq!(full, 31);
}

#[test]
fn render_a_serialised_position_a_fen_and_the_chosen_line() {
    use rand::SeedableRng;
    let mut game = qchess_cantwell::Game::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    game.apply("g1^f3h3", &mut rng).unwrap();
    let all = squares(&render(&game.position().to_json(), "pos.svg", &[]));
    assert_eq!(all["f3"].0["data-probability"], "0.5");
    assert_eq!(all["h3"].0["data-probability"], "0.5");

    let fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1";
    let all = squares(&render(fen, "fen.svg", &[]));
    let occupied: Vec<_> = all
        .iter()
        .filter(|(_, (a, _))| a["data-probability"] == "1")
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(occupied, vec!["e1", "e8", "h1"]);

    // Two answers: --line 2 draws the second.
    let two = format!(
        "{}{}",
        eval(r#"{"moves": []}"#),
        eval(r#"{"moves": ["b1^a3c3"]}"#)
    );
    let first = squares(&render(&two, "l1.svg", &[]));
    let second = squares(&render(&two, "l2.svg", &["--line", "2"]));
    assert_eq!(first["a3"].0["data-probability"], "0");
    assert_eq!(second["a3"].0["data-probability"], "0.5");
}

#[test]
fn render_niels_and_akl_answers() {
    let answer = eval(
        r#"{"variant": "niels", "position": "4k3/8/4[rro|1]3/8/3[rbp|1]4/8/8/4K3 w - - 0 1"}"#,
    );
    let all = squares(&render(&answer, "niels.svg", &[]));
    assert_eq!(all["e6"].0["data-mark"], "red");
    assert_eq!(
        all["e6"].0["data-probability"].parse::<f64>().unwrap(),
        4.0 / 6.0
    );
    assert_eq!(all["d4"].0["data-facing"], "owner");
    // Under the Hadamard rules an unequal pair is an equal one with a phase: 1/2 each.
    let had = squares(&render(&answer, "niels-h.svg", &["--rules", "hadamard"]));
    assert_eq!(had["e6"].0["data-probability"], "0.5");

    let answer = eval(r#"{"variant": "akl", "seed": 4, "moves": ["<P|e2> -> e4"]}"#);
    let all = squares(&render(&answer, "akl.svg", &["--viewer", "black"]));
    assert_eq!(all["e4"].0["data-known"], "P");
    // e4 is a light square: the pawn stays collapsed there.
    assert_eq!(all["e4"].0["data-state"], "classical");
    assert!(!all["e4"].0.contains_key("data-dark"));
    assert_eq!(all["e1"].0["data-known"], "K");
    let own = squares(&render(
        &answer,
        "akl-own.svg",
        &["--visibility", "own-pairs", "--viewer", "white"],
    ));
    assert_eq!(own["d1"].0["data-known"].len(), 2);
    assert_eq!(all["d1"].0["data-known"], "Q");
}

#[test]
fn render_refuses_bad_input_without_writing() {
    let out = temp("bad.svg");
    let o = out.to_str().unwrap();
    let cases: [(&[&str], &str, &str); 6] = [
        (&["--input", "-", "--out", o], "", "empty"),
        (&["--input", "-", "--out", o], "not a fen", "not a FEN"),
        (
            &["--input", "-", "--out", o],
            r#"{"ok": false, "error": {"kind": "json", "message": "boom", "at": null}}"#,
            "the eval answer is an error",
        ),
        (
            &["--input", "-", "--out", o, "--line", "3"],
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "--line 3",
        ),
        (
            &["--input", "-", "--out", o],
            r#"{"x": 1}"#,
            "not a position or eval answer",
        ),
        (
            &["--input", "/nonexistent/qchess", "--out", o],
            "",
            "cannot read",
        ),
    ];
    for (args, stdin, message) in cases {
        let mut full = vec!["render"];
        full.extend_from_slice(args);
        let run = qchess(&full, stdin);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
        assert!(!out.exists());
    }
    let png = temp("bad.png");
    let run = qchess(
        &["render", "--input", "-", "--out", png.to_str().unwrap()],
        "8/8/8/8/8/8/8/8 w - - 0 1",
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("only SVG"), "{}", run.stderr);
    assert!(!png.exists());
}

#[test]
fn plot_draws_bench_lines() {
    let mut lines = String::new();
    for (op, states, threads) in [
        ("split", "1000", "1"),
        ("split", "4000", "1"),
        ("iswap", "1000", "2"),
    ] {
        let run = qchess(
            &[
                "bench",
                "sim",
                "--op",
                op,
                "--states",
                states,
                "--threads",
                threads,
                "--json",
            ],
            "",
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        lines.push_str(&run.stdout);
    }
    let out = temp("plot.svg");
    let run = qchess(
        &["plot", "--input", "-", "--out", out.to_str().unwrap()],
        &lines,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
    for label in [
        "split, 1 thread",
        "iswap, 2 threads",
        "states per second",
        "basis states",
    ] {
        assert!(texts.iter().any(|t| t.contains(label)), "{label} missing");
    }
    let bad = qchess(
        &["plot", "--input", "-", "--out", out.to_str().unwrap()],
        "{\"op\":1}\n",
    );
    assert_eq!(bad.code, Some(2));
    assert!(bad.stderr.contains("line 1"), "{}", bad.stderr);
}
