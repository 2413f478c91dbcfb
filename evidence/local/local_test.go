package local_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/evidence/storetest"
)

func newBackend(t *testing.T) evidence.Backend {
	t.Helper()
	be, err := local.Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// corrupt rewrites a stored file in place, as bit rot or a careless
// operator would: objects are read-only, so it makes the file writable
// first.
func corrupt(t *testing.T, be evidence.Backend, name string, data []byte) {
	t.Helper()
	p := filepath.Join(be.(*local.Backend).Root(), filepath.FromSlash(name))
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newBackend, storetest.Options{
		Corrupt:      corrupt,
		InvalidNames: []string{"tmp", "tmp/x"},
	})
}

func TestObjectsAreReadOnly(t *testing.T) {
	be := newBackend(t).(*local.Backend)
	ctx := context.Background()
	if err := be.Create(ctx, "a/b", bytes.NewReader([]byte("x")), 1); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, []byte("from file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateFromFile(ctx, "a/c", src); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a/b", "a/c"} {
		st, err := os.Stat(filepath.Join(be.Root(), filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o444 {
			t.Errorf("%s has mode %v; want 0444", name, st.Mode().Perm())
		}
	}
}

func TestCreateFromFileLinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	be, err := local.Open(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "staging", "samples.parquet") // same file system as the store
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("parquet bytes")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateFromFile(ctx, "blobs/x", src); err != nil {
		t.Fatal(err)
	}
	srcSt, _ := os.Stat(src)
	dstSt, err := os.Stat(filepath.Join(be.Root(), "blobs", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(srcSt, dstSt) {
		t.Errorf("stored object is a copy; want a hard link to the source")
	}
	if n := dstSt.Sys().(*syscall.Stat_t).Nlink; n != 2 {
		t.Errorf("link count %d; want 2 (source and object; no stray temporary link)", n)
	}
	if err := os.RemoveAll(filepath.Dir(src)); err != nil {
		t.Fatal(err)
	}
	rc, err := be.Open(ctx, "blobs/x")
	if err != nil {
		t.Fatalf("Open after removing the source: %v", err)
	}
	defer rc.Close()
	got := make([]byte, 100)
	n, _ := rc.Read(got)
	if !bytes.Equal(got[:n], data) {
		t.Errorf("content %q; want %q", got[:n], data)
	}
	if err := be.CreateFromFile(ctx, "blobs/x", filepath.Join(root, "missing")); err == nil {
		t.Errorf("CreateFromFile of an existing name from a missing file succeeded")
	}
	other := filepath.Join(root, "other")
	if err := os.WriteFile(other, []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := be.CreateFromFile(ctx, "blobs/x", other); !errors.Is(err, evidence.ErrExists) {
		t.Errorf("CreateFromFile over an existing object = %v; want ErrExists", err)
	}
}

func TestTmpIsNotListed(t *testing.T) {
	be := newBackend(t).(*local.Backend)
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(be.Root(), "tmp", "create-123"), []byte("half written"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := be.Create(ctx, "tmpfile", bytes.NewReader([]byte("x")), 1); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := be.List(ctx, "", func(oi evidence.ObjectInfo) error { got = append(got, oi.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"tmpfile"}) {
		t.Errorf("List = %q; want only tmpfile (root/tmp is private)", got)
	}
	if _, err := be.Stat(ctx, "tmp/create-123"); err == nil {
		t.Errorf("Stat of a temporary file succeeded")
	}
}

func TestDirectoriesAreNotObjects(t *testing.T) {
	be := newBackend(t)
	ctx := context.Background()
	if err := be.Create(ctx, "a/b", bytes.NewReader([]byte("x")), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := be.Stat(ctx, "a"); !errors.Is(err, evidence.ErrNotFound) {
		t.Errorf("Stat(dir) = %v; want ErrNotFound", err)
	}
	if rc, err := be.Open(ctx, "a"); !errors.Is(err, evidence.ErrNotFound) {
		if err == nil {
			rc.Close()
		}
		t.Errorf("Open(dir) = %v; want ErrNotFound", err)
	}
}

func TestListStaysInsideRoot(t *testing.T) {
	root := t.TempDir()
	be, err := local.Open(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "outside"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"../", "../out", "a/../../"} {
		err := be.List(context.Background(), prefix, func(oi evidence.ObjectInfo) error {
			t.Errorf("List(%q) returned %q from outside the store", prefix, oi.Name)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("List(%q) = %v", prefix, err)
		}
	}
}
