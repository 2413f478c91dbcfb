package fileio

import (
	"sync"

	"github.com/perfwh/perfwh/evidence/records"
)

// chunkSize is the number of samples in one chunk (128 KiB).
const chunkSize = 4096

// sample is one operation as the hot loop keeps it while a phase runs:
// pointer-free, so storing it needs no GC write barrier and the chunks
// holding it are never scanned. It becomes a records.OpSample when the
// phase ends (toRecords).
type sample struct {
	start   int64 // offset from the trial origin, ns
	latency int64 // ns
	bytes   int64
	op      uint8 // opRead, opWrite, opFsync
	kind    uint8 // kindOK or an error kind
}

// Operation and error-kind codes of a sample, indexes into opNames and
// kindNames.
const (
	opRead uint8 = iota
	opWrite
	opFsync
)

const (
	kindOK uint8 = iota
	kindIO
	kindShortRead
	kindShortWrite
)

var (
	opNames   = [...]string{opRead: OpRead, opWrite: OpWrite, opFsync: OpFsync}
	kindNames = [...]string{kindOK: "", kindIO: ErrKindIO, kindShortRead: ErrKindShortRead, kindShortWrite: ErrKindShortWrite}
)

// chunk is consecutive samples of one thread; the first has sequence
// number seq0.
type chunk struct {
	worker  int32
	seq0    int64
	samples []sample
}

// collector gathers the threads' full chunks during a phase and recycles
// their memory from one phase to the next.
type collector struct {
	mu     sync.Mutex
	chunks []chunk
	free   [][]sample
}

// get returns an empty chunk buffer of chunkSize samples.
func (c *collector) get() []sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b[:chunkSize]
	}
	return make([]sample, chunkSize)
}

// put adds a filled chunk.
func (c *collector) put(ch chunk) {
	c.mu.Lock()
	c.chunks = append(c.chunks, ch)
	c.mu.Unlock()
}

// take returns the chunks gathered so far and forgets them.
func (c *collector) take() []chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.chunks
	c.chunks = nil
	return out
}

// recycle keeps the buffers of chunks for later phases.
func (c *collector) recycle(chunks []chunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range chunks {
		c.free = append(c.free, ch.samples[:0])
	}
}

// release drops the recycled buffers.
func (c *collector) release() {
	c.mu.Lock()
	c.free = nil
	c.mu.Unlock()
}

// toRecords converts chunks into sample rows of phase, in one slice so the
// Recorder grows at most once.
func toRecords(chunks []chunk, phase string) []records.OpSample {
	total := 0
	for _, ch := range chunks {
		total += len(ch.samples)
	}
	rows := make([]records.OpSample, 0, total)
	for _, ch := range chunks {
		for i, s := range ch.samples {
			rows = append(rows, records.OpSample{
				Seq:        ch.seq0 + int64(i),
				Worker:     ch.worker,
				Phase:      phase,
				Op:         opNames[s.op],
				IntendedNs: s.start, // closed loop: intended when issued
				StartNs:    s.start,
				LatencyNs:  s.latency,
				Bytes:      s.bytes,
				OK:         s.kind == kindOK,
				ErrorKind:  kindNames[s.kind],
			})
		}
	}
	return rows
}
