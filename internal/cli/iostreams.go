package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"
)

// IOStreams are the command's standard streams. Progress bars appear only
// when stderr is a terminal; data goes to Out, everything else to ErrOut.
type IOStreams struct {
	In          io.Reader
	Out         io.Writer
	ErrOut      io.Writer
	StderrIsTTY bool
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StderrIsTTY: term.IsTerminal(int(os.Stderr.Fd()))}
}

// Output formats.
const (
	OutputTable = "table"
	OutputJSON  = "json"
	OutputCSV   = "csv" // perfwh sql only
)

// writeJSON writes exactly one JSON document to w.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table writes aligned columns.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(headers) > 0 {
		t.row(toAny(headers)...)
	}
	return t
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (t *table) row(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = strings.ReplaceAll(fmt.Sprint(c), "\t", " ")
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }
