package warehousetest

import (
	"reflect"
	"testing"

	"github.com/perfwh/perfwh/warehouse"
)

func TestSyntheticBatchIsDeterministicAndFitsTheSchema(t *testing.T) {
	a, again := SyntheticBatch("run-a", 1), SyntheticBatch("run-a", 1)
	if !reflect.DeepEqual(a, again) {
		t.Fatal("SyntheticBatch is not deterministic")
	}
	if reflect.DeepEqual(a.Rows["storage_outcome_fact"], SyntheticBatch("run-a", 2).Rows["storage_outcome_fact"]) {
		t.Fatal("seeds 1 and 2 give the same storage rows")
	}
	b := SyntheticBatch("run-b", 1)
	for name, rows := range a.Rows {
		tb, ok := warehouse.Lookup(name)
		if !ok {
			t.Fatalf("table %s is not in the schema", name)
		}
		for i, r := range rows {
			if len(r) != len(tb.Columns) {
				t.Fatalf("%s row %d: %d values; want %d", name, i, len(r), len(tb.Columns))
			}
		}
		if tb.Kind == warehouse.Dim && tb.Key[0] != "run_id" && !reflect.DeepEqual(rows, b.Rows[name]) {
			t.Errorf("%s: runs with one seed have different dimension rows", name)
		}
	}
	if a.Ledger == nil || a.Ledger.Rows != int64(a.Count()) || a.Ledger.RunID != "run-a" {
		t.Fatalf("ledger entry %+v does not describe the batch (%d rows)", a.Ledger, a.Count())
	}
	big := SyntheticBatchN("run-big", 1, 1000, 5000)
	if n := len(big.Rows["telemetry_slice_fact"]); n != 5000 {
		t.Fatalf("SyntheticBatchN: %d telemetry rows; want 5000", n)
	}
}

func TestFormatValue(t *testing.T) {
	f := func(v any, want string) {
		t.Helper()
		if got := FormatValue(v); got != want {
			t.Fatalf("FormatValue(%#v) = %s; want %s", v, got, want)
		}
	}
	f(nil, "nil")
	f(int64(-3), "int64:-3")
	f(0.1, "float64:0.1")
	f(`a"b`, `string:"a\"b"`)
	f(Base, "time:2024-05-01T12:00:00Z")
	f(int32(1), "int32(not normalised):1")
}
