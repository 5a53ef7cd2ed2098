//! `qchess serve`: parses the flags and runs the qchess-web server.

use crate::error::CliError;
use clap::Args;
use std::net::SocketAddr;

/// Arguments of `qchess serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; the default serves this machine only.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Games held at once; more are refused until idle ones expire.
    #[arg(long, default_value_t = qchess_web::Limits::default().max_games)]
    pub max_games: usize,
    /// Memory budget of all games in bytes; each game's superposition may use its share.
    #[arg(long, default_value_t = qchess_web::Limits::default().memory)]
    pub memory: usize,
}

/// Runs the server until Ctrl-C.
pub fn run(args: &ServeArgs) -> Result<(), CliError> {
    if args.max_games == 0 {
        return Err(CliError::usage("--max-games must be at least 1"));
    }
    let config = qchess_web::Config {
        bind: args.bind,
        limits: qchess_web::Limits {
            max_games: args.max_games,
            memory: args.memory,
            ..qchess_web::Limits::default()
        },
        seed: None,
    };
    qchess_web::run(config).map_err(CliError::failure)
}
