-- fingerprint.sql (Spark): the contract's gold fingerprint, beside queries/fingerprint.sql.
-- Both read view `gold`, which the driver points at the table's current snapshot or at one
-- `VERSION AS OF` an earlier snapshot.

-- name: fingerprint
-- The row count, and the MD5 of every gold row as `business_date|store_id|country|currency|
-- baskets|revenue_minor` (the date as YYYY-MM-DD, integers in plain decimal), ordered by business
-- date then store_id (Spark orders strings by their bytes), joined by '\n' with none at the end.
-- The lines are sorted as an array: the order of collect_list alone is not guaranteed.
SELECT count(*) AS rows,
       md5(array_join(transform(array_sort(collect_list(struct(business_date, store_id, line))), x -> x.line), '\n')) AS md5
FROM (
    SELECT business_date, store_id,
           concat_ws('|', date_format(business_date, 'yyyy-MM-dd'), store_id, country, currency,
                     cast(baskets AS STRING), cast(revenue_minor AS STRING)) AS line
    FROM gold
);

-- name: gold_of_date
-- Gold of one business date, store by store.
SELECT store_id, country, currency, baskets, revenue_minor FROM gold WHERE business_date = :date ORDER BY store_id;
