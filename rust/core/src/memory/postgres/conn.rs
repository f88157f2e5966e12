//! One PostgreSQL connection driven from a plain thread: its own current-thread tokio runtime
//! (like the `postgres` crate's blocking client), prepared statements cached by their SQL, and
//! a reconnect when the server went away.
//!
//! A memory's threads (the writer, the readers) each own one `Conn`; no tokio context of the
//! caller is ever entered, so the memory is called from async tasks and plain threads alike.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row, Statement};

/// How long a connection attempt may take when the URL does not say (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection and the runtime that drives it.
pub(crate) struct Conn {
    rt: tokio::runtime::Runtime,
    config: Config,
    client: Option<Client>,
    statements: HashMap<&'static str, Statement>,
}

impl Conn {
    /// Connects now.
    pub(crate) fn connect(config: &Config) -> Result<Conn, tokio_postgres::Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime builds");
        let mut config = config.clone();
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("godot-agents");
        }
        let mut conn = Conn {
            rt,
            config,
            client: None,
            statements: HashMap::new(),
        };
        conn.client()?;
        Ok(conn)
    }

    /// The client, connected again if the connection was lost (the prepared statements go
    /// with it).
    pub(crate) fn client(&mut self) -> Result<&Client, tokio_postgres::Error> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.statements.clear();
            let (client, connection) = self.rt.block_on(self.config.connect(NoTls))?;
            self.rt.spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%error, "postgres connection ended");
                }
            });
            self.client = Some(client);
        }
        Ok(self.client.as_ref().expect("connected above"))
    }

    /// Whether the connection is gone (the next call connects again).
    pub(crate) fn is_closed(&self) -> bool {
        self.client.as_ref().is_none_or(Client::is_closed)
    }

    /// Runs `f` with the (connected) client on this connection's runtime.
    pub(crate) fn run<'a, F: Future>(
        &'a mut self,
        f: impl FnOnce(&'a Client) -> F,
    ) -> Result<F::Output, tokio_postgres::Error> {
        self.client()?;
        let client = self.client.as_ref().expect("connected above");
        Ok(self.rt.block_on(f(client)))
    }

    /// The prepared statement of `sql` (prepared once per connection).
    pub(crate) fn prepared(
        &mut self,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        self.prepared_as(sql, |sql| sql.to_string())
    }

    /// The prepared statement of a statement both backends share, written with `?N`
    /// parameters ([`crate::memory::statements`]): prepared once per connection, as `$N`.
    pub(crate) fn prepared_shared(
        &mut self,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        self.prepared_as(sql, crate::memory::statements::dollar_parameters)
    }

    /// The statement cached under `key`, else `spell(key)` prepared and cached.
    fn prepared_as(
        &mut self,
        key: &'static str,
        spell: impl FnOnce(&str) -> String,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(statement) = self.statements.get(key) {
            return Ok(statement.clone());
        }
        self.client()?;
        let client = self.client.as_ref().expect("connected above");
        let statement = self.rt.block_on(client.prepare(&spell(key)))?;
        self.statements.insert(key, statement.clone());
        Ok(statement)
    }

    /// The rows of a query both backends share, written with `?N` parameters.
    pub(crate) fn query_shared(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let statement = self.prepared_shared(sql)?;
        let client = self.client.as_ref().expect("prepared on it");
        self.rt.block_on(client.query(&statement, params))
    }

    /// The one row of a query, if any.
    pub(crate) fn query_opt(
        &mut self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        let statement = self.prepared(sql)?;
        let client = self.client.as_ref().expect("prepared on it");
        self.rt.block_on(client.query_opt(&statement, params))
    }
}

/// An error with the server's reason (tokio-postgres's `Display` alone says "db error") or the
/// cause (a refused connection).
pub(crate) fn explain(error: &tokio_postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => format!("{error}: {}", db.message()),
        (None, Some(source)) => format!("{error}: {source}"),
        (None, None) => error.to_string(),
    }
}
