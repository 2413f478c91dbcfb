// Command clickhouse-ingest measures how fast warehouse/clickhouse's
// WriteRun ingests about a million synthetic storage_outcome_fact and
// telemetry_slice_fact rows (warehousetest.SyntheticBatchN) beside
// clickhouse-client inserting the SAME rows as TabSeparated files:
//
//	clickhouse-client --query "INSERT INTO db.t (cols) FORMAT TabSeparated" < t.tsv
//
// Each repetition writes into fresh tables (a new database, migrated), the
// two tools alternate which goes first, and a checksum of every table
// proves both wrote the same rows. It prints per-repetition rates, the
// medians and the ratio perfwh/client. bench/clickhouse-ingest/run.sh
// starts a server when PERFWH_TEST_CLICKHOUSE is not set.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/perfwh/perfwh/warehouse"
	"github.com/perfwh/perfwh/warehouse/clickhouse"
	"github.com/perfwh/perfwh/warehouse/warehousetest"
)

var tables = []string{"storage_outcome_fact", "telemetry_slice_fact"}

func main() {
	rawURL := flag.String("url", os.Getenv("PERFWH_TEST_CLICKHOUSE"), "ClickHouse warehouse URL (default $PERFWH_TEST_CLICKHOUSE)")
	storage := flag.Int("storage", 200_000, "storage_outcome_fact rows")
	telemetry := flag.Int("telemetry", 800_000, "telemetry_slice_fact rows")
	reps := flag.Int("reps", 5, "repetitions")
	ledger := flag.Bool("ledger", true, "include the ledger row in WriteRun's batch, as ingest does")
	client := flag.String("client", "clickhouse-client", "clickhouse-client binary")
	flag.Parse()
	if *rawURL == "" {
		log.Fatal("no server: set -url or PERFWH_TEST_CLICKHOUSE (bench/clickhouse-ingest/run.sh starts one)")
	}
	ctx := context.Background()
	u, err := url.Parse(*rawURL)
	if err != nil {
		log.Fatal(err)
	}

	b := batch(*storage, *telemetry, *ledger)
	n := 0
	for _, t := range tables {
		n += len(b.Rows[t])
	}
	work, err := os.MkdirTemp("", "perfwh-chbench-")
	must(err)
	defer os.RemoveAll(work)
	conn, err := ch.Open(&ch.Options{Addr: []string{u.Host}})
	must(err)
	defer conn.Close()
	var zone, version string
	must(conn.QueryRow(ctx, "SELECT timezone(), version()").Scan(&zone, &version))
	tz, err := time.LoadLocation(zone)
	must(err)
	files := map[string]string{}
	var bytes int64
	for _, t := range tables {
		files[t] = filepath.Join(work, t+".tsv")
		bytes += writeTSV(files[t], b.Rows[t], tz)
	}
	fmt.Printf("clickhouse-ingest: %d rows (%s) into ClickHouse %s at %s; TSV %.0f MiB; ledger=%v\n",
		n, strings.Join(tables, " + "), version, u.Host, float64(bytes)/(1<<20), *ledger)

	var ours, peer []float64
	for r := range *reps {
		perfwh := func() float64 {
			w, cleanup := fresh(ctx, u, fmt.Sprintf("perfwh_bench_%d_p", r))
			defer cleanup()
			start := time.Now()
			must(w.WriteRun(ctx, b))
			d := time.Since(start)
			verify(ctx, w, b)
			return report(r, "perfwh", n, d)
		}
		cli := func() float64 {
			w, cleanup := fresh(ctx, u, fmt.Sprintf("perfwh_bench_%d_c", r))
			defer cleanup()
			db := w.Config().Database
			start := time.Now()
			for _, t := range tables {
				tb, _ := warehouse.Lookup(t)
				q := "INSERT INTO " + db + "." + t + " (" + strings.Join(tb.ColumnNames(), ", ") + ") FORMAT TabSeparated"
				cmd := exec.CommandContext(ctx, *client, "--host", u.Hostname(), "--port", u.Port(), "--query", q)
				f, err := os.Open(files[t])
				must(err)
				cmd.Stdin = f
				if out, err := cmd.CombinedOutput(); err != nil {
					log.Fatalf("clickhouse-client %s: %v\n%s", t, err, out)
				}
				f.Close()
			}
			d := time.Since(start)
			verify(ctx, w, b)
			return report(r, "client", n, d)
		}
		if r%2 == 0 {
			ours = append(ours, perfwh())
			peer = append(peer, cli())
		} else {
			peer = append(peer, cli())
			ours = append(ours, perfwh())
		}
	}
	mo, mp := median(ours), median(peer)
	fmt.Printf("median: perfwh WriteRun %.0f rows/s, clickhouse-client %.0f rows/s, ratio %.2fx\n", mo, mp, mo/mp)
}

// batch is one run's storage and telemetry rows (and its ledger row).
func batch(storage, telemetry int, ledger bool) *warehouse.Batch {
	full := warehousetest.SyntheticBatchN("run-bench", 1, storage, telemetry)
	b := &warehouse.Batch{RunID: full.RunID, Rows: map[string][][]any{}}
	for _, t := range tables {
		b.Rows[t] = full.Rows[t]
	}
	if ledger {
		b.Ledger = full.Ledger
		b.Ledger.Rows = int64(b.Count())
	}
	return b
}

// fresh opens a warehouse on a new, migrated database, dropped by cleanup.
func fresh(ctx context.Context, u *url.URL, db string) (*clickhouse.Warehouse, func()) {
	drop := func() {
		c, err := ch.Open(&ch.Options{Addr: []string{u.Host}})
		must(err)
		defer c.Close()
		must(c.Exec(ctx, "DROP DATABASE IF EXISTS "+db))
	}
	drop() // a leftover of an interrupted run
	v := *u
	v.Path = "/" + db
	w, err := clickhouse.Open(ctx, v.String())
	must(err)
	must(w.Migrate(ctx))
	return w, func() {
		w.Close()
		drop()
	}
}

// verify checks that the tables hold exactly b's rows: the count, a hash
// of every non-float column, and each float column's sum to 1e-9 relative.
// (ClickHouse 18.16 parses decimal text into the nearest double or one ULP
// off, e.g. 18.923 into 18.923000000000002, so the client's TSV rows can
// differ from the native protocol's in the last bit; WriteRun's are exact.)
func verify(ctx context.Context, w *clickhouse.Warehouse, b *warehouse.Batch) {
	for _, t := range tables {
		tb, _ := warehouse.Lookup(t)
		var exact []string
		sel := []string{"count() AS n"}
		for _, c := range tb.Columns {
			if c.Type == warehouse.Float64 || c.Type == warehouse.NFloat64 {
				sel = append(sel, "toFloat64(sum("+c.Name+")) AS "+c.Name)
			} else {
				exact = append(exact, c.Name)
			}
		}
		sel = append(sel, "sum(cityHash64("+strings.Join(exact, ", ")+")) % 1000000007 AS h")
		r, err := w.Query(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+t)
		must(err)
		got := r.Rows[0]
		if got[0] != int64(len(b.Rows[t])) {
			log.Fatalf("%s: %v rows; want %d", t, got[0], len(b.Rows[t]))
		}
		prev, ok := sums[t]
		if !ok {
			sums[t] = got
			continue
		}
		for i, v := range got {
			f, isFloat := v.(float64)
			if isFloat && math.Abs(f-prev[i].(float64)) <= 1e-9*math.Abs(f) || v == prev[i] {
				continue
			}
			log.Fatalf("%s.%s: %v; the other tool wrote %v: not the same rows", t, r.Columns[i], v, prev[i])
		}
	}
}

var sums = map[string][]any{}

func report(rep int, name string, rows int, d time.Duration) float64 {
	rate := float64(rows) / d.Seconds()
	fmt.Printf("  rep %d %-7s %10.0f rows/s (%s)\n", rep+1, name, rate, d.Round(time.Millisecond))
	return rate
}

// writeTSV writes rows as ClickHouse TabSeparated: \N for NULL, DateTime
// in the server's zone (how the server parses text), strings escaped.
func writeTSV(path string, rows [][]any, tz *time.Location) int64 {
	f, err := os.Create(path)
	must(err)
	bw := bufio.NewWriterSize(f, 1<<20)
	var line []byte
	for _, row := range rows {
		line = line[:0]
		for i, v := range row {
			if i > 0 {
				line = append(line, '\t')
			}
			line = appendTSV(line, v, tz)
		}
		line = append(line, '\n')
		_, err := bw.Write(line)
		must(err)
	}
	must(bw.Flush())
	st, err := f.Stat()
	must(err)
	must(f.Close())
	return st.Size()
}

func appendTSV(b []byte, v any, tz *time.Location) []byte {
	switch x := v.(type) {
	case string:
		for i := 0; i < len(x); i++ {
			switch c := x[i]; c {
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\\':
				b = append(b, '\\', '\\')
			default:
				b = append(b, c)
			}
		}
		return b
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case *float64:
		if x == nil {
			return append(b, '\\', 'N')
		}
		return strconv.AppendFloat(b, *x, 'g', -1, 64)
	case time.Time:
		return x.In(tz).AppendFormat(b, "2006-01-02 15:04:05")
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	}
	log.Fatalf("no TSV for %T", v)
	return nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
