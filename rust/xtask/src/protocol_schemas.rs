//! `cargo xtask protocol-schemas [--check]`: writes the protocol's JSON Schemas (generated from
//! the message types by `agents_core::protocol::schema`) to `docs/protocol/`, or with `--check`
//! fails when the committed files differ from what the code generates.

use agents_core::protocol::schema;

use crate::Ctx;

/// Writes the schemas, or (`check`) verifies that the committed ones are current.
pub fn run(ctx: &Ctx, check: bool) -> Result<(), String> {
    let dir = ctx.root.join(schema::SCHEMA_DIR);
    if check {
        let problems = schema::stale_files(&dir);
        if problems.is_empty() {
            println!(
                "xtask: {} protocol schemas in {} are up to date",
                schema::all().len(),
                dir.display()
            );
            return Ok(());
        }
        let mut message = format!(
            "the protocol schemas in {} are stale; run `{}` and commit the result:",
            dir.display(),
            schema::REGENERATE_COMMAND
        );
        for p in problems {
            message.push_str("\n  - ");
            message.push_str(&p);
        }
        return Err(message);
    }
    let written = schema::write_files(&dir).map_err(|e| {
        format!(
            "cannot write the protocol schemas to {}: {e}",
            dir.display()
        )
    })?;
    println!(
        "xtask: wrote {} protocol schemas to {}",
        written.len(),
        dir.display()
    );
    Ok(())
}
