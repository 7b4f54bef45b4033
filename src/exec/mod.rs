//! The bundled CPU executor.

pub mod kernels;
