package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/perfwh/perfwh/evidence"
)

// Options adapts the suite to a backend. The zero value runs every subtest
// that needs no hook.
type Options struct {
	// Corrupt replaces the content of the stored object name with data,
	// bypassing the backend's write-once rule, as bit rot or someone with
	// direct access to the storage would. Nil skips the subtests that
	// corrupt an object after a correct write; corruption by an object
	// stored under the wrong name is tested on every backend.
	Corrupt func(t *testing.T, be evidence.Backend, name string, data []byte)

	// InvalidNames are names this backend rejects beyond the common ones
	// (such as the local backend's "tmp/…").
	InvalidNames []string

	// LargeSize is the size of the large objects of the round-trip and
	// failed-create subtests; 0 means 12 MiB, enough to pass the S3
	// backend's in-memory buffering limit.
	LargeSize int
}

// Run runs the conformance suite. newBackend returns a fresh, empty backend
// for each subtest and arranges its own cleanup; at most one Options may be
// given.
func Run(t *testing.T, newBackend func(t *testing.T) evidence.Backend, opts ...Options) {
	t.Helper()
	var o Options
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		t.Fatalf("storetest.Run: %d Options given, want at most one", len(opts))
	}
	if o.LargeSize == 0 {
		o.LargeSize = 12 << 20
	}
	s := &suite{newBackend: newBackend, opts: o}
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"RoundTrip", s.testRoundTrip},
		{"CreateExisting", s.testCreateExisting},
		{"ConcurrentCreate", s.testConcurrentCreate},
		{"NotFound", s.testNotFound},
		{"List", s.testList},
		{"ListStops", s.testListStops},
		{"FailedCreate", s.testFailedCreate},
		{"InvalidNames", s.testInvalidNames},
		{"Repository", s.testRepository},
	} {
		t.Run(tc.name, tc.fn)
	}
}

type suite struct {
	newBackend func(t *testing.T) evidence.Backend
	opts       Options
}

// payload returns n pseudo-random bytes, different for each seed.
func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func create(t *testing.T, be evidence.Backend, name string, data []byte) {
	t.Helper()
	if err := be.Create(context.Background(), name, bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("Create(%q): %v", name, err)
	}
}

func read(t *testing.T, be evidence.Backend, name string) []byte {
	t.Helper()
	rc, err := be.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", name, err)
	}
	return b
}

func list(t *testing.T, be evidence.Backend, prefix string) []evidence.ObjectInfo {
	t.Helper()
	var out []evidence.ObjectInfo
	err := be.List(context.Background(), prefix, func(oi evidence.ObjectInfo) error {
		out = append(out, oi)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return out
}

func names(infos []evidence.ObjectInfo) []string {
	out := []string{}
	for _, oi := range infos {
		out = append(out, oi.Name)
	}
	return out
}

// assertAbsent checks that name neither exists nor is listed.
func assertAbsent(t *testing.T, be evidence.Backend, name string) {
	t.Helper()
	if _, err := be.Stat(context.Background(), name); !errors.Is(err, evidence.ErrNotFound) {
		t.Errorf("Stat(%q) = %v; want ErrNotFound", name, err)
	}
	if got := names(list(t, be, "")); len(got) != 0 {
		t.Errorf("List(\"\") = %q; want no objects", got)
	}
}

// sameBytes compares without printing megabytes on failure.
func sameBytes(got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("got %d bytes (sha %s); want %d bytes (sha %s)",
		len(got), evidence.Sum(got).Short(), len(want), evidence.Sum(want).Short())
}
