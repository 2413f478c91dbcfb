package drivers

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/perfwh/perfwh/evidence/records"
)

// Driver is an experiment: it applies one kind of load to a target. A
// driver is stateless; Open prepares one trial.
type Driver interface {
	// Info describes the driver and its parameter schema.
	Info() Info
	// Open prepares a trial (creates files, connects) and returns the
	// instance that runs its phases. Open must honour ctx.
	Open(ctx context.Context, cfg TrialConfig) (Instance, error)
}

// Instance runs the phases of one trial. Its methods are called from one
// goroutine: Run (warmup), Run (measure), then Close.
type Instance interface {
	// Run runs one phase until its Duration elapses, its Operations are
	// done or ctx is done, appending every operation to rec. It returns
	// promptly when ctx is done (the runner enforces the trial time limit
	// through ctx) with ctx's error. The summary is informational
	// (shown by perfwh run, kept in the manifest); ingest re-derives
	// outcomes from the samples.
	Run(ctx context.Context, ph Phase, rec *Recorder) (summary map[string]any, err error)
	// Attributes are facts about the prepared trial worth recording
	// (resolved file path, whether O_DIRECT is in effect, server version).
	Attributes() map[string]any
	// Close releases what Open acquired (files, connections).
	Close() error
}

// TrialConfig is what a driver needs to prepare a trial.
type TrialConfig struct {
	Params  Values       // workload parameters, resolved and typed, defaults applied
	Target  Values       // target parameters
	Seed    int64        // per-trial seed derived from the case seed
	WorkDir string       // scratch directory private to this trial; removed afterwards
	Origin  time.Time    // trial origin: sample offsets are time.Since(Origin) (monotonic)
	Log     *slog.Logger // goes to the trial log in the bundle
}

// Phase bounds one phase of a trial. At least one bound is non-zero.
type Phase struct {
	Name       string        // records.PhaseWarmup or records.PhaseMeasure
	Duration   time.Duration // 0: no time bound
	Operations int64         // 0: no count bound
}

// Info describes a driver.
type Info struct {
	Name        string
	Version     string
	Description string
	Params      []Param // workload parameters
	Target      []Param // target parameters (what to load: a path, a URL)
}

// Lookup finds a parameter by name in list.
func Lookup(list []Param, name string) (Param, bool) {
	for _, p := range list {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Recorder collects a trial's samples. It is safe for concurrent use;
// workers should append in batches. After Seal, appends are dropped (a
// driver that outlives its time limit cannot change the evidence).
type Recorder struct {
	mu     sync.Mutex
	rows   []records.OpSample
	sealed bool
}

// Append adds a batch of samples.
func (r *Recorder) Append(batch []records.OpSample) {
	r.mu.Lock()
	if !r.sealed {
		r.rows = append(r.rows, batch...)
	}
	r.mu.Unlock()
}

// Seal stops the recorder and returns its samples ordered by intended
// start time (then worker and sequence).
func (r *Recorder) Seal() []records.OpSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	rows := r.rows
	sort.Slice(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if a.IntendedNs != b.IntendedNs {
			return a.IntendedNs < b.IntendedNs
		}
		if a.Worker != b.Worker {
			return a.Worker < b.Worker
		}
		return a.Seq < b.Seq
	})
	return rows
}

// Len returns the number of samples recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.rows)
}

var (
	regMu    sync.RWMutex
	registry = map[string]Driver{}
)

// Register makes a driver available by name. It panics on a duplicate.
func Register(d Driver) {
	regMu.Lock()
	defer regMu.Unlock()
	name := d.Info().Name
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("drivers: %s registered twice", name))
	}
	registry[name] = d
}

// Get returns the driver registered as name.
func Get(name string) (Driver, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// Names lists registered drivers, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
