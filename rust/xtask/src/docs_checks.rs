//! What the project's own text says, checked against the tree and the code (tests only).
//!
//! - The docs, the READMEs, the addon, the Rust and GDScript sources and the tests state their
//!   contracts in the product's own words: no "the spec", no requirement document, no Markdown
//!   file that does not exist ([`no_text_cites_a_spec_or_a_missing_document`]).
//! - The README's layout table has a row for every directory and crate and every guide
//!   ([`readme_layout_names_every_directory_crate_and_guide`]).
//! - Lists the docs keep by hand match their declarations: error codes, states, world tools,
//!   built-in brains, game apps, GM tools, character states, the `AgentConstants` groups, and
//!   every Godot signal with its arguments.
//!
//! The protocol's own lists (`docs/protocol.md`: messages, error codes, memory kinds) are checked
//! beside the protocol, in `agents-core`'s `protocol::tests`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// A file of the repository, by its path from the root.
fn read(path: &str) -> String {
    let full = root().join(path);
    fs::read_to_string(&full).unwrap_or_else(|e| panic!("cannot read {}: {e}", full.display()))
}

/// `found` and `declared` as sets: what the doc lacks and what it has that the code does not.
fn compare(what: &str, found: &[String], declared: &[&str]) -> Vec<String> {
    let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    let declared: BTreeSet<&str> = declared.iter().copied().collect();
    let mut problems = Vec::new();
    let missing: Vec<&str> = declared.difference(&found).copied().collect();
    if !missing.is_empty() {
        problems.push(format!("{what} lacks {missing:?}"));
    }
    let extra: Vec<&str> = found.difference(&declared).copied().collect();
    if !extra.is_empty() {
        problems.push(format!(
            "{what} names {extra:?}, which the code does not declare"
        ));
    }
    problems
}

fn assert_no_problems(problems: &[String]) {
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// text

/// Where text is read: the READMEs, the docs, the addon, every crate, the end-to-end tests, the
/// fuzz targets and the Godot project (with the files under them).
const TEXT_ROOTS: &[&str] = &[
    "README.md",
    "docs",
    "addons",
    "rust",
    "tests",
    "fuzz",
    "godot-project",
];

/// The kinds of file read as text.
const TEXT_EXTENSIONS: &[&str] = &["md", "rs", "gd", "json", "toml", "cfg", "tscn", "tres"];

/// Directories never read: build output, Godot's import cache, the built library.
const SKIPPED_DIRS: &[&str] = &["target", ".godot", "bin"];

/// This file: it holds the phrases it looks for.
const CHECKER: &str = "rust/xtask/src/docs_checks.rs";

/// Phrases that cite a specification users do not have, anywhere (lower case; a phrase matches
/// whole words only, so `BrainSpec` and `spec: &BrainSpec` do not).
const SPEC_PHRASES: &[&str] = &[
    "the spec",
    "the specs",
    "spec's",
    "specs'",
    "per spec",
    "spec says",
    "spec shape",
    "the specification",
    "specification's",
    "requirement document",
    "requirements document",
];

/// Words that cite a specification in prose (Markdown and the published schemas), where they
/// cannot be identifiers.
const PROSE_SPEC_WORDS: &[&str] = &["spec", "specs", "specification", "specifications"];

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `phrase` occurs in `line` as whole words.
fn has_phrase(line: &str, phrase: &str) -> bool {
    line.match_indices(phrase).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + phrase.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}

/// Why `line` (of a file with extension `ext`) cites a spec, if it does.
fn spec_citation(line: &str, ext: &str) -> Option<String> {
    let lower = line.to_lowercase();
    if let Some(p) = SPEC_PHRASES.iter().find(|p| has_phrase(&lower, p)) {
        return Some(format!("\"{p}\""));
    }
    if matches!(ext, "md" | "json")
        && let Some(w) = PROSE_SPEC_WORDS.iter().find(|w| has_phrase(&lower, w))
    {
        return Some(format!("the word \"{w}\""));
    }
    None
}

/// The Markdown file names `line` mentions (`apps.md`, `docs/apps.md` → `apps.md`), outside
/// URLs.
fn markdown_names(line: &str) -> Vec<&str> {
    if line.contains("://") {
        return Vec::new();
    }
    let mut names = Vec::new();
    for (at, _) in line.match_indices(".md") {
        if line[at + 3..].chars().next().is_some_and(is_word_char) {
            continue;
        }
        let start = line[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| !(is_word_char(*c) || *c == '-'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if start < at {
            names.push(&line[start..at + 3]);
        }
    }
    names
}

/// Every file under `dir` (a file or a directory, relative to the root) with one of `exts`,
/// as paths from the root with `/` separators.
fn files_under(dir: &str, exts: &[&str]) -> Vec<String> {
    fn walk(root: &Path, path: &Path, exts: &[&str], out: &mut Vec<String>) {
        let Ok(meta) = fs::metadata(path) else { return };
        if meta.is_dir() {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path != root && (SKIPPED_DIRS.contains(&name) || name.starts_with('.')) {
                return;
            }
            let mut entries: Vec<PathBuf> = fs::read_dir(path)
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()))
                .map(|e| e.expect("a directory entry").path())
                .collect();
            entries.sort();
            for entry in entries {
                walk(root, &entry, exts, out);
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            let relative = path.strip_prefix(root).expect("under the root");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    let root = root();
    let mut out = Vec::new();
    walk(&root, &root.join(dir), exts, &mut out);
    out
}

/// What the text of `files` cites that users do not have: a spec, or a Markdown file that is
/// nowhere in the repository.
fn citations(files: &[String], documents: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for path in files {
        let Ok(text) = fs::read_to_string(root().join(path)) else {
            continue; // not UTF-8: no prose to check
        };
        let ext = path.rsplit('.').next().unwrap_or("");
        for (n, line) in text.lines().enumerate() {
            if let Some(why) = spec_citation(line, ext) {
                problems.push(format!(
                    "{path}:{}: cites a spec ({why}): {}",
                    n + 1,
                    line.trim()
                ));
            }
            for name in markdown_names(line) {
                if !documents.contains(name) {
                    problems.push(format!(
                        "{path}:{}: names {name}, which is not in the repository: {}",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    problems
}

#[test]
fn spec_citations_are_phrases_not_identifiers() {
    for (line, ext) in [
        ("calls checked with the spec's texts", "rs"),
        ("/// The spec's name of `brain`.", "rs"),
        ("# Refusals with the specs' wording", "gd"),
        ("Decisions where the specification is silent", "rs"),
        ("as per spec", "gd"),
        ("the app-bridge requirements document", "md"),
        ("p99 < 1 ms (spec: < 100 ms)", "md"),
        ("\"description\": \"a spec name\"", "json"),
    ] {
        assert!(
            spec_citation(line, ext).is_some(),
            "{line:?} ({ext}) cites a spec"
        );
    }
    for (line, ext) in [
        ("fn read(spec: &BrainSpec) -> Result<Plan, String> {", "rs"),
        ("let spec = ToolSpec::new(name, description, schema);", "rs"),
        ("for spec in AiMatch.board_games():", "gd"),
        (
            "pub use spec::{BrainChoice, BrainProfiles, BrainSpec};",
            "rs",
        ),
        ("the inspector shows `BrainSpec` fields", "md"),
        ("a respectful specimen", "md"),
    ] {
        assert_eq!(spec_citation(line, ext), None, "{line:?} ({ext})");
    }
    assert_eq!(
        markdown_names("see docs/apps.md and `campaign.md`, or [x](../README.md)."),
        ["apps.md", "campaign.md", "README.md"]
    );
    assert!(
        markdown_names("<https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>").is_empty()
    );
    assert!(markdown_names("a file.mdx and a .md file").is_empty());
}

#[test]
fn no_text_cites_a_spec_or_a_missing_document() {
    let documents: BTreeSet<String> = files_under(".", &["md"])
        .iter()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_owned())
        .collect();
    let files: Vec<String> = TEXT_ROOTS
        .iter()
        .flat_map(|dir| files_under(dir, TEXT_EXTENSIONS))
        .filter(|f| f != CHECKER)
        .collect();
    assert!(
        files.iter().any(|f| f == "docs/protocol.md")
            && files.iter().any(|f| f == "rust/core/src/lib.rs")
            && files.iter().any(|f| f.starts_with("godot-project/tests/")),
        "the walk reads the docs, the crates and the Godot project"
    );
    assert_no_problems(&citations(&files, &documents));
}

// ---------------------------------------------------------------------------------------------
// the README's layout table

/// The paths of the README's layout table (its first column), in order.
fn layout_rows(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## Layout\n")
        .nth(1)
        .expect("README.md has a ## Layout section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .map(str::to_owned)
        .collect()
}

/// The directories under `dir` (relative to the root) that are not hidden and not ignored at the
/// top of `.gitignore` (`/target`).
fn subdirectories(dir: &str, ignored: &[String]) -> Vec<String> {
    let full = root().join(dir);
    let mut out: Vec<String> = fs::read_dir(&full)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", full.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .filter(|name| !name.starts_with('.'))
        .map(|name| {
            if dir == "." {
                name
            } else {
                format!("{dir}/{name}")
            }
        })
        .filter(|path| !ignored.contains(path))
        .collect();
    out.sort();
    out
}

#[test]
fn readme_layout_names_every_directory_crate_and_guide() {
    let rows = layout_rows(&read("README.md"));
    assert!(rows.len() > 10, "the layout table was read: {rows:?}");
    let ignored: Vec<String> = read(".gitignore")
        .lines()
        .filter_map(|l| l.strip_prefix('/'))
        .map(|l| l.trim_end_matches('/').to_owned())
        .collect();
    let mut problems = Vec::new();
    for row in &rows {
        if !root().join(row).exists() {
            problems.push(format!(
                "the layout table names `{row}`, which does not exist"
            ));
        }
    }
    // A top-level directory has its row, or each directory in it has one (`rust/…`).
    for dir in subdirectories(".", &ignored) {
        if rows.contains(&dir) {
            continue;
        }
        let inner = subdirectories(&dir, &ignored);
        if inner.is_empty() {
            problems.push(format!("the layout table has no row for `{dir}`"));
        }
        for path in inner {
            if !rows.contains(&path) {
                problems.push(format!(
                    "the layout table has no row for `{path}` (nor `{dir}`)"
                ));
            }
        }
    }
    // Every crate of the workspace, and every guide.
    let manifest = read("Cargo.toml");
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the workspace's members");
    for member in members.split(',').map(|m| m.trim().trim_matches('"')) {
        if !member.is_empty() && !rows.iter().any(|r| r == member) {
            problems.push(format!(
                "the layout table has no row for the crate `{member}`"
            ));
        }
    }
    for guide in files_under("docs", &["md"]) {
        if !rows.contains(&guide) {
            problems.push(format!("the layout table has no row for `{guide}`"));
        }
    }
    assert_no_problems(&problems);
}

// ---------------------------------------------------------------------------------------------
// lists kept by hand

/// The backquoted names of `text` between the first `from` and the next `to` after it.
fn listed(text: &str, from: &str, to: &str) -> Vec<String> {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} is not in the text"))
        + from.len();
    let len = text[start..]
        .find(to)
        .unwrap_or_else(|| panic!("{to:?} does not follow {from:?}"));
    text[start..start + len]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn runtime_md_lists_every_error_code_and_state() {
    use agents_core::agent_error::AgentErrorCode;
    use agents_core::agent_state::AgentState;
    use agents_core::runtime::RuntimeErrorCode;
    let text = read("docs/runtime.md");
    let mut problems = Vec::new();
    let runtime: Vec<&str> = RuntimeErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    problems.extend(compare(
        "docs/runtime.md's runtime error codes",
        &listed(&text, "(`RuntimeError::code`):", "Agent-side"),
        &runtime,
    ));
    let agent: Vec<&str> = AgentErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    problems.extend(compare(
        "docs/runtime.md's agent error codes",
        &listed(&text, "(`AgentErrorCode`)", "(the model brains'"),
        &agent,
    ));
    let states: Vec<&str> = AgentState::ALL.iter().map(|s| s.as_str()).collect();
    problems.extend(compare(
        "docs/runtime.md's state strings",
        &listed(&text, "State strings are exactly", "(`AgentState`"),
        &states,
    ));
    let world: Vec<&str> = agents_core::tools::world::world_tools()
        .tools()
        .map(|t| t.name())
        .collect();
    problems.extend(compare(
        "docs/runtime.md's world tools table",
        &table_column(&text, "| tool | args | effect |"),
        &world,
    ));
    assert_no_problems(&problems);
}

/// The backquoted names of the first column of the table whose header is `header`.
fn table_column(text: &str, header: &str) -> Vec<String> {
    let table = text
        .split(header)
        .nth(1)
        .unwrap_or_else(|| panic!("no table {header:?}"));
    table
        .lines()
        .skip(2) // the rest of the header line, and the |---| line
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn brains_md_lists_every_built_in_brain() {
    let registry = agents_core::brain::BrainRegistry::with_builtins();
    let names = registry.names();
    let text = read("docs/brains.md");
    let mut problems = compare(
        "docs/brains.md's registered brains",
        &listed(
            &text,
            "2. a registered brain (",
            "or one the game registered",
        ),
        &names,
    );
    problems.extend(compare(
        "docs/brains.md's `provider` row",
        &listed(&text, "| `provider` |", "(or a registered brain)"),
        &names,
    ));
    assert_no_problems(&problems);
}

#[test]
fn campaigns_md_lists_every_gm_tool_and_character_state() {
    use agents_core::campaign::{CHARACTER_STATES, GmTool};
    let text = read("docs/campaigns.md");
    let tools: Vec<&str> = GmTool::ALL.iter().map(|t| t.as_str()).collect();
    let mut problems = compare(
        "docs/campaigns.md's GM tools",
        &listed(&text, "## The GM tools\n", ", run in a batch"),
        &tools,
    );
    problems.extend(compare(
        "docs/campaigns.md's character states",
        &listed(&text, "`character_state` is not one of", "|"),
        &CHARACTER_STATES,
    ));
    assert_no_problems(&problems);
}

#[test]
fn apps_md_lists_every_game_app() {
    let names: Vec<&str> = agents_core::apps::games::GAMES
        .iter()
        .map(|g| g.name)
        .collect();
    let problems = compare(
        "docs/apps.md's `game` names",
        &listed(&read("docs/apps.md"), "| `name` |", "\n"),
        &names,
    );
    assert_no_problems(&problems);
}

/// The groups of the generated `AgentConstants` script: each array (`STATES`) and the names of
/// the constants it holds (`STATE_IDLE`, …).
fn constant_groups(script: &str) -> Vec<(String, Vec<String>)> {
    script
        .lines()
        .filter_map(|l| l.strip_prefix("const "))
        .filter_map(|l| l.split_once(": Array[String] = ["))
        .map(|(group, members)| {
            let members = members.trim_end_matches(']');
            let members = members.split(',').map(|m| m.trim().to_owned()).collect();
            (group.trim().to_owned(), members)
        })
        .collect()
}

#[test]
fn nodes_md_names_every_group_of_agent_constants() {
    let groups = constant_groups(&read("addons/godot_agents/agent_constants.gd"));
    assert!(groups.len() >= 8, "the groups were read: {groups:?}");
    let text = read("docs/nodes.md");
    let table = text
        .split("| Group | Constants | Where they appear |")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("docs/nodes.md has the AgentConstants table");
    // Each row: the constants it names, and whether it names them all (no `…`).
    let rows: Vec<(Vec<String>, bool)> = table
        .lines()
        .filter_map(|l| l.split('|').nth(2))
        .map(|cell| {
            let names = cell
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
            (names, !cell.contains('…'))
        })
        .collect();
    let mut problems = Vec::new();
    for (group, members) in &groups {
        let Some((names, complete)) = rows
            .iter()
            .find(|(names, _)| names.contains(group) || names.iter().any(|n| members.contains(n)))
        else {
            problems.push(format!(
                "docs/nodes.md's AgentConstants table has no row for {group}"
            ));
            continue;
        };
        let named: Vec<String> = names.iter().filter(|n| *n != group).cloned().collect();
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        if *complete {
            problems.extend(compare(
                &format!("docs/nodes.md's row for {group}"),
                &named,
                &members,
            ));
        } else if let Some(n) = named.iter().find(|n| !members.contains(&n.as_str())) {
            problems.push(format!(
                "docs/nodes.md's row for {group} names {n}, not one of them"
            ));
        }
    }
    assert_no_problems(&problems);
}

// ---------------------------------------------------------------------------------------------
// Godot signals

/// A signal of a class of the extension, as its Rust declaration gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signal {
    class: String,
    name: String,
    args: Vec<String>,
}

/// The argument names of `name: Type, other: Array<Type>`.
fn parameter_names(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars().chain([',']) {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                if let Some((name, _)) = current.split_once(':') {
                    names.push(name.trim().to_owned());
                }
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    names
}

/// Every `#[signal]` of `source`, with the class of the `impl` block it is in.
fn signals_of(source: &str) -> Vec<Signal> {
    let mut signals = Vec::new();
    let mut class = String::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("impl ")
            && !rest.contains(" for ")
        {
            class = rest.trim_end_matches('{').trim().to_owned();
        }
        if trimmed != "#[signal]" {
            continue;
        }
        let mut declaration = String::new();
        for next in lines.by_ref() {
            declaration.push_str(next.trim());
            if declaration.ends_with(';') {
                break;
            }
        }
        let declaration = declaration.trim_start_matches("pub ");
        let (name, rest) = declaration
            .strip_prefix("fn ")
            .and_then(|d| d.split_once('('))
            .unwrap_or_else(|| panic!("a signal that is not `fn name(…);`: {declaration}"));
        let args = rest.rsplit_once(')').map_or("", |(args, _)| args);
        signals.push(Signal {
            class: class.clone(),
            name: name.to_owned(),
            args: parameter_names(args),
        });
    }
    signals
}

/// Every signal the extension declares (read from `rust/godot/src`).
fn extension_signals() -> Vec<Signal> {
    files_under("rust/godot/src", &["rs"])
        .iter()
        .flat_map(|path| signals_of(&read(path)))
        .collect()
}

/// Text outside fenced code blocks, lines joined (a code span may wrap).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push(' ');
        }
    }
    out
}

/// The code spans of `text` that read as a signature: `name(a, b)` or `Class.name(a, b)`, with
/// names only as arguments. Each as (class, name, arguments).
fn signatures(text: &str) -> Vec<(Option<String>, String, Vec<String>)> {
    let ident = |s: &str| {
        !s.is_empty() && s.chars().all(is_word_char) && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    prose(text)
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| {
            let (head, rest) = span.trim().split_once('(')?;
            let args = rest.strip_suffix(')')?;
            let (class, name) = match head.split_once('.') {
                Some((class, name)) => (Some(class.to_owned()), name),
                None => (None, head),
            };
            let args: Vec<String> = args
                .split(',')
                .map(|a| a.trim().to_owned())
                .filter(|a| !a.is_empty())
                .collect();
            (ident(name) && args.iter().all(|a| ident(a))).then(|| (class, name.to_owned(), args))
        })
        .collect()
}

/// Where each class's signals are all listed, with their arguments.
const SIGNAL_PAGES: &[(&str, &str)] = &[
    ("AgentNode", "docs/nodes.md"),
    ("AgentRuntime", "addons/godot_agents/README.md"),
    ("AgentApp", "docs/apps.md"),
    ("Campaign", "docs/campaigns.md"),
];

/// The pages whose signal signatures are checked.
fn pages() -> Vec<String> {
    let mut pages = files_under("docs", &["md"]);
    pages.extend(
        [
            "README.md",
            "addons/godot_agents/README.md",
            "godot-project/demo/README.md",
        ]
        .map(str::to_owned),
    );
    pages
}

#[test]
fn signals_are_documented_with_their_arguments() {
    let signals = extension_signals();
    assert!(
        signals
            .iter()
            .any(|s| s.class == "AgentNode" && s.name == "spoke"),
        "the signals were read: {signals:?}"
    );
    let mut problems = Vec::new();
    // Every mention of a signal with arguments gives the declared ones.
    for page in pages() {
        for (class, name, args) in signatures(&read(&page)) {
            let declared: Vec<&Signal> = signals
                .iter()
                .filter(|s| s.name == name)
                .filter(|s| {
                    class
                        .as_ref()
                        .is_none_or(|c| signals.iter().all(|t| t.class != *c) || s.class == *c)
                })
                .collect();
            if !declared.is_empty() && !declared.iter().any(|s| s.args == args) {
                let shown = class.as_ref().map_or(String::new(), |c| format!("{c}."));
                let wanted: Vec<String> = declared
                    .iter()
                    .map(|s| format!("{}.{}({})", s.class, s.name, s.args.join(", ")))
                    .collect();
                problems.push(format!(
                    "{page}: `{shown}{name}({})`, declared as {}",
                    args.join(", "),
                    wanted.join(" or ")
                ));
            }
        }
    }
    // Each class's page lists all of its signals.
    for (class, page) in SIGNAL_PAGES {
        let found: Vec<(String, Vec<String>)> = signatures(&read(page))
            .into_iter()
            .map(|(_, name, args)| (name, args))
            .collect();
        for s in signals.iter().filter(|s| s.class == *class) {
            if !found
                .iter()
                .any(|(name, args)| *name == s.name && *args == s.args)
            {
                problems.push(format!(
                    "{page} does not list {class}'s signal `{}({})`",
                    s.name,
                    s.args.join(", ")
                ));
            }
        }
    }
    // The node's signals, the runtime's and the protocol's events side by side.
    let nodes = read("docs/nodes.md");
    let vocabulary = nodes
        .split("| `AgentNode` signal |")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("docs/nodes.md has the AgentNode / AgentRuntime / protocol table");
    let rows: Vec<String> = vocabulary
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    for s in signals.iter().filter(|s| s.class == "AgentNode") {
        if !rows.contains(&s.name) {
            problems.push(format!(
                "docs/nodes.md's vocabulary table has no row for the signal `{}`",
                s.name
            ));
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn signatures_and_signals_are_read_as_written() {
    let source = "#[godot_api]\nimpl INode for AgentNode {}\n#[godot_api]\nimpl AgentNode {\n    \
                  /// Doc.\n    #[signal]\n    fn spoke(text: GString, recipients: PackedStringArray, \
                  dialog_type: GString);\n    #[signal]\n    fn reflected(\n        memories: \
                  Array<VarDictionary>,\n        drawn_by: GString,\n    );\n}\n";
    let signals = signals_of(source);
    assert_eq!(signals.len(), 2);
    assert_eq!(signals[0].class, "AgentNode");
    assert_eq!(signals[0].args, ["text", "recipients", "dialog_type"]);
    assert_eq!(signals[1].args, ["memories", "drawn_by"]);
    let text = "| `spoke(text, recipients)` | … `AgentNode.remembered(memory)`, `hp_changed(a,\nb)`, \
                `get_transcript(since = 0)`, `agent_error(id, \"brain\")`\n```\n`x(y)`\n```\n";
    let found: Vec<String> = signatures(text)
        .iter()
        .map(|(c, n, a)| {
            let class = c.as_ref().map_or(String::new(), |c| format!("{c}."));
            format!("{class}{n}({})", a.join(","))
        })
        .collect();
    assert_eq!(
        found,
        [
            "spoke(text,recipients)",
            "AgentNode.remembered(memory)",
            "hp_changed(a,b)"
        ]
    );
}
