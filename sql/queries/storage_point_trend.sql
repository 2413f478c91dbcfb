-- name: storage_point_trend
-- description: One benchmark's workload points across all its ingested runs:
--   how many runs measured each point and operation, and the mean, minimum and
--   maximum of their throughput and p99 latency. Each row traces to every run
--   it aggregates.
-- owner: perfwh
-- param: benchmark String        the benchmark
-- param: op String = ""          only this operation (empty: every operation)
-- runs: by params, op
SELECT params, op, count(*) AS runs, sum(samples) AS samples,
       avg(ops_per_s) AS mean_ops_per_s, min(ops_per_s) AS min_ops_per_s, max(ops_per_s) AS max_ops_per_s,
       avg(latency_p99_ms) AS mean_latency_p99_ms, max(latency_p99_ms) AS max_latency_p99_ms
FROM {{from storage_outcome_fact}}
WHERE run_id IN (SELECT run_id FROM {{from benchmark_run_fact}} WHERE benchmark_name = {{param benchmark}})
  AND ({{param op}} = '' OR op = {{param op}})
GROUP BY params, op
ORDER BY params, op
-- @runs
SELECT params, op, run_id
FROM {{from storage_outcome_fact}}
WHERE run_id IN (SELECT run_id FROM {{from benchmark_run_fact}} WHERE benchmark_name = {{param benchmark}})
  AND ({{param op}} = '' OR op = {{param op}})
ORDER BY params, op, run_id
