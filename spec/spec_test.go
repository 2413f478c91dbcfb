package spec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/collectors"
	"github.com/perfwh/perfwh/drivers"
)

// schemaDriver exists only to give the spec tests a parameter schema.
type schemaDriver struct{}

func (schemaDriver) Info() drivers.Info {
	return drivers.Info{
		Name: "spectest", Version: "0.1",
		Params: []drivers.Param{
			{Name: "mode", Type: drivers.String, Default: "read", Enum: []string{"read", "write", "randread"}},
			{Name: "threads", Type: drivers.Int, Default: 1, Min: drivers.Bound(1)},
			{Name: "block_size", Type: drivers.Size, Default: "4KiB"},
			{Name: "ratio", Type: drivers.Float, Default: 0.5},
			{Name: "sync", Type: drivers.Bool, Default: false},
			{Name: "think", Type: drivers.Duration, Default: "0s"},
		},
		Target: []drivers.Param{{Name: "dir", Type: drivers.String, Default: ""}},
	}
}

func (schemaDriver) Open(context.Context, drivers.TrialConfig) (drivers.Instance, error) {
	return nil, errors.New("not runnable")
}

func init() {
	drivers.Register(schemaDriver{})
	collectors.Register("probe", func(opts map[string]any) (collectors.Collector, error) {
		for k := range opts {
			return nil, fmt.Errorf("unknown option %q", k)
		}
		return nil, nil
	})
}

const base = `name: demo
version: 2
description: a test case
owner: perf@example.com
driver: spectest
workload:
  mode: [read, write]
  threads: [1, 2, 4]
  block_size: 1MiB
repetitions: 2
warmup: 1s
duration: 3s
seed: 7
metadata:
  team: storage
`

func mustParse(t *testing.T, doc string, sets ...string) *Case {
	t.Helper()
	c, err := Parse("case.yaml", []byte(doc), sets)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestParseAndPlan(t *testing.T) {
	c := mustParse(t, base)
	if c.Name != "demo" || c.Version != "2" || c.Repetitions != 2 || c.Warmup != time.Second || c.Duration != 3*time.Second {
		t.Fatalf("fields: %+v", c)
	}
	if got := c.Workload["block_size"]; len(got) != 1 || got[0] != int64(1<<20) {
		t.Fatalf("block_size = %v; want [1048576]", got)
	}
	if got := c.Workload["ratio"]; len(got) != 1 || got[0] != 0.5 {
		t.Fatalf("default not applied: ratio = %v", got)
	}
	pl, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Points) != 6 || len(pl.Trials) != 12 {
		t.Fatalf("points=%d trials=%d; want 6 and 12", len(pl.Points), len(pl.Trials))
	}
	if want := []string{"mode", "threads"}; strings.Join(pl.Axes, ",") != strings.Join(want, ",") {
		t.Fatalf("axes = %v; want %v", pl.Axes, want)
	}
	// Repetitions are the outer loop; the last axis varies fastest.
	first, seventh := pl.Trials[0], pl.Trials[6]
	if first.ID != "t0001" || first.Repetition != 1 || first.Params["mode"] != "read" || first.Params["threads"] != int64(1) {
		t.Fatalf("first trial %+v", first)
	}
	if pl.Trials[1].Params["threads"] != int64(2) || seventh.Repetition != 2 || seventh.Point != 1 {
		t.Fatalf("order: second %+v seventh %+v", pl.Trials[1], seventh)
	}
	if first.Seed == seventh.Seed {
		t.Fatal("repetitions share a seed")
	}
	again, _ := mustParse(t, base).Plan()
	for i := range pl.Trials {
		if pl.Trials[i].Seed != again.Trials[i].Seed {
			t.Fatal("seeds are not reproducible")
		}
	}
}

func TestDigestsIgnoreFormattingAndOrder(t *testing.T) {
	reordered := `# same case, other order and style
seed: 7
duration: "3s"
warmup: 1s
repetitions: 2
driver: spectest
workload: {block_size: 1048576, threads: [1,2,4], mode: [read, write], ratio: 0.5}
version: "2"
name: demo
description: other words do not matter
metadata: {team: other}
`
	a, b := mustParse(t, base), mustParse(t, reordered)
	if a.WorkloadSpecDigest() != b.WorkloadSpecDigest() {
		t.Fatalf("workload digests differ:\n%s\n%s", a.WorkloadSpecJSON(), b.WorkloadSpecJSON())
	}
	if a.CaseID() != b.CaseID() {
		t.Fatal("benchmark_case_id differs for the same case")
	}
	c := mustParse(t, base, "workload.threads=8")
	if c.WorkloadSpecDigest() == a.WorkloadSpecDigest() {
		t.Fatal("a workload change kept the digest")
	}
	d := mustParse(t, base, "target.dir=/mnt/other")
	if d.WorkloadSpecDigest() != a.WorkloadSpecDigest() || d.CaseID() == a.CaseID() {
		t.Fatal("a target change must keep the workload digest and change the case id")
	}
	// Pin the canonical form: a change here is a change of every digest.
	want := `{"driver":"spectest","duration":"3s","operations":0,"repetitions":2,"seed":7,"warmup":"1s","warmup_operations":0,"workload":{"block_size":1048576,"mode":["read","write"],"ratio":0.5,"sync":false,"think":"0s","threads":[1,2,4]}}`
	if got := string(a.WorkloadSpecJSON()); got != want {
		t.Fatalf("canonical workload spec\n got %s\nwant %s", got, want)
	}
}

func TestSetOverrides(t *testing.T) {
	c := mustParse(t, base, "workload.threads=4", "repetitions=5", "workload.mode=[randread]", "collectors.probe.interval=250ms")
	if got := c.Workload["threads"]; len(got) != 1 || got[0] != int64(4) {
		t.Fatalf("threads = %v", got)
	}
	if c.Repetitions != 5 || c.Workload["mode"][0] != "randread" {
		t.Fatalf("repetitions=%d mode=%v", c.Repetitions, c.Workload["mode"])
	}
	if c.Collectors["probe"]["interval"] != "250ms" {
		t.Fatalf("collectors = %v", c.Collectors)
	}
	if string(c.Raw) != base {
		t.Fatal("Raw must be the file as given")
	}
}

func TestValidationErrorsNameFileLineField(t *testing.T) {
	f := func(name, doc string, sets []string, want ...string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(doc), sets)
			if err == nil {
				t.Fatal("Parse succeeded; want an error")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not spec.Errors", err)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error\n%v\ndoes not mention %q", err, w)
				}
			}
		})
	}
	f("unknown field", "name: x\ndriver: spectest\nduration: 1s\ncolour: red\n", nil, "bad.yaml:4:1: colour: unknown field")
	f("wrong type", "name: x\ndriver: spectest\nduration: 1s\nworkload:\n  threads: four\n", nil, "bad.yaml:5:12: workload.threads: want an integer")
	f("empty sweep", "name: x\ndriver: spectest\nduration: 1s\nworkload:\n  threads: []\n", nil, "bad.yaml:5:12: workload.threads: empty sweep")
	f("bad sweep element", "name: x\ndriver: spectest\nduration: 1s\nworkload:\n  mode: [read, fly]\n", nil, "bad.yaml:5:16: workload.mode[1]", "not one of read, write, randread")
	f("negative duration", "name: x\ndriver: spectest\nduration: -2s\n", nil, "bad.yaml:3:11: duration: must not be negative")
	f("unknown driver", "name: x\ndriver: warp\nduration: 1s\n", nil, "bad.yaml:2:9: driver: unknown driver \"warp\"")
	f("unknown parameter", "name: x\ndriver: spectest\nduration: 1s\nworkload:\n  queue_depth: 4\n", nil, "bad.yaml:5:3: workload.queue_depth: unknown parameter")
	f("missing name and bound", "driver: spectest\n", nil, "name: required field missing", "duration: give a duration or an operation count")
	f("below minimum", "name: x\ndriver: spectest\nduration: 1s\nworkload: {threads: 0}\n", nil, "workload.threads: 0 is below the minimum 1")
	f("zero repetitions", "name: x\ndriver: spectest\nduration: 1s\nrepetitions: 0\n", nil, "bad.yaml:4:14: repetitions: must be at least 1")
	f("unknown collector", "name: x\ndriver: spectest\nduration: 1s\ncollectors: {gpu9000: {}}\n", nil, "collectors.gpu9000: unknown collector")
	f("duplicate key", "name: x\nname: y\ndriver: spectest\nduration: 1s\n", nil, "bad.yaml:2:1: name: given twice")
	f("bad set value", base, []string{"workload.threads=lots"}, "--set workload.threads=lots: workload.threads: want an integer")
	f("bad set syntax", base, []string{"threads"}, "--set threads: want key=value")
	f("not yaml", "name: [unclosed\n", nil, "bad.yaml")
	f("not a mapping", "- a\n- b\n", nil, "a case file is a mapping")
	f("bad collector option", "name: x\ndriver: spectest\nduration: 1s\ncollectors: {probe: {colour: red}}\n", nil, "collectors.probe: unknown option \"colour\"")
	f("bad time limit", "name: x\ndriver: spectest\nduration: 1s\nresources: {time_limit: 0s}\n", nil, "resources.time_limit: must be positive")
	f("several problems", "name: x\ndriver: spectest\nduration: 1s\nwarmup: soon\nseed: x\n", nil, "2 problems", "warmup:", "seed:")
}

func TestTimeLimitDefault(t *testing.T) {
	c := mustParse(t, base)
	if want := 2*(time.Second+3*time.Second) + time.Minute; c.Resources.TimeLimit != want {
		t.Fatalf("default time limit %s; want %s", c.Resources.TimeLimit, want)
	}
	c = mustParse(t, base, "resources.time_limit=90s")
	if c.Resources.TimeLimit != 90*time.Second {
		t.Fatalf("time limit %s; want 90s", c.Resources.TimeLimit)
	}
}
