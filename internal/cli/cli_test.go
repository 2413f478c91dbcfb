package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/evidence"
)

// perfwh runs the command tree in-process with a private home.
func perfwh(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
	root := NewRootCmd(f)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		reportError(f, err)
	}
	return out.String(), errOut.String(), exitCode(err)
}

const smallCase = `name: cli-test
driver: fileio
workload:
  mode: [read, randread]
  file_size: 1MiB
  block_size: 4KiB
repetitions: 1
warmup_operations: 16
operations: 256
collectors:
  host: {interval: 50ms}
`

func writeCase(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "case.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunJSONThenListShowVerify(t *testing.T) {
	home := t.TempDir()
	cs := writeCase(t, smallCase)
	out, stderr, code := perfwh(t, home, "run", cs, "--output", "json")
	if code != 0 {
		t.Fatalf("run exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	var doc struct {
		RunID          string `json:"run_id"`
		ManifestDigest string `json:"manifest_digest"`
		Status         string `json:"status"`
		Trials         []struct {
			ID     string         `json:"id"`
			Params map[string]any `json:"params"`
			Status string         `json:"status"`
		} `json:"trials"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatal("stdout holds more than one JSON document")
	}
	if doc.RunID == "" || !strings.HasPrefix(doc.ManifestDigest, "sha256:") || doc.Status != "complete" || len(doc.Trials) != 2 {
		t.Fatalf("run document %+v", doc)
	}
	if doc.Trials[0].Params["mode"] != "read" || doc.Trials[1].Params["mode"] != "randread" || doc.Trials[0].Status != "ok" {
		t.Fatalf("trials %+v", doc.Trials)
	}

	out, _, code = perfwh(t, home, "runs", "list")
	if code != 0 || !strings.Contains(out, doc.RunID) || !strings.Contains(out, "cli-test") {
		t.Fatalf("runs list (exit %d):\n%s", code, out)
	}
	out, _, code = perfwh(t, home, "runs", "show", doc.RunID[:13])
	if code != 0 || !strings.Contains(out, "trials/t0001/samples.parquet") || !strings.Contains(out, "environment.json") {
		t.Fatalf("runs show (exit %d):\n%s", code, out)
	}
	out, _, code = perfwh(t, home, "verify", doc.RunID)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("verify of an intact run exit %d:\n%s", code, out)
	}

	// Change one byte of one blob: verify names it and exits non-zero.
	d, _ := evidence.ParseDigest(doc.ManifestDigest)
	var show struct {
		Files []struct {
			Path string `json:"path"`
			URI  string `json:"uri"`
		} `json:"files"`
	}
	out, _, _ = perfwh(t, home, "runs", "show", doc.RunID, "-o", "json")
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, f := range show.Files {
		if f.Path == "trials/t0002/samples.parquet" {
			victim = strings.TrimPrefix(f.URI, "file://")
		}
	}
	flipByte(t, victim)
	out, stderr, code = perfwh(t, home, "verify", doc.RunID)
	if code != ExitFailure || !strings.Contains(stderr, victim) || !strings.Contains(out, "FAIL") {
		t.Fatalf("verify after corruption: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	// Corrupting the manifest is caught too.
	flipByte(t, filepath.Join(home, "store", evidence.ManifestName(d)))
	_, stderr, code = perfwh(t, home, "verify", doc.RunID)
	if code != ExitFailure || !strings.Contains(stderr, "manifests/sha256/"+d.Hex()) {
		t.Fatalf("verify after manifest corruption: exit %d\nstderr %s", code, stderr)
	}
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

func TestBadCaseExitsTwoAndWritesNothing(t *testing.T) {
	home := t.TempDir()
	cs := writeCase(t, strings.Replace(smallCase, "block_size: 4KiB", "block_size: huge", 1))
	out, stderr, code := perfwh(t, home, "run", cs, "-o", "json")
	if code != ExitUsage {
		t.Fatalf("exit %d; want %d", code, ExitUsage)
	}
	if !strings.Contains(stderr, "case.yaml:6:15: workload.block_size") {
		t.Fatalf("stderr does not locate the problem:\n%s", stderr)
	}
	var doc struct {
		Error struct {
			Problems []struct {
				Line  int    `json:"line"`
				Field string `json:"field"`
			} `json:"problems"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Error.Problems) != 1 || doc.Error.Problems[0].Line != 6 {
		t.Fatalf("json error document %q (%v)", out, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "store", "runs")); len(entries) != 0 {
		t.Fatal("a bad case left a run behind")
	}
	if _, err := os.Stat(filepath.Join(home, "staging")); err == nil {
		t.Fatal("a bad case staged files")
	}
	_, _, code = perfwh(t, home, "run", cs, "--set", "workload.block_size=8KiB")
	if code != 0 {
		t.Fatalf("--set did not repair the case: exit %d", code)
	}
}

func TestPlanAndUsageErrors(t *testing.T) {
	home := t.TempDir()
	cs := writeCase(t, smallCase)
	out, _, code := perfwh(t, home, "plan", cs, "--set", "workload.threads=[1,2]")
	if code != 0 || !strings.Contains(out, "4 (4 points × 1 repetitions)") || !strings.Contains(out, "t0004") {
		t.Fatalf("plan exit %d:\n%s", code, out)
	}
	if _, _, code := perfwh(t, home, "plan"); code != ExitUsage {
		t.Fatalf("missing argument: exit %d; want 2", code)
	}
	if _, _, code := perfwh(t, home, "runs", "list", "--output", "yaml"); code != ExitUsage {
		t.Fatalf("bad --output: exit %d; want 2", code)
	}
	if _, _, code := perfwh(t, home, "plan", cs, "--frobnicate"); code != ExitUsage {
		t.Fatalf("unknown flag: exit %d; want 2", code)
	}
	out, _, code = perfwh(t, home, "version", "-o", "json")
	if code != 0 || !strings.Contains(out, `"bundle_format": "perfwh.bundle/1"`) {
		t.Fatalf("version: %s", out)
	}
}

func TestFailedTrialExitsThree(t *testing.T) {
	home := t.TempDir()
	// A block larger than the file cannot be read: the driver refuses it at Open.
	cs := writeCase(t, strings.Replace(smallCase, "block_size: 4KiB", "block_size: [4KiB, 2MiB]", 1))
	out, _, code := perfwh(t, home, "run", cs)
	if code != ExitTrialsFailed {
		t.Fatalf("exit %d; want %d\n%s", code, ExitTrialsFailed, out)
	}
	if !strings.Contains(out, "failed (setup)") {
		t.Fatalf("output does not explain the failure:\n%s", out)
	}
}
