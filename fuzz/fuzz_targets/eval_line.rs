//! One `qchess eval` line per variant, parsed and executed through the library entry point
//! with small limits (512-byte quotes are already bounded; at most 16 moves per request, so
//! a state stays small). The input is used as given and, when it is a JSON object, once
//! with each `"variant"`. Every answer is one JSON object with `"ok"`, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qchess_cli::error::QUOTE_LIMIT;
use qchess_cli::eval::{Limit, Limits, answer_line, limits::MESSAGE_LIMIT};
use serde_json::Value;

const LIMITS: Limits = Limits {
    distribution: Limit::At(16),
    max_line_bytes: 1 << 16,
    max_moves: 16,
};

fn check(line: &str) {
    let answer = answer_line(line, &LIMITS);
    assert!(answer["ok"].is_boolean(), "{answer}");
    if let Some(moves) = answer["moves"].as_array() {
        for m in moves {
            let echo = m["move"].as_str().expect("each move is echoed");
            assert!(echo.chars().count() <= QUOTE_LIMIT + 3, "{echo}");
        }
    }
    if answer["ok"] == false {
        let message = answer["error"]["message"].as_str().expect("a message");
        assert!(message.chars().count() <= MESSAGE_LIMIT + 3, "{message}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    check(text);
    if let Ok(Value::Object(mut request)) = serde_json::from_str::<Value>(text) {
        for variant in ["cantwell", "niels", "akl"] {
            request.insert("variant".into(), Value::String(variant.into()));
            check(&Value::Object(request.clone()).to_string());
        }
    }
});
