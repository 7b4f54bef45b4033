#![no_main]
//! See `staticfx::fuzzing::graph_breaks` for the properties checked.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    staticfx::fuzzing::graph_breaks(data);
});
