//! `importlib.util.find_spec` and `importlib.metadata.version`, answered from the project and
//! the user's environment as the import system would: libraries decide with them which code
//! paths exist (transformers 4.x compares `importlib.metadata.version("torch")` with "2.5"
//! to pick sdpa's grouped-query path).

use super::super::call::Kwargs;
use super::super::value::Value;
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// The torch release whose operators and Dynamo behaviour the evaluator models; the
/// breaks' default target version (`breaks::version::DEFAULT_VERSION`) is the same release.
pub const MODELLED_TORCH_VERSION: &str = "2.15.0";

/// What `find_spec` returns for a module that exists: a value that is not None. Nothing reads
/// a spec's fields in the code paths that matter, so its attributes stay unknown.
const MODULE_SPEC: &str = "importlib.machinery.ModuleSpec";

fn first_str<'a>(args: &'a [Value], kwargs: &'a Kwargs, name: &str) -> Option<&'a str> {
    let v = args
        .first()
        .or_else(|| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v))?;
    match v {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

impl Interp {
    /// `importlib.util.find_spec(name)`: a spec when the module can be imported here (the
    /// project, the environment, or a package the evaluator models, torch among them), None
    /// when it cannot, unknown when there is no environment to ask.
    pub(super) fn find_spec(&mut self, args: &[Value], kwargs: &Kwargs) -> Value {
        let Some(name) = first_str(args, kwargs, "name") else {
            return Value::unknown("`importlib.util.find_spec` of a name that is not a constant");
        };
        if name.starts_with('.') {
            return Value::unknown("relative `importlib.util.find_spec`");
        }
        if self.is_modelled_package(name) || self.project.module_exists(name) {
            return Value::External(std::rc::Rc::from(MODULE_SPEC));
        }
        if self.project.environment().is_none() {
            return Value::unknown(format!(
                "whether `{name}` can be imported (no Python environment was found)"
            ));
        }
        Value::None
    }

    /// `importlib.metadata.version(distribution)`: the version the environment's
    /// `*.dist-info` records. torch without one is the torch the evaluator models (the
    /// default target version): its operators and Dynamo's behaviour are that release's.
    pub(super) fn distribution_version(
        &mut self,
        frame: &Frame,
        args: &[Value],
        kwargs: &Kwargs,
        span: Span,
    ) -> EResult<Value> {
        let Some(dist) = first_str(args, kwargs, "distribution_name") else {
            return Ok(Value::unknown(
                "`importlib.metadata.version` of a name that is not a constant",
            ));
        };
        let env = self.project.environment().cloned();
        if let Some(v) = env.as_ref().and_then(|e| e.package_version(dist)) {
            return Ok(Value::str(&v));
        }
        if dist == "torch" {
            return Ok(Value::str(MODELLED_TORCH_VERSION));
        }
        if env.is_none() {
            return Ok(Value::unknown(format!(
                "the version of `{dist}` (no Python environment was found)"
            )));
        }
        Err(self.error(
            frame,
            span,
            codes::RAISED,
            format!("PackageNotFoundError: No package metadata was found for {dist}"),
        ))
    }
}
