package drivers

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfwh/perfwh/internal/units"
)

// Type is the type of a driver parameter.
type Type string

// Parameter types. Sizes accept 4096, "4KiB", "1MiB", "2GB" and normalise to
// bytes; durations accept "500ms", "2s", "1m" and normalise to Go's duration
// string ("1m0s").
const (
	Int      Type = "int"
	Float    Type = "float"
	Bool     Type = "bool"
	String   Type = "string"
	Size     Type = "size"
	Duration Type = "duration"
)

// Param is one parameter in a driver's schema.
type Param struct {
	Name     string
	Type     Type
	Default  any      // nil: required
	Enum     []string // allowed values of a String parameter
	Min, Max *float64 // bounds of numeric parameters (sizes in bytes, durations in seconds)
	Doc      string
}

// Required reports whether the parameter has no default.
func (p Param) Required() bool { return p.Default == nil }

// Bound is a helper for Param.Min and Param.Max.
func Bound(v float64) *float64 { return &v }

// Coerce checks v (as decoded from YAML or JSON) against the parameter and
// returns its normalised value: int64, float64, bool, string, int64 bytes
// for sizes, a duration string for durations.
func (p Param) Coerce(v any) (any, error) {
	var out any
	var num float64
	switch p.Type {
	case Int:
		i, err := toInt(v)
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %s", describe(v))
		}
		out, num = i, float64(i)
	case Float:
		f, err := toFloat(v)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %s", describe(v))
		}
		out, num = f, f
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false, got %s", describe(v))
		}
		out = b
	case String:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string, got %s", describe(v))
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(p.Enum, ", "))
		}
		out = s
	case Size:
		var n int64
		var err error
		if s, ok := v.(string); ok {
			n, err = units.ParseBytes(s)
		} else {
			n, err = toInt(v)
		}
		if err != nil {
			return nil, fmt.Errorf("want a size such as 4096, 4KiB or 1MiB, got %s", describe(v))
		}
		out, num = n, float64(n)
	case Duration:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a duration such as 500ms or 2s, got %s", describe(v))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("want a duration such as 500ms or 2s, got %q", s)
		}
		out, num = d.String(), d.Seconds()
	default:
		return nil, fmt.Errorf("parameter %s has unknown type %q", p.Name, p.Type)
	}
	if p.Min != nil && num < *p.Min {
		return nil, fmt.Errorf("%v is below the minimum %v", v, *p.Min)
	}
	if p.Max != nil && num > *p.Max {
		return nil, fmt.Errorf("%v is above the maximum %v", v, *p.Max)
	}
	return out, nil
}

func describe(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case nil:
		return "nothing"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%v", v)
}

func toInt(v any) (int64, error) {
	switch t := v.(type) {
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case uint64:
		if t > math.MaxInt64 {
			return 0, fmt.Errorf("too large")
		}
		return int64(t), nil
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return 0, fmt.Errorf("not an integer")
		}
		return int64(t), nil
	}
	return 0, fmt.Errorf("not an integer")
}

func toFloat(v any) (float64, error) {
	switch t := v.(type) {
	case int, int64, uint64:
		i, err := toInt(t)
		return float64(i), err
	case float64:
		return t, nil
	}
	return 0, fmt.Errorf("not a number")
}

// Values holds resolved, normalised parameters (see Param.Coerce). The
// getters panic on a missing or mistyped name: validation happens before a
// driver sees Values, so that is a programming error.
type Values map[string]any

// Resolve checks raw against the schema, applies defaults and returns the
// normalised values. Errors name the parameter.
func Resolve(schema []Param, raw map[string]any) (Values, error) {
	out := Values{}
	for name, v := range raw {
		p, ok := Lookup(schema, name)
		if !ok {
			return nil, fmt.Errorf("unknown parameter %q", name)
		}
		c, err := p.Coerce(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		out[name] = c
	}
	for _, p := range schema {
		if _, ok := out[p.Name]; ok {
			continue
		}
		if p.Required() {
			return nil, fmt.Errorf("parameter %s is required", p.Name)
		}
		c, err := p.Coerce(p.Default)
		if err != nil {
			return nil, fmt.Errorf("default of %s: %w", p.Name, err)
		}
		out[p.Name] = c
	}
	return out, nil
}

// Int returns an Int or Size parameter.
func (v Values) Int(name string) int64 { return v[name].(int64) }

// Float returns a Float parameter.
func (v Values) Float(name string) float64 { return v[name].(float64) }

// Bool returns a Bool parameter.
func (v Values) Bool(name string) bool { return v[name].(bool) }

// String returns a String parameter.
func (v Values) String(name string) string { return v[name].(string) }

// Duration returns a Duration parameter.
func (v Values) Duration(name string) time.Duration {
	d, err := time.ParseDuration(v[name].(string))
	if err != nil {
		panic(err)
	}
	return d
}
