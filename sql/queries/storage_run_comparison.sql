-- name: storage_run_comparison
-- description: Two runs side by side per workload point and operation: throughput
--   and p50/p99 latency of each, and B relative to A (ratio of throughput, p99
--   difference). Points present in only one run are left out.
-- owner: perfwh
-- param: run_a String   the baseline run
-- param: run_b String   the run compared with it
-- runs: by params, op
SELECT params, op, a_ops_per_s, b_ops_per_s, b_ops_per_s / a_ops_per_s AS ops_per_s_ratio,
       a_latency_p50_ms, b_latency_p50_ms, a_latency_p99_ms, b_latency_p99_ms,
       b_latency_p99_ms - a_latency_p99_ms AS latency_p99_delta_ms,
       a_ops_per_s_cv, b_ops_per_s_cv
FROM (
    SELECT params, op, ops_per_s AS a_ops_per_s, latency_p50_ms AS a_latency_p50_ms,
           latency_p99_ms AS a_latency_p99_ms, ops_per_s_cv AS a_ops_per_s_cv
    FROM {{from storage_outcome_fact}}
    WHERE run_id = {{param run_a}}
) INNER JOIN (
    SELECT params, op, ops_per_s AS b_ops_per_s, latency_p50_ms AS b_latency_p50_ms,
           latency_p99_ms AS b_latency_p99_ms, ops_per_s_cv AS b_ops_per_s_cv
    FROM {{from storage_outcome_fact}}
    WHERE run_id = {{param run_b}}
) USING (params, op)
ORDER BY params, op
-- @runs
SELECT params, op, run_id
FROM {{from storage_outcome_fact}}
WHERE run_id = {{param run_a}} OR run_id = {{param run_b}}
ORDER BY params, op, run_id
