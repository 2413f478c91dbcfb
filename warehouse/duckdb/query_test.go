package duckdb

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestQueryNormalisesTypes(t *testing.T) {
	w := openTemp(t)
	r, err := w.Query(t.Context(), `SELECT 1::TINYINT AS a, 2::INTEGER AS b, 3::UTINYINT AS c, 4::UBIGINT AS d,
		sum(x) AS e, 170141183460469231731687303715884105727::HUGEINT AS f, 1.25::FLOAT AS g, 2.5::DECIMAL(10,2) AS h,
		true AS i, 'x'::BLOB AS j, DATE '2024-01-02' AS k, TIMESTAMP '2024-01-02 03:04:05' AS l,
		TIMESTAMPTZ '2024-01-02 03:04:05+02' AS m, NULL AS n, [1, 2]::INTEGER[] AS o,
		'00000000-0000-0000-0000-000000000001'::UUID AS p
		FROM (SELECT 5::BIGINT AS x)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(1), int64(2), int64(3), int64(4), int64(5), 1.7014118346046923e38, 1.25, 2.5,
		int64(1), "x", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2024, 1, 2, 1, 4, 5, 0, time.UTC), nil, []any{int64(1), int64(2)}, "00000000-0000-0000-0000-000000000001"}
	if len(r.Rows) != 1 {
		t.Fatalf("got %d rows", len(r.Rows))
	}
	for i, v := range r.Rows[0] {
		if !reflect.DeepEqual(v, want[i]) {
			t.Errorf("column %s: got %T %v; want %T %v", r.Columns[i], v, v, want[i], want[i])
		}
		if tm, ok := v.(time.Time); ok && tm.Location() != time.UTC {
			t.Errorf("column %s: time in %s; want UTC", r.Columns[i], tm.Location())
		}
	}
}

// The ingest tests check percentiles against DuckDB over the raw samples:
// Query reads Parquet files with read_parquet.
func TestQueryReadsParquet(t *testing.T) {
	w := openTemp(t)
	file := filepath.Join(t.TempDir(), "samples.parquet")
	if _, err := w.Query(t.Context(), fmt.Sprintf(`COPY (SELECT range::DOUBLE AS latency_ms FROM range(1, 1001)) TO '%s' (FORMAT parquet)`, file)); err != nil {
		t.Fatal(err)
	}
	r, err := w.Query(t.Context(), `SELECT quantile_disc(latency_ms, 0.99) AS p99, count(*) AS n FROM read_parquet(?)`, file)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Rows[0]; got[0] != 990.0 || got[1] != int64(1000) {
		t.Fatalf("got p99, n = %v; want 990, 1000", got)
	}
}
