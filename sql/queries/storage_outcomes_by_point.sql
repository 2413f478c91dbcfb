-- name: storage_outcomes_by_point
-- description: Storage, database and vector outcomes per run, workload point and
--   operation: throughput, latency percentiles (exact, warmup excluded) and the
--   spread of throughput across repetitions.
-- owner: perfwh
-- param: run_id String = ""      only this run (empty: every run)
-- param: benchmark String = ""   only runs of this benchmark (empty: every benchmark)
-- param: op String = ""          only this operation (empty: every operation)
-- runs: run_id
SELECT run_id, benchmark_name, point, params, op, repetitions, samples, errors, error_rate,
       ops_per_s, ops_per_s_cv, mb_per_s,
       latency_p50_ms, latency_p90_ms, latency_p99_ms, latency_p999_ms, latency_mean_ms
FROM (
    SELECT run_id, point, params, op, repetitions, samples, errors, error_rate,
           ops_per_s, ops_per_s_cv, mb_per_s,
           latency_p50_ms, latency_p90_ms, latency_p99_ms, latency_p999_ms, latency_mean_ms
    FROM {{from storage_outcome_fact}}
    WHERE ({{param run_id}} = '' OR run_id = {{param run_id}})
      AND ({{param op}} = '' OR op = {{param op}})
) INNER JOIN (
    SELECT run_id, benchmark_name, started_at
    FROM {{from benchmark_run_fact}}
    WHERE ({{param benchmark}} = '' OR benchmark_name = {{param benchmark}})
) USING (run_id)
ORDER BY started_at, run_id, point, op
