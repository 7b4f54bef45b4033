//! The evaluator recurses (deep models, deeply nested source): every analysis runs on a
//! thread with a large stack, made here.

/// The stack the CLI and the server give analysis.
pub const STACK_SIZE: usize = 256 << 20;

/// A thread builder with the analysis stack.
pub fn thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(STACK_SIZE)
}

/// Runs `f` on its own large-stack thread and waits for it. A panic in `f` (or a thread that
/// cannot start) comes back as Err with its message, so one bad input does not take the
/// whole run down.
pub fn on_large_stack<R: Send>(name: &str, f: impl FnOnce() -> R + Send) -> Result<R, String> {
    std::thread::scope(|s| match thread(name).spawn_scoped(s, f) {
        Ok(h) => h.join().map_err(|p| panic_message(p.as_ref())),
        Err(e) => Err(format!("cannot start the {name} thread: {e}")),
    })
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
