package host

import (
	"context"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/disk"
	"github.com/shirou/gopsutil/v3/load"
	"github.com/shirou/gopsutil/v3/mem"
	"github.com/shirou/gopsutil/v3/net"

	"github.com/perfwh/perfwh/evidence/records"
)

// Metric families: each is read with one gopsutil call (cpu with two) and
// is skipped for the rest of a run after its first error.
const (
	famCPU     = "cpu"
	famLoad    = "load"
	famMemory  = "memory"
	famSwap    = "swap"
	famDisk    = "disk"
	famNetwork = "network"
	famSched   = "context_switches"
)

var families = []string{famCPU, famLoad, famMemory, famSwap, famDisk, famNetwork, famSched}

// skippedDisks matches the block devices left out unless include_all_disks
// is set: partitions (whose I/O their disk already counts) and ram, zram,
// loop and floppy devices. It is node_exporter's default exclusion.
var skippedDisks = regexp.MustCompile(`^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p|mmcblk\d+p)\d+$`)

// sampler turns successive readings into points. Counters become _total
// points at every sample; rates and CPU percentages need the previous
// reading, so they start at the second sample.
type sampler struct {
	opts     Options
	disabled map[string]bool

	prevAt   time.Time // monotonic time of the previous sample; zero before the first
	prevCPU  map[string]cpu.TimesStat
	prevDisk map[string]disk.IOCountersStat
	prevNet  map[string]net.IOCountersStat
	prevCtxt int64
	haveCtxt bool
}

func newSampler(opts Options) *sampler {
	return &sampler{opts: opts, disabled: map[string]bool{}}
}

func (s *sampler) allDisabled() bool {
	for _, f := range families {
		if !s.disabled[f] {
			return false
		}
	}
	return true
}

// points accumulates one sample's points, all stamped with the same time.
type points struct {
	unixNs, offsetNs int64
	out              []records.TelemetryPoint
}

func (p *points) add(metric, device string, v float64) {
	p.out = append(p.out, records.TelemetryPoint{
		TimeUnixNs: p.unixNs,
		OffsetNs:   p.offsetNs,
		Collector:  Name,
		Metric:     metric,
		Device:     device,
		Value:      v,
	})
}

// sample reads every enabled family once. now must carry a monotonic clock
// reading (time.Now()); rates divide by now minus the previous sample's now.
func (s *sampler) sample(ctx context.Context, now, origin time.Time) []records.TelemetryPoint {
	p := &points{unixNs: now.UnixNano(), offsetNs: now.Sub(origin).Nanoseconds()}
	var dt float64 // seconds since the previous sample; 0 on the first
	if !s.prevAt.IsZero() {
		dt = now.Sub(s.prevAt).Seconds()
	}
	run := func(family string, f func() error) {
		if s.disabled[family] {
			return
		}
		if err := f(); err != nil {
			if ctx.Err() != nil {
				return // cancelled mid-read: not the family's fault
			}
			s.disabled[family] = true
			slog.Default().Warn("host collector: skipping a metric family for the rest of the run",
				"family", family, "err", err)
		}
	}
	run(famCPU, func() error { return s.sampleCPU(ctx, p) })
	run(famLoad, func() error { return sampleLoad(ctx, p) })
	run(famMemory, func() error { return sampleMemory(ctx, p) })
	run(famSwap, func() error { return sampleSwap(ctx, p) })
	run(famDisk, func() error { return s.sampleDisk(ctx, p, dt) })
	run(famNetwork, func() error { return s.sampleNetwork(ctx, p, dt) })
	run(famSched, func() error { return s.sampleSched(ctx, p, dt) })
	s.prevAt = now
	return p.out
}

func (s *sampler) sampleCPU(ctx context.Context, p *points) error {
	total, err := cpu.TimesWithContext(ctx, false)
	if err != nil {
		return err
	}
	perCPU, err := cpu.TimesWithContext(ctx, true)
	if err != nil {
		return err
	}
	cur := make(map[string]cpu.TimesStat, len(perCPU)+1)
	if len(total) > 0 {
		cur[""] = total[0]
	}
	for _, t := range perCPU {
		cur[t.CPU] = t
	}
	prev := s.prevCPU
	s.prevCPU = cur
	if prev == nil {
		return nil
	}
	devices := make([]string, 0, len(cur))
	for d := range cur {
		devices = append(devices, d)
	}
	sortDevices(devices)
	for _, d := range devices {
		before, ok := prev[d]
		if !ok {
			continue // a CPU came online between samples
		}
		u, ok := cpuShares(before, cur[d])
		if !ok {
			continue
		}
		p.add("cpu_utilization_percent", d, u.busy)
		if d == "" {
			p.add("cpu_user_percent", d, u.user)
			p.add("cpu_system_percent", d, u.system)
			p.add("cpu_iowait_percent", d, u.iowait)
			p.add("cpu_steal_percent", d, u.steal)
		}
	}
	return nil
}

type cpuUse struct{ busy, user, system, iowait, steal float64 }

// cpuShares returns the share of CPU time, in percent, spent in each state
// between two readings of the same CPU, and false when no time passed.
// Guest time is already part of user and nice time on Linux, so it is not
// added again. Each state's delta is floored at zero: iowait in particular
// can step backwards in /proc/stat.
func cpuShares(a, b cpu.TimesStat) (cpuUse, bool) {
	d := func(x, y float64) float64 { return math.Max(0, y-x) }
	user := d(a.User, b.User) + d(a.Nice, b.Nice)
	system := d(a.System, b.System)
	idle := d(a.Idle, b.Idle)
	iowait := d(a.Iowait, b.Iowait)
	irq := d(a.Irq, b.Irq) + d(a.Softirq, b.Softirq)
	steal := d(a.Steal, b.Steal)
	all := user + system + idle + iowait + irq + steal
	if all <= 0 {
		return cpuUse{}, false
	}
	pct := func(v float64) float64 { return math.Min(100, 100*v/all) }
	return cpuUse{
		busy:   pct(all - idle - iowait),
		user:   pct(user),
		system: pct(system),
		iowait: pct(iowait),
		steal:  pct(steal),
	}, true
}

func sampleLoad(ctx context.Context, p *points) error {
	a, err := load.AvgWithContext(ctx)
	if err != nil {
		return err
	}
	p.add("load1", "", a.Load1)
	p.add("load5", "", a.Load5)
	p.add("load15", "", a.Load15)
	return nil
}

func sampleMemory(ctx context.Context, p *points) error {
	m, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		return err
	}
	p.add("memory_used_bytes", "", float64(m.Used))
	p.add("memory_available_bytes", "", float64(m.Available))
	p.add("memory_cached_bytes", "", float64(m.Cached))
	p.add("memory_used_percent", "", m.UsedPercent)
	return nil
}

func sampleSwap(ctx context.Context, p *points) error {
	m, err := mem.SwapMemoryWithContext(ctx)
	if err != nil {
		return err
	}
	p.add("swap_used_bytes", "", float64(m.Used))
	return nil
}

func (s *sampler) sampleDisk(ctx context.Context, p *points, dt float64) error {
	all, err := disk.IOCountersWithContext(ctx)
	if err != nil {
		return err
	}
	cur := make(map[string]disk.IOCountersStat, len(all))
	for name, c := range all {
		if s.opts.IncludeAllDisks || !skippedDisks.MatchString(name) {
			cur[name] = c
		}
	}
	prev := s.prevDisk
	s.prevDisk = cur
	for _, d := range sortedKeys(cur) {
		c := cur[d]
		p.add("disk_read_bytes_total", d, float64(c.ReadBytes))
		p.add("disk_write_bytes_total", d, float64(c.WriteBytes))
		p.add("disk_read_ops_total", d, float64(c.ReadCount))
		p.add("disk_write_ops_total", d, float64(c.WriteCount))
		p.add("disk_io_time_seconds_total", d, float64(c.IoTime)/1000) // IoTime is in ms
		b, ok := prev[d]
		if !ok || dt <= 0 {
			continue
		}
		rate(p, "disk_read_bytes_per_second", d, b.ReadBytes, c.ReadBytes, dt)
		rate(p, "disk_write_bytes_per_second", d, b.WriteBytes, c.WriteBytes, dt)
		rate(p, "disk_read_ops_per_second", d, b.ReadCount, c.ReadCount, dt)
		rate(p, "disk_write_ops_per_second", d, b.WriteCount, c.WriteCount, dt)
		if c.IoTime >= b.IoTime {
			busy := float64(c.IoTime-b.IoTime) / 1000 / dt * 100
			p.add("disk_busy_percent", d, math.Min(100, busy))
		}
	}
	return nil
}

func (s *sampler) sampleNetwork(ctx context.Context, p *points, dt float64) error {
	all, err := net.IOCountersWithContext(ctx, true)
	if err != nil {
		return err
	}
	cur := make(map[string]net.IOCountersStat, len(all))
	for _, c := range all {
		if c.Name == "lo" && !s.opts.IncludeLoopback {
			continue
		}
		cur[c.Name] = c
	}
	prev := s.prevNet
	s.prevNet = cur
	for _, d := range sortedKeys(cur) {
		c := cur[d]
		p.add("net_rx_bytes_total", d, float64(c.BytesRecv))
		p.add("net_tx_bytes_total", d, float64(c.BytesSent))
		p.add("net_rx_packets_total", d, float64(c.PacketsRecv))
		p.add("net_tx_packets_total", d, float64(c.PacketsSent))
		p.add("net_rx_errors_total", d, float64(c.Errin))
		p.add("net_tx_errors_total", d, float64(c.Errout))
		p.add("net_rx_drops_total", d, float64(c.Dropin))
		p.add("net_tx_drops_total", d, float64(c.Dropout))
		b, ok := prev[d]
		if !ok || dt <= 0 {
			continue
		}
		rate(p, "net_rx_bytes_per_second", d, b.BytesRecv, c.BytesRecv, dt)
		rate(p, "net_tx_bytes_per_second", d, b.BytesSent, c.BytesSent, dt)
		rate(p, "net_rx_packets_per_second", d, b.PacketsRecv, c.PacketsRecv, dt)
		rate(p, "net_tx_packets_per_second", d, b.PacketsSent, c.PacketsSent, dt)
	}
	return nil
}

func (s *sampler) sampleSched(ctx context.Context, p *points, dt float64) error {
	m, err := load.MiscWithContext(ctx)
	if err != nil {
		return err
	}
	ctxt := int64(m.Ctxt)
	p.add("context_switches_total", "", float64(ctxt))
	if s.haveCtxt && dt > 0 && ctxt >= s.prevCtxt {
		p.add("context_switches_per_second", "", float64(ctxt-s.prevCtxt)/dt)
	}
	s.prevCtxt, s.haveCtxt = ctxt, true
	return nil
}

// rate adds the per-second rate of a counter between two readings dt
// seconds apart, unless the counter went backwards (the device was reset or
// re-created between samples).
func rate(p *points, metric, device string, before, after uint64, dt float64) {
	if after < before {
		return
	}
	p.add(metric, device, float64(after-before)/dt)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortDevices orders "" (host-wide) first, then cpu2 before cpu10.
func sortDevices(devs []string) {
	sort.Slice(devs, func(i, j int) bool {
		a, b := devs[i], devs[j]
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
}
