//! chess (to be written).
