package evidence

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/perfwh/perfwh/internal/canonjson"
)

// Format identifiers written into every manifest and run pointer. See
// docs/format/bundle.md; a reader refuses a version it does not know.
const (
	ManifestFormat        = "perfwh.bundle"
	ManifestFormatVersion = 1
	RunPointerFormat      = "perfwh.run"
)

// RunStatus is the state a run was committed in.
type RunStatus string

// Run statuses.
const (
	RunComplete RunStatus = "complete" // every trial ran (some may have failed)
	RunPartial  RunStatus = "partial"  // interrupted; only finished trials are present
)

// TrialStatus is the outcome of one trial.
type TrialStatus string

// Trial statuses.
const (
	TrialOK       TrialStatus = "ok"
	TrialFailed   TrialStatus = "failed"
	TrialTimedOut TrialStatus = "timed_out"
	TrialCanceled TrialStatus = "canceled"
)

// Roles of files in a bundle.
const (
	RoleSpec        = "spec"        // canonical effective workload spec (JSON)
	RoleCase        = "case"        // the case file as given, before overrides
	RoleConfig      = "config"      // effective configuration: the whole resolved case (JSON)
	RoleEnvironment = "environment" // environment snapshot (JSON)
	RoleSamples     = "samples"     // per-operation samples (Parquet)
	RoleTelemetry   = "telemetry"   // collector samples (Parquet)
	RoleLog         = "log"         // structured log (JSONL)
)

// Media types of files in a bundle.
const (
	MediaJSON    = "application/json"
	MediaJSONL   = "application/jsonl"
	MediaParquet = "application/vnd.apache.parquet"
	MediaYAML    = "application/yaml"
)

// Manifest lists a run's trials and every file of its evidence bundle. Its
// canonical JSON encoding is stored under its own digest, the
// artifact_manifest_digest.
type Manifest struct {
	Format             string      `json:"format"`
	FormatVersion      int         `json:"format_version"`
	RunID              string      `json:"run_id"`
	BenchmarkCaseID    Digest      `json:"benchmark_case_id"`
	WorkloadSpecDigest Digest      `json:"workload_spec_digest"`
	Benchmark          Benchmark   `json:"benchmark"`
	Producer           Producer    `json:"producer"`
	Status             RunStatus   `json:"status"`
	StartedAt          time.Time   `json:"started_at"`
	EndedAt            time.Time   `json:"ended_at"`
	Trials             []Trial     `json:"trials"`
	Files              []File      `json:"files"`
	Metadata           MetadataMap `json:"metadata,omitempty"`
}

// MetadataMap is free-form key/value metadata from the case.
type MetadataMap map[string]string

// Benchmark names the case a run executed.
type Benchmark struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Driver        string `json:"driver"`
	DriverVersion string `json:"driver_version"`
}

// Producer identifies the software that wrote the bundle.
type Producer struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Revision  string `json:"revision"`
	GoVersion string `json:"go_version"`
}

// Trial is one workload point × one repetition.
type Trial struct {
	ID         string         `json:"id"`         // "t0001", unique in the run
	Point      int            `json:"point"`      // 1-based workload point index in the plan
	Repetition int            `json:"repetition"` // 1-based
	Seed       int64          `json:"seed"`       // the driver's seed for this trial
	Params     map[string]any `json:"params"`     // resolved workload parameters
	Status     TrialStatus    `json:"status"`     //
	StartedAt  time.Time      `json:"started_at"` //
	EndedAt    time.Time      `json:"ended_at"`   //
	Warmup     *Window        `json:"warmup"`     // nil when the case has no warmup
	Measure    *Window        `json:"measure"`    // nil when measurement never started
	Error      *TrialError    `json:"error"`      // nil unless Status is not ok
	Summary    map[string]any `json:"summary"`    // driver's own summary; informational, ingest re-derives
	TimeLimit  string         `json:"time_limit"` // the enforced per-trial limit
	Attributes map[string]any `json:"attributes"` // driver facts about the trial (e.g. file path, O_DIRECT in effect)
	// CollectorErrors names collectors that failed during the trial; the
	// trial's own status does not depend on them.
	CollectorErrors map[string]string `json:"collector_errors,omitempty"`
}

// Window is a phase of a trial in wall-clock time (UTC). Sample offsets are
// measured on the monotonic clock from the trial's StartedAt.
type Window struct {
	Start         time.Time `json:"start"`           // StartedAt + StartOffsetNs
	End           time.Time `json:"end"`             // StartedAt + EndOffsetNs
	StartOffsetNs int64     `json:"start_offset_ns"` // monotonic, since the trial's StartedAt
	EndOffsetNs   int64     `json:"end_offset_ns"`
	Operations    int64     `json:"operations"` // samples recorded in the window
}

// TrialError says why a trial did not succeed.
type TrialError struct {
	Kind    string `json:"kind"` // setup, driver, timeout, panic, canceled, collector
	Message string `json:"message"`
	Excerpt string `json:"excerpt,omitempty"` // stack or log tail
}

// File is one stored blob of the bundle.
type File struct {
	Path      string `json:"path"` // bundle-relative, slash-separated
	Digest    Digest `json:"sha256"`
	Size      int64  `json:"size"`
	MediaType string `json:"media_type"`
	Role      string `json:"role"`
	Trial     string `json:"trial,omitempty"` // trial id for per-trial files
}

// Encode returns the manifest's canonical JSON and its digest. Files are
// sorted by path and times normalised to UTC first.
func (m *Manifest) Encode() ([]byte, Digest, error) {
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	m.StartedAt, m.EndedAt = m.StartedAt.UTC(), m.EndedAt.UTC()
	for i := range m.Trials {
		t := &m.Trials[i]
		t.StartedAt, t.EndedAt = t.StartedAt.UTC(), t.EndedAt.UTC()
		for _, w := range []*Window{t.Warmup, t.Measure} {
			if w != nil {
				w.Start, w.End = w.Start.UTC(), w.End.UTC()
			}
		}
	}
	b, err := canonjson.Marshal(m)
	if err != nil {
		return nil, Digest{}, fmt.Errorf("encode manifest: %w", err)
	}
	return b, Sum(b), nil
}

// DecodeManifest parses a manifest and checks its format version.
func DecodeManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("decode manifest: format %q, want %q", m.Format, ManifestFormat)
	}
	if m.FormatVersion < 1 || m.FormatVersion > ManifestFormatVersion {
		return nil, fmt.Errorf("decode manifest: format_version %d not supported (this perfwh reads 1..%d)", m.FormatVersion, ManifestFormatVersion)
	}
	return &m, nil
}

// FilesOf returns the files of trial id (or the run-level files for "").
func (m *Manifest) FilesOf(trial string) []File {
	var out []File
	for _, f := range m.Files {
		if f.Trial == trial {
			out = append(out, f)
		}
	}
	return out
}

// RunPointer is the small object at runs/<run_id>; writing it commits the
// run. It repeats a few manifest fields so runs can be listed without
// reading every manifest.
type RunPointer struct {
	Format         string    `json:"format"`
	FormatVersion  int       `json:"format_version"`
	RunID          string    `json:"run_id"`
	ManifestDigest Digest    `json:"manifest_digest"`
	Benchmark      string    `json:"benchmark"`
	Status         RunStatus `json:"status"`
	StartedAt      time.Time `json:"started_at"`
	EndedAt        time.Time `json:"ended_at"`
	TrialsTotal    int       `json:"trials_total"`
	TrialsOK       int       `json:"trials_ok"`
}

// PointerFor returns the run pointer of a manifest stored under d.
func PointerFor(m *Manifest, d Digest) RunPointer {
	ok := 0
	for _, t := range m.Trials {
		if t.Status == TrialOK {
			ok++
		}
	}
	return RunPointer{
		Format: RunPointerFormat, FormatVersion: 1, RunID: m.RunID, ManifestDigest: d,
		Benchmark: m.Benchmark.Name, Status: m.Status, StartedAt: m.StartedAt.UTC(), EndedAt: m.EndedAt.UTC(),
		TrialsTotal: len(m.Trials), TrialsOK: ok,
	}
}
