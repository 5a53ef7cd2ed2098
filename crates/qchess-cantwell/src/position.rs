//! The serialised quantum position: the classical layer (as FEN) plus the amplitude list.
//! It round-trips exactly: amplitudes are written as JSON numbers with the shortest digits
//! that read back to the same `f64` (serde_json with `float_roundtrip`).
//!
//! ```json
//! {"fen": "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1",
//!  "amplitudes": [{"board": "a3 e1 e8", "ancillas": "0", "re": 0.0, "im": 0.7071067811865476},
//!                 {"board": "c3 e1 e8", "ancillas": "0", "re": 0.0, "im": 0.7071067811865476}]}
//! ```

use crate::classical::{ClassicalLayer, OCCUPIED_EPS};
use crate::error::GameError;
use num_complex::Complex;
use qchess_board::Square;
use qchess_sim::{Key, Normalization, QuantumState};
use serde::{Deserialize, Serialize};

/// One basis state and its amplitude.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AmplitudeEntry {
    /// The occupied squares, space-separated, ascending (`"a3 e1 e8"`; `""` for none).
    pub board: String,
    /// The capture-ancilla bits as a hexadecimal number (`"0"`, `"5"`).
    pub ancillas: String,
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl AmplitudeEntry {
    /// The entry of basis state `k` with amplitude `a` times `scale`.
    fn of(k: Key, a: Complex<f64>, scale: f64) -> Self {
        AmplitudeEntry {
            board: board_squares(k.board),
            ancillas: format!("{:x}", k.ancillas),
            re: a.re * scale,
            im: a.im * scale,
        }
    }
}

/// A quantum position: classical layer plus amplitudes.
///
/// ```
/// use qchess_cantwell::{Game, Position};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut game = Game::new();
/// game.apply("b1^a3c3", &mut rng).unwrap();
/// let json = game.position().to_json();
/// let back = Game::from_position(&Position::from_json(&json).unwrap()).unwrap();
/// assert_eq!(back.position().to_json(), json);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// The classical layer: letters of every square with positive probability, flags, counters.
    pub fen: String,
    /// The amplitudes (entries absent are zero), in the simulator's canonical order.
    pub amplitudes: Vec<AmplitudeEntry>,
    /// The summed square probabilities at the last reset of the 50-move counter (D14);
    /// absent: the current sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifty_move_reference: Option<f64>,
}

/// The squares of `board`, space-separated, ascending.
pub fn board_squares(board: u64) -> String {
    let names: Vec<String> = Square::ALL
        .iter()
        .filter(|s| board & (1u64 << s.index()) != 0)
        .map(|s| s.to_string())
        .collect();
    names.join(" ")
}

/// The board of a space-separated square list ([`board_squares`] read back): an error names
/// a word that is not a square or a square listed twice.
///
/// ```
/// use qchess_cantwell::position::{board_squares, parse_board_squares};
/// assert_eq!(board_squares(parse_board_squares("e8 a3").unwrap()), "a3 e8");
/// assert!(parse_board_squares("a3 a3").is_err());
/// ```
pub fn parse_board_squares(s: &str) -> Result<u64, String> {
    let mut board = 0u64;
    for name in s.split_whitespace() {
        let sq: Square = name
            .parse()
            .map_err(|_| format!("{name:?} is not a square"))?;
        if board & (1u64 << sq.index()) != 0 {
            return Err(format!("square {name} listed twice"));
        }
        board |= 1u64 << sq.index();
    }
    Ok(board)
}

/// The most heap bytes one [`AmplitudeEntry`] of a position with `layer`'s letters and
/// `ancillas` capture ancillas takes: the entry, its board string (3 bytes per lettered
/// square at most) and its ancilla string (hex digits, at least the 8 bytes `format!`
/// starts a string with, growing by doubling).
fn entry_bytes_bound(layer: &ClassicalLayer, ancillas: u32) -> usize {
    let board = 3 * layer.pieces.occupied_mask().count_ones() as usize;
    let digits = (ancillas as usize).div_ceil(4).max(1);
    std::mem::size_of::<AmplitudeEntry>() + board + digits.next_power_of_two().max(8)
}

impl Position {
    /// The position of a state and classical layer. The amplitude list is allocated outside
    /// the memory budget; [`Position::try_capture`] is the budgeted form.
    pub fn capture<S: QuantumState>(
        state: &S,
        layer: &ClassicalLayer,
        fifty_reference: f64,
    ) -> Self {
        // Streamed (a sharded state sends bounded rounds instead of gathering); a backend
        // whose stream asks a budget that refuses is read through `entries_f64`, outside it.
        let mut amplitudes = Vec::new();
        let streamed = state
            .try_for_each_entry_f64(&mut |k, a| amplitudes.push(AmplitudeEntry::of(k, a, 1.0)));
        if streamed.is_err() {
            amplitudes = state
                .entries_f64()
                .map(|(k, a)| AmplitudeEntry::of(k, a, 1.0))
                .collect();
        }
        Position {
            fen: layer.to_fen(),
            amplitudes,
            fifty_move_reference: Some(fifty_reference),
        }
    }

    /// [`Position::capture`] within the state's memory budget (issue 10, Deliver 5): before
    /// anything is allocated, the amplitude list's bytes are asked of what
    /// [`QuantumState::memory_budget`] leaves after [`QuantumState::bytes`]; the list is then
    /// reserved fallibly. [`GameError::StateTooLarge`] (bytes asked and available) when they
    /// do not fit; nothing is changed. The bytes asked are a bound per basis state: the
    /// entry itself, its board string (at most 3 bytes per lettered square of `layer`: a
    /// board never occupies a square without a letter) and its ancilla string (the hex
    /// digits of [`QuantumState::ancilla_count`] bits, at least 8 bytes as `format!`
    /// allocates them); the allocator's own per-block overhead is not counted.
    ///
    /// ```
    /// use qchess_cantwell::{ClassicalLayer, GameError, Position};
    /// use qchess_sim::{QuantumState, State};
    /// let layer = ClassicalLayer::from_fen("4k3/8/8/8/8/8/8/1N2K3 w - - 0 1")?;
    /// let s = State::<f64>::classical(layer.pieces.occupied_mask());
    /// assert_eq!(Position::try_capture(&s, &layer, 3.0)?, Position::capture(&s, &layer, 3.0));
    /// let tiny = s.clone().with_memory_budget(s.bytes() + 10);
    /// assert!(matches!(
    ///     Position::try_capture(&tiny, &layer, 3.0),
    ///     Err(GameError::StateTooLarge { available: 10, .. })
    /// ));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_capture<S: QuantumState>(
        state: &S,
        layer: &ClassicalLayer,
        fifty_reference: f64,
    ) -> Result<Self, GameError> {
        let available = state.memory_budget().saturating_sub(state.bytes());
        Self::try_capture_within(state, layer, fifty_reference, available)
    }

    /// [`Position::try_capture`] with `available` bytes for the amplitude list (what the
    /// game's budget leaves, for a state that is not the game's current one).
    pub(crate) fn try_capture_within<S: QuantumState>(
        state: &S,
        layer: &ClassicalLayer,
        fifty_reference: f64,
        available: usize,
    ) -> Result<Self, GameError> {
        let n = state.len();
        let asked = n.saturating_mul(entry_bytes_bound(layer, state.ancilla_count()));
        if asked > available {
            return Err(GameError::StateTooLarge { asked, available });
        }
        let mut amplitudes = Vec::new();
        let reserved = amplitudes.try_reserve_exact(n).is_ok();
        // The entries are streamed even when this process could not reserve the list: on a
        // sharded state the stream is collective, and every rank must walk it to the end
        // (the ranks' budget answers above agree, a failed reservation may be one rank's).
        state
            .try_for_each_entry_f64(&mut |k, a| {
                if reserved && amplitudes.len() < n {
                    amplitudes.push(AmplitudeEntry::of(k, a, 1.0));
                }
            })
            .map_err(crate::game::sim_error)?;
        if !reserved {
            return Err(crate::game::sim_error(qchess_sim::SimError::OutOfMemory {
                states: n,
            }));
        }
        Ok(Position {
            fen: layer.to_fen(),
            amplitudes,
            fifty_move_reference: Some(fifty_reference),
        })
    }

    /// Writes the JSON text of [`Position::capture`]`(state, layer, fifty_reference)`, every
    /// amplitude multiplied by `scale` (1 for the float states), entry by entry: the entry
    /// list is never built, so the memory used is one entry's, whatever the state's size. The
    /// text is the same as [`Position::to_json`] of the captured position when `scale` is 1.
    /// The entries are read through [`QuantumState::try_for_each_entry_f64`]: a sharded state
    /// streams them in bounded rounds, nothing gathered. A backend that must hold
    /// state-sized memory to read them asks its memory budget first, and a refusal is an
    /// error of kind [`std::io::ErrorKind::Other`] carrying the [`qchess_sim::SimError`],
    /// returned before anything is written.
    pub fn write_json<S: QuantumState>(
        state: &S,
        layer: &ClassicalLayer,
        fifty_reference: f64,
        scale: f64,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        Self::write_json_with(state, layer, fifty_reference, scale, &mut |_| Ok(()), w)
    }

    /// [`Position::write_json`], then `extra` (more fields, each written as
    /// `,"name":value`) before the closing brace.
    pub fn write_json_with<S: QuantumState>(
        state: &S,
        layer: &ClassicalLayer,
        fifty_reference: f64,
        scale: f64,
        extra: &mut dyn FnMut(&mut dyn std::io::Write) -> std::io::Result<()>,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        // The head is written with the first entry: a backend that must hold state-sized
        // memory to read its entries refuses before the first one, and that is an error
        // here with nothing written, never a short list. A write error is kept and the
        // stream walked to its end without writing (on a sharded state every rank walks it).
        let fen = layer.to_fen();
        let head = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
            w.write_all(b"{\"fen\":")?;
            serde_json::to_writer(&mut *w, &fen)?;
            w.write_all(b",\"amplitudes\":[")
        };
        let mut written: std::io::Result<usize> = Ok(0);
        state
            .try_for_each_entry_f64(&mut |k, a| {
                if let Ok(count) = written {
                    let sep = if count == 0 {
                        head(&mut *w)
                    } else {
                        w.write_all(b",")
                    };
                    let entry = AmplitudeEntry::of(k, a, scale);
                    written = sep
                        .and_then(|()| Ok(serde_json::to_writer(&mut *w, &entry)?))
                        .map(|()| count + 1);
                }
            })
            .map_err(std::io::Error::other)?;
        if written? == 0 {
            // A state holds at least one entry; an empty list is still well-formed JSON.
            head(w)?;
        }
        w.write_all(b"],\"fifty_move_reference\":")?;
        serde_json::to_writer(&mut *w, &fifty_reference)?;
        extra(w)?;
        w.write_all(b"}")
    }

    /// JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a position always serialises")
    }

    /// Reads JSON text.
    pub fn from_json(text: &str) -> Result<Self, GameError> {
        serde_json::from_str(text).map_err(|e| GameError::Position(format!("invalid JSON: {e}")))
    }

    /// Checks the position and builds its state and classical layer. Rejects: a bad FEN, a
    /// bad square list or ancilla number, a repeated basis state, a norm other than 1, a
    /// basis state occupying a square without a letter (no double occupancy needs a letter
    /// per occupied square) and a letter on a square of probability 0.
    pub(crate) fn restore<S: QuantumState>(
        &self,
    ) -> Result<(S, ClassicalLayer, Option<f64>), GameError> {
        let layer = ClassicalLayer::from_fen(&self.fen)?;
        if self.amplitudes.is_empty() {
            return Err(GameError::Position("the amplitude list is empty".into()));
        }
        let lettered = layer.pieces.occupied_mask();
        let mut entries = Vec::with_capacity(self.amplitudes.len());
        let mut seen = std::collections::HashSet::with_capacity(self.amplitudes.len());
        for (i, e) in self.amplitudes.iter().enumerate() {
            let board = parse_board_squares(&e.board)
                .map_err(|r| GameError::Position(format!("amplitude {i}: {r}")))?;
            let ancillas =
                u128::from_str_radix(e.ancillas.trim_start_matches("0x"), 16).map_err(|_| {
                    GameError::Position(format!(
                        "amplitude {i}: ancillas {:?} is not a hexadecimal number",
                        e.ancillas
                    ))
                })?;
            if board & !lettered != 0 {
                return Err(GameError::Position(format!(
                    "amplitude {i}: squares {} are occupied but have no piece letter",
                    board_squares(board & !lettered)
                )));
            }
            if !e.re.is_finite() || !e.im.is_finite() {
                return Err(GameError::Position(format!("amplitude {i} is not finite")));
            }
            if !seen.insert((board, ancillas)) {
                return Err(GameError::Position(format!(
                    "amplitude {i}: basis state listed twice"
                )));
            }
            entries.push((Key { board, ancillas }, Complex::new(e.re, e.im)));
        }
        let state = S::from_entries(entries, Normalization::RequireUnit)
            .map_err(|e| GameError::Position(e.to_string()))?;
        check_letters(&state, &layer)?;
        Ok((state, layer, self.fifty_move_reference))
    }
}

/// Checks that letters and occupancy agree: every basis state occupies only squares with a
/// letter, and every letter stands on a square of positive probability. The boards are read
/// through [`QuantumState::try_for_each_board`] (a board of positive probability is one
/// that some basis state with a nonzero amplitude occupies), so nothing state-sized is built:
/// a sharded state streams its boards where they lie instead of gathering every entry. A
/// backend whose board pass would not fit its memory budget answers
/// [`GameError::StateTooLarge`].
pub fn check_letters<S: QuantumState>(state: &S, layer: &ClassicalLayer) -> Result<(), GameError> {
    let lettered = layer.pieces.occupied_mask();
    let mut unlettered = 0u64;
    state
        .try_for_each_board(&mut |board, p| {
            if p > 0.0 {
                unlettered |= board & !lettered;
            }
        })
        .map_err(crate::game::sim_error)?;
    if unlettered != 0 {
        return Err(GameError::Position(format!(
            "squares {} are occupied but have no piece letter",
            board_squares(unlettered)
        )));
    }
    let probs = state.qubit_probabilities();
    for sq in Square::ALL {
        if lettered & (1u64 << sq.index()) != 0 && probs[sq.index() as usize] <= OCCUPIED_EPS {
            return Err(GameError::Position(format!(
                "{sq} has a piece letter but probability 0: a letter needs a positive probability"
            )));
        }
    }
    Ok(())
}
