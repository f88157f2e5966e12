//! tic_tac_toe (to be written).
