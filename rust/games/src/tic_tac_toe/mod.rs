//! Tic-tac-toe.
