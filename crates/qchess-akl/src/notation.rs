//! The bra-ket notation of the rules text, printed and parsed.
//!
//! Grammar (ASCII form; spaces are free):
//!
//! ```text
//! entry := touch [ "->" dest ] [ "+" | "#" ]
//!        | SQUARE [ "-" ] SQUARE [ [ "=" ] T ] [ "+" | "#" ]
//!                                       the plain form: e2e4, e2-e4, e2 e4, e7e8q, e7e8=Q
//! touch := SQUARE                       classical piece (or a collapse left to be inferred)
//!        | "<" T "|" SQUARE ">"         the touched piece collapsed to T      (<Q|d8>)
//! dest  := [ "<" T "|" T ">" ] SQUARE [ "=" T ] [ "|psi>" | "|psi>_prom" ]
//!          capture <x|y>: x captures y, y being what the captured piece collapsed to
//! ```
//!
//! `T` is a piece letter (either case). The Unicode form writes `⟨ ⟩ → ψ`; the rules text's
//! LaTeX (`\langle Q|d8 \rangle \rightarrow`, `|\psi\rangle_{prom}`) is read too.

use crate::error::AklError;
use crate::record::{CaptureNote, Destination, TurnEntry};
use qchess_board::{PieceKind, Square};
use std::fmt;
use std::str::FromStr;

/// How to print the notation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Style {
    /// `<Q|d8> -> h4|psi>`: plain ASCII for terminals and files.
    #[default]
    Ascii,
    /// `⟨Q|d8⟩ → h4|ψ⟩`: the rules text's symbols.
    Unicode,
}

impl TurnEntry {
    /// The entry in `style`.
    ///
    /// ```
    /// use qchess_akl::{Style, TurnEntry};
    /// let e: TurnEntry = "<P|e7> -> <P|N>d6 |psi>".parse().unwrap();
    /// assert_eq!(e.format(Style::Ascii), "<P|e7> -> <P|N>d6|psi>");
    /// assert_eq!(e.format(Style::Unicode), "⟨P|e7⟩ → ⟨P|N⟩d6|ψ⟩");
    /// ```
    pub fn format(&self, style: Style) -> String {
        let (open, close, arrow, psi) = match style {
            Style::Ascii => ("<", ">", "->", "psi"),
            Style::Unicode => ("⟨", "⟩", "→", "ψ"),
        };
        let letter = |k: PieceKind| k.to_char().to_ascii_uppercase();
        let mut s = match self.collapse {
            Some(k) => format!("{open}{}|{}{close}", letter(k), self.from),
            None => self.from.to_string(),
        };
        if let Some(d) = self.dest {
            s.push_str(&format!(" {arrow} "));
            if let Some(c) = d.capture {
                s.push_str(&format!(
                    "{open}{}|{}{close}",
                    letter(c.by),
                    letter(c.captured)
                ));
            }
            s.push_str(&d.to.to_string());
            if let Some(p) = d.promotion {
                s.push_str(&format!("={}", letter(p)));
            }
            if d.superposed {
                s.push_str(&format!("|{psi}{close}"));
                if d.promotion.is_some() {
                    s.push_str("_prom");
                }
            }
        }
        if self.check {
            s.push('+');
        }
        s
    }
}

impl fmt::Display for TurnEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format(Style::Ascii))
    }
}

impl FromStr for TurnEntry {
    type Err = AklError;

    fn from_str(s: &str) -> Result<TurnEntry, AklError> {
        parse_entry(s)
    }
}

/// Spellings rewritten to the ASCII form: the rules text's LaTeX and the Unicode symbols.
const SPELLINGS: [(&str, &str); 13] = [
    ("\\(", ""),
    ("\\)", ""),
    ("\\langle", "<"),
    ("\\rangle", ">"),
    ("\\rightarrow", "->"),
    ("\\psi", "psi"),
    ("_{prom}", "_prom"),
    ("⟨", "<"),
    ("⟩", ">"),
    ("〈", "<"),
    ("〉", ">"),
    ("→", "->"),
    ("ψ", "psi"),
];

/// Rewrites Unicode and LaTeX into the ASCII form and drops blanks, keeping for each
/// character its offset (in characters) in the original text, so errors point there.
fn normalize(s: &str) -> Vec<(char, usize)> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < chars.len() {
        for (from, to) in SPELLINGS {
            let n = from.chars().count();
            if chars.len() >= i + n && chars[i..i + n].iter().copied().eq(from.chars()) {
                out.extend(to.chars().map(|c| (c, i)));
                i += n;
                continue 'outer;
            }
        }
        if !chars[i].is_whitespace() {
            out.push((chars[i], i));
        }
        i += 1;
    }
    out
}

/// A cursor over normalised entry text.
struct Cursor<'a> {
    input: &'a str,
    text: Vec<char>,
    origin: Vec<usize>,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(input: &'a str) -> Cursor<'a> {
        let (text, origin) = normalize(input).into_iter().unzip();
        Cursor {
            input,
            text,
            origin,
            pos: 0,
        }
    }
}

impl Cursor<'_> {
    fn err(&self, message: impl Into<String>) -> AklError {
        let end = self.input.chars().count();
        let at = self.origin.get(self.pos).copied().unwrap_or(end);
        AklError::Notation {
            input: self.input.to_string(),
            at,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, lit: &str) -> bool {
        let n = lit.chars().count();
        if self.text.len() >= self.pos + n
            && self.text[self.pos..self.pos + n]
                .iter()
                .copied()
                .eq(lit.chars())
        {
            self.pos += n;
            return true;
        }
        false
    }

    fn expect(&mut self, lit: &str) -> Result<(), AklError> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.err(format!("expected {lit:?}")))
        }
    }

    fn square(&mut self) -> Result<Square, AklError> {
        let s: String = self.text.iter().skip(self.pos).take(2).collect();
        let sq = s
            .parse()
            .map_err(|_| self.err("expected a square like e4"))?;
        self.pos += 2;
        Ok(sq)
    }

    /// Whether a square name such as `e4` starts here.
    fn at_square(&self) -> bool {
        matches!(
            (self.text.get(self.pos), self.text.get(self.pos + 1)),
            (Some('a'..='h'), Some('1'..='8'))
        )
    }

    fn kind(&mut self) -> Result<PieceKind, AklError> {
        let k = self
            .peek()
            .and_then(|c| PieceKind::from_char(c.to_ascii_lowercase()))
            .ok_or_else(|| self.err("expected a piece letter (P, N, B, R, Q, K)"))?;
        self.pos += 1;
        Ok(k)
    }
}

fn parse_entry(input: &str) -> Result<TurnEntry, AklError> {
    let mut c = Cursor::new(input);
    if c.text.is_empty() {
        return Err(c.err("empty entry"));
    }
    let (from, collapse) = if c.eat("<") {
        if c.peek().is_some_and(|ch| ch.eq_ignore_ascii_case(&'k')) {
            return Err(c.err("a king never collapses: write its square alone"));
        }
        let k = c.kind()?;
        c.expect("|")?;
        let sq = c.square()?;
        c.expect(">")?;
        (sq, Some(k))
    } else {
        (c.square()?, None)
    };
    let dest = if c.eat("->") {
        Some(parse_dest(&mut c)?)
    } else if c.eat("-") || c.at_square() {
        // The plain forms every variant's front end accepts: `e2e4`, `e2-e4`, `e2 e4` (blanks
        // are dropped), a promotion as `e7e8=Q` or `e7e8q`.
        let mut d = parse_dest(&mut c)?;
        if d.promotion.is_none()
            && !d.superposed
            && c.peek().is_some_and(|ch| ch != '+' && ch != '#')
        {
            let k = c.kind()?;
            if k == PieceKind::King {
                c.pos -= 1;
                return Err(c.err("a pawn promotes to any type but king: Q, R, B, N or P"));
            }
            d.promotion = Some(k);
        }
        Some(d)
    } else {
        None
    };
    let check = c.eat("+") || c.eat("#");
    if c.pos != c.text.len() {
        return Err(c.err("unexpected text after the entry"));
    }
    Ok(TurnEntry {
        from,
        collapse,
        dest,
        check,
    })
}

fn parse_dest(c: &mut Cursor<'_>) -> Result<Destination, AklError> {
    let capture = if c.eat("<") {
        let by = c.kind()?;
        c.expect("|")?;
        let captured = c.kind()?;
        c.expect(">")?;
        Some(CaptureNote { by, captured })
    } else {
        None
    };
    let to = c.square()?;
    let promotion = if c.eat("=") {
        let k = c.kind()?;
        if k == PieceKind::King {
            c.pos -= 1;
            return Err(c.err("a pawn promotes to any type but king: Q, R, B, N or P"));
        }
        Some(k)
    } else {
        None
    };
    let superposed = c.eat("|psi>");
    if superposed && promotion.is_none() && c.peek() == Some('_') {
        return Err(c.err("_prom marks a promotion: add =T after the square"));
    }
    if superposed && promotion.is_some() {
        c.eat("_prom");
    }
    Ok(Destination {
        to,
        capture,
        promotion,
        superposed,
    })
}

/// Parses the destination part alone (`f3`, `-> <P|N>d6`, `e8=Q`), for finishing a pending
/// touch. The rules text's source-less form `|psi> -> e5` ("a quantum piece moved to e5",
/// ending in superposition) is read as `-> e5|psi>`.
///
/// ```
/// use qchess_akl::parse_destination;
/// let d = parse_destination("|psi> -> e5").unwrap();
/// assert_eq!((d.to.to_string(), d.superposed), ("e5".to_string(), true));
/// assert_eq!(parse_destination("⟨P|Q⟩d8=R").unwrap().promotion, Some(qchess_board::PieceKind::Rook));
/// ```
pub fn parse_destination(input: &str) -> Result<Destination, AklError> {
    let mut c = Cursor::new(input);
    let leading_psi = c.eat("|psi>");
    if leading_psi {
        c.expect("->")?;
    } else {
        c.eat("->");
    }
    let mut d = parse_dest(&mut c)?;
    if leading_psi && d.superposed {
        return Err(c.err("|psi> is written once, before or after the square"));
    }
    d.superposed |= leading_psi;
    let _ = c.eat("+") || c.eat("#");
    if c.pos != c.text.len() {
        return Err(c.err("unexpected text after the destination"));
    }
    Ok(d)
}
