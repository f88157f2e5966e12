//! The `scripted` brain (SKELETON — the brain helper implements it).
