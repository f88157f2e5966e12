//! The runtime's tool sets as an application manages them: registering, replacing and removing
//! sets, and attaching them to agents (what the sets are: [`super::tools`]).

use super::*;

impl Runtime {
    /// Adds a named tool set (an app's actions, a campaign's tools), which agents can then be
    /// attached to ([`AgentConfig::tools`], [`Runtime::attach_tools`]). Errors: the name is
    /// taken (`world` and `games` are built in) or empty.
    pub fn register_tool_set(
        &self,
        name: &str,
        registry: ToolRegistry,
    ) -> Result<(), RuntimeError> {
        self.inner
            .tool_sets
            .write()
            .register(name, Arc::new(registry))?;
        Ok(())
    }

    /// Replaces the tools of a set the application registered, or adds the set (a game's tools
    /// as it defines them: the Godot extension's GDScript tools). Agents attached to it see the
    /// new tools from their next decision. Errors (nothing changes): a built-in set (`world`,
    /// `games`), an empty name, or a tool named like one of another set of an attached agent
    /// (`invalid_config`, naming both).
    pub fn set_tool_set(&self, name: &str, registry: ToolRegistry) -> Result<(), RuntimeError> {
        let registry = Arc::new(registry);
        let mut sets = self.inner.tool_sets.write();
        let agents: Vec<Arc<AgentShared>> = self
            .inner
            .agents
            .read()
            .values()
            .map(|entry| entry.shared.clone())
            .collect();
        let mut updated = Vec::new();
        for shared in &agents {
            let tools = shared.tools();
            if tools.set(name).is_some() {
                updated.push((shared, tools.replaced(name, &registry)?));
            }
        }
        sets.replace(name, registry)?;
        for (shared, tools) in updated {
            shared.update_tools(|_| Ok(tools))?;
        }
        Ok(())
    }

    /// Removes a set the application registered, detaching it from every agent; whether it
    /// was there. The built-in sets cannot be removed (`invalid_config`).
    pub fn remove_tool_set(&self, name: &str) -> Result<bool, RuntimeError> {
        let mut sets = self.inner.tool_sets.write();
        let removed = sets.remove(name)?;
        for entry in self.inner.agents.read().values() {
            entry.shared.update_tools(|tools| Ok(tools.without(name)))?;
        }
        Ok(removed)
    }

    /// The names of the registered tool sets, sorted.
    pub fn tool_set_names(&self) -> Vec<String> {
        self.inner.tool_sets.read().names()
    }

    /// Attaches a running agent to a tool set: its next decision sees the set's tools. Errors:
    /// `unknown_agent`; an unknown set, or one with a tool named like one the agent has
    /// (`invalid_config`). Attaching a set twice changes nothing.
    pub fn attach_tools(&self, agent_id: &str, set: &str) -> Result<(), RuntimeError> {
        let shared = self.running(agent_id)?;
        let registry = self.inner.tool_sets.read().get(set)?;
        shared.update_tools(|tools| tools.with(set.to_string(), registry))?;
        Ok(())
    }

    /// Detaches a running agent from a tool set (no change when it is not attached).
    pub fn detach_tools(&self, agent_id: &str, set: &str) -> Result<(), RuntimeError> {
        let shared = self.running(agent_id)?;
        shared.update_tools(|tools| Ok(tools.without(set)))?;
        Ok(())
    }

    /// The tool sets a running agent is attached to, in order.
    pub fn agent_tool_sets(&self, agent_id: &str) -> Result<Vec<String>, RuntimeError> {
        let shared = self.running(agent_id)?;
        let tools = shared.tools();
        Ok(tools.set_names().into_iter().map(str::to_string).collect())
    }

    /// The tools of an agent attached to `sets` (default: the world tools).
    pub(super) fn agent_tools(&self, sets: Option<&[String]>) -> Result<AgentTools, RuntimeError> {
        let registry = self.inner.tool_sets.read();
        let default = [WORLD_TOOLS.to_string()];
        let names = sets.unwrap_or(&default);
        let mut resolved = Vec::with_capacity(names.len());
        for name in names {
            resolved.push((name.clone(), registry.get(name)?));
        }
        Ok(AgentTools::new(resolved)?)
    }
}
