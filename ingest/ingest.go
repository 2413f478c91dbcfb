package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/warehouse"
)

// Options configure an ingest pass.
type Options struct {
	Repo      *evidence.Repository
	Warehouse warehouse.Warehouse
	Log       *slog.Logger // progress and warnings (stderr)
	Window    time.Duration
	// Retry re-ingests quarantined runs instead of skipping them.
	Retry bool
	// Progress, when set, is called after each run.
	Progress func(done, total int, o RunOutcome)
	Now      func() time.Time
}

// Outcomes of one run.
const (
	OutcomeIngested    = "ingested"
	OutcomePresent     = "already_present"
	OutcomeQuarantined = "quarantined"
	OutcomeSkipped     = "skipped_quarantined"
)

// RunOutcome is what happened to one run.
type RunOutcome struct {
	RunID   string         `json:"run_id"`
	Outcome string         `json:"outcome"`
	Reason  string         `json:"reason,omitempty"`
	Rows    map[string]int `json:"rows,omitempty"`
}

// Summary is an ingest pass's result.
type Summary struct {
	Ingested       int            `json:"ingested"`
	AlreadyPresent int            `json:"already_present"`
	Quarantined    int            `json:"quarantined"`
	Skipped        int            `json:"skipped_quarantined"`
	Rows           map[string]int `json:"rows"`
	Runs           []RunOutcome   `json:"runs"`
	Duration       time.Duration  `json:"-"`
}

// Run ingests every committed run not yet in the ledger. It is safe to
// repeat: runs already ingested are counted as present; runs whose evidence
// fails verification or decoding are quarantined (a ledger row with the
// reason) and the pass goes on. The error is non-nil only when the store
// or the warehouse fails, which stops the pass.
func Run(ctx context.Context, o Options) (*Summary, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	sum := &Summary{Rows: map[string]int{}, Runs: []RunOutcome{}}
	ledger, err := o.Warehouse.Ledger(ctx)
	if err != nil {
		return nil, fmt.Errorf("read ingest ledger: %w", err)
	}
	var unreadable []RunOutcome
	runs, err := o.Repo.ListRuns(ctx, func(name string, err error) {
		unreadable = append(unreadable, RunOutcome{RunID: strings.TrimPrefix(name, "runs/"), Reason: err.Error()})
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	total := len(runs) + len(unreadable)
	done := 0
	report := func(ro RunOutcome) {
		done++
		sum.Runs = append(sum.Runs, ro)
		switch ro.Outcome {
		case OutcomeIngested:
			sum.Ingested++
			for t, n := range ro.Rows {
				sum.Rows[t] += n
			}
		case OutcomePresent:
			sum.AlreadyPresent++
		case OutcomeQuarantined:
			sum.Quarantined++
			o.Log.Warn("run quarantined", "run_id", ro.RunID, "reason", ro.Reason)
		case OutcomeSkipped:
			sum.Skipped++
		}
		if o.Progress != nil {
			o.Progress(done, total, ro)
		}
	}
	for _, u := range unreadable {
		if e, ok := ledger[u.RunID]; ok && e.Status == warehouse.Quarantined && !o.Retry {
			report(RunOutcome{RunID: u.RunID, Outcome: OutcomeSkipped, Reason: e.Reason})
			continue
		}
		ro, err := quarantine(ctx, o, u.RunID, "", "run pointer: "+u.Reason)
		if err != nil {
			return sum, err
		}
		report(ro)
	}
	for _, p := range runs {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if e, ok := ledger[p.RunID]; ok {
			switch {
			case e.Status == warehouse.Ingested && e.ManifestDigest == p.ManifestDigest.String() && e.IngestVersion >= Version:
				report(RunOutcome{RunID: p.RunID, Outcome: OutcomePresent})
				continue
			case e.Status == warehouse.Quarantined && !o.Retry:
				report(RunOutcome{RunID: p.RunID, Outcome: OutcomeSkipped, Reason: e.Reason})
				continue
			}
		}
		ro, err := ingestRun(ctx, o, p)
		if err != nil {
			return sum, err
		}
		report(ro)
	}
	sort.Slice(sum.Runs, func(i, j int) bool { return sum.Runs[i].RunID < sum.Runs[j].RunID })
	sum.Duration = time.Since(start)
	return sum, nil
}

// badEvidence marks failures that quarantine a run rather than stop ingest.
type badEvidence struct{ err error }

func (b badEvidence) Error() string { return b.err.Error() }
func (b badEvidence) Unwrap() error { return b.err }

func ingestRun(ctx context.Context, o Options, p evidence.RunPointer) (RunOutcome, error) {
	b, err := readBundle(ctx, o.Repo, p)
	var bad badEvidence
	if errors.As(err, &bad) {
		return quarantine(ctx, o, p.RunID, p.ManifestDigest.String(), bad.Error())
	}
	if err != nil {
		return RunOutcome{}, err
	}
	batch, err := Deriver{Window: o.Window, Now: o.Now()}.Derive(b)
	if err != nil {
		return quarantine(ctx, o, p.RunID, p.ManifestDigest.String(), "derive: "+err.Error())
	}
	rows := map[string]int{}
	for t, rs := range batch.Rows {
		rows[t] = len(rs)
	}
	batch.Ledger = &warehouse.LedgerEntry{RunID: p.RunID, ManifestDigest: p.ManifestDigest.String(), Status: warehouse.Ingested,
		IngestVersion: Version, IngestedAt: o.Now().UTC(), Rows: int64(batch.Count())}
	// A write that has started is finished even if the pass is being
	// cancelled: the warehouse would roll it back or collapse it anyway,
	// but finishing it is cheaper than redoing it.
	if err := o.Warehouse.WriteRun(context.WithoutCancel(ctx), batch); err != nil {
		return RunOutcome{}, err
	}
	o.Log.Debug("run ingested", "run_id", p.RunID, "rows", batch.Count())
	return RunOutcome{RunID: p.RunID, Outcome: OutcomeIngested, Rows: rows}, nil
}

func quarantine(ctx context.Context, o Options, runID, manifest, reason string) (RunOutcome, error) {
	e := &warehouse.LedgerEntry{RunID: runID, ManifestDigest: manifest, Status: warehouse.Quarantined,
		Reason: reason, IngestVersion: Version, IngestedAt: o.Now().UTC()}
	if err := o.Warehouse.WriteRun(context.WithoutCancel(ctx), &warehouse.Batch{RunID: runID, Ledger: e}); err != nil {
		return RunOutcome{}, fmt.Errorf("quarantine run %s: %w", runID, err)
	}
	return RunOutcome{RunID: runID, Outcome: OutcomeQuarantined, Reason: reason}, nil
}

// readBundle reads the manifest and every blob of a run once, verifying
// each digest and size; it keeps the files derivation needs.
func readBundle(ctx context.Context, repo *evidence.Repository, p evidence.RunPointer) (*Bundle, error) {
	m, err := repo.ReadManifest(ctx, p.ManifestDigest)
	if err != nil {
		return nil, classify(fmt.Errorf("manifest %s: %w", repo.ManifestURI(p.ManifestDigest), err))
	}
	if m.RunID != p.RunID {
		return nil, badEvidence{fmt.Errorf("manifest %s is for run %s, not %s", p.ManifestDigest, m.RunID, p.RunID)}
	}
	b := &Bundle{Pointer: p, Manifest: m, Files: map[string][]byte{},
		StoreURI: repo.Backend().URI(""), ManURI: repo.ManifestURI(p.ManifestDigest)}
	var problems []string
	for _, f := range m.Files {
		data, err := repo.ReadBlob(ctx, f.Digest)
		if err == nil && int64(len(data)) != f.Size {
			err = &evidence.SizeMismatchError{Object: repo.BlobURI(f.Digest), Want: f.Size, Got: int64(len(data))}
		}
		if err != nil {
			if c := classify(err); !isBad(c) {
				return nil, err
			}
			problems = append(problems, fmt.Sprintf("blob %s (%s): %v", f.Digest, f.Path, err))
			continue
		}
		b.Bytes += f.Size
		if derivedRoles[f.Role] {
			b.Files[f.Path] = data
		}
	}
	if len(problems) > 0 {
		return nil, badEvidence{fmt.Errorf("verification failed: %s", strings.Join(problems, "; "))}
	}
	return b, nil
}

// classify turns integrity problems (missing or mismatching objects,
// undecodable manifests) into badEvidence; other errors (network, I/O)
// pass through and stop the pass.
func classify(err error) error {
	var dm *evidence.DigestMismatchError
	var sm *evidence.SizeMismatchError
	if errors.Is(err, evidence.ErrNotFound) || errors.As(err, &dm) || errors.As(err, &sm) ||
		strings.Contains(err.Error(), "decode manifest") {
		return badEvidence{err}
	}
	return err
}

func isBad(err error) bool {
	var b badEvidence
	return errors.As(err, &b)
}
