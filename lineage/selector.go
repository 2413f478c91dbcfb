package lineage

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Matcher is one label condition of a selector, as in PromQL: = and !=
// compare text, =~ and !~ match a regular expression against the whole
// value.
type Matcher struct {
	Label string `json:"label"`
	Op    string `json:"op"`
	Value string `json:"value"`
	re    *regexp.Regexp
}

// Matches reports whether a value's text satisfies m.
func (m Matcher) Matches(s string) bool {
	switch m.Op {
	case "=":
		return s == m.Value
	case "!=":
		return s != m.Value
	case "=~":
		return m.re.MatchString(s)
	}
	return !m.re.MatchString(s)
}

func (m Matcher) String() string { return m.Label + m.Op + strconv.Quote(m.Value) }

// Selector names cells of a warehouse table: table.column{label="value",...}.
// Labels are columns of the table or, for tables with a params column,
// keys of the workload point's parameters.
type Selector struct {
	Table    string    `json:"table"`
	Column   string    `json:"column"`
	Matchers []Matcher `json:"matchers"`
}

func (s *Selector) String() string {
	parts := make([]string, len(s.Matchers))
	for i, m := range s.Matchers {
		parts[i] = m.String()
	}
	return s.Table + "." + s.Column + "{" + strings.Join(parts, ",") + "}"
}

var selectorHead = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*`)

// ParseSelector parses `table.column{label="value", label!="v", label=~"re"}`;
// the braces may be left out. Values are double-quoted (Go escapes) or
// back-quoted.
func ParseSelector(s string) (*Selector, error) {
	m := selectorHead.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("selector %q: want table.column{label=\"value\",...}", s)
	}
	sel := &Selector{Table: m[1], Column: m[2]}
	rest := strings.TrimSpace(s[len(m[0]):])
	if rest == "" {
		return sel, nil
	}
	if !strings.HasPrefix(rest, "{") || !strings.HasSuffix(rest, "}") {
		return nil, fmt.Errorf("selector %q: labels go in braces after table.column", s)
	}
	rest = strings.TrimSpace(rest[1 : len(rest)-1])
	label := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*`)
	for rest != "" {
		lm := label.FindStringSubmatch(rest)
		if lm == nil {
			return nil, fmt.Errorf("selector %q: want label=\"value\" at %q", s, rest)
		}
		rest = rest[len(lm[0]):]
		lit, err := strconv.QuotedPrefix(rest)
		if err != nil || strings.HasPrefix(lit, "'") {
			return nil, fmt.Errorf("selector %q: the value of %s must be double-quoted", s, lm[1])
		}
		val, _ := strconv.Unquote(lit)
		mt := Matcher{Label: lm[1], Op: lm[2], Value: val}
		if mt.Op == "=~" || mt.Op == "!~" {
			if mt.re, err = regexp.Compile("^(?:" + val + ")$"); err != nil {
				return nil, fmt.Errorf("selector %q: %s: %w", s, lm[1], err)
			}
		}
		sel.Matchers = append(sel.Matchers, mt)
		rest = strings.TrimSpace(rest[len(lit):])
		if r, ok := strings.CutPrefix(rest, ","); ok {
			rest = strings.TrimSpace(r)
		} else if rest != "" {
			return nil, fmt.Errorf("selector %q: want ',' or '}' at %q", s, rest)
		}
	}
	return sel, nil
}

// PubRef names a publication, optionally one row (1-based) and one column
// of it: pub:ID[/ROW[/COLUMN]].
type PubRef struct {
	ID     string `json:"id"`
	Row    int    `json:"row,omitempty"`
	Column string `json:"column,omitempty"`
}

// ParsePubRef parses a "pub:" reference; ok is false when s is not one.
func ParsePubRef(s string) (ref PubRef, ok bool, err error) {
	rest, ok := strings.CutPrefix(s, "pub:")
	if !ok {
		return ref, false, nil
	}
	parts := strings.Split(rest, "/")
	if len(parts) > 3 || parts[0] == "" {
		return ref, true, fmt.Errorf("%q: want pub:ID, pub:ID/ROW or pub:ID/ROW/COLUMN", s)
	}
	ref.ID = parts[0]
	if len(parts) > 1 {
		if ref.Row, err = strconv.Atoi(parts[1]); err != nil || ref.Row < 1 {
			return ref, true, fmt.Errorf("%q: ROW is a row number from 1", s)
		}
	}
	if len(parts) > 2 {
		if ref.Column = parts[2]; ref.Column == "" {
			return ref, true, fmt.Errorf("%q: COLUMN is empty", s)
		}
	}
	return ref, true, nil
}
