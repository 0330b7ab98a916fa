//! A semantic theme: widgets ask for `text`, `status(Status)` or `row(flag, selected)`, never for
//! colours. Themes are TOML files in `themes/`; NO_COLOR gives a monochrome theme.

use crate::reports::Status;
use color_eyre::eyre::{Result, WrapErr, eyre};
use ratatui::style::{Color, Modifier, Style};

const BUNDLED: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("high-contrast", include_str!("../../themes/high-contrast.toml")),
    ("colour-blind", include_str!("../../themes/colour-blind.toml")),
];

#[derive(Debug, Clone, serde::Deserialize)]
struct ThemeFile {
    name: String,
    /// The terminal background the theme is made for (its contrast is checked against it).
    #[serde(default)]
    #[allow(dead_code)]
    background: Option<String>,
    text: String,
    muted: String,
    accent: String,
    title: String,
    border: String,
    selected_fg: String,
    selected_bg: String,
    pass: String,
    warn: String,
    fail: String,
    bar: String,
    bar_alt: String,
    #[serde(default)]
    bold: bool,
}

#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    colored: bool,
    text: Color,
    muted: Color,
    accent: Color,
    title: Color,
    border: Color,
    selected_fg: Color,
    selected_bg: Color,
    pass: Color,
    warn: Color,
    fail: Color,
    bar: Color,
    bar_alt: Color,
    bold: bool,
}

fn color(s: &str) -> Result<Color> {
    s.parse::<Color>().map_err(|_| eyre!("'{s}' is not a colour name or #rrggbb"))
}

impl Theme {
    /// The theme without colour, as NO_COLOR asks: marks, bold, dim and underline only.
    pub fn monochrome(mut self) -> Theme {
        self.colored = false;
        self.name.push_str(" (NO_COLOR)");
        self
    }

    pub fn names() -> Vec<&'static str> {
        BUNDLED.iter().map(|(n, _)| *n).collect()
    }

    /// A bundled theme by name, or a TOML file by path. NO_COLOR wins over both.
    pub fn load(name_or_path: &str) -> Result<Theme> {
        let text = match BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            Some((_, t)) => t.to_string(),
            None => std::fs::read_to_string(name_or_path)
                .wrap_err_with(|| format!("theme '{name_or_path}': not one of {} and not a readable file", Self::names().join(", ")))?,
        };
        let f: ThemeFile = toml::from_str(&text).wrap_err_with(|| format!("theme '{name_or_path}'"))?;
        let mut t = Theme {
            name: f.name,
            colored: true,
            text: color(&f.text)?,
            muted: color(&f.muted)?,
            accent: color(&f.accent)?,
            title: color(&f.title)?,
            border: color(&f.border)?,
            selected_fg: color(&f.selected_fg)?,
            selected_bg: color(&f.selected_bg)?,
            pass: color(&f.pass)?,
            warn: color(&f.warn)?,
            fail: color(&f.fail)?,
            bar: color(&f.bar)?,
            bar_alt: color(&f.bar_alt)?,
            bold: f.bold,
        };
        if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            t = t.monochrome();
        }
        Ok(t)
    }

    fn fg(&self, c: Color) -> Style {
        let s = if self.colored { Style::new().fg(c) } else { Style::new() };
        if self.bold { s.add_modifier(Modifier::BOLD) } else { s }
    }

    pub fn text(&self) -> Style {
        if self.colored { Style::new().fg(self.text) } else { Style::new() }
    }
    pub(crate) fn muted(&self) -> Style {
        if self.colored { Style::new().fg(self.muted) } else { Style::new().add_modifier(Modifier::DIM) }
    }
    pub(crate) fn accent(&self) -> Style {
        self.fg(self.accent)
    }
    pub fn title(&self) -> Style {
        self.fg(self.title).add_modifier(Modifier::BOLD)
    }
    pub(crate) fn border(&self, focused: bool) -> Style {
        if focused {
            self.fg(self.accent)
        } else if self.colored {
            Style::new().fg(self.border)
        } else {
            Style::new()
        }
    }
    pub(crate) fn selected(&self) -> Style {
        if self.colored {
            Style::new().fg(self.selected_fg).bg(self.selected_bg).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    pub fn bar(&self, alt: bool) -> Style {
        self.fg(if alt { self.bar_alt } else { self.bar })
    }
    /// A pass, warn or fail mark; without colour, fail is bold and underlined so it still shows.
    pub fn status(&self, s: Status) -> Style {
        match s {
            Status::Pass => self.fg(self.pass),
            Status::Warn => self.fg(self.warn).add_modifier(Modifier::BOLD),
            Status::Fail => {
                self.fg(self.fail).add_modifier(Modifier::BOLD | if self.colored { Modifier::empty() } else { Modifier::UNDERLINED })
            }
            Status::Info => self.muted(),
        }
    }
    pub fn row(&self, flag: Option<Status>, selected: bool) -> Style {
        if selected {
            return self.selected();
        }
        match flag {
            Some(s) => self.status(s),
            None => self.text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_theme_loads() {
        for n in Theme::names() {
            let t = Theme::load(n).unwrap();
            assert!(t.name.starts_with(n));
        }
        assert!(Theme::load("no-such-theme").is_err());
    }

    /// sRGB of a colour as a terminal with xterm's default palette shows it.
    fn rgb(c: &str) -> (f64, f64, f64) {
        let named = [
            ("black", "#000000"),
            ("red", "#cd0000"),
            ("green", "#00cd00"),
            ("yellow", "#cdcd00"),
            ("blue", "#0000ee"),
            ("magenta", "#cd00cd"),
            ("cyan", "#00cdcd"),
            ("gray", "#e5e5e5"),
            ("darkgray", "#7f7f7f"),
            ("lightred", "#ff0000"),
            ("lightgreen", "#00ff00"),
            ("lightyellow", "#ffff00"),
            ("lightblue", "#5c5cff"),
            ("lightmagenta", "#ff00ff"),
            ("lightcyan", "#00ffff"),
            ("white", "#ffffff"),
        ];
        let hex = named.iter().find(|(n, _)| *n == c).map(|(_, h)| *h).unwrap_or(c);
        let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or_else(|_| panic!("{c} is not a colour the test knows"));
        ((v >> 16) as f64 / 255.0, ((v >> 8) & 0xff) as f64 / 255.0, (v & 0xff) as f64 / 255.0)
    }

    /// WCAG 2 contrast ratio of two colours.
    fn contrast(a: &str, b: &str) -> f64 {
        let lum = |c: &str| {
            let lin = |x: f64| if x <= 0.03928 { x / 12.92 } else { ((x + 0.055) / 1.055).powf(2.4) };
            let (r, g, b) = rgb(c);
            0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
        };
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_bundled_theme_keeps_its_text_readable_on_its_background() {
        assert!(contrast("gray", "#ffffff") < 4.5, "ANSI grey on white, the old light theme's muted text, fails the check");
        for (name, text) in BUNDLED {
            let f: ThemeFile = toml::from_str(text).unwrap();
            let bg = f.background.clone().unwrap_or_else(|| panic!("{name} names its background"));
            for (what, c) in
                [("text", &f.text), ("muted", &f.muted), ("pass", &f.pass), ("warn", &f.warn), ("fail", &f.fail), ("title", &f.title)]
            {
                let r = contrast(c, &bg);
                assert!(r >= 4.5, "{name}: {what} {c} on {bg} has a contrast of {r:.2}, under WCAG's 4.5");
            }
            let sel = contrast(&f.selected_fg, &f.selected_bg);
            assert!(sel >= 4.5, "{name}: the selected row's contrast is {sel:.2}");
        }
    }
}
