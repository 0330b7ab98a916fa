//! The one key table: the hint bar, the help overlay and the dispatcher all read it, so a hint
//! can never drift from the real binding.

use super::screen::Screen;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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
    Reset,
    SplitByCountry,
    FilterCountry,
    Search,
    Copy,
    ExportCsv,
    ExportJson,
    ToggleMouse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
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

/// Where a binding applies: everywhere, or on named screens only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Screens(&'static [Screen]),
}

pub struct Binding {
    pub keys: &'static [Key],
    /// How the keys are written in hints and help.
    pub label: &'static str,
    pub action: Action,
    /// Short word for the hint bar; empty keeps it out of the bar (still in help).
    pub hint: &'static str,
    pub help: &'static str,
    pub scope: Scope,
}

use Key::{Char, Code, Ctrl};

pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[Char('q'), Ctrl('c')],
        label: "q",
        action: Action::Quit,
        hint: "quit",
        help: "quit (Ctrl-C too)",
        scope: Scope::Global,
    },
    Binding { keys: &[Char('?')], label: "?", action: Action::Help, hint: "help", help: "show or hide this help", scope: Scope::Global },
    Binding {
        keys: &[Char('l'), Code(KeyCode::Right)],
        label: "l/→",
        action: Action::NextDate,
        hint: "date",
        help: "next business date",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('h'), Code(KeyCode::Left)],
        label: "h/←",
        action: Action::PrevDate,
        hint: "",
        help: "previous business date",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char(':')],
        label: ":",
        action: Action::JumpToDate,
        hint: "go to date",
        help: "type a date (YYYY-MM-DD or MM-DD) and jump to it",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::Tab)],
        label: "Tab",
        action: Action::NextScreen,
        hint: "screen",
        help: "next screen (1-6 jump to a screen)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::BackTab)],
        label: "S-Tab",
        action: Action::PrevScreen,
        hint: "",
        help: "previous screen",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('1')],
        label: "1",
        action: Action::Screen(Screen::Overview),
        hint: "",
        help: "Overview: lateness and the per-country check",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('2')],
        label: "2",
        action: Action::Screen(Screen::Explain),
        hint: "",
        help: "Explain: missed versus double counted",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('3')],
        label: "3",
        action: Action::Screen(Screen::Baskets),
        hint: "",
        help: "Baskets: re-sent copies and the winner",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('4')],
        label: "4",
        action: Action::Screen(Screen::Late),
        hint: "",
        help: "Late & quarantine: rows that never reach gold",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('5')],
        label: "5",
        action: Action::Screen(Screen::History),
        hint: "",
        help: "History: every snapshot of the date",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('6')],
        label: "6",
        action: Action::Screen(Screen::Promises),
        hint: "",
        help: "Promises: pass, warn or fail",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('j'), Code(KeyCode::Down)],
        label: "j/↓",
        action: Action::RowDown,
        hint: "row",
        help: "next row",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('k'), Code(KeyCode::Up)],
        label: "k/↑",
        action: Action::RowUp,
        hint: "",
        help: "previous row",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::PageDown), Ctrl('d')],
        label: "PgDn",
        action: Action::PageDown,
        hint: "",
        help: "a screen of rows down (in a popup: a page)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::PageUp), Ctrl('u')],
        label: "PgUp",
        action: Action::PageUp,
        hint: "",
        help: "a screen of rows up (in a popup: a page)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::Home), Char('g')],
        label: "Home/g",
        action: Action::Top,
        hint: "",
        help: "the first row (in a popup: its first line)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::End), Char('G')],
        label: "End/G",
        action: Action::Bottom,
        hint: "",
        help: "the last row (in a popup: its last page)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::Enter)],
        label: "Enter",
        action: Action::Drill,
        hint: "open",
        help: "open what is behind the row: its baskets, its diff, the full cell",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Code(KeyCode::Esc)],
        label: "Esc",
        action: Action::Back,
        hint: "",
        help: "close a popup; cancel running work (DuckDB interrupt)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('v')],
        label: "v",
        action: Action::RetryV1,
        hint: "v1 retry",
        help: "run v1 again for the date: watch it double",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('r')],
        label: "r",
        action: Action::Rebuild,
        hint: "rebuild",
        help: "rebuild the date with v2 (preview, then confirm)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('U')],
        label: "U",
        action: Action::LandNext,
        hint: "next upload",
        help: "land the next upload and run v2 for it (asks first)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('C')],
        label: "C",
        action: Action::LandCorrection,
        hint: "",
        help: "land the next correction shipped with the world (a new version of a file), then run v2 for its upload",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('x')],
        label: "x",
        action: Action::CrashDemo,
        hint: "",
        help: "rebuild with an injected crash: nothing changes",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('b')],
        label: "b",
        action: Action::Rollback,
        hint: "roll back",
        help: "roll back to the selected snapshot (confirm)",
        scope: Scope::Screens(&[Screen::History]),
    },
    Binding { keys: &[Char('R')], label: "R", action: Action::Reset, hint: "", help: "reset the lab (confirm)", scope: Scope::Global },
    Binding {
        keys: &[Char('c')],
        label: "c",
        action: Action::SplitByCountry,
        hint: "by country",
        help: "split the lateness histogram by country",
        scope: Scope::Screens(&[Screen::Overview]),
    },
    Binding {
        keys: &[Char('f')],
        label: "f",
        action: Action::FilterCountry,
        hint: "country",
        help: "filter baskets by country (cycles)",
        scope: Scope::Screens(&[Screen::Baskets]),
    },
    Binding {
        keys: &[Char('/')],
        label: "/",
        action: Action::Search,
        // In the help only: the hint bar of every screen has no room for it at 80 columns.
        hint: "",
        help: "search the table (Baskets: keep the baskets whose basket_id or store holds it)",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('n')],
        label: "n",
        action: Action::NextMatch,
        hint: "",
        help: "the next row holding the search text",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('N')],
        label: "N",
        action: Action::PrevMatch,
        hint: "",
        help: "the previous row holding it",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('y')],
        label: "y",
        action: Action::Copy,
        hint: "copy id",
        help: "copy the basket_id to the clipboard (OSC 52)",
        scope: Scope::Screens(&[Screen::Baskets, Screen::Late]),
    },
    Binding {
        keys: &[Char('e')],
        label: "e",
        action: Action::ExportCsv,
        hint: "",
        help: "export the current view to CSV",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('E')],
        label: "E",
        action: Action::ExportJson,
        hint: "",
        help: "export the current view to JSON",
        scope: Scope::Global,
    },
    Binding {
        keys: &[Char('m')],
        label: "m",
        action: Action::ToggleMouse,
        hint: "",
        help: "turn mouse support on or off",
        scope: Scope::Global,
    },
];

impl Scope {
    pub fn applies(&self, screen: Screen) -> bool {
        match self {
            Scope::Global => true,
            Scope::Screens(s) => s.contains(&screen),
        }
    }
}

/// The action a key means on a screen.
pub fn action_for(ev: &KeyEvent, screen: Screen) -> Option<Action> {
    BINDINGS.iter().find(|b| b.scope.applies(screen) && b.keys.iter().any(|k| k.matches(ev))).map(|b| b.action)
}

/// The hint bar's entries for a screen, straight from the table.
pub fn hints(screen: Screen) -> Vec<(&'static str, &'static str)> {
    BINDINGS.iter().filter(|b| !b.hint.is_empty() && b.scope.applies(screen)).map(|b| (b.label, b.hint)).collect()
}

/// The help overlay's lines, straight from the table.
pub fn help_lines() -> Vec<(&'static str, String)> {
    BINDINGS
        .iter()
        .map(|b| {
            let scope = match b.scope {
                Scope::Global => String::new(),
                Scope::Screens(s) => format!(" [{}]", s.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")),
            };
            (b.label, format!("{}{scope}", b.help))
        })
        .collect()
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
}
