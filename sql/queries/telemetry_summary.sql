-- name: telemetry_summary
-- description: Telemetry per run, workload point and series (collector, metric,
--   device) over the measurement windows: windows and points seen, minimum,
--   maximum and the mean of the window means.
-- owner: perfwh
-- param: run_id String = ""      only this run (empty: every run)
-- param: metric String = ""      only this metric (empty: every metric)
-- runs: run_id
SELECT run_id, point, collector, metric, device, count(*) AS windows, sum(samples) AS samples,
       min(min_value) AS min_value, max(max_value) AS max_value, avg(mean_value) AS mean_value
FROM {{from telemetry_slice_fact}}
WHERE ({{param run_id}} = '' OR run_id = {{param run_id}})
  AND ({{param metric}} = '' OR metric = {{param metric}})
GROUP BY run_id, point, collector, metric, device
ORDER BY run_id, point, collector, metric, device
