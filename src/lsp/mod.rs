//! `staticfx lsp`: the language server. Only this module knows protocol types; it adapts the
//! analysis API (byte spans, plain data) to LSP positions and messages.

pub mod catch_panics;
pub mod convert;
pub mod document;
pub mod framing;
mod server;
mod workers;

pub use server::{Server, FIX_ALL, RUN_GRAPH, SHOW_GRAPH};

use tower_lsp_server::{ClientSocket, LspService};

/// The analysis thread a document's analyses run on (for tests that need documents on both);
/// None for a string that is no URI.
pub fn analysis_thread_of(uri: &str) -> Option<usize> {
    let uri: tower_lsp_server::ls_types::Uri = uri.parse().ok()?;
    Some(workers::thread_of(&uri))
}

/// The service with its test-only requests `staticfx/documentText` and
/// `staticfx/keptAnalyses` (harmless in production: they echo the client's own buffer back,
/// and count the sessions and libraries the analysis threads keep).
pub fn service() -> (LspService<Server>, ClientSocket) {
    LspService::build(Server::new)
        .custom_method("staticfx/documentText", Server::document_text)
        .custom_method("staticfx/keptAnalyses", Server::kept_analyses)
        .finish()
}

/// Serves over stdin/stdout until the client exits. Logs go to stderr: stdout is the protocol.
pub fn run_stdio() -> std::process::ExitCode {
    crate::ide::return_freed_promptly();
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
    rt.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // The reader of stdin may still be blocked in a read (clients need not close stdin after
    // `exit`); dropping the runtime would wait for that read forever.
    rt.shutdown_background();
    std::process::ExitCode::SUCCESS
}

/// Serves one client on `input`/`output` (stdio, or a pipe in tests and fuzzing) until its
/// input ends. Malformed input is dropped before the transport, whose reader would stop at it,
/// and a panicking request handler answers with an internal error instead of ending the server.
pub async fn serve(
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin,
) {
    let (service, socket) = service();
    let (server_in, client_bytes) = tokio::io::duplex(1 << 20);
    let reader = tokio::spawn(framing::pump(input, client_bytes));
    tower_lsp_server::Server::new(server_in, output, socket)
        .serve(catch_panics::CatchPanics(service))
        .await;
    // After `exit` nothing more is read.
    reader.abort();
}
