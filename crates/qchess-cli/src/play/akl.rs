//! `qchess play --variant akl`: Akl-style quantum chess in the terminal, between two people or
//! against the built-in random mover. Owned by the qchess-akl work; see docs/akl.md.
//!
//! Each player sees only their own view: the board shows a piece in superposition with the
//! types that player knows (`(N?)`, `(NB)`), a collapsed piece as `[N]`. At the prompt: a
//! square to touch (`g1`; a quantum piece collapses at random), optionally with its
//! destination (`g1 -> f3`, `g1 f3`); then, if the piece can move, its destination (`f3`,
//! `e8=Q`). Commands: `record` (the moves so far), `save FILE` (the full record with the
//! secret set-up, which `--load` reads back),
//! `help`, `quit`. `--rules own-pairs` lets each player see both types of their own pieces.

use super::{Opponent, PlayArgs};
use crate::error::CliError;
use qchess_akl::{
    AklMove, AklPosition, Game, GameRecord, GameStatus, RandomMover, Rules, Style, TouchOutcome,
    TouchResult, TurnEntry, Visibility, parse_destination,
};
use qchess_board::{Color, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};

const HELP: &str = "touch a piece: g1 (a piece in superposition collapses, both players see it); \
add its move at once: g1 -> f3 or g1 f3; then, if it can move, type its destination: f3, e8=Q.\n\
board: (N?) in superposition, known to be a knight; (NB) a knight or a bishop; [N] collapsed; \
upper case White.\ncommands: record (moves so far), save FILE (full record, secret set-up included), help, quit";

/// Plays a game on `input` / `output` (the terminal, or a script in tests).
pub fn play(
    args: &PlayArgs,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    let rules = parse_rules(&args.rules)?;
    if args.board.as_deref().is_some_and(|b| b != "8x8") {
        return Err(CliError::usage(
            "Akl-style quantum chess is played on the 8x8 board only",
        ));
    }
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
    let mut game = match &args.load {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
            let record = GameRecord::parse(&text)
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            record
                .replay()
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?
        }
        None => Game::with_rules(AklPosition::startpos_random(&mut rng), rules),
    };
    // The seed is not shown while the game goes on: it determines the secret secondary
    // types and every future collapse.
    writeln!(output, "Akl-style quantum chess\n{HELP}")?;
    loop {
        let status = game.status();
        if status != GameStatus::Ongoing {
            writeln!(output, "\n{}{status}", game.view(human).render())?;
            write!(output, "{}", game.record().to_text(Style::Ascii))?;
            writeln!(output, "(seed {})", args.seed)?;
            return Ok(());
        }
        let side = game.side_to_move();
        if let (Opponent::Engine(level), true) = (args.opponent, side != human) {
            engine_turn(&mut game, level, args.seed, &mut rng, output)?;
        } else if args.opponent == Opponent::Random && side != human {
            random_turn(&mut game, &mut rng, output)?;
            continue;
        }
        // The person to move sees their own view only.
        let view = game.view(side);
        writeln!(output, "\n{}", view.render())?;
        write!(output, "{} to touch> ", color_name(side))?;
        output.flush()?;
        let Some(line) = read_line(input)? else {
            writeln!(output)?;
            return Ok(());
        };
        match line.as_str() {
            "" => {}
            "quit" | "exit" => return Ok(()),
            "help" => writeln!(output, "{HELP}")?,
            "record" => write_public_record(&game, output)?,
            cmd if cmd.starts_with("save ") => {
                let path = cmd[5..].trim();
                match std::fs::write(path, game.record().to_text(Style::Ascii)) {
                    Ok(()) => writeln!(
                        output,
                        "saved to {path} (the file holds the secret set-up: reading it \
                         reveals every piece's hidden type)"
                    )?,
                    Err(e) => writeln!(output, "cannot save to {path}: {e}")?,
                }
            }
            text => {
                if human_turn(&mut game, text, &mut rng, input, output)? == Flow::Quit {
                    return Ok(());
                }
            }
        }
    }
}

/// The moves so far, without the start position: its secondary types are secret while the
/// game goes on (`save FILE` writes the full record, which `--load` reads).
fn write_public_record(game: &Game, output: &mut dyn Write) -> Result<(), CliError> {
    write!(output, "{}", game.record().entries_text(Style::Ascii))?;
    writeln!(
        output,
        "(the start position with its secret types is shown when the game ends)"
    )?;
    Ok(())
}

fn parse_rules(list: &[String]) -> Result<Rules, CliError> {
    let mut rules = Rules::default();
    for r in list.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        rules.visibility = match r {
            "revealed" => Visibility::Revealed,
            "own-pairs" => Visibility::OwnPairs,
            other => {
                return Err(CliError::usage(format!(
                    "unknown akl rule option {other:?}: expected revealed or own-pairs"
                )));
            }
        };
    }
    Ok(rules)
}

fn read_line(input: &mut dyn BufRead) -> Result<Option<String>, CliError> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_string()))
}

/// Whether the session goes on after a person's turn.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// One turn of a person: touch, then (if the piece can move) a destination until a legal one
/// is given (touch-move: the touched piece must move).
fn human_turn(
    game: &mut Game,
    text: &str,
    rng: &mut ChaCha8Rng,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<Flow, CliError> {
    let (square_text, dest_text) = match text.split_once("->") {
        Some((a, b)) => (a.trim(), Some(b.trim().to_string())),
        None => match text.split_once(char::is_whitespace) {
            Some((a, b)) => (a.trim(), Some(b.trim().to_string())),
            None => (text, None),
        },
    };
    let square: Square = match square_text.parse() {
        Ok(s) => s,
        Err(e) => {
            writeln!(output, "{e}; type a square to touch, or help")?;
            return Ok(Flow::Continue);
        }
    };
    let side = game.side_to_move();
    let touch = match game.touch(square, rng) {
        Ok(t) => t,
        Err(e) => {
            writeln!(output, "{e}")?;
            return Ok(Flow::Continue);
        }
    };
    writeln!(output, "{}", touch_text(side, &touch))?;
    let TouchResult::MustMove(moves) = touch.result else {
        return Ok(Flow::Continue);
    };
    let mut next = dest_text;
    loop {
        let dest = match next.take() {
            Some(d) => d,
            None => {
                let list: Vec<String> = moves.iter().map(|m| m.to.to_string()).collect();
                writeln!(
                    output,
                    "{} can go to: {}",
                    piece_name(touch.kind),
                    dedup(list).join(" ")
                )?;
                write!(output, "{} move {square}> ", color_name(side))?;
                output.flush()?;
                match read_line(input)? {
                    Some(l) => l,
                    // The input ended with the touched piece still to move.
                    None => return Ok(Flow::Quit),
                }
            }
        };
        match dest.as_str() {
            "quit" | "exit" => return Ok(Flow::Quit),
            "help" => {
                writeln!(output, "{HELP}")?;
                continue;
            }
            "record" => {
                write_public_record(game, output)?;
                continue;
            }
            _ => {}
        }
        match parse_destination(&dest) {
            // The mark |psi> claims a dark landing square; a capture's <x|y> is drawn at
            // random here whatever is written, so only the landing square is checked.
            Ok(d) if d.superposed && !qchess_akl::is_dark(d.to) => writeln!(
                output,
                "{} is a light square: the piece would stay classical there (drop |psi>)",
                d.to
            )?,
            Ok(d) => {
                let mv = AklMove {
                    from: square,
                    to: d.to,
                    promotion: d.promotion,
                };
                match game.play(mv, rng) {
                    Ok(entry) => {
                        writeln!(output, "{} played {}", color_name(side), entry_text(&entry))?;
                        return Ok(Flow::Continue);
                    }
                    Err(e) => writeln!(output, "{e}")?,
                }
            }
            Err(e) => writeln!(output, "{e}")?,
        }
    }
}

/// The engine's turn: it touches from its own view (unseen types drawn from the seed), the
/// game collapses the piece with its own randomness, and the engine then moves it.
fn engine_turn(
    game: &mut Game,
    level: u8,
    seed: u64,
    rng: &mut ChaCha8Rng,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    let side = game.side_to_move();
    let mut engine = super::engine_of(level, seed);
    let fail = |e: String| CliError::failure(format!("engine: {e}"));
    let r = engine
        .search(&*game, &super::engine_limits())
        .map_err(|e| fail(e.to_string()))?;
    let qchess_engine::AklChoice::Touch(square) = r.best else {
        return Err(fail("it moved without touching".into()));
    };
    let touch = game.touch(square, rng).map_err(|e| fail(e.to_string()))?;
    writeln!(
        output,
        "{} (engine) {}",
        color_name(side),
        touch_text(side, &touch)
    )?;
    if let TouchResult::MustMove(_) = &touch.result {
        let r = engine
            .search(&*game, &super::engine_limits())
            .map_err(|e| fail(e.to_string()))?;
        let qchess_engine::AklChoice::Move(mv) = r.best else {
            return Err(fail("it touched twice".into()));
        };
        let entry = game.play(mv, rng).map_err(|e| fail(e.to_string()))?;
        writeln!(
            output,
            "{} (engine) played {}",
            color_name(side),
            entry_text(&entry)
        )?;
    }
    Ok(())
}

fn random_turn(
    game: &mut Game,
    rng: &mut ChaCha8Rng,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    let side = game.side_to_move();
    let view = game.view(side);
    let square = RandomMover
        .choose_touch(&view, rng)
        .ok_or_else(|| CliError::failure("the random mover found nothing to touch"))?;
    let touch = game
        .touch(square, rng)
        .map_err(|e| CliError::failure(e.to_string()))?;
    writeln!(
        output,
        "{} (random mover) {}",
        color_name(side),
        touch_text(side, &touch)
    )?;
    if let TouchResult::MustMove(moves) = &touch.result {
        let mv = RandomMover
            .choose_move(moves, rng)
            .expect("MustMove has moves");
        let entry = game
            .play(mv, rng)
            .map_err(|e| CliError::failure(e.to_string()))?;
        writeln!(
            output,
            "{} (random mover) played {}",
            color_name(side),
            entry_text(&entry)
        )?;
    }
    Ok(())
}

fn touch_text(side: Color, t: &TouchOutcome) -> String {
    let what = match t.collapsed {
        Some(k) => format!("touched {}: it collapsed to {}", t.square, piece_name(k)),
        None => format!("touched {} ({})", t.square, piece_name(t.kind)),
    };
    let end = match t.result {
        TouchResult::MustMove(_) => String::new(),
        TouchResult::NoLegalMove => "; it has no legal move, the turn is over".into(),
        TouchResult::CheckByCollapse => {
            format!(
                "; the collapse checks the {} king and counts as the move",
                color_name(!side)
            )
        }
    };
    format!("{what}{end}")
}

fn entry_text(e: &TurnEntry) -> String {
    format!(
        "{}   ({})",
        e.format(Style::Unicode),
        e.format(Style::Ascii)
    )
}

fn dedup(mut list: Vec<String>) -> Vec<String> {
    list.dedup();
    list
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

fn piece_name(k: PieceKind) -> &'static str {
    match k {
        PieceKind::Pawn => "a pawn",
        PieceKind::Knight => "a knight",
        PieceKind::Bishop => "a bishop",
        PieceKind::Rook => "a rook",
        PieceKind::Queen => "a queen",
        PieceKind::King => "the king",
    }
}

#[cfg(test)]
mod tests {
    use super::super::Variant;
    use super::*;

    fn args(opponent: Opponent, load: Option<std::path::PathBuf>) -> PlayArgs {
        PlayArgs {
            variant: Variant::Akl,
            rules: vec![],
            board: None,
            opponent,
            color: "w".into(),
            seed: 5,
            load,
        }
    }

    fn run(args: &PlayArgs, script: &str) -> String {
        let mut out = Vec::new();
        play(args, &mut script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn temp_record(name: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("qchess-akl-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_loaded_game_plays_to_a_king_capture() {
        let path = temp_record(
            "capture",
            "[Position \"3[r*r]k3/8/8/8/8/8/8/4K3 w - 0 1\"]\n",
        );
        let out = run(
            &args(Opponent::Human, Some(path.clone())),
            "zz\ne4\ne8\ne1 -> d1\nd8\nd1\n",
        );
        std::fs::remove_file(path).unwrap();
        assert!(out.contains("invalid square \"zz\""), "{out}");
        assert!(out.contains("there is no piece on e4"), "{out}");
        assert!(
            out.contains("the piece on e8 belongs to the side not to move"),
            "{out}"
        );
        assert!(out.contains("White played e1 → d1"), "{out}");
        assert!(
            out.contains("a rook can go to: d1 d2 d3 d4 d5 d6 d7 a8 b8 c8"),
            "{out}"
        );
        assert!(out.contains("Black played d8 → ⟨R|K⟩d1"), "{out}");
        assert!(out.contains("Black wins: the king was captured"), "{out}");
        assert!(out.contains("2. d8 -> <R|K>d1"), "{out}");
        assert!(
            out.contains("(seed 5)"),
            "the seed is shown once the game is over"
        );
    }

    #[test]
    fn the_random_mover_answers_and_the_record_replays() {
        // White touches a few pieces (some have no move, some are refused); the random mover
        // answers each turn. The printed record replays to a game of the same length.
        let path = std::env::temp_dir().join(format!("qchess-akl-{}-saved", std::process::id()));
        let script = format!(
            "e2\ne4\ne3\nd2\nd4\nd3\ng1\nf3\nh3\nrecord\nsave {}\nquit\n",
            path.display()
        );
        let out = run(&args(Opponent::Random, None), &script);
        assert!(out.contains("Black (random mover) touched"), "{out}");
        // `record` shows the moves but not the secret set-up.
        assert!(out.contains("1. "), "{out}");
        assert!(!out.contains("[Position"), "{out}");
        // Nothing printed during the game gives the seed, which determines the secrets.
        assert!(!out.contains("seed"), "{out}");
        assert!(out.contains("holds the secret set-up"), "{out}");
        let record = GameRecord::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let game = record.replay().unwrap();
        assert!(game.history().len() >= 2, "{out}");
        assert!(
            out.contains(&game.record().entries_text(Style::Ascii)),
            "{out}"
        );
        // The same seed and script give the same output.
        let again = run(&args(Opponent::Random, None), &script);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(out, again);
    }

    #[test]
    fn the_move_prompt_insists_on_a_legal_move_and_accepts_quit() {
        let path = temp_record(
            "prompt",
            "[Position \"4k3/8/8/8/8/8/8/[R*R]3K3 w - 0 1\"]\n",
        );
        let out = run(
            &args(Opponent::Human, Some(path.clone())),
            "a1\nb2\nh1=Q\n|psi> -> b1\nhelp\nquit\n",
        );
        std::fs::remove_file(path).unwrap();
        assert!(out.contains("touched a1 (a rook)"), "{out}");
        assert!(
            out.contains("a rook can go to: b1 c1 d1 a2 a3 a4 a5 a6 a7 a8"),
            "{out}"
        );
        assert!(
            out.contains("illegal move a1b2: a rook on a1 cannot go to b2"),
            "{out}"
        );
        assert!(
            out.contains("illegal move a1h1q: only a pawn reaching the last rank promotes"),
            "{out}"
        );
        assert!(
            out.contains("b1 is a light square: the piece would stay classical there"),
            "{out}"
        );
        assert!(!out.contains("White played"), "{out}");
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        let mut a = args(Opponent::Human, None);
        a.color = "red".into();
        assert_eq!(
            play(&a, &mut "".as_bytes(), &mut Vec::new())
                .unwrap_err()
                .code,
            2
        );
        let mut a = args(Opponent::Human, None);
        a.rules = vec!["hadamard".into()];
        assert_eq!(
            play(&a, &mut "".as_bytes(), &mut Vec::new())
                .unwrap_err()
                .code,
            2
        );
        let mut a = args(Opponent::Human, None);
        a.board = Some("5x6".into());
        assert_eq!(
            play(&a, &mut "".as_bytes(), &mut Vec::new())
                .unwrap_err()
                .code,
            2
        );
        let a = args(
            Opponent::Human,
            Some("/nonexistent/qchess-akl-record".into()),
        );
        assert_eq!(
            play(&a, &mut "".as_bytes(), &mut Vec::new())
                .unwrap_err()
                .code,
            2
        );
    }
}
