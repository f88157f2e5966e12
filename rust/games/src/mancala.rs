//! mancala (to be written).
