//! four_in_a_row (to be written).
