//! `qchess play --variant niels`: Niel's Chess in the terminal, between two people or against
//! the built-in random mover. Owned by the qchess-niels work; see docs/niels.md.
//!
//! Commands at the prompt: a move in the notation of docs/niels.md (`e2e4`, `c6^d4e5:oo`,
//! `f6&f6d5:oo@e4`, `f:e4`, `z:e4`, `h:e4`, `e1~e5`, `c:e4`), `moves` (legal moves),
//! `record` (the game record, which `--load` reads back), `save FILE` (writes the record),
//! `undo` (takes back a move; against the random mover, its reply too), `help`, `quit`.

use super::{Opponent, PlayArgs};
use crate::error::CliError;
use qchess_board::{Color, Geometry};
use qchess_niels::{Diagonal, Game, GameRecord, Move, Rules, Status, color_name, render};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};

const HELP: &str = "moves: e2e4 (move or attempted capture), c6^d4e5:oo (superposition: red, blue, facings o=opponent p=player), \
f6&f6d5:oo@e4 (entanglement with the pair on e4), f:e4 (flip), z:e4 (Z), h:e4 (Hadamard), e1~e5 (tunnel), c:e4 (remote collapse), e7e8=q (promotion)\n\
commands: moves, record, save FILE, undo, help, quit";

/// Plays a game on `input` / `output` (the terminal, or a script in tests).
pub fn play(
    args: &PlayArgs,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    let rules =
        Rules::parse_list(&args.rules.join(",")).map_err(|e| CliError::usage(e.to_string()))?;
    let mut game = match &args.load {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
            let record: GameRecord = text
                .parse()
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            record
                .replay()
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?
        }
        None => {
            let geometry: Geometry = match &args.board {
                Some(b) => b
                    .parse()
                    .map_err(|e| CliError::usage(format!("--board: {e}")))?,
                None => Geometry::STANDARD,
            };
            Game::new(rules, geometry).map_err(|e| CliError::usage(e.to_string()))?
        }
    };
    let human = match args.color.as_str() {
        "w" | "white" => Color::White,
        "b" | "black" => Color::Black,
        other => {
            return Err(CliError::usage(format!(
                "--color must be w or b, not {other:?}"
            )));
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    writeln!(
        output,
        "Niel's Chess (independent implementation of the published rules); rules: {}",
        display_rules(game.rules())
    )?;
    writeln!(output, "{HELP}")?;
    loop {
        writeln!(output, "\n{}", render(game.position(), game.rules()))?;
        let status = game.status();
        if status != Status::Ongoing {
            writeln!(output, "{status} ({})", status.result())?;
            writeln!(output, "{}", game.record())?;
            return Ok(());
        }
        if game.in_check() {
            writeln!(output, "check")?;
        }
        let side = game.position().side_to_move();
        if args.opponent.is_computer() && side != human {
            let moves = game.legal_moves();
            let chosen = match args.opponent {
                Opponent::Engine(level) => super::engine_of(level, args.seed)
                    .search(&game, &super::engine_limits())
                    .ok()
                    .map(|r| r.best),
                _ => moves.choose(&mut rng).copied(),
            };
            let Some(mv) = chosen else {
                continue;
            };
            // 8.3 step 2: the person, as the random mover's opponent, picks the diagonal.
            let mv = choose_diagonal(&game, mv, true, input, output, &mut rng);
            let outcome = game
                .play(&mv, &mut rng)
                .map_err(|e| CliError::failure(e.to_string()))?;
            writeln!(
                output,
                "{} plays {mv}{}",
                color_name(side),
                rolls_text(&outcome)
            )?;
            continue;
        }
        write!(output, "{} to move> ", color_name(side))?;
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(output)?;
            return Ok(());
        }
        match line.trim() {
            "" => {}
            "quit" | "exit" => return Ok(()),
            "help" => writeln!(output, "{HELP}")?,
            "moves" => {
                let list: Vec<String> = game.legal_moves().iter().map(|m| m.to_string()).collect();
                writeln!(output, "{} legal moves: {}", list.len(), list.join(" "))?;
            }
            "record" => write!(output, "{}", game.record())?,
            "undo" => {
                let plies = if args.opponent.is_computer() { 2 } else { 1 };
                for _ in 0..plies {
                    if let Some(m) = game.undo() {
                        writeln!(output, "took back {}", m.mv)?;
                    }
                }
            }
            cmd if cmd.starts_with("save ") => {
                let path = cmd["save ".len()..].trim();
                match std::fs::write(path, game.record().to_string()) {
                    Ok(()) => writeln!(output, "saved the game record to {path}")?,
                    Err(e) => writeln!(output, "cannot write {path}: {e}")?,
                }
            }
            text => {
                let played = text
                    .parse::<Move>()
                    .and_then(|mv| game.check_move(&mv))
                    .and_then(|mv| {
                        let ask = args.opponent != Opponent::Random;
                        let mv = choose_diagonal(&game, mv, ask, input, output, &mut rng);
                        game.play(&mv, &mut rng).map(|o| (mv, o))
                    });
                match played {
                    Ok((mv, outcome)) => writeln!(
                        output,
                        "{} played {mv}{}",
                        color_name(side),
                        rolls_text(&outcome)
                    )?,
                    Err(e) => writeln!(output, "{e}")?,
                }
            }
        }
    }
}

/// 8.3 step 2: the *opponent* rotates their pair onto a diagonal. When the move leaves the
/// choice open (both diagonals free), the opponent is asked when a person (`ask_person`);
/// the random mover picks at random. Both diagonals are equivalent, so a bad answer keeps
/// the default.
fn choose_diagonal(
    game: &Game,
    mv: Move,
    ask_person: bool,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
    rng: &mut ChaCha8Rng,
) -> Move {
    let Move::Entanglement { target, .. } = mv else {
        return mv;
    };
    let pos = game.position();
    let open = pos.pair_at(target).is_some_and(|q| q.diagonal.is_none())
        && Diagonal::ALL.iter().all(|d| pos.group(*d).is_empty());
    if !open {
        return mv;
    }
    let opponent = pos.side_to_move().opposite();
    let chosen = if !ask_person {
        *Diagonal::ALL.choose(rng).unwrap_or(&Diagonal::Minus)
    } else {
        let _ = write!(
            output,
            "{}, rotate your pair on {target}: diagonal + or - > ",
            color_name(opponent)
        );
        let _ = output.flush();
        let mut line = String::new();
        let _ = input.read_line(&mut line);
        line.trim()
            .chars()
            .next()
            .and_then(Diagonal::from_char)
            .unwrap_or(Diagonal::Minus)
    };
    match mv {
        Move::Entanglement {
            from,
            red,
            blue,
            facings,
            promotion,
            target,
            ..
        } => Move::Entanglement {
            from,
            red,
            blue,
            facings,
            promotion,
            target,
            diagonal: Some(chosen),
        },
        other => other,
    }
}

fn display_rules(r: &Rules) -> String {
    let s = r.to_string();
    if s.is_empty() { "full game".into() } else { s }
}

fn rolls_text(o: &qchess_niels::MoveOutcome) -> String {
    let mut s = String::new();
    for r in &o.rolls {
        s.push_str(&format!(", {} rolls {}", color_name(r.player), r.value));
    }
    if let Some(p) = o.captured {
        s.push_str(&format!(", captures {}", p.fen_char()));
    } else if o.capture_attempted {
        s.push_str(", the capture fails");
    }
    match o.tunnelled {
        Some(true) => s.push_str(", tunnels through"),
        Some(false) => s.push_str(", bounces back"),
        None => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(rules: &[&str], board: Option<&str>, opponent: Opponent) -> PlayArgs {
        PlayArgs {
            variant: super::super::Variant::Niels,
            rules: rules.iter().map(|s| s.to_string()).collect(),
            board: board.map(str::to_string),
            opponent,
            color: "w".into(),
            seed: 1,
            load: None,
        }
    }

    #[test]
    fn two_people_play_and_errors_are_shown() {
        let mut out = Vec::new();
        let script = "b1^a3c3:oo\nzz\ne5e4\nundo\ne5e4\nmoves\nquit\n";
        play(
            &args(&["simplified"], Some("5x6"), Opponent::Human),
            &mut script.as_bytes(),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("white played b1^a3c3:oo"), "{text}");
        assert!(text.contains("cannot parse \"zz\""), "{text}");
        assert!(text.contains("black played e5e4"), "{text}");
        assert!(text.contains("took back e5e4"), "{text}");
        assert!(text.contains("Nro|1"), "{text}");
        assert!(text.contains("legal moves:"), "{text}");
    }

    #[test]
    fn the_opponent_chooses_the_diagonal() {
        let dir = std::env::temp_dir().join(format!("qchess-niels-diag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("start.txt");
        std::fs::write(
            &file,
            "Rules: \nBoard: 8x8\nStart: 5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1\n",
        )
        .unwrap();
        let mut a = args(&[], None, Opponent::Human);
        a.load = Some(file);
        let mut out = Vec::new();
        play(&a, &mut "f6&f6d5:oo@e4\n+\nquit\n".as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("white, rotate your pair on e4"), "{text}");
        assert!(text.contains("black played f6&f6d5:oo@e4+"), "{text}");
        assert!(text.contains("Rro+1"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_person_chooses_the_diagonal_of_the_random_movers_entanglement() {
        // Black's only legal moves entangle its king with White's knight pair (docs/niels.md,
        // reading 17): the random mover plays one, and White (the person) picks the diagonal.
        let dir = std::env::temp_dir().join(format!("qchess-niels-rdiag-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("start.txt");
        std::fs::write(
            &file,
            "Rules: \nBoard: 8x8\nStart: k7/2[Nro|1]5/[Nbo|1]K6/8/8/8/8/8 b - - 1 1\n",
        )
        .unwrap();
        let mut a = args(&[], None, Opponent::Random);
        a.load = Some(file);
        let mut out = Vec::new();
        play(&a, &mut "+\nquit\n".as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("white, rotate your pair on c7"), "{text}");
        assert!(
            text.contains("black plays a8&") && text.contains("@c7+"),
            "{text}"
        );
        assert!(text.contains("Nro+1"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_rule_option_plays_in_the_terminal() {
        for name in qchess_niels::RULE_NAMES {
            for board in ["5x6", "4x4"] {
                let mut a = args(&[name], Some(board), Opponent::Random);
                a.color = "b".into();
                let mut out = Vec::new();
                play(&a, &mut "moves\nquit\n".as_bytes(), &mut out).unwrap();
                let text = String::from_utf8(out).unwrap();
                assert!(text.contains("white plays "), "{name} {board}: {text}");
                assert!(text.contains("legal moves: "), "{name} {board}: {text}");
            }
        }
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = std::env::temp_dir().join(format!("qchess-niels-play-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.txt");
        let script = format!("b1^a3c3:oo\ne5e4\nsave {}\nquit\n", file.display());
        play(
            &args(&[], Some("5x6"), Opponent::Human),
            &mut script.as_bytes(),
            &mut Vec::new(),
        )
        .unwrap();
        let mut a = args(&[], None, Opponent::Human);
        a.load = Some(file.clone());
        let mut out = Vec::new();
        play(&a, &mut "record\nquit\n".as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("b1^a3c3:oo\ne5e4\n"), "{text}");
        assert!(text.contains("Nro|1"), "{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn random_opponent_plays_to_the_end_on_a_small_board() {
        let mut out = Vec::new();
        let mut a = args(&["tunnelling"], Some("4x4"), Opponent::Random);
        a.color = "b".into();
        // The person (Black) resigns at the first prompt; White's random move came first.
        play(&a, &mut "quit\n".as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("white plays "), "{text}");
        assert!(
            matches!(play(&args(&["bogus"], None, Opponent::Human), &mut "".as_bytes(), &mut Vec::new()), Err(e) if e.code == 2)
        );
    }
}
