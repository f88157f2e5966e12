//! Finding a Godot ≥ 4.5, or installing one.
//!
//! Order: `$GODOT4_BIN`, then `godot4` / `godot` on `PATH` (each checked with `--version`), then a
//! Debian sid root filesystem cached under `<target dir>/godot/sid` (Godot from Debian's package,
//! run through the root filesystem's own dynamic loader so it needs nothing from the host). When
//! none is found and the host is Debian-family Linux on x86_64 running as root, that root
//! filesystem is installed with `debootstrap`; it is built in `sid.partial` and renamed only when
//! complete, so an interrupted install is never mistaken for a good one. Anywhere else the error
//! explains how to point `GODOT4_BIN` at a Godot binary.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::Ctx;
use crate::process::{self, Echo};

/// Oldest supported Godot (the extension's `compatibility_minimum`).
pub const MIN_VERSION: (u32, u32) = (4, 5);

/// A runnable Godot.
#[derive(Debug, Clone)]
pub struct Godot {
    /// The program to execute (the Godot binary, or the root filesystem's loader).
    program: PathBuf,
    /// Arguments placed before the caller's (the loader's `--library-path … godot`).
    prefix: Vec<OsString>,
    /// `godot --version` output (`4.6.3.stable.…`).
    pub version: String,
    /// Where it was found (`GODOT4_BIN`, `PATH`, `cached Debian sid root filesystem`, …).
    pub origin: String,
}

impl Godot {
    /// A command running this Godot; add arguments as usual.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.prefix);
        cmd
    }

    /// A command running a copy of this Godot's program put in `dir`, as an exported game runs:
    /// Godot looks for an extension's library beside its executable when the pack holds none,
    /// and the executable of a Godot run through a root filesystem's loader is the loader.
    pub fn command_in(&self, dir: &Path) -> Result<Command, String> {
        let name = self
            .program
            .file_name()
            .ok_or("the Godot program has no file name")?;
        let copy = dir.join(name);
        fs::copy(&self.program, &copy).map_err(|e| {
            format!(
                "cannot copy {} to {}: {e}",
                self.program.display(),
                copy.display()
            )
        })?;
        let mut cmd = Command::new(copy);
        cmd.args(&self.prefix);
        Ok(cmd)
    }

    /// The full command line, shell-quoted where needed.
    pub fn command_line(&self) -> String {
        std::iter::once(self.program.as_os_str())
            .chain(self.prefix.iter().map(|a| a.as_os_str()))
            .map(|a| {
                let s = a.to_string_lossy();
                if s.contains(' ') {
                    format!("'{s}'")
                } else {
                    s.into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// One paragraph for the user: version, origin and command line.
    pub fn describe(&self) -> String {
        format!(
            "Godot {} ({})\n  command: {}",
            self.version,
            self.origin,
            self.command_line()
        )
    }
}

/// Parses `major.minor` from `godot --version` output (`4.6.3.stable.debian…`).
pub fn parse_version(text: &str) -> Option<(u32, u32)> {
    let line = text.lines().map(str::trim).rev().find(|l| {
        l.split('.')
            .next()
            .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    })?;
    let mut parts = line.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.trim().parse().ok()?;
    Some((major, minor))
}

/// Runs `--version` and accepts the result when it is ≥ [`MIN_VERSION`].
fn probe(program: PathBuf, prefix: Vec<OsString>, origin: &str) -> Result<Godot, String> {
    let candidate = Godot {
        program,
        prefix,
        version: String::new(),
        origin: origin.to_string(),
    };
    let mut cmd = candidate.command();
    cmd.arg("--version");
    let out = process::run(&mut cmd, Some(Duration::from_secs(60)), Echo::Quiet)
        .map_err(|e| format!("{origin}: {e}"))?;
    if !out.success() {
        return Err(format!(
            "{origin}: `{} --version` failed ({})",
            candidate.command_line(),
            out.ending()
        ));
    }
    let version_line = out
        .output
        .lines()
        .map(str::trim)
        .rev()
        .find(|l| parse_version(l).is_some())
        .unwrap_or("")
        .to_string();
    match parse_version(&version_line) {
        Some(v) if v >= MIN_VERSION => Ok(Godot {
            version: version_line,
            ..candidate
        }),
        Some((major, minor)) => Err(format!(
            "{origin}: Godot {major}.{minor} is too old (need {}.{} or newer)",
            MIN_VERSION.0, MIN_VERSION.1
        )),
        None => Err(format!("{origin}: no version in {:?}", out.output.trim())),
    }
}

/// The first `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Where the Debian sid root filesystem is cached.
pub fn cached_rootfs_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir.join("godot").join("sid")
}

/// The command for a Godot inside a root filesystem at `dir`, run through its own loader.
fn rootfs_command(dir: &Path) -> Option<(PathBuf, Vec<OsString>)> {
    let loader = dir.join("lib64/ld-linux-x86-64.so.2");
    let godot = dir.join("usr/bin/godot");
    if !loader.exists() || !godot.is_file() {
        return None;
    }
    let lib_path = [
        "usr/lib/x86_64-linux-gnu",
        "lib/x86_64-linux-gnu",
        "usr/lib/x86_64-linux-gnu/pulseaudio",
    ]
    .iter()
    .map(|p| dir.join(p).to_string_lossy().into_owned())
    .collect::<Vec<_>>()
    .join(":");
    Some((
        loader,
        vec![
            "--library-path".into(),
            lib_path.into(),
            godot.into_os_string(),
        ],
    ))
}

/// Finds a Godot ≥ 4.5 (see the module docs), installing one when possible.
pub fn find_or_install(ctx: &Ctx) -> Result<Godot, String> {
    let mut tried = Vec::new();
    if let Some(bin) = std::env::var_os("GODOT4_BIN").filter(|b| !b.is_empty()) {
        // An explicit choice is final: a broken GODOT4_BIN is an error, not a fallback.
        return probe(PathBuf::from(bin), Vec::new(), "GODOT4_BIN")
            .map_err(|e| format!("{e}\nFix GODOT4_BIN or unset it."));
    }
    for name in ["godot4", "godot"] {
        if let Some(path) = which(name) {
            match probe(path, Vec::new(), &format!("`{name}` on PATH")) {
                Ok(g) => return Ok(g),
                Err(e) => tried.push(e),
            }
        }
    }
    let dir = cached_rootfs_dir(ctx);
    if let Some((program, prefix)) = rootfs_command(&dir) {
        match probe(
            program,
            prefix,
            &format!("cached Debian sid root filesystem {}", dir.display()),
        ) {
            Ok(g) => return Ok(g),
            Err(e) => tried.push(e),
        }
    }
    match can_install() {
        Ok(()) => {
            eprintln!(
                "xtask: no Godot >= 4.5 found; installing Debian's godot into {}",
                dir.display()
            );
            install_rootfs(&dir)
        }
        Err(why) => {
            let mut msg = String::from("no Godot >= 4.5 found.\n");
            for t in &tried {
                msg.push_str(&format!("  tried {t}\n"));
            }
            msg.push_str(&format!(
                "  automatic install not possible here: {why}\n\
                 Install Godot 4.5 or newer (https://godotengine.org/download) and set\n\
                 GODOT4_BIN to the binary, e.g. `export GODOT4_BIN=/path/to/Godot_v4.5-stable_linux.x86_64`\n\
                 (on Windows: `set GODOT4_BIN=C:\\Godot\\Godot_v4.5-stable_win64_console.exe`)."
            ));
            Err(msg)
        }
    }
}

/// Why this host cannot install the root filesystem, if it cannot.
fn can_install() -> Result<(), String> {
    if !cfg!(target_os = "linux") || !cfg!(target_arch = "x86_64") {
        return Err("only Linux x86_64 hosts can install it automatically".into());
    }
    if !Path::new("/etc/debian_version").exists() {
        return Err("not a Debian-family system (/etc/debian_version missing)".into());
    }
    if !is_root() {
        return Err("installing needs root (debootstrap and chroot)".into());
    }
    Ok(())
}

/// True when running as root.
pub fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The Debian mirror of the host: the first non-security `URIs:` of
/// `/etc/apt/sources.list.d/debian.sources`, else the first `deb` line of `/etc/apt/sources.list`.
pub fn host_mirror() -> String {
    let deb822 = fs::read_to_string("/etc/apt/sources.list.d/debian.sources").unwrap_or_default();
    let legacy = fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
    mirror_from(&deb822, &legacy).unwrap_or_else(|| "http://deb.debian.org/debian".into())
}

/// [`host_mirror`] on given file contents.
pub fn mirror_from(deb822: &str, legacy: &str) -> Option<String> {
    let usable = |uri: &str| !uri.contains("security") && uri.starts_with("http");
    let from_deb822 = deb822.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("URIs:")?;
        rest.split_whitespace()
            .find(|u| usable(u))
            .map(str::to_owned)
    });
    from_deb822.or_else(|| {
        legacy.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            if words.next()? != "deb" {
                return None;
            }
            let mut word = words.next()?;
            if word.starts_with('[') {
                // Skip `[arch=amd64 signed-by=…]` options.
                while !word.ends_with(']') {
                    word = words.next()?;
                }
                word = words.next()?;
            }
            usable(word).then(|| word.to_string())
        })
    })
}

fn run_step(cmd: &mut Command, what: &str) -> Result<(), String> {
    eprintln!("xtask: {what}");
    process::run_checked(cmd).map_err(|e| format!("{what}: {e}"))
}

/// Installs Debian sid's `godot` package into a minimal root filesystem at `dir` (built in
/// `<dir>.partial`, renamed when complete) and returns it. Needs root on a Debian-family host.
pub fn install_rootfs(dir: &Path) -> Result<Godot, String> {
    can_install()?;
    let partial = dir.with_file_name(format!(
        "{}.partial",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sid".into())
    ));
    if partial.exists() {
        eprintln!(
            "xtask: removing an interrupted install at {}",
            partial.display()
        );
        fs::remove_dir_all(&partial)
            .map_err(|e| format!("cannot remove {}: {e}", partial.display()))?;
    }
    if let Some(parent) = partial.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    if which("debootstrap").is_none() && !Path::new("/usr/sbin/debootstrap").exists() {
        let install = || {
            process::run_checked(
                Command::new("apt-get")
                    .args(["install", "-y", "debootstrap"])
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )
        };
        eprintln!("xtask: installing debootstrap");
        if install().is_err() {
            run_step(Command::new("apt-get").arg("update"), "apt-get update")?;
            install().map_err(|e| format!("installing debootstrap: {e}"))?;
        }
    }
    let mirror = host_mirror();
    run_step(
        Command::new("debootstrap")
            .args(["--variant=minbase", "sid"])
            .arg(&partial)
            .arg(&mirror),
        &format!(
            "debootstrap --variant=minbase sid {} {mirror}",
            partial.display()
        ),
    )?;
    run_step(
        Command::new("chroot").arg(&partial).args([
            "apt-get",
            "-o",
            "Acquire::Check-Valid-Until=false",
            "update",
        ]),
        "apt-get update (in the root filesystem)",
    )?;
    run_step(
        Command::new("chroot")
            .arg(&partial)
            .args([
                "apt-get",
                "install",
                "-y",
                "--no-install-recommends",
                "godot",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install godot (in the root filesystem)",
    )?;
    // Downloaded .debs are not needed any more; failing to clean is harmless.
    let _ = process::run(
        Command::new("chroot")
            .arg(&partial)
            .args(["apt-get", "clean"]),
        Some(Duration::from_secs(120)),
        Echo::Quiet,
    );
    let (program, prefix) = rootfs_command(&partial)
        .ok_or_else(|| format!("the install at {} has no usr/bin/godot", partial.display()))?;
    probe(program, prefix, "freshly installed root filesystem")?;
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot replace {}: {e}", dir.display()))?;
    }
    fs::rename(&partial, dir).map_err(|e| {
        format!(
            "cannot rename {} to {}: {e}",
            partial.display(),
            dir.display()
        )
    })?;
    let (program, prefix) = rootfs_command(dir)
        .ok_or_else(|| format!("{} vanished after the install", dir.display()))?;
    probe(
        program,
        prefix,
        &format!("Debian sid root filesystem {}", dir.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("4.6.3.stable.debian4.6.3+ds-3"), Some((4, 6)));
        assert_eq!(parse_version("4.5.stable.official.876b29033"), Some((4, 5)));
        assert_eq!(
            parse_version("Godot Engine v4.5\n4.5.1.stable.official"),
            Some((4, 5))
        );
        assert_eq!(parse_version("3.5.2.stable.official"), Some((3, 5)));
        assert_eq!(parse_version("not a version"), None);
        assert!(parse_version("4.4.1.stable").unwrap() < MIN_VERSION);
        assert!(parse_version("4.10.0.stable").unwrap() >= MIN_VERSION);
    }

    #[test]
    fn mirrors() {
        let deb822 = "Types: deb\n# http://snapshot.debian.org/archive/debian/2025\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\n";
        assert_eq!(
            mirror_from(deb822, "").as_deref(),
            Some("http://deb.debian.org/debian")
        );
        let sec_first = "URIs: http://security.debian.org/debian-security\nURIs: http://ftp.de.debian.org/debian\n";
        assert_eq!(
            mirror_from(sec_first, "").as_deref(),
            Some("http://ftp.de.debian.org/debian")
        );
        let legacy = "# comment\ndeb-src http://x/debian sid main\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main\n";
        assert_eq!(
            mirror_from("", legacy).as_deref(),
            Some("http://mirror.example/debian")
        );
        assert_eq!(
            mirror_from("", "deb http://deb.debian.org/debian bookworm main").as_deref(),
            Some("http://deb.debian.org/debian")
        );
        assert_eq!(mirror_from("", ""), None);
    }

    #[test]
    fn rootfs_command_needs_loader_and_binary() {
        let tmp = std::env::temp_dir().join(format!("xtask-rootfs-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(tmp.join("usr/bin")).unwrap();
        assert!(rootfs_command(&tmp).is_none());
        fs::create_dir_all(tmp.join("lib64")).unwrap();
        fs::write(tmp.join("lib64/ld-linux-x86-64.so.2"), b"").unwrap();
        fs::write(tmp.join("usr/bin/godot"), b"").unwrap();
        let (program, prefix) = rootfs_command(&tmp).unwrap();
        assert!(program.ends_with("lib64/ld-linux-x86-64.so.2"));
        assert_eq!(prefix[0], "--library-path");
        assert!(
            prefix[1]
                .to_string_lossy()
                .contains("usr/lib/x86_64-linux-gnu/pulseaudio")
        );
        assert!(PathBuf::from(&prefix[2]).ends_with("usr/bin/godot"));
        fs::remove_dir_all(&tmp).unwrap();
    }
}
