//! No module of the workspace reaches a sibling that reaches back.
//!
//! Every crate under `rust/` (and the fuzz targets' crate) is read as a tree of modules, one
//! per file (`a/b.rs` or `a/b/mod.rs` is `a::b`), followed from the crate's roots through its
//! `mod x;` declarations. Each use of a path (`crate::bus::Bus`, `super::store::Row`,
//! `self::agent::think`, a child's name `queue::Lane`, and the same inside macro calls such as
//! `json!` or `format!`) is an edge from the file to the module it names. An edge between two
//! modules is drawn between their ancestors that are siblings (the children of the lowest module
//! holding both): `memory/sqlite/sink.rs` naming `crate::memory::store::Row` is the edge
//! `sqlite → store` inside `memory`. A name a module re-exports from its child (`pub use
//! store::Row;` in `memory/mod.rs`) counts as that child. A parent and its children are not
//! siblings: a module's root declares and re-exports its children, and the children use what
//! it holds.
//!
//! The check fails, naming the modules of each circle and the files behind each edge, as soon as
//! the siblings of any module (the top-level modules of a crate included) reach each other in a
//! circle.
//!
//! Test code is not product code: an item under `#[cfg(test)]` (an inline `mod tests { … }`, a
//! `#[cfg(test)] mod tests;` and the file it names, a helper) and a `#[test]` function are left
//! out wherever they stand in a file; everything else in the file is read, all of it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

/// A module's path inside its crate (`["memory", "sqlite"]`; the root is `[]`).
type ModPath = Vec<String>;

/// One module read from its file.
#[derive(Debug, Default)]
struct Module {
    /// The file, as shown in a failure (`rust/core/src/memory/mod.rs`).
    file: String,
    /// Its product children (`mod x;` not under `#[cfg(test)]`).
    children: BTreeSet<String>,
    /// What it re-exports from a child: a name → the child it comes from.
    reexports: BTreeMap<String, String>,
    /// The paths its product code names, as written (`["crate", "bus", "Bus"]`).
    paths: Vec<Vec<String>>,
}

/// A crate: its modules by path.
type Crate = BTreeMap<ModPath, Module>;

/// Siblings' edges: the holding module → from child → to child → the files behind the edge.
type Edges = BTreeMap<ModPath, BTreeMap<String, BTreeMap<String, BTreeSet<String>>>>;

fn is_test_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    if path.is_ident("test") {
        return true;
    }
    if path.is_ident("cfg") {
        // `#[cfg(test)]`, and `#[cfg(all(test, …))]`; not `#[cfg(not(test))]`.
        let text = attr.meta.to_token_stream().to_string();
        let text = text.replace(' ', "");
        return text == "cfg(test)" || text.starts_with("cfg(all(test,");
    }
    false
}

fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(is_test_attr)
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Removes test code from `items`, inside inline modules and impl blocks too.
fn strip_tests(items: &mut Vec<syn::Item>) {
    items.retain(|item| !test_only(item_attrs(item)));
    for item in items.iter_mut() {
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &mut m.content {
                    strip_tests(inner);
                }
            }
            syn::Item::Impl(i) => i.items.retain(|it| match it {
                syn::ImplItem::Fn(f) => !test_only(&f.attrs),
                syn::ImplItem::Const(c) => !test_only(&c.attrs),
                _ => true,
            }),
            _ => {}
        }
    }
}

/// Every path written in `tokens`: runs of `ident :: ident :: …`, with one level of `use`
/// groups spread (`a::{b::C, d}` is `a::b::C` and `a::d`).
fn paths_in(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => {
                paths_in(g.stream(), out);
                i += 1;
            }
            TokenTree::Ident(first) if path_sep(&tokens, i + 1) && !preceded_by_sep(&tokens, i) => {
                let mut path = vec![first.to_string()];
                let mut j = i + 1;
                while path_sep(&tokens, j) {
                    match tokens.get(j + 2) {
                        Some(TokenTree::Ident(next)) => {
                            path.push(next.to_string());
                            j += 3;
                        }
                        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                            for tail in use_group(g.stream()) {
                                let mut whole = path.clone();
                                whole.extend(tail);
                                out.push(whole);
                            }
                            j += 3;
                            path.clear();
                            break;
                        }
                        _ => break,
                    }
                }
                if !path.is_empty() {
                    out.push(path);
                }
                i = j;
            }
            _ => i += 1,
        }
    }
}

/// `::` at `at`.
fn path_sep(tokens: &[TokenTree], at: usize) -> bool {
    matches!((tokens.get(at), tokens.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && b.as_char() == ':')
}

/// Whether the ident at `at` continues a path (`x::<here>`) rather than starting one.
fn preceded_by_sep(tokens: &[TokenTree], at: usize) -> bool {
    at >= 2 && path_sep(tokens, at - 2)
}

/// The paths of a `use` group's body, each relative to the group.
fn use_group(tokens: TokenStream) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let flush = |current: &mut Vec<TokenTree>, out: &mut Vec<Vec<String>>| {
        if let Some(TokenTree::Ident(first)) = current.first() {
            let stream: TokenStream = current.iter().cloned().collect();
            let mut found = Vec::new();
            paths_in(stream, &mut found);
            if found.is_empty() {
                out.push(vec![first.to_string()]);
            }
            out.extend(found);
        }
        current.clear();
    };
    for token in tokens {
        match &token {
            TokenTree::Punct(p) if p.as_char() == ',' => flush(&mut current, &mut out),
            _ => current.push(token),
        }
    }
    flush(&mut current, &mut out);
    out
}

/// `use child::{A, B as C};` and `pub use child::A;` in a module: A, C → child.
fn reexports(items: &[syn::Item], children: &BTreeSet<String>) -> BTreeMap<String, String> {
    fn walk(tree: &syn::UseTree, child: Option<&str>, out: &mut BTreeMap<String, String>) {
        match tree {
            syn::UseTree::Path(p) => walk(&p.tree, child, out),
            syn::UseTree::Name(n) => {
                if let Some(child) = child {
                    out.insert(n.ident.to_string(), child.to_string());
                }
            }
            syn::UseTree::Rename(r) => {
                if let Some(child) = child {
                    out.insert(r.rename.to_string(), child.to_string());
                }
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| walk(t, child, out)),
            syn::UseTree::Glob(_) => {}
        }
    }
    let mut out = BTreeMap::new();
    for item in items {
        let syn::Item::Use(u) = item else { continue };
        // `use self::child::X`, `use child::X`: the first segment names the child.
        let mut tree = &u.tree;
        if let syn::UseTree::Path(p) = tree
            && p.ident == "self"
        {
            tree = &p.tree;
        }
        match tree {
            syn::UseTree::Path(p) if children.contains(&p.ident.to_string()) => {
                walk(&p.tree, Some(&p.ident.to_string()), &mut out)
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    if let syn::UseTree::Path(p) = t
                        && children.contains(&p.ident.to_string())
                    {
                        walk(&p.tree, Some(&p.ident.to_string()), &mut out);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The file of module `name` declared in the module whose file is `parent_file`.
fn child_file(parent_file: &Path, name: &str) -> Option<PathBuf> {
    let stem = parent_file.file_stem()?.to_string_lossy();
    let dir = if matches!(stem.as_ref(), "mod" | "lib" | "main") {
        parent_file.parent()?.to_path_buf()
    } else {
        parent_file.with_extension("")
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Reads the module at `file` and, through its product `mod x;` declarations, its children.
fn read_module(root: &Path, file: &Path, path: ModPath, krate: &mut Crate) {
    let text = fs::read_to_string(file).unwrap();
    let mut parsed =
        syn::parse_file(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
    strip_tests(&mut parsed.items);
    let mut module = Module {
        file: file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string(),
        ..Module::default()
    };
    let mut declared = Vec::new();
    for item in &parsed.items {
        if let syn::Item::Mod(m) = item
            && m.content.is_none()
        {
            let name = m.ident.to_string();
            module.children.insert(name.clone());
            declared.push(name);
        }
    }
    module.reexports = reexports(&parsed.items, &module.children);
    for item in &parsed.items {
        paths_in(item.to_token_stream(), &mut module.paths);
    }
    krate.insert(path.clone(), module);
    for name in declared {
        let Some(child) = child_file(file, &name) else {
            panic!("{}: no file for `mod {name};`", file.display())
        };
        let mut child_path = path.clone();
        child_path.push(name);
        read_module(root, &child, child_path, krate);
    }
}

/// The module a path written in module `from` names, and the item it names there (if any):
/// the longest prefix that is a module, then through one re-export of that module.
fn resolve(krate: &Crate, from: &ModPath, path: &[String]) -> Option<ModPath> {
    let (mut base, rest): (ModPath, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.clone(), &path[1..]),
        "super" => {
            let mut base = from.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            (base, rest)
        }
        first if krate[from].children.contains(first) => (from.clone(), path),
        _ => return None,
    };
    let mut rest = rest.iter();
    for segment in rest.by_ref() {
        let mut next = base.clone();
        next.push(segment.clone());
        if krate.contains_key(&next) {
            base = next;
            continue;
        }
        // Not a module: an item of `base`, maybe re-exported from one of its children.
        if let Some(child) = krate[&base].reexports.get(segment) {
            base.push(child.clone());
        }
        break;
    }
    Some(base)
}

/// The crate's edges between siblings.
fn edges(krate: &Crate) -> Edges {
    let mut edges = Edges::new();
    for (from, module) in krate {
        for path in &module.paths {
            let Some(to) = resolve(krate, from, path) else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // the same module, an ancestor or a descendant
            }
            edges
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .entry(to[common].clone())
                .or_default()
                .insert(module.file.clone());
        }
    }
    edges
}

/// The circles of one module's siblings' graph: its strongly connected components of more than
/// one sibling (Tarjan's algorithm), each sorted.
fn circles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flat_map(|m| m.keys()) {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// Every circle of a crate, described: where, which siblings, the edges and their files.
fn crate_circles(name: &str, krate: &Crate) -> Vec<String> {
    let mut out = Vec::new();
    for (holder, graph) in edges(krate) {
        for circle in circles(&graph) {
            let place = if holder.is_empty() {
                format!("{name}: modules")
            } else {
                format!("{name}: inside {}, modules", holder.join("::"))
            };
            let mut text = format!("{place} {} import each other:", circle.join(", "));
            for from in &circle {
                for (to, files) in &graph[from] {
                    if circle.contains(to) {
                        let files: Vec<&str> = files.iter().map(String::as_str).collect();
                        text.push_str(&format!("\n  {from} -> {to} ({})", files.join(", ")));
                    }
                }
            }
            out.push(text);
        }
    }
    out
}

/// Reads one crate from its roots (`src/lib.rs`, `src/main.rs`, the `src/bin/*.rs`, the fuzz
/// targets): each root is a tree of its own.
fn read_crate(workspace: &Path, roots: &[PathBuf]) -> Vec<Crate> {
    roots
        .iter()
        .map(|root| {
            let mut krate = Crate::new();
            read_module(workspace, root, Vec::new(), &mut krate);
            krate
        })
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every crate root of the workspace, by the crate's folder.
fn roots(workspace: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    let mut folders: Vec<PathBuf> = fs::read_dir(workspace.join("rust"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    folders.push(workspace.join("fuzz"));
    for folder in folders {
        let src = folder.join("src");
        let mut found: Vec<PathBuf> = ["lib.rs", "main.rs"]
            .iter()
            .map(|f| src.join(f))
            .filter(|p| p.is_file())
            .collect();
        for dir in [src.join("bin"), folder.join("fuzz_targets")] {
            if let Ok(entries) = fs::read_dir(dir) {
                found.extend(
                    entries
                        .map(|e| e.unwrap().path())
                        .filter(|p| p.extension().is_some_and(|e| e == "rs")),
                );
            }
        }
        found.sort();
        let name = folder
            .strip_prefix(workspace)
            .unwrap()
            .display()
            .to_string();
        out.insert(name, found);
    }
    out
}

#[test]
fn no_module_of_the_workspace_reaches_a_sibling_that_reaches_back() {
    let workspace = workspace();
    let roots = roots(&workspace);
    for expected in ["rust/core", "rust/godot", "rust/llm", "rust/server", "fuzz"] {
        assert!(
            roots.get(expected).is_some_and(|r| !r.is_empty()),
            "{expected} was found: {roots:?}"
        );
    }
    let mut found = Vec::new();
    let mut modules = 0;
    for (name, roots) in &roots {
        for krate in read_crate(&workspace, roots) {
            modules += krate.len();
            found.extend(crate_circles(name, &krate));
        }
    }
    assert!(
        modules > 200,
        "the workspace's modules were read: {modules}"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Writes a crate into a temporary folder: `files` are (path under `src/`, text).
fn scratch_crate(name: &str, files: &[(&str, &str)]) -> (PathBuf, Crate) {
    let dir = std::env::temp_dir().join(format!("import-circles-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join("src").join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let mut krate = Crate::new();
    read_module(&dir, &dir.join("src/lib.rs"), Vec::new(), &mut krate);
    (dir, krate)
}

#[test]
fn a_circle_behind_a_mod_tests_declaration_is_found() {
    // The old guard stopped reading `bus/mod.rs` at its `mod tests;`: the use of the runtime
    // below it was never seen.
    let (dir, krate) = scratch_crate(
        "hidden",
        &[
            ("lib.rs", "pub mod bus;\npub mod runtime;\n"),
            (
                "bus/mod.rs",
                "#[cfg(test)]\nmod tests;\n\npub fn post() -> crate::runtime::Handle { crate::runtime::Handle }\n",
            ),
            ("bus/tests.rs", "use crate::runtime::Runtime;\n"),
            (
                "runtime.rs",
                "pub struct Handle;\npub fn run() { crate::bus::post(); }\n",
            ),
        ],
    );
    let found = crate_circles("scratch", &krate);
    let _ = fs::remove_dir_all(dir);
    assert_eq!(
        found,
        [
            "scratch: modules bus, runtime import each other:\n  bus -> runtime (src/bus/mod.rs)\n  \
          runtime -> bus (src/runtime.rs)"
        ]
    );
}

#[test]
fn test_code_macros_reexports_and_nested_siblings_are_read_as_they_are() {
    let (dir, krate) = scratch_crate(
        "nested",
        &[
            ("lib.rs", "pub mod memory;\npub mod apps;\n"),
            (
                "memory/mod.rs",
                "mod sqlite;\nmod store;\npub use store::Row;\n\
                 #[cfg(test)]\nmod tests { use crate::apps::App; }\n",
            ),
            // In a macro's tokens; names the re-export of a sibling through the parent.
            (
                "memory/sqlite.rs",
                "fn f() { let _ = format!(\"{}\", crate::memory::Row::new()); }\n",
            ),
            (
                "memory/store.rs",
                "pub struct Row;\nuse super::{sqlite::Sink, Row as R};\n\
                 #[test]\nfn t() { crate::apps::App; }\n",
            ),
            ("apps.rs", "pub struct App;\nuse crate::memory::Row;\n"),
        ],
    );
    let edges = edges(&krate);
    let found = crate_circles("scratch", &krate);
    let _ = fs::remove_dir_all(dir);
    let memory = &edges[&vec!["memory".to_string()]];
    assert!(memory["sqlite"].contains_key("store"), "{edges:?}");
    assert!(memory["store"].contains_key("sqlite"), "{edges:?}");
    // The tests' uses of `apps` are not edges: `apps → memory` alone is no circle.
    assert!(!edges[&Vec::new()].contains_key("memory"), "{edges:?}");
    assert_eq!(
        found,
        [
            "scratch: inside memory, modules sqlite, store import each other:\n  \
          sqlite -> store (src/memory/sqlite.rs)\n  store -> sqlite (src/memory/store.rs)"
        ]
    );
}
