package host

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/perfwh/perfwh/collectors"
	"github.com/perfwh/perfwh/evidence/records"
)

// Name is the collector's registered name and the Collector column of its
// points.
const Name = "host"

func init() {
	collectors.Register(Name, func(opts map[string]any) (collectors.Collector, error) {
		o, err := ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return New(o), nil
	})
}

// Options configure the host collector. The zero value is the default.
type Options struct {
	// IncludeLoopback keeps the loopback interface ("lo"), which is skipped
	// by default. Option key: include_loopback.
	IncludeLoopback bool
	// IncludeAllDisks keeps every block device in /proc/diskstats. By
	// default partitions and ram, zram, loop and floppy devices are skipped,
	// so that per-disk values do not count the same I/O twice. Option key:
	// include_all_disks.
	IncludeAllDisks bool
}

// optionKeys are the keys ParseOptions accepts, each with where it goes.
var optionKeys = map[string]func(*Options) *bool{
	"include_loopback":  func(o *Options) *bool { return &o.IncludeLoopback },
	"include_all_disks": func(o *Options) *bool { return &o.IncludeAllDisks },
}

// ParseOptions reads the collector's options from a case file's mapping.
// Every key is optional; an unknown key or a value of the wrong type is an
// error that names the key.
func ParseOptions(opts map[string]any) (Options, error) {
	var o Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the same key first on every run
	for _, k := range keys {
		field, ok := optionKeys[k]
		if !ok {
			return Options{}, fmt.Errorf("host collector: unknown option %q (known: %s)", k, knownOptions())
		}
		b, ok := opts[k].(bool)
		if !ok {
			return Options{}, fmt.Errorf("host collector: option %q: want true or false, got %v", k, opts[k])
		}
		*field(&o) = b
	}
	return o, nil
}

func knownOptions() string {
	names := make([]string, 0, len(optionKeys))
	for k := range optionKeys {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Collector samples host-wide CPU, memory, disk, network and scheduler
// counters through gopsutil. It holds only configuration; each Run keeps
// its own previous-sample state, so one Collector may run many trials.
type Collector struct {
	opts Options
}

// New returns a host collector with the given options.
func New(opts Options) *Collector { return &Collector{opts: opts} }

// Name returns "host".
func (c *Collector) Name() string { return Name }

// Run samples at once and then on every tick of interval until ctx is done,
// passing each sample's points to emit, and returns nil when ctx ends it.
// A metric family that fails (for example no /proc/diskstats in a
// container) is logged once through slog.Default and skipped from then on;
// Run returns an error only if the interval is not positive or no family
// could be sampled at all.
func (c *Collector) Run(ctx context.Context, interval time.Duration, origin time.Time, emit func([]records.TelemetryPoint)) error {
	if interval <= 0 {
		return fmt.Errorf("host collector: interval %s is not positive", interval)
	}
	if ctx.Err() != nil {
		return nil
	}
	s := newSampler(c.opts)
	pts := s.sample(ctx, time.Now(), origin)
	if ctx.Err() != nil {
		return nil
	}
	if len(pts) == 0 && s.allDisabled() {
		return fmt.Errorf("host collector: no metric family could be sampled (see the warnings logged)")
	}
	if len(pts) > 0 {
		emit(pts)
	}

	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			pts := s.sample(ctx, time.Now(), origin)
			if ctx.Err() != nil {
				return nil
			}
			if len(pts) > 0 {
				emit(pts)
			}
		}
	}
}
