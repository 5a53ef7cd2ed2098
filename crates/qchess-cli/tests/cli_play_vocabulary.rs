//! The one command vocabulary of `qchess play`, driven through standard input in all three
//! rule systems: `help [topic]`, `moves [square]`, `undo`, `redo`, `history`, `board`,
//! `save FILE`, `load FILE`, `flip`, `quit`, the shared move forms (`e2e4`, `e2 e4`, `e2-e4`,
//! `e7e8q`, `e7e8=Q`), and the answer to an unknown word.

use crate::common;
use common::qchess_bytes;

/// An Akl record of classical kings and pawns: every touch is certain.
const KINGS_AND_PAWNS: &str = "[Position \"4k3/[p*p]7/8/8/8/8/[P*P]7/4K3 w - 0 1\"]\n";

/// Runs `qchess play args` on `script`; asserts exit 0 and no stderr.
fn play(args: &[&str], script: &str) -> String {
    let mut full = vec!["play"];
    full.extend_from_slice(args);
    let run = qchess_bytes(&full, script.as_bytes());
    assert_eq!(
        run.code,
        Some(0),
        "qchess {full:?}: {}\n{}",
        run.stderr,
        run.stdout
    );
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.stdout
}

fn temp_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("qchess-vocab-{}-{name}", std::process::id()))
}

/// The rows of the board printed last before `marker` (rank label first).
fn first_rank_label_after(out: &str, marker: &str) -> char {
    let at = out.find(marker).expect("marker present");
    out[at..]
        .lines()
        .find_map(|l| {
            let c = l.chars().next()?;
            (c.is_ascii_digit() && l[1..].starts_with(' ')).then_some(c)
        })
        .expect("a board after the marker")
}

#[test]
fn unknown_words_are_not_moves_in_any_variant() {
    for variant in ["cantwell", "niels", "akl"] {
        let out = play(
            &["--variant", variant, "--seed", "1"],
            "hlep\nmvoes\nxyzzy\nquit\n",
        );
        assert!(
            out.contains("unknown command \"hlep\"; type help (did you mean \"help\"?)"),
            "{variant}: {out}"
        );
        assert!(
            out.contains("unknown command \"mvoes\"; type help (did you mean \"moves\"?)"),
            "{variant}: {out}"
        );
        assert!(
            out.contains("unknown command \"xyzzy\"; type help\n"),
            "{variant}: no suggestion for a word far from every command: {out}"
        );
        // A long bad word is quoted back cut short.
        let long = "q".repeat(10_000);
        let out = play(&["--variant", variant], &format!("{long}\nquit\n"));
        assert!(out.contains("unknown command \""), "{variant}");
        assert!(out.len() < 8_000, "{variant}: the word was echoed whole");
    }
}

#[test]
fn help_lists_every_shared_command_and_teaches_the_notation() {
    for (variant, own, topic, quote) in [
        (
            "cantwell",
            "claim",
            "split",
            "The Split Jump unitary is designed to allow a player to create superposition",
        ),
        (
            "niels",
            "record",
            "dice",
            "Each player who has an indefinite piece on the intended square of arrival rolls a six-sided dice",
        ),
        (
            "akl",
            "touch SQUARE",
            "dark",
            "when a piece (except the king) lands on a black square",
        ),
    ] {
        let out = play(
            &["--variant", variant, "--seed", "3"],
            &format!("help\nhelp {topic}\nhelp topics\nhelp nonsense\nquit\n"),
        );
        for cmd in [
            "help [topic]",
            "moves [square]",
            "undo",
            "redo",
            "history",
            "board",
            "save FILE",
            "load FILE",
            "flip",
            "quit",
            own,
        ] {
            assert!(
                out.contains(&format!("  {cmd} ")),
                "{variant}: {cmd}: {out}"
            );
        }
        assert!(out.contains(quote), "{variant}: help {topic}: {out}");
        assert!(out.contains("topics: "), "{variant}: {out}");
        assert!(
            out.contains("no help topic \"nonsense\""),
            "{variant}: {out}"
        );
    }
    // Cantwell's help explains ^, the arms, .m0/.m1, claim and the percentages.
    let out = play(&["--variant", "cantwell"], "help\nquit\n");
    for needle in [
        "b1^a3c3",
        "a3c3^b5",
        "sqrt-iSwap arm",
        ".m0",
        "N 50 = a knight with 50 %",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    // Akl's legend explains the dark squares.
    let out = play(&["--variant", "akl"], "help\nquit\n");
    assert!(out.contains(": marks an empty dark square"), "{out}");
}

#[test]
fn niels_help_follows_the_rules_in_force() {
    let plain = play(&["--variant", "niels"], "help\nquit\n");
    assert!(
        !plain.contains("e1~e5"),
        "no tunnelling without the rule: {plain}"
    );
    assert!(
        !plain.contains("c:e4"),
        "no remote collapse without the rule: {plain}"
    );
    assert!(plain.contains("f:e4"), "{plain}");
    let with = play(
        &[
            "--variant",
            "niels",
            "--rules",
            "tunnelling,remote-collapse,simplified",
        ],
        "help\nhelp tunnelling\nquit\n",
    );
    assert!(with.contains("e1~e5") && with.contains("c:e4"), "{with}");
    assert!(
        !with.contains("f:e4"),
        "the simplified game has no flip: {with}"
    );
    assert!(with.contains("succeeds on a roll of 6"), "{with}");
    // The prompt does not repeat the status line.
    assert!(!plain.contains("white to move>"), "{plain}");
}

#[test]
fn the_three_forms_of_a_plain_move_in_every_variant() {
    // Cantwell and Niel's print the canonical form.
    for variant in ["cantwell", "niels"] {
        let out = play(
            &["--variant", variant, "--seed", "2"],
            "e2e4\ne7 e5\ng1-f3\nhistory\nquit\n",
        );
        assert!(out.contains("played e2e4"), "{variant}: {out}");
        assert!(out.contains("played e7e5"), "{variant}: {out}");
        assert!(out.contains("played g1f3"), "{variant}: {out}");
    }
    // Akl: the form is a touch of the first square and a move to the second. The king's
    // pawn is a pawn in one of its two types: the touch may collapse it to its other type,
    // so only the touch is certain; a king is always classical.
    let record = temp_file("akl-kings");
    std::fs::write(&record, KINGS_AND_PAWNS).unwrap();
    let out = play(
        &["--variant", "akl", "--load", record.to_str().unwrap()],
        "e1e2\ne8 e7\ne2-d3\nhistory\nquit\n",
    );
    std::fs::remove_file(&record).unwrap();
    assert!(out.contains("White played e1 → e2"), "{out}");
    assert!(out.contains("Black played e8 → e7"), "{out}");
    assert!(out.contains("White played e2 → d3"), "{out}");
    assert!(out.contains("1. e1 -> e2"), "{out}");
}

#[test]
fn promotion_in_both_forms_in_every_variant() {
    // Cantwell: a7a8Q canonical; both e7e8q and e7e8=Q accepted.
    let dir = temp_file("promo");
    std::fs::create_dir_all(&dir).unwrap();
    for (form, canonical) in [
        ("a7a8q", "a7a8Q"),
        ("a7a8=Q", "a7a8Q"),
        ("a7 a8=n", "a7a8N"),
    ] {
        let out = play(
            &["--variant", "cantwell"],
            &format!(
                "load {}\n{form}\nquit\n",
                cantwell_promotion_record(&dir).display()
            ),
        );
        assert!(
            out.contains(&format!("played {canonical}")),
            "{form}: {out}"
        );
    }
    // Niel's: e7e8=q canonical.
    for form in ["a7a8q", "a7a8=Q"] {
        let out = play(
            &["--variant", "niels"],
            &format!(
                "load {}\n{form}\nquit\n",
                niels_promotion_record(&dir).display()
            ),
        );
        assert!(out.contains("white played a7a8=q"), "{form}: {out}");
    }
    // Akl: a classical pawn (collapsed [P]) promotes; e7e8=Q style at the prompt.
    for form in ["a7a8q", "a7a8=Q", "a7 a8=q"] {
        let record = dir.join("akl.txt");
        std::fs::write(&record, "[Position \"4k3/[P*P]7/8/8/8/8/8/4K3 w - 0 1\"]\n").unwrap();
        let out = play(
            &["--variant", "akl", "--load", record.to_str().unwrap()],
            &format!("{form}\nquit\n"),
        );
        assert!(out.contains("White played a7 → a8=Q"), "{form}: {out}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A saved Cantwell game whose next move is White's a7 pawn promoting on a8.
fn cantwell_promotion_record(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("cantwell.json");
    // Build the record with the binary itself: load a position through eval's position
    // format would couple this test to it, so play a classical line instead.
    let moves = [
        "b2b4", "a7a5", "b4a5", "b7b6", "a5b6", "a8a7", "b6a7", "b8c6",
    ];
    let mut script = String::new();
    for m in moves {
        script.push_str(m);
        script.push('\n');
    }
    script.push_str(&format!("save {}\nquit\n", path.display()));
    let out = play(&["--variant", "cantwell"], &script);
    assert!(out.contains("played b6a7"), "{out}");
    path
}

/// A saved Niel's game whose next move is White's a7 pawn promoting on a8.
fn niels_promotion_record(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("niels.txt");
    std::fs::write(
        &path,
        "Rules: \nBoard: 8x8\nStart: 4k3/P7/8/8/8/8/8/4K3 w - - 0 1\n",
    )
    .unwrap();
    path
}

#[test]
fn moves_undo_redo_history_save_load_flip_in_every_variant() {
    let dir = temp_file("shared");
    std::fs::create_dir_all(&dir).unwrap();
    for (variant, first, second, square_moves) in [
        ("cantwell", "b1^a3c3", "e7e5", "b1^a3c3"),
        ("niels", "b1^a3c3:oo", "e7e5", "b1a3"),
        ("akl", "e1", "e8", "you may touch: e1 a2"),
    ] {
        let file = dir.join(format!("{variant}.rec"));
        let record = dir.join("akl-start.txt");
        std::fs::write(&record, KINGS_AND_PAWNS).unwrap();
        let args: Vec<&str> = if variant == "akl" {
            // Classical pieces only: every touch is certain, whatever the seed.
            vec!["--variant", "akl", "--load", record.to_str().unwrap()]
        } else {
            vec!["--variant", variant, "--seed", "4"]
        };
        let (first_line, second_line) = if variant == "akl" {
            ("e1 d1".to_string(), "e8 d8".to_string())
        } else {
            (first.to_string(), second.to_string())
        };
        let script = format!(
            "moves\nmoves b1\n{first_line}\n{second_line}\nhistory\nundo\nhistory\nredo\nhistory\n\
             undo\nundo\nundo\nredo\nredo\nredo\nsave {f}\nundo\nload {f}\nhistory\nflip\nboard\nflip\nquit\n",
            f = file.display()
        );
        let out = play(&args, &script);
        assert!(out.contains(square_moves), "{variant}: {out}");
        match variant {
            "cantwell" => {
                assert!(out.contains("b1^a3c3"), "{out}");
                assert!(out.contains("b1^a3c3 e7e5\n"), "history: {out}");
                assert!(out.contains("took back e7e5"), "{out}");
                assert!(out.contains("played e7e5 again"), "{out}");
                assert!(out.contains("there is no move to undo"), "{out}");
                assert!(out.contains("there is no move to redo"), "{out}");
                assert!(out.contains("loaded a game of 2 moves"), "{out}");
            }
            "niels" => {
                assert!(out.contains("b1^a3c3:oo e7e5\n"), "history: {out}");
                assert!(out.contains("took back e7e5"), "{out}");
                assert!(out.contains("played e7e5 again"), "{out}");
                assert!(out.contains("there is no move to undo"), "{out}");
                assert!(out.contains("there is no move to redo"), "{out}");
                assert!(out.contains("loaded a game of 2 moves"), "{out}");
            }
            _ => {
                assert!(out.contains("1. e1 -> d1"), "{out}");
                assert!(out.contains("took back"), "{out}");
                assert!(out.contains("again"), "{out}");
                assert!(out.contains("there is no move to undo"), "{out}");
                assert!(out.contains("there is no move to redo"), "{out}");
                assert!(out.contains("loaded a game of 2 turns"), "{out}");
            }
        }
        // `flip` shows rank 1 on top; `board` after it still flipped; flipping back restores.
        assert_eq!(
            first_rank_label_after(&out, "loaded a game"),
            '8',
            "{variant}: {out}"
        );
        let after_flip = out.rfind("loaded a game").unwrap();
        let tail = &out[after_flip..];
        let labels: Vec<char> = tail
            .lines()
            .filter_map(|l| {
                let c = l.chars().next()?;
                (c.is_ascii_digit() && l[1..].starts_with(' ')).then_some(c)
            })
            .collect();
        // Boards after load: 8.., then flipped 1.., board (flipped) 1.., flipped back 8...
        let tops: Vec<char> = labels.chunks(8).map(|c| c[0]).collect();
        assert_eq!(&tops[..4], &['8', '1', '1', '8'], "{variant}: {tail}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn moves_of_one_square() {
    let out = play(
        &["--variant", "cantwell"],
        "moves g1\nmoves e4\nmoves z9\nquit\n",
    );
    assert!(out.contains("g1f3") && out.contains("g1^f3h3"), "{out}");
    assert!(!out.contains("b1c3"), "only g1's moves: {out}");
    assert!(out.contains("no legal move from e4"), "{out}");
    assert!(out.contains("invalid square"), "{out}");
    let out = play(&["--variant", "niels"], "moves g1\nquit\n");
    assert!(out.contains("g1f3") && !out.contains("b1c3"), "{out}");
    // Akl: what the player knows of the piece, never the other side's secret.
    let out = play(
        &["--variant", "akl", "--seed", "9"],
        "moves g1\nmoves e8\nquit\n",
    );
    assert!(out.contains("g1: as a knight: f3 h3"), "{out}");
    assert!(out.contains("its other type is unknown to you"), "{out}");
    assert!(
        out.contains("the piece on e8 belongs to the side not to move"),
        "{out}"
    );
}
