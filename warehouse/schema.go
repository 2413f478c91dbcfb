package warehouse

// Type is a portable column type: each engine renders it (render.go). The
// set is what ClickHouse 18.16 and DuckDB both have; no LowCardinality,
// DateTime64, Map or JSON.
type Type string

// Column types.
const (
	String   Type = "String"            // UTF-8 text
	Int64    Type = "Int64"             // signed 64-bit
	Float64  Type = "Float64"           // IEEE double
	NFloat64 Type = "Nullable(Float64)" // a number that may be absent (NULL)
	DateTime Type = "DateTime"          // UTC, second precision (ClickHouse 18.16 has no sub-second DateTime)
	Date     Type = "Date"              // UTC day
	Bool     Type = "UInt8"             // 0 or 1
)

// Kind says what a table holds.
type Kind string

// Table kinds.
const (
	Fact   Kind = "fact"   // measurements keyed by run_id and digests
	Dim    Kind = "dim"    // descriptions keyed by the digest of their content
	Ledger Kind = "ledger" // bookkeeping (ingest ledger, migrations)
)

// Column is one column of a table.
type Column struct {
	Name string
	Type Type
	Doc  string
}

// Table is one logical table, rendered for each engine.
type Table struct {
	Name    string
	Kind    Kind
	Doc     string
	Columns []Column
	// Key is the row identity: ClickHouse's ORDER BY of a
	// ReplacingMergeTree (rows with equal keys collapse); on DuckDB,
	// which declares no PRIMARY KEY, WriteRun enforces it. Re-ingesting a
	// run writes the same keys.
	Key []string
	// Partition, when set, names a DateTime or Date column whose month
	// partitions the ClickHouse table.
	Partition string
}

// Column returns the named column and whether it exists.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// ColumnNames lists the columns in order.
func (t Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// Lookup returns the table of the schema with the given name.
func Lookup(name string) (Table, bool) {
	for _, t := range Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// identity columns every fact row carries.
var identity = []Column{
	{"run_id", String, "run (UUIDv7) the row was derived from"},
	{"workload_spec_digest", String, "sha256 of the canonical workload spec (workload_dim)"},
	{"artifact_manifest_digest", String, "sha256 of the run's manifest: the raw evidence"},
}

// derivation columns every derived fact row carries.
var derivation = []Column{
	{"ingest_version", Int64, "version of the derivation code that computed the row (ingest.Version)"},
	{"ingested_at", DateTime, "when the row was written"},
}

func cols(groups ...[]Column) []Column {
	var out []Column
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// latency returns the exact-percentile columns of one latency family.
func latency(prefix, what string) []Column {
	out := []Column{}
	for _, p := range []struct{ suffix, doc string }{
		{"p50", "50th"}, {"p90", "90th"}, {"p95", "95th"}, {"p99", "99th"}, {"p999", "99.9th"},
	} {
		out = append(out, Column{prefix + "_" + p.suffix + "_ms", NFloat64, p.doc + " percentile of " + what + " (exact, nearest rank), ms"})
	}
	return append(out,
		Column{prefix + "_mean_ms", NFloat64, "mean " + what + ", ms"},
		Column{prefix + "_stddev_ms", NFloat64, "standard deviation (population) of " + what + ", ms"},
	)
}

// Tables is the warehouse schema (SchemaVersion). docs/schema.md documents it.
var Tables = []Table{
	{
		Name: "benchmark_run_fact", Kind: Fact, Doc: "one row per run",
		Columns: cols(identity, []Column{
			{"benchmark_case_id", String, "sha256 of the canonical case identity"},
			{"benchmark_name", String, "case name"},
			{"benchmark_version", String, "case version"},
			{"driver", String, "experiment (driver) name"},
			{"driver_version", String, "driver version"},
			{"status", String, "complete or partial"},
			{"trials_total", Int64, "trials in the manifest"},
			{"trials_ok", Int64, "trials with status ok"},
			{"trials_failed", Int64, "trials failed, timed out or canceled"},
			{"started_at", DateTime, "run start (UTC)"},
			{"ended_at", DateTime, "run end (UTC)"},
			{"duration_s", Float64, "run wall time, s"},
			{"producer_version", String, "perfwh version that ran it"},
			{"producer_revision", String, "perfwh VCS revision"},
			{"software_version_digest", String, "software_version_dim key"},
			{"hardware_topology_digest", String, "hardware_topology_dim key"},
			{"cluster_region_digest", String, "cluster_region_dim key"},
			{"scheduler_path", String, "how it ran: local, slurm, ..."},
			{"scheduler_run_id", String, "scheduler job id, empty when local"},
			{"node_name", String, "host the run executed on"},
			{"mode", String, "exploratory or publication (metadata key mode; default exploratory)"},
		}, derivation),
		Key: []string{"run_id"}, Partition: "started_at",
	},
	{
		Name: "storage_outcome_fact", Kind: Fact,
		Doc: "one row per run × workload point × operation, for storage, database and vector workloads; pooled over repetitions, warmup excluded",
		Columns: cols(identity, []Column{
			{"point", Int64, "workload point index in the plan"},
			{"params", String, "canonical JSON of the point's parameters"},
			{"op", String, "operation: read, write, fsync, query, insert, search, ..."},
			{"driver", String, "driver name"},
			{"repetitions", Int64, "ok trials pooled into the row"},
			{"samples", Int64, "measured operations (warmup excluded)"},
			{"errors", Int64, "operations that failed"},
			{"error_rate", Float64, "errors / samples"},
			{"measure_s", Float64, "sum of the trials' measurement windows, s"},
			{"ops_per_s", Float64, "operations per second: samples / measure_s"},
			{"ops_per_s_cv", NFloat64, "coefficient of variation of ops_per_s across repetitions (NULL with one)"},
			{"mb_per_s", Float64, "payload megabytes (1e6 B) per second"},
		}, latency("latency", "operation latency from intended start"), []Column{
			{"recall_at_k", NFloat64, "vector search recall@k, when the driver measures it"},
			{"ingest_rows_per_s", NFloat64, "vector/database ingest rate, when measured"},
		}, derivation),
		Key: []string{"run_id", "point", "op"},
	},
	{
		Name: "serving_outcome_fact", Kind: Fact,
		Doc: "one row per run × workload point (model, rate or concurrency) for LLM serving; warmup excluded",
		Columns: cols(identity, []Column{
			{"point", Int64, "workload point index"},
			{"params", String, "canonical JSON of the point's parameters"},
			{"model", String, "model served"},
			{"concurrency", NFloat64, "closed-loop concurrency, when set"},
			{"request_rate", NFloat64, "target open-loop request rate, req/s, when set"},
			{"repetitions", Int64, "ok trials pooled"},
			{"requests", Int64, "measured requests"},
			{"errors", Int64, "failed requests"},
			{"timeouts", Int64, "requests that timed out"},
			{"error_rate", Float64, "errors / requests"},
			{"timeout_rate", Float64, "timeouts / requests"},
			{"achieved_rate", Float64, "completed requests per second"},
			{"output_tokens_per_s", Float64, "output tokens per second"},
			{"saturated", Bool, "1 when the achieved rate fell below the target"},
		}, latency("ttft", "time to first token"), latency("itl", "inter-token latency"),
			latency("tpot", "time per output token"), latency("e2e", "end-to-end latency"),
			latency("queue", "queueing delay (dispatch - intended)"), []Column{
				{"jitter_ms", NFloat64, "standard deviation of inter-token gaps, ms"},
				{"goodput_rate", NFloat64, "requests per second meeting every SLO of the case"},
				{"cost_per_request", NFloat64, "currency units per request, when the case gives a price"},
				{"cost_per_million_tokens", NFloat64, "currency units per million output tokens"},
			}, derivation),
		Key: []string{"run_id", "point"},
	},
	{
		Name: "training_outcome_fact", Kind: Fact, Doc: "one row per run × phase × scale point",
		Columns: cols(identity, []Column{
			{"point", Int64, "workload point index"},
			{"phase", String, "training phase"},
			{"scale_point", Int64, "GPUs or nodes"},
			{"steps", Int64, "measured steps"},
		}, latency("step_time", "step time"), []Column{
			{"tokens_per_s", NFloat64, "tokens per second"},
			{"mfu", NFloat64, "model FLOPs utilization, 0..1"},
			{"scaling_efficiency", NFloat64, "throughput per unit relative to the smallest scale point"},
			{"time_to_train_s", NFloat64, "time to reach the target, s"},
			{"failures", Int64, "failed or restarted steps"},
		}, derivation),
		Key: []string{"run_id", "point", "phase", "scale_point"},
	},
	{
		Name: "telemetry_slice_fact", Kind: Fact,
		Doc: "one row per run × trial × time window × collector/metric/device, aligned to the trial's measurement window",
		Columns: cols(identity, []Column{
			{"trial_id", String, "trial id"},
			{"point", Int64, "workload point index"},
			{"repetition", Int64, "repetition"},
			{"window_index", Int64, "0-based window within the measurement window"},
			{"window_start", DateTime, "window start (UTC, s)"},
			{"window_start_offset_ns", Int64, "window start, ns after the measurement start"},
			{"window_s", Float64, "window length, s (the last window may be shorter)"},
			{"node_name", String, "host"},
			{"collector", String, "collector"},
			{"metric", String, "metric name with its unit"},
			{"device", String, "device, empty for host-wide"},
			{"samples", Int64, "points in the window"},
			{"min_value", Float64, "minimum"},
			{"max_value", Float64, "maximum"},
			{"mean_value", Float64, "mean"},
			{"last_value", Float64, "last value in the window"},
		}, derivation),
		Key: []string{"run_id", "trial_id", "window_index", "node_name", "collector", "metric", "device"},
	},
	{
		Name: "run_metadata", Kind: Fact, Doc: "custom key/value metadata of a run (nexus REQ 5.3)",
		Columns: cols(identity, []Column{
			{"key", String, "metadata key"},
			{"value", String, "metadata value"},
		}, derivation),
		Key: []string{"run_id", "key"},
	},
	{
		Name: "workload_dim", Kind: Dim, Doc: "one row per frozen workload spec",
		Columns: []Column{
			{"workload_spec_digest", String, "sha256 of spec_json"},
			{"driver", String, "driver"},
			{"spec_json", String, "the canonical workload spec"},
			{"repetitions", Int64, "repetitions"},
			{"warmup_s", Float64, "warmup per trial, s"},
			{"duration_s", Float64, "measurement per trial, s"},
			{"operations", Int64, "operations per trial"},
			{"seed", Int64, "seed"},
			{"axes", String, "swept parameters, comma-separated"},
			{"model", String, "serving: model"},
			{"precision", String, "serving/training: precision"},
			{"protocol", String, "serving: protocol surface"},
			{"deployment_model", String, "serving: deployment model"},
			{"prompt_distribution", String, "serving: prompt length distribution"},
			{"output_distribution", String, "serving: output length distribution"},
			{"batching_policy", String, "serving: batching policy"},
		},
		Key: []string{"workload_spec_digest"},
	},
	{
		Name: "software_version_dim", Kind: Dim, Doc: "one row per unique software bundle",
		Columns: []Column{
			{"software_version_digest", String, "sha256 of the row's canonical content"},
			{"perfwh_version", String, "perfwh version"},
			{"perfwh_revision", String, "perfwh revision"},
			{"go_version", String, "Go toolchain"},
			{"driver", String, "driver"},
			{"driver_version", String, "driver version"},
			{"os", String, "OS platform and version"},
			{"kernel_version", String, "kernel"},
			{"gpu_driver_version", String, "GPU driver, empty without GPUs"},
			{"cuda_version", String, "CUDA, when known"},
			{"image_digest", String, "container image digest, when known"},
			{"server_version", String, "target server version, when known"},
		},
		Key: []string{"software_version_digest"},
	},
	{
		Name: "hardware_topology_dim", Kind: Dim, Doc: "one row per unique hardware + topology bundle",
		Columns: []Column{
			{"hardware_topology_digest", String, "sha256 of the row's canonical content"},
			{"cpu_model", String, "CPU model"},
			{"sockets", Int64, "CPU sockets"},
			{"physical_cores", Int64, "physical cores"},
			{"logical_cores", Int64, "logical CPUs"},
			{"numa_nodes", Int64, "NUMA nodes"},
			{"memory_bytes", Int64, "RAM, bytes"},
			{"gpu_model", String, "GPU model, empty without GPUs"},
			{"gpu_count", Int64, "GPUs"},
			{"gpu_memory_bytes", Int64, "memory per GPU, bytes"},
			{"virtualization", String, "hypervisor or container, empty on bare metal"},
			{"nvlink_topology", String, "NVLink topology, when known"},
			{"pcie_layout", String, "PCIe layout, when known"},
		},
		Key: []string{"hardware_topology_digest"},
	},
	{
		Name: "cluster_region_dim", Kind: Dim, Doc: "one row per cluster/region/zone/scheduler slice",
		Columns: []Column{
			{"cluster_region_digest", String, "sha256 of the row's canonical content"},
			{"cluster", String, "cluster (metadata key cluster; default local)"},
			{"region", String, "region"},
			{"zone", String, "availability zone"},
			{"node_pool", String, "node pool"},
			{"scheduler", String, "scheduler path"},
			{"queue", String, "scheduler queue or partition"},
			{"resource_flavor", String, "resource flavor"},
			{"tenant_mode", String, "tenant mode"},
		},
		Key: []string{"cluster_region_digest"},
	},
	{
		Name: "artifact_lineage_dim", Kind: Dim, Doc: "one row per run: where its raw evidence is",
		Columns: []Column{
			{"run_id", String, "run"},
			{"artifact_manifest_digest", String, "manifest digest"},
			{"manifest_uri", String, "manifest location"},
			{"store_uri", String, "store the run was ingested from"},
			{"files", Int64, "blobs in the manifest"},
			{"bytes", Int64, "bytes of all blobs"},
			{"signing_state", String, "unsigned (signing is future work)"},
		},
		Key: []string{"run_id"},
	},
	{
		Name: "ingest_ledger", Kind: Ledger,
		Doc: "one row per run seen by ingest: ingested or quarantined; written last, it is ingest's commit point",
		Columns: []Column{
			{"run_id", String, "run"},
			{"artifact_manifest_digest", String, "manifest digest (empty if unreadable)"},
			{"status", String, "ingested or quarantined"},
			{"reason", String, "why it was quarantined"},
			{"ingest_version", Int64, "derivation version"},
			{"ingested_at", DateTime, "when"},
			{"rows", Int64, "rows written for the run"},
		},
		Key: []string{"run_id"},
	},
	{
		Name: "schema_migrations", Kind: Ledger, Doc: "one row per applied migration",
		Columns: []Column{
			{"version", Int64, "migration version"},
			{"description", String, "what it did"},
			{"applied_at", DateTime, "when"},
		},
		Key: []string{"version"},
	},
}
