//! Tool sets: which tools each agent may call.
//!
//! The runtime holds named **tool sets** (each a [`ToolRegistry`]): `world` (the world actions,
//! [`crate::tools::world`]) and `games` (every game tool) are built in; an application registers
//! its own ([`crate::runtime::Runtime::register_tool_set`]) — an app's actions, a campaign's GM
//! tools. Every agent is attached to a list of sets ([`AgentTools`]): `world` by default, plus
//! whatever its config or the application attaches. Names are scoped per agent: two sets may
//! both have a `move`, as long as no agent is attached to both, so a GM's `move` and a
//! villager's `move` never meet.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::tools::{Tool, ToolRegistry};

/// The built-in set of world actions (`move`, `wait`, `speak`, `collaborate`, `complete_task`).
pub const WORLD_TOOLS: &str = "world";
/// The built-in set of game tools (every game tool and the AIs).
pub const GAME_TOOLS: &str = "games";

/// Why a tool set could not be registered, attached or detached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolSetError {
    /// No set of that name.
    #[error("unknown tool set '{name}' (available: {available})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The sets that exist, comma-separated.
        available: String,
    },
    /// A set of that name exists already.
    #[error("a tool set named '{0}' is already registered")]
    Duplicate(String),
    /// The built-in sets (`world`, `games`) cannot be replaced or removed.
    #[error("the tool set '{0}' is built in: it cannot be replaced or removed")]
    BuiltIn(String),
    /// A set name must be non-empty.
    #[error("invalid tool set name '{0}': it must not be empty")]
    InvalidName(String),
    /// Attaching the set would give the agent two tools of one name.
    #[error(
        "cannot attach tool set '{set}': its tool '{tool}' clashes with '{tool}' of set '{other}'"
    )]
    Clash {
        /// The set being attached.
        set: String,
        /// The tool name both sets have.
        tool: String,
        /// The set already attached that has it.
        other: String,
    },
}

/// Refuses the built-in sets (`world`, `games`), which cannot be replaced or removed.
fn not_built_in(name: &str) -> Result<(), ToolSetError> {
    if name == WORLD_TOOLS || name == GAME_TOOLS {
        return Err(ToolSetError::BuiltIn(name.to_string()));
    }
    Ok(())
}

/// The runtime's named tool sets.
#[derive(Debug)]
pub(crate) struct ToolSets {
    sets: BTreeMap<String, Arc<ToolRegistry>>,
}

impl ToolSets {
    /// The built-in sets: `world` and `games`.
    pub(crate) fn with_builtins() -> Self {
        let mut sets = BTreeMap::new();
        sets.insert(
            WORLD_TOOLS.to_string(),
            Arc::new(crate::tools::world::world_registry()),
        );
        sets.insert(
            GAME_TOOLS.to_string(),
            Arc::new(ToolRegistry::with_game_tools()),
        );
        ToolSets { sets }
    }

    pub(crate) fn register(
        &mut self,
        name: &str,
        registry: Arc<ToolRegistry>,
    ) -> Result<(), ToolSetError> {
        if name.trim().is_empty() {
            return Err(ToolSetError::InvalidName(name.to_string()));
        }
        if self.sets.contains_key(name) {
            return Err(ToolSetError::Duplicate(name.to_string()));
        }
        self.sets.insert(name.to_string(), registry);
        Ok(())
    }

    /// Replaces the registry of `name`, or adds it. The built-in sets cannot be replaced.
    pub(crate) fn replace(
        &mut self,
        name: &str,
        registry: Arc<ToolRegistry>,
    ) -> Result<(), ToolSetError> {
        if name.trim().is_empty() {
            return Err(ToolSetError::InvalidName(name.to_string()));
        }
        not_built_in(name)?;
        self.sets.insert(name.to_string(), registry);
        Ok(())
    }

    /// Removes the set `name` (built-in sets stay); whether it was there.
    pub(crate) fn remove(&mut self, name: &str) -> Result<bool, ToolSetError> {
        not_built_in(name)?;
        Ok(self.sets.remove(name).is_some())
    }

    pub(crate) fn get(&self, name: &str) -> Result<Arc<ToolRegistry>, ToolSetError> {
        self.sets
            .get(name)
            .cloned()
            .ok_or_else(|| ToolSetError::Unknown {
                name: name.to_string(),
                available: self.names().join(", "),
            })
    }

    pub(crate) fn names(&self) -> Vec<String> {
        self.sets.keys().cloned().collect()
    }
}

/// The tools one agent may call: its attached sets, in attach order, and their definitions in
/// the LLM shape (built once per change, read by every decision).
#[derive(Debug, Default)]
pub struct AgentTools {
    sets: Vec<(String, Arc<ToolRegistry>)>,
    definitions: Vec<Value>,
    read_only: Vec<String>,
}

impl AgentTools {
    /// Tools from `sets` (names and registries, in order). Errors when two sets share a tool
    /// name.
    pub(crate) fn new(sets: Vec<(String, Arc<ToolRegistry>)>) -> Result<Self, ToolSetError> {
        let mut tools = AgentTools::default();
        for (name, registry) in sets {
            tools = tools.with(name, registry)?;
        }
        Ok(tools)
    }

    /// These tools plus `set` (a set attached already is left as it is).
    pub(crate) fn with(
        &self,
        set: String,
        registry: Arc<ToolRegistry>,
    ) -> Result<AgentTools, ToolSetError> {
        if self.sets.iter().any(|(name, _)| *name == set) {
            return Ok(self.clone_sets());
        }
        for tool in registry.tools() {
            if let Some((other, _)) = self.find(tool.name()) {
                return Err(ToolSetError::Clash {
                    set,
                    tool: tool.name().to_string(),
                    other: other.to_string(),
                });
            }
        }
        let mut sets = self.sets.clone();
        sets.push((set, registry));
        Ok(AgentTools::from_sets(sets))
    }

    /// These tools with the attached set `set` replaced by `registry` (no change when it is not
    /// attached). Errors when a tool of `registry` is named like one of another attached set.
    pub(crate) fn replaced(
        &self,
        set: &str,
        registry: &Arc<ToolRegistry>,
    ) -> Result<AgentTools, ToolSetError> {
        if self.set(set).is_none() {
            return Ok(self.clone_sets());
        }
        let others = self.without(set);
        for tool in registry.tools() {
            if let Some((other, _)) = others.find(tool.name()) {
                return Err(ToolSetError::Clash {
                    set: set.to_string(),
                    tool: tool.name().to_string(),
                    other: other.to_string(),
                });
            }
        }
        let sets = self
            .sets
            .iter()
            .map(|(name, current)| {
                let registry = if name == set { registry } else { current };
                (name.clone(), registry.clone())
            })
            .collect();
        Ok(AgentTools::from_sets(sets))
    }

    /// These tools without `set` (no change when it is not attached).
    pub(crate) fn without(&self, set: &str) -> AgentTools {
        AgentTools::from_sets(
            self.sets
                .iter()
                .filter(|(name, _)| name != set)
                .cloned()
                .collect(),
        )
    }

    fn clone_sets(&self) -> AgentTools {
        AgentTools::from_sets(self.sets.clone())
    }

    fn from_sets(sets: Vec<(String, Arc<ToolRegistry>)>) -> AgentTools {
        let definitions = sets
            .iter()
            .flat_map(|(_, registry)| registry.tools().map(Tool::llm_definition))
            .collect();
        let read_only = sets
            .iter()
            .flat_map(|(_, registry)| registry.tools().filter(|t| t.is_read_only()))
            .map(|t| t.name().to_string())
            .collect();
        AgentTools {
            sets,
            definitions,
            read_only,
        }
    }

    /// The tool called `name` and the set it comes from.
    pub fn find(&self, name: &str) -> Option<(&str, &Tool)> {
        self.lookup(name).map(|(set, _, tool)| (set, tool))
    }

    /// The tool called `name`, its set's name and the set's registry.
    pub(crate) fn lookup(&self, name: &str) -> Option<(&str, &Arc<ToolRegistry>, &Tool)> {
        self.sets.iter().find_map(|(set, registry)| {
            registry
                .get(name)
                .map(|tool| (set.as_str(), registry, tool))
        })
    }

    /// What a guarded set says of a tool no attached set has (an app: "Action not available"),
    /// the first that says something.
    pub(crate) fn unknown_refusal(&self, name: &str) -> Option<crate::tools::Refusal> {
        self.sets
            .iter()
            .find_map(|(_, registry)| registry.guard().and_then(|g| g.unknown(name)))
    }

    /// The registry of the attached set `name`.
    pub(crate) fn set(&self, name: &str) -> Option<&Arc<ToolRegistry>> {
        self.sets
            .iter()
            .find(|(set, _)| set == name)
            .map(|(_, registry)| registry)
    }

    /// The attached sets' names, in attach order.
    pub fn set_names(&self) -> Vec<&str> {
        self.sets.iter().map(|(name, _)| name.as_str()).collect()
    }

    /// Every tool's definition in the LLM shape, set by set.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// The names of the read-only tools among them, set by set.
    pub fn read_only_names(&self) -> &[String] {
        &self.read_only
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::{ToolOutput, ToolSpec};

    fn set(names: &[&str]) -> Arc<ToolRegistry> {
        let mut registry = ToolRegistry::new();
        for name in names {
            registry
                .register(ToolSpec::new(*name, "", json!({"type": "object"})), |_| {
                    ToolOutput::ok(json!({}))
                })
                .unwrap();
        }
        Arc::new(registry)
    }

    #[test]
    fn names_are_scoped_per_agent() {
        let gm = set(&["move", "move_options"]);
        let world = set(&["move", "speak"]);
        // Two agents, one `move` each.
        let villager = AgentTools::new(vec![("world".into(), world.clone())]).unwrap();
        let master = AgentTools::new(vec![("campaign".into(), gm.clone())]).unwrap();
        assert_eq!(villager.find("move").unwrap().0, "world");
        assert_eq!(master.find("move").unwrap().0, "campaign");
        assert!(villager.find("move_options").is_none());
        // One agent cannot have both.
        let err = villager.with("campaign".into(), gm).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot attach tool set 'campaign': its tool 'move' clashes with 'move' of set 'world'"
        );
    }

    #[test]
    fn attach_and_detach_keep_order_and_definitions() {
        let tools = AgentTools::new(vec![("a".into(), set(&["x", "y"]))]).unwrap();
        let tools = tools.with("b".into(), set(&["z"])).unwrap();
        assert_eq!(tools.set_names(), ["a", "b"]);
        let names: Vec<_> = tools
            .definitions()
            .iter()
            .map(|d| d["name"].clone())
            .collect();
        assert_eq!(names, ["x", "y", "z"]);
        // Attaching again changes nothing.
        assert_eq!(
            tools.with("b".into(), set(&["z"])).unwrap().set_names(),
            ["a", "b"]
        );
        let tools = tools.without("a");
        assert_eq!(tools.set_names(), ["b"]);
        assert_eq!(tools.definitions().len(), 1);
        assert!(tools.find("x").is_none());
    }

    #[test]
    fn the_builtin_sets_exist_and_names_are_unique() {
        let mut sets = ToolSets::with_builtins();
        assert_eq!(sets.names(), ["games", "world"]);
        assert_eq!(
            sets.register("world", set(&[])),
            Err(ToolSetError::Duplicate("world".into()))
        );
        assert!(matches!(
            sets.register(" ", set(&[])),
            Err(ToolSetError::InvalidName(_))
        ));
        assert!(matches!(
            sets.get("nope"),
            Err(ToolSetError::Unknown { .. })
        ));
        let world = sets.get(WORLD_TOOLS).unwrap();
        let games = sets.get(GAME_TOOLS).unwrap();
        // The world and the games can be attached together.
        AgentTools::new(vec![("world".into(), world), ("games".into(), games)]).unwrap();
    }
}
