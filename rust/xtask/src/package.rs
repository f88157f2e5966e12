//! `cargo xtask package [--out DIR] [--libs DIR] [--smoke]`: the release zips, and their smoke
//! test (the suite `package` of `cargo xtask test`).
//!
//! Two zips land in `target/package/` (or `--out DIR`):
//!
//! - `godot-agents-<version>.zip`, the addon as the Godot Asset Library installs it: one root
//!   folder `godot-agents-<version>/` holding `addons/godot_agents/` — every `.gd`, `.tscn`,
//!   `.svg`, `.cfg`, `.md`, `.uid`, … file of the addon folder (found by walking it, so new
//!   files ship without a change here; see [`SHIPPED_EXTENSIONS`]), the `LICENSE`, the
//!   `.gdextension` file rewritten for the libraries the zip carries ([`packaged_gdextension`])
//!   and those libraries in `bin/`. The root folder is there because the editor's Asset Library
//!   installs a download with "Ignore asset root" ticked whenever every entry shares one top
//!   folder (`EditorAssetLibraryItemDownload::install` → `open_asset(file, true)`): without it,
//!   a zip holding only `addons/…` would be installed into `res://godot_agents/`.
//!   Godot's `.import` files are not shipped: the editor writes them on the first scan, and
//!   nothing in the addon refers to an imported file by uid.
//! - `godot-agents-demo-<version>.zip`: the demo project (`godot-project/` without `tests/`,
//!   `bench/`, `.godot/` and the `addons` symlink) with the addon of the first zip as a real
//!   folder, under one root folder, so the Project Manager opens it as a standalone project.
//!
//! **Libraries.** Without `--libs`, the release library is built for this machine
//! ([`build::build_extension`], release profile) and a stripped copy goes into the zips (the
//! release profile keeps line tables for the benchmarks' profiles: 157 MB unstripped, 21 MB
//! stripped on Linux x86_64). The test suite's `package` suite packs the debug library the
//! tests already built instead, under the release name ([`Options::tests_library`]), so a test
//! run does not compile the extension and llama.cpp a second time. `--libs DIR` takes prebuilt libraries instead (the release
//! workflow's artifacts): every file under `DIR` named like a library the `.gdextension` lists.
//!
//! **One release library per platform.** Godot picks the `[libraries]` entry whose tags all
//! match with the most tags, whether or not the file exists: the editor and debug exports
//! (features `debug`, `editor`) take `linux.debug.x86_64`, and with only the release file there
//! the extension fails to load ("GDExtension dynamic library not found" — tried with Godot
//! 4.6). The zip's `.gdextension` therefore points each debug entry whose library is not in
//! the zip at the release library of the same platform, and leaves out entries with no
//! library at all (Godot then says plainly that the platform has none) — see
//! [`packaged_entries`]. A debug library that is present keeps its own entry.
//!
//! **Deterministic.** Entries sorted by path, every timestamp 1980-01-01 00:00, permissions
//! 0644 (libraries and folders 0755), Unix attributes on every host: the same inputs give the
//! same bytes.
//!
//! **The smoke test** ([`smoke_test`]) needs nothing from the source tree: it unzips the addon
//! zip (dropping the root folder, as the Asset Library does) into a fresh project whose
//! `project.godot` it writes with the plugin enabled, imports it headless, and runs a script
//! that loads every script of the addon, calls game tools through `GameTools` and has an
//! `AgentRuntime` spawn an agent that answers a message; then it unzips the demo zip and runs
//! its main scene headless. Each run fails on any problem [`godot_tests::scan_output`] finds
//! (script errors, a library that does not load, leaks, …), on a bad exit and on a missing
//! success line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, System, ZipArchive, ZipWriter};

use crate::Ctx;
use crate::build;
use crate::godot::Godot;
use crate::godot_tests::{self, SuiteRun};
use crate::process::{self, Echo};

/// The suite name in `cargo xtask test --suite package`.
pub const SUITE: &str = "package";

/// The version in the zips' names (the workspace version).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the addon lives inside a project (and inside the zips' root folder).
const ADDON_PATH: &str = "addons/godot_agents";

/// The prefix of every library path in the `.gdextension` file.
const BIN_PREFIX: &str = "res://addons/godot_agents/bin/";

/// File extensions (lower case) shipped from the addon folder and the demo project. Anything
/// else found there is reported and left out (Godot's `.import` files silently: the editor
/// regenerates them).
pub const SHIPPED_EXTENSIONS: &[&str] = &[
    "gd",
    "tscn",
    "scn",
    "tres",
    "res",
    "svg",
    "png",
    "cfg",
    "gdextension",
    "godot",
    "gdshader",
    "gdshaderinc",
    "md",
    "txt",
    "json",
    "uid",
    "ttf",
    "otf",
    "wav",
    "ogg",
];

/// Top-level entries of `godot-project/` that the demo zip leaves out.
const DEMO_EXCLUDED: &[&str] = &[".godot", "tests", "bench", "addons"];

/// The line the smoke script prints when everything held.
const SMOKE_OK: &str = "PACKAGE_SMOKE_OK";

/// The line the demo's main scene prints when every game finished cleanly.
const DEMO_OK: &str = "DEMO OK";

/// The options of `cargo xtask package`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Where the zips go; `None`: `<target>/package`.
    pub out: Option<PathBuf>,
    /// Prebuilt libraries to ship instead of building this machine's release library.
    pub libs: Option<PathBuf>,
    /// Run the smoke test on the zips afterwards (needs Godot).
    pub smoke: bool,
    /// Ship this machine's library as the profile the tests built it (debug), under the
    /// release library's name, instead of building the release profile: what the test suite's
    /// smoke test packs, so a test run compiles the extension (and llama.cpp) once. The zips
    /// are otherwise the same; `cargo xtask package` always ships the release build.
    pub tests_library: bool,
}

/// Parses `package`'s options.
pub fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--out" => opts.out = Some(value("--out")?),
            "--libs" => opts.libs = Some(value("--libs")?),
            "--smoke" => opts.smoke = true,
            other => return Err(format!("unknown package option {other:?}")),
        }
    }
    Ok(opts)
}

/// What [`build`] wrote.
#[derive(Clone, Debug)]
pub struct Packages {
    /// `godot-agents-<version>.zip`.
    pub addon_zip: PathBuf,
    /// `godot-agents-demo-<version>.zip`.
    pub demo_zip: PathBuf,
    /// The platforms the zips carry a library for (`linux.x86_64`, `macos` for a universal one).
    pub platforms: Vec<String>,
}

/// `cargo xtask package`: writes the zips, prints their sizes, and with `--smoke` tests them.
pub fn run(ctx: &Ctx, opts: &Options) -> Result<(), String> {
    let packages = build(ctx, opts)?;
    if !opts.smoke {
        return Ok(());
    }
    let godot = crate::godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let run = smoke_test(ctx, &godot, &packages, Duration::from_secs(300));
    println!(
        "xtask: package smoke test: {} passed, {} failed",
        run.passed, run.failed
    );
    if run.failed == 0 && run.problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the smoke test failed:\n  {}",
            run.problems.join("\n  ")
        ))
    }
}

/// Builds (or takes) the libraries and writes both zips.
pub fn build(ctx: &Ctx, opts: &Options) -> Result<Packages, String> {
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| ctx.target_dir.join("package"));
    let addon_dir = ctx.addon_dir();
    let gdext_path = addon_dir.join("godot_agents.gdextension");
    let gdext_source = fs::read_to_string(&gdext_path)
        .map_err(|e| format!("cannot read {}: {e}", gdext_path.display()))?;
    let entries = library_entries(&gdext_source)?;
    check_plugin_version(&addon_dir)?;

    let libs = match &opts.libs {
        Some(dir) => prebuilt_libraries(dir, &entries)?,
        None => built_library(ctx, !opts.tests_library)?,
    };
    let present: BTreeSet<String> = libs.keys().cloned().collect();
    let packed = packaged_entries(&entries, &present);
    if packed.is_empty() {
        return Err(format!(
            "none of the libraries ({}) matches an entry of {}",
            present.iter().cloned().collect::<Vec<_>>().join(", "),
            gdext_path.display()
        ));
    }
    let platforms = platforms_of(packed.iter().map(|p| p.key.as_str()));
    let missing = uncovered_platforms(&entries, &packed);
    println!(
        "xtask: the addon carries libraries for {}",
        platforms.join(", ")
    );
    if !missing.is_empty() {
        println!(
            "xtask: note: no library for {} in this package (the release workflow, \
             .github/workflows/release.yml, builds them all and runs `cargo xtask package --libs DIR`)",
            missing.join(", ")
        );
    }
    let shipped: BTreeSet<&str> = packed.iter().map(|p| p.file.as_str()).collect();

    // The addon's files, as they sit under `addons/godot_agents/` in both zips.
    let mut addon: Vec<Item> = Vec::new();
    for (rel, path) in collect_files(&addon_dir, &["bin"], "addons/godot_agents")? {
        if rel == "godot_agents.gdextension" {
            continue;
        }
        addon.push(Item::file(rel, path));
    }
    addon.push(Item::bytes(
        "godot_agents.gdextension".into(),
        packaged_gdextension(&gdext_source, &packed).into_bytes(),
    ));
    let license = ctx.root.join("LICENSE");
    if !license.is_file() {
        return Err(format!("{} is missing", license.display()));
    }
    addon.push(Item::file("LICENSE".into(), license.clone()));
    for file in &shipped {
        let path = libs.get(*file).ok_or("a packaged library went missing")?;
        addon.push(Item::file(format!("bin/{file}"), path.clone()).executable());
    }

    fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    let addon_root = format!("godot-agents-{VERSION}");
    let addon_items: Vec<Item> = addon
        .iter()
        .map(|i| i.under(&format!("{addon_root}/{ADDON_PATH}")))
        .collect();
    let addon_zip = out.join(format!("{addon_root}.zip"));
    write_zip(&addon_zip, &addon_items)?;

    let demo_root = format!("godot-agents-demo-{VERSION}");
    let mut demo_items: Vec<Item> =
        collect_files(&ctx.project_dir(), DEMO_EXCLUDED, "godot-project")?
            .into_iter()
            .map(|(rel, path)| Item::file(format!("{demo_root}/{rel}"), path))
            .collect();
    if !demo_items
        .iter()
        .any(|i| i.name == format!("{demo_root}/project.godot"))
    {
        return Err("godot-project/project.godot is missing".into());
    }
    demo_items.push(Item::file(format!("{demo_root}/LICENSE"), license));
    demo_items.extend(
        addon
            .iter()
            .map(|i| i.under(&format!("{demo_root}/{ADDON_PATH}"))),
    );
    let demo_zip = out.join(format!("{demo_root}.zip"));
    write_zip(&demo_zip, &demo_items)?;

    for zip in [&addon_zip, &demo_zip] {
        let size = fs::metadata(zip).map(|m| m.len()).unwrap_or(0);
        println!(
            "xtask: wrote {} ({:.1} MB)",
            zip.display(),
            size as f64 / 1_000_000.0
        );
    }
    Ok(Packages {
        addon_zip,
        demo_zip,
        platforms,
    })
}

/// `plugin.cfg`'s version must be the workspace version the zips are named after.
fn check_plugin_version(addon_dir: &Path) -> Result<(), String> {
    let path = addon_dir.join("plugin.cfg");
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let version = text.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "version").then(|| value.trim().trim_matches('"').to_string())
    });
    match version {
        Some(v) if v == VERSION => Ok(()),
        other => Err(format!(
            "{} says version {:?}, the workspace (Cargo.toml) {VERSION:?}: make them agree",
            path.display(),
            other.unwrap_or_default()
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Libraries.

/// One `[libraries]` entry of the `.gdextension` file: `linux.debug.x86_64 = "res://…/bin/FILE"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibEntry {
    /// The feature tags, dot-separated (`linux.debug.x86_64`, `macos.release`).
    pub key: String,
    /// The library's file name in `bin/`.
    pub file: String,
}

/// The `[libraries]` entries of a `.gdextension` text, in order.
pub fn library_entries(text: &str) -> Result<Vec<LibEntry>, String> {
    let mut entries = Vec::new();
    let mut in_section = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line == "[libraries]";
            continue;
        }
        if !in_section || line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| format!("bad [libraries] line in the .gdextension file: {line:?}"))?;
        let value = value.trim().trim_matches('"');
        let file = value.strip_prefix(BIN_PREFIX).ok_or_else(|| {
            format!(
                "a [libraries] path outside {BIN_PREFIX}: {value:?} (the package only ships bin/)"
            )
        })?;
        entries.push(LibEntry {
            key: key.trim().to_string(),
            file: file.to_string(),
        });
    }
    if entries.is_empty() {
        return Err("the .gdextension file lists no [libraries]".into());
    }
    Ok(entries)
}

/// An entry of the packaged `.gdextension` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedEntry {
    /// The feature tags.
    pub key: String,
    /// The file in `bin/` it loads.
    pub file: String,
    /// True when this debug entry loads the release library (its own is not in the zip).
    pub uses_release: bool,
}

/// The packaged entries, given the library files the zip carries: an entry whose file is there
/// keeps it; a debug entry whose file is missing loads the release entry's file when that one
/// is there (Godot would otherwise pick the debug entry in the editor and fail); every other
/// entry is left out.
pub fn packaged_entries(entries: &[LibEntry], present: &BTreeSet<String>) -> Vec<PackedEntry> {
    let mut packed = Vec::new();
    for entry in entries {
        if present.contains(&entry.file) {
            packed.push(PackedEntry {
                key: entry.key.clone(),
                file: entry.file.clone(),
                uses_release: false,
            });
            continue;
        }
        let tags: Vec<&str> = entry.key.split('.').collect();
        if !tags.contains(&"debug") {
            continue;
        }
        let release_key: String = tags
            .iter()
            .map(|t| if *t == "debug" { "release" } else { t })
            .collect::<Vec<_>>()
            .join(".");
        if let Some(release) = entries
            .iter()
            .find(|e| e.key == release_key && present.contains(&e.file))
        {
            packed.push(PackedEntry {
                key: entry.key.clone(),
                file: release.file.clone(),
                uses_release: true,
            });
        }
    }
    packed
}

/// The `.gdextension` text with its `[libraries]` section replaced by `packed` (comments and
/// every other section kept).
pub fn packaged_gdextension(source: &str, packed: &[PackedEntry]) -> String {
    let mut out = String::new();
    let mut in_section = false;
    for line in source.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            if in_section {
                out.push('\n');
            }
            in_section = trimmed == "[libraries]";
            out.push_str(line);
            out.push('\n');
            if in_section {
                out.push_str(
                    "; Written by `cargo xtask package` for the libraries in this package.\n",
                );
                if packed.iter().any(|p| p.uses_release) {
                    out.push_str(
                        "; One optimised library per platform: the debug entries (the editor, debug exports)\n\
                         ; load the release library too.\n",
                    );
                }
                for p in packed {
                    out.push_str(&format!("{} = \"{BIN_PREFIX}{}\"\n", p.key, p.file));
                }
            }
            continue;
        }
        if !in_section {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The platforms of `keys`, without the profile tag, sorted and unique (`linux.x86_64`, and
/// `macos` for a universal entry).
fn platforms_of<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    let set: BTreeSet<String> = keys
        .map(|k| {
            k.split('.')
                .filter(|t| *t != "debug" && *t != "release")
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect();
    set.into_iter().collect()
}

/// The platforms the source file lists that no packaged entry serves. A universal entry
/// (`macos.release`) serves every architecture of its OS; the source's universal platform
/// (`macos`) counts as served when each architecture it lists is.
fn uncovered_platforms(entries: &[LibEntry], packed: &[PackedEntry]) -> Vec<String> {
    let have = platforms_of(packed.iter().map(|p| p.key.as_str()));
    let listed = platforms_of(entries.iter().map(|e| e.key.as_str()));
    let served = |platform: &str| match platform.split_once('.') {
        Some((os, _arch)) => have.iter().any(|h| h == platform || h == os),
        None => have.iter().any(|h| h == platform),
    };
    listed
        .iter()
        .filter(|p| {
            if served(p) {
                return false;
            }
            if p.contains('.') {
                return true;
            }
            let prefix = format!("{p}.");
            let archs: Vec<&String> = listed.iter().filter(|l| l.starts_with(&prefix)).collect();
            archs.is_empty() || !archs.iter().all(|a| served(a))
        })
        .cloned()
        .collect()
}

/// Builds this machine's library (the release profile, or with `release` false the debug one
/// the tests built) and strips a copy into `<target>/xtask-package/libs/`, named as the release
/// library.
fn built_library(ctx: &Ctx, release: bool) -> Result<BTreeMap<String, PathBuf>, String> {
    let built = build::build_extension(ctx, release)?;
    if !release {
        println!(
            "xtask: packing the debug-profile library the tests built, under the release \
             library's name (`cargo xtask package` ships the release build)"
        );
    }
    let name = build::host_addon_file_name(true);
    let dir = ctx.target_dir.join("xtask-package").join("libs");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dest = dir.join(&name);
    strip_copy(&built, &dest)?;
    Ok(BTreeMap::from([(name, dest)]))
}

/// Copies `from` to `to` without its symbols and debug info (`strip`, on Linux and macOS; a
/// Windows DLL keeps its debug info in the `.pdb` beside it). When `strip` is missing or fails
/// the library is copied as it is, with a note.
fn strip_copy(from: &Path, to: &Path) -> Result<(), String> {
    let _ = fs::remove_file(to);
    let args: &[&str] = match std::env::consts::OS {
        "linux" => &["--strip-unneeded"],
        "macos" => &["-x"],
        _ => &[],
    };
    if !args.is_empty() {
        let status = Command::new("strip")
            .args(args)
            .arg("-o")
            .arg(to)
            .arg(from)
            .status();
        match status {
            Ok(s) if s.success() && to.is_file() => return Ok(()),
            Ok(s) => println!("xtask: note: strip failed ({s}); shipping the library unstripped"),
            Err(e) => println!("xtask: note: no strip ({e}); shipping the library unstripped"),
        }
    }
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// The files under `dir` (searched recursively) named like a library `entries` lists.
fn prebuilt_libraries(
    dir: &Path,
    entries: &[LibEntry],
) -> Result<BTreeMap<String, PathBuf>, String> {
    let wanted: BTreeSet<&str> = entries.iter().map(|e| e.file.as_str()).collect();
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut ignored = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let list = fs::read_dir(&d).map_err(|e| format!("cannot list {}: {e}", d.display()))?;
        for entry in list.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if !wanted.contains(name.as_str()) {
                ignored.push(name);
                continue;
            }
            if let Some(other) = found.insert(name.clone(), path.clone()) {
                return Err(format!(
                    "{name} is in --libs twice: {} and {}",
                    other.display(),
                    path.display()
                ));
            }
        }
    }
    ignored.sort();
    if !ignored.is_empty() {
        println!(
            "xtask: --libs: ignoring files the .gdextension does not list: {}",
            ignored.join(", ")
        );
    }
    if found.is_empty() {
        return Err(format!(
            "no library in {} (expected names: {})",
            dir.display(),
            wanted.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    for (name, path) in &found {
        println!("xtask: --libs: {name} ← {}", path.display());
    }
    Ok(found)
}

// ---------------------------------------------------------------------------------------------
// Files and zips.

/// The shipped files under `dir`, recursively: (path relative to `dir` with `/`, full path),
/// sorted; top-level names in `exclude`, hidden names and extensions outside
/// [`SHIPPED_EXTENSIONS`] are left out (the last with a note naming `shown` + the path).
fn collect_files(
    dir: &Path,
    exclude: &[&str],
    shown: &str,
) -> Result<Vec<(String, PathBuf)>, String> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    walk(dir, "", exclude, &mut files, &mut skipped)?;
    files.sort();
    for s in &skipped {
        println!("xtask: note: not packaged (not a shipped file type): {shown}/{s}");
    }
    Ok(files)
}

fn walk(
    dir: &Path,
    rel: &str,
    exclude: &[&str],
    files: &mut Vec<(String, PathBuf)>,
    skipped: &mut Vec<String>,
) -> Result<(), String> {
    let list = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in list {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || (rel.is_empty() && exclude.contains(&name.as_str())) {
            continue;
        }
        let path = entry.path();
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let file_type = entry
            .file_type()
            .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
        if file_type.is_symlink() {
            skipped.push(format!("{child} (a symlink)"));
        } else if file_type.is_dir() {
            walk(&path, &child, exclude, files, skipped)?;
        } else {
            let ext = name
                .rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .unwrap_or_default();
            if SHIPPED_EXTENSIONS.contains(&ext.as_str()) {
                files.push((child, path));
            } else if ext != "import" {
                skipped.push(child);
            }
        }
    }
    Ok(())
}

/// What goes into a zip.
#[derive(Clone, Debug)]
enum Content {
    File(PathBuf),
    Bytes(Vec<u8>),
}

/// One file of a zip.
#[derive(Clone, Debug)]
struct Item {
    /// The path inside the zip (`/`-separated).
    name: String,
    content: Content,
    executable: bool,
}

impl Item {
    fn file(name: String, path: PathBuf) -> Item {
        Item {
            name,
            content: Content::File(path),
            executable: false,
        }
    }

    fn bytes(name: String, bytes: Vec<u8>) -> Item {
        Item {
            name,
            content: Content::Bytes(bytes),
            executable: false,
        }
    }

    fn executable(mut self) -> Item {
        self.executable = true;
        self
    }

    /// The same item below `prefix/`.
    fn under(&self, prefix: &str) -> Item {
        Item {
            name: format!("{prefix}/{}", self.name),
            ..self.clone()
        }
    }
}

/// Writes `items` (and an entry for every folder above them) into `path`, sorted by name, with
/// fixed timestamps and permissions; through a temporary file, so a failed run leaves no
/// half-written zip under the final name.
fn write_zip(path: &Path, items: &[Item]) -> Result<(), String> {
    let mut names: BTreeMap<String, Option<&Item>> = BTreeMap::new();
    for item in items {
        if names.insert(item.name.clone(), Some(item)).is_some() {
            return Err(format!(
                "{} would be in {} twice",
                item.name,
                path.display()
            ));
        }
        let mut dir = item.name.as_str();
        while let Some((parent, _)) = dir.rsplit_once('/') {
            names.insert(format!("{parent}/"), None);
            dir = parent;
        }
    }
    let tmp = path.with_extension("zip.partial");
    let file =
        fs::File::create(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let mut zip = ZipWriter::new(std::io::BufWriter::new(file));
    let base = SimpleFileOptions::default()
        .system(System::Unix)
        .last_modified_time(DateTime::default());
    let err = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", tmp.display());
    for (name, item) in &names {
        match item {
            None => zip
                .add_directory(name.as_str(), base.unix_permissions(0o755))
                .map_err(|e| err(&e))?,
            Some(item) => {
                let mode = if item.executable { 0o755 } else { 0o644 };
                let options = base
                    .compression_method(CompressionMethod::Deflated)
                    .unix_permissions(mode);
                zip.start_file(name.as_str(), options)
                    .map_err(|e| err(&e))?;
                match &item.content {
                    Content::Bytes(bytes) => zip.write_all(bytes).map_err(|e| err(&e))?,
                    Content::File(src) => {
                        let mut f = fs::File::open(src)
                            .map_err(|e| format!("cannot read {}: {e}", src.display()))?;
                        std::io::copy(&mut f, &mut zip)
                            .map_err(|e| format!("cannot pack {}: {e}", src.display()))?;
                    }
                }
            }
        }
    }
    let mut writer = zip.finish().map_err(|e| err(&e))?;
    writer.flush().map_err(|e| err(&e))?;
    drop(writer);
    fs::rename(&tmp, path)
        .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), path.display()))
}

/// Unzips `zip` into `dest` the way the Asset Library installs it: when every entry sits in one
/// top folder, that folder is dropped. Returns the files written (relative paths).
pub fn extract_zip(zip: &Path, dest: &Path) -> Result<Vec<String>, String> {
    let file = fs::File::open(zip).map_err(|e| format!("cannot open {}: {e}", zip.display()))?;
    let mut archive =
        ZipArchive::new(file).map_err(|e| format!("{} is not a zip: {e}", zip.display()))?;
    let mut names: Vec<(PathBuf, bool)> = Vec::new();
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|e| format!("cannot read {}: {e}", zip.display()))?;
        let name = entry
            .enclosed_name()
            .ok_or_else(|| format!("{} holds an unsafe path {:?}", zip.display(), entry.name()))?;
        names.push((name, entry.is_dir()));
    }
    // The top folder every entry shares, if any (a lone file at the top is no folder).
    let root: Option<PathBuf> = names
        .first()
        .and_then(|(n, _)| n.components().next())
        .map(|c| PathBuf::from(c.as_os_str()))
        .filter(|root| {
            names
                .iter()
                .all(|(n, is_dir)| n.starts_with(root) && (n.components().count() > 1 || *is_dir))
        });
    let mut written = Vec::new();
    for (i, (name, _)) in names.iter().enumerate() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| format!("cannot read {}: {e}", zip.display()))?;
        let name = name.clone();
        let rel = match &root {
            Some(root) => name.strip_prefix(root).unwrap_or(&name).to_path_buf(),
            None => name,
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let target = dest.join(&rel);
        if entry.is_dir() {
            fs::create_dir_all(&target)
                .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot unpack {}: {e}", rel.display()))?;
        fs::write(&target, bytes).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&target, fs::Permissions::from_mode(mode & 0o777));
        }
        written.push(rel.to_string_lossy().replace('\\', "/"));
    }
    Ok(written)
}

// ---------------------------------------------------------------------------------------------
// The smoke test.

/// Whether `name` selects the package smoke test in `cargo xtask test --suite`.
pub fn is_package_suite(name: &str) -> bool {
    name == SUITE
}

/// The suite `package` of `cargo xtask test`: builds the zips with the library the tests
/// built (the debug profile, [`Options::tests_library`]: the packing, the `.gdextension`
/// rewriting and the zips' contents are what is tested, not the compiler's optimisations) and
/// runs [`smoke_test`] on them.
pub fn run_suite(ctx: &Ctx, godot: &Godot, timeout: Duration) -> SuiteRun {
    let started = Instant::now();
    println!("xtask: suite {SUITE}: cargo xtask package (the tests' library), then its smoke test");
    let options = Options {
        tests_library: true,
        ..Options::default()
    };
    let run = match build(ctx, &options) {
        Ok(packages) => {
            let mut run = smoke_test(ctx, godot, &packages, timeout);
            run.passed += 1;
            run
        }
        Err(e) => SuiteRun {
            passed: 0,
            failed: 1,
            problems: vec![format!("[{SUITE}] cargo xtask package: {e}")],
        },
    };
    println!(
        "xtask: suite {SUITE}: {} passed, {} failed in {:.0} s",
        run.passed,
        run.failed,
        started.elapsed().as_secs_f64()
    );
    run
}

/// Unzips both packages into fresh projects under `<target>/xtask-package/smoke/` and runs them
/// headless: the addon in a new project with the smoke script ([`SMOKE_SCRIPT`]), the demo's
/// main scene. One pass per run that held, one failure (with its problems) per run that did not.
pub fn smoke_test(ctx: &Ctx, godot: &Godot, packages: &Packages, timeout: Duration) -> SuiteRun {
    let base = ctx.target_dir.join("xtask-package").join("smoke");
    let mut run = SuiteRun::default();
    let host = format!(
        "{}.{}",
        build::godot_os(std::env::consts::OS),
        build::godot_arch(std::env::consts::ARCH)
    );
    let os = host.split('.').next().unwrap_or_default();
    if !packages.platforms.iter().any(|p| *p == host || p == os) {
        run.failed += 1;
        run.problems.push(format!(
            "[{SUITE}] the zips carry no library for this machine ({host}; they have {})",
            packages.platforms.join(", ")
        ));
        return run;
    }
    let checks: [(&str, Result<(), String>); 2] = [
        (
            "addon",
            smoke_addon(
                godot,
                &packages.addon_zip,
                &base.join("addon_project"),
                timeout,
            ),
        ),
        (
            "demo",
            smoke_demo(
                godot,
                &packages.demo_zip,
                &base.join("demo_project"),
                timeout,
            ),
        ),
    ];
    for (name, result) in checks {
        match result {
            Ok(()) => {
                println!("xtask: package smoke test ({name}): ok");
                run.passed += 1;
            }
            Err(e) => {
                run.failed += 1;
                run.problems.push(format!("[{SUITE}] {name} zip: {e}"));
            }
        }
    }
    run
}

/// The `project.godot` of the fresh project the addon zip is unzipped into.
const SMOKE_PROJECT: &str = "config_version=5

[application]

config/name=\"Godot Agents package smoke test\"
config/features=PackedStringArray(\"4.5\")

[editor_plugins]

enabled=PackedStringArray(\"res://addons/godot_agents/plugin.cfg\")
";

/// The smoke script, run with `--script res://package_smoke.gd -- --db PATH`.
const SMOKE_SCRIPT: &str = r#"## The package smoke test (written by `cargo xtask package --smoke` and the `package` suite of
## `cargo xtask test`): the addon as unzipped from the release zip into a fresh project. Every
## script of the addon loads, GameTools plays a tic-tac-toe move, an AgentRuntime spawns an agent
## that answers a message. Prints PACKAGE_SMOKE_OK and exits 0 when all of it held.
extends SceneTree

const ADDON := "res://addons/godot_agents"
const TIMEOUT_SECONDS := 30.0

var _runtime: AgentRuntime
var _agent := ""
var _spawned := false
var _answer := ""
var _elapsed := 0.0
var _finished := false


func _initialize() -> void:
	var args := OS.get_cmdline_user_args()
	var db := "user://package_smoke.db"
	var at := args.find("--db")
	if at >= 0 and at + 1 < args.size():
		db = args[at + 1]

	var scripts := _scripts(ADDON)
	for path in scripts:
		if load(path) == null:
			_finish("cannot load %s" % path)
			return
	print("package smoke: %d scripts of the addon load: %s" % [scripts.size(), ", ".join(scripts)])

	var tools := GameTools.new()
	var names: PackedStringArray = tools.tool_names()
	if not names.has("new_tic_tac_toe_game"):
		_finish("GameTools has no new_tic_tac_toe_game: %s" % [names])
		return
	var game: Dictionary = tools.call_tool("new_tic_tac_toe_game", {})
	if game.has("error") or not game.has("state"):
		_finish("new_tic_tac_toe_game gave %s" % [game])
		return
	var moved: Dictionary = tools.call_tool("apply_tic_tac_toe_move", {"state": game["state"], "coord": "B2"})
	if moved.has("error") or not String(moved.get("state", "")).begins_with("G:.../.X./..."):
		_finish("apply_tic_tac_toe_move B2 gave %s" % [moved])
		return
	print("package smoke: %d game tools; tic-tac-toe after B2: %s" % [names.size(), moved["state"]])

	_runtime = AgentRuntime.new()
	_runtime.database_path = db
	_runtime.idle_think_seconds = 60.0
	_runtime.thinking_seconds = 0.05
	_runtime.speaking_seconds = 0.05
	_runtime.agent_spawned.connect(_on_spawned)
	_runtime.agent_spoke.connect(_on_spoke)
	_runtime.agent_error.connect(_on_error)
	_runtime.autostart = false
	root.add_child(_runtime)
	if not _runtime.start():
		_fail("start()")
		return
	_agent = _runtime.spawn_agent({"name": "Smoke", "role": "tester"})
	if _agent.is_empty():
		_fail("spawn_agent()")
		return
	if not _runtime.send_message(_agent, "Hello from the package smoke test"):
		_fail("send_message()")


func _on_spawned(id, _name, _role, _position) -> void:
	if id == _agent:
		_spawned = true


func _on_spoke(id, content, _recipients) -> void:
	if id == _agent and _answer.is_empty():
		_answer = content


func _on_error(id, code, message) -> void:
	if not _finished:
		_finish("agent_error %s %s: %s" % [id, code, message])


func _process(delta: float) -> bool:
	if _finished or _runtime == null:
		return false
	_elapsed += delta
	if _spawned and not _answer.is_empty():
		print("package smoke: %s (database %s) answered: %s" % [_agent, _runtime.database_path, _answer])
		_finish("")
	elif _elapsed > TIMEOUT_SECONDS:
		_finish("no agent_spawned and agent_spoke from %s within %d s (spawned: %s)" % [_agent, TIMEOUT_SECONDS, _spawned])
	return false


## Fails with the runtime's last error (unless an agent_error signal already did).
func _fail(call: String) -> void:
	if _runtime != null and not _finished:
		_finish("%s failed: %s" % [call, _runtime.get_last_error()])


func _finish(error: String) -> void:
	if _finished:
		return
	_finished = true
	if _runtime != null:
		_runtime.stop()
		_runtime.queue_free()
		_runtime = null
	if error.is_empty():
		print("PACKAGE_SMOKE_OK")
		quit(0)
	else:
		printerr("PACKAGE_SMOKE_FAILED: " + error)
		quit(1)


## Every .gd file under `dir`, recursively, sorted.
func _scripts(dir: String) -> PackedStringArray:
	var found := PackedStringArray()
	for file in DirAccess.get_files_at(dir):
		if file.get_extension() == "gd":
			found.append(dir.path_join(file))
	for sub in DirAccess.get_directories_at(dir):
		found.append_array(_scripts(dir.path_join(sub)))
	found.sort()
	return found
"#;

/// A fresh project with `project.godot` written first, then the addon zip unzipped into it.
fn smoke_addon(godot: &Godot, zip: &Path, dir: &Path, timeout: Duration) -> Result<(), String> {
    fresh_dir(dir)?;
    write_file(&dir.join("project.godot"), SMOKE_PROJECT)?;
    let files = extract_zip(zip, dir)?;
    println!(
        "xtask: unzipped {} ({} files) into {}",
        zip.display(),
        files.len(),
        dir.display()
    );
    for required in [
        "addons/godot_agents/plugin.cfg",
        "addons/godot_agents/godot_agents.gdextension",
        "addons/godot_agents/LICENSE",
    ] {
        if !files.iter().any(|f| f == required) {
            return Err(format!("the zip has no {required}"));
        }
    }
    if !files
        .iter()
        .any(|f| f.starts_with("addons/godot_agents/bin/"))
    {
        return Err("the zip has no library in addons/godot_agents/bin/".into());
    }
    write_file(&dir.join("package_smoke.gd"), SMOKE_SCRIPT)?;
    import(godot, dir, timeout)?;
    let db = dir.join("smoke.db");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(dir)
        .args(["--script", "res://package_smoke.gd", "--", "--db"])
        .arg(&db);
    println!("xtask: running the package smoke script headless");
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream)?;
    judge_run(&out, SMOKE_OK, "the smoke script")
}

/// The demo zip unzipped into a fresh folder, imported, its main scene run headless.
fn smoke_demo(godot: &Godot, zip: &Path, dir: &Path, timeout: Duration) -> Result<(), String> {
    fresh_dir(dir)?;
    let files = extract_zip(zip, dir)?;
    println!(
        "xtask: unzipped {} ({} files) into {}",
        zip.display(),
        files.len(),
        dir.display()
    );
    if !files.iter().any(|f| f == "project.godot") {
        return Err("the zip has no project.godot".into());
    }
    import(godot, dir, timeout)?;
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"]).arg(dir);
    println!("xtask: running the demo's main scene headless");
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream)?;
    judge_run(&out, DEMO_OK, "the demo's main scene")
}

/// `--import` after writing the extension list (see [`godot_tests::import_project`], which
/// only looks for load failures; here every problem counts, plugin scripts included).
fn import(godot: &Godot, dir: &Path, timeout: Duration) -> Result<(), String> {
    godot_tests::write_extension_list(dir)?;
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"]).arg(dir).arg("--import");
    println!("xtask: importing {} headless", dir.display());
    let out = process::run(&mut cmd, Some(timeout), Echo::Quiet)?;
    judge_run(&out, "", "the import")
        .map_err(|e| format!("{e}\n--- Godot output ---\n{}", out.output))
}

/// Fails on a bad exit, a timeout, any problem of the output, and no line starting with
/// `marker`.
fn judge_run(out: &process::RunOutput, marker: &str, what: &str) -> Result<(), String> {
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("{what} ended with {}", out.ending()));
    }
    if !marker.is_empty() && !out.output.lines().any(|l| l.trim().starts_with(marker)) {
        problems.push(format!("{what} printed no {marker:?} line"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{what} failed: {}", problems.join("; ")))
    }
}

fn fresh_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GDEXT: &str = "; comment\n[configuration]\nentry_symbol = \"gdext_rust_init\"\n\n\
        [libraries]\n\
        linux.debug.x86_64 = \"res://addons/godot_agents/bin/libgodot_agents.linux.debug.x86_64.so\"\n\
        linux.release.x86_64 = \"res://addons/godot_agents/bin/libgodot_agents.linux.release.x86_64.so\"\n\
        windows.debug.x86_64 = \"res://addons/godot_agents/bin/godot_agents.windows.debug.x86_64.dll\"\n\
        windows.release.x86_64 = \"res://addons/godot_agents/bin/godot_agents.windows.release.x86_64.dll\"\n\
        macos.debug.arm64 = \"res://addons/godot_agents/bin/libgodot_agents.macos.debug.arm64.dylib\"\n\
        macos.release.arm64 = \"res://addons/godot_agents/bin/libgodot_agents.macos.release.arm64.dylib\"\n\
        macos.debug = \"res://addons/godot_agents/bin/libgodot_agents.macos.debug.universal.dylib\"\n\
        macos.release = \"res://addons/godot_agents/bin/libgodot_agents.macos.release.universal.dylib\"\n\
        \n[icons]\nGameTools = \"res://addons/godot_agents/icons/game_tools.svg\"\n";

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn options_parse() {
        let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let o = parse_options(&s(&["--out", "d", "--libs", "l", "--smoke"])).unwrap();
        assert_eq!(o.out, Some(PathBuf::from("d")));
        assert_eq!(o.libs, Some(PathBuf::from("l")));
        assert!(o.smoke);
        assert_eq!(parse_options(&[]).unwrap(), Options::default());
        assert!(parse_options(&s(&["--out"])).is_err());
        assert!(parse_options(&s(&["--release"])).is_err());
    }

    #[test]
    fn entries_parse() {
        let entries = library_entries(GDEXT).unwrap();
        assert_eq!(entries.len(), 8);
        assert_eq!(entries[0].key, "linux.debug.x86_64");
        assert_eq!(entries[0].file, "libgodot_agents.linux.debug.x86_64.so");
        assert!(library_entries("[libraries]\nx = \"res://elsewhere/lib.so\"\n").is_err());
        assert!(library_entries("[configuration]\n").is_err());
    }

    /// The real file parses, and every library path it lists is in `bin/`.
    #[test]
    fn the_addon_gdextension_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap();
        let text =
            fs::read_to_string(root.join("addons/godot_agents/godot_agents.gdextension")).unwrap();
        let entries = library_entries(&text).unwrap();
        assert!(
            entries
                .iter()
                .any(|e| e.file == build::host_addon_file_name(true))
        );
    }

    #[test]
    fn release_only_serves_the_debug_entry_and_absent_platforms_are_left_out() {
        let entries = library_entries(GDEXT).unwrap();
        let packed = packaged_entries(&entries, &set(&["libgodot_agents.linux.release.x86_64.so"]));
        assert_eq!(
            packed,
            vec![
                PackedEntry {
                    key: "linux.debug.x86_64".into(),
                    file: "libgodot_agents.linux.release.x86_64.so".into(),
                    uses_release: true,
                },
                PackedEntry {
                    key: "linux.release.x86_64".into(),
                    file: "libgodot_agents.linux.release.x86_64.so".into(),
                    uses_release: false,
                },
            ]
        );
        assert_eq!(
            platforms_of(packed.iter().map(|p| p.key.as_str())),
            vec!["linux.x86_64"]
        );
        assert_eq!(
            uncovered_platforms(&entries, &packed),
            vec!["macos", "macos.arm64", "windows.x86_64"]
        );
        let text = packaged_gdextension(GDEXT, &packed);
        assert!(text.starts_with("; comment\n[configuration]\nentry_symbol"));
        assert!(text.contains(
            "linux.debug.x86_64 = \"res://addons/godot_agents/bin/libgodot_agents.linux.release.x86_64.so\"\n"
        ));
        assert!(!text.contains("windows"), "{text}");
        assert!(!text.contains("linux.debug.x86_64.so"), "{text}");
        assert!(text.contains("\n\n[icons]\nGameTools = "), "{text}");
        // What the packaged file says is what it parses to.
        let again = library_entries(&text).unwrap();
        assert_eq!(again.len(), 2);
    }

    #[test]
    fn a_debug_library_keeps_its_entry_and_universal_macos_covers_both_archs() {
        let entries = library_entries(GDEXT).unwrap();
        let packed = packaged_entries(
            &entries,
            &set(&[
                "libgodot_agents.linux.release.x86_64.so",
                "libgodot_agents.linux.debug.x86_64.so",
                "godot_agents.windows.release.x86_64.dll",
                "libgodot_agents.macos.release.universal.dylib",
            ]),
        );
        let pairs: Vec<(&str, &str, bool)> = packed
            .iter()
            .map(|p| (p.key.as_str(), p.file.as_str(), p.uses_release))
            .collect();
        assert_eq!(
            pairs,
            vec![
                (
                    "linux.debug.x86_64",
                    "libgodot_agents.linux.debug.x86_64.so",
                    false
                ),
                (
                    "linux.release.x86_64",
                    "libgodot_agents.linux.release.x86_64.so",
                    false
                ),
                (
                    "windows.debug.x86_64",
                    "godot_agents.windows.release.x86_64.dll",
                    true
                ),
                (
                    "windows.release.x86_64",
                    "godot_agents.windows.release.x86_64.dll",
                    false
                ),
                (
                    "macos.debug",
                    "libgodot_agents.macos.release.universal.dylib",
                    true
                ),
                (
                    "macos.release",
                    "libgodot_agents.macos.release.universal.dylib",
                    false
                ),
            ]
        );
        assert!(uncovered_platforms(&entries, &packed).is_empty());
        assert_eq!(
            platforms_of(packed.iter().map(|p| p.key.as_str())),
            vec!["linux.x86_64", "macos", "windows.x86_64"]
        );
    }

    #[test]
    fn zips_are_deterministic_and_unzip_without_their_root_folder() {
        let dir = std::env::temp_dir().join(format!("xtask-package-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("lib.so");
        fs::write(&lib, b"\x7fELF not really").unwrap();
        let items = vec![
            Item::bytes("root/addons/a/plugin.cfg".into(), b"[plugin]\n".to_vec()),
            Item::file("root/addons/a/bin/lib.so".into(), lib.clone()).executable(),
            Item::bytes("root/addons/a/icons/i.svg".into(), b"<svg/>".to_vec()),
        ];
        let first = dir.join("first.zip");
        let second = dir.join("second.zip");
        write_zip(&first, &items).unwrap();
        let mut reversed = items.clone();
        reversed.reverse();
        std::thread::sleep(Duration::from_millis(1100));
        write_zip(&second, &reversed).unwrap();
        assert_eq!(fs::read(&first).unwrap(), fs::read(&second).unwrap());
        assert!(!dir.join("first.zip.partial").exists());

        let mut archive = ZipArchive::new(fs::File::open(&first).unwrap()).unwrap();
        let names: Vec<String> = (0..archive.len())
            .map(|i| archive.by_index(i).unwrap().name().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            vec![
                "root/",
                "root/addons/",
                "root/addons/a/",
                "root/addons/a/bin/",
                "root/addons/a/bin/lib.so",
                "root/addons/a/icons/",
                "root/addons/a/icons/i.svg",
                "root/addons/a/plugin.cfg",
            ]
        );
        assert_eq!(
            archive
                .by_name("root/addons/a/bin/lib.so")
                .unwrap()
                .unix_mode(),
            Some(0o100755)
        );

        let out = dir.join("project");
        let files = extract_zip(&first, &out).unwrap();
        assert_eq!(
            files,
            vec![
                "addons/a/bin/lib.so",
                "addons/a/icons/i.svg",
                "addons/a/plugin.cfg"
            ]
        );
        assert_eq!(
            fs::read(out.join("addons/a/plugin.cfg")).unwrap(),
            b"[plugin]\n"
        );
        // Two top-level folders: nothing is dropped.
        let two = dir.join("two.zip");
        write_zip(
            &two,
            &[
                Item::bytes("a/x.txt".into(), b"x".to_vec()),
                Item::bytes("b/y.txt".into(), b"y".to_vec()),
            ],
        )
        .unwrap();
        let files = extract_zip(&two, &dir.join("two")).unwrap();
        assert_eq!(files, vec!["a/x.txt", "b/y.txt"]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_shipped_file_types_are_collected() {
        let dir = std::env::temp_dir().join(format!("xtask-package-walk-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for f in [
            "plugin.gd",
            "plugin.gd.uid",
            "icons/a.svg",
            "icons/a.svg.import",
            "debugger/panel.tscn",
            "bin/lib.so",
            ".hidden.gd",
            "notes.gd~",
        ] {
            let path = dir.join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "x").unwrap();
        }
        let files: Vec<String> = collect_files(&dir, &["bin"], "addon")
            .unwrap()
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        assert_eq!(
            files,
            vec![
                "debugger/panel.tscn",
                "icons/a.svg",
                "plugin.gd",
                "plugin.gd.uid"
            ]
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
