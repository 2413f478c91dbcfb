package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/perfwh/perfwh/evidence"
)

// bundleLogger returns a logger writing JSONL into the bundle at path, and
// also to mirror when it is not nil. close must be called before Commit.
func bundleLogger(bw *evidence.BundleWriter, path, trial string, mirror *slog.Logger) (*slog.Logger, func(), error) {
	log, _, closeFn, err := bundleLoggerTail(bw, path, trial, mirror)
	return log, closeFn, err
}

// bundleLoggerTail is bundleLogger that also keeps the last lines logged,
// for error excerpts.
func bundleLoggerTail(bw *evidence.BundleWriter, path, trial string, mirror *slog.Logger) (*slog.Logger, *tailBuffer, func(), error) {
	f, err := bw.Create(path, evidence.RoleLog, evidence.MediaJSONL, trial)
	if err != nil {
		return nil, nil, nil, err
	}
	tail := &tailBuffer{max: 20}
	w := &lockedWriter{w: io.MultiWriter(f, tail)}
	var h slog.Handler = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	if mirror != nil {
		h = fanout{h, mirror.Handler()}
	}
	return slog.New(h), tail, func() { f.Close() }, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tailBuffer keeps the last max lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part.Write(p)
	for {
		line, err := t.part.ReadString('\n')
		if err != nil {
			t.part.WriteString(line)
			break
		}
		t.lines = append(t.lines, strings.TrimRight(line, "\n"))
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// fanout sends each record to every handler that is enabled for it.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			errs = append(errs, h.Handle(ctx, r.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}
