//! `qchess engine`: the engine over a UCI-shaped text protocol on stdin/stdout
//! (docs/engine.md, "Protocol").
//!
//! Commands: `uci`, `setoption name <N> value <V>`, `isready`, `ucinewgame`,
//! `position startpos [moves M1 M2 ...]`, `position fen <FEN> [moves ...]`,
//! `go [depth D] [nodes N] [movetime MS] [wtime MS btime MS winc MS binc MS] [infinite]`,
//! `stop`, `quit`. Bad input gets `info string error: <message>` and the engine keeps running.

use crate::error::CliError;
use clap::Args;
use qchess_engine::{AklChoice, Engine, EngineOptions, Limits, SearchResult};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Arguments of `qchess engine` (none: everything is set through the protocol).
#[derive(Args, Debug)]
pub struct EngineArgs {}

/// Runs the protocol on stdin/stdout until `quit` or the end of input.
pub fn run(_args: &EngineArgs) -> Result<(), CliError> {
    let out: Shared = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    serve(std::io::stdin().lock(), out)
}

type Shared = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Shared, line: &str) {
    let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Variant {
    Cantwell,
    Niels,
    Akl,
}

/// The game the engine was told about.
#[derive(Clone, Debug)]
enum Position {
    Cantwell(qchess_cantwell::Game),
    Niels(qchess_niels::Game),
    Akl(qchess_akl::Game),
}

struct Session {
    variant: Variant,
    rules: String,
    board: String,
    level: u8,
    seed: u64,
    position: Option<Position>,
    /// The running search, its stop flag, and whether it was `go infinite` (which only `stop`,
    /// or any command that needs the search over, ends).
    search: Option<(JoinHandle<()>, Arc<AtomicBool>, bool)>,
    out: Shared,
}

/// Serves the protocol over `input`, answering on `out`.
/// Runs the protocol on any reader and writer (tests, fuzzing, embedding the engine in a
/// program): the same loop as `qchess engine`, until `quit` or the end of input.
///
/// ```
/// let mut out = Vec::new();
/// let input = "uci\nposition startpos\ngo depth 1\nquit\n";
/// qchess_cli::protocol::run_on(input.as_bytes(), &mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("uciok") && text.contains("bestmove "), "{text}");
/// ```
pub fn run_on(input: impl BufRead, out: &mut (impl Write + Send)) -> Result<(), CliError> {
    let buffer: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let shared: Shared = Arc::new(Mutex::new(Box::new(SharedBuffer(buffer.clone()))));
    let result = serve(input, shared);
    let bytes = std::mem::take(&mut *buffer.lock().unwrap_or_else(|e| e.into_inner()));
    out.write_all(&bytes)?;
    result
}

/// A writer into a buffer the search thread and the caller share.
struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuffer {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn serve(input: impl BufRead, out: Shared) -> Result<(), CliError> {
    let mut s = Session {
        variant: Variant::Cantwell,
        rules: String::new(),
        board: "8x8".into(),
        level: 3,
        seed: 0,
        position: None,
        search: None,
        out,
    };
    for line in input.split(b'\n') {
        let line = line?;
        let Ok(text) = std::str::from_utf8(&line) else {
            say(&s.out, "info string error: the line is not valid UTF-8");
            continue;
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some(&command) = words.first() else {
            continue;
        };
        let result = match command {
            "uci" => {
                s.uci();
                Ok(())
            }
            "isready" => {
                say(&s.out, "readyok");
                Ok(())
            }
            "setoption" => {
                s.finish();
                s.setoption(&words[1..])
            }
            "ucinewgame" => {
                s.finish();
                s.position = None;
                Ok(())
            }
            "position" => {
                s.finish();
                s.set_position(&words[1..])
            }
            "go" => {
                s.finish();
                s.go(&words[1..])
            }
            "stop" => {
                s.stop();
                Ok(())
            }
            "quit" => {
                s.stop();
                return Ok(());
            }
            other => Err(format!("unknown command {other:?}")),
        };
        if let Err(message) = result {
            say(&s.out, &format!("info string error: {message}"));
        }
    }
    s.finish();
    Ok(())
}

/// The moves a Cantwell rules list names (the same names as `qchess play --rules`).
fn cantwell_rules(list: &str) -> Result<qchess_cantwell::RuleOptions, String> {
    let mut options = qchess_cantwell::RuleOptions::default();
    for r in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        match r {
            "fifty-move-measurement" => options.fifty_move_measurement = true,
            "repetition-claim" => options.repetition_claim_measurement = true,
            other => {
                return Err(format!(
                    "unknown cantwell rule option {other:?}: expected fifty-move-measurement or repetition-claim"
                ));
            }
        }
    }
    Ok(options)
}

fn akl_rules(list: &str) -> Result<qchess_akl::Rules, String> {
    let mut rules = qchess_akl::Rules::default();
    for r in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        match r {
            "own-pairs" => rules.visibility = qchess_akl::Visibility::OwnPairs,
            other => {
                return Err(format!(
                    "unknown akl rule option {other:?}: expected own-pairs"
                ));
            }
        }
    }
    Ok(rules)
}

impl Session {
    fn uci(&self) {
        for line in [
            format!("id name qchess {}", env!("CARGO_PKG_VERSION")),
            "id author qchess developers".into(),
            "option name UCI_Variant type combo default cantwell var cantwell var niels var akl"
                .into(),
            "option name Rules type string default <empty>".into(),
            "option name Board type string default 8x8".into(),
            "option name Level type spin default 3 min 1 max 5".into(),
            format!(
                "option name Seed type spin default 0 min 0 max {}",
                i64::MAX
            ),
            "uciok".into(),
        ] {
            say(&self.out, &line);
        }
    }

    /// Waits for a running search to end by its own limits; an infinite one has none, so it
    /// is stopped (else a `position` after `go infinite`, or the end of input, would wait
    /// forever).
    fn finish(&mut self) {
        if let Some((handle, flag, infinite)) = self.search.take() {
            if infinite {
                flag.store(true, Ordering::Relaxed);
            }
            let _ = handle.join();
        }
    }

    /// Ends a running search now (it still answers with its best move so far).
    fn stop(&mut self) {
        if let Some((_, flag, _)) = &self.search {
            flag.store(true, Ordering::Relaxed);
        }
        self.finish();
    }

    fn setoption(&mut self, words: &[&str]) -> Result<(), String> {
        if words.first() != Some(&"name") {
            return Err("expected: setoption name <N> value <V>".into());
        }
        let value_at = words.iter().position(|w| *w == "value");
        let name_words = &words[1..value_at.unwrap_or(words.len())];
        if name_words.is_empty() {
            return Err("setoption needs an option name".into());
        }
        let name = name_words.join(" ");
        let value = value_at
            .map(|i| words[i + 1..].join(" "))
            .unwrap_or_default();
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => {
                let v = match value.as_str() {
                    "cantwell" => Variant::Cantwell,
                    "niels" => Variant::Niels,
                    "akl" => Variant::Akl,
                    other => {
                        return Err(format!(
                            "unknown variant {other:?}: expected cantwell, niels or akl"
                        ));
                    }
                };
                self.variant = v;
                self.position = None;
            }
            "rules" => {
                let list = if value == "<empty>" {
                    String::new()
                } else {
                    value
                };
                match self.variant {
                    Variant::Cantwell => cantwell_rules(&list).map(|_| ())?,
                    Variant::Niels => qchess_niels::Rules::parse_list(&list)
                        .map(|_| ())
                        .map_err(|e| e.to_string())?,
                    Variant::Akl => akl_rules(&list).map(|_| ())?,
                }
                self.rules = list;
                self.position = None;
            }
            "board" => {
                let g: qchess_board::Geometry = value
                    .parse()
                    .map_err(|e| format!("bad board {value:?}: {e}"))?;
                if self.variant != Variant::Niels && value != "8x8" {
                    return Err(format!(
                        "{g:?}: only Niel's Chess plays on other boards than 8x8"
                    ));
                }
                self.board = value;
                self.position = None;
            }
            "level" => {
                self.level = value
                    .parse()
                    .ok()
                    .filter(|l| (1..=5).contains(l))
                    .ok_or_else(|| format!("Level must be 1..5, not {value:?}"))?;
            }
            "seed" => {
                self.seed = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| *s <= i64::MAX as u64)
                    .ok_or_else(|| format!("Seed must be 0..{}, not {value:?}", i64::MAX))?;
            }
            _ => return Err(format!("unknown option {name:?}")),
        }
        Ok(())
    }

    fn set_position(&mut self, words: &[&str]) -> Result<(), String> {
        let moves_at = words.iter().position(|w| *w == "moves");
        let (head, moves) = match moves_at {
            Some(i) => (&words[..i], &words[i + 1..]),
            None => (words, &[][..]),
        };
        let fen = match head {
            ["startpos"] => None,
            ["fen", rest @ ..] if !rest.is_empty() => Some(rest.join(" ")),
            _ => return Err("expected: position startpos|fen <FEN> [moves ...]".into()),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let position = match self.variant {
            Variant::Cantwell => {
                let options = cantwell_rules(&self.rules)?;
                let mut g = match &fen {
                    None => qchess_cantwell::Game::new(),
                    Some(f) => qchess_cantwell::Game::from_fen(f).map_err(|e| e.to_string())?,
                }
                .with_options(options);
                for (i, m) in moves.iter().enumerate() {
                    g.apply(m, &mut rng)
                        .map_err(|e| format!("move {} {m:?}: {e}", i + 1))?;
                }
                Position::Cantwell(g)
            }
            Variant::Niels => {
                let rules =
                    qchess_niels::Rules::parse_list(&self.rules).map_err(|e| e.to_string())?;
                let geometry: qchess_board::Geometry =
                    self.board.parse().map_err(|e| format!("{e}"))?;
                let start = match &fen {
                    None => qchess_niels::Position::startpos(geometry),
                    Some(f) => qchess_niels::Position::from_fen(f, geometry),
                }
                .map_err(|e| e.to_string())?;
                let mut g = qchess_niels::Game::from_position(rules, start);
                for (i, m) in moves.iter().enumerate() {
                    g.play_token(m, &mut rng)
                        .map_err(|e| format!("move {} {m:?}: {e}", i + 1))?;
                }
                Position::Niels(g)
            }
            Variant::Akl => {
                let rules = akl_rules(&self.rules)?;
                let start = match &fen {
                    None => qchess_akl::AklPosition::startpos_random(&mut rng),
                    Some(f) => qchess_akl::AklPosition::parse(f)
                        .or_else(|e| {
                            qchess_akl::AklPosition::parse_view(f, rules.visibility, &mut rng)
                                .map_err(|_| e)
                        })
                        .map_err(|e| e.to_string())?,
                };
                let mut g = qchess_akl::Game::with_rules(start, rules);
                for (i, m) in moves.iter().enumerate() {
                    g.play_token(m, &mut rng)
                        .map_err(|e| format!("move {} {m:?}: {e}", i + 1))?;
                }
                Position::Akl(g)
            }
        };
        self.position = Some(position);
        Ok(())
    }

    fn go(&mut self, words: &[&str]) -> Result<(), String> {
        let mut limits = Limits::default();
        let (mut wtime, mut btime, mut winc, mut binc) = (None, None, 0u64, 0u64);
        let mut infinite = false;
        let mut i = 0;
        while i < words.len() {
            let key = words[i];
            if key == "infinite" {
                infinite = true;
                i += 1;
                continue;
            }
            let value: u64 = words
                .get(i + 1)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("go {key} needs a non-negative number"))?;
            match key {
                "depth" => limits.depth = Some(value.clamp(1, 64) as u32),
                "nodes" => limits.nodes = Some(value.max(1)),
                "movetime" => limits.movetime = Some(Duration::from_millis(value)),
                "wtime" => wtime = Some(value),
                "btime" => btime = Some(value),
                "winc" => winc = value,
                "binc" => binc = value,
                other => return Err(format!("unknown go parameter {other:?}")),
            }
            i += 2;
        }
        if self.position.is_none() {
            self.set_position(&["startpos"])?;
        }
        let position = self.position.clone().expect("set above");
        let white = match &position {
            Position::Cantwell(g) => g.side_to_move(),
            Position::Niels(g) => g.position().side_to_move(),
            Position::Akl(g) => g.side_to_move(),
        } == qchess_board::Color::White;
        let (own, inc) = if white { (wtime, winc) } else { (btime, binc) };
        if limits.movetime.is_none() {
            if let Some(t) = own {
                // A share of the clock: 1/30 of what is left plus most of the increment, never
                // more than half of what is left.
                let ms = (t / 30 + inc * 3 / 4).min(t / 2).max(1);
                limits.movetime = Some(Duration::from_millis(ms));
            }
        }
        if infinite {
            limits.depth = Some(64);
            limits.movetime = None;
            limits.nodes = None;
        }
        let flag = Arc::new(AtomicBool::new(false));
        limits.stop = Some(flag.clone());
        let options = EngineOptions {
            level: self.level,
            seed: self.seed,
            ..EngineOptions::default()
        };
        let out = self.out.clone();
        let handle = std::thread::spawn(move || search(position, options, limits, out));
        self.search = Some((handle, flag, infinite));
        Ok(())
    }
}

fn info_line<M: std::fmt::Display>(
    r: &SearchResult<M>,
    start: Instant,
    show: impl Fn(&M) -> String,
) -> String {
    let secs = start.elapsed().as_secs_f64().max(1e-3);
    let pv: Vec<String> = r.pv.iter().map(show).collect();
    format!(
        "info depth {} score cp {} nodes {} nps {} pv {}",
        r.depth,
        r.score.round() as i64,
        r.nodes,
        (r.nodes as f64 / secs) as u64,
        pv.join(" ")
    )
}

/// The Akl token of a decision: a touch is its square (`e2`), a move of the touched piece is
/// the whole turn without the collapse (`e2->e4`, `e7->e8=Q`), which finishes the pending
/// touch whatever it collapsed to.
fn akl_token(c: &AklChoice) -> String {
    match c {
        AklChoice::Touch(sq) => sq.to_string(),
        AklChoice::Move(m) => {
            let promo = m
                .promotion
                .map(|p| format!("={}", p.to_char().to_ascii_uppercase()))
                .unwrap_or_default();
            format!("{}->{}{promo}", m.from, m.to)
        }
    }
}

fn search(position: Position, options: EngineOptions, limits: Limits, out: Shared) {
    let start = Instant::now();
    let mut engine = Engine::new(options);
    let best = match &position {
        Position::Cantwell(g) => engine
            .search_with_info(g, &limits, |r| {
                say(&out, &info_line(r, start, |m| m.clone()))
            })
            .map(|r| r.best),
        Position::Niels(g) => engine
            .search_with_info(g, &limits, |r| {
                say(&out, &info_line(r, start, |m| m.to_string()))
            })
            .map(|r| r.best.to_string()),
        Position::Akl(g) => engine
            .search_with_info(g, &limits, |r| say(&out, &info_line(r, start, akl_token)))
            .map(|r| akl_token(&r.best)),
    };
    match best {
        Ok(mv) => say(&out, &format!("bestmove {mv}")),
        Err(e) => {
            say(&out, &format!("info string error: {e}"));
            say(&out, "bestmove (none)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::run_on;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs the protocol on `input` in a thread; `None` if it has not ended after 60 s.
    fn run_bounded(input: &'static str) -> Option<String> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut out = Vec::new();
            run_on(input.as_bytes(), &mut out).expect("no I/O error on a buffer");
            let _ = tx.send(String::from_utf8(out).expect("UTF-8"));
        });
        rx.recv_timeout(Duration::from_secs(60)).ok()
    }

    #[test]
    fn an_infinite_search_ends_with_the_input_and_before_the_next_position() {
        // Before the fix both waited for a depth-64 search, that is forever.
        let out = run_bounded("position startpos\ngo infinite\n").expect("ends at end of input");
        assert_eq!(out.matches("bestmove ").count(), 1, "{out}");
        let out = run_bounded(
            "position startpos\ngo infinite\nposition startpos moves e2e4\ngo depth 1\n",
        )
        .expect("a new position ends the infinite search");
        assert_eq!(out.matches("bestmove ").count(), 2, "{out}");
    }

    #[test]
    fn run_on_answers_the_handshake_and_refuses_bad_lines() {
        let out = run_bounded("uci\nisready\nfrobnicate\ngo depth x\nquit\n").expect("quits");
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines.contains(&"uciok") && lines.contains(&"readyok"),
            "{out}"
        );
        assert!(
            lines.contains(&"info string error: unknown command \"frobnicate\""),
            "{out}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.starts_with("info string error:"))
                .count(),
            2,
            "{out}"
        );
    }
}
