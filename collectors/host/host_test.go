package host

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"

	"github.com/perfwh/perfwh/collectors"
	"github.com/perfwh/perfwh/evidence/records"
)

// unitSuffix is what every metric name must end with, bar the dimensionless
// load averages.
var unitSuffix = regexp.MustCompile(`_(percent|bytes|total|per_second)$`)

var dimensionless = map[string]bool{"load1": true, "load5": true, "load15": true}

// docRow is one row of the metric table in doc.go.
type docRow struct{ metric, unit, device, meaning string }

// documentedMetrics parses the metric table out of doc.go's package comment.
func documentedMetrics(t *testing.T) map[string]docRow {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatalf("parse doc.go: %v", err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	rows := map[string]docRow{}
	header := true
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 4 {
			t.Fatalf("doc.go table row %q: want 4 cells, got %d", line, len(cells))
		}
		if header {
			if cells[0] != "metric" {
				t.Fatalf("doc.go table starts with %q, want the header row", line)
			}
			header = false
			continue
		}
		if strings.Trim(cells[0], "-") == "" {
			continue // separator row
		}
		if _, dup := rows[cells[0]]; dup {
			t.Errorf("doc.go lists %s twice", cells[0])
		}
		rows[cells[0]] = docRow{cells[0], cells[1], cells[2], cells[3]}
	}
	if len(rows) == 0 {
		t.Fatal("doc.go has no metric table")
	}
	return rows
}

// codeMetrics returns the metric names sample.go can emit: the string
// literal metric argument of every p.add(...) and rate(...) call outside
// rate itself (which passes its own argument on).
func codeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sample.go", nil, 0)
	if err != nil {
		t.Fatalf("parse sample.go: %v", err)
	}
	names := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if fn, ok := n.(*ast.FuncDecl); ok && fn.Name.Name == "rate" {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		arg := -1
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if fn.Sel.Name == "add" {
				arg = 0
			}
		case *ast.Ident:
			if fn.Name == "rate" {
				arg = 1
			}
		}
		if arg < 0 || len(call.Args) <= arg {
			return true
		}
		lit, ok := call.Args[arg].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("sample.go: metric name at %v is not a string literal; the doc test cannot see it", fset.Position(call.Pos()))
			return true
		}
		s, _ := strconv.Unquote(lit.Value)
		names[s] = true
		return true
	})
	return names
}

func TestDocListsExactlyTheMetricsInCode(t *testing.T) {
	doc := documentedMetrics(t)
	code := codeMetrics(t)
	for m := range code {
		if _, ok := doc[m]; !ok {
			t.Errorf("sample.go emits %s but doc.go's table does not list it", m)
		}
	}
	for m, row := range doc {
		if !code[m] {
			t.Errorf("doc.go lists %s but sample.go never emits it", m)
		}
		if !unitSuffix.MatchString(m) && !dimensionless[m] {
			t.Errorf("%s does not end with a unit", m)
		}
		if want := unitOf(m); want != "" && row.unit != want {
			t.Errorf("doc.go gives %s the unit %q; its name says %q", m, row.unit, want)
		}
		if row.meaning == "" || row.device == "" {
			t.Errorf("doc.go row for %s has an empty cell", m)
		}
	}
}

// unitOf is the unit a metric's name implies, where the name says it.
func unitOf(metric string) string {
	switch {
	case strings.HasSuffix(metric, "_percent"):
		return "percent"
	case strings.HasSuffix(metric, "_bytes_per_second"):
		return "bytes/s"
	case strings.HasSuffix(metric, "_bytes"), strings.HasSuffix(metric, "_bytes_total"):
		return "bytes"
	case strings.HasSuffix(metric, "_seconds_total"):
		return "seconds"
	}
	return ""
}

// recorder collects what a collector emits.
type recorder struct {
	mu      sync.Mutex
	samples [][]records.TelemetryPoint
}

func (r *recorder) emit(pts []records.TelemetryPoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, pts)
}

func (r *recorder) all() []records.TelemetryPoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []records.TelemetryPoint
	for _, s := range r.samples {
		out = append(out, s...)
	}
	return out
}

func TestRun(t *testing.T) {
	f, ok := collectors.Get("host")
	if !ok {
		t.Fatal(`"host" is not registered`)
	}
	c, err := f(nil)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if c.Name() != "host" {
		t.Fatalf("Name() = %q; want host", c.Name())
	}

	const interval, window = 100 * time.Millisecond, 350 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	origin := time.Now()
	var rec recorder
	if err := c.Run(ctx, interval, origin, rec.emit); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if late := time.Since(origin) - window; late > 100*time.Millisecond {
		t.Errorf("Run returned %v after its context ended", late)
	}
	wallEnd := time.Now().UnixNano()

	// Samples at 0, 100, 200 and 300 ms; allow one either way for a slow
	// machine or a tick racing the deadline.
	if n := len(rec.samples); n < 2 || n > 5 {
		t.Fatalf("got %d samples in %v at %v; want about %d", n, window, interval, int(window/interval)+1)
	}

	doc := documentedMetrics(t)
	seen := map[string]bool{}
	lastOffset := map[string]int64{}
	for i, sample := range rec.samples {
		if len(sample) == 0 {
			t.Fatalf("sample %d is empty", i)
		}
		for _, p := range sample {
			if p.TimeUnixNs != sample[0].TimeUnixNs || p.OffsetNs != sample[0].OffsetNs {
				t.Fatalf("sample %d: points carry different times", i)
			}
		}
	}
	for _, p := range rec.all() {
		seen[p.Metric] = true
		if p.Collector != "host" {
			t.Fatalf("%s: collector %q; want host", p.Metric, p.Collector)
		}
		if _, ok := doc[p.Metric]; !ok {
			t.Errorf("emitted %s, which doc.go does not list", p.Metric)
		}
		if !unitSuffix.MatchString(p.Metric) && !dimensionless[p.Metric] {
			t.Errorf("%s does not end with a unit", p.Metric)
		}
		if p.TimeUnixNs < origin.UnixNano() || p.TimeUnixNs > wallEnd {
			t.Errorf("%s: time %d outside the run [%d, %d]", p.Metric, p.TimeUnixNs, origin.UnixNano(), wallEnd)
		}
		if p.OffsetNs < 0 || p.OffsetNs > int64(window+100*time.Millisecond) {
			t.Errorf("%s: offset %v outside the run", p.Metric, time.Duration(p.OffsetNs))
		}
		key := p.Metric + "/" + p.Device
		if last, ok := lastOffset[key]; ok && p.OffsetNs <= last {
			t.Errorf("%s: offset %d after %d; want strictly increasing", key, p.OffsetNs, last)
		}
		lastOffset[key] = p.OffsetNs
		if strings.HasSuffix(p.Metric, "_percent") && (p.Value < 0 || p.Value > 100) {
			t.Errorf("%s %s = %v; want within [0, 100]", p.Metric, p.Device, p.Value)
		}
		if (p.Metric == "memory_used_bytes" || p.Metric == "memory_available_bytes") && p.Value <= 0 {
			t.Errorf("%s = %v; want > 0", p.Metric, p.Value)
		}
		if p.Value < 0 {
			t.Errorf("%s %s = %v; want >= 0", p.Metric, p.Device, p.Value)
		}
		if p.Device == "lo" {
			t.Errorf("loopback reported without include_loopback")
		}
	}
	// Families every Linux host has; rates and percentages come from the
	// second sample on.
	for _, m := range []string{"cpu_utilization_percent", "cpu_user_percent", "load1", "memory_used_bytes",
		"memory_used_percent", "swap_used_bytes", "context_switches_total", "context_switches_per_second"} {
		if !seen[m] {
			t.Errorf("no %s emitted", m)
		}
	}
	var first []string
	for _, p := range rec.samples[0] {
		if strings.HasSuffix(p.Metric, "_per_second") || strings.HasPrefix(p.Metric, "cpu_") || p.Metric == "disk_busy_percent" {
			first = append(first, p.Metric)
		}
	}
	if len(first) > 0 {
		t.Errorf("first sample has interval values %v; they need a previous sample", first)
	}
}

func TestPerCPU(t *testing.T) {
	s := newSampler(Options{})
	ctx := context.Background()
	s.sample(ctx, time.Now(), time.Now())
	time.Sleep(50 * time.Millisecond)
	pts := s.sample(ctx, time.Now(), time.Now())
	devices := map[string]bool{}
	for _, p := range pts {
		if p.Metric == "cpu_utilization_percent" {
			devices[p.Device] = true
		}
	}
	n, err := cpu.Counts(true)
	if err != nil {
		t.Fatal(err)
	}
	if !devices[""] || !devices["cpu0"] || len(devices) != n+1 {
		t.Errorf("cpu_utilization_percent devices %v; want \"\" and cpu0..cpu%d", keys(devices), n-1)
	}
}

func TestLoopbackOption(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/lo"); err != nil {
		t.Skip("no loopback interface")
	}
	f, _ := collectors.Get("host")
	c, err := f(map[string]any{"include_loopback": true})
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var found bool
	err = c.Run(ctx, time.Hour, time.Now(), func(pts []records.TelemetryPoint) {
		for _, p := range pts {
			found = found || (p.Device == "lo" && p.Metric == "net_rx_bytes_total")
		}
		cancel()
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !found {
		t.Error("include_loopback: true, but no net_rx_bytes_total for lo")
	}
}

func TestCancelReturnsPromptly(t *testing.T) {
	c := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, time.Hour, time.Now(), func([]records.TelemetryPoint) {
			select {
			case first <- struct{}{}:
			default:
			}
		})
	}()
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("no sample within 5s of Run starting; the first must be immediate")
	}
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v; want nil", err)
		}
		if d := time.Since(start); d > 200*time.Millisecond {
			t.Errorf("Run took %v to return after cancel", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return within 2s of cancel")
	}
}

func TestRunRejectsBadInterval(t *testing.T) {
	err := New(Options{}).Run(context.Background(), 0, time.Now(), func([]records.TelemetryPoint) {})
	if err == nil {
		t.Fatal("Run with interval 0: no error")
	}
}

func TestOptions(t *testing.T) {
	f, _ := collectors.Get("host")
	for _, tc := range []struct {
		opts    map[string]any
		wantErr string // "" for success
	}{
		{nil, ""},
		{map[string]any{}, ""},
		{map[string]any{"include_loopback": true, "include_all_disks": false}, ""},
		{map[string]any{"include_loopbak": true}, `unknown option "include_loopbak"`},
		{map[string]any{"interval": "1s"}, `unknown option "interval"`},
		{map[string]any{"include_loopback": "yes"}, `option "include_loopback": want true or false`},
	} {
		_, err := f(tc.opts)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("options %v: %v", tc.opts, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("options %v: got error %v; want one containing %q", tc.opts, err, tc.wantErr)
		}
	}
	o, err := ParseOptions(map[string]any{"include_loopback": true, "include_all_disks": true})
	if err != nil || !o.IncludeLoopback || !o.IncludeAllDisks {
		t.Errorf("ParseOptions = %+v, %v; want both set", o, err)
	}
}

func TestCPUShares(t *testing.T) {
	a := cpu.TimesStat{User: 10, Nice: 0, System: 5, Idle: 100, Iowait: 3, Irq: 1, Softirq: 1, Steal: 0, Guest: 2}
	b := cpu.TimesStat{User: 16, Nice: 2, System: 7, Idle: 108, Iowait: 2 /* went backwards */, Irq: 1, Softirq: 2, Steal: 1, Guest: 4}
	// deltas: user+nice 8, system 2, idle 8, iowait 0 (floored), irq+softirq 1, steal 1 => 20
	u, ok := cpuShares(a, b)
	if !ok {
		t.Fatal("cpuShares: no time passed")
	}
	f := func(name string, got, want float64) {
		if diff := got - want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
	f("busy", u.busy, 60)
	f("user", u.user, 40)
	f("system", u.system, 10)
	f("iowait", u.iowait, 0)
	f("steal", u.steal, 5)
	if _, ok := cpuShares(a, a); ok {
		t.Error("cpuShares of identical readings: ok; want false")
	}
}

func TestSkippedDisks(t *testing.T) {
	for name, skip := range map[string]bool{
		"sda": false, "sda1": true, "vda": false, "vda2": true, "xvdb": false, "xvdb1": true,
		"nvme0n1": false, "nvme0n1p1": true, "mmcblk0": false, "mmcblk0p1": true,
		"dm-0": false, "md0": false, "loop0": true, "ram1": true, "zram0": true, "fd0": true,
	} {
		if got := skippedDisks.MatchString(name); got != skip {
			t.Errorf("%s skipped = %v; want %v", name, got, skip)
		}
	}
}

func TestSortDevices(t *testing.T) {
	got := []string{"cpu10", "cpu2", "", "cpu1", "cpu0"}
	sortDevices(got)
	if want := []string{"", "cpu0", "cpu1", "cpu2", "cpu10"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sortDevices = %q; want %q", got, want)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
