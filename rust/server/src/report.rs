//! A command's report (`--report DIR` of `arena` and `eval`): `results.json` and `report.html`
//! written into the directory, and a line on standard error saying where.

use std::path::Path;

use agents_core::error_code::ErrorCode;

use crate::failure::Failure;

/// Writes the report into `dir` with `write` (the command's own page writer), then says
/// `<command>: wrote <dir>/results.json and <dir>/report.html` on standard error.
pub fn write(
    command: &str,
    dir: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), Failure> {
    write(dir).map_err(|e| {
        Failure::new(
            ErrorCode::InternalError,
            format!("cannot write the report into {}: {e}", dir.display()),
        )
    })?;
    eprintln!(
        "{command}: wrote {} and {}",
        dir.join("results.json").display(),
        dir.join("report.html").display()
    );
    Ok(())
}
