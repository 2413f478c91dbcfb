package spec

import (
	"fmt"
	"strings"
)

// FieldError is one problem in a case file, located by file, line, column
// and the dotted path of the field ("workload.threads[1]").
type FieldError struct {
	File   string `json:"file"`   // file name, or "--set key=value" for an override
	Line   int    `json:"line"`   // 1-based; 0 when unknown
	Column int    `json:"column"` //
	Field  string `json:"field"`  // dotted path
	Msg    string `json:"message"`
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one case file. Validation reports them
// all at once rather than stopping at the first.
type Errors []*FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	if len(es) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(es), strings.Join(lines, "\n  "))
}
