//! dice tools (to be written).

use crate::tools::ToolRegistry;

pub(super) fn register(_registry: &mut ToolRegistry) {}
