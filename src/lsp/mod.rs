//! `staticfx lsp`: the language server. Only this module knows protocol types; it adapts the
//! analysis API (byte spans, plain data) to LSP positions and messages.
//!
//! The only module that knows LSP types. `server/mod.rs` holds the state and the document lifecycle
//! and applies edits to a ropey rope and the tree-sitter tree before any await; the other requests
//! have a file each in `server/` (`hover`, `code_action`, `commands`, `inlay` for inlay hints and
//! code lenses, `settings`); `workers.rs`
//! runs analyses on two long-lived large-stack threads, each with its `ide::AnalysisHost`, a
//! document always on the same one (the host keeps the document's incremental session);
//! `convert.rs` is the one place byte spans become ranges (and positions offsets) in the negotiated
//! encoding, and `ide::Diagnostic`s protocol diagnostics; Only the newest version's diagnostics are
//! published. A new session of a file with config-built classes is published in two stages
//! (`AnalysisHost::analyze_staged`): the default traces' findings, then, only if they add
//! something, the flagged retraces'; publications are ordered by (version, settings generation,
//! stage). A document is parsed when first edited or analysed (a queued analysis parses on its
//! thread and hands the tree to the document, so the next edit reparses incrementally), and
//! documents outside the last 4 analysed, or only opened and not the newest of those, drop their
//! tree, rope and kept result until their next edit or analysis (the text stays; a document opened
//! and never edited has no rope); `run_stdio` first tunes mimalloc to return freed pages at once
//! (`ide::return_freed_promptly`); a document's result for an older version is dropped before its
//! next analysis, so the session moves its graphs' spans in place instead of copying them.
//! `benches/lsp_memory.rs` measures the server with every transformers modeling file open.

pub mod catch_panics;
pub mod convert;
pub mod document;
pub mod framing;
mod server;
mod workers;

pub use server::{Server, FIX_ALL, REVEAL_LOCATION, RUN_GRAPH, SHOW_GRAPH};

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
