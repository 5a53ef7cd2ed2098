//! The engine against exact references: a brute-force expectimax (no pruning, no table) for
//! the values, forced wins, determinism, the time limit and Akl's hidden information.

use qchess_akl::{AklPosition, Rules as AklRules, Visibility};
use qchess_board::Color;
use qchess_engine::{
    AklChoice, Engine, EngineOptions, Limits, SearchNode, Searchable, Terminal, WIN_SCORE,
};
use rand::SeedableRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn engine(seed: u64) -> Engine {
    Engine::new(EngineOptions {
        seed,
        ..EngineOptions::default()
    })
}

/// The exact expectimax value (side to move's view) with the same quiescence the engine uses
/// (stand pat or a capture, 3 captures deep), computed with no pruning and no table.
fn reference<N: SearchNode>(n: &mut N, depth: u32, ply: u32) -> f64 {
    let side = n.side_to_move();
    if let Some(t) = n.terminal() {
        return term(t, side, ply);
    }
    if depth == 0 {
        return quiesce(n, 3, ply);
    }
    let mut best = f64::NEG_INFINITY;
    for mv in n.moves() {
        let outs = n.outcomes(&mv);
        if outs.is_empty() {
            continue;
        }
        let mut sum = 0.0;
        for (o, p) in outs {
            assert!(n.apply(&mv, &o));
            let v = if n.side_to_move() == side {
                reference(n, depth, ply + 1)
            } else {
                -reference(n, depth - 1, ply + 1)
            };
            n.undo();
            sum += p * v;
        }
        best = best.max(sum);
    }
    if best == f64::NEG_INFINITY {
        // No legal move: the variant's verdict (Cantwell: a draw), else the evaluation.
        match n.no_moves_terminal() {
            Some(t) => term(t, side, ply),
            None => stat(n),
        }
    } else {
        best
    }
}

fn term(t: Terminal, side: Color, ply: u32) -> f64 {
    match t {
        Terminal::Win(c) if c == side => WIN_SCORE - ply as f64,
        Terminal::Win(_) => -(WIN_SCORE - ply as f64),
        Terminal::Draw => 0.0,
    }
}

fn stat<N: SearchNode>(n: &mut N) -> f64 {
    let v = n.evaluate();
    if n.side_to_move() == Color::White {
        v
    } else {
        -v
    }
}

fn quiesce<N: SearchNode>(n: &mut N, q: u32, ply: u32) -> f64 {
    let side = n.side_to_move();
    let mut best = stat(n);
    if q == 0 {
        return best;
    }
    for mv in n.moves() {
        if !n.is_tactical(&mv) {
            continue;
        }
        let mut sum = 0.0;
        for (o, p) in n.outcomes(&mv) {
            assert!(n.apply(&mv, &o));
            let v = if n.side_to_move() == side {
                quiesce(n, q, ply + 1)
            } else {
                match n.terminal() {
                    Some(t) => term(t, side, ply + 1),
                    None => -quiesce(n, q - 1, ply + 1),
                }
            };
            n.undo();
            sum += p * v;
        }
        best = best.max(sum);
    }
    best
}

fn check_against_reference<G: Searchable>(game: &G, depth: u32) -> f64 {
    let mut root = game.search_root(0).unwrap();
    let want = reference(&mut root, depth, 0);
    let got = engine(0).search(game, &Limits::depth(depth)).unwrap();
    assert_eq!(got.depth, depth);
    assert!(
        (got.score - want).abs() < 1e-6,
        "engine {} vs reference {want}",
        got.score
    );
    // The move found is worth that value.
    want
}

#[test]
fn niels_values_equal_brute_force_expectimax() {
    let game = qchess_niels::Game::new(Default::default(), "5x6".parse().unwrap()).unwrap();
    check_against_reference(&game, 1);
    // A position with a pair attacking a pawn: the dice decide the capture.
    let start = "4k3/2p5/8/8/8/2N5/8/4K3 w - - 0 1".parse().unwrap();
    let mut game = qchess_niels::Game::from_position(Default::default(), start);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for mv in ["c3^b5d5:oo", "e8f8"] {
        game.play_str(mv, &mut rng).unwrap();
    }
    let mut root = game.search_root(0).unwrap();
    let capture: qchess_niels::Move = "b5c7".parse().unwrap();
    let outs = root.outcomes(&capture);
    assert!(outs.len() >= 2, "{outs:?}");
    assert!((outs.iter().map(|o| o.1).sum::<f64>() - 1.0).abs() < 1e-12);
    check_against_reference(&game, 2);
}

/// Niel's Chess with a queen (thousands of superposition moves): the engine's leaves ask the
/// rule crate for "any legal move?" and for the captures alone; its values still equal the
/// brute-force expectimax, whose quiescence filters the whole legal list, and a search whose
/// quiescence filters the whole list too (the trait's default `tactical_moves`) finds the same
/// move, value and node count.
#[test]
fn niels_queen_endgame_equals_the_full_list_search() {
    // (FEN, check against the brute force, compare with the full-list search): each check
    // where it takes about a second.
    for (fen, brute, full_list) in [
        ("4k3/8/8/3q4/8/8/8/R3K3 w - - 0 1", true, false),
        ("4k3/8/8/3q4/8/8/8/R3K3 b - - 0 1", false, true),
        ("4k3/8/2p5/3q4/4P3/8/8/R3K3 w - - 0 1", true, true),
    ] {
        let game = qchess_niels::Game::from_position(Default::default(), fen.parse().unwrap());
        if brute {
            check_against_reference(&game, 1);
        }
        if full_list {
            let fast = engine(0).search(&game, &Limits::depth(2)).unwrap();
            let full = engine(0)
                .search(&FullList(game.clone()), &Limits::depth(2))
                .unwrap();
            assert_eq!(
                (fast.best, fast.score, fast.nodes),
                (full.best, full.score, full.nodes)
            );
        }
    }
}

/// Cantwell's capture list (the capture variants decided one by one) equals the whole legal
/// list filtered by `is_tactical`, along random games.
#[test]
fn cantwell_tactical_moves_equal_the_filtered_legal_list() {
    let mut with_captures = 0;
    for seed in 0..6u64 {
        let mut game = qchess_cantwell::Game::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..60 {
            let mut node = game.search_root(0).unwrap();
            let mut want = node.moves();
            want.retain(|m| node.is_tactical(m));
            assert_eq!(node.tactical_moves(), want, "{}", game.fen());
            with_captures += usize::from(!want.is_empty());
            let Some(mv) = game.random_legal_move(&mut rng) else {
                break;
            };
            game.apply(&mv, &mut rng).unwrap();
        }
    }
    assert!(
        with_captures > 20,
        "{with_captures} positions with captures"
    );
}

/// A node whose quiescence captures are filtered from the whole legal list (the default
/// [`SearchNode::tactical_moves`]) instead of the rule crate's capture query.
struct FullListNode<N>(N);

impl<N: SearchNode> SearchNode for FullListNode<N> {
    type Move = N::Move;
    type Outcome = N::Outcome;
    fn side_to_move(&self) -> Color {
        self.0.side_to_move()
    }
    fn terminal(&mut self) -> Option<Terminal> {
        self.0.terminal()
    }
    fn moves(&mut self) -> Vec<N::Move> {
        self.0.moves()
    }
    fn outcomes(&mut self, mv: &N::Move) -> Vec<(N::Outcome, f64)> {
        self.0.outcomes(mv)
    }
    fn apply(&mut self, mv: &N::Move, o: &N::Outcome) -> bool {
        self.0.apply(mv, o)
    }
    fn undo(&mut self) {
        self.0.undo()
    }
    fn evaluate(&mut self) -> f64 {
        self.0.evaluate()
    }
    fn is_tactical(&mut self, mv: &N::Move) -> bool {
        self.0.is_tactical(mv)
    }
    fn key(&self) -> u64 {
        self.0.key()
    }
    fn token(&self, mv: &N::Move, o: &N::Outcome) -> String {
        self.0.token(mv, o)
    }
}

struct FullList<G>(G);

impl<G: Searchable> Searchable for FullList<G> {
    type Node = FullListNode<G::Node>;
    fn search_root(&self, seed: u64) -> Result<Self::Node, qchess_engine::EngineError> {
        Ok(FullListNode(self.0.search_root(seed)?))
    }
}

#[test]
fn cantwell_values_equal_brute_force_expectimax() {
    // A split knight attacks a pawn: capturing from a superposed square measures.
    let mut game = qchess_cantwell::Game::from_fen("4k3/8/8/3p4/8/8/8/1N2K3 w - - 0 1").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    game.apply("b1^a3c3", &mut rng).unwrap();
    game.apply("e8e7", &mut rng).unwrap();
    let mut root = game.search_root(0).unwrap();
    let capture = "c3d5".to_string();
    let outs = root.outcomes(&capture);
    assert_eq!(outs.len(), 2, "{outs:?}");
    assert!((outs[0].1 - 0.5).abs() < 1e-12 && (outs[1].1 - 0.5).abs() < 1e-12);
    check_against_reference(&game, 1);
    check_against_reference(&game, 2);
}

#[test]
fn akl_values_equal_brute_force_expectimax() {
    let game = qchess_akl::Game::from_seed(4);
    check_against_reference(&game, 1);
}

#[test]
fn forced_king_captures_are_found() {
    // Cantwell: the rook takes the king (probability 1) at once.
    let game = qchess_cantwell::Game::from_fen("k7/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
    let r = engine(0).search(&game, &Limits::depth(2)).unwrap();
    assert_eq!(r.best, "a1a8");
    assert_eq!(r.score, WIN_SCORE - 1.0);
    // Akl: touch the classical rook, then take the king: one turn, two decisions.
    let pos = AklPosition::parse("k7/8/8/8/8/8/8/[R*N]3K3 w - 0 1").unwrap();
    let game = qchess_akl::Game::from_position(pos);
    let r = engine(0).search(&game, &Limits::depth(1)).unwrap();
    assert_eq!(r.best, AklChoice::Touch("a1".parse().unwrap()));
    assert_eq!(r.score, WIN_SCORE - 2.0);
    assert_eq!(r.pv.len(), 2, "{:?}", r.pv);
    // Niel's: the queen mates on the back rank.
    let game = qchess_niels::Game::from_position(
        Default::default(),
        "k7/8/1K6/8/8/8/8/7Q w - - 0 1".parse().unwrap(),
    );
    let r = engine(0).search(&game, &Limits::depth(1)).unwrap();
    assert_eq!(r.score, WIN_SCORE - 1.0, "{}", r.best);
    // Both mate at once: Qh8# and Qb7# (guarded by the king).
    assert!(
        ["h1h8", "h1b7"].contains(&r.best.to_string().as_str()),
        "{}",
        r.best
    );
}

#[test]
fn a_cantwell_side_left_without_a_legal_move_is_a_draw_for_the_search() {
    // Black is a rook and two bishops up, but every black piece is hemmed in by its own pieces
    // and white's blocked pawns; white's only moves are king moves, after each of which black
    // (a step or a split) has no legal move and the game cannot go on (`qchess match` scores
    // it drawn).
    let fen = "5brk/4p1bp/4Pp1p/5P1P/8/8/8/K7";
    let black = qchess_cantwell::Game::from_fen(&format!("{fen} b - - 0 1")).unwrap();
    assert_eq!(black.legal_moves(), Vec::<String>::new());
    let white = qchess_cantwell::Game::from_fen(&format!("{fen} w - - 0 1")).unwrap();
    let moves = white.legal_moves();
    assert_eq!(moves.len(), 9, "3 king moves and 6 king splits: {moves:?}");
    assert!(moves.iter().all(|m| m.starts_with("a1")), "{moves:?}");
    let mut root = white.search_root(0).unwrap();
    // The static evaluation (what the search used for such a node before) has black far ahead.
    assert!(root.evaluate() < -500.0, "{}", root.evaluate());
    let mut after = black.search_root(0).unwrap();
    assert_eq!(after.no_moves_terminal(), Some(Terminal::Draw));
    for depth in 2..=3 {
        let r = engine(0).search(&white, &Limits::depth(depth)).unwrap();
        assert_eq!(r.score, 0.0, "depth {depth}: {r:?}");
    }
    check_against_reference(&white, 2);
}

#[test]
fn same_seed_and_node_limit_give_the_same_result() {
    let game = qchess_cantwell::Game::new();
    for level in 1..=5 {
        let opts = EngineOptions {
            seed: 7,
            level,
            ..EngineOptions::default()
        };
        let a = Engine::new(opts)
            .search(&game, &Limits::nodes(3000))
            .unwrap();
        let b = Engine::new(opts)
            .search(&game, &Limits::nodes(3000))
            .unwrap();
        assert_eq!(a, b);
    }
    let game = qchess_akl::Game::from_seed(3);
    let a = engine(11).search(&game, &Limits::nodes(5000)).unwrap();
    let b = engine(11).search(&game, &Limits::nodes(5000)).unwrap();
    assert_eq!(a, b);
}

/// The search ends on its deadline. How close to it is a measurement (docs/benchmarks.md),
/// not a timed test: this only checks that a time-limited search stops and answers, with a
/// margin no loaded machine misses.
#[test]
fn a_time_limit_ends_the_search() {
    let limit = Duration::from_millis(200);
    let loose = limit + Duration::from_secs(5);
    let cantwell = qchess_cantwell::Game::new();
    let t = Instant::now();
    let r = engine(0)
        .search(&cantwell, &Limits::movetime(limit))
        .unwrap();
    assert!(t.elapsed() < loose, "{:?}", t.elapsed());
    assert!(r.depth >= 1);
    let niels = qchess_niels::Game::new(Default::default(), "8x8".parse().unwrap()).unwrap();
    let t = Instant::now();
    engine(0).search(&niels, &Limits::movetime(limit)).unwrap();
    assert!(t.elapsed() < loose, "{:?}", t.elapsed());
    let akl = qchess_akl::Game::from_seed(1);
    let t = Instant::now();
    engine(0).search(&akl, &Limits::movetime(limit)).unwrap();
    assert!(t.elapsed() < loose, "{:?}", t.elapsed());
}

/// Two Akl games that differ only in the opponent's hidden secondary types (and, under the
/// default visibility, the side to move's own unseen ones) get the same move for the same seed.
#[test]
fn akl_decides_from_the_view_of_the_side_to_move_alone() {
    // The start: only the primary types are public.
    for seed in 0..4 {
        let a = qchess_akl::Game::from_seed(100);
        let b = qchess_akl::Game::from_seed(200);
        assert_ne!(a.position(), b.position());
        let ra = engine(seed).search(&a, &Limits::depth(2)).unwrap();
        let rb = engine(seed).search(&b, &Limits::depth(2)).unwrap();
        assert_eq!(ra, rb);
    }
    // Mid-game under OwnPairs: White's own pairs are the same and known to White, Black's
    // secondaries differ; the same public turns were played.
    use qchess_board::PieceKind::*;
    let white = [
        Knight, Rook, Pawn, Pawn, Queen, Pawn, Bishop, Pawn, Rook, Pawn, Bishop, Knight, Pawn,
        Pawn, Pawn,
    ];
    let black_a = [
        Pawn, Pawn, Rook, Queen, Pawn, Knight, Pawn, Bishop, Pawn, Rook, Pawn, Knight, Pawn,
        Bishop, Pawn,
    ];
    let black_b = [
        Queen, Pawn, Pawn, Rook, Knight, Pawn, Bishop, Pawn, Rook, Pawn, Knight, Pawn, Bishop,
        Pawn, Pawn,
    ];
    let rules = AklRules {
        visibility: Visibility::OwnPairs,
    };
    let mut games = Vec::new();
    for black in [black_a, black_b] {
        let pos = AklPosition::startpos_with(&white, &black).unwrap();
        let mut g = qchess_akl::Game::with_rules(pos, rules);
        // White touches e2 (collapses to pawn, its primary) and plays e2e4; Black touches d7
        // (collapses to pawn) and plays d7d5.
        g.touch_forced("e2".parse().unwrap(), Some(Pawn)).unwrap();
        g.play_forced("e2e4".parse().unwrap(), None).unwrap();
        g.touch_forced("d7".parse().unwrap(), Some(Pawn)).unwrap();
        g.play_forced("d7d5".parse().unwrap(), None).unwrap();
        games.push(g);
    }
    assert_ne!(games[0].position(), games[1].position());
    assert_eq!(games[0].view(Color::White), games[1].view(Color::White));
    for seed in 0..3 {
        let ra = engine(seed).search(&games[0], &Limits::depth(2)).unwrap();
        let rb = engine(seed).search(&games[1], &Limits::depth(2)).unwrap();
        assert_eq!(ra, rb);
    }
    // The search does see White's own pairs: it is not blind to what White knows.
    let mut root = games[0].search_root(0).unwrap();
    let touch = AklChoice::Touch("a1".parse().unwrap());
    let outs = root.outcomes(&touch);
    assert_eq!(
        outs.iter().map(|o| o.0).collect::<Vec<_>>(),
        vec![Some(Rook), Some(Knight)]
    );
}

#[test]
fn levels_are_checked_and_finished_games_refused() {
    let game = qchess_cantwell::Game::new();
    let bad = Engine::new(EngineOptions {
        level: 6,
        ..EngineOptions::default()
    })
    .search(&game, &Limits::depth(1));
    assert!(bad.is_err());
    let over = qchess_cantwell::Game::from_fen("8/8/8/8/8/8/8/4K3 w - - 0 1");
    if let Ok(over) = over {
        assert!(engine(0).search(&over, &Limits::depth(1)).is_err());
    }
}

/// A node that sets the search's stop flag when its `trip`-th outcome is applied, and counts
/// every piece of work the search asks of it after that.
struct Tripwire<N> {
    inner: N,
    stop: Arc<AtomicBool>,
    applied: u64,
    trip: u64,
    work_after_stop: Arc<AtomicU64>,
}

impl<N: SearchNode> Tripwire<N> {
    fn work(&mut self) {
        if self.stop.load(Ordering::Relaxed) {
            self.work_after_stop.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl<N: SearchNode> SearchNode for Tripwire<N> {
    type Move = N::Move;
    type Outcome = N::Outcome;
    fn side_to_move(&self) -> Color {
        self.inner.side_to_move()
    }
    fn terminal(&mut self) -> Option<Terminal> {
        self.inner.terminal()
    }
    fn moves(&mut self) -> Vec<N::Move> {
        self.work();
        self.inner.moves()
    }
    fn outcomes(&mut self, mv: &N::Move) -> Vec<(N::Outcome, f64)> {
        self.work();
        self.inner.outcomes(mv)
    }
    fn apply(&mut self, mv: &N::Move, o: &N::Outcome) -> bool {
        self.work();
        self.applied += 1;
        if self.applied == self.trip {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.inner.apply(mv, o)
    }
    fn undo(&mut self) {
        self.inner.undo()
    }
    fn evaluate(&mut self) -> f64 {
        self.work();
        self.inner.evaluate()
    }
    fn is_tactical(&mut self, mv: &N::Move) -> bool {
        self.inner.is_tactical(mv)
    }
    fn key(&self) -> u64 {
        self.inner.key()
    }
    fn token(&self, mv: &N::Move, o: &N::Outcome) -> String {
        self.inner.token(mv, o)
    }
}

struct Tripped<G> {
    game: G,
    stop: Arc<AtomicBool>,
    trip: u64,
    work_after_stop: Arc<AtomicU64>,
}

impl<G: Searchable> Searchable for Tripped<G> {
    type Node = Tripwire<G::Node>;
    fn search_root(&self, seed: u64) -> Result<Self::Node, qchess_engine::EngineError> {
        Ok(Tripwire {
            inner: self.game.search_root(seed)?,
            stop: self.stop.clone(),
            applied: 0,
            trip: self.trip,
            work_after_stop: self.work_after_stop.clone(),
        })
    }
}

/// The stop flag (and the deadline, read at the same places) is read at every node and before
/// every move generation, outcome list, apply and evaluation: once the flag is set inside an
/// apply, the search visits at most the one node that apply entered and asks for no more work
/// but, when no root move was valued yet, the root's own evaluation for the score (a check
/// every 16 nodes, as before, let up to 15 more nodes run). Deterministic: no clock is read.
#[test]
fn the_stop_flag_is_read_at_every_node() {
    let cantwell = qchess_cantwell::Game::from_fen("4k3/8/8/3p4/8/8/8/1N2K3 w - - 0 1").unwrap();
    for trip in [1, 2, 7, 40, 123] {
        let stop = Arc::new(AtomicBool::new(false));
        let work_after_stop = Arc::new(AtomicU64::new(0));
        let game = Tripped {
            game: cantwell.clone(),
            stop: stop.clone(),
            trip,
            work_after_stop: work_after_stop.clone(),
        };
        let limits = Limits {
            depth: Some(3),
            stop: Some(stop.clone()),
            ..Limits::default()
        };
        let r = engine(0).search(&game, &limits).unwrap();
        assert!(stop.load(Ordering::Relaxed), "trip {trip} was not reached");
        // Every apply of the search enters one node (the PV walks apply without counting).
        assert!(r.nodes <= trip, "trip {trip}: {} nodes", r.nodes);
        assert!(
            work_after_stop.load(Ordering::Relaxed) <= 1,
            "trip {trip}: {} calls after the stop",
            work_after_stop.load(Ordering::Relaxed)
        );
        assert!(cantwell.legal_moves().contains(&r.best));
    }
    // A flag already set: no node is visited, and the first ordered move is answered.
    let stop = Arc::new(AtomicBool::new(true));
    let limits = Limits {
        stop: Some(stop),
        ..Limits::depth(3)
    };
    let r = engine(0).search(&cantwell, &limits).unwrap();
    assert_eq!((r.nodes, r.depth), (0, 0));
    assert!(cantwell.legal_moves().contains(&r.best));
    // Likewise a time limit already spent (the engine keeps 15 ms back from any movetime).
    let r = engine(0)
        .search(&cantwell, &Limits::movetime(Duration::from_millis(1)))
        .unwrap();
    assert_eq!((r.nodes, r.depth), (0, 0));
}

/// The first 30 plies of a `cmd:qchess engine` vs `random` Cantwell game (seed 0): several
/// split pieces, a large state, about 166 nodes/s (docs/benchmarks.md, "Answer time in a
/// Cantwell middlegame").
fn cantwell_middlegame() -> qchess_cantwell::Game {
    let mut game = qchess_cantwell::Game::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    for mv in "b1c3 b8^c6a6 g1f3 a8^a3b8 d2d4 b8h8^a8 c1e3 d7d6 c3e4 a6b4 e4d6.m1 a8b8 \
               d6f7.m1 c8^d7f5 f7d8.m1 f5^h3g4 g2h3.m1 d7^b5f5 h3g4.m0 f5^e4b1 d8c6.m1 \
               g4^h5f5 c6b4.m1 b8^a8d8 a1b1 a8h8^b8 b1a1 f5^g4b1 a1b1 g4e6"
        .split_whitespace()
    {
        game.apply(mv, &mut rng).unwrap();
    }
    game
}

/// A 100 ms search in that middlegame answers well within 100 ms + 250 ms. The claim of
/// +50 ms is a measurement in docs/benchmarks.md; this bound is loose enough for a loaded
/// 2-core machine and still fails the old clock read every 16 nodes (~100 ms apart there,
/// 110-300 ms late). Wall-clock bound, so not run by default (timing is a benchmark's job; the
/// deterministic `the_stop_flag_is_read_at_every_node` guards the mechanism):
/// `cargo test --release -p qchess-engine -- --ignored`.
#[test]
#[ignore = "wall-clock bound; run on a quiet machine"]
fn a_time_limit_holds_in_a_cantwell_middlegame() {
    let game = cantwell_middlegame();
    assert!(game.state_size() >= 8, "{}", game.state_size());
    let limit = Duration::from_millis(100);
    let mut worst = Duration::ZERO;
    for seed in 0..3 {
        let t = Instant::now();
        let r = engine(seed)
            .search(&game, &Limits::movetime(limit))
            .unwrap();
        worst = worst.max(t.elapsed());
        assert!(game.legal_moves().contains(&r.best));
    }
    assert!(worst < limit + Duration::from_millis(250), "{worst:?}");
}

/// Mobility, by hand: after 1. e4 White has 30 pseudo-legal moves, Black 20 (3 cp each: +30),
/// and the e-pawn's square bonus rose from 5 to 15 (+10).
#[test]
fn cantwell_evaluation_counts_mobility() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut game = qchess_cantwell::Game::new();
    let mut start = game.search_root(0).unwrap();
    assert_eq!(start.evaluate(), 0.0);
    game.apply("e2e4", &mut rng).unwrap();
    let mut node = game.search_root(0).unwrap();
    assert!((node.evaluate() - 40.0).abs() < 1e-9, "{}", node.evaluate());
}

/// King danger and mobility, by hand, for White Ke1 against Black Ke8 and Re5 (the king in
/// check, certainly): rook -500 and its square bonus -6; mobility 5 king moves against 5 + 13
/// (-13 x 3 = -39); king danger -50 x 1. Kings cancel (Cantwell) or are not counted (Niel's).
#[test]
fn king_danger_and_mobility_by_hand_in_cantwell_and_niels() {
    let fen = "4k3/8/8/4r3/8/8/8/4K3 w - - 0 1";
    let expected = -500.0 - 6.0 - 39.0 - 50.0;
    let c = qchess_cantwell::Game::from_fen(fen).unwrap();
    let v = c.search_root(0).unwrap().evaluate();
    assert!((v - expected).abs() < 1e-9, "cantwell {v}");
    let pos = qchess_niels::Position::from_fen(fen, qchess_board::Geometry::STANDARD).unwrap();
    let n = qchess_niels::Game::from_position(Default::default(), pos);
    let v = n.search_root(0).unwrap().evaluate();
    assert!((v - expected).abs() < 1e-9, "niels {v}");
}

/// Akl, by hand: a black quantum rook/bishop on e5 against White's king on e1. Material
/// -(506 + 354)/2 = -430; mobility 5 against 5 + 13 on both boards (the rook's 13 moves and
/// the bishop's 13): -39; the king is attacked if the piece is a rook, probability 1/2: -25.
#[test]
fn akl_evaluation_averages_the_two_types() {
    let pos = AklPosition::parse("4k3/8/8/4(rb)3/8/8/8/4K3 w - 0 1").unwrap();
    let mut node = qchess_engine::AklNode::new(qchess_akl::Game::from_position(pos));
    let v = node.evaluate();
    assert!((v - (-430.0 - 39.0 - 25.0)).abs() < 1e-9, "{v}");
}

/// Cantwell repetitions: after 1. Kg1 Kg8 2. Kh1 Kh8 White, a queen down, can only draw by
/// going back to a position the game had (scored 0); every other move keeps the queen's
/// deficit. The earlier keys are the game's own positions, most recent first.
#[test]
fn cantwell_search_scores_a_repeated_position_as_a_draw() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let start = "1q5k/8/8/8/8/8/8/7K w - - 0 1";
    let mut game = qchess_cantwell::Game::from_fen(start).unwrap();
    let mut keys = vec![game.search_root(0).unwrap().key()];
    for mv in ["h1g1", "h8g8", "g1h1", "g8h8"] {
        game.apply(mv, &mut rng).unwrap();
        keys.push(game.search_root(0).unwrap().key());
    }
    // The position after 2...Kh8 is the start again (move counters aside).
    assert_eq!(keys[4], keys[0]);
    let mut node = game.search_root(0).unwrap();
    let earlier = node.earlier_keys().unwrap();
    assert_eq!(earlier[..4], [keys[3], keys[2], keys[1], keys[0]]);
    let r = engine(0).search(&game, &Limits::depth(1)).unwrap();
    assert_eq!((r.best.as_str(), r.score), ("h1g1", 0.0));
    // From the same position with no history, the queen counts.
    let fresh = qchess_cantwell::Game::from_fen(start).unwrap();
    let r = engine(0).search(&fresh, &Limits::depth(1)).unwrap();
    assert!(r.score < -800.0, "{}", r.score);
}
