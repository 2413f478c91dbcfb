// Package records defines the Parquet row types of evidence bundles
// (per-operation samples and telemetry points) and reads and writes them.
// The column names and units are part of the bundle format
// (docs/format/bundle.md); a change to them is a format version change.
package records

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Phases of a trial, as recorded in samples.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
)

// OpSample is one operation issued by a driver. Offsets are nanoseconds on
// the monotonic clock since the trial's origin (its started_at in the
// manifest). Latency is measured from the intended start, so a driver that
// falls behind its schedule shows it (no coordinated omission); closed-loop
// drivers intend to start each operation when they start it.
type OpSample struct {
	Seq        int64  `parquet:"seq"`             // per trial, in issue order within a worker
	Worker     int32  `parquet:"worker"`          // thread / connection index
	Phase      string `parquet:"phase,dict"`      // warmup | measure
	Op         string `parquet:"op,dict"`         // driver-specific: read, write, query, ...
	IntendedNs int64  `parquet:"intended_ns"`     // when the operation should have started
	StartNs    int64  `parquet:"start_ns"`        // when it was issued
	LatencyNs  int64  `parquet:"latency_ns"`      // completion - intended
	Bytes      int64  `parquet:"bytes"`           // payload bytes moved
	OK         bool   `parquet:"ok"`              //
	ErrorKind  string `parquet:"error_kind,dict"` // "" when OK
}

// TelemetryPoint is one value sampled by a collector.
type TelemetryPoint struct {
	TimeUnixNs int64   `parquet:"time_unix_ns"`   // wall clock, UTC
	OffsetNs   int64   `parquet:"offset_ns"`      // monotonic, since trial origin
	Collector  string  `parquet:"collector,dict"` // host, nvml, promscrape, ...
	Metric     string  `parquet:"metric,dict"`    // name with its unit: cpu_utilization_percent, disk_read_bytes_total
	Device     string  `parquet:"device,dict"`    // "" for host-wide values, else cpu0, sda, eth0, a GPU UUID
	Value      float64 `parquet:"value"`
}

// Write writes rows as one Parquet file (zstd-compressed) to w.
func Write[T any](w io.Writer, rows []T) error {
	pw := parquet.NewGenericWriter[T](w, parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}))
	for len(rows) > 0 {
		n := min(len(rows), 64*1024)
		if _, err := pw.Write(rows[:n]); err != nil {
			return fmt.Errorf("write parquet: %w", err)
		}
		rows = rows[n:]
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	return nil
}

// Read reads every row of a Parquet file of T. T may name a subset of the
// file's columns (by their parquet tags); only those are decoded.
func Read[T any](r io.ReaderAt, size int64) ([]T, error) {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("read parquet: %w", err)
	}
	pr := parquet.NewGenericReader[T](f)
	defer pr.Close()
	out := make([]T, f.NumRows())
	n := 0
	for n < len(out) {
		k, err := pr.Read(out[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read parquet: %w", err)
		}
		if k == 0 {
			return nil, fmt.Errorf("read parquet: no progress after %d of %d rows", n, len(out))
		}
	}
	if n != len(out) {
		return nil, fmt.Errorf("read parquet: %d rows, file says %d", n, len(out))
	}
	return out, nil
}
