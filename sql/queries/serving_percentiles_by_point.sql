-- name: serving_percentiles_by_point
-- description: LLM serving latency percentiles per run and workload point (model,
--   concurrency or request rate): time to first token, inter-token latency, time
--   per output token and end-to-end, with throughput, errors and goodput.
-- owner: perfwh
-- param: run_id String = ""      only this run (empty: every run)
-- param: benchmark String = ""   only runs of this benchmark (empty: every benchmark)
-- param: model String = ""       only this model (empty: every model)
-- runs: run_id
SELECT run_id, benchmark_name, point, params, model, concurrency, request_rate,
       repetitions, requests, error_rate, timeout_rate, achieved_rate, output_tokens_per_s, saturated,
       ttft_p50_ms, ttft_p90_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms,
       tpot_p50_ms, tpot_p99_ms, e2e_p50_ms, e2e_p99_ms, goodput_rate
FROM (
    SELECT run_id, point, params, model, concurrency, request_rate,
           repetitions, requests, error_rate, timeout_rate, achieved_rate, output_tokens_per_s, saturated,
           ttft_p50_ms, ttft_p90_ms, ttft_p99_ms, itl_p50_ms, itl_p99_ms,
           tpot_p50_ms, tpot_p99_ms, e2e_p50_ms, e2e_p99_ms, goodput_rate
    FROM {{from serving_outcome_fact}}
    WHERE ({{param run_id}} = '' OR run_id = {{param run_id}})
      AND ({{param model}} = '' OR model = {{param model}})
) INNER JOIN (
    SELECT run_id, benchmark_name, started_at
    FROM {{from benchmark_run_fact}}
    WHERE ({{param benchmark}} = '' OR benchmark_name = {{param benchmark}})
) USING (run_id)
ORDER BY started_at, run_id, point
