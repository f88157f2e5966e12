//! The Godot Agents GDExtension (to be written).
