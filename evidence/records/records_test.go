package records

import (
	"bytes"
	"testing"
)

func TestOpSampleRoundTrip(t *testing.T) {
	rows := []OpSample{
		{Seq: 1, Worker: 2, Phase: PhaseMeasure, Op: "read", IntendedNs: 5, StartNs: 6, LatencyNs: 7, Bytes: 4096, OK: true},
		{Seq: 2, Phase: PhaseWarmup, Op: "write", ErrorKind: "io"},
	}
	var b bytes.Buffer
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	got, err := Read[OpSample](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) || got[0] != rows[0] || got[1] != rows[1] {
		t.Fatalf("got %+v; want %+v", got, rows)
	}
}

func TestTelemetryRoundTripAndBadInput(t *testing.T) {
	rows := []TelemetryPoint{{TimeUnixNs: 1, OffsetNs: 2, Collector: "host", Metric: "cpu_utilization_percent", Value: 12.5}}
	var b bytes.Buffer
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	got, err := Read[TelemetryPoint](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil || len(got) != 1 || got[0] != rows[0] {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := Read[OpSample](bytes.NewReader([]byte("not parquet")), 11); err == nil {
		t.Fatal("reading garbage succeeded")
	}
}

func TestReadOpColumnsMatchesRows(t *testing.T) {
	var rows []OpSample
	for i := range 10000 {
		rows = append(rows, OpSample{Seq: int64(i), Phase: []string{PhaseWarmup, PhaseMeasure}[i%2], Op: []string{"read", "write", "fsync"}[i%3],
			LatencyNs: int64(i * 7), Bytes: int64(i % 5), OK: i%11 != 0, ErrorKind: map[bool]string{true: "", false: "io"}[i%11 != 0]})
	}
	var b bytes.Buffer
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	c, err := ReadOpColumns(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != len(rows) {
		t.Fatalf("%d rows; want %d", c.Len(), len(rows))
	}
	for i, r := range rows {
		if c.Phase[i] != r.Phase || c.Op[i] != r.Op || c.LatencyNs[i] != r.LatencyNs || c.Bytes[i] != r.Bytes || c.OK[i] != r.OK {
			t.Fatalf("row %d: columns %s %s %d %d %v; want %+v", i, c.Phase[i], c.Op[i], c.LatencyNs[i], c.Bytes[i], c.OK[i], r)
		}
	}
	if _, err := ReadOpColumns(bytes.NewReader([]byte("nope")), 4); err == nil {
		t.Fatal("garbage accepted")
	}
}
