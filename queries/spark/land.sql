-- land.sql (Spark): landing uploads' files into bronze. Beside queries/land.sql.
-- Parsing is the driver's parse_file (spark/recount_spark/parse.py), run in the executors, each task
-- a run of consecutive files in upload order (land.in_upload_order); these statements place its rows.

-- define: uploads
-- The uploads a landing writes, bound as one parameter :uploads (ISO dates joined by commas), as
-- v2.sql's changed_dates: a cast Spark folds into one literal array, never a per-row lambda.
CAST(split(nullif(:uploads, ''), ',') AS array<date>)

-- name: new_rows
-- The parsed lines (temp view `parsed`): events with their store's country and business date
-- (temp view `stores_in`: the stores this landing reads lines by),
-- the calendar date of event_ts in the store's named zone by Spark's own time-zone rules
-- (daylight-saving aware), and quarantined lines with their reason. The stores are broadcast: a
-- join by shuffle sent every line across to meet a few hundred stores (sorting 291 MB to disk on
-- the full world), and put every upload in each task, so each wrote a data file per upload.
SELECT /*+ BROADCAST(s) */ p.upload_date, p.file_name, p.file_version, p.line, p.event_id, p.basket_id, p.store_id, p.till_id,
       p.event_ts, p.uploaded_at, p.uploaded_at_ns, p.currency, s.country, p.revenue_minor, p.tenders,
       CASE WHEN p.reason IS NULL THEN to_date(from_utc_timestamp(p.event_ts, s.timezone)) END AS business_date,
       p.reason
FROM parsed p LEFT JOIN stores_in s ON s.store_id = p.store_id AND p.reason IS NULL;

-- name: kept_rows
-- The rows uploads :uploads already hold of the versions raw_files records: a landing rewrites the
-- partitions with them plus its new rows, so rows of a landing that died before its record go.
SELECT e.* FROM lake.recount.bronze_events e
JOIN lake.recount.raw_files f
  ON f.upload_date = e.upload_date AND f.file_name = e.file_name AND f.version = e.file_version
WHERE array_contains(@uploads, e.upload_date);

-- name: files_of_stores
-- The file versions whose lines depend on the row of a store of :store_ids (a JSON list), with one
-- such store of each: those holding its events, and those with a line quarantined for a reason
-- that names it (an unknown store, a currency other than its own), as queries/land.sql's
-- files_of_stores, in one statement for every store a landing changes. The driver keeps the
-- current versions.
WITH ids AS (SELECT explode(from_json(:store_ids, 'array<string>')) AS store_id),
hits AS (
  SELECT e.upload_date, e.file_name, e.file_version, e.store_id FROM lake.recount.bronze_events e
  WHERE e.reason IS NULL AND e.store_id IN (SELECT store_id FROM ids)
  UNION ALL
  SELECT q.upload_date, q.file_name, q.file_version, ids.store_id FROM lake.recount.bronze_events q
  JOIN ids ON instr(q.reason, ids.store_id) > 0
  WHERE q.reason IS NOT NULL)
SELECT upload_date, file_name, file_version, min(store_id) AS store_id FROM hits
GROUP BY upload_date, file_name, file_version
ORDER BY upload_date, file_name;

-- name: unknown_stores
-- The store_ids lines were quarantined for as unknown (parse.py's reason "unknown store_id 'X'"),
-- as queries/land.sql's unknown_stores: a store stores.csv adds later re-derives their files.
SELECT DISTINCT substr(reason, 19, length(reason) - 19) AS store_id FROM lake.recount.bronze_events
WHERE startswith(reason, 'unknown store_id ''');
