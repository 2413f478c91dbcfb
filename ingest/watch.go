package ingest

import (
	"context"
	"time"
)

// Watch runs an ingest pass every interval until ctx is cancelled, calling
// pass with each summary. A pass that fails (store or warehouse
// unreachable) is reported through pass and retried at the next tick; Watch
// returns nil when ctx ends it.
func Watch(ctx context.Context, o Options, every time.Duration, pass func(*Summary, error)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s, err := Run(ctx, o)
		if ctx.Err() != nil {
			return nil
		}
		pass(s, err)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
