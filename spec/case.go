package spec

import (
	"time"

	"github.com/perfwh/perfwh/drivers"
)

// Case is a validated benchmark case: an experiment (driver) with its
// workload (parameters, possibly swept), target, repetitions and collectors.
type Case struct {
	Name        string
	Version     string
	Description string
	Owner       string
	Deprecated  bool

	Driver drivers.Driver
	// Target holds the resolved target parameters.
	Target drivers.Values
	// Workload maps each workload parameter to its values: one value for a
	// fixed parameter, several for a sweep axis. Values are normalised
	// (drivers.Param.Coerce) and defaults applied.
	Workload map[string][]any

	Repetitions      int
	Warmup           time.Duration // per trial, before measurement; 0 = none
	WarmupOperations int64
	Duration         time.Duration // measurement length per trial; 0 = bounded by Operations
	Operations       int64
	Seed             int64

	Collectors map[string]map[string]any // name -> options
	Resources  Resources
	Metadata   map[string]string

	// Source is where the case came from; Raw its bytes before overrides;
	// Sets the --set overrides applied, in order.
	Source string
	Raw    []byte
	Sets   []string
}

// Resources are the limits a trial runs under. TimeLimit is always enforced
// by the runner; the others are requests passed to schedulers and recorded.
type Resources struct {
	CPUs      float64
	Memory    int64 // bytes
	GPUs      int
	TimeLimit time.Duration // per trial
}

// Defaults applied when a case leaves a field out.
const (
	DefaultRepetitions = 1
	DefaultSeed        = 1
	// With no time_limit, a trial may take twice its planned time plus a
	// minute, or ten minutes when only an operation count bounds it.
	defaultLimitSlack = time.Minute
	defaultOpsLimit   = 10 * time.Minute
)

// defaultTimeLimit derives a per-trial limit from the planned phases.
func (c *Case) defaultTimeLimit() time.Duration {
	if c.Duration == 0 || (c.Warmup == 0 && c.WarmupOperations > 0) {
		return defaultOpsLimit
	}
	return 2*(c.Warmup+c.Duration) + defaultLimitSlack
}
