//! agents-server (to be written).
fn main() {}
