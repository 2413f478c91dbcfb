package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfwh/perfwh/internal/cli"
)

// The test binary doubles as perfwh, so these tests exercise the real
// process: signals, exit codes and what a killed process leaves behind.
func TestMain(m *testing.M) {
	if os.Getenv("PERFWH_TEST_AS_MAIN") == "1" {
		os.Exit(cli.Main())
	}
	os.Exit(m.Run())
}

func command(home string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"--home", home}, args...)...)
	cmd.Env = append(os.Environ(), "PERFWH_TEST_AS_MAIN=1", "PERFWH_STORE=")
	return cmd
}

const slowCase = `name: kill-test
driver: fileio
workload:
  mode: [read, randread, write]
  file_size: 4MiB
  block_size: 4KiB
warmup: 100ms
duration: 300ms
collectors:
  host: {interval: 50ms}
`

func listRuns(t *testing.T, home string) []map[string]any {
	t.Helper()
	out, err := command(home, "runs", "list", "-o", "json").Output()
	if err != nil {
		t.Fatalf("runs list: %v", err)
	}
	var doc struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("runs list output %q: %v", out, err)
	}
	return doc.Runs
}

func TestSIGKILLLeavesNoVisibleRun(t *testing.T) {
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(slowCase), 0o644); err != nil {
		t.Fatal(err)
	}
	// Kill at points spread over the whole run (about 1.3 s), the commit included.
	for _, after := range []time.Duration{50, 250, 600, 1000, 1250, 1350, 1450} {
		cmd := command(home, "run", cs)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		if err == nil || !errors.As(err, &ee) {
			// The run finished before the kill: that run is complete and visible.
			t.Logf("run finished before SIGKILL at %dms", after)
			continue
		}
		if runs := listRuns(t, home); len(runs) != 0 {
			t.Fatalf("after SIGKILL at %dms, runs list shows %v", after, runs)
		}
	}
	// A clean run afterwards works and is the only run listed.
	if out, err := command(home, "run", cs).CombinedOutput(); err != nil {
		t.Fatalf("run after kills: %v\n%s", err, out)
	}
	runs := listRuns(t, home)
	if len(runs) != 1 || runs[0]["status"] != "complete" {
		t.Fatalf("runs after a clean run: %v", runs)
	}
	if out, err := command(home, "verify", runs[0]["run_id"].(string)).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}

func TestSIGINTStoresPartialRun(t *testing.T) {
	home := t.TempDir()
	cs := filepath.Join(home, "case.yaml")
	if err := os.WriteFile(cs, []byte(slowCase), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := command(home, "run", cs)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first trial has finished (the run logs it), so the
	// second is under way however slow the machine is.
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `msg="trial finished" trial=t0001`) {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	go io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Fatalf("exit after SIGINT: %v; want code %d", err, cli.ExitInterrupted)
	}
	runs := listRuns(t, home)
	if len(runs) != 1 || runs[0]["status"] != "partial" {
		t.Fatalf("runs after SIGINT: %v", runs)
	}
	if ok, total := runs[0]["trials_ok"].(float64), runs[0]["trials_total"].(float64); ok < 1 || total >= 3 {
		t.Fatalf("partial run has %v ok of %v trials; want at least 1 ok and fewer than 3 trials", ok, total)
	}
}
