//! The config file: `$RECOUNT_CONFIG`, else `$XDG_CONFIG_HOME/recount/config.toml`, else
//! `~/.config/recount/config.toml`. It sets the explorer's theme and mouse, the lateness window's
//! default, and rebinds the explorer's keys. Every effective value knows where it came from: a
//! flag beats an environment variable, which beats the file, which beats the built-in default.
//! `recount config` prints them.

use crate::reports::{Cell, Report, Table};
use color_eyre::eyre::{Result, WrapErr, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the file may hold. A name it does not know is an error, not a setting quietly ignored.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    theme: Option<String>,
    mouse: Option<bool>,
    late_days: Option<u32>,
    /// The memory budget: `2GB`, `512MiB`, a number of bytes.
    memory: Option<String>,
    #[serde(default)]
    keys: BTreeMap<String, KeyList>,
}

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    fn keys(&self) -> Vec<String> {
        match self {
            KeyList::One(k) => vec![k.clone()],
            KeyList::Many(ks) => ks.clone(),
        }
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum SettingSource {
    #[default]
    Default,
    File(PathBuf),
    Env(String),
    Flag(String),
}

impl std::fmt::Display for SettingSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingSource::Default => write!(f, "default"),
            SettingSource::File(p) => write!(f, "{}", p.display()),
            SettingSource::Env(v) => write!(f, "environment {v}"),
            SettingSource::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Setting<T> {
    pub value: T,
    pub source: SettingSource,
}

#[cfg(test)]
impl<T> Setting<T> {
    /// The flag's value when one was given, else this.
    fn or_flag(self, flag: Option<T>, name: &str) -> Setting<T> {
        match flag {
            Some(value) => Setting { value, source: SettingSource::Flag(name.to_string()) },
            None => self,
        }
    }
}

/// The effective settings, before any flag of the command line.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Config {
    /// The file read (or that would be read: `found` says whether it exists).
    pub path: PathBuf,
    pub found: bool,
    pub theme: Setting<String>,
    pub mouse: Setting<bool>,
    pub late_days: Setting<u32>,
    /// The memory budget in bytes, for DuckDB, the recount and the parser together.
    pub memory: Setting<u64>,
    /// The file's key overrides: action name, keys.
    pub keys: Vec<(String, Vec<String>)>,
}

/// The config file's path: `$RECOUNT_CONFIG`, else under `$XDG_CONFIG_HOME` or `~/.config`.
pub fn path() -> PathBuf {
    if let Some(p) = crate::env::var("RECOUNT_CONFIG") {
        return PathBuf::from(p);
    }
    let base = crate::env::var("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::env::var("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("recount").join("config.toml")
}

/// Reads the config file (if there is one) and the environment.
pub fn load() -> Result<Config> {
    load_from(&path())
}

/// The config file is small; anything larger is not one.
const MAX_BYTES: u64 = 1 << 20;

pub(crate) fn load_from(path: &Path) -> Result<Config> {
    let found = path.is_file();
    let file: File = if found {
        let len = std::fs::metadata(path)?.len();
        if len > MAX_BYTES {
            bail!("the config file {} is {len} bytes; a config file is at most {MAX_BYTES}", path.display());
        }
        let text = std::fs::read_to_string(path).wrap_err_with(|| format!("reading the config file {}", path.display()))?;
        toml::from_str(&text).map_err(|e| {
            // One line: where, and what is wrong (toml's own text draws the line over several).
            let at = e.span().map(|s| {
                let before = &text[..s.start.min(text.len())];
                format!(
                    "line {}, column {}: ",
                    before.matches('\n').count() + 1,
                    before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1
                )
            });
            color_eyre::eyre::eyre!("the config file {}: {}{}", path.display(), at.unwrap_or_default(), e.message().replace('\n', " "))
        })?
    } else {
        File::default()
    };
    let from_file = |present: bool| if present { SettingSource::File(path.to_path_buf()) } else { SettingSource::Default };
    let mut theme = Setting { value: "dark".to_string(), source: from_file(file.theme.is_some()) };
    if let Some(t) = &file.theme {
        theme.value = t.clone();
    }
    if let Some(t) = std::env::var("RECOUNT_THEME").ok().filter(|t| !t.is_empty()) {
        theme = Setting { value: t, source: SettingSource::Env("RECOUNT_THEME".into()) };
    }
    let late_days = match file.late_days {
        Some(n) if n > crate::rules::MAX_LATE_DAYS => {
            bail!("the config file {}: late_days = {n} is more than {}", path.display(), crate::rules::MAX_LATE_DAYS)
        }
        Some(n) => Setting { value: n, source: from_file(true) },
        None => Setting { value: crate::rules::DEFAULT_LATE_DAYS, source: SettingSource::Default },
    };
    let mouse = Setting { value: file.mouse.unwrap_or(true), source: from_file(file.mouse.is_some()) };
    let mut memory = Setting { value: crate::store::default_memory_budget(), source: SettingSource::Default };
    if let Some(m) = &file.memory {
        let value =
            crate::store::parse_size(m).map_err(|e| color_eyre::eyre::eyre!("the config file {}: memory = {m:?}: {e}", path.display()))?;
        memory = Setting { value, source: from_file(true) };
    }
    if let Some(m) = std::env::var("RECOUNT_MEMORY").ok().filter(|m| !m.is_empty()) {
        let value = crate::store::parse_size(&m).map_err(|e| color_eyre::eyre::eyre!("RECOUNT_MEMORY={m:?}: {e}"))?;
        memory = Setting { value, source: SettingSource::Env("RECOUNT_MEMORY".into()) };
    }
    // The explorer's key table checks these (`tui::keys::KeyTable::with_overrides`); the command
    // line does so as it loads the file, so a bad override is an error before any command runs.
    let keys: Vec<(String, Vec<String>)> = file.keys.iter().map(|(k, v)| (k.clone(), v.keys())).collect();
    Ok(Config { path: path.to_path_buf(), found, theme, mouse, late_days, memory, keys })
}

/// `recount config`: each effective value and where it came from, and the explorer's keys.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ConfigReport {
    pub path: PathBuf,
    pub found: bool,
    pub settings: Vec<SettingRow>,
    pub keys: Vec<KeyRow>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SettingRow {
    pub setting: String,
    pub value: String,
    pub source: SettingSource,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct KeyRow {
    pub action: String,
    pub keys: String,
    pub source: SettingSource,
}

impl ConfigReport {
    /// `keys`: the explorer's effective bindings, (action name, keys), in the key table's order.
    /// `memory`: the budget in effect (a flag beats the environment and the file).
    pub fn new(
        config: &Config,
        lab: Setting<PathBuf>,
        color: Setting<String>,
        memory: Setting<u64>,
        keys: Vec<(String, String)>,
    ) -> ConfigReport {
        let row =
            |setting: &str, value: String, source: &SettingSource| SettingRow { setting: setting.into(), value, source: source.clone() };
        let settings = vec![
            row("lab", lab.value.display().to_string(), &lab.source),
            row("theme", config.theme.value.clone(), &config.theme.source),
            row("mouse", config.mouse.value.to_string(), &config.mouse.source),
            row("late_days", config.late_days.value.to_string(), &config.late_days.source),
            row("memory", format!("{} MiB", memory.value >> 20), &memory.source),
            row("color", color.value, &color.source),
        ];
        let keys = keys
            .into_iter()
            .map(|(action, keys)| {
                let source = if config.keys.iter().any(|(k, _)| *k == action) {
                    SettingSource::File(config.path.clone())
                } else {
                    SettingSource::Default
                };
                KeyRow { action, keys, source }
            })
            .collect();
        ConfigReport { path: config.path.clone(), found: config.found, settings, keys }
    }
}

impl ConfigReport {
    /// DuckDB's limits on the lab: (reports, bulk, the rows of its largest date they follow).
    pub(crate) fn duckdb_limits(&mut self, (reports, bulk, rows): (u64, u64, u64)) {
        self.settings.push(SettingRow {
            setting: "duckdb".into(),
            value: format!(
                "{} MiB for reports, {} MiB for bulk work (the lab's largest date: {} rows)",
                reports >> 20,
                bulk >> 20,
                crate::money::format_count(i64::try_from(rows).unwrap_or(i64::MAX))
            ),
            source: SettingSource::Default,
        });
    }
}

impl Report for ConfigReport {
    fn kind(&self) -> &'static str {
        "config"
    }
    fn headline(&self) -> String {
        format!("config file {} ({})", self.path.display(), if self.found { "read" } else { "not there: every value is a default" })
    }

    fn tables(&self) -> Vec<Table> {
        let mut settings = Table::new("settings", &[("setting", "setting"), ("value", "value"), ("source", "source")]);
        for s in &self.settings {
            settings.push(vec![Cell::text(&s.setting), Cell::text(&s.value), Cell::text(s.source.to_string())]);
        }
        let mut keys = Table::new("explorer keys", &[("action", "action"), ("keys", "keys"), ("source", "source")]);
        for k in &self.keys {
            keys.push(vec![Cell::text(&k.action), Cell::text(&k.keys), Cell::text(k.source.to_string())]);
        }
        vec![settings, keys]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn the_file_sets_values_and_says_so_and_a_missing_file_is_all_defaults() {
        let (_d, p) = write("late_days = 5\nmouse = false\n[keys]\nland_next = \"L\"\n");
        let c = load_from(&p).unwrap();
        assert_eq!(c.late_days, Setting { value: 5, source: SettingSource::File(p.clone()) });
        assert_eq!(c.mouse, Setting { value: false, source: SettingSource::File(p.clone()) });
        assert_eq!(c.keys, vec![("land_next".to_string(), vec!["L".to_string()])]);
        let none = load_from(&p.with_file_name("absent.toml")).unwrap();
        assert!(!none.found);
        assert_eq!(none.late_days, Setting { value: crate::rules::DEFAULT_LATE_DAYS, source: SettingSource::Default });
        assert_eq!(none.mouse.source, SettingSource::Default);
        // A flag beats the file.
        assert_eq!(
            c.late_days.clone().or_flag(Some(1), "--late-days"),
            Setting { value: 1, source: SettingSource::Flag("--late-days".into()) }
        );
    }

    #[test]
    fn sizes_read_as_people_write_them_in_whole_bytes() {
        assert_eq!(crate::store::parse_size("2GB"), Ok(2 << 30));
        assert_eq!(crate::store::parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(crate::store::parse_size("512 MB"), Ok(512 << 20));
        assert_eq!(crate::store::parse_size("800mib"), Ok(800 << 20));
        assert_eq!(crate::store::parse_size("20000000"), Ok(20_000_000));
        for bad in ["", "GB", "2 parsecs", "1..5GB", "-1GB", "1.1234567GB"] {
            assert!(crate::store::parse_size(bad).unwrap_err().contains("not a size"), "{bad}");
        }
        assert!(crate::store::parse_size("1MB").unwrap_err().contains("16 MiB"));
        let (_d, p) = write("memory = \"3GB\"\n");
        assert_eq!(load_from(&p).unwrap().memory, Setting { value: 3 << 30, source: SettingSource::File(p.clone()) });
        let (_d, p) = write("memory = \"lots\"\n");
        assert!(format!("{:#}", load_from(&p).unwrap_err()).contains("memory = \"lots\""));
    }

    #[test]
    fn a_bad_file_is_a_clear_error_naming_it() {
        for (text, says) in [
            ("colour = \"red\"\n", "unknown field"),
            ("late_days = 3\nthem = \"light\"\n", "line 2, column 1: unknown field `them`"),
            ("late_days = 400\n", "more than"),
            ("late_days = \"two\"\n", "line 1, column 13: invalid type"),
        ] {
            let (_d, p) = write(text);
            let e = format!("{:#}", load_from(&p).unwrap_err());
            assert!(e.contains(&p.display().to_string()) && e.contains(says), "{text:?}: {e}");
        }
    }
}
