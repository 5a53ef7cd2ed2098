//! Structured play: a script of legal moves (by index), arbitrary move texts, undo, redo and
//! save/load in one of the three variants, every invariant checked after every step (see
//! `tests/invariants/mod.rs`, shared with the soak test).
#![no_main]

#[path = "../../tests/invariants/mod.rs"]
mod invariants;

use arbitrary::{Arbitrary, Unstructured};
use invariants::{Op, Variant, play_script};
use libfuzzer_sys::fuzz_target;

fn op(u: &mut Unstructured<'_>) -> arbitrary::Result<Op> {
    Ok(match u.int_in_range(0..=9u8)? {
        0..=5 => Op::Legal(u.arbitrary()?),
        6 => {
            let s: &str = u.arbitrary()?;
            Op::Text(s.chars().take(40).collect())
        }
        7 => Op::Undo,
        8 => Op::Redo,
        _ => Op::SaveLoad,
    })
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(v) = u.int_in_range(0..=2u8) else {
        return;
    };
    let variant = [Variant::Cantwell, Variant::Niels, Variant::Akl][v as usize];
    let Ok(seed) = u64::arbitrary(&mut u) else {
        return;
    };
    let mut ops = Vec::new();
    while ops.len() < 48 {
        match op(&mut u) {
            Ok(o) => ops.push(o),
            Err(_) => break,
        }
    }
    play_script(variant, seed, &ops);
});
