package spec

import (
	"fmt"
	"sort"

	"github.com/perfwh/perfwh/drivers"
)

// Point is one workload point: a combination of parameter values.
type Point struct {
	Index  int            // 1-based
	Params drivers.Values // every parameter, one value each
}

// Trial is one point × one repetition, in execution order.
type Trial struct {
	ID         string // "t0001"
	Point      int    // Point.Index
	Repetition int    // 1-based
	Params     drivers.Values
	Seed       int64
}

// Plan is the expanded case.
type Plan struct {
	Case   *Case
	Axes   []string
	Points []Point
	Trials []Trial
}

// MaxTrials bounds a plan, so a typo in a sweep cannot schedule a month of
// work.
const MaxTrials = 100000

// Plan expands the sweep axes (their cartesian product, axes in name order,
// the last varying fastest) and repetitions. Repetitions are the outer loop
// — every point runs once before any runs twice — so slow drift of the
// machine spreads across points instead of biasing one.
func (c *Case) Plan() (*Plan, error) {
	names := make([]string, 0, len(c.Workload))
	for k := range c.Workload {
		names = append(names, k)
	}
	sort.Strings(names)
	combos := []drivers.Values{{}}
	for _, name := range names {
		var next []drivers.Values
		for _, base := range combos {
			for _, v := range c.Workload[name] {
				p := drivers.Values{}
				for k, x := range base {
					p[k] = x
				}
				p[name] = v
				next = append(next, p)
			}
		}
		combos = next
		if len(combos)*c.Repetitions > MaxTrials {
			return nil, fmt.Errorf("%s: sweep expands to more than %d trials", c.Source, MaxTrials)
		}
	}
	pl := &Plan{Case: c, Axes: c.Axes()}
	for i, p := range combos {
		pl.Points = append(pl.Points, Point{Index: i + 1, Params: p})
	}
	for rep := 1; rep <= c.Repetitions; rep++ {
		for _, pt := range pl.Points {
			pl.Trials = append(pl.Trials, Trial{
				ID:         fmt.Sprintf("t%04d", len(pl.Trials)+1),
				Point:      pt.Index,
				Repetition: rep,
				Params:     pt.Params,
				Seed:       trialSeed(c.Seed, pt.Index, rep),
			})
		}
	}
	return pl, nil
}
