//! `qchess-mpi`: the selftest and the benchmark of the sharded state, run under `mpirun`.
//! Built without the cargo feature `mpi` it only says so and exits with status 2.
#![forbid(unsafe_code)]

#[cfg(feature = "mpi")]
mod cli;

#[cfg(feature = "mpi")]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(not(feature = "mpi"))]
fn main() -> std::process::ExitCode {
    eprintln!(
        "qchess-mpi was built without MPI support (the cargo feature `mpi` is off).\n\
         Install OpenMPI and libclang (Debian: apt-get install openmpi-bin libopenmpi-dev libclang-dev),\n\
         then build with: cargo build --release -p qchess-mpi --features mpi\n\
         and run e.g.: mpirun -np 4 target/release/qchess-mpi selftest"
    );
    std::process::ExitCode::from(2)
}
