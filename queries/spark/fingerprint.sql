-- fingerprint.sql (Spark): the contract's gold fingerprint, beside queries/fingerprint.sql.
-- Both read view `gold`, which the driver points at the table's current snapshot or at one
-- `VERSION AS OF` an earlier snapshot.

-- name: chunks
-- Gold as the fingerprint's text, one chunk per business date in date order: the date's rows as
-- `business_date|store_id|country|currency|baskets|revenue_minor` (the date as YYYY-MM-DD,
-- integers in plain decimal) ordered by store_id (Spark orders strings by their bytes) and joined
-- by '\n', with its row count. The driver reads the chunks a partition at a time and hashes them
-- joined by '\n' (state.text_md5), as the lab does: no one value holds all of gold's text. The
-- lines are sorted as an array, since the order of collect_list alone is not guaranteed.
SELECT business_date, count(*) AS rows,
       array_join(transform(array_sort(collect_list(struct(store_id, line))), x -> x.line), '\n') AS text
FROM (
    SELECT business_date, store_id,
           concat_ws('|', date_format(business_date, 'yyyy-MM-dd'), store_id, country, currency,
                     cast(baskets AS STRING), cast(revenue_minor AS STRING)) AS line
    FROM gold
)
GROUP BY business_date
ORDER BY business_date;

-- name: gold_of_date
-- Gold of one business date, store by store.
SELECT store_id, country, currency, baskets, revenue_minor FROM gold WHERE business_date = :date ORDER BY store_id;
