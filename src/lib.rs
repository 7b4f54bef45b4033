
pub mod exec;
