//! The explorer's pictures: the trend of a country's revenue (v1, v2 gold, recompute), the steps
//! of one date's versions, and the bridge from the recompute to v1. Money stays in minor units:
//! a value becomes a position on the screen by integer arithmetic (`scaled`), and only that
//! position is handed to ratatui. Every picture tells its series by marks as well as colours,
//! and the screen's table beside it is the picture's text.

use super::theme::Theme;
use crate::reports::explain::{ExplainReport, PartExplain};
use crate::reports::history::HistoryEntry;
use crate::reports::trend::TrendSeries;
use chrono::NaiveDate;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Bar, BarChart, BarGroup, Block, Borders, Chart, Dataset, GraphType, Paragraph};

/// The chart's resolution: a value is placed on 0..=STEPS of its series' largest.
const STEPS: i64 = 1000;

/// `v` (minor units) as a share of `max` in `0..=steps`, by integer arithmetic; negative is 0.
pub(crate) fn scaled(v: i64, max: i64, steps: i64) -> i64 {
    if max <= 0 {
        return 0;
    }
    let s = i128::from(v.max(0)) * i128::from(steps) / i128::from(max);
    i64::try_from(s.min(i128::from(steps))).unwrap_or(steps)
}

/// The smallest area a picture is drawn in; smaller, the table alone tells it.
pub(crate) fn fits(area: Rect, min_width: u16, min_height: u16) -> bool {
    area.width >= min_width && area.height >= min_height
}

/// The legend's words, with each series' mark: without colour the marks tell them apart.
pub(crate) const TREND_LEGEND: [&str; 5] = ["█ v1", "• v2 gold", "⣀ recompute", "▄ provisional", "│ selected"];

/// A series per business date (a country's revenue): v1 (every run) as blocks, v2 gold as dots, the
/// recompute as a line; provisional dates along the floor; the selected date as a rule.
pub(crate) fn draw_trend(f: &mut Frame, t: &Theme, s: &TrendSeries, selected: Option<NaiveDate>, area: Rect) {
    let (floor, max) = (s.floor_minor(), s.max_minor());
    let point = |i: usize, v: i64| (i as f64, scaled(v.saturating_sub(floor), max - floor, STEPS) as f64);
    let v1: Vec<(f64, f64)> = s.points.iter().enumerate().filter_map(|(i, p)| p.v1.map(|v| point(i, v))).collect();
    let v2: Vec<(f64, f64)> = s.points.iter().enumerate().map(|(i, p)| point(i, p.v2)).collect();
    let rc: Vec<(f64, f64)> = s.points.iter().enumerate().map(|(i, p)| point(i, p.recompute)).collect();
    let provisional: Vec<(f64, f64)> = s.points.iter().enumerate().filter(|(_, p)| p.provisional).map(|(i, _)| (i as f64, 0.0)).collect();
    let at = selected.and_then(|d| s.points.iter().position(|p| p.business_date == d));
    let rule: Vec<(f64, f64)> = at.map(|i| vec![(i as f64, 0.0), (i as f64, STEPS as f64)]).unwrap_or_default();
    let datasets = vec![
        Dataset::default().name(TREND_LEGEND[2]).marker(Marker::Braille).graph_type(GraphType::Line).style(t.accent()).data(&rc),
        Dataset::default().name(TREND_LEGEND[4]).marker(Marker::Braille).graph_type(GraphType::Line).style(t.muted()).data(&rule),
        Dataset::default().name(TREND_LEGEND[3]).marker(Marker::Bar).graph_type(GraphType::Scatter).style(t.muted()).data(&provisional),
        Dataset::default().name(TREND_LEGEND[1]).marker(Marker::Dot).graph_type(GraphType::Scatter).style(t.text()).data(&v2),
        Dataset::default().name(TREND_LEGEND[0]).marker(Marker::Block).graph_type(GraphType::Scatter).style(t.bar(true)).data(&v1),
    ];
    let date = |i: usize| s.points.get(i).map(|p| p.business_date.format("%m-%d").to_string()).unwrap_or_default();
    let last = s.points.len().saturating_sub(1);
    // ratatui spreads axis labels evenly, so only the ends are labelled: the rule marks the
    // selected date, and the legend under the chart names it.
    let x_labels = vec![Span::raw(date(0)), Span::raw(date(last))];
    let y_labels = vec![Span::raw(s.amount(floor)), Span::raw(s.amount(floor + (max - floor) / 2)), Span::raw(s.amount(max))];
    let spikes = s.spikes();
    let title = if spikes.is_empty() {
        format!("{} per business date", s.heading())
    } else {
        let d: Vec<String> = spikes.iter().map(|d| d.format("%m-%d").to_string()).collect();
        format!("{} per business date: v1 spikes on {}", s.heading(), d.join(", "))
    };
    // The legend is a line under the plot, never over the data.
    let mut legend: Vec<Span> = TREND_LEGEND.iter().map(|l| Span::styled(format!(" {l} "), t.muted())).collect();
    if let Some(i) = at {
        legend.push(Span::styled(format!("({})", date(i)), t.muted()));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, t.title()))
        .title_bottom(Line::from(legend))
        .border_style(t.border(false));
    let chart = Chart::new(datasets)
        .block(block)
        .x_axis(Axis::default().bounds([0.0, last.max(1) as f64]).labels(x_labels).style(t.muted()))
        .y_axis(Axis::default().bounds([0.0, STEPS as f64]).labels(y_labels).style(t.muted()))
        .legend_position(None);
    f.render_widget(chart, area);
}

/// A cause in a few letters, for a bar's label.
fn cause(e: &HistoryEntry) -> String {
    use crate::lake::snapshot::TriggerKind as K;
    let word = match e.trigger.kind {
        K::Upload | K::Daily => e.trigger.upload.map(|u| format!("up {}", u.format("%m-%d"))).unwrap_or_else(|| "upload".into()),
        K::Backfill => "backfill".into(),
        K::Manual => "rebuild".into(),
        K::Naive => "v1".into(),
        K::Rollback => "rollback".into(),
        K::Store => "store fix".into(),
        K::Reopen => "reopen".into(),
    };
    format!("#{} {word}", e.snapshot_id)
}

/// One date's value in `country` at each of its versions, as steps: one bar per snapshot,
/// labelled by what caused it (the newest that fit, when there are many).
pub(crate) fn draw_steps(f: &mut Frame, t: &Theme, entries: &[HistoryEntry], country: &str, area: Rect) {
    let values: Vec<(String, i64, String)> = entries
        .iter()
        .filter_map(|e| e.countries.iter().find(|c| c.country == country).map(|c| (cause(e), c.revenue_minor, c.currency.clone())))
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!("{country} at each version of the date (the cause under each step)"), t.muted()))
        .border_style(t.border(false));
    let inner_width = block.inner(area).width;
    let bar_width: u16 = 12;
    let room = usize::from((inner_width / (bar_width + 1)).max(1));
    let shown = &values[values.len().saturating_sub(room)..];
    let max = shown.iter().map(|v| v.1).max().unwrap_or(0);
    let bars: Vec<Bar> = shown
        .iter()
        .map(|(label, v, currency)| {
            Bar::default()
                .value(scaled(*v, max, STEPS) as u64)
                .label(Line::from(label.clone()))
                .text_value(crate::money::format_major(*v, currency))
                .style(t.bar(false))
                .value_style(t.selected())
        })
        .collect();
    let chart = BarChart::default().block(block).data(BarGroup::default().bars(&bars)).bar_width(bar_width).bar_gap(1).max(STEPS as u64);
    f.render_widget(chart, area);
}

/// The bridge from the recompute to one run of v1, to scale, in the first measure the report
/// shows (retail's revenue): minus what v1 missed, plus the copies it counted twice, equals v1.
pub(crate) fn draw_bridge(f: &mut Frame, t: &Theme, e: &ExplainReport, c: &PartExplain, area: Rect) {
    let i = crate::reports::model::shown_measures(&e.model).first().copied().unwrap_or(0);
    let (Some(&recompute), Some(&missed), Some(&twice), Some(&v1)) =
        (c.recompute.get(i), c.missed.get(i), c.double_counted.get(i), c.v1.get(i))
    else {
        return;
    };
    let name = if c.part.is_empty() { e.model.measures[i].name.clone() } else { c.part.clone() };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!("{name}: recompute - missed + double counted = v1, to scale"), t.muted()))
        .border_style(t.border(false));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let money = |v: i64| e.amount(c, i, v);
    let after_missed = recompute.saturating_sub(missed);
    let after_twice = after_missed.saturating_add(twice);
    let max = [recompute, after_twice, v1].into_iter().max().unwrap_or(0);
    let label_w = 17usize;
    let value_w = [recompute, v1].iter().map(|v| money(*v).chars().count()).max().unwrap_or(0) + 2;
    let width = (inner.width as usize).saturating_sub(label_w + value_w + 1).max(4) as i64;
    // A span [from, to) of the scale as cells; a part that is not zero shows at least one cell,
    // the one its end falls in.
    let span = |from: i64, to: i64| {
        let (mut a, mut b) = (scaled(from, max, width), scaled(to, max, width));
        if to > from && a == b {
            (a, b) = if b > 0 { (b - 1, b) } else { (0, 1) };
        }
        (a as usize, (b - a) as usize)
    };
    let row = |label: &str, (pad, n): (usize, usize), mark: &str, value: String, style| {
        Line::from(vec![
            Span::styled(format!("{label:<label_w$}"), t.text()),
            Span::raw(" ".repeat(pad)),
            Span::styled(mark.repeat(n), style),
            Span::raw(" ".repeat((width as usize).saturating_sub(pad + n) + 1)),
            Span::styled(format!("{value:>value_w$}"), t.text()),
        ])
    };
    let lines = vec![
        row("recompute", span(0, recompute), "█", money(recompute), t.bar(false)),
        row("- missed", span(after_missed, recompute), "░", format!("-{}", money(missed)), t.status(crate::reports::Status::Fail)),
        row("+ double counted", span(after_missed, after_twice), "▓", format!("+{}", money(twice)), t.status(crate::reports::Status::Warn)),
        row("= v1 (one run)", span(0, v1), "█", money(v1), t.bar(true)),
    ];
    f.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_is_exact_integer_arithmetic_that_never_overflows() {
        assert_eq!(scaled(500, 1000, 1000), 500);
        assert_eq!(scaled(i64::MAX, i64::MAX, 1000), 1000);
        assert_eq!(scaled(i64::MAX / 2, i64::MAX, 1000), 499);
        assert_eq!(scaled(-5, 100, 1000), 0);
        assert_eq!(scaled(5, 0, 1000), 0);
        assert_eq!(scaled(200, 100, 1000), 1000, "past the top is the top");
    }

    #[test]
    fn the_trend_s_floor_sits_below_its_smallest_answer_not_at_zero() {
        use crate::reports::trend::TrendPoint;
        let day = |d: u32| NaiveDate::from_ymd_opt(2026, 10, d).unwrap_or_default();
        let point = |d: u32, v1: Option<i64>, v2: i64, rc: i64| TrendPoint {
            business_date: day(d),
            provisional: false,
            v1,
            v2,
            recompute: rc,
            v2_explained: true,
        };
        let s = TrendSeries {
            part: "GB".into(),
            measure: "revenue_minor".into(),
            currency: Some("GBP".into()),
            label: "GB".into(),
            points: vec![point(1, None, 9_000, 9_000), point(2, Some(20_000), 10_000, 10_000), point(3, None, 0, 9_500)],
        };
        // The smallest answer is 9,000 (v2 not built yet counts by its recompute), the largest
        // v1's 20,000: a tenth of the range below the smallest.
        assert_eq!((s.floor_minor(), s.max_minor()), (7_900, 20_000));
        let flat = TrendSeries { points: vec![point(1, None, 5, 5)], ..s };
        assert_eq!(flat.floor_minor(), 5, "one value: the floor is it");
    }
}
