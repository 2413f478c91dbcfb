package lineage

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// compactRuns is the number of runs above which the tree shows one line
// per intact run instead of its blobs.
const compactRuns = 10

// WriteTree renders a report for people: the number, then each link
// outward to the blobs, and the problems last.
func WriteTree(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "lineage of %s  (verify: %s)\n", rep.Ref, rep.Verify)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format+"\n", args...) }
	if n := rep.Number; n != nil {
		where := n.Table
		if n.Row > 0 {
			where = "row " + strconv.Itoa(n.Row)
		}
		p("number\t%s = %s\t(%s)", n.Column, show(n.Value), where)
	}
	if pub := rep.Publication; pub != nil {
		state := "verified"
		if pub.Unsafe {
			state = "verified, MARKED UNSAFE"
		}
		p("publication\t%s\tpublished %s by %s, %s", pub.ID, pub.PublishedAt.Format(time.RFC3339), pub.PublishedBy, state)
		p("\t%s", pub.URI)
		p("\tread from %s warehouse %s; evidence in %s", pub.Warehouse.Dialect, pub.Warehouse.Location, pub.Store)
	}
	if q := rep.Query; q != nil {
		reg := "registered query unchanged"
		switch {
		case q.Changed:
			reg = "CHANGED since publication: registered now " + q.Registered.String()
		case q.Registered.IsZero():
			reg = "NOT REGISTERED now"
		}
		p("query\t%s\t%s\t%s", q.Name, q.Digest, reg)
		p("\tparams: %s", showMap(rep.Publication.Params, nil))
	}
	if g := rep.Gates; g != nil {
		parts := make([]string, len(g.Verdicts))
		for i, v := range g.Verdicts {
			parts[i] = v.Gate + " " + v.Status
		}
		p("gates\t%s", strings.Join(parts, " · "))
		p("\tmin_samples %d, min_repetitions %d, max_cv %g, require_warmup %v", g.Config.MinSamples, g.Config.MinRepetitions, g.Config.MaxCV, g.Config.RequireWarmup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rows := rep.Rows
	fmt.Fprintf(w, "\nrows (%d)\n", len(rows))
	for k, r := range rows {
		if k == compactRuns && len(rows) > compactRuns+2 {
			fmt.Fprintf(w, "  ... %d more rows (--output json lists them)\n", len(rows)-k)
			break
		}
		fmt.Fprintf(w, "  row %d  %s\n", r.Row, showMap(r.Values, []string{"run_ids"}))
		ids := r.RunIDs
		if len(ids) > 4 {
			ids = append(slices.Clone(ids[:4]), fmt.Sprintf("... (%d runs)", len(r.RunIDs)))
		}
		fmt.Fprintf(w, "         runs: %s\n", strings.Join(ids, ", "))
	}
	fmt.Fprintf(w, "\nruns (%d)\n", len(rep.Runs))
	for _, r := range rep.Runs {
		if len(rep.Runs) > compactRuns && r.Verified() {
			fmt.Fprintf(w, "  run %s  manifest %s  %d blobs ok\n", r.RunID, r.Manifest.Digest.Short(), len(r.Blobs))
			continue
		}
		if err := writeRun(w, r); err != nil {
			return err
		}
	}
	s := rep.Summary
	fmt.Fprintf(w, "\nchecked %d runs, %d manifests, %d distinct blobs (%s)\n", s.Runs, s.Manifests, s.Blobs, humanBytes(s.Bytes))
	if rep.OK {
		fmt.Fprintln(w, "ok: every link resolves and verifies")
		return nil
	}
	fmt.Fprintf(w, "NOT PUBLICATION-SAFE: %d problem(s)\n", len(rep.Problems))
	for _, pr := range rep.Problems {
		fmt.Fprintf(w, "  %s\n", pr)
	}
	return nil
}

func writeRun(w io.Writer, r *RunEvidence) error {
	head := "run " + r.RunID
	if b := r.Benchmark; b != nil {
		head += fmt.Sprintf("  %s %s · %s %s", b.Name, b.Version, b.Driver, b.DriverVersion)
	}
	if d := r.Dimensions; d != nil {
		head += fmt.Sprintf(" · ingest v%v · %v", d.Run["ingest_version"], d.Run["status"])
	}
	fmt.Fprintf(w, "  %s\n", head)
	fmt.Fprintf(w, "    pointer   %s  %s\n", r.Pointer.URI, okOr(r.Pointer.Verified, r.Pointer.Error))
	if !r.Manifest.Digest.IsZero() {
		fmt.Fprintf(w, "    manifest  %s  %s  (%d files, %s)\n    %s\n", r.Manifest.Digest, okOr(r.Manifest.Verified, r.Manifest.Error),
			r.Manifest.Files, humanBytes(r.Manifest.Bytes), "          "+r.Manifest.URI)
	}
	if d := r.Dimensions; d != nil {
		fmt.Fprintf(w, "    software  %v %v (%v) · %v · %v · kernel %v · driver %v %v\n", "perfwh", d.Software["perfwh_version"],
			d.Software["perfwh_revision"], d.Software["go_version"], d.Software["os"], d.Software["kernel_version"],
			d.Software["driver"], d.Software["driver_version"])
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("    hardware  %v · %v sockets, %v cores, %v threads, %v NUMA · %s RAM · %v GPU(s) %v", d.Hardware["cpu_model"],
			d.Hardware["sockets"], d.Hardware["physical_cores"], d.Hardware["logical_cores"], d.Hardware["numa_nodes"],
			humanBytes(asInt(d.Hardware["memory_bytes"])), d.Hardware["gpu_count"], d.Hardware["gpu_model"]), " "))
		fmt.Fprintf(w, "    cluster   %v · scheduler %v · node %v\n", d.Cluster["cluster"], d.Cluster["scheduler"], d.Run["node_name"])
		fmt.Fprintf(w, "    workload  %v · %v · axes %v · %v repetitions\n", d.Workload["workload_spec_digest"], d.Workload["driver"],
			d.Workload["axes"], d.Workload["repetitions"])
	}
	if len(r.Blobs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "    blobs (%d)\n", len(r.Blobs))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range r.Blobs {
		fmt.Fprintf(tw, "      %s\t%s\t%s\t%s\t%s\t%s\n", okOr(b.Verified, "FAIL"), b.Path, b.Role, humanBytes(b.Size), b.Digest.Short(), blobNote(b))
	}
	return tw.Flush()
}

func blobNote(b BlobState) string {
	if b.Verified {
		return "(" + b.Check + ")"
	}
	return b.Error + "  " + b.URI
}

func okOr(ok bool, bad string) string {
	if ok {
		return "ok"
	}
	return bad
}

func showMap(m map[string]any, skip []string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + show(m[k])
	}
	return strings.Join(parts, " ")
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', 6, 64)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

func asInt(v any) int64 {
	if n, ok := v.(int64); ok {
		return n
	}
	return 0
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
