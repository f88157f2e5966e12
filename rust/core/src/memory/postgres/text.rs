//! Text as PostgreSQL stores it. A `TEXT` value cannot hold U+0000, which SQLite stores and a
//! line of a player may contain; so every text written is escaped and every text read is
//! unescaped, with the noncharacter U+FDD0 as the escape: `\0` is stored as `U+FDD0 '0'`, and
//! U+FDD0 itself as two of them. Text without either (nearly all of it) is stored as it is.

use std::borrow::Cow;
use std::error::Error;

use bytes::BytesMut;
use tokio_postgres::Row;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::memory::MemoryError;

const ESCAPE: char = '\u{FDD0}';

/// `text` as stored.
pub(crate) fn encode(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => {
                out.push(ESCAPE);
                out.push('0');
            }
            ESCAPE => {
                out.push(ESCAPE);
                out.push(ESCAPE);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Stored text as it was written (an escape that leads nowhere is kept as it is).
pub(crate) fn decode(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut out = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ESCAPE {
            match chars.peek() {
                Some('0') => {
                    chars.next();
                    out.push('\0');
                    continue;
                }
                Some(&ESCAPE) => {
                    chars.next();
                    out.push(ESCAPE);
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// A text parameter, escaped as it goes out.
#[derive(Debug)]
pub(crate) struct Text<'a>(pub &'a str);

impl ToSql for Text<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        encode(self.0).as_ref().to_sql(ty, out)
    }
    fn accepts(ty: &Type) -> bool {
        <&str as ToSql>::accepts(ty)
    }
    to_sql_checked!();
}

/// A text column of `row`.
pub(crate) fn text(row: &Row, index: usize) -> Result<String, MemoryError> {
    Ok(decode(row.try_get::<_, String>(index)?))
}

/// A text column of `row` that may be NULL.
pub(crate) fn opt_text(row: &Row, index: usize) -> Result<Option<String>, MemoryError> {
    Ok(row.try_get::<_, Option<String>>(index)?.map(decode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_round_trips_and_plain_text_is_stored_as_it_is() {
        for text in [
            "",
            "plain",
            "nul \0 inside",
            "\0\0",
            "\u{FDD0}",
            "\u{FDD0}0",
            "a\u{FDD0}\0b",
            "中文 \0 é",
        ] {
            let stored = encode(text);
            assert!(!stored.contains('\0'), "{text:?}");
            assert_eq!(decode(stored.into_owned()), text);
        }
        assert!(matches!(encode("plain"), Cow::Borrowed(_)));
    }
}
