//! The one key table: the hint bar, the help overlay and the dispatcher all read it, so a hint
//! can never drift from the real binding.

use super::screen::Screen;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

mod table;
use Key::{Char, Code, Ctrl};
pub(crate) use table::BINDINGS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Action {
    Quit,
    Help,
    NextDate,
    PrevDate,
    JumpToDate,
    NextScreen,
    PrevScreen,
    Screen(Screen),
    RowDown,
    RowUp,
    PageDown,
    PageUp,
    Drill,
    Back,
    Rebuild,
    RetryV1,
    LandNext,
    LandCorrection,
    NextMatch,
    PrevMatch,
    Top,
    Bottom,
    CrashDemo,
    Rollback,
    Reopen,
    Reset,
    SplitByCountry,
    FilterCountry,
    Search,
    Copy,
    ColumnsLeft,
    ColumnsRight,
    SortNext,
    SortReverse,
    ExportCsv,
    ExportJson,
    ToggleMouse,
    /// In a question (a confirmation popup): yes, do it.
    Confirm,
    /// In a question: no, change nothing.
    Cancel,
    /// In a text field (go to a date, search): take what was typed.
    Submit,
    /// In a text field: close it, nothing taken.
    CloseField,
    /// In a text field: delete the character before the cursor.
    DeleteChar,
    /// In a text field: clear the line.
    ClearLine,
    /// In a text field: delete the last word.
    DeleteWord,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
}

impl Key {
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        match *self {
            Key::Char(c) => ev.code == KeyCode::Char(c) && !ev.modifiers.contains(KeyModifiers::CONTROL),
            Key::Ctrl(c) => ev.code == KeyCode::Char(c) && ev.modifiers.contains(KeyModifiers::CONTROL),
            Key::Code(k) => ev.code == k,
        }
    }
}

/// Where a binding applies: everywhere, on named screens only, or in a question (a confirmation
/// popup, where no screen's keys apply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Global,
    Screens(&'static [Screen]),
    Question,
    /// A text field (go to a date, search): its editing keys; any other printable key is text.
    Field,
}

pub(crate) struct Binding {
    pub keys: &'static [Key],
    /// How the keys are written in hints and help.
    pub label: &'static str,
    pub action: Action,
    /// Short word for the hint bar; empty keeps it out of the bar (still in help).
    pub hint: &'static str,
    pub help: &'static str,
    pub scope: Scope,
}

/// One binding as the explorer uses it: the table's, or with keys the config file rebinds.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    pub keys: Vec<Key>,
    pub label: String,
    pub action: Action,
    pub hint: &'static str,
    pub help: &'static str,
    pub scope: Scope,
}

/// The key table in effect: `BINDINGS` with the config file's overrides applied.
#[derive(Debug, Clone)]
pub struct KeyTable {
    bindings: Vec<Bound>,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            bindings: BINDINGS
                .iter()
                .map(|b| Bound {
                    keys: b.keys.to_vec(),
                    label: b.label.to_string(),
                    action: b.action,
                    hint: b.hint,
                    help: b.help,
                    scope: b.scope,
                })
                .collect(),
        }
    }
}

impl KeyTable {
    /// The table with `overrides` (action name, keys) applied: each replaces its action's keys.
    /// An unknown action, a key that does not parse, or a key left bound to two actions that
    /// can meet on one screen is an error.
    pub fn with_overrides(overrides: &[(String, Vec<String>)]) -> color_eyre::Result<KeyTable> {
        let mut table = KeyTable::default();
        for (name, keys) in overrides {
            let Some(b) = table.bindings.iter_mut().find(|b| action_name(b.action).as_deref() == Some(name.as_str())) else {
                let names: Vec<String> = table.bindings.iter().filter_map(|b| action_name(b.action)).collect();
                color_eyre::eyre::bail!("{name} is not an action the explorer binds; the actions are {}", names.join(", "));
            };
            if keys.is_empty() {
                color_eyre::eyre::bail!("{name} = []: an action needs at least one key");
            }
            b.keys = keys.iter().map(|k| parse_key(k)).collect::<color_eyre::Result<_>>()?;
            b.label = b.keys.iter().map(Key::label).collect::<Vec<_>>().join("/");
        }
        for (i, a) in table.bindings.iter().enumerate() {
            for b in &table.bindings[i + 1..] {
                if let Some(k) = a.keys.iter().find(|k| b.keys.contains(k))
                    && a.scope.meets(&b.scope)
                {
                    color_eyre::eyre::bail!(
                        "{} is bound to both {} and {}; rebind one of them",
                        k.label(),
                        action_name(a.action).unwrap_or_else(|| a.label.clone()),
                        action_name(b.action).unwrap_or_else(|| b.label.clone())
                    );
                }
            }
        }
        Ok(table)
    }

    pub(crate) fn bindings(&self) -> &[Bound] {
        &self.bindings
    }

    /// The action a key means on a screen.
    pub fn action_for(&self, ev: &KeyEvent, screen: Screen) -> Option<Action> {
        self.action_where(ev, |s| s.applies(screen))
    }

    /// What a key means in a question: Confirm, Cancel, or nothing.
    pub fn answer_for(&self, ev: &KeyEvent) -> Option<Action> {
        self.action_where(ev, |s| *s == Scope::Question)
    }

    /// What a key means in a text field: one of its editing actions, or nothing (then a printable
    /// key is text).
    pub fn edit_for(&self, ev: &KeyEvent) -> Option<Action> {
        self.action_where(ev, |s| *s == Scope::Field)
    }

    /// The action of the first binding whose scope `in_scope` takes and whose keys hold `ev`.
    fn action_where(&self, ev: &KeyEvent, in_scope: impl Fn(&Scope) -> bool) -> Option<Action> {
        self.bindings.iter().find(|b| in_scope(&b.scope) && b.keys.iter().any(|k| k.matches(ev))).map(|b| b.action)
    }

    /// A question's last line, from the table: `y: land   n/Esc: cancel`.
    pub fn answers(&self, verb: &str) -> String {
        format!("{}: {verb}   {}: cancel", self.label_of(Action::Confirm), self.label_of(Action::Cancel))
    }

    /// The hint bar's entries for a screen, straight from the table.
    pub fn hints(&self, screen: Screen) -> Vec<(&str, &'static str)> {
        self.bindings.iter().filter(|b| !b.hint.is_empty() && b.scope.applies(screen)).map(|b| (b.label.as_str(), b.hint)).collect()
    }

    /// The help overlay's lines, straight from the table.
    pub fn help_lines(&self) -> Vec<(&str, String)> {
        self.bindings
            .iter()
            .map(|b| {
                let scope = match b.scope {
                    Scope::Global => String::new(),
                    Scope::Screens(s) => format!(" [{}]", s.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")),
                    Scope::Question => " [in a question]".to_string(),
                    Scope::Field => " [in a text field]".to_string(),
                };
                (b.label.as_str(), format!("{}{scope}", b.help))
            })
            .collect()
    }

    /// How the keys of `action` are written (for messages that name a key).
    pub(crate) fn label_of(&self, action: Action) -> &str {
        self.bindings.iter().find(|b| b.action == action).map(|b| b.label.as_str()).unwrap_or("?")
    }
}

impl Scope {
    pub fn applies(&self, screen: Screen) -> bool {
        match self {
            Scope::Global => true,
            Scope::Screens(s) => s.contains(&screen),
            Scope::Question | Scope::Field => false,
        }
    }

    /// Whether two scopes can be in force at once (a question's keys only meet each other).
    fn meets(&self, other: &Scope) -> bool {
        match (self, other) {
            (Scope::Question, Scope::Question) | (Scope::Field, Scope::Field) => true,
            (Scope::Question | Scope::Field, _) | (_, Scope::Question | Scope::Field) => false,
            (Scope::Global, _) | (_, Scope::Global) => true,
            (Scope::Screens(a), Scope::Screens(b)) => a.iter().any(|s| b.contains(s)),
        }
    }
}

/// The name of an action in the config file's `[keys]`: `LandNext` is `land_next`. The screen
/// keys (1-6) are not renamed.
pub(crate) fn action_name(action: Action) -> Option<String> {
    let serde_json::Value::String(name) = serde_json::to_value(action).ok()? else { return None };
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    Some(out)
}

/// A key as the config file writes it: one character (`U`), `ctrl-x`, or a named key (`tab`,
/// `backtab`, `enter`, `esc`, `space`, `left`, `right`, `up`, `down`, `pageup`, `pagedown`,
/// `home`, `end`, `backspace`, `delete`, `f1`..`f12`).
pub(crate) fn parse_key(text: &str) -> color_eyre::Result<Key> {
    let mut chars = text.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_control() {
            color_eyre::eyre::bail!("a control character is not a key; write ctrl-x");
        }
        return Ok(Char(c));
    }
    let lower = text.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("ctrl-") {
        let mut cs = rest.chars();
        return match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => Ok(Ctrl(c)),
            _ => color_eyre::eyre::bail!("\"{text}\": ctrl- takes one letter or digit (ctrl-d)"),
        };
    }
    Ok(match lower.as_str() {
        "tab" => Code(KeyCode::Tab),
        "backtab" | "shift-tab" => Code(KeyCode::BackTab),
        "enter" => Code(KeyCode::Enter),
        "esc" | "escape" => Code(KeyCode::Esc),
        "space" => Char(' '),
        "left" => Code(KeyCode::Left),
        "right" => Code(KeyCode::Right),
        "up" => Code(KeyCode::Up),
        "down" => Code(KeyCode::Down),
        "pageup" | "pgup" => Code(KeyCode::PageUp),
        "pagedown" | "pgdn" => Code(KeyCode::PageDown),
        "home" => Code(KeyCode::Home),
        "end" => Code(KeyCode::End),
        "backspace" => Code(KeyCode::Backspace),
        "delete" | "del" => Code(KeyCode::Delete),
        f if f.starts_with('f') && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) => {
            Code(KeyCode::F(f[1..].parse().unwrap_or(1)))
        }
        _ => color_eyre::eyre::bail!("\"{text}\" is not a key: write one character, ctrl-x, or a key name such as pagedown"),
    })
}

impl Key {
    /// How the key is written in hints and help.
    pub fn label(&self) -> String {
        match *self {
            Char(' ') => "Space".into(),
            Char(c) => c.to_string(),
            Ctrl(c) => format!("Ctrl-{c}"),
            Code(KeyCode::Left) => "←".into(),
            Code(KeyCode::Right) => "→".into(),
            Code(KeyCode::Up) => "↑".into(),
            Code(KeyCode::Down) => "↓".into(),
            Code(KeyCode::PageDown) => "PgDn".into(),
            Code(KeyCode::PageUp) => "PgUp".into(),
            Code(KeyCode::BackTab) => "S-Tab".into(),
            Code(KeyCode::F(n)) => format!("F{n}"),
            Code(k) => format!("{k:?}"),
        }
    }
}

/// The table the explorer runs with: installed once from the config file, else the default.
static ACTIVE: std::sync::OnceLock<KeyTable> = std::sync::OnceLock::new();

/// Makes `table` the explorer's key table (the first call wins; later ones are ignored).
pub fn install(table: KeyTable) {
    let _ = ACTIVE.set(table);
}

pub(crate) fn active() -> &'static KeyTable {
    ACTIVE.get_or_init(KeyTable::default)
}

/// The action a key means on a screen, by the table in effect.
pub fn action_for(ev: &KeyEvent, screen: Screen) -> Option<Action> {
    active().action_for(ev, screen)
}

/// The hint bar's entries for a screen, by the table in effect.
pub fn hints(screen: Screen) -> Vec<(&'static str, &'static str)> {
    active().hints(screen)
}

/// The hints that fit in `width` columns, in the table's order, and whether some were left out
/// (the bar then ends with the help key and "more": every key of the screen is in the help).
pub fn fit_hints(screen: Screen, width: usize) -> (Vec<(&'static str, &'static str)>, bool) {
    use unicode_width::UnicodeWidthStr;
    let all = hints(screen);
    let cost = |(l, h): &(&str, &str)| 2 + l.width() + h.width();
    if all.iter().map(cost).sum::<usize>() <= width {
        return (all, false);
    }
    let more = 2 + active().label_of(Action::Help).width() + "more".len();
    let mut used = more;
    let shown: Vec<_> = all
        .into_iter()
        .take_while(|h| {
            used += cost(h);
            used <= width
        })
        .collect();
    (shown, true)
}

/// The help overlay's lines, by the table in effect.
pub fn help_lines() -> Vec<(&'static str, String)> {
    active().help_lines()
}

/// A lab's words for what the table says in retail's (a basket, its basket_id, a country): the
/// hints and help of a model lab name its entity, key and part of a date.
pub struct Words<'a> {
    pub entity: &'a str,
    pub key: &'a str,
    /// What names a part of a date (retail: country); None: the model has none.
    pub part: Option<&'a str>,
}

impl Words<'_> {
    /// `text` in these words, word by word (`basket_id`, `baskets`, `basket`, `country`, …).
    pub fn say(&self, text: &str) -> String {
        let part = self.part.unwrap_or("part");
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            match word.as_str() {
                "basket_id" => out.push_str(self.key),
                "basket" => out.push_str(self.entity),
                "baskets" | "Baskets" => {
                    out.push_str(self.entity);
                    out.push('s');
                }
                "country" => out.push_str(part),
                "countries" => {
                    out.push_str(part);
                    out.push('s');
                }
                w => out.push_str(w),
            }
            word.clear();
        };
        for c in text.chars() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hint_and_help_line_is_a_real_binding() {
        for (label, _) in hints(Screen::Overview) {
            let b = BINDINGS.iter().find(|b| b.label == label).unwrap();
            let ev = match b.keys[0] {
                Key::Char(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                Key::Ctrl(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
                Key::Code(k) => KeyEvent::new(k, KeyModifiers::NONE),
            };
            assert_eq!(action_for(&ev, Screen::Overview), Some(b.action), "hint {label}");
        }
        assert_eq!(help_lines().len(), BINDINGS.len());
    }

    #[test]
    fn vim_keys_and_arrows_both_work() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(action_for(&k(KeyCode::Char('j')), Screen::Overview), Some(Action::RowDown));
        assert_eq!(action_for(&k(KeyCode::Down), Screen::Overview), Some(Action::RowDown));
        assert_eq!(action_for(&k(KeyCode::Char('l')), Screen::Overview), Some(Action::NextDate));
        assert_eq!(action_for(&k(KeyCode::Right), Screen::Overview), Some(Action::NextDate));
        assert_eq!(action_for(&k(KeyCode::Char('b')), Screen::Overview), None, "roll back only on History");
        assert_eq!(action_for(&k(KeyCode::Char('b')), Screen::History), Some(Action::Rollback));
    }

    #[test]
    fn the_config_file_rebinds_a_key_and_the_hints_and_help_follow() {
        let k = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let t = KeyTable::with_overrides(&[("land_next".into(), vec!["L".into(), "f9".into()]), ("quit".into(), vec!["ctrl-q".into()])])
            .unwrap();
        assert_eq!(t.action_for(&k(KeyCode::Char('L')), Screen::Overview), Some(Action::LandNext));
        assert_eq!(t.action_for(&k(KeyCode::F(9)), Screen::Overview), Some(Action::LandNext));
        assert_eq!(t.action_for(&k(KeyCode::Char('U')), Screen::Overview), None, "the old key is free");
        assert_eq!(t.action_for(&KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL), Screen::Overview), Some(Action::Quit));
        assert!(t.hints(Screen::Overview).contains(&("L/F9", "next upload")), "{:?}", t.hints(Screen::Overview));
        assert!(t.help_lines().iter().any(|(l, h)| *l == "Ctrl-q" && h.starts_with("quit")));
        // The default table has no key bound twice where both bindings apply.
        KeyTable::with_overrides(&[]).unwrap();
        // Swapping two keys works when both are rebound; taking another's key does not.
        KeyTable::with_overrides(&[("retry_v1".into(), vec!["r".into()]), ("rebuild".into(), vec!["v".into()])]).unwrap();
        let e = KeyTable::with_overrides(&[("retry_v1".into(), vec!["r".into()])]).unwrap_err().to_string();
        assert!(e.contains("r is bound to both"), "{e}");
        assert!(KeyTable::with_overrides(&[("quit".into(), vec!["ctrl-".into()])]).is_err());
        assert!(KeyTable::with_overrides(&[("screen".into(), vec!["z".into()])]).is_err(), "the screen keys are not named");
    }
}
