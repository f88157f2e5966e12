//! Building the GDExtension and putting it where `godot_agents.gdextension` looks for it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::process;
use crate::{Ctx, cargo};

/// The crate and library names of the extension.
pub const PACKAGE: &str = "godot-agents";
/// The library's base name (`[lib] name`).
pub const LIB_NAME: &str = "godot_agents";

/// Godot's name of an operating system (`linux`, `windows`, `macos`).
pub fn godot_os(os: &str) -> &str {
    match os {
        "macos" => "macos",
        "windows" => "windows",
        "linux" => "linux",
        other => other,
    }
}

/// Godot's name of a CPU architecture (`x86_64`, `arm64`, `x86_32`, `arm32`).
pub fn godot_arch(arch: &str) -> &str {
    match arch {
        "aarch64" => "arm64",
        "x86" => "x86_32",
        "arm" => "arm32",
        other => other,
    }
}

/// The library file cargo produces on `os` (`libgodot_agents.so`, `godot_agents.dll`, …).
pub fn cargo_file_name(os: &str) -> String {
    match os {
        "windows" => format!("{LIB_NAME}.dll"),
        "macos" => format!("lib{LIB_NAME}.dylib"),
        _ => format!("lib{LIB_NAME}.so"),
    }
}

/// The file name in `addons/godot_agents/bin/` for an OS, profile and architecture, as listed in
/// the `.gdextension` file: `libgodot_agents.linux.debug.x86_64.so`,
/// `godot_agents.windows.release.x86_64.dll`, `libgodot_agents.macos.debug.arm64.dylib`.
pub fn addon_file_name(os: &str, release: bool, arch: &str) -> String {
    let profile = if release { "release" } else { "debug" };
    let (prefix, ext) = match os {
        "windows" => ("", "dll"),
        "macos" => ("lib", "dylib"),
        _ => ("lib", "so"),
    };
    format!(
        "{prefix}{LIB_NAME}.{}.{profile}.{}.{ext}",
        godot_os(os),
        godot_arch(arch)
    )
}

/// The addon file name for this host.
pub fn host_addon_file_name(release: bool) -> String {
    addon_file_name(std::env::consts::OS, release, std::env::consts::ARCH)
}

/// `cargo build -p godot-agents [--release]`, then copies the library into the addon's `bin/`
/// (copy to a temporary name, then rename, so a running Godot never sees a half-written file).
/// Returns the installed path.
pub fn build_extension(ctx: &Ctx, release: bool) -> Result<PathBuf, String> {
    crate::packages::ensure_build_tools()?;
    let mut cmd = Command::new(cargo());
    cmd.args(["build", "-p", PACKAGE]).current_dir(&ctx.root);
    if release {
        cmd.arg("--release");
    }
    println!(
        "xtask: cargo build -p {PACKAGE}{}",
        if release { " --release" } else { "" }
    );
    process::run_checked(&mut cmd)?;
    let profile = if release { "release" } else { "debug" };
    let built = ctx
        .target_dir
        .join(profile)
        .join(cargo_file_name(std::env::consts::OS));
    let dest = ctx
        .addon_dir()
        .join("bin")
        .join(host_addon_file_name(release));
    install_file(&built, &dest)?;
    Ok(dest)
}

fn install_file(from: &Path, to: &Path) -> Result<(), String> {
    if !from.is_file() {
        return Err(format!("the build produced no {}", from.display()));
    }
    let dir = to.parent().ok_or("bad destination")?;
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tmp = to.with_extension("partial");
    fs::copy(from, &tmp)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), tmp.display()))?;
    fs::rename(&tmp, to)
        .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), to.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            addon_file_name("linux", false, "x86_64"),
            "libgodot_agents.linux.debug.x86_64.so"
        );
        assert_eq!(
            addon_file_name("linux", true, "aarch64"),
            "libgodot_agents.linux.release.arm64.so"
        );
        assert_eq!(
            addon_file_name("windows", false, "x86_64"),
            "godot_agents.windows.debug.x86_64.dll"
        );
        assert_eq!(
            addon_file_name("macos", true, "aarch64"),
            "libgodot_agents.macos.release.arm64.dylib"
        );
        assert_eq!(cargo_file_name("linux"), "libgodot_agents.so");
        assert_eq!(cargo_file_name("windows"), "godot_agents.dll");
        assert_eq!(cargo_file_name("macos"), "libgodot_agents.dylib");
    }

    /// Every library path the `.gdextension` file lists is the name `build` writes, and the
    /// platforms we promise are all there.
    #[test]
    fn gdextension_file_matches_build_names() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap();
        let text =
            fs::read_to_string(root.join("addons/godot_agents/godot_agents.gdextension")).unwrap();
        assert!(text.contains("entry_symbol = \"gdext_rust_init\""));
        assert!(text.contains("compatibility_minimum = \"4.5\""));
        assert!(text.contains("reloadable = true"));
        for (os, arch) in [
            ("linux", "x86_64"),
            ("linux", "aarch64"),
            ("windows", "x86_64"),
            ("macos", "x86_64"),
            ("macos", "aarch64"),
        ] {
            for release in [false, true] {
                let profile = if release { "release" } else { "debug" };
                let line = format!(
                    "{}.{profile}.{} = \"res://addons/godot_agents/bin/{}\"",
                    godot_os(os),
                    godot_arch(arch),
                    addon_file_name(os, release, arch)
                );
                assert!(text.contains(&line), "missing line: {line}");
            }
        }
    }
}
