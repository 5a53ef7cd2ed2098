//! `qchess play --variant niels`: Niel's Chess in the terminal, between two people or against
//! the built-in random mover. Owned by the qchess-niels work; see docs/niels.md.
//!
//! At the shared prompt ([`super::shell`]): a move in the notation of docs/niels.md (`e2e4`,
//! `c6^d4e5:oo`, `f6&f6d5:oo@e4`, `f:e4`, `z:e4`, `h:e4`, `e1~e5`, `c:e4`, `e7e8=q`), the
//! shared commands, and `record` (the game record, which `--load` and `load` read back).

use super::PlayArgs;
use super::shell::{self, Io, Played, Session, starts_with_square};
use crate::error::CliError;
use qchess_board::{Geometry, PieceKind, Square};
use qchess_niels::{
    Diagonal, Game, GameRecord, Move, MoveOutcome, Rules, Status, color_name, render_oriented,
};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};

/// The notation lines of `help`, only those the rules in force allow.
fn notation_help(rules: &Rules) -> String {
    let mut s = String::from(
        "Niel's Chess: a piece in superposition is an indefinite pair, two half-pieces with a red \
and a blue mark; capturing or being captured collapses it by a roll of the dice.\nmoves:\n\
  e2e4 (or e2 e4, e2-e4)  a move, or an attempted capture when a pair is involved (dice decide)\n",
    );
    if rules.stay_only {
        s.push_str(
            "  c6^c6e5:oo              superposition, move-and-stay only (section 7, rule 2): red half \
stays on c6, blue goes to e5; facings o = faces the opponent, p = faces the player\n",
        );
    } else {
        s.push_str(
            "  c6^d4e5:oo              superposition (7.1): the red half to d4, the blue to e5; facings \
o = mark faces the opponent, p = faces the player (oo, op, po, pp)\n",
        );
    }
    s.push_str(
        "  f6&f6d5:oo@e4           entanglement (8.1): join the superposition of the opponent's pair \
on e4; halves on f6 and d5\n",
    );
    if !rules.simplified {
        s.push_str(
            "  f:e4                    flip (7.7): turn both marks of the pair on e4 around\n",
        );
    }
    if rules.hadamard {
        s.push_str(
            "  z:e4                    Z move (Appendix D): the pair's phase flips\n  \
h:e4                    Hadamard move (Appendix D)\n",
        );
    }
    if rules.tunnelling {
        s.push_str(
            "  e1~e5                   tunnel (schools paper App. C): through one conventional \
opponent piece; succeeds on a 6\n",
        );
    }
    if rules.remote_collapse {
        s.push_str(
            "  c:e4                    remote collapse (section 7, rule 3): roll for your pair on e4, \
then move the piece it collapsed to\n",
        );
    }
    s.push_str(
        "  e7e8=q (or e7e8q)       promotion\n\
board: a letter is a conventional piece (upper case White); Nro|1 is a half of pair 1 of a knight \
with its red mark (r, or b blue) facing the opponent (o, or p the player); +/- after the mark: \
entangled on the + or - diagonal. The lines under the board list every pair with P(red).",
    );
    s
}

/// The rule topics of `help <topic>`, only those the rules in force use.
fn topics(rules: &Rules) -> Vec<(&'static str, String)> {
    let mut t = vec![
        (
            "superposition",
            "superposition (Article 7.1): \"A conventional piece may move to two unoccupied squares \
at once (each reachable as per Articles 3.1 to 3.8), or move to one unoccupied square and stay \
where it is at once. This is called a 'superposition move'.\" 7.2: both marks facing the same \
side is an 'equal superposition' (1/2 each), one each way an 'unequal superposition' (2/3 for \
the half whose mark faces the opponent)."
                .to_string(),
        ),
        (
            "dice",
            "dice (Article 7.5, step 2): \"Each player who has an indefinite piece on the intended \
square of arrival rolls a six-sided dice\". Equal superposition with opponent-facing marks: 2, \
4, 6 collapse to the red half, 1, 3, 5 to the blue; unequal: 1-4 to the half facing the \
opponent, 5-6 to the other. \"if both players have to roll the dice, the one whose piece is \
attempted to be captured goes first.\" The game rolls for you and prints the rolls."
                .to_string(),
        ),
        (
            "capture",
            "capture (Article 7.4-7.5): \"A capture in which at least one indefinite pair instance \
is involved is called an 'attempted capture'.\" After the rolls, \"If ... two conventional \
pieces are on the same square, the capture is said to be 'successful'\"; otherwise the \
attacker just moves there or the capture fails."
                .to_string(),
        ),
        (
            "entanglement",
            "entanglement (Article 8.1, 8.4): \"A conventional piece may join the superposition in \
which an opponent's indefinite piece participates. ... an attempted capture will collapse them \
in tandem\": entangled pairs collapse with the same roll. The opponent rotates their pair onto a \
diagonal (8.3 step 2): the game asks for + or -."
                .to_string(),
        ),
        (
            "check",
            "indefinite check (Articles 8.7-8.9): \"If the king, indefinite or not, is attacked by an \
opponent's piece, it counts as a 'check' only if a hypothetical capture of that king piece \
would have a greater than zero chance of success.\" A move that could expose your king with \
any chance of success is illegal (7.6)."
                .to_string(),
        ),
    ];
    if !rules.simplified {
        t.push((
            "flip",
            "flip (Article 7.7): a pair whose halves are one move apart may \"merely invert the \
facing of the marks on both pieces\", if that changes the position. Written f:e4."
                .to_string(),
        ));
    } else {
        t.push((
            "simplified",
            "simplified game (Appendix A, Article 9): the red mark always faces the opponent, so \
every superposition is equal and there is no flip move."
                .to_string(),
        ));
    }
    if rules.hadamard {
        t.push((
            "hadamard",
            "Hadamard game (Appendix D): \"unequal\" superposition becomes equal superposition with \
a phase; z:e4 flips the phase, h:e4 applies a Hadamard move to the pair."
                .to_string(),
        ));
    }
    if rules.tunnelling {
        t.push((
            "tunnelling",
            "tunnelling (schools paper, Appendix C): a rook, bishop or queen may try to pass \
through one conventional opponent piece, e1~e5; it succeeds on a roll of 6."
                .to_string(),
        ));
    }
    if rules.remote_collapse {
        t.push((
            "collapse",
            "remote collapse (section 7, competitive rule 3): \"'remotely' collapse an indefinite \
pair instance owned by the player (incl. those entangled with it), and then immediately make a \
move with the resulting conventional piece.\" Written c:e4."
                .to_string(),
        ));
    }
    t
}

/// `qchess play --variant niels` at the shared prompt.
struct NielsSession {
    game: Game,
    /// Undone moves with their rolls, last undone last.
    redo: Vec<(Move, Vec<u8>)>,
    seats: super::Seats,
}

impl NielsSession {
    fn rolls(outcome: &MoveOutcome) -> Vec<u8> {
        outcome.rolls.iter().map(|r| r.value).collect()
    }
}

impl Session for NielsSession {
    fn banner(&self) -> String {
        format!(
            "Niel's Chess (independent implementation of the published rules); rules: {}",
            display_rules(self.game.rules())
        )
    }

    fn board(&self, flipped: bool) -> String {
        let mut s = render_oriented(self.game.position(), self.game.rules(), flipped);
        if self.game.status() == Status::Ongoing && self.game.in_check() {
            s.push_str("check\n");
        }
        s
    }

    fn game_over(&self) -> Option<String> {
        let status = self.game.status();
        (status != Status::Ongoing)
            .then(|| format!("{status} ({})\n{}", status.result(), self.game.record()))
    }

    fn prompt(&self) -> String {
        "> ".into()
    }

    fn computer_to_move(&self) -> bool {
        self.seats
            .computer_moves(self.game.position().side_to_move())
    }

    fn computer_move(&mut self, io: &mut Io<'_>) -> Result<String, CliError> {
        let side = self.game.position().side_to_move();
        let moves = self.game.legal_moves();
        let chosen = match self.seats.engine {
            Some((level, seed)) => super::engine_of(level, seed)
                .search(&self.game, &super::engine_limits())
                .ok()
                .map(|r| r.best),
            None => moves.choose(io.rng).copied(),
        };
        let Some(mv) = chosen else {
            return Err(CliError::failure("the computer has no legal move"));
        };
        // 8.3 step 2: the person, as the random mover's opponent, picks the diagonal.
        let mv = choose_diagonal(&self.game, mv, true, io.input, io.output, io.rng);
        let outcome = self
            .game
            .play(&mv, io.rng)
            .map_err(|e| CliError::failure(e.to_string()))?;
        Ok(format!(
            "{} plays {mv}{}",
            color_name(side),
            rolls_text(&outcome)
        ))
    }

    fn moves(&self, square: Option<Square>) -> Result<String, String> {
        let list: Vec<String> = self
            .game
            .legal_moves()
            .iter()
            .map(|m| m.to_string())
            .filter(|m| match square {
                None => true,
                Some(sq) => {
                    let name = sq.to_string();
                    m.starts_with(&name) || m.ends_with(&format!(":{name}"))
                }
            })
            .collect();
        if list.is_empty() {
            if let Some(sq) = square {
                return Err(format!("no legal move from {sq}"));
            }
        }
        Ok(format!("{} legal moves: {}", list.len(), list.join(" ")))
    }

    fn canonical(&self, from: Square, to: Square, promotion: Option<PieceKind>) -> String {
        qchess_cli::plain_move::niels_text(from, to, promotion)
    }

    fn looks_like_move(&self, word: &str) -> bool {
        let b = word.as_bytes();
        starts_with_square(word) || (b.len() >= 2 && b"fzhcFZHC".contains(&b[0]) && b[1] == b':')
    }

    fn play(&mut self, text: &str, io: &mut Io<'_>) -> Result<Played, String> {
        let side = self.game.position().side_to_move();
        let played = text
            .parse::<Move>()
            .and_then(|mv| self.game.check_move(&mv))
            .and_then(|mv| {
                let mv = choose_diagonal(
                    &self.game,
                    mv,
                    !self.seats.computer,
                    io.input,
                    io.output,
                    io.rng,
                );
                self.game.play(&mv, io.rng).map(|o| (mv, o))
            });
        match played {
            Ok((mv, outcome)) => Ok(Played::Done(format!(
                "{} played {mv}{}",
                color_name(side),
                rolls_text(&outcome)
            ))),
            Err(e) => Err(e.to_string()),
        }
    }

    fn undo(&mut self) -> Result<String, String> {
        let played = self.game.undo().ok_or("there is no move to undo")?;
        self.redo.push((played.mv, Self::rolls(&played.outcome)));
        Ok(format!("took back {}", played.mv))
    }

    fn redo(&mut self) -> Result<String, String> {
        let (mv, rolls) = self.redo.pop().ok_or("there is no move to redo")?;
        match self.game.play_with_rolls(&mv, &rolls) {
            Ok(outcome) => Ok(format!("played {mv} again{}", rolls_text(&outcome))),
            Err(e) => {
                self.redo.push((mv, rolls));
                Err(e.to_string())
            }
        }
    }

    fn clear_redo(&mut self) {
        self.redo.clear();
    }

    fn history(&self) -> String {
        let record = self.game.record();
        record
            .moves
            .iter()
            .map(|(mv, rolls)| {
                if rolls.is_empty() {
                    mv.to_string()
                } else {
                    let r: Vec<String> = rolls.iter().map(u8::to_string).collect();
                    format!("{mv}[{}]", r.join(","))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn save_text(&self) -> Result<String, String> {
        Ok(self.game.record().to_string())
    }

    fn load_text(&mut self, text: &str) -> Result<String, String> {
        let record: GameRecord = text
            .parse()
            .map_err(|e| format!("not a game record: {e}"))?;
        self.game = record.replay().map_err(|e| format!("cannot replay: {e}"))?;
        self.redo.clear();
        Ok(format!("loaded a game of {} moves", record.moves.len()))
    }

    fn own_commands(&self) -> Vec<(&'static str, &'static str)> {
        vec![(
            "record",
            "the game record with rules, board and rolls (what save writes)",
        )]
    }

    fn own_command(&mut self, word: &str, _rest: &str, _io: &mut Io<'_>) -> Option<String> {
        (word == "record").then(|| {
            let mut s = self.game.record().to_string();
            if s.ends_with('\n') {
                s.pop();
            }
            s
        })
    }

    fn help_notation(&self) -> String {
        notation_help(self.game.rules())
    }

    fn help_topics(&self) -> Vec<(&'static str, String)> {
        topics(self.game.rules())
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
    let rules =
        Rules::parse_list(&args.rules.join(",")).map_err(|e| CliError::usage(e.to_string()))?;
    let game = match &args.load {
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
    let seats = super::Seats::of(args)?;
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut session = NielsSession {
        game,
        redo: Vec::new(),
        seats,
    };
    let mut io = Io {
        input,
        output,
        rng: &mut rng,
    };
    shell::run(&mut session, &mut io)
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
    use crate::play::Opponent;

    fn args(rules: &[&str], board: Option<&str>, opponent: Opponent) -> PlayArgs {
        PlayArgs {
            variant: super::super::Variant::Niels,
            rules: rules.iter().map(|s| s.to_string()).collect(),
            board: board.map(str::to_string),
            opponent,
            color: "w".into(),
            seed: 1,
            load: None,
            memory: None,
        }
    }

    #[test]
    fn two_people_play_and_errors_are_shown() {
        let mut out = Vec::new();
        let script = "b1^a3c3:oo\nzz\ne5e9\ne5e4\nundo\ne5e4\nmoves\nquit\n";
        play(
            &args(&["simplified"], Some("5x6"), Opponent::Human),
            &mut script.as_bytes(),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("white played b1^a3c3:oo"), "{text}");
        assert!(text.contains("unknown command \"zz\"; type help"), "{text}");
        assert!(text.contains("cannot parse \"e5e9\""), "{text}");
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
