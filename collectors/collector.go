package collectors

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/perfwh/perfwh/evidence/records"
)

// Collector samples telemetry while a trial is measured.
type Collector interface {
	// Name is the collector's registered name ("host").
	Name() string
	// Run takes a sample at once and then every interval until ctx is
	// done, passing each sample's points to emit. Offsets are measured
	// from origin on the monotonic clock. Run returns nil when ctx ends it;
	// an error means the collector could not work at all (the trial
	// records it and goes on without that collector's telemetry).
	Run(ctx context.Context, interval time.Duration, origin time.Time, emit func([]records.TelemetryPoint)) error
}

// Factory builds a collector from its options in the case file.
type Factory func(opts map[string]any) (Collector, error)

// DefaultInterval is the sampling interval when the case gives none.
const DefaultInterval = time.Second

var (
	regMu    sync.RWMutex
	registry = map[string]Factory{}
)

// Register makes a collector available by name. It panics on a duplicate.
func Register(name string, f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("collectors: %s registered twice", name))
	}
	registry[name] = f
}

// Get returns the factory registered as name.
func Get(name string) (Factory, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// Names lists registered collectors, sorted.
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
