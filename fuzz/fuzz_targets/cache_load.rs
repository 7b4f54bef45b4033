#![no_main]
//! See `staticfx::fuzzing::cache_load` for the properties checked.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    staticfx::fuzzing::cache_load(data);
});
