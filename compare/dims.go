package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/perfwh/perfwh/internal/canonjson"
	"github.com/perfwh/perfwh/warehouse"
)

// runColumns are the benchmark_run_fact columns shown in the run section:
// what was run, by which driver and perfwh, and how it was derived. The
// identity of the run (id, times, manifest) is in RunInfo instead.
var runColumns = []string{
	"benchmark_name", "benchmark_version", "benchmark_case_id", "driver", "driver_version",
	"status", "trials_total", "trials_ok", "trials_failed", "mode",
	"producer_version", "producer_revision", "ingest_version",
}

// dimensions lists both runs' dimensions side by side, section by section.
func dimensions(a, b *runData) []Dimension {
	var out []Dimension
	add := func(section, name string, va, vb any) {
		out = append(out, Dimension{Section: section, Name: name, A: va, B: vb, Differs: valueKey(va) != valueKey(vb)})
	}
	for _, c := range runColumns {
		add("run", c, a.fact[c], b.fact[c])
	}
	for _, s := range []struct{ section, table string }{
		{"software", "software_version_dim"}, {"hardware", "hardware_topology_dim"}, {"cluster", "cluster_region_dim"},
	} {
		t, _ := warehouse.Lookup(s.table)
		for _, c := range t.ColumnNames() {
			add(s.section, c, a.dims[s.table][c], b.dims[s.table][c])
		}
	}
	add("cluster", "node_name", a.fact["node_name"], b.fact["node_name"])

	wa, wb := a.dims["workload_dim"], b.dims["workload_dim"]
	add("workload", "workload_spec_digest", a.fact["workload_spec_digest"], b.fact["workload_spec_digest"])
	add("workload", "axes", wa["axes"], wb["axes"])
	sa, sb := flattenSpec(str(wa["spec_json"])), flattenSpec(str(wb["spec_json"]))
	for _, k := range unionKeys(sa, sb) {
		add("workload", k, sa[k], sb[k])
	}
	ma, mb := map[string]any{}, map[string]any{}
	for k, v := range a.metadata {
		ma[k] = v
	}
	for k, v := range b.metadata {
		mb[k] = v
	}
	for _, k := range unionKeys(ma, mb) {
		add("metadata", k, ma[k], mb[k])
	}
	return out
}

// flattenSpec turns the canonical workload spec into one entry per leaf,
// named by its dotted path (workload.block_size); lists stay whole (a list
// is a sweep). A spec that is not a JSON object is one entry, "spec".
func flattenSpec(doc string) map[string]any {
	out := map[string]any{}
	if doc == "" {
		return out
	}
	v, err := decodeJSON(doc)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		out["spec"] = doc
		return out
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", m)
	return out
}

// decodeJSON decodes a document keeping numbers exact (json.Number).
func decodeJSON(doc string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func unionKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// valueKey renders a value for equality: equal values, equal keys; a
// missing value (nil) differs from every present one, the empty string
// included.
func valueKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x00nil"
	case string:
		return "s" + x
	case int64:
		return "n" + strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return "n" + strconv.FormatInt(int64(x), 10)
		}
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	case *float64:
		if x == nil {
			return "\x00nil"
		}
		return valueKey(*x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return valueKey(n)
		}
		if f, err := x.Float64(); err == nil {
			return valueKey(f)
		}
		return "n" + x.String()
	case time.Time:
		return "t" + x.UTC().Format(time.RFC3339Nano)
	}
	return "j" + canonical(v)
}

// canonical is v's canonical JSON (or its Go rendering if it has none).
func canonical(v any) string {
	b, err := canonjson.Marshal(v)
	if err != nil {
		return "?" + str(v)
	}
	return string(b)
}
