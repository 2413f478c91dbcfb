package spec

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perfwh/perfwh/collectors"
	"github.com/perfwh/perfwh/drivers"
	"github.com/perfwh/perfwh/internal/units"
)

// decoder walks the YAML node tree of a case, collecting every problem
// with its position.
type decoder struct {
	file string
	over map[*yaml.Node]string // nodes that came from --set, and the override text
	errs Errors
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	e := &FieldError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if o, ok := d.over[n]; ok {
		e.File = "--set " + o
	} else if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping calls fn for each key of a mapping node, rejecting duplicates. A
// null node is an empty mapping.
func (d *decoder) mapping(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	if n == nil || n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain strings")
			continue
		}
		if seen[k.Value] {
			d.errorf(k, join(path, k.Value), "given twice")
			continue
		}
		seen[k.Value] = true
		fn(k.Value, k, v)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing"
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return n.Value
}

func (d *decoder) scalar(n *yaml.Node, path string) bool {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "want a value, got %s", kindName(n))
		return false
	}
	return true
}

func (d *decoder) str(n *yaml.Node, path string) string {
	if !d.scalar(n, path) {
		return ""
	}
	if n.Tag != "!!str" {
		d.errorf(n, path, "want a string, got %s (quote it)", n.Value)
		return ""
	}
	return n.Value
}

func (d *decoder) boolean(n *yaml.Node, path string) bool {
	if !d.scalar(n, path) {
		return false
	}
	if n.Tag != "!!bool" {
		d.errorf(n, path, "want true or false, got %s", kindName(n))
		return false
	}
	return n.Value == "true"
}

func (d *decoder) integer(n *yaml.Node, path string, minimum int64) int64 {
	if !d.scalar(n, path) {
		return 0
	}
	var v int64
	if n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, path, "want an integer, got %s", kindName(n))
		return 0
	}
	if v < minimum {
		d.errorf(n, path, "must be at least %d, got %d", minimum, v)
		return 0
	}
	return v
}

func (d *decoder) number(n *yaml.Node, path string) float64 {
	if !d.scalar(n, path) {
		return 0
	}
	var v float64
	if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(n, path, "want a number, got %s", kindName(n))
		return 0
	}
	if v < 0 {
		d.errorf(n, path, "must not be negative, got %v", v)
		return 0
	}
	return v
}

func (d *decoder) duration(n *yaml.Node, path string) time.Duration {
	if !d.scalar(n, path) {
		return 0
	}
	if n.Tag == "!!int" && n.Value == "0" {
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if n.Tag != "!!str" || err != nil {
		d.errorf(n, path, "want a duration such as 500ms, 30s or 5m, got %s", kindName(n))
		return 0
	}
	if v < 0 {
		d.errorf(n, path, "must not be negative, got %s", n.Value)
		return 0
	}
	return v
}

func (d *decoder) size(n *yaml.Node, path string) int64 {
	if !d.scalar(n, path) {
		return 0
	}
	v, err := units.ParseBytes(n.Value)
	if err != nil {
		d.errorf(n, path, "want a size such as 512MiB or 2GiB, got %s", kindName(n))
		return 0
	}
	return v
}

// value decodes a scalar, list or mapping into plain Go values.
func (d *decoder) value(n *yaml.Node, path string) (any, bool) {
	var v any
	if err := n.Decode(&v); err != nil {
		d.errorf(n, path, "%v", err)
		return nil, false
	}
	return v, true
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`)

// decodeCase decodes and validates the document root into a Case.
func (d *decoder) decodeCase(root *yaml.Node) *Case {
	c := &Case{Repetitions: DefaultRepetitions, Seed: DefaultSeed}
	var driverNode, workloadNode, targetNode *yaml.Node
	var limitGiven bool
	seenRequired := map[string]bool{}
	d.mapping(root, "", func(key string, k, v *yaml.Node) {
		seenRequired[key] = true
		switch key {
		case "name":
			c.Name = d.str(v, key)
			if c.Name != "" && !namePattern.MatchString(c.Name) {
				d.errorf(v, key, "%q: use lowercase letters, digits, '.', '_' and '-' (at most 128)", c.Name)
			}
		case "version":
			if d.scalar(v, key) {
				c.Version = v.Value
			}
		case "description":
			c.Description = d.str(v, key)
		case "owner":
			c.Owner = d.str(v, key)
		case "deprecated":
			c.Deprecated = d.boolean(v, key)
		case "driver":
			driverNode = v
		case "target":
			targetNode = v
		case "workload":
			workloadNode = v
		case "repetitions":
			c.Repetitions = int(d.integer(v, key, 1))
		case "warmup":
			c.Warmup = d.duration(v, key)
		case "warmup_operations":
			c.WarmupOperations = d.integer(v, key, 0)
		case "duration":
			c.Duration = d.duration(v, key)
		case "operations":
			c.Operations = d.integer(v, key, 0)
		case "seed":
			c.Seed = d.integer(v, key, math.MinInt64)
		case "collectors":
			c.Collectors = d.collectors(v, key)
		case "resources":
			limitGiven = d.resources(v, key, &c.Resources)
		case "metadata":
			c.Metadata = map[string]string{}
			d.mapping(v, key, func(mk string, _, mv *yaml.Node) {
				if d.scalar(mv, join(key, mk)) {
					c.Metadata[mk] = mv.Value
				}
			})
		default:
			d.errorf(k, key, "unknown field (known: %s)", strings.Join(topLevelFields, ", "))
		}
	})
	for _, req := range []string{"name", "driver"} {
		if !seenRequired[req] {
			d.errorf(root, req, "required field missing")
		}
	}
	if c.Version == "" {
		c.Version = "1"
	}
	if c.Duration == 0 && c.Operations == 0 && seenRequired["driver"] {
		d.errorf(root, "duration", "give a duration or an operation count per trial (duration: 10s or operations: 1000)")
	}
	if driverNode != nil {
		name := d.str(driverNode, "driver")
		if name != "" {
			drv, ok := drivers.Get(name)
			if !ok {
				d.errorf(driverNode, "driver", "unknown driver %q (available: %s)", name, strings.Join(drivers.Names(), ", "))
			} else {
				c.Driver = drv
				info := drv.Info()
				c.Target = d.target(targetNode, info.Target)
				c.Workload = d.workload(workloadNode, info.Params)
			}
		}
	}
	if !limitGiven {
		c.Resources.TimeLimit = c.defaultTimeLimit()
	}
	return c
}

var topLevelFields = []string{"name", "version", "description", "owner", "deprecated", "driver", "target",
	"workload", "repetitions", "warmup", "warmup_operations", "duration", "operations", "seed",
	"collectors", "resources", "metadata"}

func (d *decoder) resources(n *yaml.Node, path string, r *Resources) (limitGiven bool) {
	d.mapping(n, path, func(key string, k, v *yaml.Node) {
		p := join(path, key)
		switch key {
		case "cpus":
			r.CPUs = d.number(v, p)
		case "memory":
			r.Memory = d.size(v, p)
		case "gpus":
			r.GPUs = int(d.integer(v, p, 0))
		case "time_limit":
			r.TimeLimit = d.duration(v, p)
			if r.TimeLimit == 0 {
				d.errorf(v, p, "must be positive (every trial has a time limit)")
			}
			limitGiven = true
		default:
			d.errorf(k, p, "unknown field (known: cpus, memory, gpus, time_limit)")
		}
	})
	return limitGiven
}

func (d *decoder) collectors(n *yaml.Node, path string) map[string]map[string]any {
	out := map[string]map[string]any{}
	d.mapping(n, path, func(name string, k, v *yaml.Node) {
		p := join(path, name)
		f, ok := collectors.Get(name)
		if !ok {
			d.errorf(k, p, "unknown collector %q (available: %s)", name, strings.Join(collectors.Names(), ", "))
			return
		}
		opts := map[string]any{}
		d.mapping(v, p, func(ok string, _, ov *yaml.Node) {
			op := join(p, ok)
			if ok == "interval" {
				iv := d.duration(ov, op)
				if iv > 0 && iv < 10*time.Millisecond {
					d.errorf(ov, op, "must be at least 10ms")
				}
				if iv > 0 {
					opts[ok] = iv.String()
				}
				return
			}
			if val, good := d.value(ov, op); good {
				opts[ok] = val
			}
		})
		check := map[string]any{}
		for k, v := range opts {
			if k != "interval" {
				check[k] = v
			}
		}
		if _, err := f(check); err != nil {
			d.errorf(k, p, "%v", err)
		}
		out[name] = opts
	})
	return out
}

// target decodes target parameters (no sweeps) against the driver schema.
func (d *decoder) target(n *yaml.Node, schema []drivers.Param) drivers.Values {
	raw := map[string]any{}
	d.mapping(n, "target", func(key string, k, v *yaml.Node) {
		p := join("target", key)
		ps, ok := drivers.Lookup(schema, key)
		if !ok {
			d.errorf(k, p, "unknown target parameter (known: %s)", paramNames(schema))
			return
		}
		if val, good := d.value(v, p); good {
			c, err := ps.Coerce(val)
			if err != nil {
				d.errorf(v, p, "%v", err)
				return
			}
			raw[key] = c
		}
	})
	vals, err := drivers.Resolve(schema, raw)
	if err != nil {
		d.errorf(n, "target", "%v", err)
	}
	return vals
}

// workload decodes workload parameters; a list is a sweep axis.
func (d *decoder) workload(n *yaml.Node, schema []drivers.Param) map[string][]any {
	out := map[string][]any{}
	d.mapping(n, "workload", func(key string, k, v *yaml.Node) {
		p := join("workload", key)
		ps, ok := drivers.Lookup(schema, key)
		if !ok {
			d.errorf(k, p, "unknown parameter for driver (known: %s)", paramNames(schema))
			return
		}
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			if len(v.Content) == 0 {
				d.errorf(v, p, "empty sweep: a list needs at least one value")
				return
			}
			items = v.Content
		}
		var vals []any
		for i, item := range items {
			ip := p
			if v.Kind == yaml.SequenceNode {
				ip = fmt.Sprintf("%s[%d]", p, i)
			}
			raw, good := d.value(item, ip)
			if !good {
				continue
			}
			c, err := ps.Coerce(raw)
			if err != nil {
				d.errorf(item, ip, "%v", err)
				continue
			}
			if slices.ContainsFunc(vals, func(x any) bool { return x == c }) {
				d.errorf(item, ip, "sweep value %v given twice", c)
				continue
			}
			vals = append(vals, c)
		}
		if len(vals) > 0 {
			out[key] = vals
		}
	})
	for _, ps := range schema {
		if _, ok := out[ps.Name]; ok {
			continue
		}
		if ps.Required() {
			d.errorf(n, join("workload", ps.Name), "required parameter missing")
			continue
		}
		c, err := ps.Coerce(ps.Default)
		if err != nil {
			d.errorf(n, join("workload", ps.Name), "driver default: %v", err)
			continue
		}
		out[ps.Name] = []any{c}
	}
	return out
}

func paramNames(schema []drivers.Param) string {
	names := make([]string, len(schema))
	for i, p := range schema {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
