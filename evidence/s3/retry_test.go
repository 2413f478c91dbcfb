package s3_test

// These tests calibrate the retry policy against a scripted HTTP server
// (the one place a fake S3 is acceptable: a real server cannot be made to
// fail on cue). Everything else runs against MinIO.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/s3"
)

// fakeS3 answers bucket requests with 200 and hands object requests to
// script, numbering them per method from 1.
type fakeS3 struct {
	mu     sync.Mutex
	counts map[string]int
	script func(w http.ResponseWriter, r *http.Request, n int)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Trim(r.URL.Path, "/") == "bucket" && r.URL.Query().Get("list-type") == "" {
		return // HEAD bucket (BucketExists): 200
	}
	f.mu.Lock()
	f.counts[r.Method]++
	n := f.counts[r.Method]
	f.mu.Unlock()
	io.Copy(io.Discard, r.Body)
	f.script(w, r, n)
}

func (f *fakeS3) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[method]
}

// newFake starts a scripted server and a backend on it with fast retries.
func newFake(t *testing.T, attempts int, script func(w http.ResponseWriter, r *http.Request, n int)) (*fakeS3, *s3.Backend) {
	t.Helper()
	t.Setenv(s3.EnvAccessKeyID, "test-id")
	t.Setenv(s3.EnvSecretAccessKey, "test-secret")
	f := &fakeS3{counts: map[string]int{}, script: script}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	be, err := s3.New(context.Background(), s3.Config{
		Bucket: "bucket", Prefix: "p", Endpoint: srv.URL, Region: "us-east-1",
		MaxAttempts: attempts, RetryBase: time.Millisecond, RetryMax: 4 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return f, be
}

func s3Error(w http.ResponseWriter, r *http.Request, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>scripted</Message><Resource>%s</Resource><RequestId>1</RequestId></Error>`, code, r.URL.Path)
	}
}

func objectHeaders(w http.ResponseWriter, size int, token string) {
	h := w.Header()
	h.Set("Content-Length", strconv.Itoa(size))
	h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	h.Set("ETag", `"0123456789abcdef0123456789abcdef"`)
	if token != "" {
		h.Set("X-Amz-Meta-Perfwh-Create-Token", token)
	}
}

// hangUp closes the connection without an answer, as a reset would.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

func TestRetryTransient(t *testing.T) {
	ctx := context.Background()
	data := []byte("evidence")
	t.Run("PUT 503 twice then 200", func(t *testing.T) {
		f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.Header.Get("If-None-Match") != "*" {
				t.Errorf("PUT %d without If-None-Match: *", n)
			}
			if n <= 2 {
				s3Error(w, r, http.StatusServiceUnavailable, "SlowDown")
				return
			}
			w.Header().Set("ETag", `"x"`)
		})
		if err := be.Create(ctx, "a", bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if got := f.count(http.MethodPut); got != 3 {
			t.Errorf("%d PUTs; want 3", got)
		}
	})
	t.Run("HEAD 500 then 200", func(t *testing.T) {
		f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				s3Error(w, r, http.StatusInternalServerError, "InternalError")
				return
			}
			objectHeaders(w, 8, "")
		})
		if info, err := be.Stat(ctx, "a"); err != nil || info.Size != 8 {
			t.Fatalf("Stat = %+v, %v; want 8 bytes", info, err)
		}
		if got := f.count(http.MethodHead); got != 2 {
			t.Errorf("%d HEADs; want 2", got)
		}
	})
	t.Run("GET connection reset twice then 200", func(t *testing.T) {
		f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
			if n <= 2 {
				hangUp(t, w)
				return
			}
			objectHeaders(w, len(data), "")
			w.Write(data)
		})
		rc, err := be.Open(ctx, "a")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("read %q, %v; want %q", got, err, data)
		}
		if got := f.count(http.MethodGet); got != 3 {
			t.Errorf("%d GETs; want 3", got)
		}
	})
	t.Run("LIST 429 then 200", func(t *testing.T) {
		f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				s3Error(w, r, http.StatusTooManyRequests, "SlowDown")
				return
			}
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix>p/</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><Contents><Key>p/runs/x</Key><LastModified>2025-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass></Contents></ListBucketResult>`)
		})
		var got []string
		err := be.List(ctx, "runs/", func(oi evidence.ObjectInfo) error { got = append(got, oi.Name); return nil })
		if err != nil || len(got) != 1 || got[0] != "runs/x" {
			t.Errorf("List = %q, %v; want [runs/x]", got, err)
		}
		if got := f.count(http.MethodGet); got != 2 {
			t.Errorf("%d list requests; want 2", got)
		}
	})
}

func TestRetryPermanent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		code   string
		exists bool // maps to ErrExists
	}{
		{http.StatusForbidden, "AccessDenied", false},
		{http.StatusBadRequest, "InvalidArgument", false},
		{http.StatusNotFound, "NoSuchBucket", false},
		{http.StatusPreconditionFailed, "PreconditionFailed", true},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.Method == http.MethodHead { // the token check after a 412
					objectHeaders(w, 3, "someone-else")
					return
				}
				s3Error(w, r, tc.status, tc.code)
			})
			err := be.Create(ctx, "runs/r1", strings.NewReader("abc"), 3)
			if err == nil {
				t.Fatal("Create succeeded")
			}
			if got := f.count(http.MethodPut); got != 1 {
				t.Errorf("%d PUTs; want 1 (not retried)", got)
			}
			if errors.Is(err, evidence.ErrExists) != tc.exists {
				t.Errorf("Create = %v; ErrExists %v, want %v", err, !tc.exists, tc.exists)
			}
			if !strings.Contains(err.Error(), "s3://bucket/p/runs/r1") {
				t.Errorf("error %q does not name the object", err)
			}
		})
	}
	t.Run("404 on HEAD is ErrNotFound at once", func(t *testing.T) {
		f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
			s3Error(w, r, http.StatusNotFound, "NoSuchKey")
		})
		if _, err := be.Stat(ctx, "x"); !errors.Is(err, evidence.ErrNotFound) {
			t.Errorf("Stat = %v; want ErrNotFound", err)
		}
		if got := f.count(http.MethodHead); got != 1 {
			t.Errorf("%d HEADs; want 1", got)
		}
	})
}

func TestRetryGivesUp(t *testing.T) {
	f, be := newFake(t, 3, func(w http.ResponseWriter, r *http.Request, n int) {
		s3Error(w, r, http.StatusServiceUnavailable, "ServiceUnavailable")
	})
	err := be.Create(context.Background(), "a", strings.NewReader("abc"), 3)
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "s3://bucket/p/a") {
		t.Errorf("Create = %v; want the object named and 'gave up after 3 attempts'", err)
	}
	if got := f.count(http.MethodPut); got != 3 {
		t.Errorf("%d PUTs; want 3", got)
	}
}

// TestRetryLostAnswer: the first PUT is stored but its answer lost; the
// retry is refused (412) and Create recognises its own token.
func TestRetryLostAnswer(t *testing.T) {
	var stored string
	f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.Method == http.MethodPut && n == 1:
			stored = r.Header.Get("X-Amz-Meta-Perfwh-Create-Token")
			hangUp(t, w)
		case r.Method == http.MethodPut:
			s3Error(w, r, http.StatusPreconditionFailed, "PreconditionFailed")
		case r.Method == http.MethodHead:
			objectHeaders(w, 3, stored)
		}
	})
	if err := be.Create(context.Background(), "runs/r1", strings.NewReader("abc"), 3); err != nil {
		t.Fatalf("Create = %v; want success (the first attempt stored it)", err)
	}
	if stored == "" {
		t.Error("PUT carried no create token")
	}
	if got := f.count(http.MethodPut); got != 2 {
		t.Errorf("%d PUTs; want 2", got)
	}
}

func TestRetryNeedsReplayableBody(t *testing.T) {
	f, be := newFake(t, 5, func(w http.ResponseWriter, r *http.Request, n int) {
		s3Error(w, r, http.StatusServiceUnavailable, "SlowDown")
	})
	size := 9 << 20 // above the in-memory buffering limit
	stream := io.MultiReader(bytes.NewReader(make([]byte, size)))
	if err := be.Create(context.Background(), "big", stream, int64(size)); err == nil {
		t.Fatal("Create succeeded")
	}
	if got := f.count(http.MethodPut); got != 1 {
		t.Errorf("%d PUTs of a stream that cannot be re-read; want 1", got)
	}
}

func TestRetryHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv(s3.EnvAccessKeyID, "test-id")
	t.Setenv(s3.EnvSecretAccessKey, "test-secret")
	f := &fakeS3{counts: map[string]int{}, script: func(w http.ResponseWriter, r *http.Request, n int) {
		cancel() // during the (hour-long) backoff that follows
		s3Error(w, r, http.StatusServiceUnavailable, "SlowDown")
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	be, err := s3.New(context.Background(), s3.Config{Bucket: "bucket", Endpoint: srv.URL, Region: "us-east-1", RetryBase: time.Hour, RetryMax: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = be.Create(ctx, "a", strings.NewReader("abc"), 3)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("Create = %v after %v; want context.Canceled at once", err, time.Since(start))
	}
}

func TestBackoff(t *testing.T) {
	t.Setenv(s3.EnvAccessKeyID, "test-id")
	t.Setenv(s3.EnvSecretAccessKey, "test-secret")
	srv := httptest.NewServer(&fakeS3{counts: map[string]int{}})
	defer srv.Close()
	be, err := s3.New(context.Background(), s3.Config{Bucket: "bucket", Endpoint: srv.URL, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if c := be.Config(); c.MaxAttempts != s3.DefaultMaxAttempts || c.RetryBase != s3.DefaultRetryBase || c.RetryMax != s3.DefaultRetryMax {
		t.Errorf("defaults not applied: %+v", c)
	}
	var total time.Duration
	for n := 1; n < s3.DefaultMaxAttempts; n++ {
		ceiling := min(s3.DefaultRetryBase<<(n-1), s3.DefaultRetryMax)
		for range 100 {
			if d := be.Backoff(n); d < ceiling/2 || d > ceiling {
				t.Fatalf("Backoff(%d) = %v; want in [%v, %v]", n, d, ceiling/2, ceiling)
			}
		}
		total += ceiling
	}
	if total > 8*time.Second {
		t.Errorf("worst-case total backoff %v; the documented bound is 7.5s", total)
	}
}
