//! slot (to be written).
