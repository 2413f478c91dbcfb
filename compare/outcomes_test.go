package compare

import (
	"reflect"
	"testing"
)

func rows(op string, params ...string) []pointRow {
	out := make([]pointRow, len(params))
	for i, p := range params {
		out[i] = pointRow{point: int64(i + 1), params: p, op: op, vals: map[string]any{"ops_per_s": float64(100 * (i + 1))}}
	}
	return out
}

func TestMatchOutcomes(t *testing.T) {
	type got struct {
		in   string
		axes map[string]any
	}
	f := func(name string, a, b []pointRow, want []got, wantWide []string) {
		t.Helper()
		ocs, wide := matchOutcomes("storage", a, b, storageMetrics)
		var g []got
		for _, o := range ocs {
			axes := map[string]any{}
			for k, v := range o.Axes {
				axes[k] = valueKey(v)
			}
			g = append(g, got{o.In, axes})
		}
		var w []string
		for _, c := range wide {
			w = append(w, c.Param)
		}
		for i := range want {
			for k, v := range want[i].axes {
				want[i].axes[k] = valueKey(v)
			}
		}
		if !reflect.DeepEqual(g, want) || !reflect.DeepEqual(w, wantWide) {
			t.Fatalf("%s: got %v, run-wide %v; want %v, run-wide %v", name, g, w, want, wantWide)
		}
	}
	f("by params, not by index",
		rows("read", `{"mode":"read"}`, `{"mode":"write"}`),
		rows("read", `{"mode":"write"}`, `{"mode":"randread"}`),
		[]got{{OnlyInA, map[string]any{"mode": "read"}}, {InBoth, map[string]any{"mode": "write"}}, {OnlyInB, map[string]any{"mode": "randread"}}},
		nil)
	f("a run-wide change is left out of the match",
		rows("read", `{"block_size":4096,"mode":"read"}`, `{"block_size":4096,"mode":"write"}`),
		rows("read", `{"block_size":65536,"mode":"write"}`, `{"block_size":65536,"mode":"read"}`),
		[]got{{InBoth, map[string]any{"mode": "read"}}, {InBoth, map[string]any{"mode": "write"}}},
		[]string{"block_size"})
	f("a parameter one run lacks",
		rows("read", `{"mode":"read"}`),
		rows("read", `{"direct":true,"mode":"read"}`),
		[]got{{InBoth, map[string]any{}}},
		[]string{"direct"})
	f("a swept parameter is never run-wide",
		rows("read", `{"bs":1,"t":1}`, `{"bs":2,"t":1}`),
		rows("read", `{"bs":1,"t":2}`, `{"bs":3,"t":2}`),
		[]got{{InBoth, map[string]any{"bs": int64(1)}}, {OnlyInA, map[string]any{"bs": int64(2)}}, {OnlyInB, map[string]any{"bs": int64(3)}}},
		[]string{"t"})
	f("operations must match too",
		rows("read", `{"mode":"rw"}`),
		rows("write", `{"mode":"rw"}`),
		[]got{{OnlyInA, map[string]any{}}, {OnlyInB, map[string]any{}}},
		nil)
	f("parameters that are not JSON match exactly",
		rows("read", `p-1`, `p-2`),
		rows("read", `p-2`),
		[]got{{OnlyInA, map[string]any{}}, {InBoth, map[string]any{}}},
		nil)
}

func TestMetricDeltas(t *testing.T) {
	zero, nan := 0.0, (*float64)(nil)
	ms := metricDeltas(storageMetrics,
		map[string]any{"ops_per_s": 200.0, "error_rate": 0.0, "latency_p99_ms": nan, "mb_per_s": 10.0},
		map[string]any{"ops_per_s": 150.0, "error_rate": 0.01, "latency_p99_ms": &zero, "mb_per_s": int64(10)})
	by := map[string]Metric{}
	for _, m := range ms {
		by[m.Name] = m
	}
	if _, ok := by["recall_at_k"]; ok {
		t.Fatal("an optional metric neither run measured is listed")
	}
	if m := by["ops_per_s"]; *m.Delta != -50 || *m.Relative != -0.25 {
		t.Fatalf("ops_per_s %+v", m)
	}
	if m := by["error_rate"]; *m.Delta != 0.01 || m.Relative != nil {
		t.Fatalf("error_rate from 0: %+v (relative must be nil)", m)
	}
	if m := by["latency_p99_ms"]; m.A != nil || m.Delta != nil {
		t.Fatalf("NULL in A: %+v", m)
	}
	if m := by["mb_per_s"]; *m.Delta != 0 || *m.Relative != 0 {
		t.Fatalf("int and float: %+v", m)
	}
}

func TestFlattenSpec(t *testing.T) {
	got := flattenSpec(`{"driver":"fileio","repetitions":3,"workload":{"block_size":4096,"mode":["read","write"]},"x":{}}`)
	if len(got) != 5 || valueKey(got["workload.block_size"]) != valueKey(int64(4096)) || got["driver"] != "fileio" ||
		valueKey(got["workload.mode"]) != valueKey([]any{"read", "write"}) {
		t.Fatalf("flattenSpec = %v", got)
	}
	if got := flattenSpec("not json"); got["spec"] != "not json" {
		t.Fatalf("flattenSpec of text = %v", got)
	}
}

func TestValueKey(t *testing.T) {
	same := [][2]any{{int64(4096), 4096.0}, {"", ""}, {nil, (*float64)(nil)}}
	for _, p := range same {
		if valueKey(p[0]) != valueKey(p[1]) {
			t.Errorf("%#v and %#v differ", p[0], p[1])
		}
	}
	differ := [][2]any{{nil, ""}, {"1", int64(1)}, {int64(1), 1.5}}
	for _, p := range differ {
		if valueKey(p[0]) == valueKey(p[1]) {
			t.Errorf("%#v and %#v are equal", p[0], p[1])
		}
	}
}
