//! xtask (to be written).
fn main() {}
