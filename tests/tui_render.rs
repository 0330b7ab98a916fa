//! Render tests on ratatui's TestBackend: every screen, its text, and the style of a highlighted
//! disagreement. The app is loaded through the same functions the background worker uses.

mod common;

use recount::store::TriggerKind;

use common::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use recount::lake::{land, v1, v2};
use recount::tui::app::App;
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

fn render(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| recount::tui::draw::draw(f, app)).unwrap();
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
    app.on_reply(Reply::Loaded(Box::new(snap), Some(Box::new(view))));
    (lab, app, d)
}

/// The worker's server on `lab`, landing from `world`, as the explorer runs it.
fn server_on(lab: recount::lake::Lab, world: &std::path::Path) -> recount::tui::worker::Server {
    let setup = recount::tui::worker::Setup {
        lab_dir: lab.root.clone(),
        world: world.to_path_buf(),
        bootstrap: false,
        late_days: recount::rules::DEFAULT_LATE_DAYS,
    };
    recount::tui::worker::Server::new(lab, setup)
}

/// The server on the lab a first run builds from the bundled sample world.
fn sample_server(dir: &std::path::Path) -> recount::tui::worker::Server {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data");
    let mut lab = open_lab(dir);
    assert!(recount::lake::bootstrap::fill_if_empty(&mut lab, &sample).unwrap());
    server_on(lab, &sample)
}

#[test]
fn every_screen_renders_its_report_at_120x40_and_80x24() {
    let dir = tempdir();
    let (_lab, mut app, d) = loaded_app(dir.path());
    let expect: [&[&str]; 6] = [
        &["lateness", "per country", "v2 gold", "recompute", "GB", "IN", "SG", "£"],
        &["missed", "double counted", "holds"],
        &["re-sent basket", "which copy counts", "won: "],
        &["beyond the 2-day window", "quarantine"],
        &["history of", "added from upload", "baskets at each snapshot"],
        &["completeness", "uniqueness", "correctness", "timeliness", "consistency"],
    ];
    for (screen, words) in Screen::ALL.into_iter().zip(expect) {
        app.update(Action::Screen(screen));
        let screen_text = text(&render(&app, 120, 40));
        assert!(screen_text.contains(&d.format("%m-%d").to_string()), "navigator shows the date");
        for w in words {
            assert!(screen_text.contains(w), "screen {} lacks '{w}':\n{screen_text}", screen.name());
        }
        // The hint bar comes from the key table.
        for (label, hint) in keys::hints(screen) {
            if label.len() <= 2 && hint.len() <= 6 {
                assert!(screen_text.contains(&format!("{label} {hint}")), "hint '{label} {hint}' missing on {}", screen.name());
            }
        }
        let small = text(&render(&app, 80, 24));
        assert!(small.contains(screen.short()), "80x24 still shows the tab");
    }
    app.update(Action::Help);
    let help = text(&render(&app, 120, 40));
    for (label, line) in keys::help_lines().into_iter().take(10) {
        assert!(help.contains(label) && help.contains(&line[..line.len().min(20)]), "help lacks {label}: {line}");
    }
}

#[test]
fn a_disagreement_is_highlighted_in_the_warn_style() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Overview));
    app.update(Action::RowDown); // move the selection off the first row
    let buf = render(&app, 120, 40);
    let screen = text(&buf);
    // v1 ran twice for this date, so every country disagrees with the recompute: flagged rows.
    let y = screen.lines().position(|l| l.contains("GB ") && l.contains('£')).expect("GB row");
    let line = screen.lines().nth(y).unwrap();
    let x = line[..line.find("GB ").unwrap()].chars().count() as u16;
    let warn = app.theme.status(recount::reports::Status::Warn);
    assert_eq!(buf[(x, y as u16)].fg, warn.fg.unwrap(), "the disagreeing GB row is drawn in the warn colour");
    assert_ne!(warn.fg, app.theme.text().fg);
    // And with its mark, so it reads without colour: `!` in the mark column before the country.
    assert!(line[..line.find("GB ").unwrap()].trim_end().ends_with('!'), "the warn mark leads the row: {line}");
    // The navigator marks each date: ✓ closed or p provisional, then v1's and v2's marks.
    let nav: Vec<&str> = screen.lines().filter(|l| l.contains(" p") || l.contains(" ✓")).collect();
    assert!(nav.iter().any(|l| l.contains('✓')) && nav.iter().any(|l| l.contains("!")), "{screen}");
    assert!(!screen.contains('≠'), "no mark is told apart by colour alone:\n{screen}");
}

#[test]
fn columns_scroll_with_the_first_one_pinned_and_the_table_sorts_by_any_column() {
    let dir = tempdir();
    let (_lab, mut app, _d) = loaded_app(dir.path());
    app.update(Action::Screen(Screen::Overview));
    let title = |app: &App| text(&render(app, 80, 24)).lines().find(|l| l.contains("per country")).unwrap().to_string();
    let header =
        |app: &App| text(&render(app, 80, 24)).lines().find(|l| l.contains("country") && !l.contains("per country")).unwrap().to_string();
    let first = title(&app);
    let hidden: usize =
        first.split("+").nth(1).and_then(|t| t.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{first}"));
    assert!(first.contains("col ›") && !first.contains('‹'), "{first}");
    let before = header(&app);
    app.update(Action::ColumnsRight);
    let moved = title(&app);
    assert!(moved.contains("‹ 1 col"), "{moved}");
    let after = header(&app);
    assert!(after.contains("country"), "the first column stays: {after}");
    assert_ne!(before, after, "another column came into view");
    for _ in 0..20 {
        app.update(Action::ColumnsRight);
    }
    let end = title(&app);
    assert!(!end.contains("col ›") && end.contains(&format!("‹ {hidden} col")), "scrolls exactly to the last column: {end}");
    app.update(Action::ColumnsLeft);
    assert!(title(&app).contains(&format!("‹ {} col", hidden - 1)));

    // Sorting: by the first column up, then reversed; the cursor stays on its row.
    let countries = |app: &App| -> Vec<String> {
        text(&render(app, 120, 40))
            .lines()
            .filter(|l| l.contains('£') || l.contains('₹') || l.contains("S$"))
            .filter_map(|l| ["GB", "IN", "SG"].iter().find(|c| l.contains(&format!("{c} "))).map(|c| c.to_string()))
            .collect()
    };
    assert_eq!(countries(&app), ["GB", "IN", "SG"]);
    app.update(Action::SortNext);
    assert!(header(&app).contains("country ▲"), "{}", header(&app));
    app.update(Action::SortReverse);
    assert!(header(&app).contains("country ▼"));
    assert_eq!(countries(&app), ["SG", "IN", "GB"]);
    // Enter opens the row under the cursor, whatever the order: the first row is SG now.
    app.row = 0;
    app.update(Action::Drill);
    match &app.popup {
        Some(recount::tui::app::Popup::Detail { body, .. }) => assert!(body.contains("country: SG"), "{body}"),
        other => panic!("a detail popup, got {other:?}"),
    }
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
    app.on_reply(Reply::Loaded(Box::new(snap), Some(Box::new(load_view(&lab, d).unwrap()))));
    app.update(Action::Screen(Screen::History));
    let history = app.view.as_ref().unwrap().history.clone();
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
    app.on_reply(Reply::Loaded(Box::new(snap), Some(Box::new(view))));
    app.update(Action::Screen(Screen::Baskets));
    let buf = render(&app, 120, 40);
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
        Reply::DateLoaded(v) => v.check.countries.iter().map(|c| (c.country.clone(), c.v1_runs, c.v2_revenue_minor)).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let ahead = runs(server.serve(Job::LoadDate(next)).unwrap());
    let fresh = load_view(&server.lab, next).unwrap();
    assert_eq!(ahead, fresh.check.countries.iter().map(|c| (c.country.clone(), c.v1_runs, c.v2_revenue_minor)).collect::<Vec<_>>());

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
    let screen = text(&render(&app, 120, 40));
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
    let last = view.history.entries.last().unwrap();
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
    app.on_reply(server.serve(Job::Load(None)).unwrap());

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
    app.row = hits[0];
    app.update(Action::NextMatch);
    assert_eq!(app.row, hits[1]);
    app.update(Action::PrevMatch);
    assert_eq!(app.row, hits[0]);
    app.update(Action::PrevMatch);
    assert_eq!(app.row, *hits.last().unwrap(), "wraps around");
    app.row = 0;
    app.page_rows.set(3);
    app.update(Action::PageDown);
    assert_eq!(app.row, 3.min(rows.len() - 1));
    app.update(Action::PageUp);
    assert_eq!(app.row, 0);
}

#[test]
fn the_help_popup_scrolls_to_every_key_at_80x24() {
    let dir = tempdir();
    let (_lab, mut app, _) = loaded_app(dir.path());
    app.update(Action::Help);
    let first = text(&render(&app, 80, 24));
    assert!(first.contains("lines 1-"), "the title says which lines show:\n{first}");
    let (label, help) = keys::help_lines().last().cloned().unwrap();
    assert!(!first.contains(&help), "at 80x24 the last key is below the fold:\n{first}");
    app.update(Action::Bottom);
    let last = text(&render(&app, 80, 24));
    assert!(last.contains(&help[..help.len().min(30)]), "End shows the last key ({label}):\n{last}");
    app.update(Action::Top);
    assert_eq!(text(&render(&app, 80, 24)), first, "Home goes back to the first line");
    app.update(Action::PageDown);
    let paged = text(&render(&app, 80, 24));
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
    let want = head.table();
    app.on_reply(Reply::DateHead(Box::new(head)));
    assert!(app.view.is_none(), "the rest is still loading");
    assert!(app.running.is_none(), "the Overview is complete: keys act on it at once");
    app.update(Action::RetryV1);
    assert!(matches!(app.outbox.pop(), Some(Job::RetryV1(d)) if d == far), "v acts on the date while its other reports load");
    app.running = None;
    let screen = text(&render(&app, 120, 40));
    assert!(screen.contains(&format!("{far} per country")) && screen.contains("GB "), "{screen}");
    assert_eq!(app.current_table().map(|t| t.rows.len()), Some(want.rows.len()));
    app.update(Action::Screen(Screen::Explain));
    assert!(text(&render(&app, 120, 40)).contains("loading…"));
    app.update(Action::Screen(Screen::Overview));
    // Then the view, built around the same check; a loaded date sends no head.
    app.on_reply(server.serve(Job::LoadDate(far)).unwrap());
    let v = app.view.as_ref().expect("the view");
    assert_eq!(v.check.table().rows.len(), want.rows.len());
    assert!(app.head.is_none() && app.running.is_none());
    assert!(server.head(far).unwrap().is_none(), "a loaded date is served from memory");
    // A head for a date the user has left is dropped.
    let other = snap.dates[1].business_date;
    app.on_reply(Reply::DateHead(Box::new(recount::reports::check::check(&server.lab, other, None).unwrap())));
    assert!(app.head.is_none());
}
