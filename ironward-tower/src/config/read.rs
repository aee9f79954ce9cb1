//! Reading a [`Config`] from TOML, and writing it back.

use std::path::Path;

use super::error::ConfigError;
use super::file::Config;

impl Config {
    /// Reads the TOML `text`.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] of kind [`Invalid`](super::ErrorKind::Invalid) when `text` is no valid
    /// configuration: its message, the field and the line and column where it was found.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::config::Config;
    ///
    /// let config = Config::from_toml("[server]\ngate = 64\n").unwrap();
    /// assert_eq!(config.server.gate, Some(64));
    ///
    /// let err = Config::from_toml("[server]\ngate = 64\nlimiter = {}\n").unwrap_err();
    /// assert_eq!(err.field(), Some("server"));
    /// assert!(err.message().contains("`gate` and `limiter` are both set"), "{err}");
    /// ```
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|err| ConfigError::toml(text, &err))
    }

    /// Reads the TOML file at `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError`] when the file cannot be read, or is no valid configuration; its
    /// [`file`](ConfigError::file) is `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::read(path, &err))?;
        Self::from_toml(&text).map_err(|err| err.in_file(path))
    }

    /// The configuration as TOML, in the form it is read in: what a debug endpoint shows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::config::Config;
    ///
    /// let config = Config::from_toml("[server]\ngate = 64\ndeadline = \"1500ms\"\n").unwrap();
    /// let written = config.to_toml();
    /// assert!(written.contains("deadline = \"1500ms\""), "{written}");
    /// assert_eq!(Config::from_toml(&written).unwrap(), config);
    /// ```
    #[must_use]
    pub fn to_toml(&self) -> String {
        // Every value is a table, a string, a number or a bool that TOML holds, so this is
        // never an error; were it one, the text says so.
        toml::to_string(self).unwrap_or_else(|err| format!("# not written as TOML: {err}\n"))
    }
}
