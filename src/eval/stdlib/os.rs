//! `os.environ` and `os.getenv`. The analysis never reads the user's environment: it models
//! one where the variables a library consults are unset, which is what `environ.get(k,
//! default)` returning its default means. A read without a default is unknown.

use super::super::call::Kwargs;
use super::super::value::Value;
use super::super::Interp;

pub const ENVIRON: &str = "os.environ";

impl Interp {
    pub(in crate::eval) fn call_os(
        &mut self,
        path: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        let default = args.get(1).cloned().or_else(|| {
            kwargs
                .iter()
                .find(|(k, _)| k == "default")
                .map(|(_, v)| v.clone())
        });
        match path {
            "os.environ.get" | "os.getenv" => Some(default.unwrap_or_else(|| {
                Value::unknown(format!(
                    "environment variable {:?} (the analysis does not read the environment)",
                    args.first().unwrap_or(&Value::None)
                ))
            })),
            _ => None,
        }
    }
}

/// `name in os.environ`: never, in the environment the analysis models.
pub fn environ_contains(container: &Value) -> Option<bool> {
    matches!(container, Value::External(p) if &**p == ENVIRON).then_some(false)
}
