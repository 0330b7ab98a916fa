"""Writes tests/corpus/words.jsonl: the words both engines write the same way, decided here from
the contract's and the lab's own wording, not by running either engine.

- `name_runs`: dates as runs of consecutive days, oldest first, each run `first..last` (one day
  alone), joined by ", " (a backfill's detail, a rebuild's files).
- `describe_change`: a store's correction, each changed field as "name old → new" in the order
  country, time zone, currency; from no row, "added (country, zone, currency)".
- `fingerprint_line`: "gold.TABLE: N rows, md5 HEX", N with a comma between thousands.

The lab (crates/lab/src/lake/v2.rs's test) and the Spark driver (spark/tests/test_corpus.py) give every
answer.

    python3 tests/corpus/words_cases.py > tests/corpus/words.jsonl
"""

import json


def case(rule, expect, **given):
    print(json.dumps({"rule": rule, **given, "expect": expect}, ensure_ascii=False))


case("name_runs", "", dates=[])
case("name_runs", "2026-10-12", dates=["2026-10-12"])
case("name_runs", "2026-10-12..2026-10-14", dates=["2026-10-12", "2026-10-13", "2026-10-14"])
case("name_runs", "2026-10-12..2026-10-13, 2026-10-22", dates=["2026-10-22", "2026-10-12", "2026-10-13", "2026-10-13"])
case("name_runs", "2026-10-12, 2026-10-14, 2026-10-16", dates=["2026-10-16", "2026-10-14", "2026-10-12"])
case("name_runs", "2028-02-28..2028-03-01", dates=["2028-02-28", "2028-02-29", "2028-03-01"])
case("name_runs", "2027-02-28..2027-03-01", dates=["2027-03-01", "2027-02-28"])
case("name_runs", "2026-12-31..2027-01-01, 2027-01-03", dates=["2027-01-03", "2026-12-31", "2027-01-01"])

case("describe_change", "store GB001: added (GB, Europe/London, GBP)", store_id="GB001", old=["", "", ""], new=["GB", "Europe/London", "GBP"])
case("describe_change", "store GB001: time zone Europe/London → Asia/Tokyo", store_id="GB001",
     old=["GB", "Europe/London", "GBP"], new=["GB", "Asia/Tokyo", "GBP"])
case("describe_change", "store SG001: country SG → MY, currency SGD → MYR", store_id="SG001",
     old=["SG", "Asia/Singapore", "SGD"], new=["MY", "Asia/Singapore", "MYR"])
case("describe_change", "store IN007: country IN → LK, time zone Asia/Kolkata → Asia/Colombo, currency INR → LKR", store_id="IN007",
     old=["IN", "Asia/Kolkata", "INR"], new=["LK", "Asia/Colombo", "LKR"])

md5 = "4eaa9693f648e3fe7340e11ef420c003"
case("fingerprint_line", f"gold.daily_store_sales: 1,260 rows, md5 {md5}", gold="daily_store_sales", rows=1260, md5=md5)
case("fingerprint_line", f"gold.daily_metrics: 0 rows, md5 {md5}", gold="daily_metrics", rows=0, md5=md5)
case("fingerprint_line", f"gold.daily_metrics: 999 rows, md5 {md5}", gold="daily_metrics", rows=999, md5=md5)
case("fingerprint_line", f"gold.daily_metrics: 1,000 rows, md5 {md5}", gold="daily_metrics", rows=1000, md5=md5)
case("fingerprint_line", f"gold.daily_store_sales: 2,297,357 rows, md5 {md5}", gold="daily_store_sales", rows=2297357, md5=md5)
case("fingerprint_line", f"gold.daily_deliveries: 1,000,000,000 rows, md5 {md5}", gold="daily_deliveries", rows=1000000000, md5=md5)
