//! FX115 / GB0007: a call on traced data into a C extension module Dynamo skips (`zlib`,
//! `hashlib`, `struct`, ...). Dynamo cannot look inside compiled code. Also the Python functions
//! Dynamo keeps on its skip list and reports the same way: `copy.copy` of a list or a dict, and
//! on torch 2.8 of anything (2.15 breaks on a tensor's copy with its own id, and traces the
//! copy of an int, a tuple or a config object).

use super::version::Behaviour;
use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::{EventKind, COPY_OF_TENSOR, COPY_OF_VALUE};

/// The ids `cx.target` may pick here besides the literal one (see `version.rs`).
#[allow(dead_code)]
const VERSIONED_IDS: &[&str] = &["GB0208"];

/// Standard-library modules implemented in C that Dynamo marks as skipped.
pub const C_MODULES: &[&str] = &[
    "zlib", "hashlib", "binascii", "struct", "pickle", "marshal", "ctypes", "array", "_pickle",
    "_struct", "_hashlib", "mmap",
];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx
        .result
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ExternalCall | EventKind::SkippedCall))
    {
        let module = e.detail.split('.').next().unwrap_or("");
        if e.kind == EventKind::ExternalCall && !C_MODULES.contains(&module) {
            continue;
        }
        let copied = match e.detail.as_str() {
            COPY_OF_TENSOR => Some(Behaviour::CopyOfTensor),
            COPY_OF_VALUE => Some(Behaviour::CopyOfValue),
            _ => None,
        };
        let id = copied.map_or("GB0007", |b| cx.target.gb_id(b));
        if id.is_empty() {
            continue;
        }
        let path = if copied.is_some() {
            "copy.copy"
        } else {
            &e.detail
        };
        let mut f = cx.finding_at_event(Rule::CExtension, id, e);
        f.message = if id == "GB0208" {
            "`copy.copy` of a tensor: Dynamo follows it into `__reduce_ex__`, where a torch function returns something that is not a tensor".to_string()
        } else if e.kind == EventKind::SkippedCall {
            format!("`{path}` is a function Dynamo skips")
        } else {
            format!(
                "call into the C extension function `{}`, which Dynamo skips",
                e.detail
            )
        };
        f.hint = if e.detail == COPY_OF_TENSOR {
            "copy the tensor with `.clone()`".to_string()
        } else {
            format!("move the `{path}` call out of forward (e.g. compute it before calling the compiled module)")
        };
        out.push(f);
    }
}

#[cfg(test)]
mod tests {
    use crate::breaks::testing::codes;

    #[test]
    fn crc_of_tensor_bytes() {
        let src = "import zlib\nimport torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        k = zlib.crc32(x.numpy().tobytes())\n        return self.fc(x)\n";
        assert_eq!(codes(src), vec![(11, "GB0007"), (11, "GB0158")]);
    }
}
