#![no_main]
//! See `staticfx::fuzzing::fixes` for the properties checked.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    staticfx::fuzzing::fixes(data);
});
