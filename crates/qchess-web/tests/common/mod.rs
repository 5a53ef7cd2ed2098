//! A server on a real socket on 127.0.0.1 and a small HTTP client for the tests.
#![allow(dead_code)]

use serde_json::Value;
use std::net::SocketAddr;

/// Starts a server on an ephemeral port of 127.0.0.1 in its own runtime thread.
pub fn start(limits: qchess_web::Limits) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let config = qchess_web::Config {
                bind: "127.0.0.1:0".parse().unwrap(),
                limits,
                seed: Some(42),
            };
            let server = qchess_web::start(config).await.unwrap();
            tx.send(server.addr).unwrap();
            let _ = server.task.await;
        });
    });
    rx.recv().unwrap()
}

/// An answer: status and JSON body.
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub text: String,
}

fn answer(result: Result<ureq::Response, ureq::Error>) -> Answer {
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport error: {e}"),
    };
    let status = response.status();
    let text = response.into_string().unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer { status, body, text }
}

pub fn get(addr: SocketAddr, path: &str) -> Answer {
    answer(ureq::get(&format!("http://{addr}{path}")).call())
}

pub fn post(addr: SocketAddr, path: &str, body: &str) -> Answer {
    answer(
        ureq::post(&format!("http://{addr}{path}"))
            .set("Content-Type", "application/json")
            .send_string(body),
    )
}

/// Creates a game; returns (id, white token, black token, answer).
pub fn create(addr: SocketAddr, body: &str) -> (String, String, String, Answer) {
    let a = post(addr, "/api/games", body);
    assert_eq!(a.status, 201, "{}", a.text);
    let id = a.body["id"].as_str().unwrap().to_string();
    let w = a.body["tokens"]["white"].as_str().unwrap().to_string();
    let b = a.body["tokens"]["black"].as_str().unwrap().to_string();
    (id, w, b, a)
}

pub fn mv(addr: SocketAddr, id: &str, token: &str, m: &str) -> Answer {
    post(
        addr,
        &format!("/api/games/{id}/moves?token={token}"),
        &serde_json::json!({ "move": m }).to_string(),
    )
}
