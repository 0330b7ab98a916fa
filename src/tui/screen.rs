//! The explorer's screens, as a type: every match over them is exhaustive, so a new screen is a
//! compile error everywhere it needs a case.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Screen {
    Overview,
    Explain,
    Baskets,
    Late,
    History,
    Promises,
    Trend,
    /// A foreign gold against the lab's (`tui --audit`).
    Audit,
}

impl Screen {
    /// In tab order.
    pub const ALL: [Screen; 8] =
        [Screen::Overview, Screen::Explain, Screen::Baskets, Screen::Late, Screen::History, Screen::Promises, Screen::Trend, Screen::Audit];

    pub fn name(self) -> &'static str {
        match self {
            Screen::Overview => "Overview",
            Screen::Explain => "Explain",
            Screen::Baskets => "Baskets",
            Screen::Late => "Late & quarantine",
            Screen::History => "History",
            Screen::Promises => "Promises",
            Screen::Trend => "Trend",
            Screen::Audit => "Audit",
        }
    }

    /// The tab label on a narrow terminal.
    pub fn short(self) -> &'static str {
        match self {
            Screen::Late => "Late",
            s => s.name(),
        }
    }

    /// The tab's label in the lab's words: on a model lab, the re-sent copies' screen is named
    /// for the model's entity ("Records" on a plant feed), not retail's baskets.
    pub fn label(self, entity: Option<&str>, wide: bool) -> String {
        match (self, entity) {
            (Screen::Baskets, Some(e)) if e != "basket" => {
                let mut chars = e.chars();
                chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect::<String>() + "s")
            }
            _ if wide => self.name().to_string(),
            _ => self.short().to_string(),
        }
    }

    /// The word in an export's file name.
    pub(crate) fn file_word(self) -> &'static str {
        match self {
            Screen::Overview => "overview",
            Screen::Explain => "explain",
            Screen::Baskets => "baskets",
            Screen::Late => "late",
            Screen::History => "history",
            Screen::Promises => "promises",
            Screen::Trend => "trend",
            Screen::Audit => "audit",
        }
    }

    /// The position in tab order, from 0.
    pub(crate) fn index(self) -> usize {
        Screen::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }

    pub fn next(self) -> Screen {
        Screen::ALL[(self.index() + 1) % Screen::ALL.len()]
    }

    pub fn prev(self) -> Screen {
        Screen::ALL[(self.index() + Screen::ALL.len() - 1) % Screen::ALL.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_and_prev_walk_every_screen_and_wrap() {
        let mut s = Screen::Overview;
        for want in Screen::ALL.iter().skip(1).chain([Screen::Overview].iter()) {
            s = s.next();
            assert_eq!(s, *want);
        }
        assert_eq!(Screen::Overview.prev(), Screen::Audit);
        assert_eq!(Screen::Promises.index(), 5);
    }
}
