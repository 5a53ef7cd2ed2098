//! Expectimax with alpha-beta at decision nodes and Star1 bounds at chance nodes, iterative
//! deepening, a transposition table, move ordering and quiescence over captures.

use crate::node::{SearchNode, Searchable, Terminal};
use qchess_board::Color;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The score of a won game (less the plies it takes); every score lies in
/// `[-WIN_SCORE, WIN_SCORE]`, the bounds Star1 uses at chance nodes.
pub const WIN_SCORE: f64 = 100_000.0;

/// Quiescence looks this many captures deep at most.
const QUIESCENCE_DEPTH: u32 = 3;

/// The width of the null window a decision node's later moves are first searched with
/// (principal variation search); scores are expected centipawns, so a hundredth of one.
const NULL_WINDOW: f64 = 0.01;

/// Stack size of the search's worker thread (the usual main-thread size; the search recurses
/// a few frames per ply).
const SEARCH_STACK: usize = 8 << 20;

/// A calling thread's search pool: one rayon worker with [`SEARCH_STACK`], and its thread's
/// handle. Dropping it (when the calling thread ends) ends the worker and waits for it, so a
/// thread that searched leaves no thread behind (a rayon pool dropped alone only asks its
/// workers to stop: the fuzzer's leak check saw a worker still exiting after its input).
struct SearchPool {
    pool: Option<rayon::ThreadPool>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl SearchPool {
    /// The pool, or no pool (the search then runs on the calling thread) when its thread
    /// cannot be started.
    fn new() -> Self {
        let mut worker = None;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .spawn_handler(|thread| {
                let handle = std::thread::Builder::new()
                    .name("qchess-engine".to_string())
                    .stack_size(SEARCH_STACK)
                    .spawn(|| thread.run())?;
                worker = Some(handle);
                Ok(())
            })
            .build()
            .ok();
        SearchPool { pool, worker }
    }
}

impl Drop for SearchPool {
    fn drop(&mut self) {
        // Dropping the pool tells its worker to stop once idle; then wait for it.
        drop(self.pool.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// The time the engine keeps back from a `movetime` for unwinding and answering.
const TIME_MARGIN: Duration = Duration::from_millis(15);

/// Why a search could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// The game is over (or the side to move has no legal move).
    NoMove,
    /// The position given cannot be searched.
    BadPosition(String),
    /// An option is out of range.
    BadOption(String),
    /// The search needed more memory than the game's memory budget has left (a copy of the
    /// state, or one the rules simulate a candidate on; issue 10, Deliver 5): the search
    /// stopped, and the caller's game is unchanged.
    StateTooLarge {
        /// Bytes asked for.
        asked: usize,
        /// Bytes the budget had left.
        available: usize,
    },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::NoMove => write!(f, "no legal move: the game is over"),
            EngineError::BadPosition(m) => write!(f, "bad position: {m}"),
            EngineError::BadOption(m) => write!(f, "bad option: {m}"),
            EngineError::StateTooLarge { asked, available } => write!(
                f,
                "state too large: the search needs {asked} bytes, the memory budget has {available} left"
            ),
        }
    }
}

impl std::error::Error for EngineError {}

/// The engine's settings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    /// Playing strength 1 (weakest) to 5; see [`EngineOptions::level_depth`].
    pub level: u8,
    /// Seeds every random choice (Akl's unseen types, the weaker levels' noise).
    pub seed: u64,
    /// Transposition table entries at most (the table is cleared when full).
    pub tt_entries: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            level: 3,
            seed: 0,
            tt_entries: 1 << 18,
        }
    }
}

impl EngineOptions {
    /// The deepest iteration of a level when no depth limit is given (plies; chance nodes and
    /// Akl touches not counted): 1, 1, 2, 3, 64 (level 5 goes as deep as nodes and time allow).
    pub fn level_depth(&self) -> u32 {
        match self.level {
            0 | 1 => 1,
            2 => 1,
            3 => 2,
            4 => 3,
            _ => 64,
        }
    }

    /// The root noise of a level (centipawns, uniform in `[-n, n]`, drawn from the seed):
    /// 200, 60, 0, 0, 0.
    pub fn level_noise(&self) -> f64 {
        match self.level {
            0 | 1 => 200.0,
            2 => 60.0,
            _ => 0.0,
        }
    }
}

/// When a search stops. With none of depth, nodes, movetime, the level's depth applies.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Deepest iteration (plies).
    pub depth: Option<u32>,
    /// Nodes at most (decision, chance and quiescence nodes all count).
    pub nodes: Option<u64>,
    /// Time for this move; the answer comes within it (+50 ms).
    pub movetime: Option<Duration>,
    /// Set from another thread to end the search early (`stop`).
    pub stop: Option<Arc<AtomicBool>>,
}

impl Limits {
    /// A depth limit.
    pub fn depth(d: u32) -> Limits {
        Limits {
            depth: Some(d),
            ..Limits::default()
        }
    }

    /// A node limit.
    pub fn nodes(n: u64) -> Limits {
        Limits {
            nodes: Some(n),
            ..Limits::default()
        }
    }

    /// A time limit.
    pub fn movetime(t: Duration) -> Limits {
        Limits {
            movetime: Some(t),
            ..Limits::default()
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult<M> {
    /// The move to play.
    pub best: M,
    /// Its expected value in centipawns from the side to move's view (`±WIN_SCORE` less plies
    /// for a forced win or loss).
    pub score: f64,
    /// The expected line: the best move, then each node's best move after the most likely
    /// outcome.
    pub pv: Vec<M>,
    /// The deepest iteration completed.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
}

/// The engine: options and a search.
#[derive(Clone, Debug)]
pub struct Engine {
    options: EngineOptions,
}

type MoveOf<G> = <<G as Searchable>::Node as SearchNode>::Move;

impl Engine {
    /// An engine with these options.
    pub fn new(options: EngineOptions) -> Engine {
        Engine { options }
    }

    /// The options.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Searches `game` within `limits`.
    ///
    /// The search runs on the one worker of a rayon pool of one thread (made once per calling
    /// thread), so the simulator's parallel loops, which on the small states of a game are
    /// much cheaper run in place than handed to other threads, run in place; their results do
    /// not depend on the thread count. Where that pool cannot be started the search runs on
    /// the calling thread.
    pub fn search<G: Searchable>(
        &mut self,
        game: &G,
        limits: &Limits,
    ) -> Result<SearchResult<MoveOf<G>>, EngineError> {
        self.search_with_info(game, limits, |_| {})
    }

    /// [`Engine::search`], calling `info` after every completed iteration.
    pub fn search_with_info<G: Searchable>(
        &mut self,
        game: &G,
        limits: &Limits,
        info: impl FnMut(&SearchResult<MoveOf<G>>) + Send,
    ) -> Result<SearchResult<MoveOf<G>>, EngineError> {
        thread_local! {
            static POOL: SearchPool = SearchPool::new();
        }
        let run = || self.search_in_place(game, limits, info);
        POOL.with(|p| match &p.pool {
            Some(pool) => pool.install(run),
            None => run(),
        })
    }

    /// [`Engine::search_with_info`] on the calling thread.
    fn search_in_place<G: Searchable>(
        &mut self,
        game: &G,
        limits: &Limits,
        mut info: impl FnMut(&SearchResult<MoveOf<G>>),
    ) -> Result<SearchResult<MoveOf<G>>, EngineError> {
        if !(1..=5).contains(&self.options.level) {
            return Err(EngineError::BadOption(format!(
                "level {} is outside 1..5",
                self.options.level
            )));
        }
        let start = Instant::now();
        let node = game.search_root(self.options.seed)?;
        let deadline = limits
            .movetime
            .map(|t| start + t.saturating_sub(TIME_MARGIN));
        let mut s = Searcher {
            node,
            nodes: 0,
            node_limit: limits.nodes,
            deadline,
            stop: limits.stop.clone(),
            aborted: false,
            error: None,
            tt: HashMap::new(),
            tt_cap: self.options.tt_entries.max(1),
            killers: Vec::new(),
            path: Vec::new(),
            earlier: None,
        };
        if s.node.terminal().is_some() {
            return Err(EngineError::NoMove);
        }
        if let Some(keys) = s.node.earlier_keys() {
            s.earlier = Some(keys.into_iter().collect());
            let root = s.node.key();
            s.path.push(root);
        }
        // The earlier positions' copy may not fit the memory budget (a Cantwell game).
        if let Some(e) = s.node.take_error() {
            return Err(e);
        }
        let mut root_moves = s.node.moves();
        if let Some(e) = s.node.take_error() {
            return Err(e);
        }
        if root_moves.is_empty() {
            return Err(EngineError::NoMove);
        }
        // Root noise for the weaker levels, one draw per root move, from the seed alone.
        let noise_amp = self.options.level_noise();
        let mut rng = ChaCha8Rng::seed_from_u64(self.options.seed ^ s.node.key());
        let noise: Vec<f64> = root_moves
            .iter()
            .map(|_| {
                if noise_amp > 0.0 {
                    rng.random_range(-noise_amp..=noise_amp)
                } else {
                    0.0
                }
            })
            .collect();
        let noise_of: Vec<(MoveOf<G>, f64)> = root_moves.iter().cloned().zip(noise).collect();
        // Captures first from the start (the most promising first).
        order(&mut s.node, &mut root_moves, None, &[]);
        let max_depth = limits.depth.unwrap_or_else(|| {
            if limits.nodes.is_some() || limits.movetime.is_some() {
                64
            } else {
                self.options.level_depth()
            }
        });
        let max_depth = if limits.depth.is_none() {
            max_depth.min(self.options.level_depth())
        } else {
            max_depth
        }
        .max(1);
        let mut best: Option<SearchResult<MoveOf<G>>> = None;
        for depth in 1..=max_depth {
            let mut alpha = f64::NEG_INFINITY;
            let mut iter_best: Option<(MoveOf<G>, f64)> = None;
            let mut completed = true;
            // Each root move's value in this iteration (exact above alpha, a bound below it),
            // to order the next iteration.
            let mut values: Vec<f64> = Vec::with_capacity(root_moves.len());
            for mv in &root_moves {
                // With noise every root move needs its exact value, not a bound. Without,
                // every move after the first is tried with a null window above the best so
                // far and searched again with the whole window only when it beats it.
                let v = if noise_amp > 0.0 {
                    s.chance(mv, depth, f64::NEG_INFINITY, f64::INFINITY, 0, false)
                } else if alpha == f64::NEG_INFINITY {
                    s.chance(mv, depth, alpha, f64::INFINITY, 0, false)
                } else {
                    match s.chance(mv, depth, alpha, alpha + NULL_WINDOW, 0, false) {
                        Some(v) if !s.aborted && v >= alpha + NULL_WINDOW => {
                            s.chance(mv, depth, alpha, f64::INFINITY, 0, false)
                        }
                        v => v,
                    }
                };
                if s.aborted {
                    completed = false;
                    break;
                }
                let Some(v) = v else {
                    values.push(f64::NEG_INFINITY);
                    continue;
                };
                values.push(v);
                let bonus = noise_of
                    .iter()
                    .find(|(m, _)| m == mv)
                    .map_or(0.0, |(_, n)| *n);
                let v = v + bonus;
                if iter_best.as_ref().is_none_or(|(_, b)| v > *b) {
                    iter_best = Some((mv.clone(), v));
                }
                if v > alpha {
                    alpha = v;
                }
            }
            let Some((mv, score)) = iter_best else {
                if completed {
                    return Err(EngineError::NoMove);
                }
                if best.is_none() {
                    // Out of time before any move was valued: answer the first in order
                    // (a capture, or the rule crate's first move) rather than nothing.
                    let first = root_moves[0].clone();
                    best = Some(SearchResult {
                        pv: vec![first.clone()],
                        best: first,
                        score: s.static_eval(),
                        depth: 0,
                        nodes: s.nodes,
                    });
                }
                break;
            };
            if !completed {
                // An unfinished iteration searched the previous best move first: once that
                // one finished at this depth, the best finished move is at least as good by
                // the deeper search, so it replaces the previous answer (standard iterative
                // deepening; the reported depth stays the last completed one).
                let keep = match &best {
                    None => true,
                    Some(b) => root_moves[0] == b.best && !values.is_empty(),
                };
                if keep {
                    let pv = if best.as_ref().is_some_and(|b| b.best == mv) {
                        best.as_ref().map(|b| b.pv.clone()).unwrap_or_default()
                    } else {
                        vec![mv.clone()]
                    };
                    best = Some(SearchResult {
                        pv,
                        best: mv,
                        score,
                        depth: depth - 1,
                        nodes: s.nodes,
                    });
                }
                break;
            }
            // Store the root in the table so the PV walk starts from the right move.
            let key = s.node.key();
            s.store(key, depth, score, Bound::Exact, Some(mv.clone()));
            let pv = s.pv(depth);
            let result = SearchResult {
                best: mv.clone(),
                score,
                pv,
                depth,
                nodes: s.nodes,
            };
            info(&result);
            best = Some(result);
            // The next iteration searches the moves best first by this one's values (a
            // stable sort: ties keep their order), the best move at the head.
            let mut ranked: Vec<(MoveOf<G>, f64)> = root_moves.drain(..).zip(values).collect();
            ranked.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
            root_moves.extend(ranked.into_iter().map(|(m, _)| m));
            if let Some(i) = root_moves.iter().position(|m| *m == mv) {
                let m = root_moves.remove(i);
                root_moves.insert(0, m);
            }
            if score.abs() >= WIN_SCORE - 1000.0 {
                break; // a forced result: deeper will not change it
            }
            if let Some(t) = limits.movetime {
                // An iteration is started while at least half the time is left: its first
                // move (the best so far) usually finishes, and an unfinished iteration whose
                // first move finished still improves the answer (above).
                if start.elapsed() * 2 > t {
                    break;
                }
            }
        }
        // A node the budget refused stopped the search: its values are not an answer.
        if let Some(e) = s.error.take().or_else(|| s.node.take_error()) {
            return Err(e);
        }
        let mut result = best.ok_or(EngineError::NoMove)?;
        result.nodes = s.nodes;
        Ok(result)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Debug)]
struct Entry<M> {
    depth: u32,
    value: f64,
    bound: Bound,
    best: Option<M>,
}

struct Searcher<N: SearchNode> {
    node: N,
    nodes: u64,
    node_limit: Option<u64>,
    deadline: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
    aborted: bool,
    /// Why a node could not be expanded ([`SearchNode::take_error`]); the search then
    /// stops (`aborted`) and answers this error.
    error: Option<EngineError>,
    tt: HashMap<u64, Entry<N::Move>>,
    tt_cap: usize,
    /// Per ply, the last two quiet moves that cut a decision node off (killer moves).
    killers: Vec<[Option<N::Move>; 2]>,
    /// The keys of the decision nodes from the root to the current node (repetitions).
    path: Vec<u64>,
    /// The keys of the game's earlier positions, when the variant scores repetitions.
    earlier: Option<HashSet<u64>>,
}

/// Orders `moves`: the table's move first, then the moves [`SearchNode::order_score`] ranks
/// above 0 (captures), best first, then the killer moves, then the rest; ties keep the rule
/// crate's order.
fn order<N: SearchNode>(
    node: &mut N,
    moves: &mut Vec<N::Move>,
    first: Option<&N::Move>,
    killers: &[Option<N::Move>],
) {
    let mut head = Vec::new();
    let mut tactical = Vec::new();
    let mut killer: Vec<(usize, N::Move)> = Vec::new();
    let mut quiet = Vec::new();
    for mv in moves.drain(..) {
        if first == Some(&mv) {
            head.push(mv);
            continue;
        }
        let score = node.order_score(&mv);
        if score > 0.0 {
            tactical.push((mv, score));
        } else if let Some(i) = killers.iter().position(|k| k.as_ref() == Some(&mv)) {
            killer.push((i, mv));
        } else {
            quiet.push(mv);
        }
    }
    tactical.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    killer.sort_by_key(|(i, _)| *i);
    moves.extend(head);
    moves.extend(tactical.into_iter().map(|(m, _)| m));
    moves.extend(killer.into_iter().map(|(_, m)| m));
    moves.extend(quiet);
}

impl<N: SearchNode> Searcher<N> {
    /// Counts a node and tells whether the search must stop: the node limit (deterministic),
    /// then the clock and the stop flag, read at every node (an `Instant::now` is nothing next
    /// to a node, which can cost milliseconds on a large Cantwell state).
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.failed() {
            return true;
        }
        if self.node_limit.is_some_and(|n| self.nodes > n) {
            self.aborted = true;
            return true;
        }
        self.out_of_time()
    }

    /// Whether the deadline has passed or `stop` was set (then the search is aborted). Read
    /// before every piece of expensive work (move generation, outcome enumeration, applying an
    /// outcome, evaluation), so none starts after the deadline. Without a time limit or stop
    /// flag this reads nothing, so a node-limited search stays deterministic.
    fn out_of_time(&mut self) -> bool {
        if self.failed() {
            return true;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.aborted = true;
        }
        self.aborted
    }

    /// Whether the search is aborted, after taking the node's error if it has one (then it
    /// is: the search stops and answers the error).
    fn failed(&mut self) -> bool {
        if let Some(e) = self.node.take_error() {
            self.error.get_or_insert(e);
            self.aborted = true;
        }
        self.aborted
    }

    /// Whether the position of `key` occurred earlier in the game or on the search path.
    fn is_repetition(&self, key: u64) -> bool {
        self.earlier.as_ref().is_some_and(|e| e.contains(&key)) || self.path.contains(&key)
    }

    fn store(&mut self, key: u64, depth: u32, value: f64, bound: Bound, best: Option<N::Move>) {
        if self.tt.len() >= self.tt_cap && !self.tt.contains_key(&key) {
            self.tt.clear();
        }
        let replace = self.tt.get(&key).is_none_or(|e| e.depth <= depth);
        if replace {
            self.tt.insert(
                key,
                Entry {
                    depth,
                    value,
                    bound,
                    best,
                },
            );
        }
    }

    /// The principal variation from the table: each node's best move after its most likely
    /// outcome.
    fn pv(&mut self, depth: u32) -> Vec<N::Move> {
        let mut line = Vec::new();
        let mut applied = 0;
        for _ in 0..depth.max(1) * 2 {
            let key = self.node.key();
            let Some(mv) = self.tt.get(&key).and_then(|e| e.best.clone()) else {
                break;
            };
            line.push(mv.clone());
            let outs = self.node.outcomes(&mv);
            let Some((o, _)) = outs
                .into_iter()
                .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
            else {
                break;
            };
            if !self.node.apply(&mv, &o) {
                break;
            }
            applied += 1;
        }
        for _ in 0..applied {
            self.node.undo();
        }
        line
    }

    /// The value of the game ended by `t` for `side`.
    fn terminal_value(t: Terminal, side: Color, ply: u32) -> f64 {
        match t {
            Terminal::Win(c) if c == side => WIN_SCORE - ply as f64,
            Terminal::Win(_) => -(WIN_SCORE - ply as f64),
            Terminal::Draw => 0.0,
        }
    }

    fn static_eval(&mut self) -> f64 {
        let v = self.node.evaluate();
        if self.node.side_to_move() == Color::White {
            v
        } else {
            -v
        }
    }

    /// The value of the decision node for its side to move (negamax), `depth` plies deep.
    fn negamax(&mut self, depth: u32, mut alpha: f64, beta: f64, ply: u32) -> f64 {
        if self.tick() {
            return 0.0;
        }
        let side = self.node.side_to_move();
        if let Some(t) = self.node.terminal() {
            return Self::terminal_value(t, side, ply);
        }
        let key = if self.earlier.is_some() {
            let key = self.node.key();
            if self.is_repetition(key) {
                return 0.0; // scored as a draw: the search does not walk in circles
            }
            Some(key)
        } else {
            None
        };
        if depth == 0 {
            return self.quiesce(alpha, beta, ply, QUIESCENCE_DEPTH);
        }
        let key = key.unwrap_or_else(|| self.node.key());
        let mut tt_move = None;
        if let Some(e) = self.tt.get(&key) {
            tt_move = e.best.clone();
            if e.depth >= depth {
                match e.bound {
                    Bound::Exact => return e.value,
                    Bound::Lower if e.value >= beta => return e.value,
                    Bound::Upper if e.value <= alpha => return e.value,
                    _ => {}
                }
            }
        }
        if self.out_of_time() {
            return 0.0;
        }
        let mut moves = self.node.moves();
        if self.failed() {
            return 0.0;
        }
        if moves.is_empty() {
            return match self.node.no_moves_terminal() {
                Some(t) => Self::terminal_value(t, self.node.side_to_move(), ply),
                None => self.static_eval(),
            };
        }
        let slot = ply as usize;
        if self.killers.len() <= slot {
            self.killers.resize(slot + 1, [None, None]);
        }
        let killers = self.killers[slot].clone();
        order(&mut self.node, &mut moves, tt_move.as_ref(), &killers);
        let alpha0 = alpha;
        let mut best = f64::NEG_INFINITY;
        let mut best_move = None;
        if self.earlier.is_some() {
            self.path.push(key);
        }
        for mv in moves {
            // Principal variation search: after the first move, a null window above alpha,
            // and the whole window again only for a move that beats alpha.
            let v = if best_move.is_none() || beta - alpha <= NULL_WINDOW {
                self.chance(&mv, depth, alpha, beta, ply, false)
            } else {
                match self.chance(&mv, depth, alpha, alpha + NULL_WINDOW, ply, false) {
                    Some(v) if !self.aborted && v >= alpha + NULL_WINDOW && v < beta => {
                        self.chance(&mv, depth, alpha, beta, ply, false)
                    }
                    v => v,
                }
            };
            let Some(v) = v else {
                continue;
            };
            if self.aborted {
                break;
            }
            if v > best {
                best = v;
                best_move = Some(mv.clone());
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                if !self.node.is_tactical(&mv) {
                    let k = &mut self.killers[slot];
                    if k[0].as_ref() != Some(&mv) {
                        k[1] = k[0].take();
                        k[0] = Some(mv);
                    }
                }
                break;
            }
        }
        if self.earlier.is_some() {
            self.path.pop();
        }
        if self.aborted {
            return 0.0;
        }
        if best_move.is_none() {
            return self.static_eval();
        }
        let bound = if best <= alpha0 {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.store(key, depth, best, bound, best_move);
        best
    }

    /// Quiescence: stand pat, or a capture (with its chance outcomes) that does better.
    fn quiesce(&mut self, mut alpha: f64, beta: f64, ply: u32, qdepth: u32) -> f64 {
        if self.out_of_time() {
            return 0.0;
        }
        let stand = self.static_eval();
        if qdepth == 0 || stand >= beta {
            return stand;
        }
        if stand > alpha {
            alpha = stand;
        }
        let mut best = stand;
        if self.out_of_time() {
            return 0.0;
        }
        let mut moves = self.node.tactical_moves();
        if self.failed() {
            return 0.0;
        }
        order(&mut self.node, &mut moves, None, &[]);
        for mv in moves {
            let Some(v) = self.chance(&mv, qdepth, alpha, beta, ply, true) else {
                continue;
            };
            if self.aborted {
                return 0.0;
            }
            if v > best {
                best = v;
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// The expected value of `mv` for the side to move: a chance node over its outcomes with
    /// Star1 bounds. `None` when the move cannot be played. In quiescence (`q`), `depth` is
    /// the quiescence depth left.
    fn chance(
        &mut self,
        mv: &N::Move,
        depth: u32,
        alpha: f64,
        beta: f64,
        ply: u32,
        q: bool,
    ) -> Option<f64> {
        let side = self.node.side_to_move();
        if self.out_of_time() {
            return Some(0.0);
        }
        // The outcomes most likely first; the first may already be played.
        let (outs, mut pending) = self.node.outcomes_applied(mv);
        if outs.is_empty() {
            if pending {
                self.node.undo();
            }
            return None;
        }
        let (lo, hi) = (-WIN_SCORE, WIN_SCORE);
        let mut sum = 0.0;
        let mut rest: f64 = outs.iter().map(|(_, p)| p).sum();
        let mut played = false;
        for (o, p) in outs {
            let applied = std::mem::take(&mut pending);
            // Star1: the window this child must fall in to matter, given the values so far
            // and the bounds of the unexplored rest.
            let a_i = (alpha - sum - (rest - p) * hi) / p;
            let b_i = (beta - sum - (rest - p) * lo) / p;
            let early = if p <= 0.0 {
                Some(None)
            } else if a_i >= hi {
                Some(Some(sum + rest * hi))
            } else if b_i <= lo {
                Some(Some(sum + rest * lo))
            } else if self.out_of_time() {
                Some(Some(0.0))
            } else {
                None
            };
            if let Some(result) = early {
                if applied {
                    self.node.undo();
                }
                match result {
                    None => continue,
                    Some(v) => return Some(v),
                }
            }
            if !applied && !self.node.apply(mv, &o) {
                rest -= p;
                continue;
            }
            played = true;
            let (ca, cb) = (a_i.max(lo), b_i.min(hi));
            let same = self.node.side_to_move() == side;
            let v = match (q, same) {
                (false, true) => self.negamax(depth, ca, cb, ply + 1),
                (false, false) => -self.negamax(depth - 1, -cb, -ca, ply + 1),
                (true, true) => {
                    if self.tick() {
                        0.0
                    } else {
                        self.quiesce(ca, cb, ply + 1, depth)
                    }
                }
                (true, false) => {
                    if self.tick() {
                        0.0
                    } else {
                        match self.node.terminal() {
                            Some(t) => Self::terminal_value(t, side, ply + 1),
                            None => -self.quiesce(-cb, -ca, ply + 1, depth - 1),
                        }
                    }
                }
            };
            self.node.undo();
            if self.aborted {
                return Some(0.0);
            }
            if v <= a_i {
                return Some(sum + p * v + (rest - p) * hi);
            }
            if v >= b_i {
                return Some(sum + p * v + (rest - p) * lo);
            }
            sum += p * v;
            rest -= p;
        }
        played.then_some(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::SearchPool;
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The worker's thread has ended (its thread-locals dropped) by the time dropping the
    /// pool returns, not some time later.
    #[test]
    fn dropping_a_search_pool_waits_for_its_worker() {
        static ENDED: AtomicBool = AtomicBool::new(false);
        struct Guard;
        impl Drop for Guard {
            fn drop(&mut self) {
                ENDED.store(true, Ordering::SeqCst);
            }
        }
        thread_local! {
            static GUARD: RefCell<Option<Guard>> = const { RefCell::new(None) };
        }
        let p = SearchPool::new();
        let pool = p.pool.as_ref().expect("the pool's thread starts");
        let name = pool.install(|| {
            GUARD.with(|g| *g.borrow_mut() = Some(Guard));
            std::thread::current().name().map(str::to_string)
        });
        assert_eq!(name.as_deref(), Some("qchess-engine"));
        assert!(!ENDED.load(Ordering::SeqCst));
        drop(p);
        assert!(
            ENDED.load(Ordering::SeqCst),
            "the worker was still running after its pool was dropped"
        );
    }
}
