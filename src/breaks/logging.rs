//! FX106 / GB0291 or GB4841: logging in forward. A method of a module logger
//! (`logger = logging.getLogger(__name__)`, then `logger.warning(...)`) is GB0291; the
//! root-logger functions (`logging.info(...)`) make Dynamo trace into `logging` itself, where it
//! fails on `Logger.handlers` (GB4841). transformers adds `warning_once` / `info_once` (an
//! `lru_cache`d function) and `warning_advice` to `logging.Logger`; Dynamo breaks on them as on
//! any logger method (GB0291 in transformers' own modeling files).

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

/// The ids `cx.target` may pick here besides the literal ones (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB4841", "GB0156"];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::Log) {
        let method = e.detail.rsplit('.').next().unwrap_or("");
        if !matches!(
            method,
            "debug"
                | "info"
                | "warning"
                | "warn"
                | "error"
                | "exception"
                | "critical"
                | "fatal"
                | "log"
                | "warning_once"
                | "info_once"
                | "warning_advice"
        ) {
            continue;
        }
        let root = !e.detail.starts_with("logging.Logger.");
        let id = if root {
            cx.target.gb_id(Behaviour::RootLogging)
        } else {
            "GB0291"
        };
        let mut f = cx.finding_at_event(Rule::Logging, id, e);
        let call = super::snippet(&cx.source(e.file, e.span));
        f.message = if root {
            format!("root-logger call `{call}`: Dynamo traces into logging and fails on Logger.handlers")
        } else {
            format!("logger call `{call}` in forward is not supported by Dynamo")
        };
        f.hint = "move the log call out of forward (e.g. into a forward hook), or guard it with `if not torch.compiler.is_compiling():`".into();
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    #[test]
    fn module_logger_and_root_logger() {
        let src = "import logging\nimport torch\nfrom torch import nn\nlogger = logging.getLogger(__name__)\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        logger.warning(\"x %s\", x.shape)\n        logging.info(\"y\")\n        return self.fc(x)\n";
        assert_eq!(codes(src), vec![(12, "GB0291"), (13, "GB4841")]);
    }

    #[test]
    fn transformers_once_methods() {
        let src = "import logging\nimport torch\nfrom torch import nn\nlogger = logging.getLogger(__name__)\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        logger.warning_once(\"x\")\n        logger.info_once(\"y\")\n        return self.fc(x)\n";
        assert_eq!(codes(src), vec![(12, "GB0291"), (13, "GB0291")]);
    }
}
