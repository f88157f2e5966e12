//! checkers (to be written).
