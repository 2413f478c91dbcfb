package fileio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfwh/perfwh/drivers"
)

// pcgStream is the second PCG seed word; the first is Seed + thread index.
const pcgStream = 0x5065726677682d66 // "Perfwh-f"

// yieldEvery is how often (ns) a thread yields to the Go scheduler. A
// goroutine that never yields is, after 10ms, force-preempted by the
// runtime's sysmon thread, which then keeps polling every 20µs: thousands
// of wake-ups a second that land on the I/O thread's CPU (measured: 30k
// context switches/s and 15-30% slower 1 MiB cached reads on 2 vCPUs).
// Yielding every 2ms keeps sysmon asleep, as fio's threads are never
// disturbed. It costs one comparison per operation.
const yieldEvery = 2e6

// stuckGrace is how long Run waits, after ctx is done, for threads blocked
// in a system call before it records what the others did and returns
// (the runner's own grace period is longer).
const stuckGrace = time.Second

// worker is one thread of a trial. Its state (file offset, random stream,
// sequence number, writes since the last fsync) carries over from one phase
// to the next.
type worker struct {
	id          int32
	fd          int
	path        string
	bs          int64
	write       bool
	random      bool
	op          uint8
	regionStart int64 // byte offset of the thread's region
	nblocks     int64 // blocks in the region
	pos         int64 // next block of a sequential mode
	rng         *rand.Rand
	fsyncEvery  int64
	sinceFsync  int64
	seq         int64
	origin      time.Time
	buf         []byte
	col         *collector

	// The chunk being filled: samples[:n], the first with sequence seq0.
	samples []sample
	n       int
	seq0    int64

	// Results of the current phase.
	ops   int64 // reads or writes issued, failed ones included
	bytes int64 // bytes moved
	errs  int64
	err   error
}

// nextOffset returns the byte offset of the next read or write.
func (w *worker) nextOffset() int64 {
	if w.random {
		return w.regionStart + int64(w.rng.Uint64N(uint64(w.nblocks)))*w.bs
	}
	off := w.regionStart + w.pos*w.bs
	if w.pos++; w.pos == w.nblocks {
		w.pos = 0
	}
	return off
}

// now is the offset from the trial origin on the monotonic clock.
func (w *worker) now() int64 { return int64(time.Since(w.origin)) }

// Run runs one phase: every thread issues operations until the phase's
// duration has elapsed, its share of the operation count is done, an
// operation fails or ctx is done. The samples go to rec when the threads
// have stopped (see doc.go: recording).
func (in *instance) Run(ctx context.Context, ph drivers.Phase, rec *drivers.Recorder) (map[string]any, error) {
	if ph.Duration <= 0 && ph.Operations <= 0 {
		return nil, fmt.Errorf("fileio: phase %s has neither a duration nor an operation count", ph.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()

	begin := time.Since(in.origin)
	deadline := int64(math.MaxInt64)
	if ph.Duration > 0 {
		deadline = int64(begin + ph.Duration)
	}
	var wg sync.WaitGroup
	n := int64(len(in.workers))
	for i, w := range in.workers {
		w.ops, w.bytes, w.errs, w.err = 0, 0, 0, nil
		quota := int64(-1) // no count bound
		if ph.Operations > 0 {
			quota = ph.Operations / n
			if int64(i) < ph.Operations%n {
				quota++
			}
			if quota == 0 {
				continue
			}
		}
		wg.Go(func() { w.run(quota, deadline, &stop) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		select {
		case <-done:
		case <-time.After(stuckGrace):
			// A thread is blocked in the kernel (a hung device or
			// mount): keep what the others recorded and return; that
			// thread's unfinished chunk is lost.
			chunks := in.col.take()
			rec.Append(toRecords(chunks, ph.Name))
			return nil, fmt.Errorf("fileio: %w (a thread is still blocked in a system call)", ctx.Err())
		}
	}
	elapsed := time.Since(in.origin) - begin
	chunks := in.col.take()
	rec.Append(toRecords(chunks, ph.Name))
	if err := ctx.Err(); err != nil {
		in.col.recycle(chunks)
		return nil, err
	}
	summary := summarize(in.workers, chunks, elapsed)
	in.col.recycle(chunks)
	var errs []error
	for _, w := range in.workers {
		if w.err != nil {
			errs = append(errs, w.err)
		}
	}
	return summary, errors.Join(errs...)
}

// run is the hot loop of one thread. quota < 0 means no count bound;
// deadline is an offset from the origin.
func (w *worker) run(quota, deadline int64, stop *atomic.Bool) {
	w.samples, w.n, w.seq0 = w.col.get(), 0, w.seq
	defer w.publish()
	lastYield := w.now()
	for quota < 0 || w.ops < quota {
		if stop.Load() {
			return
		}
		off := w.nextOffset()
		var n int
		var err error
		var start int64
		if w.write {
			// Stamp the offset so a reader can tell where each write landed.
			binary.LittleEndian.PutUint64(w.buf, uint64(off))
			start = w.now()
			n, err = unix.Pwrite(w.fd, w.buf, off)
		} else {
			start = w.now()
			n, err = unix.Pread(w.fd, w.buf, off)
		}
		end := w.now()
		w.ops++
		if err != nil || n != len(w.buf) {
			w.fail(off, start, end, n, err)
			stop.Store(true)
			return
		}
		w.bytes += int64(n)
		w.add(sample{start: start, latency: end - start, bytes: int64(n), op: w.op})
		if w.fsyncEvery > 0 {
			if w.sinceFsync++; w.sinceFsync == w.fsyncEvery {
				w.sinceFsync = 0
				if end = w.fsync(); w.err != nil {
					stop.Store(true)
					return
				}
			}
		}
		if end >= deadline {
			return
		}
		if end-lastYield >= yieldEvery {
			runtime.Gosched()
			lastYield = end
		}
	}
}

// fsync flushes the file and records it; it returns the completion offset.
func (w *worker) fsync() int64 {
	start := w.now()
	err := unix.Fsync(w.fd)
	end := w.now()
	s := sample{start: start, latency: end - start, op: opFsync}
	if err != nil {
		s.kind = kindIO
		w.errs++
		w.err = fmt.Errorf("fileio: thread %d: fsync %s: %w", w.id, w.path, err)
	}
	w.add(s)
	return end
}

// fail records a failed or short read or write. Like fio (continue_on_error
// unset), the thread stops at its first failure and the phase ends.
func (w *worker) fail(off, start, end int64, n int, err error) {
	s := sample{start: start, latency: end - start, bytes: max(int64(n), 0), op: w.op}
	verb := "pread"
	if w.write {
		verb = "pwrite"
	}
	switch {
	case err != nil:
		s.kind = kindIO
		w.err = fmt.Errorf("fileio: thread %d: %s %d bytes at offset %d of %s: %w", w.id, verb, len(w.buf), off, w.path, err)
	case w.write:
		s.kind = kindShortWrite
		w.err = fmt.Errorf("fileio: thread %d: short write at offset %d of %s: %d of %d bytes", w.id, off, w.path, n, len(w.buf))
	default:
		s.kind = kindShortRead
		w.err = fmt.Errorf("fileio: thread %d: short read at offset %d of %s: %d of %d bytes (file truncated?)", w.id, off, w.path, n, len(w.buf))
	}
	w.bytes += s.bytes
	w.errs++
	w.add(s)
}

// add appends s to the chunk being filled, publishing a full chunk first.
// It advances the thread's sequence number.
func (w *worker) add(s sample) {
	if w.n == len(w.samples) {
		w.publish()
		w.samples, w.n, w.seq0 = w.col.get(), 0, w.seq
	}
	w.samples[w.n] = s
	w.n++
	w.seq++
}

// publish hands the chunk being filled to the collector.
func (w *worker) publish() {
	if w.n > 0 {
		w.col.put(chunk{worker: w.id, seq0: w.seq0, samples: w.samples[:w.n]})
	}
	w.samples, w.n = nil, 0
}
