//! dice (to be written).
