-- model.sql: the lab of a model other than retail (docs/data-contract.md, "Models").
-- Reads and writes the model schema only (schema.sql): the lab's model, the dimension's
-- versions, files and their records, silver's and gold's versions, snapshots, v1's appends.
-- The rules are retail's: the window (in_window), the copy order, the input hash that makes an
-- unchanged date's rebuild a skip, gold summed from silver's winners.

-- name: definition_get
SELECT name, parts FROM model.definition;

-- name: definition_set
INSERT INTO model.definition VALUES ($name, $parts);

-- name: dimension_newest
SELECT version, md5, text FROM model.dimension_versions ORDER BY version DESC LIMIT 1;

-- name: dimension_versions
-- Every version of the dimension file, oldest first: a key gone from a later version keeps the
-- row it last had (lake::model::dimension_table).
-- As of snapshot $as_of (NULL: now), the versions landed by then.
SELECT version, md5, text FROM model.dimension_versions
WHERE $as_of::BIGINT IS NULL OR landed_at <= (SELECT created_at FROM model.snapshots WHERE snapshot_id = $as_of::BIGINT)
ORDER BY version;

-- name: measure_past_limit
-- The first (business date, grain) the landing's new files (file id $first_file_id on) touch
-- where a measure, summed as absolute values over every copy in the current files, passes
-- $limit: exact in HUGEINT. Below it no sum of that grain (v2, the recount, a v1 run) can leave
-- 64 bits. Each measure's total, and one of the new files that brought the grain's records.
WITH touched AS (SELECT DISTINCT business_date FROM model.records WHERE file_id >= $first_file_id::INTEGER),
sums AS (
    SELECT r.business_date, r.g1, r.g2, r.g3, r.g4,
           sum(abs(r.m1::HUGEINT)) AS t1, sum(abs(r.m2::HUGEINT)) AS t2, sum(abs(r.m3::HUGEINT)) AS t3,
           sum(abs(r.m4::HUGEINT)) AS t4, sum(abs(r.m5::HUGEINT)) AS t5, sum(abs(r.m6::HUGEINT)) AS t6,
           -- The new file's id, named only for the row returned: a name per record would be
           -- text built for every record the dates hold.
           min(CASE WHEN r.file_id >= $first_file_id::INTEGER THEN r.file_id END) AS new_file_id
    FROM model.records r SEMI JOIN model.current_files f USING (file_id)
    WHERE r.business_date IN (SELECT business_date FROM touched)
    GROUP BY r.business_date, r.g1, r.g2, r.g3, r.g4),
past AS (
    SELECT * FROM sums
    WHERE greatest(coalesce(t1, 0), coalesce(t2, 0), coalesce(t3, 0), coalesce(t4, 0), coalesce(t5, 0), coalesce(t6, 0)) > $limit::HUGEINT
    ORDER BY business_date, g1, g2, g3, g4
    LIMIT 1)
SELECT p.business_date, p.g1, p.g2, p.g3, p.g4, p.t1::VARCHAR AS t1, p.t2::VARCHAR AS t2, p.t3::VARCHAR AS t3,
       p.t4::VARCHAR AS t4, p.t5::VARCHAR AS t5, p.t6::VARCHAR AS t6, 'upload_date=' || f.upload_date || '/' || f.file AS file
FROM past p LEFT JOIN model.current_files f ON f.file_id = p.new_file_id;

-- name: record_dates
-- Every business date the current files' records hold, in gold or not (a date whose records all
-- arrived past its window is in none of gold's versions, and `late` lists it).
SELECT DISTINCT r.business_date FROM model.records r JOIN model.current_files f USING (file_id) ORDER BY 1;

-- name: dimension_insert
INSERT INTO model.dimension_versions VALUES ($version, $md5, $text, now()::TIMESTAMP);

-- name: files_of_uploads
-- The current version of each file of uploads $uploads (a list), by upload and name: what a
-- landing's plan holds its files against, a run names, and a warehouse's quarantine counts.
SELECT file_id, file, upload_date, version, md5, records, quarantined FROM model.current_files
WHERE upload_date IN (SELECT business_date FROM dates_of($uploads::VARCHAR)) ORDER BY upload_date, file;

-- name: corrected_files_of_uploads
-- The current files of uploads $uploads (a list) past their first version, by upload and name:
-- what a run over a range names as corrected.
SELECT file_id, file, upload_date, version, md5, records, quarantined FROM model.current_files
WHERE version > 1 AND upload_date IN (SELECT business_date FROM dates_of($uploads::VARCHAR))
ORDER BY upload_date, file;

-- name: file_versions
-- Every landed version of file $file of upload $upload_date, oldest first.
SELECT file_id, file, upload_date, version, md5, records, quarantined FROM model.files
WHERE upload_date = $upload_date::DATE AND file = $file ORDER BY version;

-- name: files_with_key
-- The current files that hold a record whose dimension key (grain column $column, 1-based) is
-- one of $keys (a list): a corrected dimension row re-reads them.
SELECT file_id, file, upload_date, version, md5, records, quarantined FROM model.current_files
WHERE file_id IN (SELECT file_id FROM model.records
                  WHERE list_extract([g1, g2, g3, g4], $column::INTEGER) IN (SELECT unnest(string_split($keys::VARCHAR, chr(31)))))
ORDER BY upload_date, file;

-- name: next_file_id
SELECT (coalesce(max(file_id), 0) + 1)::BIGINT AS next FROM model.files;

-- name: reread_pending_insert
-- A landing's re-read versions (file ids from $first): each holds the bytes of the version it
-- follows, read again under a corrected dimension row.
INSERT INTO model.reread_pending
SELECT f.file_id FROM model.files f
JOIN model.files p ON p.upload_date = f.upload_date AND p.file = f.file AND p.version = f.version - 1
WHERE f.file_id >= $first::INTEGER AND f.md5 = p.md5;

-- name: reverted_versions
-- A landing's corrections (file ids from $first: other bytes than the version each replaced, so
-- never a re-read) whose bytes are an earlier version's: the newest such version, and the one
-- replaced (a correction withdrawn).
SELECT f.file_id, max(e.version) AS reverts_to, f.version - 1 AS replaced
FROM model.files f
JOIN model.files p ON p.upload_date = f.upload_date AND p.file = f.file AND p.version = f.version - 1 AND p.md5 <> f.md5
JOIN model.files e ON e.upload_date = f.upload_date AND e.file = f.file AND e.version < f.version - 1 AND e.md5 = f.md5
WHERE f.file_id >= $first::INTEGER
GROUP BY f.file_id, f.version;

-- name: reread_dates
-- The business dates the pending re-read versions, and the versions they follow, hold: a date
-- a corrected row moves records into or out of.
WITH pending AS (SELECT f.upload_date, f.file, f.version FROM model.files f SEMI JOIN model.reread_pending USING (file_id)),
versions AS (SELECT f.file_id FROM model.files f JOIN pending p
             ON f.upload_date = p.upload_date AND f.file = p.file AND f.version IN (p.version, p.version - 1))
SELECT DISTINCT r.business_date FROM model.records r SEMI JOIN versions USING (file_id) ORDER BY 1;

-- name: reread_applied
-- A v2 run rebuilt the dates of every pending re-read version.
DELETE FROM model.reread_pending;

-- name: files_insert
-- A landing's file versions ($files: a JSON list of their rows), in one statement, not one a file.
INSERT INTO model.files
SELECT f.file_id, f.file, f.upload_date::DATE, f.version, f.md5, f.records, f.quarantined, now()::TIMESTAMP
FROM (SELECT unnest(from_json($files::VARCHAR,
        '[{"file_id":"INTEGER","file":"VARCHAR","upload_date":"VARCHAR","version":"INTEGER","md5":"VARCHAR","records":"BIGINT","quarantined":"BIGINT"}]'),
        recursive := true)) f
ORDER BY f.file_id;

-- name: recount_input
-- What a recount of the current files counts: each current file version and each dimension
-- version, by id (a version's bytes never change).
SELECT concat((SELECT coalesce(string_agg(file_id::VARCHAR, ',' ORDER BY file_id), '') FROM model.current_files), '|',
              (SELECT coalesce(string_agg(version::VARCHAR || ':' || md5, ',' ORDER BY version), '') FROM model.dimension_versions))
       AS input;

-- name: recount_input_kept
SELECT input FROM model.recount_input;

-- name: recount_rows_kept
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6 FROM model.recount_rows
ORDER BY business_date, g1, g2, g3, g4, a1, a2, a3, a4;

-- name: recount_rows_kept_of
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6 FROM model.recount_rows
WHERE business_date = $business_date::DATE ORDER BY g1, g2, g3, g4, a1, a2, a3, a4;

-- name: recount_rows_forget
DELETE FROM model.recount_rows;

-- name: recount_input_forget
DELETE FROM model.recount_input;

-- name: recount_input_set
INSERT INTO model.recount_input VALUES ($input);

-- name: records_from_rows
-- A landing's records, made in Rust as bronze's columns (`recount_rows($job)`).
INSERT INTO model.records SELECT *, model_key_hash(entity_key) FROM recount_rows($job::BIGINT);

-- name: landed_uploads
-- The uploads landed by snapshot $as_of (NULL: now).
SELECT DISTINCT upload_date FROM model.files
WHERE $as_of::BIGINT IS NULL OR landed_at <= (SELECT created_at FROM model.snapshots WHERE snapshot_id = $as_of::BIGINT)
ORDER BY 1;

-- name: files_at
-- The file versions current as of snapshot $as_of, in raw-zone order: what the recount reads then.
SELECT file_id, file, upload_date, version, md5, records, quarantined FROM model.file_ranks_at($as_of::BIGINT)
ORDER BY upload_date, file;

-- name: written_dates
-- How many business dates the current and past file versions hold (from their per-date sums):
-- whether a write's dates are most of the lab's.
SELECT count(DISTINCT business_date)::BIGINT AS dates FROM model.file_date_hashes;

-- name: upload_dates
-- What each of uploads $uploads (a list) holds per business date, in every version of its files
-- (a date that a correction withdrew is affected too), and whether the version is current.
SELECT f.upload_date, r.business_date, f.file_id IN (SELECT file_id FROM model.current_files) AS current, count(*) AS rows
FROM model.records r JOIN model.files f USING (file_id)
WHERE f.upload_date IN (SELECT business_date FROM dates_of($uploads::VARCHAR))
GROUP BY ALL ORDER BY 1, 2;

-- define: model_visible
-- The copies a v2 write sees: the current file versions' records, each inside its own date's
-- window: the run's ($late_days), or the wider one a reopening gave the date.
(SELECT r.* FROM model.current_records r
 LEFT JOIN model.kept_windows(NULL) k USING (business_date)
 WHERE in_window(r.upload_date, r.business_date, model_window($late_days::INTEGER, k.kept)))

-- define: model_visible_at
-- @model_visible as of snapshot $as_of (NULL: now): the file versions current then
-- (model.records_at), each date inside the window it had then.
(SELECT r.* FROM model.records_at($as_of::BIGINT) r
 LEFT JOIN model.kept_windows($as_of::BIGINT) k USING (business_date)
 WHERE in_window(r.upload_date, r.business_date, model_window($late_days::INTEGER, k.kept)))

-- define: model_row_hash
-- One copy's 64-bit input hash: where it is, and every field v2 reads.
hash(upload_date, file, line, entity_key, event_id, arrival_ns, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6)::HUGEINT

-- define: model_input_hash
-- A date's input in one text: how many copies feed it, and the exact sum of their hashes.
concat(count(*), ':', sum(@model_row_hash))

-- define: model_unsummed
-- The file versions model.file_date_hashes lacks (landed by an older build, or a warehouse's
-- mirror): found in model.files first and the records joined to them, so that a scan of the
-- records reads only theirs (a filter on every record read all of bronze at every landing).
(SELECT file_id, upload_date, file FROM model.files
 WHERE file_id NOT IN (SELECT DISTINCT file_id FROM model.file_date_hashes))

-- define: model_unsummed_files
-- The rows and hash sum per business date of every file version model.file_date_hashes lacks,
-- from its records.
SELECT file_id, business_date, count(*), sum(@model_row_hash)
FROM (SELECT r.*, f.upload_date, f.file FROM model.records r JOIN @model_unsummed f USING (file_id))
GROUP BY ALL

-- define: model_file_hashes
-- Every file version's rows and hash sum per business date: those kept, and the rest hashed here.
(SELECT file_id, business_date, rows, input FROM model.file_date_hashes UNION ALL @model_unsummed_files)

-- name: input_hashes
-- Each of the dates $dates (a list) as its input: how many copies feed it and the exact sum of
-- a 64-bit hash of each (@model_input_hash over @model_visible), which no order of the rows
-- changes. A rebuild whose hash is the version's own changes nothing and is skipped. The sums are
-- added up per current file version inside the date's window (the run's, or the wider one a
-- reopening kept), from each file's sums per date: the same text, without hashing every record.
SELECT h.business_date, sum(h.rows)::BIGINT AS rows, concat(sum(h.rows), ':', sum(h.input)) AS input_hash
FROM @model_file_hashes h JOIN model.current_files f USING (file_id)
LEFT JOIN model.kept_windows(NULL) k USING (business_date)
WHERE h.business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR))
  AND in_window(f.upload_date, h.business_date, model_window($late_days::INTEGER, k.kept))
GROUP BY 1 ORDER BY 1;

-- name: input_hashes_at
-- `input_hashes` as of snapshot $as_of (NULL: now), hashed from the records themselves: the
-- inputs each date had then, and now a second reading of `input_hashes` (a test holds them equal).
SELECT business_date, count(*) AS rows, @model_input_hash AS input_hash
FROM @model_visible_at v
WHERE business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR))
GROUP BY 1 ORDER BY 1;

-- name: file_hashes_fill
-- The per-date sums of every file version that has none yet (`model.file_date_hashes`): the
-- files a landing just added, and any an older build landed.
INSERT INTO model.file_date_hashes @model_unsummed_files;

-- name: current_versions
-- The version gold held at snapshot $as_of (NULL: now) of each of $dates, with the input hash it
-- was built from.
SELECT sd.business_date, sd.snapshot_id, sd.input_hash, sd.gold_rows
FROM model.snapshot_dates sd JOIN model.versions_as_of($as_of::BIGINT) v USING (business_date, snapshot_id)
WHERE sd.business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR));

-- name: next_snapshot
SELECT (coalesce(max(snapshot_id), 0) + 1)::BIGINT AS next FROM model.snapshots;

-- name: shared_stage
-- The hashes of the business keys that more than one copy in the current files shares: a write of
-- most of the lab's dates groups every copy's key_hash once. A copy outside its date's window
-- counts here too: a key listed with one copy the write sees is ranked alone, to the same winner.
CREATE OR REPLACE TEMP TABLE model_shared AS
SELECT key_hash AS h FROM model.records WHERE file_id IN (SELECT file_id FROM model.current_files)
GROUP BY 1 HAVING count(*) > 1;

-- name: shared_stage_of_dates
-- The same among the keys with a copy on one of the dates $dates (a list): only those keys'
-- winners are the write's, so a run of a few dates counts the copies of its own keys, not every
-- key of the lab. The keys' copies are found by their hashes alone (integers, which a scan of the
-- lab reads fast), and only then kept to the current files.
CREATE OR REPLACE TEMP TABLE model_shared AS
WITH dated AS (SELECT DISTINCT key_hash FROM model.records
               WHERE business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR))),
     copies AS MATERIALIZED (SELECT key_hash, file_id FROM model.records SEMI JOIN dated USING (key_hash))
SELECT key_hash AS h FROM copies WHERE file_id IN (SELECT file_id FROM model.current_files)
GROUP BY 1 HAVING count(*) > 1;

-- name: winners_stage
-- THE winners of dates $dates, for one write's silver and gold: one row per business key among
-- every copy the write sees, the first by the contract's order (the smallest arrival, then event
-- id; an exact tie to the copy first in the raw zone: upload date, file name, line), with its
-- copies. A key counts on its winner's date. A key whose hash no other copy shares has one copy,
-- its own winner (`@model_winners` streams those); only the copies of shared hashes are ranked
-- here, by the key itself, so a collision of two keys' hashes costs a rank and changes no
-- winner. What is kept is small: the shared hashes and their winners. (A window's rank is faster
-- here than arg_min over the order as one row, whose comparisons of strings cost more.) The shared
-- keys' copies are found by their rows (rowid): a scan of key_hash alone finds them, where a join
-- on the key read every column of every record.
CREATE OR REPLACE TEMP TABLE model_shared_winners AS
WITH copies AS (SELECT v.* FROM @model_visible v
                WHERE v.record_row IN (SELECT rowid FROM model.records WHERE key_hash IN (SELECT h FROM model_shared))),
keyed AS (SELECT DISTINCT entity_key FROM copies WHERE business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR))),
ranked AS (
    SELECT business_date, file_id, line, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6,
           count(*) OVER (PARTITION BY entity_key) AS copies,
           row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) AS n
    FROM copies WHERE entity_key IN (SELECT entity_key FROM keyed))
SELECT * EXCLUDE (n) FROM ranked
WHERE n = 1 AND business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR));

-- define: model_winners
-- Every winner of dates $dates (after `winners_stage`): the keys of one copy, streamed from
-- bronze, and the ranked winners of the rest.
(SELECT v.business_date, v.file_id, v.line, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6, 1::BIGINT AS copies
 FROM @model_visible v ANTI JOIN model_shared s ON v.key_hash = s.h
 WHERE v.business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR))
 UNION ALL SELECT * FROM model_shared_winners)

-- name: silver_insert
-- Snapshot $snapshot_id's silver: each winner as a pointer to its bronze row.
INSERT INTO model.silver_history SELECT $snapshot_id::BIGINT, business_date, file_id, line, copies FROM @model_winners w;

-- name: gold_insert
-- Snapshot $snapshot_id's gold: the winners summed per date and grain. A sum past 64 bits is an
-- error (the cast), never a wrapped number.
INSERT INTO model.gold_history
SELECT $snapshot_id::BIGINT, business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT, sum(m2)::BIGINT, sum(m3)::BIGINT, sum(m4)::BIGINT, sum(m5)::BIGINT, sum(m6)::BIGINT
FROM @model_winners w
GROUP BY business_date, g1, g2, g3, g4, a1, a2, a3, a4;

-- name: shared_drop
DROP TABLE IF EXISTS model_shared;

-- name: winners_drop
DROP TABLE IF EXISTS model_shared_winners;

-- name: dates_insert
-- Each date snapshot $snapshot_id wrote, with the input hash it was built from ($dates: a JSON
-- list of {business_date, input_hash}) and its version's gold rows: one statement for a write's
-- dates, not one a date.
INSERT INTO model.snapshot_dates
SELECT $snapshot_id::BIGINT, d.business_date::DATE, d.input_hash, count(g.business_date)
FROM (SELECT unnest(from_json($dates::VARCHAR, '[{"business_date":"VARCHAR","input_hash":"VARCHAR"}]'), recursive := true)) d
LEFT JOIN model.gold_history g ON g.snapshot_id = $snapshot_id::BIGINT AND g.business_date = d.business_date::DATE
GROUP BY ALL;

-- name: snapshot_insert
INSERT INTO model.snapshots VALUES ($snapshot_id, $operation, $upload, $late_days, $files, $dates_rewritten,
                                    $beyond_window, $gold_rows, $gold_md5, now()::TIMESTAMP);

-- name: skipped_insert
INSERT INTO model.skipped_runs VALUES ($uploads, $dates, now()::TIMESTAMP);

-- name: gold_rows
-- Gold as it stood at snapshot $snapshot_id (NULL: now), from date $from on (NULL: every date;
-- a write hashes gold's text from the state it resumes from on).
SELECT g.business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6
FROM model.gold_history g JOIN model.versions_as_of($snapshot_id::BIGINT) v USING (business_date, snapshot_id)
WHERE $from::DATE IS NULL OR g.business_date >= $from::DATE
ORDER BY g.business_date, g1, g2, g3, g4;

-- name: prefix_before
-- Where hashing gold's text may resume for a write whose first date is $first (retail's
-- prefix_before in fingerprint.sql, over the model's tables): the newest state of the last date
-- before $first that holds rows now, unless a later write rewrote that date or an earlier one.
WITH p AS (SELECT max(business_date) AS d FROM model.snapshot_dates sd
           JOIN model.versions_as_of(NULL) v USING (business_date, snapshot_id)
           WHERE sd.business_date < $first::DATE AND sd.gold_rows > 0),
     s AS (SELECT g.snapshot_id, g.business_date, g.rows, g.state FROM model.gold_prefix g JOIN p ON g.business_date = p.d
           ORDER BY g.snapshot_id DESC LIMIT 1)
SELECT s.business_date, s.rows, s.state FROM s
WHERE NOT EXISTS (SELECT 1 FROM model.snapshot_dates x
                  WHERE x.snapshot_id > s.snapshot_id AND x.business_date <= s.business_date);

-- name: forget_prefix
-- The states from date $first on, which a write from $first made stale.
DELETE FROM model.gold_prefix WHERE business_date >= $first::DATE;

-- name: keep_prefix
-- The states write $snapshot_id reached at the end of each of its dates $dates, with gold's rows
-- up to each ($rows) and the MD5 state ($states, hex): each list joined with commas.
INSERT INTO model.gold_prefix
SELECT $snapshot_id::BIGINT, unnest(string_split($dates::VARCHAR, ','))::DATE,
       unnest(string_split($rows::VARCHAR, ','))::BIGINT, unhex(unnest(string_split($states::VARCHAR, ',')));

-- name: gold_rows_of
-- Gold of $business_date as it stood at snapshot $snapshot_id (NULL: now): a report of one date
-- reads its rows, not all of gold.
SELECT g.business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6
FROM model.gold_history g JOIN model.versions_as_of($snapshot_id::BIGINT) v USING (business_date, snapshot_id)
WHERE g.business_date = $business_date::DATE
ORDER BY g1, g2, g3, g4;

-- name: version_gold
-- The gold rows version $snapshot_id wrote for $business_date.
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6
FROM model.gold_history WHERE snapshot_id = $snapshot_id::BIGINT AND business_date = $business_date::DATE
ORDER BY g1, g2, g3, g4;

-- name: snapshots
SELECT snapshot_id, operation, upload, late_days, files, dates_rewritten, beyond_window, gold_rows, gold_md5,
       strftime(created_at, '%Y-%m-%d %H:%M:%S') AS created_at
FROM model.snapshots ORDER BY snapshot_id;

-- name: skipped_runs
SELECT uploads, dates FROM model.skipped_runs ORDER BY skipped_at;

-- name: date_versions
-- Every version of $business_date, oldest first, with the snapshot that wrote it.
SELECT sd.snapshot_id, sd.input_hash, sd.gold_rows, s.operation, s.upload, s.files
FROM model.snapshot_dates sd JOIN model.snapshots s USING (snapshot_id)
WHERE sd.business_date = $business_date::DATE ORDER BY sd.snapshot_id;

-- name: versions_at
-- Each date's version as of snapshot $snapshot_id (NULL: now).
SELECT business_date, snapshot_id FROM model.versions_as_of($snapshot_id::BIGINT) ORDER BY 1;

-- name: restore_gold
-- Snapshot $snapshot_id takes version $version's gold and silver of $business_date.
INSERT INTO model.gold_history
SELECT $snapshot_id::BIGINT, business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6
FROM model.gold_history WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE;

-- name: restore_silver
INSERT INTO model.silver_history
SELECT $snapshot_id::BIGINT, business_date, file_id, line, copies
FROM model.silver_history WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE;

-- name: restore_date
INSERT INTO model.snapshot_dates
SELECT $snapshot_id::BIGINT, $business_date::DATE,
       coalesce((SELECT input_hash FROM model.snapshot_dates WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE), ''),
       (SELECT count(*) FROM model.gold_history WHERE snapshot_id = $snapshot_id::BIGINT AND business_date = $business_date::DATE);

-- name: naive_append
-- v1 for run date $run_date: upload $run_date's records dated $run_date, every copy counted,
-- APPENDED (a retry doubles the day, on purpose).
INSERT INTO model.naive
SELECT $run_date::DATE, r.business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT, sum(m2)::BIGINT, sum(m3)::BIGINT, sum(m4)::BIGINT, sum(m5)::BIGINT, sum(m6)::BIGINT, now()::TIMESTAMP
FROM model.records r JOIN model.current_files f USING (file_id)
WHERE f.upload_date = $run_date::DATE AND r.business_date = $run_date::DATE
GROUP BY r.business_date, g1, g2, g3, g4, a1, a2, a3, a4;

-- name: naive_rows
-- v1's table as it stood at snapshot $as_of (NULL: now), its appends summed per date and grain.
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4,
       sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM model.naive
WHERE $as_of::BIGINT IS NULL OR appended_at IS NULL
   OR appended_at <= (SELECT created_at FROM model.snapshots WHERE snapshot_id = $as_of::BIGINT)
GROUP BY business_date, g1, g2, g3, g4, a1, a2, a3, a4 ORDER BY business_date, g1, g2, g3, g4;

-- name: date_totals
-- Each business date's measures summed per attribute values, from $side: gold as of snapshot
-- $as_of ('gold'; NULL: now), v1's table now ('naive') or the kept recount ('recount'), so that
-- `summary` and `trend` read a line per date and part, not every grain's row. $c1..$c4 say which
-- attributes are in the key (`trend`: those naming a money measure's currency); the others are
-- left out of it. A total past 64 bits is NULL, and `overflows` says so.
WITH picked AS (
    SELECT g.business_date, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6
    FROM model.gold_history g JOIN model.versions_as_of($as_of::BIGINT) v USING (business_date, snapshot_id)
    WHERE $side::VARCHAR = 'gold'
    UNION ALL
    SELECT business_date, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6 FROM model.naive WHERE $side::VARCHAR = 'naive'
    UNION ALL
    SELECT business_date, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6 FROM model.recount_rows WHERE $side::VARCHAR = 'recount'
), summed AS (
    SELECT business_date,
           CASE WHEN $c1::BOOLEAN THEN coalesce(a1, '') ELSE '' END AS a1,
           CASE WHEN $c2::BOOLEAN THEN coalesce(a2, '') ELSE '' END AS a2,
           CASE WHEN $c3::BOOLEAN THEN coalesce(a3, '') ELSE '' END AS a3,
           CASE WHEN $c4::BOOLEAN THEN coalesce(a4, '') ELSE '' END AS a4,
           sum(m1) AS t1, sum(m2) AS t2, sum(m3) AS t3, sum(m4) AS t4, sum(m5) AS t5, sum(m6) AS t6
    FROM picked GROUP BY ALL
)
SELECT business_date, a1, a2, a3, a4,
       try_cast(t1 AS BIGINT) AS m1, try_cast(t2 AS BIGINT) AS m2, try_cast(t3 AS BIGINT) AS m3,
       try_cast(t4 AS BIGINT) AS m4, try_cast(t5 AS BIGINT) AS m5, try_cast(t6 AS BIGINT) AS m6,
       coalesce((t1 IS NOT NULL AND try_cast(t1 AS BIGINT) IS NULL) OR (t2 IS NOT NULL AND try_cast(t2 AS BIGINT) IS NULL)
             OR (t3 IS NOT NULL AND try_cast(t3 AS BIGINT) IS NULL) OR (t4 IS NOT NULL AND try_cast(t4 AS BIGINT) IS NULL)
             OR (t5 IS NOT NULL AND try_cast(t5 AS BIGINT) IS NULL) OR (t6 IS NOT NULL AND try_cast(t6 AS BIGINT) IS NULL), false)
           AS overflows
FROM summed ORDER BY business_date, a1, a2, a3, a4;

-- name: naive_rows_of
-- `naive_rows` of $business_date alone.
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4,
       sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM model.naive
WHERE business_date = $business_date::DATE
  AND ($as_of::BIGINT IS NULL OR appended_at IS NULL
       OR appended_at <= (SELECT created_at FROM model.snapshots WHERE snapshot_id = $as_of::BIGINT))
GROUP BY business_date, g1, g2, g3, g4, a1, a2, a3, a4 ORDER BY g1, g2, g3, g4;

-- name: quarantined_lines
-- How many lines current file versions refused (of upload $upload_date; NULL: all), as retail's.
SELECT coalesce(sum(quarantined), 0)::BIGINT AS lines FROM model.current_files
WHERE $upload_date::DATE IS NULL OR upload_date = $upload_date::DATE;

-- name: quarantine
-- The lines current file versions refused, with where and why.
SELECT f.upload_date, f.file, f.version, q.line, q.reason, q.raw_line FROM model.quarantine q JOIN model.current_files f USING (file_id)
ORDER BY f.upload_date, f.file, q.line;

-- name: copies_counted
-- $business_date as a pipeline without dedup counts it (an audit's duplicates_counted): every
-- copy inside the window summed.
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4,
       sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM @model_visible v WHERE business_date = $business_date::DATE
GROUP BY ALL;

-- name: windowed
-- $business_date as v2 builds it with window $late_days (an audit's late_arrivals_missed, for a
-- job with a narrower window than the lab's): each key's first copy among those the window sees.
WITH w AS (SELECT *, row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) AS n
           FROM @model_visible v
           WHERE entity_key IN (SELECT entity_key FROM @model_visible v WHERE business_date = $business_date::DATE))
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4,
       sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM w WHERE n = 1 AND business_date = $business_date::DATE
GROUP BY ALL;

-- name: utc_dated
-- $business_date as a pipeline that dates events in UTC counts it (an audit's
-- utc_business_date): each key's winner among its copies inside the window of their UTC date.
-- A copy's UTC date is within a day of its business date (no zone is a day from UTC), so the
-- keys are found among three dates' records; their copies on any date are then ranked.
WITH keys AS (SELECT DISTINCT entity_key FROM model.current_records
              WHERE business_date BETWEEN $business_date::DATE - 1 AND $business_date::DATE + 1
                AND make_timestamp(event_ns // 1000)::DATE = $business_date::DATE
                AND in_window(upload_date, $business_date::DATE, $late_days::INTEGER)),
c AS (SELECT *, make_timestamp(event_ns // 1000)::DATE AS utc_date FROM model.current_records
      WHERE entity_key IN (SELECT entity_key FROM keys)),
v AS (SELECT * FROM c WHERE in_window(upload_date, utc_date, $late_days::INTEGER)),
w AS (SELECT *, row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) AS n FROM v)
SELECT utc_date AS business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4,
       sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM w WHERE n = 1 AND utc_date = $business_date::DATE
GROUP BY ALL;

-- name: late_rows
-- The records of $business_date in the files current as of snapshot $as_of (NULL: now) that
-- arrived past its window ($late_days, or a reopening's wider one then), each with its key, upload, days after the date, file version and line,
-- and whether its key has a copy inside a window all the same (then gold counts the key from it)
-- and whether it is the copy the recount counts (its key's first in @copy_order, on any date).
-- The visible copies are asked of these keys alone, not held whole.
WITH late AS (
    SELECT r.entity_key, r.business_date, r.event_id, f.upload_date,
           datediff('day', r.business_date, f.upload_date)::BIGINT AS days_late,
           f.file, f.version, r.line, r.g1, r.g2, r.g3, r.g4, r.a1, r.a2, r.a3, r.a4, r.m1, r.m2, r.m3, r.m4, r.m5, r.m6,
           r.file_id
    FROM model.records_at($as_of::BIGINT) r JOIN model.files f USING (file_id)
    WHERE r.business_date = $business_date::DATE
      AND NOT in_window(f.upload_date, r.business_date,
                        model_window($late_days::INTEGER, (SELECT kept FROM model.kept_windows($as_of::BIGINT)
                                                           WHERE business_date = $business_date::DATE)))),
seen AS (SELECT DISTINCT v.entity_key FROM @model_visible_at v WHERE v.entity_key IN (SELECT entity_key FROM late)),
firsts AS (SELECT file_id, line FROM model.records_at($as_of::BIGINT) WHERE entity_key IN (SELECT entity_key FROM late)
           QUALIFY row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) = 1)
SELECT late.* EXCLUDE (file_id), late.entity_key IN (SELECT entity_key FROM seen) AS counted,
       firsts.file_id IS NOT NULL AS recount_copy
FROM late LEFT JOIN firsts USING (file_id, line)
ORDER BY upload_date, file, line;

-- name: kept_windows
-- Each reopened date's widest window, as of snapshot $as_of (NULL: now).
SELECT business_date, kept::INTEGER AS late_days FROM model.kept_windows($as_of::BIGINT) ORDER BY 1;

-- name: keep_window
-- Snapshot $snapshot_id reopens $business_date with window $late_days, for $reason, decided by $by.
INSERT INTO model.date_windows VALUES ($business_date, $late_days, $snapshot_id, $reason, $by, now()::TIMESTAMP);

-- name: silver_rows
-- The winners silver holds now for $business_date.
SELECT count(*)::BIGINT AS next FROM model.silver_history s JOIN model.versions_as_of(NULL) v USING (business_date, snapshot_id)
WHERE s.business_date = $business_date::DATE;

-- name: lateness
-- The current files' records by days from business date to upload, with how many keys; per value
-- of attribute $part (1-4: a1-a4) as well, as retail's per country (0: over every record).
SELECT CASE $part::INTEGER WHEN 1 THEN r.a1 WHEN 2 THEN r.a2 WHEN 3 THEN r.a3 WHEN 4 THEN r.a4 END AS part,
       datediff('day', r.business_date, f.upload_date)::BIGINT AS days_late, count(*)::BIGINT AS records,
       count(DISTINCT r.entity_key)::BIGINT AS keys
FROM model.records r JOIN model.current_files f USING (file_id)
GROUP BY 1, 2 ORDER BY 1, 2;

-- name: resent
-- The keys with a copy dated $business_date and more than one copy in the current files: every
-- copy, in the contract's order, with whether it is inside its date's window ($late_days, or the
-- wider one a reopening gave the date; the first copy inside wins), how it ties with the others
-- (the same arrival; the same message twice), where it is and when it arrived; by attributes
-- (retail's country), then key.
-- The date's keys are found first, and only their copies grouped: not every record's.
WITH dated AS (SELECT DISTINCT entity_key FROM model.current_records WHERE business_date = $business_date::DATE),
copies AS MATERIALIZED (SELECT * FROM model.current_records WHERE entity_key IN (SELECT entity_key FROM dated)),
keys AS (SELECT entity_key FROM copies GROUP BY entity_key HAVING count(*) > 1),
c AS (SELECT r.*, in_window(r.upload_date, r.business_date, model_window($late_days::INTEGER, k.kept)) AS in_window,
             row_number() OVER (PARTITION BY r.entity_key ORDER BY @copy_order) AS n,
             count(*) OVER (PARTITION BY r.entity_key, r.arrival) AS same_instant,
             count(*) OVER (PARTITION BY r.entity_key, r.arrival, r.event_id) AS same_message
      FROM copies r
      LEFT JOIN model.kept_windows(NULL) k USING (business_date)
      WHERE r.entity_key IN (SELECT entity_key FROM keys))
SELECT c.entity_key, c.business_date, f.upload_date, f.file, f.version, c.line, c.event_id,
       strftime(make_timestamp(c.arrival_ns // 1000), '%Y-%m-%dT%H:%M:%S.%fZ') AS arrived,
       c.g1, c.g2, c.g3, c.g4, c.a1, c.a2, c.a3, c.a4, c.m1, c.m2, c.m3, c.m4, c.m5, c.m6,
       c.in_window, c.same_instant, c.same_message
FROM c JOIN model.files f USING (file_id)
ORDER BY c.a1, c.a2, c.a3, c.a4, c.entity_key, c.n;

-- name: same_rows_as_before
-- Whether file version $file_id holds exactly the records of the version of its path before it
-- (a re-delivery: the same rows in other bytes, such as the file compressed again), as many of
-- each, wherever they stand in the file, with as many lines refused. Not a correction.
WITH f AS (SELECT * FROM model.files WHERE file_id = $file_id::INTEGER),
b AS (SELECT p.* FROM model.files p JOIN f ON p.file = f.file AND p.upload_date = f.upload_date AND p.version = f.version - 1)
SELECT (SELECT count(*) FROM b) = 1
       AND (SELECT quarantined FROM f) = (SELECT quarantined FROM b)
       AND NOT EXISTS (SELECT * EXCLUDE (file_id, line) FROM model.records WHERE file_id = (SELECT file_id FROM f)
                       EXCEPT ALL
                       SELECT * EXCLUDE (file_id, line) FROM model.records WHERE file_id = (SELECT file_id FROM b))
       AND NOT EXISTS (SELECT * EXCLUDE (file_id, line) FROM model.records WHERE file_id = (SELECT file_id FROM b)
                       EXCEPT ALL
                       SELECT * EXCLUDE (file_id, line) FROM model.records WHERE file_id = (SELECT file_id FROM f)) AS same;
