//! `qchess match`: paired games between two players, in the manner of cutechess-cli /
//! fastchess. The runner owns the true game and its randomness: it samples every outcome
//! itself, enforces time and legality, and scores everything from engine1's side.
//!
//! A `cmd:<command line>` player is an external program speaking the `qchess engine`
//! protocol (docs/engine.md, "Match runner"): one process per game, started in its own
//! process group, told the game through `position` lines with every outcome attached (Akl:
//! the side to move's view only) and asked with `go`. A late answer, an illegal or unparsable
//! one, or an exit loses that game, is reported, and the match goes on; the process group is
//! killed at the end of every game.

use crate::error::{CliError, quote_prefix};
use clap::Args;
use qchess_engine::{AklChoice, Engine, EngineOptions, Limits};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// Games longer than this many plies are adjudicated drawn.
const MAX_PLIES: usize = 400;

/// How long an external engine may take to answer `uci` with `uciok` and `isready` with
/// `readyok` while a game is set up.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest line an external engine may write (a longer one is a protocol error).
const MAX_LINE: usize = 64 * 1024;

/// The ways a player loses a game by misbehaving; a game ending so is reported.
const FORFEITS: [&str; 4] = ["illegal move", "time forfeit", "crash", "protocol error"];

/// Arguments of `qchess match`.
#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    /// Rule system: cantwell, niels or akl.
    #[arg(long)]
    pub variant: String,
    /// Comma-separated rule options of the variant.
    #[arg(long, default_value = "")]
    pub rules: String,
    /// Board size WxH (Niel's Chess only; default 8x8).
    #[arg(long, default_value = "8x8")]
    pub board: String,
    /// The first player: builtin[:level=L], random, or cmd:<command line> (a program
    /// speaking the `qchess engine` protocol).
    #[arg(long)]
    pub engine1: String,
    /// The second player.
    #[arg(long)]
    pub engine2: String,
    /// Number of games (rounded up to whole pairs).
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Time per move in milliseconds.
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Clock per game: SECONDS+INCREMENT (e.g. 10+0.1).
    #[arg(long)]
    pub tc: Option<String>,
    /// Milliseconds a cmd: player may answer after its time is up before it loses on time.
    #[arg(long, default_value_t = 200)]
    pub timemargin: u64,
    /// Seed of the runner's randomness; pair k plays with seed S+k.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Write every game to this file as PGN.
    #[arg(long)]
    pub pgn: Option<std::path::PathBuf>,
    /// Print one JSON object at the end instead of text.
    #[arg(long)]
    pub json: bool,
    /// A sequential probability ratio test: `--sprt elo0=A elo1=B`.
    #[arg(long, num_args = 2, value_names = ["elo0=A", "elo1=B"])]
    pub sprt: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
enum Spec {
    Builtin(u8),
    Random,
    /// An external program: its command line split into words.
    Cmd(Vec<String>),
}

fn parse_spec(text: &str) -> Result<Spec, CliError> {
    if text == "random" {
        return Ok(Spec::Random);
    }
    if let Some(line) = text.strip_prefix("cmd:") {
        let words = split_command_line(line)
            .map_err(|e| CliError::usage(format!("bad player {text:?}: {e}")))?;
        if words.is_empty() {
            return Err(CliError::usage(format!(
                "bad player {text:?}: cmd: needs a command line, e.g. cmd:./mybot --uci"
            )));
        }
        return Ok(Spec::Cmd(words));
    }
    let rest = text.strip_prefix("builtin").ok_or_else(|| {
        CliError::usage(format!(
            "bad player {text:?}: expected builtin[:level=L], random or cmd:<command line>"
        ))
    })?;
    if rest.is_empty() {
        return Ok(Spec::Builtin(3));
    }
    rest.strip_prefix(":level=")
        .and_then(|l| l.parse().ok())
        .filter(|l| (1..=5).contains(l))
        .map(Spec::Builtin)
        .ok_or_else(|| CliError::usage(format!("bad player {text:?}: the level is 1..5")))
}

/// Splits a command line into words as a POSIX shell splits them (blanks separate words;
/// `'...'` is literal; `"..."` keeps blanks and takes `\"`, `\\`, `\$` and `` \` `` as
/// escapes; a backslash outside quotes escapes the next character), without any expansion,
/// redirection or pipe: for those, write `sh -c '...'`.
fn split_command_line(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated ' quote in the command line".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => {
                                return Err("unterminated \" quote in the command line".into());
                            }
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated \" quote in the command line".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("the command line ends in a lone backslash".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Per-move time: a fixed movetime, or a clock with increment (milliseconds).
#[derive(Copy, Clone, Debug)]
enum Clock {
    Move(u64),
    Game { base: u64, inc: u64 },
}

fn parse_tc(text: &str) -> Result<Clock, CliError> {
    let (b, i) = text.split_once('+').unwrap_or((text, "0"));
    let secs = |s: &str| s.parse::<f64>().ok().filter(|v| *v >= 0.0 && v.is_finite());
    match (secs(b), secs(i)) {
        (Some(b), Some(i)) if b > 0.0 => Ok(Clock::Game {
            base: (b * 1000.0) as u64,
            inc: (i * 1000.0) as u64,
        }),
        _ => Err(CliError::usage(format!(
            "bad --tc {text:?}: expected SECONDS+INCREMENT"
        ))),
    }
}

/// The two sides' time in one game.
struct Clocks {
    clock: Clock,
    /// Milliseconds left on each clock (White, Black); unused with a fixed movetime.
    left: [u64; 2],
    /// The grace of a `cmd:` player's answer (milliseconds).
    margin: u64,
}

impl Clocks {
    fn new(clock: Clock, margin: u64) -> Clocks {
        let base = match clock {
            Clock::Game { base, .. } => base,
            Clock::Move(_) => u64::MAX,
        };
        Clocks {
            clock,
            left: [base, base],
            margin,
        }
    }

    /// A built-in player's time for this move.
    fn budget(&self, idx: usize) -> Duration {
        match self.clock {
            Clock::Move(ms) => Duration::from_millis(ms),
            Clock::Game { inc, .. } => {
                let left = self.left[idx];
                Duration::from_millis((left / 30 + inc * 3 / 4).min(left / 2).max(1))
            }
        }
    }

    /// The `go` line for side `idx` (a fixed movetime split into `share` answers) and how
    /// long its answer may take: the time given plus the margin.
    fn go(&self, idx: usize, share: u64) -> (String, Duration) {
        match self.clock {
            Clock::Move(ms) => {
                let t = (ms / share).max(1);
                (
                    format!("go movetime {t}"),
                    Duration::from_millis(t.saturating_add(self.margin)),
                )
            }
            Clock::Game { inc, .. } => (
                format!(
                    "go wtime {} btime {} winc {inc} binc {inc}",
                    self.left[0], self.left[1]
                ),
                Duration::from_millis(self.left[idx].saturating_add(self.margin)),
            ),
        }
    }

    /// Takes `used` off side `idx`'s clock; the forfeit when it overran its clock by more
    /// than `margin` milliseconds.
    fn charge(&mut self, idx: usize, used: Duration, margin: u64) -> Result<(), Forfeit> {
        if let Clock::Game { .. } = self.clock {
            let used = used.as_millis().min(u64::MAX as u128) as u64;
            let left = self.left[idx];
            if used > left.saturating_add(margin) {
                return Err(Forfeit::new(
                    "time forfeit",
                    format!("used {used} ms with {left} ms on its clock"),
                ));
            }
            self.left[idx] = left.saturating_sub(used);
        }
        Ok(())
    }

    /// Adds the increment after side `idx`'s turn.
    fn end_turn(&mut self, idx: usize) {
        if let Clock::Game { inc, .. } = self.clock {
            self.left[idx] = self.left[idx].saturating_add(inc);
        }
    }
}

/// Why a player lost a game by misbehaving: one of [`FORFEITS`] and the details.
#[derive(Debug)]
struct Forfeit {
    kind: &'static str,
    detail: String,
}

impl Forfeit {
    fn new(kind: &'static str, detail: impl Into<String>) -> Forfeit {
        Forfeit {
            kind,
            detail: detail.into(),
        }
    }

    fn illegal(detail: impl Into<String>) -> Forfeit {
        Forfeit::new("illegal move", detail)
    }

    fn protocol(detail: impl Into<String>) -> Forfeit {
        Forfeit::new("protocol error", detail)
    }
}

/// What the game tells an external engine at the start (`setoption` lines).
struct Setup<'a> {
    variant: &'a str,
    rules: &'a str,
    board: &'a str,
    seed: u64,
}

/// One line an external engine wrote, or the sign that it wrote one too long.
enum Line {
    Text(String),
    TooLong,
}

/// A running external engine (`cmd:`): its process, a thread feeding its stdin (so a
/// player that stops reading can never block the runner) and a thread reading its stdout.
/// Dropping it sends `quit`, waits briefly and kills its whole process group.
struct External {
    child: Child,
    to_engine: Option<Sender<String>>,
    from_engine: Receiver<Line>,
}

impl External {
    /// Starts `words[0]` with arguments `words[1..]`, stdin and stdout piped, stderr
    /// discarded, in a process group of its own (Unix).
    fn start(words: &[String]) -> std::io::Result<External> {
        let mut command = Command::new(&words[0]);
        command
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        let mut child = command.spawn()?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (to_engine, inbox) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in inbox {
                if writeln!(stdin, "{line}")
                    .and_then(|_| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
        });
        let (outbox, from_engine) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match (&mut reader)
                    .take(MAX_LINE as u64)
                    .read_until(b'\n', &mut buf)
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let line = if buf.ends_with(b"\n") || buf.len() < MAX_LINE {
                    Line::Text(String::from_utf8_lossy(&buf).trim_end().to_string())
                } else {
                    Line::TooLong
                };
                let stop = matches!(line, Line::TooLong);
                if outbox.send(line).is_err() || stop {
                    break;
                }
            }
        });
        Ok(External {
            child,
            to_engine: Some(to_engine),
            from_engine,
        })
    }

    fn send(&mut self, line: &str) -> Result<(), Forfeit> {
        let sent = self
            .to_engine
            .as_ref()
            .is_some_and(|s| s.send(line.to_string()).is_ok());
        if sent { Ok(()) } else { Err(self.crash()) }
    }

    /// The forfeit of an engine whose output closed: its exit status when it has one.
    fn crash(&mut self) -> Forfeit {
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Forfeit::new("crash", format!("the engine exited ({status})"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Forfeit::new("crash", "the engine closed its output")
    }

    /// Reads lines until one is `want`, within [`SETUP_TIMEOUT`]; other lines are skipped,
    /// except that with `refuse_errors` an `info string error:` line fails the setup.
    fn wait_for(&mut self, want: &str, refuse_errors: bool) -> Result<(), Forfeit> {
        let deadline = Instant::now() + SETUP_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from_engine.recv_timeout(left) {
                Ok(Line::Text(line)) => {
                    let line = line.trim();
                    if line == want {
                        return Ok(());
                    }
                    if refuse_errors && line.starts_with("info string error:") {
                        return Err(Forfeit::protocol(format!(
                            "the engine refused the game's setup: {}",
                            quote_prefix(line)
                        )));
                    }
                }
                Ok(Line::TooLong) => return Err(too_long()),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Forfeit::protocol(format!(
                        "no {want} within {} s",
                        SETUP_TIMEOUT.as_secs()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.crash()),
            }
        }
    }

    /// The handshake of a new game: `uci` until `uciok`, the options, `isready` until
    /// `readyok` (an `info string error:` before it refuses the setup), `ucinewgame`.
    fn handshake(&mut self, setup: &Setup) -> Result<(), Forfeit> {
        self.send("uci")?;
        self.wait_for("uciok", false)?;
        let rules = if setup.rules.is_empty() {
            "<empty>"
        } else {
            setup.rules
        };
        for line in [
            format!("setoption name UCI_Variant value {}", setup.variant),
            format!("setoption name Rules value {rules}"),
            format!("setoption name Board value {}", setup.board),
            format!("setoption name Seed value {}", setup.seed & i64::MAX as u64),
            "isready".into(),
        ] {
            self.send(&line)?;
        }
        self.wait_for("readyok", true)?;
        self.send("ucinewgame")
    }

    /// Sends `position` and the `go` line of side `idx`, and reads the `bestmove` within
    /// the time given plus the margin; `info` lines are skipped. Charges the clock.
    fn ask(
        &mut self,
        position: &str,
        clocks: &mut Clocks,
        idx: usize,
        share: u64,
    ) -> Result<String, Forfeit> {
        // Lines left over from an earlier answer are dropped; a closed output is a crash.
        loop {
            match self.from_engine.try_recv() {
                Ok(_) => {}
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Err(self.crash()),
            }
        }
        let (go, allowed) = clocks.go(idx, share);
        self.send(position)?;
        self.send(&go)?;
        let start = Instant::now();
        loop {
            let Some(left) = allowed.checked_sub(start.elapsed()) else {
                return Err(self.late(&go, allowed));
            };
            match self.from_engine.recv_timeout(left) {
                Ok(Line::Text(line)) => {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    match words.as_slice() {
                        [] => {}
                        ["bestmove", mv] | ["bestmove", mv, "ponder", _] => {
                            let mv = mv.to_string();
                            let margin = clocks.margin;
                            clocks.charge(idx, start.elapsed(), margin)?;
                            return Ok(mv);
                        }
                        ["info", "string", "error:", ..] => {
                            return Err(Forfeit::protocol(format!(
                                "the engine reported {:?}",
                                quote_prefix(&line)
                            )));
                        }
                        ["info", ..] => {}
                        _ => {
                            return Err(Forfeit::protocol(format!(
                                "unparsable line {:?} (expected info ... or bestmove <move>)",
                                quote_prefix(&line)
                            )));
                        }
                    }
                }
                Ok(Line::TooLong) => return Err(too_long()),
                Err(RecvTimeoutError::Timeout) => return Err(self.late(&go, allowed)),
                Err(RecvTimeoutError::Disconnected) => return Err(self.crash()),
            }
        }
    }

    fn late(&mut self, go: &str, allowed: Duration) -> Forfeit {
        // The game is lost: the engine is killed now, not when the game's players are dropped.
        self.kill();
        Forfeit::new(
            "time forfeit",
            format!(
                "no bestmove within {} ms after \"{go}\" (its time plus the margin); the engine was killed",
                allowed.as_millis()
            ),
        )
    }

    /// Kills the engine's process group (Unix: with `kill -KILL -- -PGID`, which also ends
    /// what it started) and the engine itself, and reaps it.
    fn kill(&mut self) {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn too_long() -> Forfeit {
    Forfeit::protocol(format!("a line longer than {MAX_LINE} bytes"))
}

impl Drop for External {
    fn drop(&mut self) {
        if let Some(to_engine) = self.to_engine.take() {
            let _ = to_engine.send("quit".into());
        }
        // A moment to quit on its own (its output closes), then the whole group is killed.
        let until = Instant::now() + Duration::from_millis(100);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.from_engine.recv_timeout(left) {
                Ok(_) => {}
                Err(_) => break,
            }
        }
        self.kill();
    }
}

/// Checks before the match that a `cmd:` player starts and answers `uci` with `uciok`.
fn probe(name: &str, text: &str, spec: &Spec) -> Result<(), CliError> {
    let Spec::Cmd(words) = spec else {
        return Ok(());
    };
    let mut engine = External::start(words).map_err(|e| {
        CliError::usage(format!(
            "--{name} {text:?}: cannot start {:?}: {e}",
            words[0]
        ))
    })?;
    engine
        .send("uci")
        .and_then(|_| engine.wait_for("uciok", false))
        .map_err(|f| {
            CliError::usage(format!(
                "--{name} {text:?} does not speak the protocol: {}: {}",
                f.kind, f.detail
            ))
        })
}

/// A player of one game.
enum Player {
    Random,
    Builtin(u8),
    Cmd(External),
}

/// Opens both players of a game; `Err((white, forfeit))` when one of the external ones
/// cannot be started or set up (White's is tried first).
fn open_players(white: &Spec, black: &Spec, setup: &Setup) -> Result<[Player; 2], (bool, Forfeit)> {
    let open = |spec: &Spec| -> Result<Player, Forfeit> {
        Ok(match spec {
            Spec::Random => Player::Random,
            Spec::Builtin(l) => Player::Builtin(*l),
            Spec::Cmd(words) => {
                let mut e = External::start(words)
                    .map_err(|e| Forfeit::new("crash", format!("cannot start: {e}")))?;
                e.handshake(setup)?;
                Player::Cmd(e)
            }
        })
    };
    let w = open(white).map_err(|f| (true, f))?;
    let b = open(black).map_err(|f| (false, f))?;
    Ok([w, b])
}

/// Runs a built-in or random player's decision on the clock of side `idx`.
fn timed<T>(clocks: &mut Clocks, idx: usize, f: impl FnOnce(Duration) -> T) -> Result<T, Forfeit> {
    let start = Instant::now();
    let r = f(clocks.budget(idx));
    clocks.charge(idx, start.elapsed(), 0)?;
    Ok(r)
}

/// A built-in player's move on the clock of side `idx`: the engine's best within the time
/// that side has; `None` when it has no move.
fn builtin_move<G: qchess_engine::Searchable>(
    game: &G,
    options: EngineOptions,
    clocks: &mut Clocks,
    idx: usize,
) -> Result<Option<<G::Node as qchess_engine::SearchNode>::Move>, Forfeit> {
    timed(clocks, idx, |t| {
        Engine::new(options)
            .search(game, &Limits::movetime(t))
            .ok()
            .map(|r| r.best)
    })
}

/// The `position` line of a game replayed from the start with its outcome tokens.
fn startpos_line(moves: &[String]) -> String {
    if moves.is_empty() {
        "position startpos".into()
    } else {
        format!("position startpos moves {}", moves.join(" "))
    }
}

/// A Cantwell `bestmove`: QCAN without an outcome (the runner measures).
fn cantwell_choice(token: String) -> Result<String, Forfeit> {
    match token.parse::<qchess_cantwell::QcanMove>() {
        Err(e) => Err(Forfeit::illegal(format!("{token}: {e}"))),
        Ok(m) if m.outcome.is_some() => Err(Forfeit::illegal(format!(
            "{token}: a bestmove carries no outcome (.m0/.m1): the runner measures"
        ))),
        Ok(_) => Ok(token),
    }
}

/// A Niel's `bestmove`: a move without rolls (the runner rolls the dice).
fn niels_choice(token: &str) -> Result<qchess_niels::Move, Forfeit> {
    match qchess_niels::parse_token(token) {
        Err(e) => Err(Forfeit::illegal(format!("{token}: {e}"))),
        Ok((_, Some(_))) => Err(Forfeit::illegal(format!(
            "{token}: a bestmove carries no rolls: the runner rolls the dice"
        ))),
        Ok((mv, None)) => Ok(mv),
    }
}

/// The second answer of an Akl turn: `<from>-><to>[=P]` (or `-><to>[=P]`) for the touched
/// piece on `from`, one of its legal moves.
fn akl_move_choice(
    token: &str,
    from: qchess_board::Square,
    legal: &[qchess_akl::AklMove],
) -> Result<qchess_akl::AklMove, Forfeit> {
    let bad = |why: &str| Forfeit::illegal(format!("{token}: {why}"));
    let (head, dest) = token
        .split_once("->")
        .ok_or_else(|| bad("expected <from>-><to>[=Q] for the touched piece"))?;
    if !head.is_empty() && head.parse::<qchess_board::Square>().ok() != Some(from) {
        return Err(bad(&format!("the touched piece is on {from}")));
    }
    let (to, promotion) = match dest.split_once('=') {
        None => (dest, None),
        Some((to, p)) => {
            let mut chars = p.chars();
            let kind = match (chars.next(), chars.next()) {
                (Some(c), None) => qchess_board::PieceKind::from_char(c.to_ascii_lowercase()),
                _ => None,
            };
            (to, Some(kind.ok_or_else(|| bad("bad promotion piece"))?))
        }
    };
    let to: qchess_board::Square = to.parse().map_err(|e| bad(&format!("{e}")))?;
    legal
        .iter()
        .find(|m| m.to == to && m.promotion == promotion)
        .copied()
        .ok_or_else(|| bad(&format!("not a legal move of the piece touched on {from}")))
}

/// One finished game, from White's side.
struct Played {
    white_is_engine1: bool,
    /// 1 White won, 0 Black won, None drawn.
    white_won: Option<bool>,
    reason: String,
    moves: Vec<String>,
    seed: u64,
}

/// Runs `qchess match`.
pub fn run(args: &MatchArgs) -> Result<(), CliError> {
    let e1 = parse_spec(&args.engine1)?;
    let e2 = parse_spec(&args.engine2)?;
    let clock = match (&args.movetime, &args.tc) {
        (Some(_), Some(_)) => return Err(CliError::usage("give --movetime or --tc, not both")),
        (Some(ms), None) => Clock::Move(*ms),
        (None, Some(tc)) => parse_tc(tc)?,
        (None, None) => Clock::Move(100),
    };
    if !["cantwell", "niels", "akl"].contains(&args.variant.as_str()) {
        return Err(CliError::usage(format!(
            "unknown variant {:?}: expected cantwell, niels or akl",
            args.variant
        )));
    }
    let sprt = match &args.sprt {
        None => None,
        Some(v) => {
            let get = |key: &str| {
                v.iter()
                    .find_map(|a| a.strip_prefix(key).and_then(|x| x.parse::<f64>().ok()))
            };
            match (get("elo0="), get("elo1=")) {
                (Some(a), Some(b)) if a < b => Some((a, b)),
                _ => return Err(CliError::usage("--sprt needs elo0=A elo1=B with A < B")),
            }
        }
    };
    // Validate the rules and board once, on a throwaway game, and that cmd: players start.
    play_game(args, &Spec::Random, &Spec::Random, clock, 0, true)?;
    probe("engine1", &args.engine1, &e1)?;
    if e2 != e1 {
        probe("engine2", &args.engine2, &e2)?;
    }
    let pairs = args.games.div_ceil(2).max(1);
    let total = pairs * 2;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Played>>> = Mutex::new((0..total).map(|_| None).collect());
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..args.concurrency.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let seed = args.seed.wrapping_add((i / 2) as u64);
                    let engine1_white = i % 2 == 0;
                    let (w, b) = if engine1_white {
                        (&e1, &e2)
                    } else {
                        (&e2, &e1)
                    };
                    match play_game(args, w, b, clock, seed, false) {
                        Ok(mut g) => {
                            g.white_is_engine1 = engine1_white;
                            results.lock().expect("not poisoned")[i] = Some(g);
                        }
                        Err(e) => {
                            *failure.lock().expect("not poisoned") = Some(e);
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().expect("not poisoned") {
        return Err(e);
    }
    let games: Vec<Played> = results
        .into_inner()
        .expect("not poisoned")
        .into_iter()
        .flatten()
        .collect();
    report(args, &games, sprt)
}

/// Points for engine1 in a game: 1, 0.5 or 0.
fn engine1_points(g: &Played) -> f64 {
    match g.white_won {
        None => 0.5,
        Some(w) => {
            if w == g.white_is_engine1 {
                1.0
            } else {
                0.0
            }
        }
    }
}

/// Elo difference of a score fraction (clamped half a game away from 0 and 1, where it is
/// infinite).
fn elo_of(score: f64, n: f64) -> f64 {
    let s = score.clamp(0.5 / n, 1.0 - 0.5 / n);
    -400.0 * (1.0 / s - 1.0).log10()
}

fn report(args: &MatchArgs, games: &[Played], sprt: Option<(f64, f64)>) -> Result<(), CliError> {
    let n = games.len() as f64;
    let points: Vec<f64> = games.iter().map(engine1_points).collect();
    let wins = points.iter().filter(|p| **p == 1.0).count();
    let draws = points.iter().filter(|p| **p == 0.5).count();
    let losses = points.iter().filter(|p| **p == 0.0).count();
    let score = points.iter().sum::<f64>() / n;
    let var = points.iter().map(|p| (p - score).powi(2)).sum::<f64>() / n;
    let se = (var / n).sqrt();
    let elo = elo_of(score, n);
    let elo_error = (elo_of(score + 1.96 * se, n) - elo_of(score - 1.96 * se, n)) / 2.0;
    let sprt_text = sprt.map(|(e0, e1)| {
        // The normal approximation of the log-likelihood ratio (as fishtest's GSPRT).
        let s0 = 1.0 / (1.0 + 10f64.powf(-e0 / 400.0));
        let s1 = 1.0 / (1.0 + 10f64.powf(-e1 / 400.0));
        let llr = if var > 0.0 {
            n * (s1 - s0) * (2.0 * score - s0 - s1) / (2.0 * var)
        } else {
            0.0
        };
        let (lower, upper) = ((0.05f64 / 0.95).ln(), (0.95f64 / 0.05).ln());
        let verdict = if llr >= upper {
            "H1 accepted"
        } else if llr <= lower {
            "H0 accepted"
        } else {
            "inconclusive"
        };
        (llr, lower, upper, verdict)
    });
    if let Some(path) = &args.pgn {
        let mut text = String::new();
        for (i, g) in games.iter().enumerate() {
            let (w, b) = if g.white_is_engine1 {
                (&args.engine1, &args.engine2)
            } else {
                (&args.engine2, &args.engine1)
            };
            let result = match g.white_won {
                Some(true) => "1-0",
                Some(false) => "0-1",
                None => "1/2-1/2",
            };
            text.push_str(&format!(
                "[Event \"qchess match\"]\n[Round \"{}\"]\n[White \"{w}\"]\n[Black \"{b}\"]\n[Variant \"{}\"]\n[Seed \"{}\"]\n[Termination \"{}\"]\n[Result \"{result}\"]\n\n",
                i + 1, args.variant, g.seed, g.reason
            ));
            for (k, m) in g.moves.iter().enumerate() {
                if k % 2 == 0 {
                    text.push_str(&format!("{}. ", k / 2 + 1));
                }
                text.push_str(m);
                text.push(' ');
            }
            text.push_str(result);
            text.push_str("\n\n");
        }
        std::fs::write(path, text)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        let results: Vec<Value> = games
            .iter()
            .enumerate()
            .map(|(i, g)| {
                json!({
                    "game": i + 1,
                    "seed": g.seed,
                    "engine1_color": if g.white_is_engine1 { "white" } else { "black" },
                    "result": match g.white_won { Some(true) => "1-0", Some(false) => "0-1", None => "1/2-1/2" },
                    "score": engine1_points(g),
                    "reason": g.reason,
                    "plies": g.moves.len(),
                })
            })
            .collect();
        let v = json!({
            "games": games.len(), "wins": wins, "draws": draws, "losses": losses,
            "score": score, "elo": elo, "elo_error": elo_error, "results": results,
        });
        println!("{v}");
    } else {
        println!(
            "{} vs {} ({}): {} games, +{wins} ={draws} -{losses}, score {:.3}",
            args.engine1,
            args.engine2,
            args.variant,
            games.len(),
            score
        );
        println!("Elo difference: {elo:.1} +/- {elo_error:.1} (95 %)");
        for (i, g) in games.iter().enumerate() {
            if FORFEITS.iter().any(|k| g.reason.starts_with(k)) {
                // The loser of a forfeit is the side named in the reason.
                let white_lost = g.white_won == Some(false);
                let loser = if white_lost == g.white_is_engine1 {
                    &args.engine1
                } else {
                    &args.engine2
                };
                println!("game {}: {} ({loser} lost)", i + 1, g.reason);
            }
        }
        if let Some((llr, lo, hi, verdict)) = sprt_text {
            println!("SPRT: llr {llr:.2} ({lo:.2}, {hi:.2}): {verdict}");
        }
    }
    Ok(())
}

/// Plays one game (or, with `check_only`, builds its start and stops).
fn play_game(
    args: &MatchArgs,
    white: &Spec,
    black: &Spec,
    clock: Clock,
    seed: u64,
    check_only: bool,
) -> Result<Played, CliError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let bad = |e: String| CliError::usage(e);
    let mut clocks = Clocks::new(clock, args.timemargin);
    let mut moves: Vec<String> = Vec::new();
    let options = |level: u8| EngineOptions {
        level,
        seed,
        ..EngineOptions::default()
    };
    let setup = Setup {
        variant: &args.variant,
        rules: &args.rules,
        board: if args.variant == "niels" {
            &args.board
        } else {
            "8x8"
        },
        seed,
    };
    // The players of a real game; a cmd: player that cannot be set up loses at once.
    macro_rules! players {
        () => {
            match open_players(white, black, &setup) {
                Ok(p) => p,
                Err((w, f)) => return Ok(lost(w, f, moves, seed)),
            }
        };
    }
    match args.variant.as_str() {
        "cantwell" => {
            let mut opts = qchess_cantwell::RuleOptions::default();
            for r in args.rules.split(',').filter(|r| !r.is_empty()) {
                match r {
                    "fifty-move-measurement" => opts.fifty_move_measurement = true,
                    "repetition-claim" => opts.repetition_claim_measurement = true,
                    o => return Err(bad(format!("unknown cantwell rule option {o:?}"))),
                }
            }
            let mut game = qchess_cantwell::Game::new().with_options(opts);
            if check_only {
                return Ok(empty(seed));
            }
            let mut players = players!();
            while game.status().is_ongoing() && moves.len() < MAX_PLIES {
                let w = game.side_to_move() == qchess_board::Color::White;
                let idx = usize::from(!w);
                let chosen = match &mut players[idx] {
                    Player::Random => timed(&mut clocks, idx, |_| game.random_legal_move(&mut rng)),
                    Player::Builtin(l) => builtin_move(&game, options(*l), &mut clocks, idx),
                    Player::Cmd(e) => e
                        .ask(&startpos_line(&moves), &mut clocks, idx, 1)
                        .and_then(cantwell_choice)
                        .map(Some),
                };
                clocks.end_turn(idx);
                let mv = match chosen {
                    Ok(Some(mv)) => mv,
                    Ok(None) => {
                        // No legal move while the rules still call the game ongoing (the
                        // paper has no stalemate rule): the runner scores it drawn, and says so.
                        let side = if w { "white" } else { "black" };
                        return Ok(Played {
                            white_is_engine1: true,
                            white_won: None,
                            reason: format!("adjudicated draw: {side} has no legal move"),
                            moves,
                            seed,
                        });
                    }
                    Err(f) => return Ok(lost(w, f, moves, seed)),
                };
                match game.apply(&mv, &mut rng) {
                    Ok(rec) => moves.push(rec.notation),
                    Err(e) => {
                        return Ok(lost(w, Forfeit::illegal(format!("{mv}: {e}")), moves, seed));
                    }
                }
            }
            let won = match game.status() {
                qchess_cantwell::GameStatus::Won { winner, .. } => {
                    Some(winner == qchess_board::Color::White)
                }
                _ => None,
            };
            Ok(finish(won, &game.status().to_string(), moves, seed))
        }
        "niels" => {
            let rules =
                qchess_niels::Rules::parse_list(&args.rules).map_err(|e| bad(e.to_string()))?;
            let geometry: qchess_board::Geometry =
                args.board.parse().map_err(|e| bad(format!("{e}")))?;
            let mut game =
                qchess_niels::Game::new(rules, geometry).map_err(|e| bad(e.to_string()))?;
            if check_only {
                return Ok(empty(seed));
            }
            let mut players = players!();
            while game.status() == qchess_niels::Status::Ongoing && moves.len() < MAX_PLIES {
                let w = game.position().side_to_move() == qchess_board::Color::White;
                let idx = usize::from(!w);
                let chosen = match &mut players[idx] {
                    Player::Random => timed(&mut clocks, idx, |_| {
                        game.legal_moves().choose(&mut rng).copied()
                    }),
                    Player::Builtin(l) => builtin_move(&game, options(*l), &mut clocks, idx),
                    Player::Cmd(e) => e
                        .ask(&startpos_line(&moves), &mut clocks, idx, 1)
                        .and_then(|token| niels_choice(&token))
                        .map(Some),
                };
                clocks.end_turn(idx);
                let mv = match chosen {
                    Ok(Some(mv)) => mv,
                    Ok(None) => break,
                    Err(f) => return Ok(lost(w, f, moves, seed)),
                };
                match game.play(&mv, &mut rng) {
                    Ok(o) => moves.push(qchess_niels::format_token(
                        &mv,
                        &o.rolls.iter().map(|r| r.value).collect::<Vec<_>>(),
                    )),
                    Err(e) => {
                        return Ok(lost(w, Forfeit::illegal(format!("{mv}: {e}")), moves, seed));
                    }
                }
            }
            let won = match game.status() {
                qchess_niels::Status::Checkmate { winner } => {
                    Some(winner == qchess_board::Color::White)
                }
                _ => None,
            };
            Ok(finish(won, &game.status().to_string(), moves, seed))
        }
        _ => {
            let mut rules = qchess_akl::Rules::default();
            for r in args.rules.split(',').filter(|r| !r.is_empty()) {
                match r {
                    "own-pairs" => rules.visibility = qchess_akl::Visibility::OwnPairs,
                    o => return Err(bad(format!("unknown akl rule option {o:?}"))),
                }
            }
            let start = qchess_akl::AklPosition::startpos_random(&mut rng);
            let mut game = qchess_akl::Game::with_rules(start, rules);
            if check_only {
                return Ok(empty(seed));
            }
            let mut players = players!();
            while game.status() == qchess_akl::GameStatus::Ongoing && moves.len() < MAX_PLIES {
                let w = game.side_to_move() == qchess_board::Color::White;
                let idx = usize::from(!w);
                let before = game.history().len();
                let done = match &mut players[idx] {
                    Player::Random => timed(&mut clocks, idx, |_| {
                        qchess_akl::RandomMover
                            .play_turn(&mut game, &mut rng)
                            .map(|_| ())
                            .map_err(|e| Forfeit::illegal(e.to_string()))
                    })
                    .and_then(|r| r),
                    Player::Builtin(l) => {
                        let o = options(*l);
                        timed(&mut clocks, idx, |t| {
                            akl_builtin_turn(&mut game, o, t, &mut rng)
                        })
                        .and_then(|r| r)
                    }
                    Player::Cmd(e) => akl_cmd_turn(&mut game, e, &mut clocks, idx, &mut rng),
                };
                clocks.end_turn(idx);
                if let Err(f) = done {
                    return Ok(lost(w, f, moves, seed));
                }
                for e in &game.history()[before..] {
                    moves.push(e.to_string().replace(' ', ""));
                }
            }
            let won = match game.status() {
                qchess_akl::GameStatus::Won { winner } => {
                    Some(winner == qchess_board::Color::White)
                }
                _ => None,
            };
            Ok(finish(won, &game.status().to_string(), moves, seed))
        }
    }
}

/// A built-in player's Akl turn: two decisions, half the time each (the touch, then, when
/// the piece must move, the move).
fn akl_builtin_turn(
    game: &mut qchess_akl::Game,
    options: EngineOptions,
    t: Duration,
    rng: &mut ChaCha8Rng,
) -> Result<(), Forfeit> {
    let illegal = |e: String| Forfeit::illegal(e);
    let half = t / 2;
    let mut engine = Engine::new(options);
    let r = engine
        .search(game, &Limits::movetime(half))
        .map_err(|e| illegal(e.to_string()))?;
    let AklChoice::Touch(sq) = r.best else {
        return Err(illegal("the engine moved without a touch".into()));
    };
    game.touch(sq, rng).map_err(|e| illegal(e.to_string()))?;
    if game.pending_touch().is_some() {
        let r = engine
            .search(game, &Limits::movetime(half))
            .map_err(|e| illegal(e.to_string()))?;
        let AklChoice::Move(m) = r.best else {
            return Err(illegal("the engine touched twice".into()));
        };
        game.play(m, rng).map_err(|e| illegal(e.to_string()))?;
    }
    Ok(())
}

/// A `cmd:` player's Akl turn, as docs/engine.md describes it: `position fen <view>` (the
/// side to move's view, no moves) answered by the square to touch; the runner touches; when
/// the piece must move, `position fen <view> moves <square>` answered by the move. With a
/// fixed movetime each answer gets half of it.
fn akl_cmd_turn(
    game: &mut qchess_akl::Game,
    engine: &mut External,
    clocks: &mut Clocks,
    idx: usize,
    rng: &mut ChaCha8Rng,
) -> Result<(), Forfeit> {
    let side = game.side_to_move();
    let visibility = game.rules().visibility;
    let view = game.position().view_fen(side, visibility);
    let token = engine.ask(&format!("position fen {view}"), clocks, idx, 2)?;
    let sq: qchess_board::Square = token.parse().map_err(|_| {
        Forfeit::illegal(format!(
            "{token}: the first answer of an Akl turn is the square of the piece to touch"
        ))
    })?;
    game.touch(sq, rng)
        .map_err(|e| Forfeit::illegal(format!("{token}: {e}")))?;
    let Some((from, _, _)) = game.pending_touch() else {
        return Ok(());
    };
    let view = game.position().view_fen(side, visibility);
    let token = engine.ask(&format!("position fen {view} moves {from}"), clocks, idx, 2)?;
    let legal = game
        .pending_touch()
        .map(|(_, _, m)| m.to_vec())
        .unwrap_or_default();
    let mv = akl_move_choice(&token, from, &legal)?;
    game.play(mv, rng)
        .map_err(|e| Forfeit::illegal(format!("{token}: {e}")))?;
    Ok(())
}

fn empty(seed: u64) -> Played {
    finish(None, "", Vec::new(), seed)
}

/// The game lost by `white` (or Black) through `forfeit`, reported as
/// `<kind> by <colour>: <details>`.
fn lost(white: bool, forfeit: Forfeit, moves: Vec<String>, seed: u64) -> Played {
    let color = if white { "white" } else { "black" };
    Played {
        white_is_engine1: true,
        white_won: Some(!white),
        reason: format!("{} by {color}: {}", forfeit.kind, forfeit.detail),
        moves,
        seed,
    }
}

fn finish(won: Option<bool>, status: &str, moves: Vec<String>, seed: u64) -> Played {
    let reason = if moves.len() >= MAX_PLIES && won.is_none() {
        format!("adjudicated draw after {MAX_PLIES} plies")
    } else {
        status.to_string()
    };
    Played {
        white_is_engine1: true,
        white_won: won,
        reason,
        moves,
        seed,
    }
}

#[cfg(test)]
mod tests {
    use super::{Spec, akl_move_choice, parse_spec, split_command_line};
    use qchess_akl::AklMove;
    use qchess_board::{PieceKind, Square};

    #[test]
    fn command_lines_split_like_a_shell_without_expansion() {
        let split = |s: &str| split_command_line(s).unwrap();
        assert_eq!(split("  ./bot  --uci "), ["./bot", "--uci"]);
        assert_eq!(
            split(r#"sh -c 'echo "a b"; exit 3' x"#),
            ["sh", "-c", r#"echo "a b"; exit 3"#, "x"]
        );
        assert_eq!(
            split(r#"a"b c"d e\ f "\$HOME" '$HOME'"#),
            ["ab cd", "e f", "$HOME", "$HOME"]
        );
        assert_eq!(split(r#""x\n""#), [r"x\n"]);
        assert_eq!(split("''"), [""]);
        assert!(split_command_line("bot 'open").is_err());
        assert!(split_command_line("bot \"open").is_err());
        assert!(split_command_line("bot \\").is_err());
        assert_eq!(
            parse_spec("cmd:qchess engine").unwrap(),
            Spec::Cmd(vec!["qchess".into(), "engine".into()])
        );
        assert!(parse_spec("cmd: ").is_err());
    }

    #[test]
    fn akl_second_answers_name_a_legal_move_of_the_touched_piece() {
        let legal = [
            AklMove {
                from: Square::E7,
                to: Square::E8,
                promotion: Some(PieceKind::Queen),
            },
            AklMove {
                from: Square::E7,
                to: Square::E8,
                promotion: Some(PieceKind::Knight),
            },
        ];
        assert_eq!(
            akl_move_choice("e7->e8=Q", Square::E7, &legal).unwrap(),
            legal[0]
        );
        assert_eq!(
            akl_move_choice("->e8=n", Square::E7, &legal).unwrap(),
            legal[1]
        );
        for bad in [
            "e7->e8",
            "d7->e8=Q",
            "e7e8q",
            "e7->e9=Q",
            "e7->e8=X",
            "e7->e8=QQ",
        ] {
            let f = akl_move_choice(bad, Square::E7, &legal).unwrap_err();
            assert_eq!(f.kind, "illegal move", "{bad}");
            assert!(f.detail.starts_with(bad), "{bad}: {}", f.detail);
        }
    }
}
