//! Layer 3: the game. A [`Game`] holds the occupancy superposition (layer 1's
//! [`qchess_sim::State`]) and the classical layer, applies move strings through the
//! possibility equations and the circuits, enforces Definition 2 and the no-double-occupancy
//! bookkeeping, and keeps a history that undoes and replays exactly.

use crate::circuit::{self, Journal, MoveType, Step, Variant};
use crate::classical::{ClassicalLayer, PieceVector, STARTPOS_FEN};
use crate::error::GameError;
use crate::notation::{MoveShape, QcanMove};
use crate::possibility::{Classified, classify};
use crate::status::{EndReason, GameStatus, RuleOptions};
use qchess_board::{Color, Piece, PieceKind, Square};
use qchess_sim::{Predicate, QuantumState, State};
use rand::Rng;

pub use crate::classical::OCCUPIED_EPS;

/// Two states are the same for Definition 2 when their fidelity is within this of 1.
pub const UNCHANGED_TOLERANCE: f64 = 1e-12;

/// Default memory for undo snapshots; beyond it undo replays from an earlier snapshot.
pub const DEFAULT_SNAPSHOT_BUDGET_BYTES: usize = 512 << 20;

/// One entry of the game record.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRecord {
    /// The move as it replays: canonical QCAN with `.m0`/`.m1` when the move measured, or
    /// `measure:<squares>` for the measurement of every square that ends a game (D14 options).
    pub notation: String,
    /// The move type (none for a final measurement).
    pub move_type: Option<MoveType>,
    /// The variant (none for a final measurement).
    pub variant: Option<Variant>,
    /// The measurement outcome, when the move measured (`true` = the move proceeded).
    pub measured: Option<bool>,
    /// The probability the outcome had.
    pub probability: Option<f64>,
}

/// The game-level data a snapshot restores.
#[derive(Clone, Debug)]
struct Snapshot<S> {
    state: S,
    layer: ClassicalLayer,
    status: GameStatus,
    fifty_reference: f64,
}

impl<S: QuantumState> Snapshot<S> {
    fn bytes(&self) -> usize {
        self.state.bytes() + std::mem::size_of::<Self>()
    }
}

/// What taking back one history entry needs (issue 10, Deliver 1): the move's journal
/// (inverse gates and what its projections removed; a whole-state copy only on backends
/// without undo records) and the game-level data, which is small.
#[derive(Clone, Debug)]
struct UndoRecord<S> {
    journal: Journal<S>,
    layer: ClassicalLayer,
    status: GameStatus,
    fifty_reference: f64,
    /// The square probabilities before the move: restored by the undo, so that taking a
    /// move back costs no pass over the state for them (and gives back the very values the
    /// game held, bit for bit).
    probs: [f64; 64],
}

impl<S: QuantumState> UndoRecord<S> {
    fn bytes(&self) -> usize {
        self.journal.bytes() + std::mem::size_of::<Self>()
    }
}

/// A game of Cantwell quantum chess.
///
/// ```
/// use qchess_cantwell::Game;
/// use qchess_board::Square;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// let mut game = Game::new();
/// game.apply("g1^f3h3", &mut rng).unwrap();
/// assert!((game.probability(Square::F3) - 0.5).abs() < 1e-12);
/// assert!((game.probability(Square::H3) - 0.5).abs() < 1e-12);
/// assert_eq!(game.state_size(), 2);
/// game.undo().unwrap();
/// assert_eq!(game.state_size(), 1);
/// ```
///
/// The game runs on any simulator backend `S` ([`QuantumState`]); the default is the local
/// `f64` [`State`], which every constructor without a `_backend` suffix builds.
#[derive(Clone, Debug)]
pub struct Game<S: QuantumState = State> {
    state: S,
    layer: ClassicalLayer,
    status: GameStatus,
    options: RuleOptions,
    fifty_reference: f64,
    /// `square_probabilities(&state)`, kept in step with `state`: a move needs the marginals
    /// before it (D9, Definition 2) and computes those after it anyway, so each move scans
    /// the state once instead of twice.
    probs: [f64; 64],
    start: Snapshot<S>,
    history: Vec<MoveRecord>,
    /// `undo[i]` takes back history entry `i`, when its record fit the undo budget.
    undo: Vec<Option<UndoRecord<S>>>,
    snapshot_bytes: usize,
    snapshot_budget: usize,
    /// The one memory budget of the game (bytes): the state, its pass buffers, the start
    /// position and the undo snapshots all count against it. The state's own budget is set
    /// to what the others leave.
    memory_budget: usize,
    /// Fingerprints of the positions after each ply (index 0: the start), for repetition.
    fingerprints: Vec<u64>,
}

impl Default for Game {
    fn default() -> Self {
        Self::new()
    }
}

impl Game {
    /// The standard starting position.
    pub fn new() -> Self {
        Self::new_backend()
    }

    /// A classical position given as FEN (`startpos` accepted).
    pub fn from_fen(fen: &str) -> Result<Self, GameError> {
        Self::from_fen_backend(fen)
    }

    /// A game from an occupancy state and a classical layer (letters, flags), checked: every
    /// basis state may occupy only lettered squares, and every letter needs a positive
    /// probability (no double occupancy, section 7).
    ///
    /// ```
    /// use qchess_cantwell::{ClassicalLayer, Game};
    /// use qchess_sim::State;
    /// let layer = ClassicalLayer::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    /// let state = State::classical(layer.pieces.occupied_mask());
    /// assert!(Game::from_state(state, layer).is_ok());
    /// let wrong = State::classical(1); // a1 has no letter
    /// assert!(Game::from_state(wrong, layer).is_err());
    /// ```
    pub fn from_state(state: State, layer: ClassicalLayer) -> Result<Self, GameError> {
        Self::from_state_backend(state, layer)
    }

    /// Replays a recorded game from `start`: every entry of [`Game::history_notation`]
    /// (measured moves carry their outcome), giving the same state bit for bit.
    pub fn replay<T: AsRef<str>>(
        start: &crate::position::Position,
        options: RuleOptions,
        record: &[T],
    ) -> Result<Game, GameError> {
        Self::replay_backend(start, options, record)
    }

    /// A game from a serialised position (see [`crate::position::Position`]).
    pub fn from_position(position: &crate::position::Position) -> Result<Game, GameError> {
        Self::from_position_backend(position)
    }
}

impl<S: QuantumState> Game<S> {
    /// [`Game::new`] on the simulator backend `S`.
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// use qchess_sim::State;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    /// let mut game = Game::<State<f32>>::new_backend();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// assert_eq!(game.state_size(), 2);
    /// ```
    pub fn new_backend() -> Self {
        Self::from_fen_backend(STARTPOS_FEN).expect("the start FEN is valid")
    }

    /// [`Game::from_fen`] on the simulator backend `S`.
    pub fn from_fen_backend(fen: &str) -> Result<Self, GameError> {
        let layer = ClassicalLayer::from_fen(fen)?;
        let state = S::classical(layer.pieces.occupied_mask());
        Self::from_parts(state, layer, None)
    }

    /// [`Game::from_state`] on the simulator backend `S`.
    pub fn from_state_backend(state: S, layer: ClassicalLayer) -> Result<Self, GameError> {
        crate::position::check_letters(&state, &layer)?;
        Self::from_parts(state, layer, None)
    }

    /// A game from a classical layer and an occupancy state the caller has checked. The
    /// start position's copy of the state is made within the state's memory budget
    /// ([`GameError::StateTooLarge`] when it does not fit).
    pub(crate) fn from_parts(
        state: S,
        layer: ClassicalLayer,
        fifty_reference: Option<f64>,
    ) -> Result<Self, GameError> {
        let probs = square_probabilities(&state);
        let fifty_reference = fifty_reference.unwrap_or_else(|| probs.iter().sum());
        let status = king_status(&layer.pieces);
        let start = Snapshot {
            state: state.try_clone(0).map_err(sim_error)?,
            layer,
            status,
            fifty_reference,
        };
        let mut game = Self {
            state,
            layer,
            status,
            options: RuleOptions::default(),
            fifty_reference,
            probs,
            start,
            history: Vec::new(),
            undo: Vec::new(),
            snapshot_bytes: 0,
            snapshot_budget: DEFAULT_SNAPSHOT_BUDGET_BYTES,
            memory_budget: 0,
            fingerprints: Vec::new(),
        };
        game.memory_budget = game.state.memory_budget();
        game.sync_budget();
        game.fingerprints.push(game.fingerprint());
        Ok(game)
    }

    /// The same game with the optional end rules set.
    pub fn with_options(mut self, options: RuleOptions) -> Self {
        self.set_options(options);
        self
    }

    /// Sets the optional end rules. Switching the repetition option on or off restarts the
    /// repetition count from the current position (earlier positions were fingerprinted
    /// without their amplitudes).
    pub fn set_options(&mut self, options: RuleOptions) {
        let recount =
            options.repetition_claim_measurement != self.options.repetition_claim_measurement;
        self.options = options;
        if recount {
            let now = self.fingerprint();
            self.fingerprints = vec![now; self.history.len() + 1];
            // Only the current entry is meaningful; mark the older ones as distinct.
            for (i, f) in self
                .fingerprints
                .iter_mut()
                .enumerate()
                .take(self.history.len())
            {
                *f = now.wrapping_add(1 + i as u64);
            }
        }
    }

    /// The optional end rules in force.
    pub fn options(&self) -> RuleOptions {
        self.options
    }

    /// Sets the memory undo records may take (a move whose record does not fit is taken
    /// back by replay from the start instead).
    pub fn set_snapshot_budget(&mut self, bytes: usize) {
        self.snapshot_budget = bytes;
    }

    /// Heap bytes the undo records hold now. A unitary move's record is its inverse gates (a
    /// few bytes); a measurement's holds only the entries it removed (issue 10, Deliver 1).
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// game.apply("b8^a6c6", &mut rng).unwrap();
    /// let before = game.undo_bytes();
    /// game.apply("f3g5", &mut rng).unwrap(); // a jump: no copy of the state
    /// assert!(game.undo_bytes() - before < 1024);
    /// ```
    pub fn undo_bytes(&self) -> usize {
        self.snapshot_bytes
    }

    /// Sets the game's memory budget in bytes (default:
    /// [`qchess_sim::default_memory_budget`] when the state was built). Every state-sized
    /// allocation (gate buffers, undo copies, the start position) counts against it; a move
    /// that would exceed it is refused with [`GameError::StateTooLarge`] and changes nothing.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new().with_memory_budget(200);
    /// let err = game.apply("g1^f3h3", &mut rng).unwrap_err();
    /// assert!(matches!(err, GameError::StateTooLarge { .. }));
    /// assert_eq!(err.kind(), "state_too_large");
    /// assert_eq!(game.state_size(), 1);
    /// assert!(game.history().is_empty());
    /// ```
    pub fn set_memory_budget(&mut self, bytes: usize) {
        self.memory_budget = bytes;
        self.sync_budget();
    }

    /// The same game with the memory budget set (builder form of
    /// [`Game::set_memory_budget`]).
    pub fn with_memory_budget(mut self, bytes: usize) -> Self {
        self.set_memory_budget(bytes);
        self
    }

    /// The game's memory budget in bytes.
    pub fn memory_budget(&self) -> usize {
        self.memory_budget
    }

    /// Gives the state what the budget leaves after the start position and the snapshots,
    /// and the start position's copy the whole budget (its copies are checked against it).
    fn sync_budget(&mut self) {
        let held = self.snapshot_bytes + self.start.bytes();
        self.state
            .set_memory_budget(self.memory_budget.saturating_sub(held));
        self.start.state.set_memory_budget(self.memory_budget);
    }

    /// A copy of the game within its memory budget (issue 10, Deliver 5): the copy's state,
    /// start position and undo records are asked, together, of what the budget leaves
    /// beside the game before anything is copied; when they do not fit the answer is
    /// [`GameError::StateTooLarge`] (bytes asked and available) and the game is unchanged.
    /// The two states are copied with fallible allocations ([`QuantumState::try_clone`]);
    /// the undo records, counted in the same ask, are copied fallibly too
    /// ([`Journal::try_clone`]: the removed entries of a measurement, whole-state copies),
    /// so running out of memory is an error, never an abort. The copy
    /// equals [`Clone::clone`] of the game, budget included: the caller that keeps both
    /// lowers one of their budgets ([`Game::set_memory_budget`]) to stay within the one.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// let copy = game.try_clone()?;
    /// assert_eq!(copy.distribution(None), game.distribution(None));
    /// assert_eq!(copy.history(), game.history());
    /// let tiny = game.clone().with_memory_budget(1000);
    /// assert!(matches!(tiny.try_clone(), Err(GameError::StateTooLarge { .. })));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_clone(&self) -> Result<Self, GameError> {
        // The state's copy is asked beside the start position and the undo records; the
        // refusal is reported for all three.
        let held = self.start.bytes().saturating_add(self.snapshot_bytes);
        let state = self.state.try_clone(held).map_err(|e| match e {
            qchess_sim::SimError::StateTooLarge { asked, available } => GameError::StateTooLarge {
                asked: asked.saturating_add(held),
                available: available.saturating_add(held),
            },
            other => sim_error(other),
        })?;
        let start = Snapshot {
            state: self.start.state.try_clone(0).map_err(sim_error)?,
            ..self.start
        };
        let oom = |_| {
            sim_error(qchess_sim::SimError::OutOfMemory {
                states: self.state.len(),
            })
        };
        let mut undo = Vec::new();
        undo.try_reserve_exact(self.undo.len()).map_err(oom)?;
        for record in &self.undo {
            undo.push(match record {
                None => None,
                Some(r) => Some(UndoRecord {
                    journal: r.journal.try_clone().map_err(sim_error)?,
                    layer: r.layer,
                    status: r.status,
                    fifty_reference: r.fifty_reference,
                    probs: r.probs,
                }),
            });
        }
        let mut history = Vec::new();
        history.try_reserve_exact(self.history.len()).map_err(oom)?;
        history.extend(self.history.iter().cloned());
        let mut fingerprints = Vec::new();
        fingerprints
            .try_reserve_exact(self.fingerprints.len())
            .map_err(oom)?;
        fingerprints.extend_from_slice(&self.fingerprints);
        Ok(Self {
            state,
            layer: self.layer,
            status: self.status,
            options: self.options,
            fifty_reference: self.fifty_reference,
            probs: self.probs,
            start,
            history,
            undo,
            snapshot_bytes: self.snapshot_bytes,
            snapshot_budget: self.snapshot_budget,
            memory_budget: self.memory_budget,
            fingerprints,
        })
    }

    /// Caps the number of basis states the simulator may reach; a move that would exceed it
    /// is refused with [`GameError::Simulation`] and changes nothing.
    pub fn set_state_cap(&mut self, cap: usize) {
        self.state.set_cap(cap);
    }

    // ----- read-outs -------------------------------------------------------------------

    /// The occupancy superposition.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The classical layer (letters, flags, counters).
    pub fn classical(&self) -> &ClassicalLayer {
        &self.layer
    }

    /// The piece letters.
    pub fn pieces(&self) -> &PieceVector {
        &self.layer.pieces
    }

    /// The letter on `sq`.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.layer.pieces.get(sq)
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        self.layer.flags.side_to_move
    }

    /// Where the game stands.
    pub fn status(&self) -> GameStatus {
        self.status
    }

    /// Probability that each square is occupied, indexed by square (a1 = 0).
    pub fn probabilities(&self) -> [f64; 64] {
        self.probs
    }

    /// Probability that `sq` is occupied.
    pub fn probability(&self, sq: Square) -> f64 {
        self.state.probability(Predicate::One(sq.index()))
    }

    /// Number of basis states in the superposition.
    pub fn state_size(&self) -> usize {
        self.state.len()
    }

    /// The boards of the superposition with their probabilities (ancillas summed over),
    /// most probable first, at most `limit` of them.
    ///
    /// The answer is allocated outside the memory budget (with `None` it is as large as the
    /// state); [`Game::try_distribution`] is the same answer counted against it.
    pub fn distribution(&self, limit: Option<usize>) -> Vec<(u64, f64)> {
        self.state.board_distribution(limit)
    }

    /// [`Game::distribution`] within the memory budget (issue 10, Deliver 5): the answer's
    /// bytes are asked of what the budget leaves before it is built
    /// ([`QuantumState::try_board_distribution`]); when they do not fit the answer is
    /// [`GameError::StateTooLarge`] (bytes asked and available) and the game is unchanged.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// assert_eq!(game.try_distribution(None)?, game.distribution(None));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_distribution(&self, limit: Option<usize>) -> Result<Vec<(u64, f64)>, GameError> {
        self.state.try_board_distribution(limit).map_err(sim_error)
    }

    /// The `k` most probable boards (most probable first, ties by board key) and the number
    /// of distinct boards in the whole distribution, in memory proportional to `k` (not to
    /// the state): for bounded answers such as `qchess eval`'s `distribution_limit`.
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// game.apply("b8^a6c6", &mut rng).unwrap();
    /// let (top, total) = game.distribution_top(3);
    /// assert_eq!((top.len(), total), (3, 4));
    /// assert!((top[0].1 - 0.25).abs() < 1e-12);
    /// ```
    ///
    /// The selection is allocated outside the memory budget; [`Game::try_distribution_top`]
    /// is the same answer counted against it.
    pub fn distribution_top(&self, k: usize) -> (Vec<(u64, f64)>, usize) {
        self.state.board_distribution_top(k)
    }

    /// [`Game::distribution_top`] within the memory budget (issue 10, Deliver 5): the
    /// selection's bytes (16 per board, at most `k` and at most the state's size; a backend
    /// that gathers the whole distribution first counts the gather) are asked of what the
    /// budget leaves before anything is built ([`QuantumState::try_board_distribution_top`]);
    /// when they do not fit the answer is [`GameError::StateTooLarge`] (bytes asked and
    /// available) and the game is unchanged. Otherwise the answer is
    /// [`Game::distribution_top`]'s.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// assert_eq!(game.try_distribution_top(1)?, game.distribution_top(1));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_distribution_top(&self, k: usize) -> Result<(Vec<(u64, f64)>, usize), GameError> {
        self.state.try_board_distribution_top(k).map_err(sim_error)
    }

    /// Calls `f` with every board of the superposition and its probability (ancillas summed
    /// over), in an order fixed by the state, without building the distribution: for
    /// writing an unbounded answer incrementally.
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// let mut sum = 0.0;
    /// game.for_each_board(|_, p| sum += p);
    /// assert!((sum - 1.0).abs() < 1e-12);
    /// ```
    ///
    /// The local state streams its boards (nothing state-sized is held); a backend that
    /// gathers the distribution first does so outside the memory budget here, and
    /// [`Game::try_for_each_board`] counts the gather against it.
    pub fn for_each_board(&self, mut f: impl FnMut(u64, f64)) {
        self.state.for_each_board(&mut f);
    }

    /// [`Game::for_each_board`] within the memory budget (issue 10, Deliver 5), through
    /// [`QuantumState::try_for_each_board`]: a backend whose pass holds state-sized memory
    /// (one that gathers the distribution first) asks the budget for it before the pass, and
    /// when it does not fit the answer is [`GameError::StateTooLarge`] (bytes asked and
    /// available), `f` is never called and the game is unchanged. The local state streams
    /// its boards and never refuses; `f` sees the same boards in the same order as with
    /// [`Game::for_each_board`].
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// let mut boards = Vec::new();
    /// game.try_for_each_board(|b, p| boards.push((b, p)))?;
    /// assert_eq!(boards.len(), 2);
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_for_each_board(&self, mut f: impl FnMut(u64, f64)) -> Result<(), GameError> {
        self.state.try_for_each_board(&mut f).map_err(sim_error)
    }

    /// A classical board drawn from the superposition (the state is not changed): the letters
    /// of the occupied squares of one sampled basis state.
    pub fn sample_board<R: Rng + ?Sized>(&self, rng: &mut R) -> PieceVector {
        let key = self.state.sample(rng);
        let mut v = PieceVector::EMPTY;
        for sq in Square::ALL {
            if key.board & (1u64 << sq.index()) != 0 {
                v.set(sq, self.layer.pieces.get(sq));
            }
        }
        v
    }

    /// The FEN of the classical layer (letters of every partly occupied square).
    pub fn fen(&self) -> String {
        self.layer.to_fen()
    }

    /// The game record.
    pub fn history(&self) -> &[MoveRecord] {
        &self.history
    }

    /// The game record as notation strings that [`Game::replay`] plays back bit for bit.
    pub fn history_notation(&self) -> Vec<String> {
        self.history.iter().map(|r| r.notation.clone()).collect()
    }

    /// The position the game started from.
    pub fn start_position(&self) -> crate::position::Position {
        crate::position::Position::capture(
            &self.start.state,
            &self.start.layer,
            self.start.fifty_reference,
        )
    }

    /// [`Game::start_position`] within the memory budget (issue 10, Deliver 5): the amplitude
    /// list's bytes are asked of what the budget leaves beside the game before it is built
    /// (as [`Game::try_position`] does for the current position); when they do not fit the
    /// answer is [`GameError::StateTooLarge`] (bytes asked and available) and the game is
    /// unchanged.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("b1^a3c3", &mut rng).unwrap();
    /// assert_eq!(game.try_start_position()?, game.start_position());
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_start_position(&self) -> Result<crate::position::Position, GameError> {
        let available = self
            .state
            .memory_budget()
            .saturating_sub(self.state.bytes());
        crate::position::Position::try_capture_within(
            &self.start.state,
            &self.start.layer,
            self.start.fifty_reference,
            available,
        )
    }

    /// The current position, serialisable (see [`crate::position::Position`]).
    ///
    /// The amplitude list (one entry per basis state) is allocated outside the memory
    /// budget; [`Game::try_position`] is the same position counted against it, and
    /// [`Game::write_position_json`] writes it without building it.
    pub fn position(&self) -> crate::position::Position {
        crate::position::Position::capture(&self.state, &self.layer, self.fifty_reference)
    }

    /// [`Game::position`] within the memory budget (issue 10, Deliver 5): the amplitude
    /// list's bytes are asked of what the budget leaves before it is built (see
    /// [`crate::position::Position::try_capture`]); when they do not fit the answer is
    /// [`GameError::StateTooLarge`] (bytes asked and available) and the game is unchanged.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("b1^a3c3", &mut rng).unwrap();
    /// assert_eq!(game.try_position()?, game.position());
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_position(&self) -> Result<crate::position::Position, GameError> {
        crate::position::Position::try_capture(&self.state, &self.layer, self.fifty_reference)
    }

    /// Writes the JSON text of [`Game::position`] entry by entry, without building the
    /// position in memory (for states too large to hold twice), each amplitude multiplied by
    /// `scale` (1 keeps them as they are).
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("b1^a3c3", &mut rng).unwrap();
    /// let mut text = Vec::new();
    /// game.write_position_json(1.0, &mut text).unwrap();
    /// assert_eq!(String::from_utf8(text).unwrap(), game.position().to_json());
    /// ```
    pub fn write_position_json(
        &self,
        scale: f64,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        self.write_position_json_with(scale, &mut |_| Ok(()), w)
    }

    /// [`Game::write_position_json`] with more fields: `extra` writes them (each as
    /// `,"name":value`) before the object's closing brace, as `qchess eval` adds the exact
    /// amplitudes of an exact state.
    pub fn write_position_json_with(
        &self,
        scale: f64,
        extra: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        crate::position::Position::write_json_with(
            &self.state,
            &self.layer,
            self.fifty_reference,
            scale,
            extra,
            w,
        )
    }

    /// The summed square probabilities at the last reset of the 50-move counter (rules-notes
    /// D14), as [`Game::position`] records it.
    pub fn fifty_move_reference(&self) -> f64 {
        self.fifty_reference
    }

    // ----- moves -------------------------------------------------------------------------

    /// Parses and classifies `mv` without playing it: the move type and variant it has here.
    pub fn classify(&self, mv: &str) -> Result<Classified, GameError> {
        let parsed: QcanMove = mv.parse()?;
        classify(&self.layer, &parsed).map_err(|reason| GameError::Illegal {
            mv: mv.trim().to_string(),
            reason,
        })
    }

    /// Plays `mv` (QCAN, optionally with `.m0`/`.m1` to force the measurement outcome);
    /// measurements otherwise draw from `rng`. On any error the game is exactly as before.
    pub fn apply<R: Rng + ?Sized>(
        &mut self,
        mv: &str,
        rng: &mut R,
    ) -> Result<MoveRecord, GameError> {
        let record = self.apply_move(mv, rng)?;
        if self.options.fifty_move_measurement
            && self.status.is_ongoing()
            && self.layer.flags.halfmove_clock >= 100
        {
            if let Err(e) = self.measure_all(None, rng, EndReason::FiftyMoveMeasurement) {
                // Keep "an error changes nothing": take the move back as well.
                let _ = self.undo();
                return Err(e);
            }
        }
        Ok(record)
    }

    fn apply_move<R: Rng + ?Sized>(
        &mut self,
        mv: &str,
        rng: &mut R,
    ) -> Result<MoveRecord, GameError> {
        if !self.status.is_ongoing() {
            return Err(GameError::GameOver(self.status));
        }
        let given = mv.trim().to_string();
        let parsed: QcanMove = mv.parse()?;
        let c = classify(&self.layer, &parsed).map_err(|reason| GameError::Illegal {
            mv: given.clone(),
            reason,
        })?;
        let measures = c.move_type.measures(c.variant);
        if parsed.outcome == Some(false) && !measures {
            return Err(GameError::ImpossibleOutcome {
                mv: given,
                reason: format!(
                    "{}:{} measures nothing, so only .m1 (or no outcome) is allowed (rules-notes D7)",
                    c.move_type.name(),
                    c.variant.name()
                ),
            });
        }
        let probs_before = self.probs;
        if self.classically_blocked(&c, &probs_before) {
            return Err(GameError::NoEffect { mv: given });
        }
        let mut om = c.occupancy_move();
        om.forced = if measures { parsed.outcome } else { None };

        // With undo records (the local backends) the move is taken back by its journal and
        // needs no copy, except a split or merge that may change nothing (Definition 2):
        // its inverse gates restore within rounding, and a refused move must leave the state
        // exactly as it was. Without undo records the copy serves the exact restore (error,
        // Definition 2) and the undo snapshot; a move that surely changes the state and
        // cannot fail half-way, when no snapshot would fit the budget, needs neither.
        let recording = self.state.keeps_undo_records();
        let need_copy = if recording {
            uses_sqrt_gates(&c) && !sqrt_move_surely_changes(&c, &probs_before)
        } else {
            !(self.snapshot_cannot_fit() && surely_changes_in_place(&c, &probs_before))
        };
        let mut before = if need_copy {
            match self.state.try_clone(0) {
                Ok(copy) => Some(copy),
                Err(e) => return Err(sim_error(e)),
            }
        } else {
            None
        };
        let mut journal = Journal::new();
        // The maintained marginals are the state's now: a one-square measurement reads them.
        let known = Some(probs_before);
        // A projection whose record would not fit the undo budget, or the memory budget
        // beside what the move's later steps need, drops its removed entries instead of
        // writing them out, where nothing needs them ([`may_drop_projection`]); undo then
        // replays. (A record of more than half the state is the state's old arrays, the
        // survivors written out: the move holds at most 1.5x the state either way,
        // docs/decisions.md, "A projection that removes more than half writes its survivors
        // out".)
        let room = (recording && !need_copy)
            .then(|| may_drop_projection(&c, &probs_before, &self.state))
            .flatten()
            .map(|later| {
                let undo = self
                    .snapshot_budget
                    .saturating_sub(self.snapshot_bytes + std::mem::size_of::<UndoRecord<S>>());
                let memory = (self.state.memory_budget())
                    .saturating_sub(self.state.bytes())
                    .saturating_sub(later);
                undo.min(memory)
            });
        let (applied, tracked, dropped) = match circuit::apply_recorded_within(
            &mut self.state,
            &om,
            rng,
            &mut journal,
            known,
            room,
        ) {
            Ok(done) => done,
            Err(e) => {
                // The circuit took its own steps back (journal), or failed in its checks.
                if let Some(before) = before {
                    self.state = before;
                }
                let reason = e.to_string();
                return Err(match e {
                    circuit::CircuitError::ImpossibleOutcome { .. }
                    | circuit::CircuitError::NoMeasurement => {
                        GameError::ImpossibleOutcome { mv: given, reason }
                    }
                    circuit::CircuitError::Sim(e) => sim_error(e),
                    _ => GameError::Simulation(reason),
                });
            }
        };
        let probs = marginals_after(tracked, &self.state);
        if !marginals_differ(&probs_before, &probs) {
            if let Some(copy) = before.take_if(|b| same_state(b, &self.state)) {
                self.state = copy;
                return Err(GameError::NoEffect { mv: given });
            }
            if recording && !need_copy && !dropped {
                // Rare (no marginal moved): rebuild the state before on a copy of the state
                // after and compare. The journal of such a move (iSwaps, phases, captures,
                // projections) takes it back bit for bit.
                let mut probe = match self.state.try_clone(journal.bytes()) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = journal.rollback(&mut self.state);
                        return Err(sim_error(e));
                    }
                };
                if let Err(e) = journal.clone().rollback(&mut probe) {
                    let _ = journal.rollback(&mut self.state);
                    return Err(sim_error(e));
                }
                if same_state(&probe, &self.state) {
                    self.state = probe;
                    return Err(GameError::NoEffect { mv: given });
                }
            }
        }

        let journal = if recording {
            // A journal without its projection's record cannot take the move back: it is
            // undone by replay, as a record over the budget is.
            (!dropped).then_some(journal)
        } else {
            before.map(Journal::whole)
        };
        let record = journal.map(|journal| UndoRecord {
            journal,
            layer: self.layer,
            status: self.status,
            fifty_reference: self.fifty_reference,
            probs: probs_before,
        });
        let proceeded = applied.measured != Some(false);
        self.update_layer(&c, proceeded, &probs);
        self.probs = probs;
        match record {
            Some(record) => self.push_record(record),
            None => self.undo.push(None),
        }

        let mut canonical = QcanMove::plain(c.shape);
        canonical.promotion = c.promotion;
        canonical.outcome = if measures { applied.measured } else { None };
        let record = MoveRecord {
            notation: canonical.to_string(),
            move_type: Some(c.move_type),
            variant: Some(c.variant),
            measured: if measures { applied.measured } else { None },
            probability: if measures { applied.probability } else { None },
        };
        self.history.push(record.clone());
        self.status = king_status(&self.layer.pieces);
        self.fingerprints.push(self.fingerprint());
        Ok(record)
    }

    /// Letters, flags and counters after a move that changed the state (Algorithm 1/2's
    /// "update v" and "update F").
    fn update_layer(&mut self, c: &Classified, proceeded: bool, probs: &[f64; 64]) {
        let old = self.layer.pieces;
        let mut new = PieceVector::EMPTY;
        for sq in Square::ALL {
            if probs[sq.index() as usize] > OCCUPIED_EPS {
                new.set(sq, old.get(sq));
            }
        }
        if proceeded {
            for (sq, piece) in c.landings() {
                if probs[sq.index() as usize] > OCCUPIED_EPS {
                    new.set(sq, Some(piece));
                }
            }
        }
        // 50-move counter (D14): reset when the summed square probabilities moved by 1.
        let sum: f64 = probs.iter().sum();
        let reset = (sum - self.fifty_reference).abs() >= 1.0 - 1e-9;
        if reset {
            self.fifty_reference = sum;
        }
        let flags = &mut self.layer.flags;
        flags.castling.drop_involved(c.involved_mask());
        flags.en_passant_file = None;
        if proceeded && c.is_two_step() {
            // Only when the pawn may stand on its landing square: a two-step that moved
            // nothing in any branch (its path blocked wherever the pawn was on its source, or
            // the pawn already on the target, where the iSWAP takes it back) leaves no pawn
            // there, and a flag without that pawn is a FEN no loader accepts.
            if let MoveShape::Standard { from, to } = c.shape {
                if probs[to.index() as usize] > OCCUPIED_EPS {
                    flags.en_passant_file = Some(from.file());
                }
            }
        }
        if reset {
            flags.halfmove_clock = 0;
        } else {
            flags.halfmove_clock = flags.halfmove_clock.saturating_add(1);
        }
        if flags.side_to_move == Color::Black {
            flags.fullmove_number = flags.fullmove_number.saturating_add(1);
        }
        flags.side_to_move = flags.side_to_move.opposite();
        self.layer.pieces = new;
    }

    /// Whether a snapshot of the current state surely exceeds the undo budget: its keys and
    /// amplitudes alone take at least `len * 24` bytes, whatever the copy's capacities.
    fn snapshot_cannot_fit(&self) -> bool {
        let least = self.state.len() * (std::mem::size_of::<u64>() + 16)
            + std::mem::size_of::<Snapshot<S>>();
        self.snapshot_bytes + least > self.snapshot_budget
    }

    fn push_record(&mut self, mut record: UndoRecord<S>) {
        record.journal.shrink_to_fit();
        let bytes = record.bytes();
        if self.snapshot_bytes + bytes <= self.snapshot_budget {
            self.snapshot_bytes += bytes;
            self.undo.push(Some(record));
        } else {
            self.undo.push(None);
        }
        self.sync_budget();
    }

    /// Measures every square (D14 options): samples a board from `rng` unless `board` forces
    /// one, projects onto it, clears the letters of empty squares and ends the game.
    fn measure_all<R: Rng + ?Sized>(
        &mut self,
        board: Option<u64>,
        rng: &mut R,
        reason: EndReason,
    ) -> Result<(), GameError> {
        let board = board.unwrap_or_else(|| self.state.sample(rng).board);
        let pred = Predicate::Equals {
            mask: u64::MAX,
            value: board,
        };
        let impossible = |e: qchess_sim::SimError| match e {
            qchess_sim::SimError::StateTooLarge { .. } => sim_error(e),
            e => GameError::ImpossibleOutcome {
                mv: measure_notation(board),
                reason: e.to_string(),
            },
        };
        // With undo records the journal keeps only the boards the measurement removed.
        let (p, journal) = if self.state.keeps_undo_records() {
            let (p, removed) = self.state.force_keeping(pred, true).map_err(impossible)?;
            let mut journal = Journal::new();
            journal.push(Step::Projection(Box::new(removed)));
            (p, journal)
        } else {
            let before = self.state.try_clone(0).map_err(sim_error)?;
            let p = self.state.force(pred, true).map_err(impossible)?;
            (p, Journal::whole(before))
        };
        let record = UndoRecord {
            journal,
            layer: self.layer,
            status: self.status,
            fifty_reference: self.fifty_reference,
            probs: self.probs,
        };
        self.push_record(record);
        for sq in Square::ALL {
            if board & (1u64 << sq.index()) == 0 {
                self.layer.pieces.set(sq, None);
            }
        }
        self.probs = square_probabilities(&self.state);
        self.fifty_reference = self.probs.iter().sum();
        let (w, b) = kings_present(&self.layer.pieces);
        self.status = GameStatus::from_kings(w, b, Some(reason));
        self.history.push(MoveRecord {
            notation: measure_notation(board),
            move_type: None,
            variant: None,
            measured: Some(true),
            probability: Some(p),
        });
        self.fingerprints.push(self.fingerprint());
        Ok(())
    }

    /// Claims a threefold repetition (D14 option): when the current position (letters,
    /// flags, amplitudes) has occurred three times, every square is measured and the game
    /// ends. Otherwise an error, and nothing changes.
    pub fn claim_repetition<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
    ) -> Result<GameStatus, GameError> {
        if !self.options.repetition_claim_measurement {
            return Err(GameError::OptionOff("repetition_claim_measurement"));
        }
        if !self.status.is_ongoing() {
            return Err(GameError::GameOver(self.status));
        }
        let now = *self
            .fingerprints
            .last()
            .expect("the start is always fingerprinted");
        let occurrences = self.fingerprints.iter().filter(|&&f| f == now).count();
        if occurrences < 3 {
            return Err(GameError::NoRepetition { occurrences });
        }
        self.measure_all(None, rng, EndReason::RepetitionMeasurement)?;
        Ok(self.status)
    }

    /// Takes back the last history entry exactly (snapshots; replay beyond the budget).
    pub fn undo(&mut self) -> Result<MoveRecord, GameError> {
        let Some(last) = self.history.last().cloned() else {
            return Err(GameError::NothingToUndo);
        };
        let n = self.history.len();
        match self.undo.pop().flatten() {
            Some(r) => {
                self.snapshot_bytes -= r.bytes();
                let UndoRecord {
                    journal,
                    layer,
                    status,
                    fifty_reference,
                    probs,
                } = r;
                // The budget and cap are lifted inside: the state only returns to a size it
                // had. A failure here is a bug (a record that does not fit the state).
                journal.rollback(&mut self.state).map_err(sim_error)?;
                self.sync_budget();
                // The marginals the game held before the move (the state is back to that
                // one: bit for bit, or within rounding after sqrt-iSwaps and projections).
                self.probs = probs;
                self.layer = layer;
                self.status = status;
                self.fifty_reference = fifty_reference;
                self.history.pop();
                self.fingerprints.pop();
            }
            None => {
                // Rebuild by replay from the latest earlier whole-state record (backends
                // without undo records) or the start.
                let from = (0..n - 1).rev().find(|&i| {
                    self.undo[i]
                        .as_ref()
                        .is_some_and(|r| r.journal.base_state().is_some())
                });
                let records: Vec<MoveRecord> = self.history[from.unwrap_or(0)..n - 1].to_vec();
                // Both copies are made within the memory budget, beside the state; a refusal
                // puts the record place back and changes nothing.
                let base_state = match from {
                    Some(i) => {
                        let r = self.undo[i].as_ref().expect("found above");
                        r.journal
                            .base_state()
                            .expect("found above")
                            .try_clone(self.state.bytes())
                    }
                    None => self.start.state.try_clone(self.state.bytes()),
                };
                let base_state = match base_state {
                    Ok(s) => s,
                    Err(e) => {
                        self.undo.push(None);
                        return Err(sim_error(e));
                    }
                };
                let base = match from {
                    Some(i) => {
                        let r = self.undo[i].as_ref().expect("found above");
                        Snapshot {
                            state: base_state,
                            layer: r.layer,
                            status: r.status,
                            fifty_reference: r.fifty_reference,
                        }
                    }
                    None => Snapshot {
                        state: base_state,
                        ..self.start
                    },
                };
                let keep = from.unwrap_or(0);
                for r in self.undo.drain(keep..).flatten() {
                    self.snapshot_bytes -= r.bytes();
                }
                self.history.truncate(keep);
                self.fingerprints.truncate(keep + 1);
                self.restore(base);
                for r in records {
                    self.apply_record(&r.notation)?;
                }
            }
        }
        Ok(last)
    }

    fn restore(&mut self, s: Snapshot<S>) {
        self.state = s.state;
        self.sync_budget();
        self.probs = square_probabilities(&self.state);
        self.layer = s.layer;
        self.status = s.status;
        self.fifty_reference = s.fifty_reference;
    }

    /// Plays one recorded entry exactly (outcomes forced, no automatic final measurement).
    fn apply_record(&mut self, notation: &str) -> Result<(), GameError> {
        let mut no_rng = NoRandomness;
        if let Some(squares) = notation.strip_prefix("measure:") {
            let board = parse_square_list(squares).ok_or_else(|| GameError::Illegal {
                mv: notation.to_string(),
                reason: "measure: must be followed by a comma-separated list of squares".into(),
            })?;
            let reason =
                if self.layer.flags.halfmove_clock >= 100 && self.options.fifty_move_measurement {
                    EndReason::FiftyMoveMeasurement
                } else {
                    EndReason::RepetitionMeasurement
                };
            return self.measure_all(Some(board), &mut no_rng, reason);
        }
        self.apply_move(notation, &mut no_rng).map(|_| ())
    }

    /// [`Game::replay`] on the simulator backend `S`.
    pub fn replay_backend<T: AsRef<str>>(
        start: &crate::position::Position,
        options: RuleOptions,
        record: &[T],
    ) -> Result<Self, GameError> {
        let mut game = Self::from_position_backend(start)?.with_options(options);
        for (i, entry) in record.iter().enumerate() {
            game.apply_record(entry.as_ref()).map_err(|e| match e {
                GameError::Illegal { mv, reason } => GameError::Illegal {
                    mv,
                    reason: format!("entry {i}: {reason}"),
                },
                other => other,
            })?;
        }
        Ok(game)
    }

    /// [`Game::from_state_backend`] with the 50-move reference of a serialised position: the
    /// summed square probabilities at the last reset of the 50-move counter (rules-notes
    /// D14; `None`: the current sum), as [`crate::position::Position`] records it. For a
    /// state read from another form than the float amplitudes (`qchess eval` reads an exact
    /// state from its string form).
    ///
    /// ```
    /// use qchess_cantwell::{ClassicalLayer, Game};
    /// use qchess_sim::State;
    /// let layer = ClassicalLayer::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    /// let state = State::<f64>::classical(layer.pieces.occupied_mask());
    /// let game = Game::from_state_parts(state, layer, Some(2.0)).unwrap();
    /// assert_eq!(game.fifty_move_reference(), 2.0);
    /// ```
    ///
    /// # Errors
    /// [`GameError::Position`] when letters and occupancy disagree.
    pub fn from_state_parts(
        state: S,
        layer: ClassicalLayer,
        fifty_move_reference: Option<f64>,
    ) -> Result<Self, GameError> {
        crate::position::check_letters(&state, &layer)?;
        Self::from_parts(state, layer, fifty_move_reference)
    }

    /// [`Game::from_position`] on the simulator backend `S`.
    pub fn from_position_backend(position: &crate::position::Position) -> Result<Self, GameError> {
        let (state, layer, reference) = position.restore()?;
        Self::from_parts(state, layer, reference)
    }

    /// A fingerprint of letters, flags (without counters) and, with the repetition option, the
    /// amplitudes up to a global phase, rounded to 1e-9.
    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.layer.pieces.hash(&mut h);
        self.layer.flags.side_to_move.hash(&mut h);
        self.layer.flags.castling.hash(&mut h);
        self.layer.flags.en_passant_file.hash(&mut h);
        if self.options.repetition_claim_measurement {
            // A global phase is no difference: the digest rotates the first sizeable
            // amplitude (in key order) onto the positive real axis before rounding, and sums
            // one hash per entry, with no copy of the entries (issue 10, Deliver 5; a
            // sharded state digests its pieces where they lie).
            self.state.amplitude_digest(1e9).hash(&mut h);
        }
        h.finish()
    }

    /// How many times the current position has occurred (with the repetition option on:
    /// letters, flags and amplitudes; otherwise letters and flags only).
    pub fn repetitions(&self) -> usize {
        let now = *self.fingerprints.last().expect("start fingerprinted");
        self.fingerprints.iter().filter(|&&f| f == now).count()
    }

    /// Whether the side to move has a letter of kind `kind` anywhere (helper for UIs).
    pub fn has_piece(&self, color: Color, kind: PieceKind) -> bool {
        self.layer.pieces.mask_of(Piece::new(color, kind)) != 0
    }
}

/// An RNG for replays: every measurement outcome is forced, so it is never asked.
pub(crate) struct NoRandomness;

impl rand::RngCore for NoRandomness {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
}

fn measure_notation(board: u64) -> String {
    let squares: Vec<String> = Square::ALL
        .iter()
        .filter(|s| board & (1u64 << s.index()) != 0)
        .map(|s| s.to_string())
        .collect();
    format!("measure:{}", squares.join(","))
}

fn parse_square_list(s: &str) -> Option<u64> {
    let mut board = 0u64;
    if s.is_empty() {
        return Some(0);
    }
    for part in s.split(',') {
        let sq: Square = part.trim().parse().ok()?;
        board |= 1u64 << sq.index();
    }
    Some(board)
}

/// A simulator refusal as a game error: a budget refusal keeps its numbers.
pub(crate) fn sim_error(e: qchess_sim::SimError) -> GameError {
    match e {
        qchess_sim::SimError::StateTooLarge { asked, available } => {
            GameError::StateTooLarge { asked, available }
        }
        other => GameError::Simulation(other.to_string()),
    }
}

/// The probability of each square (the simulator's marginals).
pub fn square_probabilities<S: QuantumState>(state: &S) -> [f64; 64] {
    state.qubit_probabilities()
}

/// Whether some square's probability differs by more than [`UNCHANGED_TOLERANCE`]: a cheap
/// proof that a move changed the state (one scan each, far cheaper than an overlap).
pub fn marginals_differ(a: &[f64; 64], b: &[f64; 64]) -> bool {
    a.iter()
        .zip(b)
        .any(|(x, y)| (x - y).abs() > UNCHANGED_TOLERANCE)
}

/// Whether `c` surely changes the state through a circuit that fails only in its argument
/// checks, before any amplitude moves: an uncontrolled jump or pawn step (one iSwap, a
/// relabelling) from a square of probability above 1e-10 to one below 1e-13. The target's
/// marginal then rises by the source's, far beyond [`UNCHANGED_TOLERANCE`].
fn surely_changes_in_place(c: &Classified, probs: &[f64; 64]) -> bool {
    let MoveShape::Standard { from, to } = c.shape else {
        return false;
    };
    matches!(c.move_type, MoveType::Jump | MoveType::PawnStep)
        && c.variant == Variant::Basic
        && probs[from.index() as usize] > 1e-10
        && probs[to.index() as usize] < 1e-13
}

/// The fewest entries a state held for a measuring move that may drop its record to drop
/// one of more than half the state's entries. No longer used: a projection that removes
/// more than half the state now writes its survivors out and keeps its old arrays as the
/// record, within 1.5x the state, so such records are kept on states of any size
/// (docs/decisions.md, "A projection that removes more than half writes its survivors
/// out").
#[deprecated(note = "records of more than half the state are kept within 1.5x the state now")]
pub const RECORD_SHARE_CAP_MIN_ENTRIES: usize = 1 << 16;

/// Whether `c`'s measurement may drop its projection's undo record when the record would
/// not fit the undo budget (issue 10: a measuring move within 1.5x of its bare gate with the
/// budget full) or the memory budget beside the move's later steps, and if so the memory
/// bytes those later steps may allocate (`Some(0)` when none does): only where no step after the measurement can fail, so that no rollback
/// within the move needs the record, and where either outcome surely moves a marginal by far
/// more than [`UNCHANGED_TOLERANCE`], so that the Definition 2 check never needs it to
/// rebuild the state before.
/// - An excluded jump or pawn step (eq. 16b: M1 = target empty, then one uncontrolled iSwap,
///   a relabelling that fails only in the argument checks the measurement has passed), from
///   a source of probability above 1e-10 to a target below 1 - 1e-10: the source's marginal
///   goes to 0 when the jump follows, the target's to 1 when it does not.
/// - A capture jump (eq. 18b: M1 = source occupied, then a capture of the target and one
///   uncontrolled iSwap) from a source of probability above 1e-10, on a state whose memory
///   budget has room for 24 bytes per entry beside it: the capture's new arrays (at most
///   one entry per survivor) then surely fit, as the projection only gives memory back; its
///   ancillas were counted before any step. The source's marginal goes to 0 either way.
/// - The other moves that measure one square first, where the square's probability is
///   strictly between 1e-10 and 1 - 1e-10 (either outcome then removes at least 1e-10 of the
///   state's mass, so the state surely changes: after a projection that removed mass `m`
///   and a permutation of the survivors into keys the projection emptied, the overlap with
///   the state before is at most about `1 - m/4`) and the memory budget has room for 24
///   bytes per entry for each later step that allocates (a capture's new arrays, a
///   controlled iSwap's scratch, each at most one entry per survivor): an excluded slide or
///   pawn two-step (eq. 21b, then the controlled iSwap), a capture slide to an adjacent
///   square (eq. 23b with an empty path is eq. 18b), a pawn capture (eq. 32 with 18b: a
///   capture, then the iSwap where it happened) and en passant, excluded (M1 = target
///   empty, a controlled capture, the iSwap) or capturing (M1 = source occupied, two
///   captures, the iSwap).
/// - Castling (eq. 36b: M1 = the king's and the rook's targets empty, then two iSwaps,
///   controlled on the b-file square on the queen side), where the probability that both
///   targets are empty is surely strictly between 1e-10 and 1 - 1e-10 (it lies between
///   `1 - k - r` and `1 - max(k, r)` for the targets' marginals `k` and `r`), with room for
///   the queen side's two controlled iSwaps.
/// - A capture slide through a path (eq. 23b: a set no single square describes), with room
///   for the capture and the controlled iSwap: the circuit reads the outcome's probability
///   and drops the records of its projections only for an outcome that removes more than
///   1e-10 of the mass (`Recorder::may_drop`).
fn may_drop_projection<S: QuantumState>(
    c: &Classified,
    probs: &[f64; 64],
    state: &S,
) -> Option<usize> {
    let MoveShape::Standard { from, to } = c.shape else {
        return None;
    };
    let (source, target) = (probs[from.index() as usize], probs[to.index() as usize]);
    let room = state.memory_budget().saturating_sub(state.bytes());
    // `steps` allocations of at most 24 bytes per entry (and their page rounding), if the
    // budget has room for them.
    let fits = |steps: usize| {
        let need = state.len().saturating_mul(24 * steps) + (4 << 20) * steps;
        (room >= need).then_some(need)
    };
    let mixed = |p: f64| p > 1e-10 && p < 1.0 - 1e-10;
    match (c.move_type, c.variant) {
        (MoveType::Jump | MoveType::PawnStep, Variant::Excluded) => {
            (source > 1e-10 && target < 1.0 - 1e-10).then_some(0)
        }
        (MoveType::Jump, Variant::Capture) => {
            let need = state.len().saturating_mul(24);
            (source > 1e-10 && room >= need).then_some(need)
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Excluded) => {
            fits(1).filter(|_| mixed(target))
        }
        (MoveType::Slide, Variant::Capture) => {
            if crate::possibility::path_between(from, to) == 0 {
                fits(1).filter(|_| mixed(source))
            } else {
                // The capture and the controlled iSwap; the circuit drops the records only
                // for an outcome that removes more than 1e-10 of the mass
                // (`Recorder::may_drop`).
                fits(2)
            }
        }
        (MoveType::KsCastle | MoveType::QsCastle, _) => {
            let sq = c.occupancy_move().castling_squares()?;
            let p = |s: Square| probs[s.index() as usize];
            let (king, rook) = (p(sq.king_to), p(sq.rook_to));
            // The probability that both targets are empty lies within
            // [1 - king - rook, 1 - max(king, rook)].
            let sure = king.max(rook) > 1e-10 && king + rook < 1.0 - 1e-10;
            // Queen side: two iSwaps controlled on the b-file square.
            fits(if sq.control.is_some() { 2 } else { 0 }).filter(|_| sure)
        }
        (MoveType::PawnCapture, _) => fits(2).filter(|_| mixed(source)),
        (MoveType::PawnEp, Variant::Excluded) => fits(2).filter(|_| mixed(target)),
        (MoveType::PawnEp, Variant::Capture) => fits(3).filter(|_| mixed(source)),
        _ => None,
    }
}

/// The square probabilities after a move (issue 10, Deliver 2), from what its steps told
/// of them ([`circuit::Tracked`]: the rules of each step are there): known ones are taken as
/// they are, the squares later steps touched are read from the state after the move in one
/// pass ([`QuantumState::qubit_probabilities_of`], not the 64-square pass), and unknown ones
/// (a projection that did not sum them, a whole-state copy, a backend without undo records)
/// are all read in one pass.
fn marginals_after<S: QuantumState>(tracked: circuit::Tracked, state: &S) -> [f64; 64] {
    match tracked {
        circuit::Tracked::Known(probs) => probs,
        circuit::Tracked::Touched(mut probs, touched) => {
            let squares: Vec<u8> = (0..64u8).filter(|&q| touched >> q & 1 == 1).collect();
            for (&q, p) in squares.iter().zip(state.qubit_probabilities_of(&squares)) {
                probs[usize::from(q)] = p;
            }
            probs
        }
        circuit::Tracked::Unknown => square_probabilities(state),
    }
}

/// Whether the move's circuit runs sqrt-iSwaps (splits and merges): their inverse gates
/// restore the state within rounding, not bit for bit.
fn uses_sqrt_gates(c: &Classified) -> bool {
    matches!(
        c.move_type,
        MoveType::SplitJump | MoveType::SplitSlide | MoveType::MergeJump | MoveType::MergeSlide
    )
}

/// Whether a split or merge surely moves a marginal by far more than
/// [`UNCHANGED_TOLERANCE`], from the marginals before it: a split of a piece of probability
/// above 1e-6 into two squares (and paths) empty in every branch (below 1e-20) empties its
/// source; a merge into an empty square (and paths) of sources one of which holds above 1e-6
/// empties the first source or fills the target by half the second's. Interference with the
/// (at most 1e-20) branches where those squares are occupied moves at most 2e-10.
fn sqrt_move_surely_changes(c: &Classified, probs: &[f64; 64]) -> bool {
    let p = |sq: Square| probs[sq.index() as usize];
    let empty = |mask: u64| (0..64).all(|i| mask & (1u64 << i) == 0 || probs[i] < 1e-20);
    let bit = |sq: Square| 1u64 << sq.index();
    let path = crate::possibility::path_between;
    match (c.move_type, c.shape) {
        (MoveType::SplitJump, MoveShape::Split { from, to1, to2 }) => {
            p(from) > 1e-6 && empty(bit(to1) | bit(to2))
        }
        (MoveType::SplitSlide, MoveShape::Split { from, to1, to2 }) => {
            p(from) > 1e-6 && empty(bit(to1) | bit(to2) | path(from, to1) | path(from, to2))
        }
        (MoveType::MergeJump, MoveShape::Merge { from1, from2, to }) => {
            (p(from1) > 1e-6 || p(from2) > 1e-6) && empty(bit(to))
        }
        (MoveType::MergeSlide, MoveShape::Merge { from1, from2, to }) => {
            (p(from1) > 1e-6 || p(from2) > 1e-6)
                && empty(bit(to) | path(from1, to) | path(from2, to))
        }
        _ => false,
    }
}

/// Whether two states are equal for Definition 2: the same entries within
/// [`UNCHANGED_TOLERANCE`], else fidelity within it of 1.
pub fn same_state<S: QuantumState>(a: &S, b: &S) -> bool {
    if a.entries_close(b, UNCHANGED_TOLERANCE) {
        return true;
    }
    // Normalised overlap: exact backends keep their states unnormalised.
    let norms = (a.norm_sqr() * b.norm_sqr()).sqrt();
    norms > 0.0 && 1.0 - a.inner(b).norm() / norms < UNCHANGED_TOLERANCE
}

fn kings_present(v: &PieceVector) -> (bool, bool) {
    (
        v.mask_of(Piece::new(Color::White, PieceKind::King)) != 0,
        v.mask_of(Piece::new(Color::Black, PieceKind::King)) != 0,
    )
}

fn king_status(v: &PieceVector) -> GameStatus {
    let (w, b) = kings_present(v);
    GameStatus::from_kings(w, b, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn played(fen: &str, moves: &[&str]) -> Game {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut game = Game::from_fen(fen).unwrap();
        for mv in moves {
            game.apply(mv, &mut rng).unwrap();
        }
        game
    }

    fn may_drop(game: &Game, mv: &str, probs: &[f64; 64]) -> bool {
        may_drop_projection(&game.classify(mv).unwrap(), probs, game.state()).is_some()
    }

    #[test]
    fn an_excluded_step_may_drop_its_record_only_when_either_outcome_moves_a_marginal() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let game = played(start, &["b1^a3c3", "g8^f6h6"]);
        let probs = game.probabilities();
        assert!(may_drop(&game, "a2a3", &probs));
        // A source of probability at most 1e-10, a target of at least 1 - 1e-10: not.
        let (a2, a3) = (8, 16);
        let mut p = probs;
        p[a2] = 1e-10;
        assert!(!may_drop(&game, "a2a3", &p));
        p[a2] = 2e-10;
        assert!(may_drop(&game, "a2a3", &p));
        let mut p = probs;
        p[a3] = 1.0 - 1e-10;
        assert!(!may_drop(&game, "a2a3", &p));
        // Moves without a measurement, or whose later steps could fail: not.
        assert!(!may_drop(&game, "h2h3", &probs));
        assert!(!may_drop(&game, "a3^b5c4", &probs));
    }

    #[test]
    fn a_capture_jump_may_drop_its_record_only_with_room_for_the_capture() {
        let mut game = played("4k3/8/8/1p6/8/8/8/1N2K3 w - - 0 1", &["b1^a3c3", "e8d8"]);
        let probs = game.probabilities();
        assert!(may_drop(&game, "a3xb5", &probs));
        // The state's budget is the game's less the undo records and the start position.
        let held = game.memory_budget() - game.state().memory_budget();
        let need = held + game.state().bytes() + game.state().len() * 24;
        game.set_memory_budget(need);
        assert!(may_drop(&game, "a3xb5", &probs));
        game.set_memory_budget(need - 1);
        assert!(!may_drop(&game, "a3xb5", &probs));
        game.set_memory_budget(need);
        let mut p = probs;
        p[16] = 1e-10; // a3
        assert!(!may_drop(&game, "a3xb5", &p));
    }

    /// The budget room the state has for `steps` later allocations of 24 bytes per entry,
    /// as `may_drop_projection` asks it, set exactly (`short`: one byte less).
    fn set_room(game: &mut Game, steps: usize, short: bool) {
        let held = game.memory_budget() - game.state().memory_budget();
        let need =
            held + game.state().bytes() + game.state().len() * 24 * steps + (4 << 20) * steps;
        game.set_memory_budget(need - usize::from(short));
    }

    #[test]
    fn an_excluded_slide_may_drop_its_record_with_a_mixed_target_and_room_for_its_scratch() {
        let mut game = played("4k3/8/8/8/8/8/8/RN2K3 w - - 0 1", &["b1^a3c3", "e8d8"]);
        let probs = game.probabilities();
        assert!(may_drop(&game, "a1a3", &probs));
        let a3 = 16;
        for (p3, ok) in [(1e-10, false), (2e-10, true), (1.0 - 1e-10, false)] {
            let mut p = probs;
            p[a3] = p3;
            assert_eq!(may_drop(&game, "a1a3", &p), ok, "{p3}");
        }
        set_room(&mut game, 1, false);
        assert!(may_drop(&game, "a1a3", &probs));
        set_room(&mut game, 1, true);
        assert!(!may_drop(&game, "a1a3", &probs));
    }

    #[test]
    fn capture_slides_and_pawn_captures_may_drop_their_records_from_a_mixed_source() {
        // A rook in superposition next to a knight (b1xb2), and through a path (c1xc5).
        let mut game = played("4k3/8/8/2n5/8/8/1n6/R3K3 w - - 0 1", &["a1^b1c1", "e8d8"]);
        let probs = game.probabilities();
        assert!(may_drop(&game, "b1xb2", &probs));
        let c = game.classify("c1xc5").unwrap();
        assert_eq!(
            (c.move_type, c.variant),
            (MoveType::Slide, Variant::Capture)
        );
        // Through a path: allowed with room for the capture and the controlled iSwap (the
        // circuit then decides on the outcome's probability).
        assert!(may_drop(&game, "c1xc5", &probs));
        let mut p = probs;
        p[1] = 1.0 - 1e-10; // b1
        assert!(!may_drop(&game, "b1xb2", &p));
        set_room(&mut game, 2, false);
        assert!(may_drop(&game, "c1xc5", &probs));
        set_room(&mut game, 2, true);
        assert!(!may_drop(&game, "c1xc5", &probs));
        set_room(&mut game, 1, true);
        assert!(!may_drop(&game, "b1xb2", &probs));
        // A pawn capture: two allocating steps (the capture, the iSwap where it happened).
        let mut game = played("4k3/8/8/8/2p5/1n6/P7/4K3 w - - 0 1", &[]);
        let probs = game.probabilities();
        // The pawn is classical here: its measurement removes nothing, so nothing to drop.
        assert!(!may_drop(&game, "a2xb3", &probs));
        let mut p = probs;
        p[8] = 0.5; // a2
        assert!(may_drop(&game, "a2xb3", &p));
        set_room(&mut game, 2, false);
        assert!(may_drop(&game, "a2xb3", &p));
        set_room(&mut game, 2, true);
        assert!(!may_drop(&game, "a2xb3", &p));
    }

    #[test]
    fn castling_may_drop_its_record_when_both_targets_are_surely_neither_empty_nor_blocked() {
        // King side: M1 = f1 and g1 empty; a knight split onto g1 (g1 = 1/2, f1 = 0).
        let game = played("4k3/8/8/8/8/7N/8/4K2R w K - 0 1", &["h3^g1f4", "e8d8"]);
        let probs = game.probabilities();
        let (f1, g1) = (5, 6);
        assert_eq!((probs[f1], probs[g1]), (0.0, 0.5));
        assert!(may_drop(&game, "e1g1", &probs));
        // P(both empty) within [1 - f1 - g1, 1 - max(f1, g1)]: sure only when
        // max > 1e-10 and f1 + g1 < 1 - 1e-10.
        for (pf, pg, ok) in [
            (0.0, 1e-10, false),
            (0.0, 2e-10, true),
            (0.5, 0.5, false),
            (0.5, 0.5 - 2e-10, true),
            (0.0, 1.0 - 1e-10, false),
        ] {
            let mut p = probs;
            p[f1] = pf;
            p[g1] = pg;
            assert_eq!(may_drop(&game, "e1g1", &p), ok, "{pf} {pg}");
        }
        // Queen side: the two iSwaps controlled on b1 need room for their scratch.
        let mut game = played("4k3/8/8/8/8/4N3/8/R3K3 w Q - 0 1", &["e3^d1c2", "e8d8"]);
        let probs = game.probabilities();
        assert!(may_drop(&game, "e1c1", &probs));
        set_room(&mut game, 2, false);
        assert!(may_drop(&game, "e1c1", &probs));
        set_room(&mut game, 2, true);
        assert!(!may_drop(&game, "e1c1", &probs));
    }

    #[test]
    fn en_passant_may_drop_its_record_with_room_for_each_capture() {
        // After b2b4 the c4 pawn may take en passant on b3 (the pawn on b4).
        let mut game = played("4k3/8/8/8/2p5/8/1P6/4K3 w - - 0 1", &["b2b4"]);
        let c = game.classify("c4b3").unwrap();
        assert_eq!(c.move_type, MoveType::PawnEp);
        let probs = game.probabilities();
        let (c4, b3) = (26, 17);
        // Basic en passant measures nothing.
        assert_eq!(c.variant, Variant::Basic);
        assert!(!may_drop(&game, "c4b3", &probs));
        // The classification is the game's; the rule reads the variant and the marginals.
        let mut capture = c;
        capture.variant = Variant::Capture;
        let mut excluded = c;
        excluded.variant = Variant::Excluded;
        let mut p = probs;
        p[c4] = 0.5;
        p[b3] = 0.5;
        let drop = |g: &Game, c: &Classified, p: &[f64; 64]| {
            may_drop_projection(c, p, g.state()).is_some()
        };
        assert!(drop(&game, &capture, &p) && drop(&game, &excluded, &p));
        assert!(!drop(&game, &capture, &probs) && !drop(&game, &excluded, &probs));
        set_room(&mut game, 3, false);
        assert!(drop(&game, &capture, &p));
        set_room(&mut game, 3, true);
        assert!(!drop(&game, &capture, &p) && drop(&game, &excluded, &p));
        set_room(&mut game, 2, true);
        assert!(!drop(&game, &excluded, &p));
    }
}
