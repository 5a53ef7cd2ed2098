//! `qchess eval` with `"arithmetic"` (issue 14): the Cantwell game (and occupancy mode) on
//! `f64`, `f32` and exact amplitudes, and the exact twins `K_exact` of every probability
//! field. Expected values are computed by hand (the derivations are in the comments), in the
//! string form `x`, `y*sqrt2`, `x+y*sqrt2`, `x-y*sqrt2` that docs/exact.md describes.

use serde_json::{Value, json};

use crate::common;
use common::qchess_bytes;

/// Runs `qchess eval` on the given request lines; one answer each.
fn eval_lines(requests: &[Value]) -> Vec<Value> {
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let run = qchess_bytes(&["eval"], input.as_bytes());
    assert_eq!(run.code, Some(0), "qchess eval failed: {}", run.stderr);
    let answers: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON answer per line"))
        .collect();
    assert_eq!(answers.len(), requests.len(), "{}", run.stdout);
    answers
}

fn eval_one(request: Value) -> Value {
    let a = eval_lines(&[request]).remove(0);
    assert_eq!(a["ok"], true, "{a}");
    a
}

/// 1/sqrt2 in the string form (`QSqrt2`'s Display writes `y*sqrt2` with `y = 1/2`).
const H: &str = "1/2*sqrt2";

#[test]
fn knight_split_is_one_half_exactly_with_amplitudes_i_over_sqrt2() {
    let a = eval_one(
        json!({"variant": "cantwell", "position": "7k/8/8/8/8/8/8/1N5K w - - 0 1",
        "moves": ["b1^a3c3"], "arithmetic": "exact", "amplitudes": true}),
    );
    // eq. 7: i/sqrt2 on each target.
    assert_eq!(
        a["probabilities_exact"],
        json!({"a3": "1/2", "c3": "1/2", "h1": "1", "h8": "1"})
    );
    assert_eq!(
        a["distribution_exact"],
        json!({"h1 a3 h8": "1/2", "h1 c3 h8": "1/2"})
    );
    assert_eq!(a["norm_exact"], "1");
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "h1 a3 h8", "ancillas": "0", "re": "0", "im": H},
               {"board": "h1 c3 h8", "ancillas": "0", "re": "0", "im": H}])
    );
    assert_eq!(a["moves"][0]["probability_exact"], "1");
    assert_eq!(a["moves"][0]["probability"], 1.0);
    // The floats are still there, beside the exact values.
    assert_eq!(a["probabilities"]["a3"], 0.5);
    assert_eq!(a["distribution"]["h1 a3 h8"], 0.5);
    let im = a["amplitudes"][0]["im"].as_f64().unwrap();
    assert!((im - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15);
}

#[test]
fn section_11_2_interference_cancels_exactly() {
    // rules-notes E1: the king splits a1 -> a2/b1, a2 splits back onto a1/b2, then b1 splits
    // onto a1/b2. The a2 term cancels exactly: a2 has probability 0, so it is in no listing
    // (in exact arithmetic there is no floor: absent means exactly 0).
    let request = json!({"variant": "cantwell", "position": "7k/8/8/8/8/8/8/K7 w - - 0 1",
        "moves": ["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2"],
        "arithmetic": "exact", "amplitudes": true});
    let a = eval_one(request);
    assert_eq!(
        a["probabilities_exact"],
        json!({"a1": "3/8+1/4*sqrt2", "b1": "1/4", "b2": "3/8-1/4*sqrt2", "h8": "1"})
    );
    assert!(a["probabilities"].get("a2").is_none());
    assert_eq!(
        a["distribution_exact"],
        json!({"a1 h8": "3/8+1/4*sqrt2", "b1 h8": "1/4", "b2 h8": "3/8-1/4*sqrt2"})
    );
    // Amplitudes -(1/2 + 1/(2 sqrt2)) on a1, -i/2 on b1, -(1/2 - 1/(2 sqrt2)) on b2, times
    // the global phase i^2 of the black king's two jumps: (1/2+1/4*sqrt2, i/2, 1/2-1/4*sqrt2).
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "a1 h8", "ancillas": "0", "re": "1/2+1/4*sqrt2", "im": "0"},
               {"board": "b1 h8", "ancillas": "0", "re": "0", "im": "1/2"},
               {"board": "b2 h8", "ancillas": "0", "re": "1/2-1/4*sqrt2", "im": "0"}])
    );
    assert_eq!(a["norm_exact"], "1");
    let f = a["probabilities"]["a1"].as_f64().unwrap();
    assert!((f - (0.375 + 2f64.sqrt() / 4.0)).abs() < 1e-15);
}

#[test]
fn bell_state_with_capture_ancillas_has_exact_distribution_and_amplitudes() {
    // eq. 49a-50: the king splits b3 -> b2/a3, the bishop captures on a3 (certain by D4) and
    // the knight captures on a3 too: ancillas x1 x2 = 11 hold the king's branch. After b2b1
    // the state is (i|..b1 c1..> - i|a3 g8>_{11}) * i / sqrt2 (eq. 49d, one black pass).
    let a = eval_one(
        json!({"variant": "cantwell", "position": "7k/8/8/8/8/1K6/8/1Nb5 w - - 0 1",
        "moves": ["b3^b2a3", "c1a3", "b1a3", "h8g8", "b2b1"],
        "arithmetic": "exact", "amplitudes": true}),
    );
    assert_eq!(
        a["distribution_exact"],
        json!({"b1 c1 a3 g8": "1/2", "a3 g8": "1/2"})
    );
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "b1 c1 a3 g8", "ancillas": "0", "re": H, "im": "0"},
               {"board": "a3 g8", "ancillas": "3", "re": "-1/2*sqrt2", "im": "0"}])
    );
    // Both captures measured with certainty (D4).
    for i in [1, 2] {
        assert_eq!(a["moves"][i]["outcome"], 1);
        assert_eq!(a["moves"][i]["probability_exact"], "1");
    }
    // eq. 51: four more plies give the |11> branch a -1 (and two passes a global -1).
    let a = eval_one(
        json!({"variant": "cantwell", "position": "7k/8/8/8/8/1K6/8/1Nb5 w - - 0 1",
        "moves": ["b3^b2a3", "c1a3", "b1a3", "h8g8", "b2b1", "g8h8", "b1b2", "h8g8", "b2b1"],
        "arithmetic": "exact", "amplitudes": true}),
    );
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "b1 c1 a3 g8", "ancillas": "0", "re": H, "im": "0"},
               {"board": "a3 g8", "ancillas": "3", "re": H, "im": "0"}])
    );
}

#[test]
fn a_measured_capture_reports_its_exact_probability_and_an_unnormalisable_norm() {
    // The section 11.2 king, then b2 takes the knight on c3: the move measures whether the
    // king is on b2, probability 3/8-1/4*sqrt2.
    let moves = |last: &str| {
        json!([
            "a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2", "h8g8", last
        ])
    };
    let fen = "7k/8/8/8/8/2n5/8/K7 w - - 0 1";
    let a = eval_one(
        json!({"variant": "cantwell", "position": fen, "moves": moves("b2c3.m1"),
        "arithmetic": "exact", "amplitudes": true}),
    );
    assert_eq!(a["moves"][6]["outcome"], 1);
    assert_eq!(a["moves"][6]["probability_exact"], "3/8-1/4*sqrt2");
    assert!((a["moves"][6]["probability"].as_f64().unwrap() - 0.021446609406726238).abs() < 1e-15);
    assert_eq!(a["distribution_exact"], json!({"c3 g8": "1"}));
    // .m0 keeps the a1 and b1 branches: mass (3/8+1/4*sqrt2) + 1/4 = 5/8+1/4*sqrt2, rescaled
    // by 4 to N = 5/2+sqrt2, whose square root is not in Q(sqrt2): the amplitudes stay
    // unnormalised, i(1+1/2*sqrt2) and -1 (|.|^2 = 3/2+sqrt2 and 1, summing to N).
    let a = eval_one(
        json!({"variant": "cantwell", "position": fen, "moves": moves("b2c3.m0"),
        "arithmetic": "exact", "amplitudes": true}),
    );
    assert_eq!(a["moves"][6]["outcome"], 0);
    assert_eq!(a["moves"][6]["probability_exact"], "5/8+1/4*sqrt2");
    assert_eq!(a["norm_exact"], "5/2+1*sqrt2");
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "a1 c3 g8", "ancillas": "0", "re": "0", "im": "1+1/2*sqrt2"},
               {"board": "b1 c3 g8", "ancillas": "0", "re": "-1", "im": "0"}])
    );
    // (3/2+sqrt2) / (5/2+sqrt2) = 7/17+4/17*sqrt2.
    assert_eq!(
        a["distribution_exact"],
        json!({"a1 c3 g8": "7/17+4/17*sqrt2", "b1 c3 g8": "10/17-4/17*sqrt2"})
    );
    // The floats beside them are normalised.
    let amps = a["amplitudes"].as_array().unwrap();
    let norm: f64 = amps
        .iter()
        .map(|e| e["re"].as_f64().unwrap().powi(2) + e["im"].as_f64().unwrap().powi(2))
        .sum();
    assert!((norm - 1.0).abs() < 1e-12, "{a}");
}

#[test]
fn occupancy_mode_runs_exact_too() {
    let a = eval_one(
        json!({"variant": "cantwell", "mode": "occupancy", "arithmetic": "exact",
        "position": {"pieces": {"b1": "?", "a1": "?"}},
        "moves": ["b1^a3c3:SPLIT_JUMP:BASIC", "a1a4:SLIDE:BASIC"]}),
    );
    // The rook's path a2-a3 is half blocked by the knight: it slides in half the branches.
    assert_eq!(
        a["probabilities_exact"],
        json!({"a1": "1/2", "a3": "1/2", "a4": "1/2", "c3": "1/2"})
    );
    assert_eq!(a["moves"][1]["probability_exact"], "1");
}

#[test]
fn f32_runs_the_game_on_f32_and_floats_give_no_exact_twins() {
    let req = |arith: &str| {
        json!({"variant": "cantwell", "position": "7k/8/8/8/8/8/8/K7 w - - 0 1",
               "moves": ["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2"], "arithmetic": arith})
    };
    let answers = eval_lines(&[
        req("f32"),
        req("f64"),
        json!({"variant": "cantwell",
        "position": "7k/8/8/8/8/8/8/K7 w - - 0 1",
        "moves": ["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2"]}),
    ]);
    let (f32a, f64a, default) = (&answers[0], &answers[1], &answers[2]);
    let a1 = 0.375 + 2f64.sqrt() / 4.0;
    let p32 = f32a["probabilities"]["a1"].as_f64().unwrap();
    let p64 = f64a["probabilities"]["a1"].as_f64().unwrap();
    // f32 rounds at ~1e-7: close to the exact value, but not to the last f64 bit.
    assert!((p32 - a1).abs() < 1e-6 && (p32 - a1).abs() > 1e-12, "{p32}");
    assert!((p64 - a1).abs() < 1e-15);
    assert_eq!(f64a, default, "f64 is the default");
    for a in &answers {
        assert!(a.get("probabilities_exact").is_none());
        assert!(a.get("distribution_exact").is_none());
        assert!(a["moves"][0].get("probability_exact").is_none());
    }
}

#[test]
fn unknown_arithmetic_names_the_allowed_values() {
    let a = eval_lines(&[json!({"variant": "cantwell", "arithmetic": "f16"})]).remove(0);
    assert_eq!(a["ok"], false);
    assert_eq!(a["error"]["kind"], "request");
    assert_eq!(a["error"]["at"], "arithmetic");
    let msg = a["error"]["message"].as_str().unwrap();
    for v in ["\"f64\"", "\"f32\"", "\"exact\"", "f16"] {
        assert!(msg.contains(v), "{msg}");
    }
    let a = eval_lines(&[json!({"variant": "cantwell", "arithmetic": 64})]).remove(0);
    assert_eq!(a["error"]["at"], "arithmetic");
}

#[test]
fn exact_overflow_refuses_the_move_and_the_run_goes_on() {
    // A serialised position whose second amplitude is 2^-125: a gate that multiplies by
    // 1/sqrt2 on that sector could outgrow i128 (docs/exact.md's pre-check), so the split is
    // refused and changes nothing. (A jump only multiplies by i, which never grows a
    // coefficient: it is played, below.)
    let tiny = 2f64.powi(-125);
    let position = json!({"fen": "7k/8/8/8/8/8/8/KN6 w - - 0 1", "amplitudes": [
        {"board": "a1 b1 h8", "ancillas": "0", "re": 1.0, "im": 0.0},
        {"board": "a1 h8", "ancillas": "0", "re": tiny, "im": 0.0}]});
    let answers = eval_lines(&[
        json!({"variant": "cantwell", "arithmetic": "exact", "position": position,
               "moves": ["b1^a3c3"]}),
        json!({"variant": "cantwell", "arithmetic": "exact", "moves": ["b1^a3c3"]}),
        json!({"variant": "cantwell", "arithmetic": "exact", "position": position,
               "moves": ["b1c3"]}),
    ]);
    let a = &answers[0];
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["moves"][0]["applied"], false);
    assert_eq!(a["moves"][0]["error"]["reason_code"], "resource_limit");
    assert!(
        a["moves"][0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("overflow"),
        "{a}"
    );
    assert_eq!(a["pieces"]["b1"], "N");
    // 1 and 2^-125 exactly: the a1 h8 board has probability 2^-250 / (1 + 2^-250).
    assert_eq!(a["amplitudes_exact"], Value::Null);
    let two250 = num_pow2(250);
    assert_eq!(
        a["distribution_exact"]["a1 h8"],
        format!("1/{}", add_one(&two250))
    );
    // The next line is answered as usual.
    assert_eq!(answers[1]["ok"], true);
    assert_eq!(answers[1]["probabilities_exact"]["a3"], "1/2");
    // The jump on the same state: the exact probabilities are unchanged by it.
    let j = &answers[2];
    assert_eq!(j["moves"][0]["applied"], true, "{j}");
    assert_eq!(
        j["distribution_exact"]["a1 h8"],
        format!("1/{}", add_one(&two250))
    );
}

/// 2^n in decimal (no big-integer crate in the tests).
fn num_pow2(n: u32) -> String {
    let mut digits = vec![1u8]; // little-endian
    for _ in 0..n {
        let mut carry = 0;
        for d in &mut digits {
            let v = *d * 2 + carry;
            *d = v % 10;
            carry = v / 10;
        }
        if carry > 0 {
            digits.push(carry);
        }
    }
    digits.iter().rev().map(|d| char::from(b'0' + d)).collect()
}

/// A decimal string plus one (its last digit is not 9 for powers of two).
fn add_one(s: &str) -> String {
    let mut b = s.as_bytes().to_vec();
    let last = b.len() - 1;
    b[last] += 1;
    String::from_utf8(b).unwrap()
}

#[test]
fn bounded_like_the_distribution() {
    // Two splits: four boards, each 1/4; a limit of 2 shows two, in the float's order.
    let a = eval_one(
        json!({"variant": "cantwell", "arithmetic": "exact", "amplitudes": true,
        "moves": ["b1^a3c3", "b8^a6c6"], "distribution_limit": 2}),
    );
    assert_eq!(a["distribution_total"], 4);
    assert_eq!(a["distribution_truncated"], true);
    let exact = a["distribution_exact"].as_object().unwrap();
    let float = a["distribution"].as_object().unwrap();
    assert_eq!(exact.len(), 2);
    assert!(exact.keys().eq(float.keys()));
    assert!(exact.values().all(|v| v == "1/4"));
    // i/sqrt2 * i/sqrt2 = -1/2 on every basis state.
    let amps = a["amplitudes_exact"].as_array().unwrap();
    assert_eq!(amps.len(), 2);
    assert!(amps.iter().all(|e| e["re"] == "-1/2" && e["im"] == "0"));
    let all = eval_one(
        json!({"variant": "cantwell", "arithmetic": "exact", "amplitudes": true,
        "moves": ["b1^a3c3", "b8^a6c6"], "distribution_limit": "all"}),
    );
    assert_eq!(all["distribution_exact"].as_object().unwrap().len(), 4);
    assert_eq!(all["amplitudes_exact"].as_array().unwrap().len(), 4);
}

#[test]
fn an_exact_answers_position_reads_back_exactly() {
    // The unnormalisable state of the test above (N = 5/2+sqrt2): its answer's position,
    // sent back with one more move, gives the same exact answer as the whole line.
    let fen = "7k/8/8/8/8/2n5/8/K7 w - - 0 1";
    let line = [
        "a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2", "h8g8", "b2c3.m0",
    ];
    let a = eval_one(
        json!({"variant": "cantwell", "position": fen, "moves": line,
        "arithmetic": "exact"}),
    );
    let pos = &a["position"];
    assert_eq!(pos["norm_exact"], "5/2+1*sqrt2");
    assert_eq!(
        pos["amplitudes_exact"],
        json!([{"board": "a1 c3 g8", "ancillas": "0", "re": "0", "im": "1+1/2*sqrt2"},
               {"board": "b1 c3 g8", "ancillas": "0", "re": "-1", "im": "0"}])
    );
    let mut whole: Vec<&str> = line.to_vec();
    whole.push("g8h8");
    let back = eval_lines(&[
        json!({"variant": "cantwell", "position": pos, "moves": ["g8h8"],
            "arithmetic": "exact", "amplitudes": true}),
        json!({"variant": "cantwell", "position": fen, "moves": whole,
            "arithmetic": "exact", "amplitudes": true}),
    ]);
    assert_eq!(back[0]["ok"], true, "{}", back[0]);
    for field in [
        "probabilities_exact",
        "distribution_exact",
        "amplitudes_exact",
        "norm_exact",
    ] {
        assert_eq!(back[0][field], back[1][field], "{field}");
    }
    assert_eq!(back[0]["distribution_exact"]["a1 c3 h8"], "7/17+4/17*sqrt2");
    assert_eq!(
        back[0]["position"]["amplitudes_exact"],
        back[1]["position"]["amplitudes_exact"]
    );
    // The float modes read the float amplitudes beside them.
    let f = eval_one(json!({"variant": "cantwell", "position": pos, "moves": ["g8h8"]}));
    let p = f["distribution"]["a1 c3 h8"].as_f64().unwrap();
    assert!((p - (7.0 + 4.0 * 2f64.sqrt()) / 17.0).abs() < 1e-12, "{f}");
    assert!(f.get("position").unwrap().get("amplitudes_exact").is_none());
}

#[test]
fn exact_position_amplitudes_may_have_odd_denominators() {
    // 1/3 and i/3: N = 2/9, each board 1/2; the state is kept as 1 and i (times 3, N = 2).
    let pos = json!({"fen": "7k/8/8/8/8/8/8/N6K w - - 0 1",
        "amplitudes": [{"board": "a1 h1 h8", "ancillas": "0", "re": std::f64::consts::FRAC_1_SQRT_2, "im": 0.0},
                       {"board": "h1 h8", "ancillas": "0", "re": 0.0, "im": std::f64::consts::FRAC_1_SQRT_2}],
        "amplitudes_exact": [{"board": "a1 h1 h8", "ancillas": "0", "re": "1/3", "im": "0"},
                             {"board": "h1 h8", "ancillas": "0", "re": "0", "im": "1/3"}]});
    let a = eval_one(
        json!({"variant": "cantwell", "position": pos, "arithmetic": "exact",
        "amplitudes": true}),
    );
    assert_eq!(a["probabilities_exact"]["a1"], "1/2");
    // N = 2 has a root in Q(sqrt2): the amplitudes are shown normalised, 1/sqrt2 and i/sqrt2.
    assert_eq!(a["norm_exact"], "1");
    assert_eq!(
        a["amplitudes_exact"],
        json!([{"board": "h1 h8", "ancillas": "0", "re": "0", "im": H},
               {"board": "a1 h1 h8", "ancillas": "0", "re": H, "im": "0"}])
    );
    // A value that is not in the string form is refused and names the entry.
    let mut bad = pos.clone();
    bad["amplitudes_exact"][1]["im"] = json!("one third");
    let r = eval_lines(&[json!({"variant": "cantwell", "position": bad, "arithmetic": "exact"})]);
    assert_eq!(r[0]["ok"], false);
    assert_eq!(r[0]["error"]["kind"], "position");
    assert!(
        r[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("entry 1"),
        "{}",
        r[0]
    );
}
