//! `agents-server serve`: the agent runtime, the game tools and the WebSocket server in one
//! process, until Ctrl-C or SIGTERM.

use std::sync::Arc;
use std::time::Duration;

use agents_core::brain::ClientBrainPolicy;
use agents_core::campaign::file_tools::CampaignFiles;
use agents_core::cluster::{Cluster, ClusterConfig};
use agents_core::net::{Server, ServerConfig};
use agents_core::runtime::{Runtime, RuntimeOptions};

use crate::cli::ServeArgs;

/// How long shutdown waits for clients to take their close frames, and for agents to stop.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs the server until a shutdown signal; the error is a message for the user.
pub fn run(args: ServeArgs) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("agents-server")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    let options = runtime_options(&args)?;
    let runtime = Runtime::start_on(rt.handle().clone(), options.clone()).map_err(|e| {
        format!(
            "cannot start the agent runtime on {}: {e}",
            agents_core::memory::Location::of(&args.db)
        )
    })?;
    // From here, a failure shuts the runtime down before it is reported.
    let runtime = Arc::new(runtime);
    let cluster = match prepare(&rt, &runtime, &options, &args) {
        Ok(cluster) => cluster,
        Err(e) => {
            runtime.shutdown(SHUTDOWN_TIMEOUT);
            return Err(e);
        }
    };
    // Clients name campaign files only inside --campaign-dir.
    let tools = Arc::new(crate::tools::server_tools(CampaignFiles::for_clients(
        args.campaign_dir.clone(),
    )));
    let config = server_config(args);
    // MCP over Streamable HTTP at /mcp: the same registry (and handler) as `agents-server mcp`.
    let mcp = config.mcp;
    let remote = cluster.as_ref().map(Cluster::remote);
    let server =
        match Server::start_with_remote(runtime.clone(), tools, config, rt.handle(), remote) {
            Ok(server) => server,
            Err(e) => {
                if let Some(cluster) = cluster {
                    rt.block_on(cluster.leave());
                }
                runtime.shutdown(SHUTDOWN_TIMEOUT);
                return Err(e.to_string());
            }
        };
    eprintln!("listening on ws://{}/ws", server.local_addr());
    if mcp {
        eprintln!("MCP over HTTP on http://{}/mcp", server.local_addr());
    }
    let signal = rt.block_on(shutdown_signal());
    eprintln!("{signal}: shutting down");
    server.shutdown(SHUTDOWN_TIMEOUT);
    if let Some(cluster) = cluster {
        rt.block_on(cluster.leave());
    }
    runtime.shutdown(SHUTDOWN_TIMEOUT);
    drop(runtime);
    rt.shutdown_timeout(Duration::from_secs(1));
    eprintln!("stopped");
    Ok(())
}

/// The runtime's options from the command line (and the `--brains` file).
fn runtime_options(args: &ServeArgs) -> Result<RuntimeOptions, String> {
    let mut options = RuntimeOptions::with_database(&args.db);
    if let Some(seconds) = args.idle_think_seconds {
        options.idle_think_seconds = seconds;
    }
    if let Some(memory) = &args.memory {
        options.memory = memory.as_ref().clone();
    }
    options.embeddings = args.embeddings.as_deref().cloned();
    if let Some(scale) = args.game_time_scale {
        options.game_time_scale = scale;
    }
    if let Some(path) = &args.brains {
        crate::brains::apply(crate::brains::load(path)?, &mut options);
    }
    options.max_concurrent_model_calls = args.max_concurrent_model_calls as usize;
    options.max_concurrent_model_calls_per_endpoint =
        args.max_concurrent_model_calls_per_endpoint as usize;
    options.token_budget = args.token_budget;
    options.max_agents = args.max_agents;
    options.campaign_dir = args.campaign_dir.clone();
    Ok(options)
}

/// What runs before the server listens: the brains checked, the stored agents resumed
/// (`--resume`), the world joined (`--cluster`).
fn prepare(
    rt: &tokio::runtime::Runtime,
    runtime: &Arc<Runtime>,
    options: &RuntimeOptions,
    args: &ServeArgs,
) -> Result<Option<Cluster>, String> {
    crate::brains::check_all(runtime, options)?;
    if args.resume {
        // One agent that cannot start waits (logged with its reason by the runtime); the
        // others run and the server serves.
        let resumed = runtime
            .resume_all()
            .map_err(|e| format!("cannot resume the stored agents: {e}"))?;
        let waiting: Vec<&str> = resumed
            .waiting
            .iter()
            .map(|w| w.agent_id.as_str())
            .collect();
        tracing::info!(
            "resumed {} agent(s): {}; {} wait for what they lack (list_stored_agents says \
             what): {}",
            resumed.running.len(),
            resumed.running.join(", "),
            waiting.len(),
            waiting.join(", ")
        );
    }
    let cluster = match &args.cluster {
        None => None,
        Some(url) => {
            if !matches!(
                agents_core::memory::Location::of(&args.db),
                agents_core::memory::Location::Postgres(_)
            ) {
                return Err(format!(
                    "--cluster needs the world's memory shared by every process: a PostgreSQL \
                     --db (postgres://USER:PASSWORD@HOST:PORT/DATABASE), not {}",
                    args.db.display()
                ));
            }
            if !(args.lease_seconds.is_finite() && args.lease_seconds >= 1.0) {
                return Err(format!(
                    "--lease-seconds must be a number of seconds, at least 1, not {}",
                    args.lease_seconds
                ));
            }
            let mut config = ClusterConfig::new(url, &args.world);
            config.lease = Duration::from_secs_f64(args.lease_seconds);
            if let Some(id) = &args.process_id {
                config.process_id = id.clone();
            }
            let cluster = rt
                .block_on(Cluster::join(runtime.clone(), config))
                .map_err(|e| e.to_string())?;
            eprintln!(
                "joined world '{}' on {url} as {}",
                args.world,
                cluster.config().process_id
            );
            Some(cluster)
        }
    };
    Ok(cluster)
}

/// The WebSocket server's configuration from the command line.
fn server_config(args: ServeArgs) -> ServerConfig {
    ServerConfig {
        bind: args.bind,
        token: args.token.filter(|t| !t.is_empty()),
        insecure_no_token: args.insecure_no_token,
        allowed_origins: args.allow_origins,
        allowed_hosts: args.allow_hosts,
        max_frame_bytes: args.max_frame_bytes,
        rate_limit_per_sec: args.rate_limit,
        rate_limit_burst: args.rate_limit,
        outbound_queue: args.outbound_queue,
        write_timeout: std::time::Duration::from_secs_f64(args.write_timeout_seconds),
        mcp: !args.no_mcp,
        client_brains: ClientBrainPolicy {
            objects: args.allow_client_brains,
            origins: args.client_brain_origins.map(|list| list.0),
            presets: !args.no_client_presets,
        },
        ..ServerConfig::default()
    }
}

/// Waits for Ctrl-C or (on Unix) SIGTERM; returns its name.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "interrupted",
                _ = term.recv() => "terminated",
            },
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
                "interrupted"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "interrupted"
    }
}
