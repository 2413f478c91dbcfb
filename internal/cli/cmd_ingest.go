package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/ingest"
)

func newIngestCmd(f *Factory) *cobra.Command {
	var watch, retry bool
	var every, window time.Duration
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Verify and load every run not yet in the warehouse; safe to repeat",
		Long: `Ingest reads every committed run in the store that the warehouse's ingest
ledger does not list, verifies every blob of it, derives the outcome, telemetry
and dimension rows, and writes them, exactly once in effect. A run whose
evidence fails verification or decoding is quarantined (a ledger row with the
reason) and the others are ingested. The schema is migrated first.

With --watch it keeps ingesting new runs every --every until SIGINT or SIGTERM.`,
		Example: `  perfwh ingest
  perfwh ingest --warehouse clickhouse://127.0.0.1:9000/perfwh
  perfwh ingest --watch --every 10s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if every <= 0 || window <= 0 {
				return usageErrorf("--every and --window must be positive")
			}
			repo, err := f.Repo(ctx)
			if err != nil {
				return err
			}
			unlock, err := f.ingestLock(ctx)
			if err != nil {
				return err
			}
			defer unlock()
			wh, err := f.Warehouse(ctx)
			if err != nil {
				return err
			}
			defer wh.Close()
			if err := wh.Migrate(ctx); err != nil {
				return fmt.Errorf("migrate warehouse: %w", err)
			}
			log := f.Logger()
			opts := ingest.Options{Repo: repo, Warehouse: wh, Log: log, Window: window, Retry: retry,
				Progress: func(done, total int, o ingest.RunOutcome) {
					if o.Outcome != ingest.OutcomePresent {
						log.Info("ingest", "run", fmt.Sprintf("%d/%d", done, total), "run_id", o.RunID, "outcome", o.Outcome)
					}
				}}
			if watch {
				log.Info("watching for new runs", "every", every.String())
				return ingest.Watch(ctx, opts, every, func(s *ingest.Summary, err error) {
					if err != nil {
						log.Error("ingest pass failed; retrying at the next tick", "error", err.Error())
						return
					}
					if s.Ingested+s.Quarantined > 0 {
						log.Info("ingest pass", "ingested", s.Ingested, "quarantined", s.Quarantined, "already_present", s.AlreadyPresent)
					}
				})
			}
			sum, err := ingest.Run(ctx, opts)
			if err != nil {
				return err
			}
			if err := printIngest(f, sum); err != nil {
				return err
			}
			if sum.Quarantined > 0 {
				return &ExitError{Code: ExitTrialsFailed}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&watch, "watch", false, "keep ingesting new runs until interrupted")
	fl.DurationVar(&every, "every", 10*time.Second, "with --watch: time between passes")
	fl.DurationVar(&window, "window", ingest.DefaultWindow, "telemetry slice length")
	fl.BoolVar(&retry, "retry-quarantined", false, "try quarantined runs again")
	return cmd
}

func printIngest(f *Factory, s *ingest.Summary) error {
	if f.JSON() {
		return writeJSON(f.IO.Out, s)
	}
	w := f.IO.Out
	for _, r := range s.Runs {
		if r.Outcome == ingest.OutcomeQuarantined || r.Outcome == ingest.OutcomeSkipped {
			fmt.Fprintf(w, "%s %s: %s\n", r.RunID, r.Outcome, r.Reason)
		}
	}
	fmt.Fprintf(w, "ingested %d, already present %d, quarantined %d, skipped (quarantined earlier) %d in %s\n",
		s.Ingested, s.AlreadyPresent, s.Quarantined, s.Skipped, s.Duration.Round(time.Millisecond))
	return printRowCounts(w, s.Rows)
}

func printRowCounts(w io.Writer, rows map[string]int) error {
	if len(rows) == 0 {
		return nil
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	t := newTable(w, "TABLE", "ROWS WRITTEN")
	for _, n := range names {
		t.row(n, rows[n])
	}
	return t.flush()
}

// ingestLock serialises ingest processes on this machine for one
// warehouse: two passes at once would be correct (writes are exactly-once)
// but would do the same work twice.
func (f *Factory) ingestLock(ctx context.Context) (func(), error) {
	home, err := f.HomeDir()
	if err != nil {
		return nil, err
	}
	u, err := f.WarehouseURL()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(home, "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "ingest-"+evidence.Sum([]byte(u)).Short()+".lock")
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ingest lock %s: %w", path, err)
	}
	if err := unix.Flock(int(fh.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Logger().Info("waiting for another perfwh ingest on this warehouse", "lock", path)
		done := make(chan error, 1)
		go func() { done <- unix.Flock(int(fh.Fd()), unix.LOCK_EX) }()
		select {
		case err := <-done:
			if err != nil {
				fh.Close()
				return nil, fmt.Errorf("ingest lock %s: %w", path, err)
			}
		case <-ctx.Done():
			fh.Close()
			return nil, ctx.Err()
		}
	}
	return func() { fh.Close() }, nil
}
