//! Render tests on ratatui's TestBackend: every screen, its text, and the style of a highlighted
//! disagreement. The app is loaded through the same functions the background worker uses.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that unwraps fails, as it should

mod common;

use recount::store::TriggerKind;

use common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use recount::lake::{land, v1, v2};
use recount::tui::app::{App, InputKind};
use recount::tui::keys::{self, Action};
use recount::tui::screen::Screen;
use recount::tui::worker::{Reply, load_view};

fn text(buf: &Buffer) -> String {
    let mut s = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

fn render(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    recount::tui::frame(&mut t, app).unwrap();
    t.backend().buffer().clone()
}

/// A lab with eight uploads landed, v1 run once per day (twice for one) and v2 per upload.
fn loaded_app(dir: &std::path::Path) -> (recount::lake::Lab, App, chrono::NaiveDate) {
    let ups = uploads(small_world());
    let mut lab = open_lab(dir);
    land::land(&mut lab, small_world(), &ups[..8]).unwrap();
    for &u in &ups[..8] {
        v1::run(&lab, u, None).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    let d = ups[4];
    v1::run(&lab, d, None).unwrap();
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    let snap = recount::reports::overview::overview(&lab, small_world()).unwrap();
    let view = load_view(&lab, d).unwrap();
    app.on_reply(Reply::Loaded(Box::new(snap), Some(std::sync::Arc::new(view))));
    (lab, app, d)
}

/// The worker's server on `lab`, landing from `world`, as the explorer runs it.
fn server_on(lab: recount::lake::Lab, world: &std::path::Path) -> recount::tui::worker::Server {
    let setup = recount::tui::worker::Setup {
        lab_dir: lab.root.clone(),
        world: world.to_path_buf(),
        bootstrap: false,
        late_days: recount::rules::DEFAULT_LATE_DAYS,
        warehouse: None,
        audit: None,
    };
    recount::tui::worker::Server::new(lab, setup)
}

/// The server on the lab a first run builds from the bundled sample world.
fn sample_server(dir: &std::path::Path) -> recount::tui::worker::Server {
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let mut lab = open_lab(dir);
    assert!(recount::lake::bootstrap::fill_if_empty(&mut lab, &sample).unwrap().is_some_and(|f| f.held.is_empty()));
    server_on(lab, &sample)
}

#[test]
fn every_screen_renders_its_report_at_120x40_and_80x24() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    let expect: [&[&str]; 7] = [
        &["lateness", "per country", "v2 gold", "recompute", "GB", "IN", "SG", "£"],
        &["missed", "double counted", "holds"],
        &["re-sent basket", "which copy counts", "won: "],
        &["beyond the 2-day window", "quarantine"],
        &["history of", "added from upload", "at each version of the date"],
        &["completeness", "uniqueness", "correctness", "timeliness", "consistency"],
        &["revenue per business date", "v1 spikes on", "recompute", "█ v1", "• v2 gold"],
    ];
    for (screen, words) in Screen::ALL.into_iter().zip(expect) {
        app.update(Action::Screen(screen));
        let screen_text = text(&render(&mut app, 120, 40));
        assert!(screen_text.contains(&d.format("%m-%d").to_string()), "navigator shows the date");
        for w in words {
            assert!(screen_text.contains(w), "screen {} lacks '{w}':\n{screen_text}", screen.name());
        }
        // The hint bar comes from the key table (those that fit at 120 columns; the rest in `? more`).
        for (label, hint) in keys::fit_hints(screen, 120).0 {
            if label.len() <= 2 && hint.len() <= 6 {
                assert!(screen_text.contains(&format!("{label} {hint}")), "hint '{label} {hint}' missing on {}", screen.name());
            }
        }
        let small = text(&render(&mut app, 80, 24));
        assert!(small.contains(screen.short()), "80x24 still shows the tab");
        // And the screen's table, its first (pinned) column's header in view, and every line fits.
        if let Some(t) = app.current_table() {
            let first = &t.columns[0].label;
            assert!(small.contains(first.as_str()), "{} at 80x24 shows its '{first}' column:\n{small}", screen.name());
        }
        use unicode_width::UnicodeWidthStr;
        assert!(small.lines().all(|l| l.width() <= 80), "{} at 80x24:\n{small}", screen.name());
    }
    app.update(Action::Help);
    let help = text(&render(&mut app, 120, 40));
    for (label, line) in keys::help_lines().into_iter().take(10) {
        assert!(help.contains(label) && help.contains(&line[..line.len().min(20)]), "help lacks {label}: {line}");
    }
}

#[test]
fn a_disagreement_is_highlighted_in_its_status_style_and_v1_s_gap_puts_no_mark_beside_match() {
    let dir = tempdir();
    let (lab, mut app, d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Overview));
    app.update(Action::RowDown); // move the selection off the first row
    let gb_row = |app: &mut App| {
        let buf = render(app, 120, 40);
        let screen = text(&buf);
        let y = screen.lines().position(|l| l.contains("GB ") && l.contains('£')).expect("GB row");
        let line = screen.lines().nth(y).unwrap().to_string();
        let x = line[..line.find("GB ").unwrap()].chars().count() as u16;
        (buf[(x, y as u16)].fg, line, screen)
    };
    // v1 ran twice for this date and v2 matches the recompute: the row says `match`, with no mark
    // beside it; v1's gap is its own column.
    let (fg, line, screen) = gb_row(&mut app);
    assert!(line.contains("match") && !line[..line.find("GB ").unwrap()].contains('!'), "no v1 mark beside match: {line}");
    assert_eq!(fg, app.theme.text().fg.unwrap(), "{line}");
    // The navigator still marks v1's gap for the date: ✓ closed or p provisional, then v1's mark.
    let nav: Vec<&str> = screen.lines().filter(|l| l.contains(" p") || l.contains(" ✓")).collect();
    assert!(nav.iter().any(|l| l.contains('✓')) && nav.iter().any(|l| l.contains("!")), "{screen}");
    assert!(!screen.contains('≠'), "no mark is told apart by colour alone:\n{screen}");
    // A difference the rules do not explain is a failure: the fail colour, and its mark.
    lab.store()
        .connection_for_tests()
        .execute_batch("UPDATE recompute.daily_store_sales SET revenue_minor = revenue_minor + 1 WHERE country = 'GB'")
        .unwrap();
    app.on_reply(Reply::DateLoaded(std::sync::Arc::new(load_view(&lab, d).unwrap())));
    let (fg, line, _) = gb_row(&mut app);
    let fail = app.theme.status(recount::reports::Status::Fail);
    assert_eq!(fg, fail.fg.unwrap(), "the disagreeing GB row is drawn in the fail colour: {line}");
    assert_ne!(fail.fg, app.theme.text().fg);
    assert!(line[..line.find("GB ").unwrap()].trim_end().ends_with('✗') && line.contains("MISMATCH"), "{line}");
}

#[test]
fn columns_scroll_with_the_first_one_pinned_and_the_table_sorts_by_any_column() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Overview));
    let title = |app: &mut App| text(&render(app, 80, 24)).lines().find(|l| l.contains("per country")).unwrap().to_string();
    let header = |app: &mut App| {
        text(&render(app, 80, 24)).lines().find(|l| l.contains("country") && !l.contains("per country")).unwrap().to_string()
    };
    let first = title(&mut app);
    let hidden: usize =
        first.split("+").nth(1).and_then(|t| t.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{first}"));
    assert!(first.contains("col ›") && !first.contains('‹'), "{first}");
    let before = header(&mut app);
    app.update(Action::ColumnsRight);
    let moved = title(&mut app);
    assert!(moved.contains("‹ 1 col"), "{moved}");
    let after = header(&mut app);
    assert!(after.contains("country"), "the first column stays: {after}");
    assert_ne!(before, after, "another column came into view");
    // Scrolled on, a column at a time, until the last one is in view: then `>` says so and stops.
    let mut moves = 1;
    for _ in 0..20 {
        app.update(Action::ColumnsRight);
        if app.message.contains("the last column is in view") {
            break;
        }
        moves += 1;
        title(&mut app);
    }
    let end = title(&mut app);
    assert!(!end.contains("col ›") && end.contains(&format!("‹ {moves} col")), "scrolls exactly to the last column: {end}");
    assert!(hidden >= 1 && moves >= 1, "there was something to scroll to");
    app.update(Action::ColumnsLeft);
    assert!(title(&mut app).contains(&format!("‹ {} col", moves - 1)));

    // Sorting: by the first column up, then reversed; the cursor stays on its row.
    let countries = |app: &mut App| -> Vec<String> {
        text(&render(app, 120, 40))
            .lines()
            .filter(|l| l.contains('£') || l.contains('₹') || l.contains("S$"))
            .filter_map(|l| ["GB", "IN", "SG"].iter().find(|c| l.contains(&format!("{c} "))).map(|c| c.to_string()))
            .collect()
    };
    assert_eq!(countries(&mut app), ["GB", "IN", "SG"]);
    app.update(Action::SortNext);
    assert!(header(&mut app).contains("country ▲"), "{}", header(&mut app));
    app.update(Action::SortReverse);
    assert!(header(&mut app).contains("country ▼"));
    assert_eq!(countries(&mut app), ["SG", "IN", "GB"]);
    // Enter opens the row under the cursor, whatever the order: the first row is SG now.
    app.select_row(0);
    app.update(Action::Drill);
    match &app.popup {
        Some(recount::tui::app::Popup::Detail { body, .. }) => assert!(body.contains("country: SG"), "{body}"),
        other => panic!("a detail popup, got {other:?}"),
    }
    app.popup = None;

    // Each screen keeps its own place: History has its own row and order, and the Overview is
    // as it was left when it comes back: its row, its sort and its scrolled columns.
    app.select_row(2);
    app.update(Action::Screen(Screen::History));
    assert_eq!((app.row(), app.sort()), (0, None), "History's own place");
    app.update(Action::RowDown);
    app.update(Action::Screen(Screen::Overview));
    assert_eq!(app.row(), 2);
    assert!(header(&mut app).contains("country ▼") && title(&mut app).contains(&format!("‹ {} col", moves - 1)), "{}", title(&mut app));
    assert_eq!(countries(&mut app), ["SG", "IN", "GB"]);
    app.update(Action::Screen(Screen::History));
    assert_eq!(app.row(), 1);
    // Another date's rows put every screen back on its first row, each keeping its order.
    app.update(Action::NextDate);
    assert_eq!(app.row(), 0);
    app.update(Action::Screen(Screen::Overview));
    assert_eq!((app.row(), app.sort().map(|s| s.descending)), (0, Some(true)));
}

#[test]
fn rollback_on_history_targets_the_snapshot_of_the_selected_entry_from_the_report() {
    // Day by day, so a date gets a version per upload that reaches it.
    let dir = tempdir();
    let ups = uploads(small_world());
    let mut lab = open_lab(dir.path());
    for &u in &ups[..6] {
        land::land(&mut lab, small_world(), &[u]).unwrap();
        v2::run_upload(&lab, u, TriggerKind::Daily, opts()).unwrap();
    }
    let d = common::first_day_with_late_baskets(small_world(), ups[1]);
    assert!(d < ups[4], "a date that later uploads changed: {d}");
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    let snap = recount::reports::overview::overview(&lab, small_world()).unwrap();
    app.on_reply(Reply::Loaded(Box::new(snap), Some(std::sync::Arc::new(load_view(&lab, d).unwrap()))));
    app.update(Action::Screen(Screen::History));
    let history = app.view.as_ref().unwrap().history.retail().unwrap().clone();
    let per_entry: Vec<(i64, usize)> = history.entries.iter().map(|e| (e.snapshot_id, e.countries.len())).collect();
    assert!(per_entry.len() >= 2, "the date has several versions: {per_entry:?}");
    // The last row belongs to the last entry, whatever its first cell shows.
    let rows: usize = per_entry.iter().map(|(_, n)| n).sum();
    for _ in 1..rows {
        app.update(Action::RowDown);
    }
    app.update(Action::Rollback);
    let want = per_entry.last().unwrap().0;
    match &app.popup {
        Some(recount::tui::app::Popup::Confirm { what: recount::tui::app::Confirmable::Rollback(s), .. }) => assert_eq!(*s, want),
        other => panic!("expected a rollback confirmation, got {other:?}"),
    }
    // The same key on another screen does nothing: b is bound on History only.
    app.popup = None;
    app.update(Action::Screen(Screen::Overview));
    recount::tui::handle_key(&mut app, &KeyEvent::new(KeyCode::Char('b'), KeyModifiers::NONE));
    assert!(app.popup.is_none());
}

#[test]
fn moving_dates_and_jumping_asks_the_worker_for_the_new_date() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    app.update(Action::NextDate);
    assert!(matches!(app.outbox.pop(), Some(recount::tui::worker::Job::LoadDate(x)) if x == d + chrono::Duration::days(1)));
    recount::tui::handle_key(&mut app, &KeyEvent::new(KeyCode::Char(':'), KeyModifiers::NONE));
    app.running = None;
    for c in d.format("%m-%d").to_string().chars() {
        recount::tui::handle_key(&mut app, &KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    recount::tui::handle_key(&mut app, &KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(app.outbox.pop(), Some(recount::tui::worker::Job::LoadDate(x)) if x == d));
}

#[test]
fn a_basket_id_holding_an_escape_sequence_never_reaches_the_terminal_raw() {
    let dir = tempdir();
    let w = HandWorld::new(dir.path().join("world"), STORES);
    let evil = "B-evil\u{1b}[2J\u{1b}]52;c;ZXZpbA==\u{7}";
    let evil_json = serde_json::to_string(evil).unwrap();
    let line = |id: &str, up: &str| {
        event(id, "PLACEHOLDER", "LON1", "2026-08-15T10:00:00.000Z", up, "GBP", &[100]).replace("\"PLACEHOLDER\"", &evil_json)
    };
    w.file("2026-08-15", "a.jsonl.gz", &[line("e1", "2026-08-15T10:00:01.000Z"), line("e2", "2026-08-15T10:05:00.000Z")]);
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Upload, opts()).unwrap();
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    let snap = recount::reports::overview::overview(&lab, &w.root).unwrap();
    let view = load_view(&lab, day("2026-08-15")).unwrap();
    app.on_reply(Reply::Loaded(Box::new(snap), Some(std::sync::Arc::new(view))));
    app.update(Action::Screen(Screen::Baskets));
    let buf = render(&mut app, 120, 40);
    let screen = text(&buf);
    assert!(screen.contains("B-evil"), "{screen}");
    assert!(!screen.chars().any(|c| c.is_control() && c != '\n'), "a control character reached the screen");
    // Copying the id sends OSC 52 with the id base64-encoded: the escape travels inside base64.
    app.update(Action::Copy);
    let write = app.terminal_writes.pop().expect("an OSC 52 write");
    assert!(write.starts_with("\u{1b}]52;c;") && write.ends_with('\u{7}'));
    assert!(!write[5..write.len() - 1].contains('\u{1b}'));
}

#[test]
fn the_worker_loads_neighbouring_dates_ahead_and_forgets_them_after_a_write() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let (lab, _, d) = loaded_app(dir.path());
    let mut server = server_on(lab, small_world());
    let Reply::Loaded(snap, _) = server.serve(Job::Load(Some(d))).unwrap() else { panic!("a full load") };
    let dates: Vec<chrono::NaiveDate> = snap.dates.iter().map(|x| x.business_date).collect();
    let i = dates.iter().position(|&x| x == d).unwrap();
    while server.prefetch().unwrap() {}
    assert_eq!(server.loaded_dates(), dates[i - 2..=i + 2].to_vec(), "the date on screen and two either side");

    // A move to a neighbour is served from what was loaded ahead, and it is the same view.
    let next = dates[i + 1];
    let runs = |reply: Reply| match reply {
        Reply::DateLoaded(v) => {
            v.check.retail().unwrap().countries.iter().map(|c| (c.country.clone(), c.v1_runs, c.v2_revenue_minor)).collect::<Vec<_>>()
        }
        other => panic!("{other:?}"),
    };
    let ahead = runs(server.serve(Job::LoadDate(next)).unwrap());
    let fresh = load_view(&server.lab, next).unwrap();
    assert_eq!(
        ahead,
        fresh.check.retail().unwrap().countries.iter().map(|c| (c.country.clone(), c.v1_runs, c.v2_revenue_minor)).collect::<Vec<_>>()
    );

    // A write (a v1 retry of that date) empties them: the next view shows the second run.
    assert!(ahead.iter().all(|(_, r, _)| *r == 1), "{ahead:?}");
    server.serve(Job::RetryV1(next)).unwrap();
    assert!(server.loaded_dates().is_empty());
    let after = runs(server.serve(Job::LoadDate(next)).unwrap());
    assert!(after.iter().all(|(_, r, _)| *r == 2), "{after:?}");
}

#[test]
fn a_detail_popup_keeps_its_line_breaks_and_strips_control_characters() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.popup = Some(recount::tui::app::Popup::Detail {
        title: "why".into(),
        body: format!("first line\n\nGB: 7,431 baskets\u{1b}[2J\n  +13 baskets\n{}\nlast line", "long ".repeat(60)),
    });
    let screen = text(&render(&mut app, 120, 40));
    let rows: Vec<&str> = screen.lines().collect();
    let row_of = |needle: &str| rows.iter().position(|r| r.contains(needle)).unwrap_or_else(|| panic!("{needle} not on screen:\n{screen}"));
    assert_eq!(row_of("GB: 7,431 baskets"), row_of("first line") + 2, "{screen}");
    assert_eq!(row_of("+13 baskets"), row_of("GB: 7,431 baskets") + 1, "{screen}");
    // A line longer than the popup wraps, and the popup grows to show the line after it.
    assert!(row_of("last line") >= row_of("+13 baskets") + 3, "{screen}");
    assert_eq!(screen.matches('\u{FFFD}').count(), 1, "only the escape character is replaced:\n{screen}");
    assert!(!screen.chars().any(|c| c.is_control() && c != '\n'), "a control character reached the screen");
}

#[test]
fn the_explorer_lands_the_shipped_corrections_one_by_one_and_history_explains_each() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let mut server = sample_server(dir.path());
    let done = |reply: Reply| match reply {
        Reply::Done(text) => text,
        other => panic!("expected Done, got {other:?}"),
    };
    let first = done(server.serve(Job::LandCorrection).unwrap());
    assert!(first.contains("tills-gb.jsonl.gz v2") && first.contains("rewrote 2026-10-19"), "{first}");
    let Reply::DateLoaded(view) = server.serve(Job::LoadDate(day("2026-10-19"))).unwrap() else { panic!("a date") };
    let last = view.history.retail().unwrap().entries.last().unwrap();
    assert!(last.countries.iter().any(|c| c.attribution.contains("revenue corrected (tills-gb.jsonl.gz v2)")), "{:?}", last.countries);
    // The next three, in delivery order; the recompressed one changes no date.
    let rest: Vec<String> = (0..3).map(|_| done(server.serve(Job::LandCorrection).unwrap())).collect();
    assert!(rest[0].contains("2026-10-22") && rest[1].contains("2026-10-26"), "{rest:?}");
    assert!(rest[2].contains("2026-10-20") && rest[2].contains("no date changed"), "{rest:?}");
    let none = done(server.serve(Job::LandCorrection).unwrap());
    assert!(none.contains("no correction"), "{none}");
}

#[test]
fn the_explorer_is_honest_about_writes_quit_waits_a_repeating_load_error_stops_and_esc_after_landing_says_what_committed() {
    use recount::tui::worker::Job;
    let theme = || recount::tui::theme::Theme::load("dark").unwrap();
    // Quit during a write waits for it to end.
    let mut app = App::new(theme(), false);
    app.on_reply(Reply::Done("ready".into()));
    app.outbox.clear();
    app.running = None;
    // Landing the next upload, confirmed.
    app.popup = Some(recount::tui::app::Popup::Confirm { what: recount::tui::app::Confirmable::LandNext, text: String::new() });
    assert!(app.on_confirm_key(&key('y')));
    assert!(app.running.as_ref().is_some_and(|r| r.writes), "landing the next upload is a write");
    app.update(Action::Quit);
    assert!(!app.quit, "quit waits for the running write");
    assert!(app.message.contains("once the running write ends"), "{}", app.message);
    app.on_reply(Reply::Done("v1 appended".into()));
    assert!(app.quit, "and quits when it has ended");

    // A load that keeps failing is retried once, then the explorer stops and says so.
    let mut app = App::new(theme(), false);
    app.outbox.clear();
    app.on_reply(Reply::Failed("the lab is unreadable".into()));
    assert!(matches!(app.outbox.pop(), Some(Job::Load(_))), "the first failure reloads");
    app.on_reply(Reply::Failed("the lab is unreadable".into()));
    assert!(app.outbox.is_empty(), "the second in a row does not");
    match &app.popup {
        Some(recount::tui::app::Popup::Error(text)) => assert!(text.contains("stopped retrying"), "{text}"),
        other => panic!("an error popup, got {other:?}"),
    }

    // Esc during n: the landing committed, the run did not, and the reply says exactly that.
    let interrupted = color_eyre::eyre::eyre!(recount::error::LabError::Interrupted);
    let Reply::Failed(text) = recount::tui::worker::landed_then_failed("upload 2026-10-20", 1_234, &interrupted) else {
        panic!("a failure")
    };
    assert!(text.contains("upload 2026-10-20 landed and committed (1234 events)") && text.contains("was cancelled"), "{text}");
    assert!(text.contains("nothing of the run committed"), "{text}");
}

fn key(c: char) -> ratatui::crossterm::event::KeyEvent {
    ratatui::crossterm::event::KeyEvent::new(ratatui::crossterm::event::KeyCode::Char(c), ratatui::crossterm::event::KeyModifiers::NONE)
}

#[test]
fn landing_the_next_upload_asks_first_and_n_pgdn_move_through_the_table_on_screen() {
    use recount::tui::app::Popup;
    use recount::tui::keys::action_for;
    use recount::tui::worker::Job;
    let dir = tempdir();
    let mut server = sample_server(dir.path());
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    // A closed date, whose history has several rows per country.
    app.on_reply(server.serve(Job::Load(Some(day("2026-10-24")))).unwrap());

    // `n` is the search's next match now; landing is U, and it asks.
    assert_eq!(action_for(&key('n'), Screen::Overview), Some(Action::NextMatch));
    assert_eq!(action_for(&key('U'), Screen::Overview), Some(Action::LandNext));
    app.update(Action::LandNext);
    assert!(matches!(&app.popup, Some(Popup::Confirm { text, .. }) if text.contains("Land upload 2026-10-31")), "{:?}", app.popup);
    assert!(app.on_confirm_key(&key('n')));
    assert!(app.popup.is_none() && app.outbox.is_empty() && app.running.is_none(), "n cancels: nothing lands");
    app.update(Action::LandNext);
    assert!(app.on_confirm_key(&key('y')));
    assert!(matches!(app.outbox.last(), Some(Job::LandNext)), "y lands it");

    // n/N go to the rows holding the search text, wrapping; PgDn moves by the rows on screen.
    app.running = None;
    app.update(Action::Screen(Screen::History));
    let rows: Vec<String> =
        app.current_table().unwrap().rows.iter().map(|r| r.cells.iter().map(|c| c.display()).collect::<Vec<_>>().join(" ")).collect();
    assert!(rows.len() >= 4, "{rows:?}");
    app.search = "IN".into();
    let hits: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].to_lowercase().contains("in")).collect();
    assert!(hits.len() >= 2, "{rows:?}");
    app.select_row(hits[0]);
    app.update(Action::NextMatch);
    assert_eq!(app.row(), hits[1]);
    app.update(Action::PrevMatch);
    assert_eq!(app.row(), hits[0]);
    app.update(Action::PrevMatch);
    assert_eq!(app.row(), *hits.last().unwrap(), "wraps around");
    app.select_row(0);
    app.measured(recount::tui::draw::FrameMeasures { page_rows: 3, ..app.last_drawn() });
    app.update(Action::PageDown);
    assert_eq!(app.row(), 3.min(rows.len() - 1));
    app.update(Action::PageUp);
    assert_eq!(app.row(), 0);
}

#[test]
fn the_help_popup_scrolls_to_every_key_at_80x24() {
    let dir = tempdir();
    let (_lab, mut app, _) = loaded_app(dir.path());
    app.update(Action::Help);
    let first = text(&render(&mut app, 80, 24));
    assert!(first.contains("lines 1-"), "the title says which lines show:\n{first}");
    // The popup covers the screen from edge to edge below the tabs: no sliver of the panels
    // behind it (pieces of their borders and words) stands beside or under it.
    for line in first.lines().skip(1).take(22) {
        assert!(line.starts_with('┌') || line.starts_with('│') || line.starts_with('└'), "a stray left edge: {line:?}\n{first}");
        assert!(line.ends_with('┐') || line.ends_with('│') || line.ends_with('┘'), "a stray right edge: {line:?}\n{first}");
        assert!(!line.starts_with("┌┌") && !line.starts_with("││") && !line.ends_with("││"), "a border behind the popup: {line:?}");
    }
    let (label, help) = keys::help_lines().last().cloned().unwrap();
    assert!(!first.contains(&help), "at 80x24 the last key is below the fold:\n{first}");
    app.update(Action::Bottom);
    let last = text(&render(&mut app, 80, 24));
    assert!(last.contains(&help[..help.len().min(30)]), "End shows the last key ({label}):\n{last}");
    app.update(Action::Top);
    assert_eq!(text(&render(&mut app, 80, 24)), first, "Home goes back to the first line");
    app.update(Action::PageDown);
    let paged = text(&render(&mut app, 80, 24));
    assert!(paged != first && !paged.contains("lines 1-"), "PgDn moves a page:\n{paged}");
    app.update(Action::Back);
    assert!(app.popup.is_none());
}

#[test]
fn a_jump_draws_the_overview_from_the_check_sent_ahead_and_the_view_follows() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let (lab, mut app, _) = loaded_app(dir.path());
    let mut server = server_on(lab, small_world());
    let Reply::Loaded(snap, _) = server.serve(Job::Load(None)).unwrap() else { panic!("a full load") };
    let far = snap.dates.first().unwrap().business_date;
    app.jump_to(&far.to_string());
    assert!(matches!(app.outbox.pop(), Some(Job::LoadDate(d)) if d == far));
    // The worker's first answer is the check alone: the Overview draws it, other screens wait.
    let head = server.head(far).unwrap().expect("a date not loaded yet has a head");
    let want = head.retail().unwrap().table();
    app.on_reply(Reply::DateHead(Box::new(head)));
    assert!(app.view.is_none(), "the rest is still loading");
    assert!(app.running.is_none(), "the Overview is complete: keys act on it at once");
    app.update(Action::RetryV1);
    assert!(matches!(app.outbox.pop(), Some(Job::RetryV1(d)) if d == far), "v acts on the date while its other reports load");
    app.running = None;
    let screen = text(&render(&mut app, 120, 40));
    assert!(screen.contains(&format!("{far} per country")) && screen.contains("GB "), "{screen}");
    assert_eq!(app.current_table().map(|t| t.rows.len()), Some(want.rows.len()));
    app.update(Action::Screen(Screen::Explain));
    assert!(text(&render(&mut app, 120, 40)).contains("loading…"));
    app.update(Action::Screen(Screen::Overview));
    // Then the view, built around the same check; a loaded date sends no head.
    app.on_reply(server.serve(Job::LoadDate(far)).unwrap());
    let v = app.view.as_ref().expect("the view");
    assert_eq!(v.check.retail().unwrap().table().rows.len(), want.rows.len());
    assert!(app.head.is_none() && app.running.is_none());
    assert!(server.head(far).unwrap().is_none(), "a loaded date is served from memory");
    // A head for a date the user has left is dropped.
    let other = snap.dates[1].business_date;
    let check = recount::reports::check::check(&server.lab, other, None).unwrap();
    app.on_reply(Reply::DateHead(Box::new(recount::tui::worker::DateCheck::Retail(check))));
    assert!(app.head.is_none());
}

/// A copy of the bundled sample world whose `upload`'s first file is cut in half: landing holds
/// that upload back.
fn sample_with_a_cut_file(dir: &std::path::Path, upload: &str) -> std::path::PathBuf {
    let sample = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data");
    let world = dir.join("cut-world");
    copy_dir(&sample, &world);
    let part = world.join(format!("pos/events/upload_date={upload}"));
    let mut files: Vec<_> = std::fs::read_dir(&part).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    world
}

#[test]
fn the_explorers_u_on_a_held_back_upload_says_so_and_records_no_v2_run() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let server = sample_server(dir.path());
    let world = sample_with_a_cut_file(dir.path(), "2026-10-31");
    let mut server = server_on(server.lab, &world);
    let head = |server: &mut recount::tui::worker::Server| match server.serve(Job::Load(None)).unwrap() {
        Reply::Loaded(snap, _) => (snap.head_snapshot, snap.next_upload),
        other => panic!("a full load, got {other:?}"),
    };
    let before = head(&mut server);
    assert_eq!(before.1, Some(day("2026-10-31")));
    let Reply::Failed(text) = server.serve(Job::LandNext).unwrap() else { panic!("a held-back upload is a failure to say") };
    assert!(text.contains("upload 2026-10-31 held back") && text.contains("v2 did not run"), "{text}");
    assert!(!text.contains("0 events"), "{text}");
    assert_eq!(head(&mut server), before, "no snapshot recorded, and the upload is still the next to land");
}

#[test]
fn the_first_run_reports_a_held_back_upload_and_gives_it_no_run() {
    let dir = tempdir();
    let world = sample_with_a_cut_file(dir.path(), "2026-10-15");
    let mut lab = open_lab(dir.path());
    let first = recount::lake::bootstrap::fill_if_empty(&mut lab, &world).unwrap().expect("an empty lab is filled");
    assert_eq!(first.held.len(), 1, "{:?}", first.held);
    assert_eq!(first.held[0].upload_date, day("2026-10-15"));
    assert!(first.held_lines()[0].contains("truncated or corrupt"), "{:?}", first.held_lines());
    assert!(!lab.is_landed(day("2026-10-15")).unwrap());
    let head = recount::lake::snapshot::latest_id(&lab).unwrap();
    let runs = recount::lake::snapshot::records(&lab, head).unwrap();
    assert!(runs.iter().all(|r| r.trigger.upload != Some(day("2026-10-15"))), "no v1 or v2 run for the held upload");
    // Every other upload of the first run was built: v1 and v2 once each.
    assert_eq!(runs.iter().filter(|r| r.trigger.upload.is_some()).count(), 2 * first.built);
    assert_eq!(first.built, uploads(&world).len() - recount::lake::bootstrap::HELD_BACK - 1);
}

#[test]
fn the_explorer_shows_yen_dinars_unidades_rupees_and_dollars_by_their_own_digits() {
    let dir = tempdir();
    let stores = "store_id,country,timezone,currency\nTYO1,JP,Asia/Tokyo,JPY\nKWI1,KW,Asia/Kuwait,KWD\nBAH1,BH,Asia/Bahrain,BHD\n\
                  SCL1,CL,America/Santiago,CLF\nBLR1,IN,Asia/Kolkata,INR\nNYC1,US,America/New_York,USD\n";
    let w = HandWorld::new(dir.path().join("world"), stores);
    let sale = |id: &str, store: &str, cur: &str, minor: i64| {
        event(id, &format!("B-{id}"), store, "2026-08-15T12:00:00.000Z", "2026-08-15T12:00:01.000Z", cur, &[minor])
    };
    w.file(
        "2026-08-15",
        "a.jsonl.gz",
        &[
            sale("t", "TYO1", "JPY", 1_091_969),
            sale("k", "KWI1", "KWD", 1_491_936),
            sale("b", "BAH1", "BHD", 500),
            sale("c", "SCL1", "CLF", 123_456),
            sale("i", "BLR1", "INR", 1_234_567_890),
            sale("u", "NYC1", "USD", 1_999),
        ],
    );
    let mut lab = open_lab(dir.path());
    land::land(&mut lab, &w.root, &[day("2026-08-15")]).unwrap();
    v2::run_upload(&lab, day("2026-08-15"), TriggerKind::Daily, opts()).unwrap();
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    let snap = recount::reports::overview::overview(&lab, &w.root).unwrap();
    app.on_reply(Reply::Loaded(Box::new(snap), Some(std::sync::Arc::new(load_view(&lab, day("2026-08-15")).unwrap()))));
    app.update(Action::Screen(Screen::Overview));
    let screen = text(&render(&mut app, 160, 40));
    for shown in ["¥1,091,969", "KWD 1,491.936", "BHD 0.500", "CLF 12.3456", "₹1,23,45,678.90", "$19.99"] {
        assert!(screen.contains(shown), "{shown} on the Overview:\n{screen}");
    }
    assert!(!screen.contains("10,919.69") && !screen.contains("14,919.36"), "no currency is shown with two digits:\n{screen}");
}

#[test]
fn after_u_the_message_says_how_much_each_rewritten_day_moved() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let mut server = sample_server(dir.path());
    let Reply::Done(text) = server.serve(Job::LandNext).unwrap() else { panic!("the next upload lands") };
    assert!(text.starts_with("landed upload 2026-10-31"), "{text}");
    let moved = text.split("; moved ").nth(1).unwrap_or_else(|| panic!("no move said: {text}"));
    assert!(moved.contains("2026-10-30") && moved.contains('£') && (moved.contains('+') || moved.contains('-')), "{text}");
}

#[test]
fn the_hint_bar_lists_every_key_of_the_screen_or_says_more_at_120_and_80_columns() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    for screen in Screen::ALL {
        app.update(Action::Screen(screen));
        for (w, h) in [(120, 36), (80, 24), (200, 40)] {
            let shown = text(&render(&mut app, w, h));
            let bar = shown.lines().rev().find(|l| !l.trim().is_empty()).unwrap().trim_end().to_string();
            let hints = keys::hints(screen);
            let all_there = hints.iter().all(|(k, hint)| bar.contains(&format!("{k} {hint}")));
            let (fit, more) = keys::fit_hints(screen, usize::from(w));
            assert!(all_there || bar.ends_with("? more"), "{} at {w}: {bar}", screen.name());
            assert_eq!(all_there, !more, "{} at {w}: {bar}", screen.name());
            for (k, hint) in fit {
                assert!(bar.contains(&format!("{k} {hint}")), "{} at {w}: '{k} {hint}' whole in {bar}", screen.name());
            }
        }
    }
}

#[test]
fn an_export_writes_the_rows_on_screen_filter_and_sort_included_to_a_new_file_each_time() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    let out = dir.path().join("exports");
    std::fs::create_dir_all(&out).unwrap();
    app.export_to(out.clone());
    app.update(Action::Screen(Screen::Baskets));
    let all = app.current_table().unwrap();
    let some_id = all.rows.iter().find_map(|r| match &r.cells[0] {
        recount::reports::Cell::Repeat(id) => Some(id.clone()),
        _ => None,
    });
    let some_id = some_id.expect("the small world re-sends baskets");
    app.search = some_id.clone();
    app.update(Action::SortReverse);
    let on_screen = app.current_table().unwrap().rows.len();
    assert!(on_screen >= 2 && on_screen < all.rows.len(), "the search keeps one basket's copies: {on_screen} of {}", all.rows.len());
    app.update(Action::ExportCsv);
    app.update(Action::ExportCsv);
    let first = out.join(format!("recount-baskets-{d}.csv"));
    let second = out.join(format!("recount-baskets-{d}-2.csv"));
    assert!(second.exists(), "the second export is a new file: {}", app.message);
    let text = std::fs::read_to_string(&first).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), on_screen, "{text}");
    // The business date is a column, not only in the file's name: here each copy's own (a basket
    // re-sent across midnight has copies on two dates).
    let header = rdr.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name}: {text}"));
    let (date, id) = (at("business_date"), at("basket_id"));
    assert!(rows.iter().any(|r| r[date] == d.to_string()), "{text}");
    assert!(
        rows.iter().all(|r| r[date].parse::<chrono::NaiveDate>().is_ok() && r[id] == *some_id),
        "every row carries its date and basket_id: {text}"
    );
    assert_eq!(std::fs::read_to_string(&second).unwrap(), text);
}

#[test]
fn after_a_rollback_the_navigator_marks_stale_dates_as_the_header_does() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let mut server = sample_server(dir.path());
    assert!(matches!(server.serve(Job::Rollback(5)).unwrap(), Reply::Done(_)));
    let Reply::Loaded(snap, _) = server.serve(Job::Load(None)).unwrap() else { panic!("a full load") };
    let mut stale = 0;
    for d in &snap.dates {
        let check = recount::reports::check::check(&server.lab, d.business_date, None).unwrap();
        let says_stale = matches!(check.status.finality, recount::reports::status::Finality::Stale);
        assert_eq!(d.stale, says_stale, "{}: the navigator and the header agree", d.business_date);
        stale += usize::from(d.stale);
    }
    assert!(stale > 0, "a rollback to snapshot 5 leaves later dates stale");
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    app.on_reply(Reply::Loaded(snap.clone(), None));
    let screen = text(&render(&mut app, 120, 40));
    let first_stale = snap.dates.iter().find(|d| d.stale).unwrap().business_date.format("%m-%d").to_string();
    let line = screen.lines().find(|l| l.contains(&first_stale)).unwrap();
    assert!(line.contains(" s"), "the stale date is marked s, not ✓: {line}");
}

#[test]
fn c_asks_first_the_rollback_prompt_says_it_rewinds_every_date_and_the_input_line_edits() {
    use recount::tui::app::{Confirmable, Popup};
    use recount::tui::worker::Job;
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    // C asks, as U does: n lands nothing, y lands.
    app.update(Action::LandCorrection);
    assert!(
        matches!(&app.popup, Some(Popup::Confirm { what: Confirmable::LandCorrection, text }) if text.contains("y: land")),
        "{:?}",
        app.popup
    );
    assert!(app.on_confirm_key(&key('n')));
    assert!(app.outbox.is_empty() && app.popup.is_none());
    app.update(Action::LandCorrection);
    assert!(app.on_confirm_key(&key('y')));
    assert!(matches!(app.outbox.pop(), Some(Job::LandCorrection)));
    app.running = None;
    // The rollback prompt says what it does to the other dates.
    app.update(Action::Screen(Screen::History));
    app.update(Action::Rollback);
    assert!(
        matches!(&app.popup, Some(Popup::Confirm { text, .. }) if text.contains("EVERY business date") && text.contains("not only this one")),
        "{:?}",
        app.popup
    );
    app.popup = None;
    // A status line speaks of its screen: another screen clears it.
    app.message = "exported something".into();
    app.update(Action::Screen(Screen::Late));
    assert!(app.message.is_empty());
    // The search line: Ctrl-U clears it, Ctrl-W takes the last word, no other chord is text.
    app.update(Action::Search);
    for c in "GB001 x".chars() {
        app.on_input_key(&key(c));
    }
    let ctrl = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    app.on_input_key(&ctrl('w'));
    assert!(matches!(&app.popup, Some(Popup::Input { text, .. }) if text == "GB001 "), "{:?}", app.popup);
    app.on_input_key(&ctrl('a'));
    app.on_input_key(&ctrl('u'));
    assert!(matches!(&app.popup, Some(Popup::Input { text, .. }) if text.is_empty()), "{:?}", app.popup);
}

#[test]
fn at_80x24_and_120x36_the_columns_that_carry_the_answer_are_kept() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Overview));
    for (w, h) in [(80, 24), (120, 36)] {
        let s = text(&render(&mut app, w, h));
        assert!(s.contains("v2 vs recompute"), "the verdict column at {w}x{h}:\n{s}");
        assert!(["match", "beyond window", "MISMATCH"].iter().any(|v| s.contains(v)), "a verdict at {w}x{h}:\n{s}");
    }
    app.update(Action::Screen(Screen::History));
    for (w, h) in [(80, 24), (120, 36)] {
        let s = text(&render(&mut app, w, h));
        let header = s.lines().find(|l| l.contains("snapshot") && l.contains("country")).unwrap_or_else(|| panic!("{s}"));
        assert!(header.contains("why"), "the why column at {w}x{h}: {header}");
        let rows: Vec<&str> = s.lines().filter(|l| l.contains(" GB ") && l.contains('£')).collect();
        assert!(!rows.is_empty(), "{s}");
        for r in rows {
            let why = r.split_once('£').map(|x| x.1).unwrap_or_default();
            assert!(why.contains("basket") || why.contains("no change"), "the why starts at {w}x{h}: {r}");
            // A why too long for its column wraps onto the row's next lines: it is never cut.
            assert!(!why.contains('…'), "the why wraps, never cut, at {w}x{h}: {r}\n{s}");
        }
    }
}

#[test]
fn a_questions_answers_come_from_the_key_table_and_can_be_rebound() {
    use recount::tui::app::Popup;
    let table = keys::KeyTable::with_overrides(&[("confirm".into(), vec!["j".into()]), ("cancel".into(), vec!["k".into()])]).unwrap();
    assert_eq!(table.answer_for(&key('j')), Some(Action::Confirm));
    assert_eq!(table.answer_for(&key('k')), Some(Action::Cancel));
    assert_eq!(table.answer_for(&key('y')), None, "y is no longer yes");
    assert_eq!(table.answers("land"), "j: land   k: cancel");
    // The default table: the help lists them, and every question ends with them.
    assert!(keys::help_lines().iter().any(|(l, h)| *l == "y" && h.contains("[in a question]")));
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.update(Action::Reset);
    assert!(matches!(&app.popup, Some(Popup::Confirm { text, .. }) if text.ends_with("y: reset   n/Esc: cancel")), "{:?}", app.popup);
    assert!(app.on_confirm_key(&key('x')), "another key is taken while the question is open");
    assert!(app.popup.is_some() && app.outbox.is_empty(), "and answers nothing");
    assert!(app.on_confirm_key(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    assert!(app.popup.is_none() && app.outbox.is_empty(), "Esc is no");
}

/// The cells of `buf` in rows `rows` whose symbol is `mark`.
fn cells_with(buf: &Buffer, rows: std::ops::Range<u16>, mark: &str) -> Vec<(u16, u16)> {
    rows.flat_map(|y| (0..buf.area.width).map(move |x| (x, y))).filter(|&(x, y)| buf[(x, y)].symbol() == mark).collect()
}

#[test]
fn the_trend_draws_v1s_retry_as_a_spike_told_by_marks_and_is_its_table_at_80x24() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Trend));
    let buf = render(&mut app, 120, 40);
    let screen = text(&buf);
    assert!(screen.contains(&format!("v1 spikes on {}", d.format("%m-%d"))), "{screen}");
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines.iter().position(|l| l.contains("revenue per business date")).unwrap() as u16;
    let bottom = lines.iter().position(|l| l.contains("per date: v1, v2 gold, recompute")).unwrap() as u16;
    // v1's blocks, the legend's own left out: the highest stands alone, over the other days'.
    let legend = lines.iter().position(|l| l.contains("█ v1")).unwrap() as u16;
    assert!(legend > top, "the legend is under the plot:\n{screen}");
    let blocks: Vec<(u16, u16)> = cells_with(&buf, top + 1..bottom, "█").into_iter().filter(|&(_, y)| y != legend).collect();
    let highest = blocks.iter().map(|b| b.1).min().unwrap();
    let at_top: Vec<_> = blocks.iter().filter(|b| b.1 == highest).collect();
    assert_eq!(at_top.len(), 1, "one spike: {at_top:?}\n{screen}");
    let rest: Vec<u16> = blocks.iter().filter(|b| b.1 != highest).map(|b| b.1).collect();
    assert!(rest.len() >= 4 && rest.iter().all(|&y| y >= highest + 3), "the other days sit well below the spike:\n{screen}");

    // Without colour, every series is told by its mark, and no cell carries a colour.
    app.theme = recount::tui::theme::Theme::load("dark").unwrap().monochrome();
    let mono = render(&mut app, 120, 40);
    let mono_text = text(&mono);
    for mark in ["█ v1", "• v2 gold", "⣀ recompute", "│ selected"] {
        assert!(mono_text.contains(mark), "legend mark {mark}:\n{mono_text}");
    }
    let coloured =
        (top..bottom).flat_map(|y| (0..120).map(move |x| (x, y))).filter(|&(x, y)| mono[(x, y)].fg != ratatui::style::Color::Reset).count();
    assert_eq!(coloured, 0, "NO_COLOR draws the chart without colour");

    // At 80x24 the table is the picture: the doubled day carries its flag and its mark.
    let small = text(&render(&mut app, 80, 24));
    assert!(small.contains("(chart: 60x22)"), "{small}");
    let row = small.lines().find(|l| l.contains(&d.to_string())).expect("the doubled day's row");
    assert!(row.contains('!'), "{row}");
}

#[test]
fn history_steps_each_version_by_its_cause_and_explains_bridge_is_drawn_to_scale() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::History));
    let screen = text(&render(&mut app, 120, 40));
    let h = app.view.as_ref().unwrap().history.retail().unwrap();
    let country = h.entries[0].countries[0].country.clone();
    assert!(screen.contains(&format!("{country} at each version of the date")), "{screen}");
    for e in h.entries.iter().filter(|e| e.countries.iter().any(|c| c.country == country)) {
        let label = format!("#{} up {}", e.snapshot_id, e.trigger.upload.unwrap().format("%m-%d"));
        assert!(screen.contains(&label), "step {label}:\n{screen}");
    }
    let newest = h.entries.iter().rev().find_map(|e| e.countries.iter().find(|c| c.country == country)).unwrap();
    assert!(
        screen.contains(&recount::reports::table::Cell::Money { minor: newest.revenue_minor, currency: newest.currency.clone() }.display()),
        "{screen}"
    );

    app.update(Action::Screen(Screen::Explain));
    let screen = text(&render(&mut app, 120, 40));
    let e = &app.view.as_ref().unwrap().explain.parts[0];
    assert!(screen.contains(&format!("{}: recompute - missed + double counted = v1, to scale", e.part)), "{screen}");
    // Where each bar of the bridge ends, in columns: the parts hang from the totals' ends.
    let end = |start: &str, mark: char| {
        let line = screen.lines().find(|l| l.contains(start) && l.contains(mark)).unwrap_or_else(|| panic!("{start} {mark}:\n{screen}"));
        line.chars().enumerate().filter(|(_, c)| *c == mark).map(|(i, _)| i).max().unwrap()
    };
    // Retail's measures: baskets, then revenue, which the bridge draws.
    assert!(e.missed[1] > 0 && e.double_counted[1] > 0, "{d}: the bridge has both parts");
    assert_eq!(end("- missed", '░'), end("│recompute  ", '█'), "what v1 missed is taken off the recompute's end:\n{screen}");
    assert_eq!(end("+ double counted", '▓'), end("= v1 (one run)", '█'), "the copies counted twice bring it to v1's end:\n{screen}");
    assert!(end("= v1 (one run)", '█') != end("│recompute  ", '█') || e.missed[1] == e.double_counted[1]);

    // At 80x24 and without colour both pictures still draw, told by their marks and labels.
    app.theme = recount::tui::theme::Theme::load("dark").unwrap().monochrome();
    let small = text(&render(&mut app, 80, 24));
    for part in ["- missed", "+ double counted", "= v1 (one run)"] {
        assert!(small.contains(part), "the bridge at 80x24 has '{part}':\n{small}");
    }
    app.update(Action::Screen(Screen::History));
    let small = text(&render(&mut app, 80, 24));
    assert!(small.contains("at each version of the date") && small.contains(" up "), "the steps at 80x24:\n{small}");
}

#[test]
fn the_late_screen_reopens_a_date_after_a_reason_and_a_confirmation_that_shows_the_amount() {
    use recount::tui::app::Popup;
    use recount::tui::keys::action_for;
    use recount::tui::worker::Job;
    let dir = tempdir();
    let mut server = sample_server(dir.path());
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    let d = day("2026-10-20");
    app.on_reply(server.serve(Job::Load(Some(d))).unwrap());
    let late = app.view.as_ref().unwrap().late.clone();
    let missing: i64 = late.rows.iter().filter(|r| r.upload_date > d && r.missing_from_v2 && r.recompute_copy).map(|r| r.measures[1]).sum();
    assert!(missing > 0, "{d} has late baskets on the first-run lab");
    let amount = recount::reports::table::Cell::Money { minor: missing, currency: "GBP".into() }.display();

    assert_eq!(action_for(&key('o'), Screen::Late), Some(Action::Reopen));
    assert_eq!(action_for(&key('o'), Screen::Overview), None, "o is the Late screen's");
    app.update(Action::Screen(Screen::Late));
    // Who decides is asked when $USER does not say, and a reopening needs a name.
    app.user = None;
    app.update(Action::Reopen);
    assert!(app.on_input_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    assert!(app.outbox.is_empty() && app.message.contains("needs the name"), "{}", app.message);
    app.update(Action::Reopen);
    for c in "ana".chars() {
        app.on_input_key(&key(c));
    }
    app.on_input_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(matches!(&app.popup, Some(Popup::Input { kind: InputKind::ReopenReason(_, by), .. }) if by == "ana"), "{:?}", app.popup);
    app.popup = None;
    app.user = Some("controller".into());
    // No reason, no reopening.
    app.update(Action::Reopen);
    assert!(app.on_input_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    assert!(app.outbox.is_empty() && app.message.contains("needs a reason"), "{}", app.message);
    app.update(Action::Reopen);
    for c in "approved by finance".chars() {
        app.on_input_key(&key(c));
    }
    app.on_input_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let Some(Job::PreviewReopen(at, reason)) = app.outbox.pop() else { panic!("a preview first: {:?}", app.outbox) };
    assert_eq!((at, reason.reason.as_str(), reason.by.as_str()), (d, "approved by finance", "controller"));
    app.running = None;
    app.on_reply(server.serve(Job::PreviewReopen(at, reason)).unwrap());
    let Some(Popup::Confirm { text, .. }) = &app.popup else { panic!("a confirmation: {:?}", app.popup) };
    assert!(text.contains(&amount) && text.contains("approved by finance"), "the question shows the amount and the reason:\n{text}");
    assert!(app.on_confirm_key(&key('y')));
    let Some(job @ Job::Reopen(..)) = app.outbox.pop() else { panic!("y reopens: {:?}", app.outbox) };
    app.running = None;
    let done = server.serve(job).unwrap();
    assert!(matches!(&done, Reply::Done(m) if m.contains("reopened by controller")), "{done:?}");
    app.on_reply(server.serve(Job::Load(Some(d))).unwrap());
    let check = app.view.as_ref().unwrap().check.retail().unwrap();
    assert!(check.countries.iter().all(|c| c.v2_revenue_minor == c.recompute_revenue_minor), "{check:?}");
    let h = app.view.as_ref().unwrap().history.retail().unwrap();
    assert!(h.entries.last().unwrap().trigger.detail.contains(": approved by finance"), "{:?}", h.entries.last());
}

/// On a model lab the worker loads dates as on retail's (a check ahead, neighbours ahead) and
/// serves the explorer's writes as the command line does them: U lands the world's next upload
/// and runs v2, v retries v1, a rollback is a snapshot of its own and lands nothing.
#[test]
fn on_a_model_lab_the_worker_loads_ahead_lands_the_next_upload_retries_v1_and_rolls_back() {
    use recount::tui::worker::Job;
    let dir = tempdir();
    let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing");
    let lab_dir = dir.path().join("lab");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .arg("--lab")
        .arg(&lab_dir)
        .args(["daily", "2026-06-18", "--world", world.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let d = |s: &str| s.parse::<chrono::NaiveDate>().unwrap();
    let mut server = server_on(recount::lake::Lab::open(&lab_dir).unwrap(), &world);
    let loaded = |server: &mut recount::tui::worker::Server| match server.serve(Job::Load(None)).unwrap() {
        Reply::ModelLoaded(load) => load,
        other => panic!("a model lab's load: {other:?}"),
    };
    let done = |r: Reply| match r {
        Reply::Done(text) => text,
        other => panic!("a write's answer: {other:?}"),
    };
    let first = loaded(&mut server);
    assert_eq!(first.overview.next_upload, Some(d("2026-06-19")));
    let landed = done(server.serve(Job::LandNext).unwrap());
    assert!(landed.starts_with("upload 2026-06-19 landed"), "{landed}");
    let then = loaded(&mut server);
    assert_eq!(then.overview.next_upload, Some(d("2026-06-20")));
    assert!(then.overview.dates.len() > first.overview.dates.len(), "the upload's dates joined the navigator");
    // The lateness histogram, kept between loads, is counted again once a file lands.
    let events = |o: &recount::reports::overview::LabOverview| o.lateness.buckets.iter().map(|b| b.events).sum::<i64>();
    assert!(events(&first.overview) > 0 && events(&then.overview) > events(&first.overview), "{:?}", then.overview.lateness);
    assert_eq!(first.overview.lateness.entity, "record");
    // A model lab's dates load as retail's do: the opened date's neighbours ahead, from memory
    // after; a date not loaded yet sends its check ahead of the rest.
    let opened = then.view.as_ref().expect("the lab opens on a date").check.business_date();
    let others: Vec<_> = then.overview.dates.iter().map(|x| x.business_date).filter(|x| *x != opened).collect();
    assert!(!others.is_empty(), "{:?}", then.overview.dates);
    assert!(server.head(opened).unwrap().is_none(), "the opened date is served from memory");
    let head = server.head(others[0]).unwrap().expect("a date not loaded yet has a head");
    assert_eq!(head.model().map(|c| c.business_date), Some(others[0]), "{head:?}");
    while server.prefetch().unwrap() {}
    assert!(server.loaded_dates().contains(&others[0]), "{:?}", server.loaded_dates());
    let v1 = done(server.serve(Job::RetryV1(d("2026-06-19"))).unwrap());
    assert!(v1.starts_with("v1 for 2026-06-19 appended") && !v1.contains(" 0 row"), "{v1}");
    let day = match server.serve(Job::LoadDate(d("2026-06-19"))).unwrap() {
        Reply::DateLoaded(day) => day,
        other => panic!("{other:?}"),
    };
    assert!(!day.check.model().unwrap().v1.is_empty(), "the Overview counts v1 now");
    let back = done(server.serve(Job::Rollback(1)).unwrap());
    assert!(back.starts_with("rolled back to snapshot 1 as snapshot 3"), "{back}");
    assert_eq!(loaded(&mut server).overview.next_upload, Some(d("2026-06-20")), "a rollback lands nothing");
    // Kept views follow their budget: with room for none beside the date on screen, that one
    // stays and nothing more is loaded ahead.
    drop(server);
    let mut tight = server_on(recount::lake::Lab::open(&lab_dir).unwrap(), &world).with_views_budget(1);
    let Reply::ModelLoaded(load) = tight.serve(Job::Load(Some(d("2026-06-19")))).unwrap() else { panic!("the model's load") };
    assert_eq!(load.view.map(|v| v.check.business_date()), Some(d("2026-06-19")));
    assert!(!tight.prefetch().unwrap(), "no room to load ahead");
    assert_eq!(tight.loaded_dates(), [d("2026-06-19")]);
    drop(tight);
}

/// The explorer's writes on a manufacturing lab: C lands the world's corrections one by one (the
/// corrected counts rewrite 2026-06-29, the recompressed copy changes nothing), and o reopens a
/// date with records past its window after a preview in the model's words.
#[test]
fn the_explorer_lands_a_model_world_s_corrections_and_reopens_its_late_date() {
    use recount::tui::worker::{Job, Reopening};
    let dir = tempdir();
    let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing");
    let model = recount::model::built_in("manufacturing").unwrap();
    let mut lab = open_lab(dir.path());
    let uploads: Vec<chrono::NaiveDate> = day("2026-06-18").iter_days().take(28).collect();
    recount::lake::model::land(&mut lab, &world, &model, &uploads).unwrap();
    recount::lake::model::run(&lab, &model, &uploads, recount::rules::DEFAULT_LATE_DAYS).unwrap();
    let mut server = server_on(lab, &world);
    // c on the Overview sums the rows by the grain's first field, where retail splits by country.
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    app.on_reply(server.serve(Job::Load(Some(day("2026-06-29")))).unwrap());
    let by_grain = text(&render(&mut app, 160, 40));
    assert!(by_grain.contains("by grain") && by_grain.contains("gearbox-a"), "{by_grain}");
    // Over it, as on a retail lab: the date's finality and verdict, and the lateness histogram
    // in the model's words.
    assert!(
        by_grain.contains("2026-06-29 — closed: ")
            && by_grain.contains("; gold.daily_metrics: v2")
            && by_grain.contains("equals the recompute"),
        "{by_grain}"
    );
    assert!(by_grain.contains("lateness: upload date - business date (events, records)"), "{by_grain}");
    // The tabs speak the model's words: its entity's re-sent copies, not baskets.
    assert!(by_grain.contains("3 Records") && !by_grain.contains("Baskets"), "{by_grain}");
    app.update(Action::SplitByCountry);
    let grouped = text(&render(&mut app, 160, 40));
    assert!(grouped.contains("2026-06-29: gold.daily_metrics, v1 and v2 beside the recount, by plant_id"), "{grouped}");
    assert!(grouped.contains("plant-a") && !grouped.contains("gearbox-a"), "one row a plant:\n{grouped}");
    let check = recount::reports::check::model_check(&server.lab, &model, day("2026-06-29"), 2, None).unwrap();
    let units_of_a: i64 = check.v2.iter().filter(|r| r.grain[0] == "plant-a").map(|r| r.measures[1]).sum();
    let grouped_a = check.grouped().unwrap().v2.into_iter().find(|r| r.grain == ["plant-a"]).unwrap();
    assert_eq!(grouped_a.measures[1], units_of_a, "the plant's units are its lines' and products' sum");
    let done = |reply: Reply| match reply {
        Reply::Done(text) => text,
        other => panic!("expected Done, got {other:?}"),
    };
    let first = done(server.serve(Job::LandCorrection).unwrap());
    assert!(
        first.contains("upload 2026-06-30") && first.contains("plant-a.jsonl.gz v2") && first.contains("rewrote 2026-06-29"),
        "{first}"
    );
    let second = done(server.serve(Job::LandCorrection).unwrap());
    assert!(second.contains("plant-a.jsonl.gz v3") && second.contains("nothing, its inputs unchanged"), "{second}");
    let none = done(server.serve(Job::LandCorrection).unwrap());
    assert!(none.contains("no correction"), "{none}");
    // History shows the corrected date's gold before and after, as `history` prints it, between
    // its versions and the records the correction touched.
    app.on_reply(server.serve(Job::Load(Some(day("2026-06-29")))).unwrap());
    app.update(Action::Screen(Screen::History));
    let history = text(&render(&mut app, 160, 60));
    let gold = history.find("gold.daily_metrics on 2026-06-29: version of snapshot").unwrap_or_else(|| panic!("{history}"));
    let (versions, changed) = (history.find("history of 2026-06-29").unwrap(), history.find("records that changed").unwrap());
    assert!(versions < gold && gold < changed, "{history}");
    assert!(history.find("closed: ").is_some_and(|at| at < versions), "the date's finality heads its history:\n{history}");
    // Explain, Baskets and Late are every lab's screens: the bridge to one v1 run, the re-sent
    // records, and the rows past the window over every refused line, counted.
    app.update(Action::Screen(Screen::Explain));
    let explain = text(&render(&mut app, 160, 40));
    assert!(explain.contains("2026-06-29: recompute - missed + double counted = v1") && explain.contains("= one v1 run"), "{explain}");
    app.update(Action::Screen(Screen::Baskets));
    let baskets = text(&render(&mut app, 160, 40));
    assert!(baskets.contains("re-sent record(s)") && baskets.contains("which copy counts"), "{baskets}");
    // The hints and help speak the model's words too: its entity and key, and a part of a date
    // where retail says country (a plant feed names none).
    assert!(baskets.contains("f part") && !baskets.contains("country"), "{baskets}");
    app.update(Action::Help);
    let help = text(&render(&mut app, 160, 60));
    let copy = format!("copy the {} to the clipboard", model.key);
    assert!(help.contains("filter records by part") && help.contains(&copy) && !help.contains("basket"), "{help}");
    app.update(Action::Help);
    app.update(Action::Screen(Screen::Late));
    let late = text(&render(&mut app, 160, 40));
    let refused = recount::reports::listings::quarantine(&server.lab, None).unwrap();
    assert!(refused.lines > 0 && late.contains(&recount::reports::Report::headline(&refused)), "{late}");

    let decision = || Reopening { reason: "the line's records came in late".into(), by: "controller".into() };
    let late = day("2026-07-02");
    let Reply::ReopenPreview(d, question, _) = server.serve(Job::PreviewReopen(late, decision())).unwrap() else { panic!("a preview") };
    assert!(d == late && question.contains("record(s)") && question.contains("The window widens from 2 to"), "{question}");
    let reopened = done(server.serve(Job::Reopen(late, decision())).unwrap());
    assert!(reopened.contains("2026-07-02 reopened by controller as snapshot"), "{reopened}");
    // Reopened, the date holds nothing past its window: a second preview says so.
    let again = server.serve(Job::PreviewReopen(late, decision()));
    assert!(again.is_err_and(|e| format!("{e:#}").contains("nothing to reopen")), "a reopened date has nothing left past its window");

    // A reset empties the lab; U then lands the model world's first upload again, and the
    // explorer loads it as the model's.
    let reset = done(server.serve(Job::Reset).unwrap());
    assert!(reset.contains("is empty") && reset.contains("model manufacturing"), "{reset}");
    assert!(server.lab.is_empty().unwrap(), "nothing is left in the lab");
    let Reply::ModelLoaded(empty) = server.serve(Job::Load(None)).unwrap() else { panic!("the empty model lab's load") };
    assert!(empty.overview.dates.is_empty() && empty.overview.next_upload == Some(day("2026-06-18")), "{:?}", empty.overview.next_upload);
    let first = done(server.serve(Job::LandNext).unwrap());
    assert!(first.contains("upload 2026-06-18 landed"), "{first}");
    let Reply::ModelLoaded(load) = server.serve(Job::Load(None)).unwrap() else { panic!("the model's load") };
    assert_eq!(load.overview.newest_upload, Some(day("2026-06-18")), "one upload landed since the reset");
}

/// `tui --audit` on a model lab: the foreign gold is audited in the model's columns, the Audit
/// screen opens on its first wrong date with that date's rows by grain and their causes, and
/// Enter opens a row's two sides, measure by measure. The screen said it read retail's only.
#[test]
fn on_a_model_lab_the_audit_screen_reads_a_foreign_gold_in_the_model_s_columns() {
    use recount::tui::worker::{AuditSource, Audited, Job, Server, Setup};
    let dir = tempdir();
    let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("sample-data-manufacturing");
    let model = recount::model::built_in("manufacturing").unwrap();
    let gold = dir.path().join("theirs.csv");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_recount"))
        .args(["generate", "--foreign-gold", "--world", world.to_str().unwrap(), "--out", gold.to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&made.stderr);
    assert!(made.status.success(), "{said}");
    // "  2026-06-29 plant-a/line-1/gearbox-a: duplicates_counted": each wrong row and its cause.
    let injected: Vec<(&str, &str)> = said.lines().skip(1).filter_map(|l| l.trim().rsplit_once(": ")).collect();
    let first = injected.iter().map(|(at, _)| &at[..10]).min().unwrap_or_else(|| panic!("{said}"));
    let mut lab = open_lab(&dir.path().join("lab"));
    let uploads: Vec<chrono::NaiveDate> = day("2026-06-18").iter_days().take(28).collect();
    recount::lake::model::land(&mut lab, &world, &model, &uploads).unwrap();
    recount::lake::model::run(&lab, &model, &uploads, recount::rules::DEFAULT_LATE_DAYS).unwrap();
    let root = lab.root.clone();
    drop(lab);
    let setup = || Setup {
        lab_dir: root.clone(),
        world: world.clone(),
        bootstrap: false,
        late_days: recount::rules::DEFAULT_LATE_DAYS,
        warehouse: None,
        audit: Some(AuditSource { gold: gold.clone(), map: Default::default() }),
    };
    // The worker's thread audits after the model's full load, as it does after retail's.
    let worker = recount::tui::worker::spawn(setup()).unwrap();
    worker.jobs.send(Job::Load(None)).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match worker.replies.recv_timeout(left) {
            Ok(Reply::Audited(a)) => break assert!(matches!(&a, Ok(a) if matches!(**a, Audited::Model(_))), "{a:?}"),
            Ok(_) => {}
            Err(e) => panic!("the worker never audited the model lab: {e}"),
        }
    }
    worker.stop();
    let mut server = Server::new(recount::lake::Lab::open(&root).unwrap(), setup());
    let mut app = App::new(recount::tui::theme::Theme::load("dark").unwrap(), false);
    app.outbox.clear();
    app.on_reply(server.serve(Job::Load(None)).unwrap());
    let audited = server.audit().expect("the explorer audits the gold it was given");
    assert!(matches!(&audited, Ok(a) if matches!(**a, Audited::Model(_))), "{audited:?}");
    app.on_reply(Reply::Audited(audited));
    app.on_reply(server.serve(Job::LoadDate(day(first))).unwrap());
    app.update(Action::Screen(Screen::Audit));
    let screen = text(&render(&mut app, 200, 50));
    assert!(screen.contains(&format!("audit of {} for {first}", gold.display())), "{screen}");
    // Every injected fault of the date is a row of its grain with its cause, the wrong rows first.
    for (at, cause) in injected.iter().filter(|(at, _)| at.starts_with(first)) {
        let grain: Vec<&str> = at[11..].split('/').collect();
        let row = screen.lines().find(|l| grain.iter().all(|g| l.contains(g)) && l.contains(cause));
        assert!(row.is_some(), "{at}: {cause}\n{screen}");
    }
    app.update(Action::Drill);
    let popup = text(&render(&mut app, 200, 50));
    let measure = &model.measures[0].name;
    assert!(popup.contains(&format!("{measure}: theirs ")) && popup.contains(", right "), "{popup}");
}
