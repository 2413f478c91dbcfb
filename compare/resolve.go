package compare

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/warehouse"
)

// RunRefError says a run reference cannot be compared: it is not a run id,
// names no run, is an ambiguous prefix, or names a run that is not
// ingested. It is bad input, not a failure of perfwh.
type RunRefError struct {
	Ref string
	Msg string
}

func (e *RunRefError) Error() string { return e.Msg }

// Resolve returns the full id of the ingested run that ref names: a run id
// or a unique prefix of one, looked up in the warehouse's ingest ledger.
// When the warehouse does not have it, repo (optional) tells a run that
// is in the store but not ingested from one that does not exist. Every
// "cannot compare this run" answer is a *RunRefError.
func Resolve(ctx context.Context, w warehouse.Warehouse, repo *evidence.Repository, ref string) (string, error) {
	if evidence.ValidRunID(ref) != nil {
		return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("%q is not a run id", ref)}
	}
	ledger, err := w.Ledger(ctx)
	if err != nil {
		if st, serr := w.Status(ctx); serr == nil && st.SchemaVersion == 0 {
			return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("run %s is not ingested: the warehouse holds no runs yet; run `perfwh ingest` first", ref)}
		}
		return "", fmt.Errorf("read ingest ledger: %w", err)
	}
	var matches []string
	if _, ok := ledger[ref]; ok {
		matches = []string{ref}
	} else {
		for id := range ledger {
			if strings.HasPrefix(id, ref) {
				matches = append(matches, id)
			}
		}
	}
	sort.Strings(matches)
	switch {
	case len(matches) > 1:
		return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("run id prefix %q is ambiguous: %s", ref, strings.Join(matches, ", "))}
	case len(matches) == 1:
		e := ledger[matches[0]]
		if e.Status != warehouse.Ingested {
			return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("run %s was %s by ingest (%s); fix its evidence and run `perfwh ingest --retry-quarantined`",
				e.RunID, e.Status, e.Reason)}
		}
		return e.RunID, nil
	}
	if repo == nil {
		return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("no run %q in the warehouse; if it is in the store, run `perfwh ingest` first", ref)}
	}
	runs, err := repo.ListRuns(ctx, nil)
	if err != nil {
		return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("no run %q in the warehouse (the store could not be listed: %v); if it is in the store, run `perfwh ingest` first", ref, err)}
	}
	for _, r := range runs {
		if strings.HasPrefix(r.RunID, ref) {
			return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("run %s is in the store but not ingested into the warehouse; run `perfwh ingest` first", r.RunID)}
		}
	}
	return "", &RunRefError{Ref: ref, Msg: fmt.Sprintf("no run %q in the store (%s) or the warehouse", ref, repo.Backend().URI("runs/"))}
}
