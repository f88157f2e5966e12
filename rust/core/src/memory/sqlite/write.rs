//! The SQLite writer's transactions: one `IMMEDIATE` transaction per batch, each write's
//! statements ([`crate::memory::statements`]) run as cached statements.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql, TransactionBehavior, params_from_iter};

use crate::memory::statements::{Param, statements};
use crate::memory::store::Sink;
use crate::memory::writer::Queued;

/// The writing connection.
pub(crate) struct SqliteSink(pub Connection);

impl Sink for SqliteSink {
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String> {
        commit(&mut self.0, batch).map_err(|e| e.to_string())
    }
}

fn commit(conn: &mut Connection, batch: &[Queued]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for queued in batch {
        for statement in statements(&queued.op) {
            tx.prepare_cached(statement.sql)?
                .execute(params_from_iter(statement.params.iter()))?;
        }
    }
    tx.commit()
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::Owned(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::MaybeText(Some(text)) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::MaybeText(None) => ToSqlOutput::Owned(Value::Null),
            Param::Int(n) => ToSqlOutput::Owned(Value::Integer(*n)),
            Param::Real(x) => ToSqlOutput::Owned(Value::Real(*x)),
        })
    }
}
