//! `staticfx lsp`: the language server. Only this module knows protocol types; it adapts the
//! analysis API (byte spans, plain data) to LSP positions and messages.

pub mod analysis_bridge;
mod code_actions;
pub mod config;
pub mod document;
pub mod framing;
mod hover;
mod server;

pub use server::{Server, FIX_ALL, RUN_GRAPH, SHOW_GRAPH};

use tower_lsp_server::{ClientSocket, LspService};

/// The service with its test-only request `staticfx/documentText` (harmless in production:
/// it only echoes the client's own buffer back).
pub fn service() -> (LspService<Server>, ClientSocket) {
    LspService::build(Server::new)
        .custom_method("staticfx/documentText", Server::document_text)
        .finish()
}

/// Serves over stdin/stdout until the client exits. Logs go to stderr: stdout is the protocol.
pub fn run_stdio() -> std::process::ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("staticfx lsp: cannot start the runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    rt.block_on(async {
        let (service, socket) = service();
        // Malformed input is dropped before the transport, whose reader would stop at it.
        let (server_in, client_bytes) = tokio::io::duplex(1 << 20);
        tokio::spawn(framing::pump(tokio::io::stdin(), client_bytes));
        tower_lsp_server::Server::new(server_in, tokio::io::stdout(), socket)
            .serve(service)
            .await;
    });
    std::process::ExitCode::SUCCESS
}
