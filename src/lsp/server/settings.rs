//! Settings: the `ide::Settings` of the workspace (pyproject.toml, then
//! `initializationOptions`) and `workspace/configuration` on top, re-read when the client says
//! they changed.

use std::sync::atomic::Ordering;

use tower_lsp_server::ls_types::*;

use super::{analyze, publish, Server};

impl Server {
    pub(super) async fn on_did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let mut c = self.state.base_config.read().unwrap().clone();
        let folder = self.state.workspace.read().unwrap().first().cloned();
        let problems = c.merge(&params.settings, folder.as_deref());
        *self.state.config.write().unwrap() = c;
        self.state.config_gen.fetch_add(1, Ordering::SeqCst);
        for p in problems {
            self.client
                .log_message(MessageType::WARNING, format!("staticfx settings: {p}"))
                .await;
        }
        self.reload_config(true);
    }

    /// Discovers the first workspace folder's environment beside the message loop (it may
    /// start an interpreter) and says in the log what was found.
    pub(super) fn log_environment(&self) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            let Some(root) = state.workspace.read().unwrap().first().cloned() else {
                return;
            };
            let settings = state.config.read().unwrap().clone();
            let report = tokio::task::spawn_blocking(move || {
                let handle = settings.environment(&root);
                let target = settings.torch_target_for(&root);
                (super::commands::environment_report(&handle), target.note())
            })
            .await;
            if let Ok(((_, line, kind), torch)) = report {
                client.log_message(kind, line).await;
                // Which torch's Dynamo the findings describe, and where that came from.
                client
                    .log_message(MessageType::INFO, format!("staticfx: {torch}"))
                    .await;
            }
        });
    }

    /// Asks the client for `workspace/configuration`, merges it over the initial settings
    /// and, when that changes them, re-analyses the open documents under the new settings.
    /// `changed_already`: the settings changed before (`didChangeConfiguration`), so the hints
    /// and lenses shown are refreshed even when the answer changes nothing more.
    pub(super) fn reload_config(&self, changed_already: bool) {
        let state = self.state.clone();
        let client = self.client.clone();
        // Asking the client is a request of our own; awaiting it inside a handler could stall
        // the message loop, so it runs beside it.
        tokio::spawn(async move {
            let items = vec![ConfigurationItem {
                scope_uri: None,
                section: Some("staticfx".into()),
            }];
            // Clients without workspace/configuration keep the initialization settings.
            let values = client.configuration(items).await.unwrap_or_default();
            {
                let mut c = state.base_config.read().unwrap().clone();
                let folder = state.workspace.read().unwrap().first().cloned();
                for v in values.iter().filter(|v| !v.is_null()) {
                    for p in c.merge(v, folder.as_deref()) {
                        client
                            .log_message(MessageType::WARNING, format!("staticfx settings: {p}"))
                            .await;
                    }
                }
                // The answer usually repeats the settings the documents opened so far were
                // analysed under: those analyses stay current (a cold open is not analysed
                // twice), and the loop below finds them done.
                let changed = *state.config.read().unwrap() != c;
                if changed {
                    *state.config.write().unwrap() = c;
                    state.config_gen.fetch_add(1, Ordering::SeqCst);
                }
                let open: Vec<(Uri, i32)> = state
                    .docs
                    .iter()
                    .map(|d| (d.key().clone(), d.version))
                    .collect();
                for (uri, version) in open {
                    if let Ok(out) = analyze(&state, &client, &uri, version).await {
                        publish(&state, &client, &uri, &out).await;
                    }
                }
                // Hints and lenses shown were of the old settings (`inlayHints.shapes`, the
                // example inputs' shapes).
                if changed || changed_already {
                    if state.inlay_refresh.load(Ordering::SeqCst) {
                        let _ = client.inlay_hint_refresh().await;
                    }
                    if state.lens_refresh.load(Ordering::SeqCst) {
                        let _ = client.code_lens_refresh().await;
                    }
                }
            }
        });
    }
}
