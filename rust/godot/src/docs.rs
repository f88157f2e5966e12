//! The class reference the library registers with the editor's help, as GDScript reads it.
//!
//! gdext (`register-docs`) builds one XML document per class from the `///` comments at compile
//! time ([`godot::docs::__gather_xml_docs`]) and hands it to the editor at
//! `InitStage::Editor`. It writes what it sees in the Rust source: a member's `type` is the Rust
//! type (`GString`, `Option < Gd < AgentBrain > >`), its `default` the token stream of its
//! `#[init(val = …)]` (`GString :: from("user://agents.db")`), a method's types likewise (`i64`,
//! `()`, `Array < VarDictionary >`), and no parameter default or `const` / `static` qualifier.
//!
//! [`class_reference`] takes those documents and rewrites every type, default and qualifier from
//! what the library really registered with `ClassDB`: types as Godot names them (`String`,
//! `AgentBrain`, `Dictionary[]`, `void`), defaults as `var_to_str` writes the real default
//! values (`"user://agents.db"`, `Rect2(0, 0, 100, 100)`, `5.0`). The descriptions stay as
//! they are. [`register_with_editor`] loads the rewritten documents into the editor's help
//! after gdext's own (a class loaded again replaces the earlier document);
//! `GameTools.class_reference()` hands them to tools that publish docs. The rewriting itself is
//! [`rewrite_class_xml`], pure and unit-tested.
//!
//! What the editor shows (checked with Godot 4.6.3, with and without this rewrite, at startup and
//! after a hot reload): the help builds the extension classes' entries from `ClassDB` — types
//! and defaults included, so they read as GDScript either way — and takes only the descriptions
//! from the registered XML (`EditorHelp::_gen_extensions_docs`, `DocTools::merge_from`); its XML
//! loader does not even read a member's `default`. Loading a class's document again replaces the
//! earlier one (`DocTools::_load` starts the class's entry afresh). The rewrite is for what reads
//! the registered XML itself: `GameTools.class_reference()`, tools that publish docs, and any
//! engine version or code path that shows an entry as registered.

use std::collections::HashMap;

// XML attribute values are escaped as gdext escapes them, which is the report pages' escape.
use agents_core::report_html::escape as escape_attribute;

use godot::classes::ClassDb;
use godot::obj::{EngineBitfield, EngineEnum};
use godot::prelude::*;
use godot::register::info::{MethodFlags, PropertyHint, PropertyUsageFlags};

/// A property's type and default as the class reference shows them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemberFacts {
    /// Godot's name of the type (`String`, `AgentBrain`, `Dictionary`).
    pub type_name: String,
    /// The default as GDScript writes it (`"user://agents.db"`); `None`: none is shown.
    pub default: Option<String>,
}

/// A method's or a signal's types (and a method's parameter defaults and qualifiers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallableFacts {
    /// The return type (`void` for none); `None` for a signal.
    pub return_type: Option<String>,
    /// The parameters in order: their types and defaults.
    pub params: Vec<MemberFacts>,
    /// `const`, `static`, `vararg` (space-separated), or empty.
    pub qualifiers: String,
}

/// What [`rewrite_class_xml`] writes into one class's document, by member, method and signal
/// name. Entries of the document that have none here are left as they are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassFacts {
    pub members: HashMap<String, MemberFacts>,
    pub methods: HashMap<String, CallableFacts>,
    pub signals: HashMap<String, CallableFacts>,
}

/// Undoes [`escape_attribute`] (and the numeric references XML allows).
fn unescape_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let entity = &tail[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// One tag of the document: `<name a="v" …>`, `<name … />` or `</name>`.
#[derive(Debug)]
struct Tag {
    name: String,
    /// Attribute names and their values, still escaped.
    attributes: Vec<(String, String)>,
    closing: bool,
    self_closing: bool,
}

impl Tag {
    /// Parses the text between `<` and `>`; `None` for what is no element (`<?xml …?>`,
    /// comments) or does not parse, which the rewrite copies as it is.
    fn parse(inner: &str) -> Option<Tag> {
        if inner.starts_with('?') || inner.starts_with('!') {
            return None;
        }
        let (closing, inner) = match inner.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let (self_closing, inner) = match inner.trim_end().strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let inner = inner.trim();
        let name_end = inner.find(char::is_whitespace).unwrap_or(inner.len());
        let name = inner[..name_end].to_string();
        if name.is_empty() {
            return None;
        }
        let mut attributes = Vec::new();
        let mut rest = inner[name_end..].trim_start();
        while !rest.is_empty() {
            let eq = rest.find('=')?;
            let key = rest[..eq].trim().to_string();
            let after = rest[eq + 1..].trim_start();
            let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let close = after[1..].find(quote)?;
            attributes.push((key, after[1..=close].to_string()));
            rest = after[close + 2..].trim_start();
        }
        Some(Tag {
            name,
            attributes,
            closing,
            self_closing,
        })
    }

    fn get(&self, key: &str) -> Option<String> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| unescape_attribute(v))
    }

    /// Sets (escaping `value`), adds at the end, or with `None` removes an attribute.
    fn set(&mut self, key: &str, value: Option<&str>) {
        let position = self.attributes.iter().position(|(k, _)| k == key);
        match (position, value) {
            (Some(i), Some(v)) => self.attributes[i].1 = escape_attribute(v),
            (None, Some(v)) => self.attributes.push((key.to_string(), escape_attribute(v))),
            (Some(i), None) => {
                self.attributes.remove(i);
            }
            (None, None) => {}
        }
    }

    fn write(&self, out: &mut String) {
        out.push('<');
        if self.closing {
            out.push('/');
        }
        out.push_str(&self.name);
        for (key, value) in &self.attributes {
            out.push_str(&format!(" {key}=\"{value}\""));
        }
        out.push_str(if self.self_closing { " />" } else { ">" });
    }
}

/// Rewrites one class document of gdext's: each `<member>`'s `type` and `default`, each
/// `<method>`'s `<return>` type and `qualifiers`, and each `<param>`'s `type` and `default` (of
/// methods and signals) from `facts`. A member or parameter whose facts have no default loses
/// its `default` attribute. Everything else — the descriptions, entries `facts` does not know —
/// is copied unchanged.
pub fn rewrite_class_xml(xml: &str, facts: &ClassFacts) -> String {
    let mut out = String::with_capacity(xml.len() + xml.len() / 8);
    // The method or signal whose tags come now.
    let mut callable: Option<&CallableFacts> = None;
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(len) = rest[open..].find('>') else {
            break;
        };
        let raw = &rest[open..=open + len];
        rest = &rest[open + len + 1..];
        let Some(mut tag) = Tag::parse(&raw[1..raw.len() - 1]) else {
            out.push_str(raw);
            continue;
        };
        let mut changed = false;
        match (tag.name.as_str(), tag.closing) {
            ("method" | "signal", true) => callable = None,
            ("method", false) => {
                callable = tag.get("name").and_then(|n| facts.methods.get(&n));
                if let Some(f) = callable
                    && !f.qualifiers.is_empty()
                {
                    tag.set("qualifiers", Some(&f.qualifiers));
                    changed = true;
                }
            }
            ("signal", false) => {
                callable = tag.get("name").and_then(|n| facts.signals.get(&n));
            }
            ("return", false) => {
                if let Some(ty) = callable.and_then(|f| f.return_type.as_deref()) {
                    tag.set("type", Some(ty));
                    changed = true;
                }
            }
            ("param", false) => {
                let param = tag
                    .get("index")
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| callable.and_then(|f| f.params.get(i)));
                if let Some(param) = param {
                    tag.set("type", Some(&param.type_name));
                    tag.set("default", param.default.as_deref());
                    changed = true;
                }
            }
            ("member", false) => {
                if let Some(member) = tag.get("name").and_then(|n| facts.members.get(&n)) {
                    tag.set("type", Some(&member.type_name));
                    tag.set("default", member.default.as_deref());
                    changed = true;
                }
            }
            _ => {}
        }
        if changed {
            tag.write(&mut out);
        } else {
            out.push_str(raw);
        }
    }
    out.push_str(rest);
    out
}

/// The `name` of a document's `<class>`.
pub fn class_name_of(xml: &str) -> Option<String> {
    let start = xml.find("<class ")?;
    let end = start + xml[start..].find('>')?;
    Tag::parse(&xml[start + 1..end])?.get("name")
}

// ---------------------------------------------------------------------------------------------
// From ClassDB (needs a running Godot).

/// `Variant.Type` of a property dictionary (`type`).
fn variant_type(info: &VarDictionary) -> VariantType {
    let ord = info
        .get("type")
        .and_then(|v| v.try_to::<i64>().ok())
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(0);
    VariantType::from_ord(ord)
}

fn text_of(info: &VarDictionary, key: &str) -> String {
    info.get(key).map(|v| v.to_string()).unwrap_or_default()
}

fn int_of(info: &VarDictionary, key: &str) -> i64 {
    info.get(key)
        .and_then(|v| v.try_to::<i64>().ok())
        .unwrap_or(0)
}

/// A flag's bits as the `int` of a `ClassDB` dictionary.
fn bits(flag: impl EngineBitfield) -> i64 {
    i64::try_from(flag.ord()).unwrap_or(0)
}

/// The type name Godot's documentation gives a property, argument or return value (as
/// `DocData::argument_doc_from_arginfo` and `DocTools::generate` write it).
pub fn godot_type_name(info: &VarDictionary) -> String {
    let ty = variant_type(info);
    let class_name = text_of(info, "class_name");
    let hint = int_of(info, "hint");
    let hint_string = text_of(info, "hint_string");
    let usage = int_of(info, "usage");
    let enum_usage =
        bits(PropertyUsageFlags::CLASS_IS_ENUM) | bits(PropertyUsageFlags::CLASS_IS_BITFIELD);
    if ty == VariantType::INT && usage & enum_usage != 0 {
        "int".into()
    } else if !class_name.is_empty() {
        class_name
    } else if ty == VariantType::ARRAY && hint == i64::from(PropertyHint::ARRAY_TYPE.ord()) {
        format!("{hint_string}[]")
    } else if ty == VariantType::DICTIONARY
        && hint == i64::from(PropertyHint::DICTIONARY_TYPE.ord())
    {
        format!("Dictionary[{}]", hint_string.replace(';', ", "))
    } else if hint == i64::from(PropertyHint::RESOURCE_TYPE.ord()) && !hint_string.is_empty() {
        hint_string
    } else if ty == VariantType::NIL {
        if usage & bits(PropertyUsageFlags::NIL_IS_VARIANT) != 0 {
            "Variant".into()
        } else {
            "void".into()
        }
    } else {
        ty.godot_type_name().to_string()
    }
}

/// A default value as the documentation writes it (`DocData::get_default_value_string`):
/// `var_to_str` on one line.
pub fn default_text(value: &Variant) -> String {
    godot::global::var_to_str(value)
        .to_string()
        .replace('\n', " ")
}

/// `const`, `static` and `vararg` from a method's flags, in Godot's order.
fn qualifiers(flags: i64) -> String {
    let mut out: Vec<&str> = Vec::new();
    for (flag, word) in [
        (MethodFlags::CONST, "const"),
        (MethodFlags::VARARG, "vararg"),
        (MethodFlags::STATIC, "static"),
    ] {
        if flags & bits(flag) != 0 {
            out.push(word);
        }
    }
    out.join(" ")
}

/// The elements of an Array entry of a `ClassDB` dictionary, typed (`Array[Dictionary]`) or
/// not.
fn array_of(info: &VarDictionary, key: &str) -> Vec<Variant> {
    let Some(value) = info.get(key) else {
        return Vec::new();
    };
    if let Ok(array) = value.try_to::<VarArray>() {
        return array.iter_shared().collect();
    }
    if let Ok(array) = value.try_to::<Array<VarDictionary>>() {
        return array.iter_shared().map(|d| d.to_variant()).collect();
    }
    Vec::new()
}

/// A method's or signal's facts from its `ClassDB` dictionary (`args`, `default_args`,
/// `return`, `flags`).
fn callable_facts(info: &VarDictionary, with_return: bool) -> CallableFacts {
    let args = array_of(info, "args");
    let defaults = array_of(info, "default_args");
    let first_default = args.len().saturating_sub(defaults.len());
    let params = args
        .iter()
        .enumerate()
        .map(|(i, arg)| {
            let arg: VarDictionary = arg.try_to().unwrap_or_default();
            MemberFacts {
                type_name: godot_type_name(&arg),
                default: i
                    .checked_sub(first_default)
                    .and_then(|d| defaults.get(d))
                    .map(default_text),
            }
        })
        .collect();
    let return_type = with_return.then(|| {
        let ret: VarDictionary = info
            .get("return")
            .and_then(|v| v.try_to().ok())
            .unwrap_or_default();
        godot_type_name(&ret)
    });
    CallableFacts {
        return_type,
        params,
        qualifiers: if with_return {
            qualifiers(int_of(info, "flags"))
        } else {
            String::new()
        },
    }
}

/// A class's facts from `ClassDB`: its own properties (with their real defaults), methods and
/// signals.
pub fn class_facts(class: &str) -> ClassFacts {
    let db = ClassDb::singleton();
    let mut facts = ClassFacts::default();
    let hidden = bits(PropertyUsageFlags::GROUP)
        | bits(PropertyUsageFlags::SUBGROUP)
        | bits(PropertyUsageFlags::CATEGORY)
        | bits(PropertyUsageFlags::INTERNAL);
    for info in db
        .class_get_property_list_ex(class)
        .no_inheritance(true)
        .done()
        .iter_shared()
    {
        if int_of(&info, "usage") & hidden != 0 {
            continue;
        }
        let name = text_of(&info, "name");
        let type_name = godot_type_name(&info);
        let value = db.class_get_property_default_value(class, name.as_str());
        let ty = variant_type(&info);
        // Godot shows `null` for an object property without one, and no default where it
        // cannot read one (a Callable).
        let default = match value.get_type() {
            VariantType::NIL if ty != VariantType::OBJECT && ty != VariantType::NIL => None,
            VariantType::OBJECT => None,
            _ => Some(default_text(&value)),
        };
        facts
            .members
            .insert(name, MemberFacts { type_name, default });
    }
    for info in db
        .class_get_method_list_ex(class)
        .no_inheritance(true)
        .done()
        .iter_shared()
    {
        facts
            .methods
            .insert(text_of(&info, "name"), callable_facts(&info, true));
    }
    for info in db
        .class_get_signal_list_ex(class)
        .no_inheritance(true)
        .done()
        .iter_shared()
    {
        facts
            .signals
            .insert(text_of(&info, "name"), callable_facts(&info, false));
    }
    facts
}

/// Every class document the library registers, rewritten from `ClassDB` ([`class_facts`]):
/// `(class name, XML)`, sorted by class name.
pub fn class_reference() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = godot::docs::__gather_xml_docs()
        .filter_map(|xml| {
            let class = class_name_of(&xml)?;
            let facts = class_facts(&class);
            Some((class, rewrite_class_xml(&xml, &facts)))
        })
        .collect();
    out.sort();
    out
}

/// Loads [`class_reference`] into the editor's help, replacing the documents gdext registered
/// just before (at `InitStage::Editor`, from the extension's `on_stage_init`).
pub fn register_with_editor() {
    for (_, xml) in class_reference() {
        let len = i64::try_from(xml.len()).unwrap_or(i64::MAX);
        // SAFETY: the binding is initialized (the editor init stage runs after it) and this is the
        // main thread; the pointer and length describe valid UTF-8 that outlives the call (Godot
        // parses it at once). The function exists in editor builds, the only ones that reach the
        // editor stage.
        unsafe {
            godot::sys::interface_fn!(editor_help_load_xml_from_utf8_chars_and_len)(
                xml.as_ptr().cast::<std::ffi::c_char>(),
                len,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(type_name: &str, default: Option<&str>) -> MemberFacts {
        MemberFacts {
            type_name: type_name.into(),
            default: default.map(Into::into),
        }
    }

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<class name="AgentRuntime" inherits="Node">
<brief_description>Runs agents.</brief_description>
<description>Uses [code]&quot;a&quot;[/code] &lt;b&gt;.</description>
<methods>
<method name="get_conversation">
  <return type="Array &lt; VarDictionary &gt;" />
  <param index="0" name="agent_id" type="GString" /><param index="1" name="limit" type="i64" />
  <description>
  The last [param limit] lines.
  </description>
</method>
<method name="unknown_to_classdb">
  <return type="i64" />
  <description>Left alone.</description>
</method>
</methods>
<signals>
<signal name="agent_spoke">
  <param index="0" name="agent_id" type="GString" /><param index="1" name="recipients" type="PackedStringArray" />
  <description>Said something.</description>
</signal>
</signals>
<members><member name="database_path" type="GString" default="GString :: from(&quot;user://agents.db&quot;)">The SQLite database.</member><member name="world_bounds" type="Rect2" default="Rect2 :: new(Vector2::ZERO, Vector2::new(100.0, 100.0))">The rectangle.</member><member name="action_handler" type="Callable" default="Callable :: invalid()">A handler.</member><member name="brain" type="Option &lt; Gd &lt; AgentBrain &gt;&gt;" default="">A brain.</member></members>
</class>"#;

    fn facts() -> ClassFacts {
        let mut facts = ClassFacts::default();
        facts.members.insert(
            "database_path".into(),
            member("String", Some("\"user://agents.db\"")),
        );
        facts.members.insert(
            "world_bounds".into(),
            member("Rect2", Some("Rect2(0, 0, 100, 100)")),
        );
        facts
            .members
            .insert("action_handler".into(), member("Callable", None));
        facts
            .members
            .insert("brain".into(), member("AgentBrain", Some("null")));
        facts.methods.insert(
            "get_conversation".into(),
            CallableFacts {
                return_type: Some("Dictionary[]".into()),
                params: vec![member("String", None), member("int", Some("50"))],
                qualifiers: "const".into(),
            },
        );
        facts.signals.insert(
            "agent_spoke".into(),
            CallableFacts {
                return_type: None,
                params: vec![member("String", None), member("PackedStringArray", None)],
                qualifiers: String::new(),
            },
        );
        facts
    }

    #[test]
    fn members_get_godot_types_and_gdscript_defaults() {
        let out = rewrite_class_xml(XML, &facts());
        assert!(
            out.contains(r#"<member name="database_path" type="String" default="&quot;user://agents.db&quot;">The SQLite database.</member>"#),
            "{out}"
        );
        assert!(out.contains(
            r#"<member name="world_bounds" type="Rect2" default="Rect2(0, 0, 100, 100)">"#
        ));
        // No default where the facts have none; `null` for an object.
        assert!(out.contains(r#"<member name="action_handler" type="Callable">A handler."#));
        assert!(out.contains(r#"<member name="brain" type="AgentBrain" default="null">"#));
    }

    #[test]
    fn methods_and_signals_get_types_defaults_and_qualifiers() {
        let out = rewrite_class_xml(XML, &facts());
        assert!(out.contains(r#"<method name="get_conversation" qualifiers="const">"#));
        assert!(out.contains(r#"<return type="Dictionary[]" />"#));
        assert!(out.contains(r#"<param index="0" name="agent_id" type="String" />"#));
        assert!(out.contains(r#"<param index="1" name="limit" type="int" default="50" />"#));
        assert!(out.contains(r#"<param index="1" name="recipients" type="PackedStringArray" />"#));
        // A method the facts do not know keeps what it had, its return type included.
        assert!(out.contains("<method name=\"unknown_to_classdb\">\n  <return type=\"i64\" />"));
    }

    #[test]
    fn descriptions_and_the_rest_are_copied_unchanged() {
        let out = rewrite_class_xml(XML, &facts());
        assert!(out.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<class name=\"AgentRuntime\" inherits=\"Node\">"));
        assert!(
            out.contains("<description>Uses [code]&quot;a&quot;[/code] &lt;b&gt;.</description>")
        );
        assert!(out.contains("  The last [param limit] lines.\n"));
        assert!(out.ends_with("</members>\n</class>"));
        // Without facts, nothing changes at all.
        assert_eq!(rewrite_class_xml(XML, &ClassFacts::default()), XML);
    }

    #[test]
    fn attribute_values_are_escaped_and_read_back() {
        let mut facts = ClassFacts::default();
        facts.members.insert(
            "database_path".into(),
            member("String", Some("\"a&b <c> 'd'\"")),
        );
        let out = rewrite_class_xml(XML, &facts);
        assert!(out.contains(r#"default="&quot;a&amp;b &lt;c&gt; &#39;d&#39;&quot;""#));
        assert_eq!(
            unescape_attribute("&quot;a&amp;b&#39;&#x41;&unknown;"),
            "\"a&b'A&unknown;"
        );
        assert_eq!(class_name_of(XML).as_deref(), Some("AgentRuntime"));
    }

    /// Every class gdext registers docs for, without Godot: the documents come from the static
    /// registrations of the `#[derive(GodotClass)]` and `#[godot_api]` macros.
    fn registered_documents() -> Vec<(String, String)> {
        let mut docs: Vec<(String, String)> = godot::docs::__gather_xml_docs()
            .map(|xml| (class_name_of(&xml).unwrap_or_default(), xml))
            .collect();
        docs.sort();
        docs
    }

    /// The text of every `<tag …>…</tag>` of `xml` with its `name` (methods, signals, members).
    fn entries<'a>(xml: &'a str, tag: &str) -> Vec<(String, &'a str)> {
        let open = format!("<{tag} ");
        let close = format!("</{tag}>");
        let mut out = Vec::new();
        let mut rest = xml;
        while let Some(start) = rest.find(&open) {
            let after = &rest[start..];
            let head_end = after.find('>').unwrap_or(after.len() - 1);
            let name = Tag::parse(&after[1..head_end])
                .and_then(|t| t.get("name"))
                .unwrap_or_default();
            let end = after.find(&close).unwrap_or(after.len());
            out.push((name, &after[head_end + 1..end]));
            rest = &after[end..];
        }
        out
    }

    fn element_text<'a>(xml: &'a str, tag: &str) -> &'a str {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        xml.find(&open)
            .and_then(|s| {
                let body = &xml[s + open.len()..];
                body.find(&close).map(|e| body[..e].trim())
            })
            .unwrap_or("")
    }

    /// The registered documents describe every class with a GDScript example, and every
    /// documented method, signal and member with text; no inline code breaks over two lines.
    /// (gdext leaves an entry without `///` out
    /// of the document altogether: `tests/test_class_reference.gd` compares with `ClassDB` to
    /// catch those.)
    #[test]
    fn every_registered_class_and_entry_is_described() {
        let docs = registered_documents();
        let names: Vec<&str> = docs.iter().map(|(n, _)| n.as_str()).collect();
        for class in [
            "AgentAction",
            "AgentApp",
            "AgentBrain",
            "AgentConfig",
            "AgentRuntime",
            "Campaign",
            "GameTools",
        ] {
            assert!(names.contains(&class), "no document for {class}: {names:?}");
        }
        let mut problems = Vec::new();
        for (class, xml) in &docs {
            if element_text(xml, "brief_description").is_empty() {
                problems.push(format!("{class}: no brief description"));
            }
            if !element_text(xml, "description").contains("[codeblock lang=gdscript]") {
                problems.push(format!(
                    "{class}: the description has no ```gdscript example"
                ));
            }
            for tag in ["method", "signal"] {
                for (name, body) in entries(xml, tag) {
                    if element_text(body, "description").is_empty() {
                        problems.push(format!("{class}.{name} ({tag}): no description"));
                    }
                }
            }
            for (name, body) in entries(xml, "member") {
                if body.trim().is_empty() {
                    problems.push(format!("{class}.{name} (member): no description"));
                }
            }
            // A `code span` broken over two comment lines shows its line break in the help.
            let mut rest = xml.as_str();
            while let Some(start) = rest.find("[code]") {
                let span = &rest[start..];
                let end = span.find("[/code]").unwrap_or(span.len());
                if span[..end].contains('\n') {
                    let shown: String = span[..end].chars().take(60).collect();
                    problems.push(format!("{class}: a code span spans two lines: {shown}…"));
                }
                rest = &span[end..];
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
