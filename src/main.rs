#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use staticfx::cli::{Cli, Command};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        // The server runs its own runtime and gives analysis its own large-stack threads.
        Command::Lsp => staticfx::lsp::run_stdio(),
        _ => staticfx::cli::main(cli),
    }
}
