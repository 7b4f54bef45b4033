#![no_main]
//! See `staticfx::fuzzing::lsp_dispatch` for the properties checked.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    staticfx::fuzzing::lsp_dispatch(data);
});
