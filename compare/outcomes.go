package compare

import (
	"sort"
)

// metricSpec is an outcome column compared between runs; an optional one
// is reported only where either run measured it.
type metricSpec struct {
	name     string
	optional bool
}

var storageMetrics = []metricSpec{
	{name: "ops_per_s"}, {name: "mb_per_s"}, {name: "latency_p50_ms"}, {name: "latency_p99_ms"},
	{name: "latency_p999_ms"}, {name: "error_rate"},
	{name: "recall_at_k", optional: true}, {name: "ingest_rows_per_s", optional: true},
}

var servingMetrics = []metricSpec{
	{name: "achieved_rate"}, {name: "output_tokens_per_s"}, {name: "goodput_rate", optional: true},
	{name: "ttft_p50_ms"}, {name: "ttft_p99_ms"}, {name: "itl_p50_ms"}, {name: "itl_p99_ms"},
	{name: "e2e_p50_ms"}, {name: "e2e_p99_ms"}, {name: "error_rate"}, {name: "timeout_rate"},
}

// absent stands for a parameter a point does not have.
const absent = "\x00absent"

// matchOutcomes pairs the points of two runs (of one outcome table) by
// their parameters and operation, and computes each metric's change.
//
// Points are matched by canonical parameter JSON, never by index. A
// parameter that is constant within each run but has different values in
// the two (block_size 4096 in every point of A, 65536 in every point of B)
// is a run-wide change: it is returned, and left out of the match, so the
// points that differ only by it are compared. Removing a parameter that is
// constant within a run keeps that run's points distinct.
func matchOutcomes(kind string, a, b []pointRow, metrics []metricSpec) ([]Outcome, []ParamChange) {
	pa, pb := parseParams(a), parseParams(b)
	var wide []ParamChange
	drop := map[string]bool{}
	axes := map[string]bool{}
	if pa != nil && pb != nil && len(a) > 0 && len(b) > 0 {
		keys := paramKeys(pa, pb)
		ca, cb := constants(pa, keys), constants(pb, keys)
		for _, k := range keys {
			va, okA := ca[k]
			vb, okB := cb[k]
			switch {
			case !okA || !okB:
				axes[k] = true
			case valueKey(va) != valueKey(vb):
				drop[k] = true
				wide = append(wide, ParamChange{Param: k, A: present(va), B: present(vb)})
			}
		}
	}
	key := func(p map[string]any, r pointRow) string {
		if p == nil {
			return r.params + "\x00" + r.op
		}
		kept := map[string]any{}
		for k, v := range p {
			if !drop[k] {
				kept[k] = v
			}
		}
		return canonical(kept) + "\x00" + r.op
	}
	byKey := map[string][]int{}
	for i, r := range b {
		k := key(at(pb, i), r)
		byKey[k] = append(byKey[k], i)
	}
	used := make([]bool, len(b))
	var out []Outcome
	for i, r := range a {
		oc := Outcome{Kind: kind, Op: r.op, In: OnlyInA, Axes: axisValues(at(pa, i), axes)}
		oc.setA(r, at(pa, i))
		k := key(at(pa, i), r)
		if js := byKey[k]; len(js) > 0 {
			j := js[0]
			byKey[k] = js[1:]
			used[j] = true
			oc.In = InBoth
			oc.setB(b[j], at(pb, j))
		}
		oc.Metrics = metricDeltas(metrics, oc.valsA, oc.valsB)
		out = append(out, oc)
	}
	for j, r := range b {
		if used[j] {
			continue
		}
		oc := Outcome{Kind: kind, Op: r.op, In: OnlyInB, Axes: axisValues(at(pb, j), axes)}
		oc.setB(r, at(pb, j))
		oc.Metrics = metricDeltas(metrics, oc.valsA, oc.valsB)
		out = append(out, oc)
	}
	return out, wide
}

func (o *Outcome) setA(r pointRow, p map[string]any) {
	o.PointA, o.rawA, o.ParamsA, o.RepetitionsA = &r.point, r.params, paramsValue(r, p), repetitions(r)
	o.valsA = r.vals
}

func (o *Outcome) setB(r pointRow, p map[string]any) {
	o.PointB, o.rawB, o.ParamsB, o.RepetitionsB = &r.point, r.params, paramsValue(r, p), repetitions(r)
	o.valsB = r.vals
}

func paramsValue(r pointRow, p map[string]any) any {
	if p != nil {
		return p
	}
	return r.params
}

func repetitions(r pointRow) *int64 {
	if v, ok := r.vals["repetitions"].(int64); ok {
		return &v
	}
	return nil
}

// metricDeltas compares the metrics of a point; va or vb is nil for a
// point found in one run only.
func metricDeltas(metrics []metricSpec, va, vb map[string]any) []Metric {
	out := []Metric{}
	for _, m := range metrics {
		x, y := num(va[m.name]), num(vb[m.name])
		if m.optional && x == nil && y == nil {
			continue
		}
		d := Metric{Name: m.name, A: x, B: y}
		if x != nil && y != nil {
			d.Delta = ptr(*y - *x)
			if *x != 0 {
				d.Relative = ptr((*y - *x) / *x)
			}
		}
		out = append(out, d)
	}
	return out
}

// parseParams decodes every row's parameters; nil when any is not a JSON
// object (then points match by the exact stored string).
func parseParams(rows []pointRow) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		v, err := decodeJSON(r.params)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil
		}
		out[i] = m
	}
	return out
}

func at(ps []map[string]any, i int) map[string]any {
	if ps == nil {
		return nil
	}
	return ps[i]
}

func paramKeys(a, b []map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, ps := range [][]map[string]any{a, b} {
		for _, p := range ps {
			for k := range p {
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// constants returns the keys whose value is the same in every point, with
// that value (absent when no point has the key).
func constants(ps []map[string]any, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		var first any = absent
		same := true
		for i, p := range ps {
			v, ok := p[k]
			if !ok {
				v = absent
			}
			if i == 0 {
				first = v
			} else if valueKey(v) != valueKey(first) {
				same = false
				break
			}
		}
		if same {
			out[k] = first
		}
	}
	return out
}

func present(v any) any {
	if s, ok := v.(string); ok && s == absent {
		return nil
	}
	return v
}

func axisValues(p map[string]any, axes map[string]bool) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		if axes[k] {
			out[k] = v
		}
	}
	return out
}

// mergeChanges joins the run-wide changes found in each outcome table.
func mergeChanges(lists ...[]ParamChange) []ParamChange {
	out := []ParamChange{}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, c := range l {
			if !seen[c.Param] {
				seen[c.Param] = true
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Param < out[j].Param })
	return out
}
