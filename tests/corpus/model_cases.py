"""Writes tests/corpus/models.jsonl: the manufacturing model's verdict on each line, decided here
from the contract (docs/data-contract.md, "Models"), not by running either engine. The lab's
reader (crates/raw/src/model/read.rs, in tests/models.rs) and the Spark driver's
(spark/recount_spark/model.py, in spark/tests/test_models.py) must each give every verdict.

    python3 tests/corpus/model_cases.py      # rewrites models.jsonl

Each case: {"case", "upload_date", "line", "expect": {"reason": TEXT} | {"reason_starts": TEXT} |
{"record": {...}}}. A record: key, event_id, business_date, grain, measures (records, units,
defects), arrival_ns, event_ns. Plants: plant-a (Europe/Berlin), plant-b (America/Chicago), plant-c
(Asia/Kolkata)."""

import datetime as dt
import json
import os

UPLOAD = "2026-06-30"
UP_NS = int(dt.datetime(2026, 6, 30, 1, tzinfo=dt.UTC).timestamp()) * 10**9  # BASE's uploaded_at
BASE = {
    "event_id": "ev-1", "record_id": "PB-L1-2026062922", "plant_id": "plant-b", "line_id": "line-1",
    "product_id": "gearbox-b", "produced_at": "2026-06-30T03:50:00.000Z", "uploaded_at": "2026-06-30T01:00:00Z",
    "units": 12, "defects": 1,
}
DROP = object()
cases = []


def line(**over):
    d = dict(BASE)
    for k, v in over.items():
        if v is DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def ns(instant):
    """An ISO-8601 instant as nanoseconds since the epoch (whole seconds and an offset, as here)."""
    return int(dt.datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp()) * 10**9


def record(business_date, measures=(1, 12, 1), produced=BASE["produced_at"], **over):
    r = {"key": BASE["record_id"], "event_id": BASE["event_id"], "business_date": business_date,
         "grain": [BASE["plant_id"], BASE["line_id"], BASE["product_id"]], "attributes": [], "measures": list(measures),
         "arrival_ns": UP_NS, "event_ns": ns(produced)}
    r.update(over)
    return {"record": r}


def case(name, text, expect, upload=UPLOAD):
    cases.append({"case": name, "upload_date": upload, "line": text, "expect": expect})


# Business dates in each plant's zone.
case("chicago_evening_is_the_day_before", line(), record("2026-06-29"))
case("kolkata_half_hour_after_midnight", line(plant_id="plant-c", produced_at="2026-06-29T18:45:00Z"),
     record("2026-06-30", produced="2026-06-29T18:45:00Z", grain=["plant-c", "line-1", "gearbox-b"]))
case("kolkata_half_hour_before_midnight", line(plant_id="plant-c", produced_at="2026-06-29T18:15:00Z"),
     record("2026-06-29", produced="2026-06-29T18:15:00Z", grain=["plant-c", "line-1", "gearbox-b"]))
case("berlin_offset_form", line(plant_id="plant-a", produced_at="2026-06-30T00:30:00+02:00"),
     record("2026-06-30", produced="2026-06-30T00:30:00+02:00", grain=["plant-a", "line-1", "gearbox-b"]))
case("zero_units_and_defects", line(units=0, defects=0), record("2026-06-29", (1, 0, 0)))
case("unknown_fields_ignored", line(shift="night", operator={"id": 7}), record("2026-06-29"))
case("arrival_with_fraction", line(uploaded_at="2026-06-30T01:00:00.123456789Z"),
     record("2026-06-29", arrival_ns=UP_NS + 123456789))
# The model's checks, by name.
case("defects_over_units", line(units=2, defects=3), {"reason": "breaks check defects_within_units (defects <= units)"})
case("negative_units", line(units=-1, defects=0), {"reason": "breaks check units_non_negative (units >= 0)"})
case("negative_defects", line(defects=-2), {"reason": "breaks check defects_non_negative (defects >= 0)"})
# The contract's reasons.
case("unknown_plant", line(plant_id="plant-z"), {"reason": "unknown plant_id 'plant-z'"})
case("missing_key", line(record_id=DROP), {"reason": "missing required field record_id"})
case("null_key", line(record_id=None), {"reason": "missing required field record_id"})
case("empty_line_id", line(line_id=""), {"reason": "empty required field line_id"})
case("numeric_product", line(product_id=7), {"reason": "product_id is not a string"})
case("long_key", line(record_id="r" * 257), {"reason": "record_id of 257 bytes, longer than the 256 recount keeps"})
case("units_as_text", line(units="5"), {"reason": "units is not an integer"})
case("units_as_bool", line(units=True), {"reason": "units is not an integer"})
case("units_fraction", line(units=1.5), {"reason": "units 1.5 is not an integer within 64 bits"})
case("units_past_64_bits", line().replace('"units":12', '"units":9223372036854775808'),
     {"reason": "units 9223372036854775808 is not an integer within 64 bits"})
case("missing_defects", line(defects=DROP), {"reason": "missing required field defects"})
case("leap_second", line(produced_at="2026-06-30T03:59:60Z"),
     {"reason": "produced_at '2026-06-30T03:59:60Z' is a leap second (second 60), which recount refuses"})
case("not_an_instant", line(produced_at="30/06/2026 03:50"),
     {"reason": "produced_at '30/06/2026 03:50' is not an ISO-8601 instant"})
case("arrival_in_another_partition", line(uploaded_at="2026-07-01T00:00:01Z"),
     {"reason": "uploaded_at 2026-07-01T00:00:01.000Z is not in partition upload_date=2026-06-30"})
case("not_an_object", "[1,2]", {"reason": "not one JSON object"})
case("not_json", "{\"record_id\":", {"reason_starts": "not one JSON object: "})
case("nan_is_not_json", line().replace('"units":12', '"units":NaN'), {"reason_starts": "not one JSON object: "})
# The order of the checks: the first fault in the model's order names the line.
case("key_before_plant", line(record_id=DROP, plant_id="plant-z"), {"reason": "missing required field record_id"})
case("grain_before_times", line(line_id=DROP, produced_at="nope"), {"reason": "missing required field line_id"})
case("measures_before_checks", line(units="x", defects=99), {"reason": "units is not an integer"})
case("checks_before_plant", line(units=1, defects=2, plant_id="plant-z"),
     {"reason": "breaks check defects_within_units (defects <= units)"})
case("plant_before_partition", line(plant_id="plant-z", uploaded_at="2026-07-01T00:00:01Z"),
     {"reason": "unknown plant_id 'plant-z'"})

# A model of one's own whose measure sums a list (the contract's section 7): a sum over an empty
# list is 0 and the entity counts, unless the model declares the check `LIST[] not empty`. These
# cases name their model; the others are manufacturing's.
ENERGY = {
    "name": "energy", "gold": "daily_energy", "entity": "record", "key": "record_id", "event_id": "event_id",
    "event_time": "produced_at", "arrival_time": "uploaded_at", "events_root": "mes/records",
    "dimension": {"file": "plants.csv", "key": "plant_id", "timezone": "timezone"}, "business_date": None,
    "grain": ["plant_id"], "attributes": [],
    "measures": [{"name": "records", "of": "count"}, {"name": "wh", "of": "intervals[].wh"}], "checks": [],
}
CHECKED = {**ENERGY, "checks": [{"name": "has_intervals", "rule": "intervals[] not empty"}]}


def energy(name, model, text, expect):
    cases.append({"case": name, "model": model, "upload_date": UPLOAD, "line": text, "expect": expect})


def metered(measures):
    return record("2026-06-29", measures, grain=[BASE["plant_id"]])


energy("list_summed", ENERGY, line(intervals=[{"wh": 5}, {"wh": 7, "at": "x"}]), metered((1, 12)))
energy("empty_list_sums_to_zero_and_counts", ENERGY, line(intervals=[]), metered((1, 0)))
energy("list_missing", ENERGY, line(), {"reason": "missing required field intervals"})
energy("list_null", ENERGY, line(intervals=None), {"reason": "missing required field intervals"})
energy("list_not_a_list", ENERGY, line(intervals=5), {"reason": "intervals is not a list"})
energy("list_item_not_an_integer", ENERGY, line(intervals=[{"wh": 1}, {"wh": "2"}]), {"reason": "intervals 2: wh is not an integer"})
energy("list_item_without_the_field", ENERGY, line(intervals=[{"kwh": 1}]), {"reason": "intervals 1: missing required field wh"})
energy("checked_empty_list_is_refused", CHECKED, line(intervals=[]), {"reason": "breaks check has_intervals (intervals[] not empty)"})
energy("checked_list_with_one_item", CHECKED, line(intervals=[{"wh": 3}]), metered((1, 3)))
energy("checked_missing_list_names_the_field", CHECKED, line(), {"reason": "missing required field intervals"})

# A model whose business date is a field read as-is: exactly YYYY-MM-DD, a real day in years 0001
# to 9999, or the line is refused.
DATED = {**ENERGY, "name": "shifts", "gold": "daily_shifts", "dimension": None, "business_date": "shift_date",
         "measures": [{"name": "records", "of": "count"}, {"name": "units", "of": "units"}]}


def shift(name, date, expect):
    energy(name, DATED, line(shift_date=date), expect)


def not_a_date(text):
    return {"reason": f"shift_date '{text}' is not a date YYYY-MM-DD"}


shift("shift_date_read_as_is", "2026-06-27", record("2026-06-27", (1, 12), grain=[BASE["plant_id"]]))
shift("shift_date_without_leading_zeros", "2026-6-27", not_a_date("2026-6-27"))
shift("shift_date_as_an_iso_week", "2026-W26-6", not_a_date("2026-W26-6"))
shift("shift_date_in_year_zero", "0000-01-01", not_a_date("0000-01-01"))
shift("shift_date_past_year_9999", "+10000-01-01", not_a_date("+10000-01-01"))
shift("shift_date_not_in_the_calendar", "2026-02-30", not_a_date("2026-02-30"))
shift("shift_date_in_other_digits", "２０２６-06-27", not_a_date("２０２６-06-27"))
shift("shift_date_with_a_time", "2026-06-27T00:00", not_a_date("2026-06-27T00:00"))

# A field the model reads, given twice in one object, is refused when it is read (which copy was
# meant is unknown), as retail refuses a tender's amount given twice; a key it does not read may
# repeat. The line's other faults keep their order.
case("units_given_twice", line().replace('"units":12', '"units":12,"units":13'), {"reason": "units is given twice"})
case("a_key_not_read_may_repeat", line(shift="a").replace('"shift":"a"', '"shift":"a","shift":"b"'), record("2026-06-29"))
case("missing_key_before_a_field_given_twice", line(record_id=DROP).replace('"units":12', '"units":12,"units":12'),
     {"reason": "missing required field record_id"})
energy("list_item_field_given_twice", ENERGY, line(intervals=[{"wh": 1}, {"wh": 2}]).replace('{"wh":2}', '{"wh":2,"wh":3}'),
       {"reason": "intervals 2: wh is given twice"})
energy("list_given_twice", ENERGY, line(intervals=[{"wh": 1}]).replace('"intervals":', '"intervals":[],"intervals":'),
       {"reason": "intervals is given twice"})

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases -> {out}")
