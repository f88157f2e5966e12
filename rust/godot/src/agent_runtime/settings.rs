//! [AgentRuntime]'s properties read as the core's settings at [method AgentRuntime.start] (the
//! runtime's options, the server's, the client brain policy), what the editor warns of, and the
//! properties changed too late.

use std::path::PathBuf;

use agents_core::brain::ClientBrainPolicy;
use agents_core::net::ServerConfig;
use agents_core::runtime::{RuntimeOptions, WorldBounds};
use godot::prelude::*;

use super::AgentRuntime;
use crate::agent_brain::AgentBrain;
use crate::convert;

/// The share of the longer side of [member AgentRuntime.world_bounds] agents hear within when
/// [member AgentRuntime.hearing_radius] is negative (its default).
pub(super) const HEARING_SHARE_OF_WORLD: f64 = 0.15;

/// The profile name [member AgentRuntime.default_brain_config] is registered under.
pub(super) const DEFAULT_BRAIN_PROFILE: &str = "default";

/// What keeps the runtime from creating or writing its database at `path` (the
/// [member AgentRuntime.database_path]), for the configuration warnings. Reads the file system
/// only: nothing is created.
pub(super) fn database_path_warning(path: &str) -> Option<String> {
    use std::path::Path;
    if path.trim().is_empty() {
        return Some(
            "database_path is empty: the runtime will not start. Set it to a file such as \
             user://agents.db."
                .into(),
        );
    }
    if path.starts_with("res://") {
        return Some(format!(
            "database_path \"{path}\" is inside the project (res://), which is read-only in an \
             exported game: the runtime will not start there. Use a user:// path such as \
             user://agents.db."
        ));
    }
    let global = crate::paths::globalize_path(path);
    let file = Path::new(&global);
    if file.is_dir() {
        return Some(format!(
            "database_path \"{path}\" is a folder: name a file in it (such as {}/agents.db).",
            path.trim_end_matches('/')
        ));
    }
    if file.exists() {
        return (!writable(file)).then(|| {
            format!(
                "database_path \"{path}\": the file {global} is read-only: the runtime cannot \
                 write it."
            )
        });
    }
    // `start` creates the missing folders: find the closest one that exists.
    let folder = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut existing = folder;
    while !existing.exists() {
        match existing.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => existing = parent,
            _ => return None,
        }
    }
    let shown = existing.display();
    if !existing.is_dir() {
        Some(format!(
            "database_path \"{path}\": the folder {} cannot be created, {shown} is a file, not a \
             folder: the runtime will not start.",
            folder.display()
        ))
    } else if !writable(existing) {
        Some(if existing == folder {
            format!(
                "database_path \"{path}\": the folder {shown} is not writable: the runtime will not \
                 start."
            )
        } else {
            format!(
                "database_path \"{path}\": the folder {} cannot be created in {shown}, which is not \
                 writable: the runtime will not start.",
                folder.display()
            )
        })
    } else {
        None
    }
}

/// Whether this process may write `path` (a file, or a folder to create files in), without
/// writing anything.
pub(super) fn writable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `access` reads a NUL-terminated path that lives through the call.
        unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
}

#[godot_api(secondary)]
impl AgentRuntime {
    /// The configuration warnings the editor shows on this node (the yellow triangle in the
    /// Scene dock), one text per problem; empty when there is none. A game can call it too, for
    /// a runtime set up from code. It warns about a [member database_path] the runtime cannot
    /// use — empty, under `res://` (read-only in an exported game), in a folder that cannot be
    /// created or written, a read-only file — and about brains of [member default_brain_config]
    /// and [member brain_profiles] that agents would be refused at spawn: an `openai` or
    /// `anthropic` brain without a model, or whose key variable ([member AgentBrain.api_key_env])
    /// is not set in this process's environment (a loopback [member AgentBrain.base_url] needs
    /// none; a key handed over later with [method set_api_key] cannot be known here), settings
    /// [method AgentBrain.validate] refuses, a profile that is not an [AgentBrain].
    /// ```gdscript
    /// for warning in $AgentRuntime.get_configuration_warnings():
    ///     push_warning(warning)
    /// ```
    #[func(rename = get_configuration_warnings)]
    pub fn configuration_warnings(&self) -> PackedStringArray {
        let mut warnings: Vec<String> = database_path_warning(&self.database_path.to_string())
            .into_iter()
            .collect();
        if let Some(brain) = &self.default_brain_config {
            warnings.extend(brain.bind().configuration_warnings("default_brain_config"));
        }
        for (name, value) in self.brain_profiles.iter_shared() {
            let label = format!("brain_profiles[\"{name}\"]");
            match value.try_to::<Gd<AgentBrain>>() {
                Ok(brain) => warnings.extend(brain.bind().configuration_warnings(&label)),
                Err(_) => warnings.push(format!(
                    "{label} is not an AgentBrain resource: the runtime will not start. Make \
                     each profile an AgentBrain (New AgentBrain in the inspector)."
                )),
            }
        }
        convert::strings_to_packed(&warnings)
    }
}

impl AgentRuntime {
    /// The WebSocket server's settings, or `None` when it is off.
    pub(super) fn server_config(&self) -> Result<Option<ServerConfig>, String> {
        if !self.websocket_enabled {
            return Ok(None);
        }
        let port = u16::try_from(self.websocket_port).map_err(|_| {
            format!(
                "websocket_port must be 0–65535, got {}",
                self.websocket_port
            )
        })?;
        let host = self.websocket_bind.to_string();
        let ip: std::net::IpAddr = host.trim().parse().map_err(|_| {
            format!("websocket_bind must be an IP address such as 127.0.0.1, got '{host}'")
        })?;
        let token = self.websocket_token.to_string();
        let config = ServerConfig {
            bind: std::net::SocketAddr::new(ip, port),
            token: if token.is_empty() { None } else { Some(token) },
            insecure_no_token: self.websocket_insecure_no_token,
            allowed_origins: self
                .websocket_allowed_origins
                .as_slice()
                .iter()
                .map(|o| o.to_string())
                .collect(),
            allowed_hosts: self
                .websocket_allowed_hosts
                .as_slice()
                .iter()
                .map(|h| h.to_string())
                .collect(),
            mcp: self.mcp_enabled,
            client_brains: self.client_brain_policy()?,
            ..ServerConfig::default()
        };
        config.validate()?;
        Ok(Some(config))
    }

    /// What the server's clients may choose as a brain, from the properties.
    pub(super) fn client_brain_policy(&self) -> Result<ClientBrainPolicy, String> {
        let origins = if self.client_brain_origins.is_empty() {
            None
        } else {
            let list: Vec<String> = self
                .client_brain_origins
                .as_slice()
                .iter()
                .map(|o| o.to_string())
                .collect();
            Some(
                agents_core::brain::origin::parse_origins(&list.join(","))
                    .map_err(|e| format!("client_brain_origins: {e}"))?,
            )
        };
        Ok(ClientBrainPolicy {
            objects: self.allow_client_brains,
            origins,
            presets: self.client_brain_presets,
        })
    }

    /// The runtime options from the properties.
    pub(super) fn options(&self) -> Result<RuntimeOptions, String> {
        if self.seed < 0 {
            return Err(format!("seed must be 0 or more, got {}", self.seed));
        }
        if self.event_queue_capacity < 1 {
            return Err(format!(
                "event_queue_capacity must be at least 1, got {}",
                self.event_queue_capacity
            ));
        }
        if self.max_events_per_frame < 0 {
            return Err(format!(
                "max_events_per_frame must be 0 (unlimited) or more, got {}",
                self.max_events_per_frame
            ));
        }
        if self.max_drain_usec_per_frame < 0 {
            return Err(format!(
                "max_drain_usec_per_frame must be 0 (no limit) or more, got {}",
                self.max_drain_usec_per_frame
            ));
        }
        let path = self.database_path.to_string();
        if path.trim().is_empty() {
            return Err("database_path is empty".into());
        }
        let r = self.world_bounds;
        let bounds = WorldBounds::from_rect(
            f64::from(r.position.x),
            f64::from(r.position.y),
            f64::from(r.size.x),
            f64::from(r.size.y),
        )
        .map_err(|e| format!("world_bounds: {e}"))?;
        for (name, value) in [
            (
                "max_concurrent_model_calls",
                self.max_concurrent_model_calls,
            ),
            (
                "max_concurrent_model_calls_per_endpoint",
                self.max_concurrent_model_calls_per_endpoint,
            ),
            ("max_agents", self.max_agents),
        ] {
            if value < 1 {
                return Err(format!("{name} must be at least 1, got {value}"));
            }
        }
        let mut brain_profiles = std::collections::BTreeMap::new();
        for (name, brain) in self.brain_profiles.iter_shared() {
            let name = name.try_to::<GString>().map_err(|_| {
                format!(
                    "brain_profiles: a profile name must be text, got {}",
                    name.get_type().godot_type_name()
                )
            })?;
            let brain = brain.try_to::<Gd<AgentBrain>>().map_err(|_| {
                format!("brain_profiles.{name}: an AgentBrain resource is expected")
            })?;
            let spec = brain
                .bind()
                .to_core()
                .map_err(|e| format!("brain_profiles.{name}: {e}"))?;
            brain_profiles.insert(name.to_string(), spec);
        }
        let mut default_brain = self.default_brain.to_string();
        if let Some(brain) = &self.default_brain_config {
            let spec = brain
                .bind()
                .to_core()
                .map_err(|e| format!("default_brain_config: {e}"))?;
            brain_profiles.insert(DEFAULT_BRAIN_PROFILE.into(), spec);
            default_brain = DEFAULT_BRAIN_PROFILE.into();
        }
        let options = RuntimeOptions {
            database: PathBuf::from(crate::paths::globalize_path(&path)),
            idle_think_seconds: self.idle_think_seconds,
            bounds,
            default_brain,
            brain_profiles,
            max_concurrent_model_calls: usize::try_from(self.max_concurrent_model_calls)
                .unwrap_or(usize::MAX),
            max_concurrent_model_calls_per_endpoint: usize::try_from(
                self.max_concurrent_model_calls_per_endpoint,
            )
            .unwrap_or(usize::MAX),
            max_agents: usize::try_from(self.max_agents).unwrap_or(usize::MAX),
            token_budget: u64::try_from(self.runtime_token_budget)
                .ok()
                .filter(|&b| b > 0),
            thinking_seconds: self.thinking_seconds,
            speaking_seconds: self.speaking_seconds,
            hearing_radius: self.hearing_radius(),
            player_id: self.player_id.to_string(),
            seed: self.seed.unsigned_abs(),
            campaign_dir: (!self.campaign_dir.is_empty()).then(|| {
                PathBuf::from(crate::paths::globalize_path(&self.campaign_dir.to_string()))
            }),
            memory: self
                .memory
                .as_ref()
                .map(|m| m.bind().to_core())
                .unwrap_or_default(),
            embeddings: self.embeddings.as_ref().map(|e| e.bind().to_core()),
            game_time_scale: self.game_time_scale,
            ..RuntimeOptions::default()
        };
        options.validate()?;
        Ok(options)
    }

    /// [member hearing_radius], or when it is negative its share of [member world_bounds].
    pub(super) fn hearing_radius(&self) -> f64 {
        if self.hearing_radius >= 0.0 {
            return self.hearing_radius;
        }
        let size = self.world_bounds.size;
        HEARING_SHARE_OF_WORLD * f64::from(size.x.max(size.y))
    }

    /// Warns, naming them, of start-time properties changed since [method start] (they are
    /// not applied), once for each change.
    pub(super) fn warn_of_late_properties(&mut self) {
        let Some(started) = self.started_with.take() else {
            return;
        };
        let node = self.base_mut();
        let changed = started.changed(&node);
        let now = if changed.is_empty() {
            started
        } else {
            crate::started_with::StartedWith::take(&node, "AgentRuntime")
        };
        drop(node);
        self.started_with = Some(now);
        if !changed.is_empty() {
            godot_warn!("{}", crate::started_with::warning(&changed));
        }
    }
}
