//! The top-level modules of `agents-core` import each other without circles: each layer (leaf
//! types, tools, memory, apps, brains, campaigns, the bus, the runtime, the protocol, the
//! server) only uses the ones below it. This test reads the crate's sources and fails, naming
//! the modules of the circle and the files that tie them, as soon as one module reaches another
//! that reaches back.
//!
//! What counts as a use: a `crate::<module>` path (in a `use`, or written out in code), outside
//! comments and outside test code (files named `tests*.rs`, and the `#[cfg(test)] mod tests`
//! block a file ends with).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// module → the modules it uses → the files that use them.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The crate's top-level modules: `src/<name>.rs` and `src/<name>/`.
fn modules(src: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(src)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().to_string();
            if e.path().is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs")
                    .filter(|n| *n != "lib")
                    .map(str::to_string)
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// A file's code without comments and without its trailing test module.
fn product_code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `code` names through `crate::`: `crate::bus::X` and each first
/// segment of `crate::{a::X, b}`.
fn used_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // One level of braces: `crate::{a::b, c::{d, e}}` names a and c.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        out.insert(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

fn graph(src: &Path) -> Graph {
    let modules = modules(src);
    let mut graph = Graph::new();
    for module in &modules {
        let mut files = Vec::new();
        let dir = src.join(module);
        rust_files(
            &if dir.is_dir() {
                dir
            } else {
                src.join(format!("{module}.rs"))
            },
            &mut files,
        );
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy();
            if name.starts_with("tests") || name.starts_with("test_") {
                continue;
            }
            let code = product_code(&fs::read_to_string(&file).unwrap());
            for used in used_modules(&code) {
                if used != *module && modules.contains(&used) {
                    let shown = file.strip_prefix(src).unwrap().display().to_string();
                    graph
                        .entry(module.clone())
                        .or_default()
                        .entry(used)
                        .or_default()
                        .insert(shown);
                }
            }
        }
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than one module
/// (Tarjan's algorithm), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a Graph,
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

/// A circle as the edges inside it, with the files behind each.
fn describe(graph: &Graph, circle: &[String]) -> String {
    let mut out = format!("modules {} import each other:", circle.join(", "));
    for from in circle {
        for (to, files) in graph.get(from).into_iter().flatten() {
            if circle.contains(to) {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                out.push_str(&format!("\n  {from} -> {to} ({})", files.join(", ")));
            }
        }
    }
    out
}

#[test]
fn the_top_level_modules_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&src);
    assert!(graph.len() > 10, "the graph was read: {:?}", graph.keys());
    assert!(
        graph["runtime"].contains_key("brain"),
        "the runtime uses the brains"
    );
    let circles = circles(&graph);
    let described: Vec<String> = circles.iter().map(|c| describe(&graph, c)).collect();
    assert!(circles.is_empty(), "{}", described.join("\n"));
}

/// The same holds for the `agents-llm` crate the brains call through: its wire formats
/// (`api`, the provider modules) and its HTTP client (`client`) share the key type through a
/// leaf (`secret`) and the stream's frames through another (`framing`) instead of using each
/// other.
#[test]
fn the_llm_crates_modules_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../llm/src");
    let graph = graph(&src);
    assert!(
        graph["client"].contains_key("api"),
        "the client uses the APIs"
    );
    assert!(
        !graph["api"].contains_key("client"),
        "the APIs use no client: {:?}",
        graph["api"]
    );
    let circles = circles(&graph);
    let described: Vec<String> = circles.iter().map(|c| describe(&graph, c)).collect();
    assert!(circles.is_empty(), "{}", described.join("\n"));
}

#[test]
fn uses_are_read_from_paths_and_groups_but_not_comments_or_tests() {
    let code = product_code(
        "use crate::bus::Bus;\nuse crate::{geometry::Position, tools::{a, b}, time};\n\
         // crate::runtime in a comment\nlet x = crate::limits::MAX; // crate::memory\n\
         #[cfg(test)]\nmod tests {\n    use crate::apps::AppView;\n}\n",
    );
    let used: Vec<String> = used_modules(&code).into_iter().collect();
    assert_eq!(used, ["bus", "geometry", "limits", "time", "tools"]);
}

#[test]
fn a_circle_is_found_and_named_with_its_files() {
    let mut graph = Graph::new();
    let mut edge = |from: &str, to: &str, file: &str| {
        graph
            .entry(from.into())
            .or_default()
            .entry(to.into())
            .or_default()
            .insert(file.into());
    };
    edge("brain", "campaign", "brain/mod.rs");
    edge("campaign", "brain", "campaign/turn.rs");
    edge("runtime", "brain", "runtime/agent.rs");
    let circles = circles(&graph);
    assert_eq!(circles, [vec!["brain".to_string(), "campaign".to_string()]]);
    assert_eq!(
        describe(&graph, &circles[0]),
        "modules brain, campaign import each other:\n  brain -> campaign (brain/mod.rs)\n  \
         campaign -> brain (campaign/turn.rs)"
    );
}
