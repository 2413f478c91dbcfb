package drivers

import (
	"strings"
	"testing"
)

func TestCoerce(t *testing.T) {
	f := func(p Param, in, want any, errPart string) {
		t.Helper()
		got, err := p.Coerce(in)
		if errPart != "" {
			if err == nil || !strings.Contains(err.Error(), errPart) {
				t.Fatalf("Coerce(%v) error %v; want one containing %q", in, err, errPart)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("Coerce(%v) = %v (%T), %v; want %v", in, got, got, err, want)
		}
	}
	i := Param{Name: "threads", Type: Int, Min: Bound(1), Max: Bound(8)}
	f(i, 4, int64(4), "")
	f(i, 4.0, int64(4), "")
	f(i, 4.5, nil, "want an integer")
	f(i, "4", nil, "want an integer")
	f(i, 0, nil, "below the minimum 1")
	f(i, 9, nil, "above the maximum 8")
	s := Param{Name: "block", Type: Size}
	f(s, "4KiB", int64(4096), "")
	f(s, 512, int64(512), "")
	f(s, "big", nil, "want a size")
	d := Param{Name: "think", Type: Duration}
	f(d, "1500ms", "1.5s", "")
	f(d, 3, nil, "want a duration")
	e := Param{Name: "mode", Type: String, Enum: []string{"read", "write"}}
	f(e, "read", "read", "")
	f(e, "fly", nil, `"fly" is not one of read, write`)
	f(Param{Name: "sync", Type: Bool}, true, true, "")
	f(Param{Name: "sync", Type: Bool}, "yes", nil, "want true or false")
	f(Param{Name: "r", Type: Float}, 1, 1.0, "")
}

func TestResolve(t *testing.T) {
	schema := []Param{{Name: "a", Type: Int, Default: 1}, {Name: "b", Type: String}}
	v, err := Resolve(schema, map[string]any{"b": "x"})
	if err != nil || v.Int("a") != 1 || v.String("b") != "x" {
		t.Fatalf("Resolve = %v, %v", v, err)
	}
	if _, err := Resolve(schema, map[string]any{}); err == nil || !strings.Contains(err.Error(), "b is required") {
		t.Fatalf("missing required: %v", err)
	}
	if _, err := Resolve(schema, map[string]any{"b": "x", "c": 1}); err == nil || !strings.Contains(err.Error(), `unknown parameter "c"`) {
		t.Fatalf("unknown: %v", err)
	}
}
