//! FX115 / GB0007: a call on traced data into a C extension module Dynamo skips (`zlib`,
//! `hashlib`, `struct`, ...). Dynamo cannot look inside compiled code.

use super::{Ctx, Finding};
use crate::diagnostics::Rule;
use crate::traced::EventKind;

/// Standard-library modules implemented in C that Dynamo marks as skipped.
pub const C_MODULES: &[&str] = &[
    "zlib", "hashlib", "binascii", "struct", "pickle", "marshal", "ctypes", "array", "_pickle",
    "_struct", "_hashlib", "mmap",
];

pub fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    for e in cx.events(EventKind::ExternalCall) {
        let module = e.detail.split('.').next().unwrap_or("");
        if !C_MODULES.contains(&module) {
            continue;
        }
        let mut f = cx.finding_at_event(Rule::CExtension, "GB0007", e);
        f.message = format!(
            "call into the C extension function `{}`, which Dynamo skips",
            e.detail
        );
        f.hint = format!("move the `{}` call out of forward (e.g. compute it before calling the compiled module)", e.detail);
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
