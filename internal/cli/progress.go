package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/spec"
)

// progressBar draws one self-updating line on a terminal. It is used only
// when stderr is a TTY, never in pipelines or --output json to a file.
type progressBar struct {
	w    io.Writer
	mu   sync.Mutex
	line string // what describes the current trial
	i, n int
	// current phase
	phase    string
	start    time.Time
	planned  time.Duration
	done     chan struct{}
	finished sync.WaitGroup
}

func newProgressBar(w io.Writer) *progressBar {
	p := &progressBar{w: w, done: make(chan struct{})}
	p.finished.Add(1)
	go func() {
		defer p.finished.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.draw()
			}
		}
	}()
	return p
}

func (p *progressBar) TrialStarted(i, n int, t spec.Trial) {
	p.mu.Lock()
	p.i, p.n, p.phase, p.line = i, n, "setup", fmt.Sprintf("%s point %d rep %d", t.ID, t.Point, t.Repetition)
	p.start, p.planned = time.Now(), 0
	p.mu.Unlock()
	p.draw()
}

func (p *progressBar) PhaseStarted(t spec.Trial, phase string, planned time.Duration, ops int64) {
	p.mu.Lock()
	p.phase, p.start, p.planned = phase, time.Now(), planned
	p.mu.Unlock()
}

func (p *progressBar) TrialFinished(i, n int, t spec.Trial, status evidence.TrialStatus, e *evidence.TrialError) {
	if status == evidence.TrialOK {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := ""
	if e != nil {
		msg = ": " + e.Message
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s%s\n", t.ID, status, msg)
}

func (p *progressBar) Committing(trials int) {
	p.mu.Lock()
	p.phase, p.line, p.planned = "storing", "evidence bundle", 0
	p.mu.Unlock()
	p.draw()
}

func (p *progressBar) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start)
	frac := 0.0
	if p.planned > 0 {
		frac = min(1, float64(el)/float64(p.planned))
	}
	const width = 24
	full := int(frac * width)
	bar := strings.Repeat("█", full) + strings.Repeat("░", width-full)
	timing := el.Truncate(100 * time.Millisecond).String()
	if p.planned > 0 {
		timing += "/" + p.planned.String()
	}
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %s  %-7s %s %s", p.i+1, p.n, p.line, p.phase, bar, timing)
}

func (p *progressBar) stop() {
	close(p.done)
	p.finished.Wait()
	p.mu.Lock()
	fmt.Fprint(p.w, "\r\033[K")
	p.mu.Unlock()
}
