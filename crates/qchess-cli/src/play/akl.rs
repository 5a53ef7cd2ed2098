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

use super::PlayArgs;
use super::shell::{self, Io, Played, Session};
use crate::error::CliError;
use qchess_akl::{
    AklMove, AklPosition, Game, GameRecord, GameStatus, PieceState, RandomMover, Rules, Style,
    TouchOutcome, TouchResult, TurnEntry, Visibility, moves_as, parse_destination,
};
use qchess_board::{Color, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};

const NOTATION: &str = "\
Akl-style quantum chess: every piece but the king is a superposition of two types; touching it
collapses it to one of them (1/2 each), and both players see the result.
moves:
  g1                      touch the piece on g1 (touch-move: if it can move, it must; you are
                          then asked for its destination)
  g1f3 (or g1 f3, g1-f3, g1 -> f3)  touch g1 and move it to f3 if it can go there
  e7e8=Q (or e7e8q)       a pawn's move with its promotion
  f3|psi>                 the destination written with |psi>: a claim that the piece lands on a
                          dark square and goes back into superposition (optional)
board: (N?) a piece in superposition of which you know one type, a knight; (NB) a knight or a
  bishop; [N] a collapsed (classical) knight; K a king; upper case White.
  : marks an empty dark square: a piece (not a king) that lands on one goes back into
  superposition of its two types; . an empty light square, where it stays classical.";

const TOPICS: [(&str, &str); 7] = [
    (
        "touch",
        "touch: \"When a quantum piece is touched, it collapses to one of its two possible states \
with equal probability, revealing its true nature to both players.\" \"Players must touch a \
piece to move it, and if the touched piece has no legal moves, the turn ends.\" Touching a \
quantum piece that puts the opponent's king in check counts as the move.",
    ),
    (
        "dark",
        "dark squares: \"When a piece lands on a white square, it remains in its classical state. \
However, when a piece (except the king) lands on a black square, it undergoes a quantum \
transformation and returns to its superposition state.\" The board shows empty dark squares as \
`:`.",
    ),
    (
        "setup",
        "set-up: \"The remaining 15 pieces are assigned primary types following the traditional \
chess setup, while their secondary types are randomly assigned from the same list, ensuring \
each type appears exactly twice.\" You know your pieces' primary types; secondary types are \
secret until a touch reveals them (--rules own-pairs shows your own, --rules revealed shows all).",
    ),
    (
        "capture",
        "capture: \"When a quantum piece is captured, it collapses to its classical state before \
being removed from the game.\" \"The game concludes when a player captures the opponent's \
king\". Kings \"can be placed or left in check\"; there is no en passant.",
    ),
    (
        "promotion",
        "promotion: \"When a pawn reaches the opposite end of the board, it must be promoted to \
any piece type (except a king) that already exists in its superposition state. ... The \
promoted piece inherits the quantum properties of the original pawn\". Written e7e8=Q or e8=Q \
at the destination prompt.",
    ),
    (
        "castling",
        "castling: \"The king must not have been involved in any previous move\" and neither may \
the rook; \"Castling is not allowed if the king is in check, would pass through check, or \
would end up in check.\" Touch the king and move it two squares: e1g1.",
    ),
    (
        "draw",
        "draw: \"when both players have only their kings remaining, or when 100 consecutive moves \
occur without any captures or pawn movements.\"",
    ),
];

/// `qchess play --variant akl` at the shared prompt.
struct AklSession {
    game: Game,
    /// Turns taken back, last undone last.
    redo: Vec<TurnEntry>,
    seats: super::Seats,
    seed: u64,
}

impl AklSession {
    /// Who looks at the board: the side to move in a game between two people, the person
    /// against the random mover.
    fn viewer(&self) -> Color {
        if self.seats.computer {
            self.seats.human
        } else {
            self.game.side_to_move()
        }
    }
}

impl Session for AklSession {
    fn banner(&self) -> String {
        "Akl-style quantum chess".into()
    }

    fn board(&self, flipped: bool) -> String {
        // The person sees their own view only.
        self.game.view(self.viewer()).render_oriented(flipped)
    }

    fn game_over(&self) -> Option<String> {
        let status = self.game.status();
        (status != GameStatus::Ongoing).then(|| {
            format!(
                "{status}\n{}(seed {})",
                self.game.record().to_text(Style::Ascii),
                self.seed
            )
        })
    }

    fn prompt(&self) -> String {
        format!("{} to touch> ", color_name(self.game.side_to_move()))
    }

    fn computer_to_move(&self) -> bool {
        self.seats.computer_moves(self.game.side_to_move())
    }

    fn computer_move(&mut self, io: &mut Io<'_>) -> Result<String, CliError> {
        let mut out = Vec::new();
        match self.seats.engine {
            Some((level, seed)) => engine_turn(&mut self.game, level, seed, io.rng, &mut out)?,
            None => random_turn(&mut self.game, io.rng, &mut out)?,
        }
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }

    fn moves(&self, square: Option<Square>) -> Result<String, String> {
        if let Some((sq, kind, moves)) = self.game.pending_touch() {
            let list: Vec<String> = moves.iter().map(|m| m.to.to_string()).collect();
            return Ok(format!(
                "{} on {sq} can go to: {}",
                piece_name(kind),
                dedup(list).join(" ")
            ));
        }
        let Some(sq) = square else {
            let list: Vec<String> = self
                .game
                .touchable()
                .iter()
                .map(Square::to_string)
                .collect();
            return Ok(format!(
                "you may touch: {} (moves SQUARE shows where a piece could go)",
                list.join(" ")
            ));
        };
        let view = self.game.view(self.viewer());
        let Some(piece) = view.piece(sq) else {
            return Err(format!("there is no piece on {sq}"));
        };
        if piece.color != self.game.side_to_move() {
            return Err(format!("the piece on {sq} belongs to the side not to move"));
        }
        // Only what this player knows: the types of the view, and moves by pattern (they
        // depend on the occupied squares alone, which both players see).
        let kinds: Vec<PieceKind> = match piece.state {
            PieceState::Classical(k) => vec![k],
            PieceState::Quantum => piece.known.iter().collect(),
        };
        let mut parts = Vec::new();
        for kind in kinds {
            let list: Vec<String> = moves_as(self.game.position(), sq, kind)
                .iter()
                .map(|m| m.to.to_string())
                .collect();
            let list = dedup(list);
            parts.push(format!(
                "as {}: {}",
                piece_name(kind),
                if list.is_empty() {
                    "no move".to_string()
                } else {
                    list.join(" ")
                }
            ));
        }
        let unknown = matches!(piece.state, PieceState::Quantum) && piece.pair.is_none();
        Ok(format!(
            "{sq}: {}{}",
            parts.join("; "),
            if unknown {
                "; its other type is unknown to you (touch it to find out)"
            } else {
                ""
            }
        ))
    }

    fn canonical(&self, from: Square, to: Square, promotion: Option<PieceKind>) -> String {
        qchess_cli::plain_move::akl_text(from, to, promotion)
    }

    fn play(&mut self, text: &str, io: &mut Io<'_>) -> Result<Played, String> {
        // The turn writes as it goes (it may ask for a destination).
        match human_turn(&mut self.game, text, io).map_err(|e| e.message)? {
            Flow::Played => Ok(Played::Done(String::new())),
            Flow::Refused => Err(String::new()),
            Flow::Quit => Ok(Played::EndOfInput),
        }
    }

    fn undo(&mut self) -> Result<String, String> {
        let mut record = self.game.record();
        let Some(last) = record.entries.pop() else {
            return Err("there is no move to undo".into());
        };
        self.game = record.replay().map_err(|e| e.to_string())?;
        let text = last.format(Style::Ascii);
        self.redo.push(last);
        Ok(format!("took back {text}"))
    }

    fn redo(&mut self) -> Result<String, String> {
        let entry = self.redo.pop().ok_or("there is no move to redo")?;
        match self.game.apply_entry(&entry, None) {
            Ok(done) => Ok(format!("played {} again", done.format(Style::Ascii))),
            Err(e) => {
                self.redo.push(entry);
                Err(e.to_string())
            }
        }
    }

    fn clear_redo(&mut self) {
        self.redo.clear();
    }

    fn history(&self) -> String {
        let mut s = self.game.record().entries_text(Style::Ascii);
        s.push_str("(the start position with its secret types is shown when the game ends)");
        s
    }

    fn save_text(&self) -> Result<String, String> {
        Ok(self.game.record().to_text(Style::Ascii))
    }

    fn saved(&self, path: &str) -> String {
        format!(
            "saved to {path} (the file holds the secret set-up: reading it reveals every \
             piece's hidden type)"
        )
    }

    fn load_text(&mut self, text: &str) -> Result<String, String> {
        let record = GameRecord::parse(text).map_err(|e| format!("not a game record: {e}"))?;
        self.game = record.replay().map_err(|e| format!("cannot replay: {e}"))?;
        self.redo.clear();
        Ok(format!("loaded a game of {} turns", record.entries.len()))
    }

    fn own_commands(&self) -> Vec<(&'static str, &'static str)> {
        vec![
            (
                "touch SQUARE",
                "touch a piece (a quantum piece collapses); same as typing the square",
            ),
            (
                "record",
                "the moves so far (the secret set-up is shown when the game ends)",
            ),
        ]
    }

    fn own_command(&mut self, word: &str, rest: &str, io: &mut Io<'_>) -> Option<String> {
        match word {
            "record" => Some(self.history()),
            "touch" => Some(match self.play(rest, io) {
                Ok(Played::Done(text)) => {
                    self.redo.clear();
                    text
                }
                Ok(Played::EndOfInput) => String::new(),
                Err(text) => text,
            }),
            _ => None,
        }
    }

    fn help_notation(&self) -> String {
        NOTATION.to_string()
    }

    fn help_topics(&self) -> Vec<(&'static str, String)> {
        TOPICS.iter().map(|(t, s)| (*t, s.to_string())).collect()
    }

    fn against_computer(&self) -> bool {
        self.seats.computer
    }
}

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
    let seats = super::Seats::of(args)?;
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let game = match &args.load {
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
    let mut session = AklSession {
        game,
        redo: Vec::new(),
        seats,
        seed: args.seed,
    };
    let mut io = Io {
        input,
        output,
        rng: &mut rng,
    };
    shell::run(&mut session, &mut io)
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

/// How a person's turn ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Flow {
    /// The turn was played (a move, or a touch that ends the turn).
    Played,
    /// Nothing happened: the game is as it was.
    Refused,
    /// The input ended (or the person quit) with the touched piece still to move.
    Quit,
}

/// One turn of a person: touch, then (if the piece can move) a destination until a legal one
/// is given (touch-move: the touched piece must move). Everything is written to the terminal
/// as it happens.
fn human_turn(game: &mut Game, text: &str, io: &mut Io<'_>) -> Result<Flow, CliError> {
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
            writeln!(io.output, "{e}; type a square to touch, or help")?;
            return Ok(Flow::Refused);
        }
    };
    let side = game.side_to_move();
    let touch = match game.touch(square, io.rng) {
        Ok(t) => t,
        Err(e) => {
            writeln!(io.output, "{e}")?;
            return Ok(Flow::Refused);
        }
    };
    writeln!(io.output, "{}", touch_text(side, &touch))?;
    let TouchResult::MustMove(moves) = touch.result else {
        return Ok(Flow::Played);
    };
    let mut next = dest_text;
    loop {
        let dest = match next.take() {
            Some(d) => d,
            None => {
                let list: Vec<String> = moves.iter().map(|m| m.to.to_string()).collect();
                writeln!(
                    io.output,
                    "{} can go to: {}",
                    piece_name(touch.kind),
                    dedup(list).join(" ")
                )?;
                write!(io.output, "{} move {square}> ", color_name(side))?;
                io.output.flush()?;
                match io.read_line()? {
                    Some(l) => l,
                    // The input ended with the touched piece still to move.
                    None => return Ok(Flow::Quit),
                }
            }
        };
        match dest.as_str() {
            "quit" | "exit" => return Ok(Flow::Quit),
            "help" => {
                writeln!(io.output, "{NOTATION}")?;
                continue;
            }
            "record" | "history" => {
                write!(io.output, "{}", game.record().entries_text(Style::Ascii))?;
                continue;
            }
            _ => {}
        }
        // The shared forms of a plain move name the touched square again: e2e4 or e2 e4.
        let dest = match super::shell::plain_move(&dest) {
            Some((from, to, promotion)) if from == square => match promotion {
                None => to.to_string(),
                Some(k) => format!("{to}={}", k.to_char().to_ascii_uppercase()),
            },
            _ => dest,
        };
        match parse_destination(&dest) {
            // The mark |psi> claims a dark landing square; a capture's <x|y> is drawn at
            // random here whatever is written, so only the landing square is checked.
            Ok(d) if d.superposed && !qchess_akl::is_dark(d.to) => writeln!(
                io.output,
                "{} is a light square: the piece would stay classical there (drop |psi>)",
                d.to
            )?,
            Ok(d) => {
                let mv = AklMove {
                    from: square,
                    to: d.to,
                    promotion: d.promotion,
                };
                match game.play(mv, io.rng) {
                    Ok(entry) => {
                        writeln!(
                            io.output,
                            "{} played {}",
                            color_name(side),
                            entry_text(&entry)
                        )?;
                        return Ok(Flow::Played);
                    }
                    Err(e) => writeln!(io.output, "{e}")?,
                }
            }
            Err(e) => writeln!(
                io.output,
                "{e} (type the destination square, e.g. f3 or e8=Q)"
            )?,
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
    use super::super::{Opponent, Variant};
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
            memory: None,
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
            "zz\ne9\ne4\ne8\ne1 -> d1\nd8\nd1\n",
        );
        std::fs::remove_file(path).unwrap();
        assert!(out.contains("unknown command \"zz\"; type help"), "{out}");
        assert!(out.contains("invalid square \"e9\""), "{out}");
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
