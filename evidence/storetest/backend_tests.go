package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perfwh/perfwh/evidence"
)

func (s *suite) testRoundTrip(t *testing.T) {
	be := s.newBackend(t)
	for i, tc := range []struct {
		name string
		size int
	}{
		{"empty", 0},
		{"one", 1},
		{"dir/small", 1000},
		{"dir/sub/mib", 1<<20 + 7},
		{"large", s.opts.LargeSize},
	} {
		t.Run(strings.ReplaceAll(tc.name, "/", "_"), func(t *testing.T) {
			data := payload(uint64(i), tc.size)
			create(t, be, tc.name, data)
			info, err := be.Stat(context.Background(), tc.name)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if info.Name != tc.name || info.Size != int64(tc.size) {
				t.Errorf("Stat = {%q, %d}; want {%q, %d}", info.Name, info.Size, tc.name, tc.size)
			}
			if info.ModTime.IsZero() {
				t.Errorf("Stat: zero ModTime")
			}
			if err := sameBytes(read(t, be, tc.name), data); err != nil {
				t.Errorf("Open: %v", err)
			}
			listed := list(t, be, tc.name)
			if len(listed) != 1 || listed[0].Name != tc.name || listed[0].Size != int64(tc.size) {
				t.Errorf("List(%q) = %+v; want only %q of %d bytes", tc.name, listed, tc.name, tc.size)
			}
			if uri := be.URI(tc.name); !strings.HasSuffix(uri, "/"+tc.name) || !strings.Contains(uri, "://") {
				t.Errorf("URI(%q) = %q; want scheme://…/%s", tc.name, uri, tc.name)
			}
		})
	}
}

func (s *suite) testCreateExisting(t *testing.T) {
	be := s.newBackend(t)
	orig := payload(1, 4096)
	create(t, be, "runs/r1", orig)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"same content", orig},
		{"other content", payload(2, 4096)},
		{"other size", payload(3, 10)},
		{"empty", nil},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			err := be.Create(context.Background(), "runs/r1", bytes.NewReader(tc.data), int64(len(tc.data)))
			if !errors.Is(err, evidence.ErrExists) {
				t.Fatalf("second Create = %v; want ErrExists", err)
			}
			if !strings.Contains(err.Error(), be.URI("runs/r1")) {
				t.Errorf("error %q does not name %s", err, be.URI("runs/r1"))
			}
			if err := sameBytes(read(t, be, "runs/r1"), orig); err != nil {
				t.Errorf("content after refused overwrite: %v", err)
			}
		})
	}
}

func (s *suite) testConcurrentCreate(t *testing.T) {
	be := s.newBackend(t)
	const writers = 8
	for _, size := range []int{100, 256 << 10} {
		name := fmt.Sprintf("concurrent/%d", size)
		datas := make([][]byte, writers)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			datas[i] = payload(uint64(100+i), size)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = be.Create(context.Background(), name, bytes.NewReader(datas[i]), int64(size))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("size %d: writers %d and %d both succeeded", size, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, evidence.ErrExists):
				t.Errorf("size %d: writer %d: %v; want nil or ErrExists", size, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("size %d: no writer succeeded", size)
		}
		if err := sameBytes(read(t, be, name), datas[winner]); err != nil {
			t.Errorf("size %d: content is not the winner's: %v", size, err)
		}
	}
}

func (s *suite) testNotFound(t *testing.T) {
	be := s.newBackend(t)
	create(t, be, "a/b", []byte("x"))
	for _, name := range []string{"missing", "a/missing", "a/b/c", "blobs/sha256/00/" + strings.Repeat("0", 64)} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			rc, err := be.Open(context.Background(), name)
			if err == nil {
				rc.Close()
			}
			if !errors.Is(err, evidence.ErrNotFound) {
				t.Errorf("Open = %v; want ErrNotFound", err)
			} else if !strings.Contains(err.Error(), be.URI(name)) {
				t.Errorf("Open error %q does not name %s", err, be.URI(name))
			}
			_, err = be.Stat(context.Background(), name)
			if !errors.Is(err, evidence.ErrNotFound) {
				t.Errorf("Stat = %v; want ErrNotFound", err)
			} else if !strings.Contains(err.Error(), be.URI(name)) {
				t.Errorf("Stat error %q does not name %s", err, be.URI(name))
			}
		})
	}
}

func (s *suite) testList(t *testing.T) {
	be := s.newBackend(t)
	// No name is a "directory" of another, so every backend can hold them;
	// '-' sorts before '/', which sorts before digits and letters.
	all := []string{"a-b", "a/b", "a/c-d", "a/c/d", "a1", "ab", "b/x", "b/y/z"}
	for _, n := range []int{6, 0, 3, 7, 1, 5, 2, 4} { // out of order; sizes say which
		create(t, be, all[n], payload(uint64(n), n+1))
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"a", all[:6]},
		{"a/", []string{"a/b", "a/c-d", "a/c/d"}},
		{"a/c", []string{"a/c-d", "a/c/d"}}, // ends mid-name
		{"a/c/", []string{"a/c/d"}},
		{"a/c/d", []string{"a/c/d"}}, // a whole name
		{"b/", []string{"b/x", "b/y/z"}},
		{"b/y/z/", nil},
		{"b/y/z/w/", nil}, // through an object
		{"zz", nil},
		{"c/", nil},
	} {
		t.Run("prefix="+tc.prefix, func(t *testing.T) {
			got := list(t, be, tc.prefix)
			if !slices.Equal(names(got), tc.want) && len(got)+len(tc.want) > 0 {
				t.Fatalf("List(%q) = %q; want %q", tc.prefix, names(got), tc.want)
			}
			for _, oi := range got {
				if oi.Size != int64(slices.Index(all, oi.Name)+1) {
					t.Errorf("List: %s has size %d; want %d", oi.Name, oi.Size, slices.Index(all, oi.Name)+1)
				}
			}
		})
	}
}

func (s *suite) testListStops(t *testing.T) {
	be := s.newBackend(t)
	for _, n := range []string{"x/1", "x/2", "x/3"} {
		create(t, be, n, []byte(n))
	}
	stop := errors.New("stop here")
	var seen []string
	err := be.List(context.Background(), "x/", func(oi evidence.ObjectInfo) error {
		seen = append(seen, oi.Name)
		if len(seen) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("List = %v; want the callback's error", err)
	}
	if !slices.Equal(seen, []string{"x/1", "x/2"}) {
		t.Errorf("callback saw %q; want [x/1 x/2]", seen)
	}
}

// failingReader yields data, then fails with err after limit bytes.
type failingReader struct {
	data  []byte
	limit int
	err   error
	after func() // called when the limit is reached
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.limit <= 0 {
		if f.after != nil {
			f.after()
			f.after = nil
			return f.readMore(p)
		}
		return 0, f.err
	}
	p = p[:min(len(p), f.limit, len(f.data))]
	n := copy(p, f.data)
	f.data, f.limit = f.data[n:], f.limit-n
	return n, nil
}

func (f *failingReader) readMore(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

var errInjected = errors.New("injected reader failure")

func (s *suite) testFailedCreate(t *testing.T) {
	for _, size := range []int{64 << 10, s.opts.LargeSize} {
		for _, tc := range []struct {
			name string
			// body returns the reader and the size to pass for data.
			body func(data []byte, cancel context.CancelFunc) (io.Reader, int64)
			ctx  func() (context.Context, context.CancelFunc)
		}{
			{"reader fails midway", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return &failingReader{data: d, limit: len(d) / 2, err: errInjected}, int64(len(d))
			}, nil},
			{"ctx cancelled midway", func(d []byte, cancel context.CancelFunc) (io.Reader, int64) {
				return &failingReader{data: d, limit: len(d) / 2, after: cancel}, int64(len(d))
			}, nil},
			{"ctx cancelled before", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return bytes.NewReader(d), int64(len(d))
			}, func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			}},
			{"size larger than content", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return bytes.NewReader(d), int64(len(d)) + 1
			}, nil},
			{"size smaller than content", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return bytes.NewReader(d), int64(len(d)) - 1
			}, nil},
			{"stream larger than size", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return io.MultiReader(bytes.NewReader(d)), int64(len(d)) - 1
			}, nil},
			{"stream shorter than size", func(d []byte, _ context.CancelFunc) (io.Reader, int64) {
				return io.MultiReader(bytes.NewReader(d)), int64(len(d)) + 1
			}, nil},
		} {
			t.Run(strings.ReplaceAll(tc.name, " ", "_")+"/"+sizeName(size), func(t *testing.T) {
				be := s.newBackend(t)
				ctx, cancel := context.WithCancel(context.Background())
				if tc.ctx != nil {
					ctx, cancel = tc.ctx()
				}
				defer cancel()
				data := payload(7, size)
				r, n := tc.body(data, cancel)
				if err := be.Create(ctx, "obj/x", r, n); err == nil {
					t.Fatalf("Create succeeded; want an error")
				}
				assertAbsent(t, be, "obj/x")
				// The name is not poisoned: a proper Create succeeds.
				create(t, be, "obj/x", data)
				if err := sameBytes(read(t, be, "obj/x"), data); err != nil {
					t.Errorf("after retry: %v", err)
				}
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

func (s *suite) testInvalidNames(t *testing.T) {
	be := s.newBackend(t)
	invalid := append([]string{"", ".", "..", "/abs", "../up", "a/../b", "a/./b", "./a", "a//b", "dir/", `a\b`}, s.opts.InvalidNames...)
	for _, name := range invalid {
		t.Run("name="+name, func(t *testing.T) {
			ctx := context.Background()
			if err := be.Create(ctx, name, strings.NewReader("x"), 1); err == nil {
				t.Errorf("Create(%q) succeeded; want an error", name)
			}
			if rc, err := be.Open(ctx, name); err == nil {
				rc.Close()
				t.Errorf("Open(%q) succeeded; want an error", name)
			}
			if _, err := be.Stat(ctx, name); err == nil {
				t.Errorf("Stat(%q) succeeded; want an error", name)
			}
		})
	}
	if got := names(list(t, be, "")); len(got) != 0 {
		t.Errorf("List after invalid creates = %q; want nothing", got)
	}
}
