//! FX201: forward changes a value Dynamo guards on, so the next call recompiles.
//!
//! Dynamo turns the Python values a frame reads from outside itself into constants of the
//! graph and guards on them: an int, bool, str, tuple, list or dict attribute of the module
//! or of a submodule (`self.step == 0`, `self._modules['block'].step == 0`), or a global
//! (`G['SEEN'] == 0`). When forward changes such a value (`self.step += 1`), the next call
//! fails the guard and Dynamo compiles the frame again; a counter does so on every call until
//! `recompile_limit` (8) makes Dynamo give up and run the frame eagerly. A flag set once
//! (`self.warmed_up = True`) costs one recompile. Torch 2.15 traces floats read from a module
//! as symbolic values, so an accumulated float does not recompile.
//!
//! The tracer logs the first read of each such value in a call (`eval::trace::guards`); the
//! trace root compares them with the state forward leaves and traces a second call from that
//! state to tell a counter from a flag. Checked against 1,200 generated programs labelled by
//! torch.compile (`tests/recompiles_generated.rs`).

use super::{Ctx, Finding};
use crate::diagnostics::Rule;

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for c in &cx.result.guard_changes {
        let mut f = cx.finding(Rule::RecompileState, "", c.file, c.span, &c.call_chain);
        let how_often = match c.every_call {
            Some(true) => "every call recompiles",
            Some(false) => "the next call recompiles once",
            None => "the next call recompiles",
        };
        f.message = format!(
            "forward changes a value Dynamo guards on: `{}` (it becomes {}), so {how_often}",
            c.guard, c.after
        );
        f.hint = if c.guard.starts_with("G[") {
            "keep the count in a registered buffer updated in place (`self.calls += 1` on a \
             tensor), or outside the compiled forward"
                .into()
        } else {
            "keep the state in a registered buffer updated in place (`self.register_buffer(\
             \"step\", torch.zeros((), dtype=torch.long))` and `self.step += 1`), or set it \
             outside forward"
                .into()
        };
        // `fixes::counter_buffer` moves an int counter of a module to a buffer; it refuses
        // (saying why) where the count is also used as a Python number
        f.fix_available = c.guard.starts_with("self") && c.before.parse::<i64>().is_ok();
        out.push(f);
    }
}
