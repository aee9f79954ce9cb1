//! [`ConfigError`]: why a configuration was not read, or not applied, and where.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What kind of failure a [`ConfigError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read.
    Read,
    /// The text is no valid configuration: bad TOML, an unknown field, a value of the wrong
    /// type or out of its range, pieces that exclude each other.
    Invalid,
    /// A valid configuration that cannot be applied to the stack in force without a restart:
    /// a piece added or removed, a rate limit's kind or key changed, a route added or removed.
    Refused,
}

/// Why a configuration was not read or not applied: the file, the field (a dotted path such
/// as `server.quota.rate`) and the line and column where it was found, when there are ones,
/// and what to do.
///
/// `Display` puts them on one line, as a compiler does: `ironward.toml:7:8: server.quota.rate:
/// -1 is no rate: expected a finite number of tokens a second over 0`.
///
/// # Examples
///
/// ```
/// use ironward_tower::config::{Config, ErrorKind};
///
/// let err = Config::from_toml("[server.quota]\nkind = \"bucket\"\nrate = nan\nburst = 10\n")
///     .unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::Invalid);
/// assert_eq!(err.field(), Some("server.quota.rate"));
/// assert_eq!((err.line(), err.column()), (Some(3), Some(8)));
/// assert!(err.message().contains("NaN is no rate"), "{err}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    kind: ErrorKind,
    message: String,
    file: Option<PathBuf>,
    field: Option<String>,
    at: Option<(usize, usize)>,
}

impl ConfigError {
    /// A configuration refused for `message`.
    pub(super) fn refused(message: String) -> Self {
        Self {
            kind: ErrorKind::Refused,
            message,
            file: None,
            field: None,
            at: None,
        }
    }

    /// A file that could not be read.
    pub(super) fn read(file: &Path, err: &std::io::Error) -> Self {
        Self {
            kind: ErrorKind::Read,
            message: err.to_string(),
            file: Some(file.to_owned()),
            field: None,
            at: None,
        }
    }

    /// `err`, found reading the TOML `text`: its line and column, and the field there.
    pub(super) fn toml(text: &str, err: &toml::de::Error) -> Self {
        let span = err.span();
        Self {
            kind: ErrorKind::Invalid,
            message: err.message().trim_end().to_owned(),
            file: None,
            field: span.as_ref().and_then(|span| field_at(text, span)),
            at: span.map(|span| line_column(text, span.start)),
        }
    }

    /// The same error, found in `file`.
    pub(super) fn in_file(mut self, file: &Path) -> Self {
        self.file = Some(file.to_owned());
        self
    }

    /// What kind of failure this is.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// What is wrong, and what to do.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The file, when one was read.
    #[must_use]
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The field, as a dotted path of keys from the top of the file (`server.quota.rate`,
    /// `routes."/api".gate`, an array's item by its index: `server.chaos.faults[1].rate`);
    /// the section's for a rule between its fields.
    #[must_use]
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// The line, counted from 1.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        self.at.map(|(line, _)| line)
    }

    /// The column, in characters counted from 1.
    #[must_use]
    pub fn column(&self) -> Option<usize> {
        self.at.map(|(_, column)| column)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ErrorKind::Refused {
            f.write_str("reload refused: ")?;
        }
        if let Some(file) = &self.file {
            write!(f, "{}:", file.display())?;
        }
        if let Some((line, column)) = self.at {
            write!(f, "{line}:{column}:")?;
        }
        if self.file.is_some() || self.at.is_some() {
            f.write_str(" ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The line and column (from 1; the column in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |newline| newline + 1);
    (line, before[start..].chars().count() + 1)
}

/// The dotted path of the deepest key whose key or value holds `span`, if the text parses.
fn field_at(text: &str, span: &Range<usize>) -> Option<String> {
    let table = toml::de::DeTable::parse(text).ok()?;
    let mut path = Vec::new();
    walk(table.get_ref(), span.start, &mut path);
    (!path.is_empty()).then(|| path.join("."))
}

/// Pushes onto `path` the keys down to the deepest entry of `table` that holds `offset`;
/// whether one does.
fn walk(table: &toml::de::DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table {
        let holds = key.span().contains(&offset) || value.span().contains(&offset);
        path.push(written(key.get_ref()));
        let inner = value.get_ref().as_table();
        // A table given by a header (`[server.quota]`) may not span its own entries: look
        // inside it whatever its span.
        if inner.is_some_and(|inner| walk(inner, offset, path))
            || in_array(value.get_ref(), offset, path)
            || holds
        {
            return true;
        }
        path.pop();
    }
    false
}

/// When `value` is an array, adds to the last key of `path` the index of the item that holds
/// `offset` (`faults[1]`) and pushes the keys down inside it; whether an item does.
fn in_array(value: &toml::de::DeValue<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    let Some(items) = value.as_array() else {
        return false;
    };
    let Some(key) = path.pop() else {
        return false;
    };
    for (index, item) in items.iter().enumerate() {
        path.push(format!("{key}[{index}]"));
        // An array of tables (`[[server.chaos.faults]]`) may not span its entries either.
        let inner = item.get_ref().as_table();
        if inner.is_some_and(|inner| walk(inner, offset, path))
            || in_array(item.get_ref(), offset, path)
            || item.span().contains(&offset)
        {
            return true;
        }
        path.pop();
    }
    path.push(key);
    false
}

/// A key as it is written in a dotted path: bare when it can be, else quoted.
fn written(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}
