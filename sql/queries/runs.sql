-- name: runs
-- description: Ingested runs, newest first: benchmark, driver, status, trials,
--   timing, mode and the digests that name their workload and raw evidence.
-- owner: perfwh
-- param: benchmark String = ""   only runs of this benchmark (empty: every benchmark)
-- param: mode String = ""        only runs in this mode: exploratory or publication (empty: both)
-- param: limit Int64 = 100       at most this many runs
-- runs: run_id
SELECT run_id, benchmark_name, benchmark_version, driver, driver_version, status,
       trials_ok, trials_total, started_at, duration_s, mode,
       workload_spec_digest, artifact_manifest_digest, ingest_version
FROM {{from benchmark_run_fact}}
WHERE ({{param benchmark}} = '' OR benchmark_name = {{param benchmark}})
  AND ({{param mode}} = '' OR mode = {{param mode}})
ORDER BY started_at DESC, run_id DESC
LIMIT {{param limit}}
