//! `qchess match`: paired games between two players, in the manner of cutechess-cli /
//! fastchess. The runner owns the true game and its randomness: it samples every outcome
//! itself, enforces time and legality, and scores everything from engine1's side.

use crate::error::CliError;
use clap::Args;
use qchess_engine::{AklChoice, Engine, EngineOptions, Limits};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Games longer than this many plies are adjudicated drawn.
const MAX_PLIES: usize = 400;

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
    /// The first player: builtin[:level=L] or random (cmd:<command line> is not supported yet).
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
}

fn parse_spec(text: &str) -> Result<Spec, CliError> {
    if text == "random" {
        return Ok(Spec::Random);
    }
    if text.starts_with("cmd:") {
        return Err(CliError::usage(
            "cmd:<command line> players are not supported yet (builtin[:level=L] and random are)",
        ));
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
    // Validate the rules and board once, on a throwaway game.
    play_game(args, &Spec::Random, &Spec::Random, clock, 0, true)?;
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
            if g.reason.starts_with("illegal") || g.reason.starts_with("crash") {
                println!("game {}: {}", i + 1, g.reason);
            }
        }
        if let Some((llr, lo, hi, verdict)) = sprt_text {
            println!("SPRT: llr {llr:.2} ({lo:.2}, {hi:.2}): {verdict}");
        }
    }
    Ok(())
}

/// The per-move budget of the side to move and its clock.
fn budget(clock: Clock, left: u64) -> Duration {
    match clock {
        Clock::Move(ms) => Duration::from_millis(ms),
        Clock::Game { inc, .. } => {
            Duration::from_millis((left / 30 + inc * 3 / 4).min(left / 2).max(1))
        }
    }
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
    let mut clocks = match clock {
        Clock::Game { base, .. } => [base, base],
        Clock::Move(_) => [u64::MAX, u64::MAX],
    };
    let inc = match clock {
        Clock::Game { inc, .. } => inc,
        Clock::Move(_) => 0,
    };
    let mut moves = Vec::new();
    let spec_of = |white_to_move: bool| if white_to_move { white } else { black };
    // Each turn: the side to move's choice (timed), applied by the runner with its randomness.
    macro_rules! timed {
        ($white:expr, $body:expr) => {{
            let idx = if $white { 0 } else { 1 };
            let t = Instant::now();
            let r = $body(budget(clock, clocks[idx]));
            let used = t.elapsed().as_millis() as u64;
            if let Clock::Game { .. } = clock {
                if used > clocks[idx] {
                    return Ok(Played {
                        white_is_engine1: true,
                        white_won: Some(!$white),
                        reason: "time forfeit".into(),
                        moves,
                        seed,
                    });
                }
                clocks[idx] = clocks[idx] - used + inc;
            }
            r
        }};
    }
    let options = |level: u8| EngineOptions {
        level,
        seed,
        ..EngineOptions::default()
    };
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
            while game.status().is_ongoing() && moves.len() < MAX_PLIES {
                let w = game.side_to_move() == qchess_board::Color::White;
                let spec = spec_of(w);
                let mv = timed!(w, |t: Duration| match spec {
                    Spec::Random => game.random_legal_move(&mut rng),
                    Spec::Builtin(l) => Engine::new(options(*l))
                        .search(&game, &Limits::movetime(t))
                        .ok()
                        .map(|r| r.best),
                });
                let Some(mv) = mv else { break };
                match game.apply(&mv, &mut rng) {
                    Ok(rec) => moves.push(rec.notation),
                    Err(e) => return Ok(lost(w, format!("illegal move {mv}: {e}"), moves, seed)),
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
            while game.status() == qchess_niels::Status::Ongoing && moves.len() < MAX_PLIES {
                let w = game.position().side_to_move() == qchess_board::Color::White;
                let spec = spec_of(w);
                let mv = timed!(w, |t: Duration| match spec {
                    Spec::Random => game.legal_moves().choose(&mut rng).copied(),
                    Spec::Builtin(l) => Engine::new(options(*l))
                        .search(&game, &Limits::movetime(t))
                        .ok()
                        .map(|r| r.best),
                });
                let Some(mv) = mv else { break };
                match game.play(&mv, &mut rng) {
                    Ok(o) => moves.push(qchess_niels::format_token(
                        &mv,
                        &o.rolls.iter().map(|r| r.value).collect::<Vec<_>>(),
                    )),
                    Err(e) => return Ok(lost(w, format!("illegal move {mv}: {e}"), moves, seed)),
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
            while game.status() == qchess_akl::GameStatus::Ongoing && moves.len() < MAX_PLIES {
                let w = game.side_to_move() == qchess_board::Color::White;
                let spec = spec_of(w);
                let before = game.history().len();
                let done = timed!(w, |t: Duration| -> Result<(), String> {
                    match spec {
                        Spec::Random => qchess_akl::RandomMover
                            .play_turn(&mut game, &mut rng)
                            .map_err(|e| e.to_string()),
                        Spec::Builtin(l) => {
                            // Two decisions, half the time each: the touch, then the move.
                            let half = t / 2;
                            let mut engine = Engine::new(options(*l));
                            let r = engine
                                .search(&game, &Limits::movetime(half))
                                .map_err(|e| e.to_string())?;
                            let AklChoice::Touch(sq) = r.best else {
                                return Err("the engine moved without a touch".into());
                            };
                            game.touch(sq, &mut rng).map_err(|e| e.to_string())?;
                            if game.pending_touch().is_some() {
                                let r = engine
                                    .search(&game, &Limits::movetime(half))
                                    .map_err(|e| e.to_string())?;
                                let AklChoice::Move(m) = r.best else {
                                    return Err("the engine touched twice".into());
                                };
                                game.play(m, &mut rng).map_err(|e| e.to_string())?;
                            }
                            Ok(())
                        }
                    }
                });
                if let Err(e) = done {
                    return Ok(lost(w, format!("illegal move: {e}"), moves, seed));
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

fn empty(seed: u64) -> Played {
    finish(None, "", Vec::new(), seed)
}

fn lost(white: bool, reason: String, moves: Vec<String>, seed: u64) -> Played {
    Played {
        white_is_engine1: true,
        white_won: Some(!white),
        reason,
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
