package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/s3"
	"github.com/perfwh/perfwh/evidence/storetest"
	"github.com/perfwh/perfwh/internal/testenv"
)

func endpoint(t *testing.T) string             { return testenv.S3Endpoint(t) }
func rawClient(t *testing.T) *minio.Client     { return testenv.S3Client(t) }
func randomHex(n int) string                   { return testenv.RandomHex(n) }
func newBucket(t *testing.T, lock bool) string { return testenv.S3Bucket(t, lock) }

var prefixSeq atomic.Int64

// newBackend returns a backend on a fresh prefix of bucket.
func newBackend(t *testing.T, cfg s3.Config) *s3.Backend {
	t.Helper()
	cfg.Endpoint = endpoint(t)
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Prefix == "" {
		cfg.Prefix = fmt.Sprintf("store/%d", prefixSeq.Add(1))
	}
	be, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("s3.New(%s): %v", cfg, err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// corrupt overwrites an object with the raw client (an unconditional PUT),
// as someone holding the bucket's credentials could. In a versioned
// (Object Lock) bucket this adds a new latest version; the original version
// survives, but reads now see the tampered one.
func corrupt(t *testing.T, be evidence.Backend, name string, data []byte) {
	t.Helper()
	b := be.(*s3.Backend)
	_, err := rawClient(t).PutObject(context.Background(), b.Config().Bucket, b.Key(name), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("corrupt %s: %v", b.URI(name), err)
	}
}

func TestConformance(t *testing.T) {
	endpoint(t)
	bucket := newBucket(t, false)
	storetest.Run(t, func(t *testing.T) evidence.Backend {
		return newBackend(t, s3.Config{Bucket: bucket})
	}, storetest.Options{Corrupt: corrupt})
}

func TestConformanceObjectLock(t *testing.T) {
	endpoint(t)
	bucket := newBucket(t, true)
	storetest.Run(t, func(t *testing.T) evidence.Backend {
		return newBackend(t, s3.Config{Bucket: bucket, Retention: s3.RetentionGovernance, RetentionDays: 1, PartSize: s3.MinPartSize})
	}, storetest.Options{Corrupt: corrupt})
}

// TestConformanceMultipart runs the suite with the smallest part size, so
// its large objects (and failed large creations) go through multipart
// uploads, and then checks that no failed upload was left incomplete.
func TestConformanceMultipart(t *testing.T) {
	endpoint(t)
	bucket := newBucket(t, false)
	storetest.Run(t, func(t *testing.T) evidence.Backend {
		return newBackend(t, s3.Config{Bucket: bucket, PartSize: s3.MinPartSize})
	}, storetest.Options{Corrupt: corrupt, LargeSize: 11 << 20})
	for u := range rawClient(t).ListIncompleteUploads(context.Background(), bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		t.Errorf("incomplete multipart upload left behind: %s (%s)", u.Key, u.UploadID)
	}
}

// TestMultipartIsConditional checks that the server refuses to complete a
// multipart upload over an existing object when asked with If-None-Match:
// *, the guarantee Create relies on above PartSize.
func TestMultipartIsConditional(t *testing.T) {
	ctx := context.Background()
	c := rawClient(t)
	bucket := newBucket(t, false)
	be := newBackend(t, s3.Config{Bucket: bucket, PartSize: s3.MinPartSize})
	size := 11 << 20
	orig := bytes.Repeat([]byte("o"), size)

	t.Run("backend", func(t *testing.T) {
		for i, r := range []io.Reader{bytes.NewReader(orig), io.MultiReader(bytes.NewReader(orig))} {
			name := fmt.Sprintf("big/%d", i)
			if err := be.Create(ctx, name, r, int64(size)); err != nil {
				t.Fatalf("Create: %v", err)
			}
			oi, err := c.StatObject(ctx, bucket, be.Key(name), minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(oi.ETag, "-") {
				t.Errorf("ETag %q: object was not uploaded in parts", oi.ETag)
			}
			for _, r := range []io.Reader{bytes.NewReader(bytes.Repeat([]byte("n"), size)), io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("n"), size)))} {
				if err := be.Create(ctx, name, r, int64(size)); !errors.Is(err, evidence.ErrExists) {
					t.Errorf("multipart overwrite = %v; want ErrExists", err)
				}
			}
			checkContent(t, be, name, orig)
		}
	})

	t.Run("complete after the object appeared", func(t *testing.T) {
		core := minio.Core{Client: c}
		key := be.Key("race")
		opts := minio.PutObjectOptions{}
		opts.SetMatchETagExcept("*")
		id, err := core.NewMultipartUpload(ctx, bucket, key, opts)
		if err != nil {
			t.Fatal(err)
		}
		part, err := core.PutObjectPart(ctx, bucket, key, id, 1, bytes.NewReader(bytes.Repeat([]byte("n"), 5<<20)), 5<<20, minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := be.Create(ctx, "race", bytes.NewReader(orig[:100]), 100); err != nil {
			t.Fatal(err)
		}
		_, err = core.CompleteMultipartUpload(ctx, bucket, key, id, []minio.CompletePart{{PartNumber: 1, ETag: part.ETag}}, opts)
		if er := minio.ToErrorResponse(err); er.StatusCode != 412 {
			t.Errorf("conditional CompleteMultipartUpload over an existing object = %v; want 412 PreconditionFailed", err)
		}
		checkContent(t, be, "race", orig[:100])
	})

	t.Run("concurrent", func(t *testing.T) {
		const writers = 4
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = be.Create(ctx, "contended", bytes.NewReader(bytes.Repeat([]byte{byte('a' + i)}, size)), int64(size))
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("writers %d and %d both succeeded", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, evidence.ErrExists):
				t.Errorf("writer %d: %v", i, err)
			}
		}
		if winner >= 0 {
			checkContent(t, be, "contended", bytes.Repeat([]byte{byte('a' + winner)}, size))
		}
	})
}

func checkContent(t *testing.T, be evidence.Backend, name string, want []byte) {
	t.Helper()
	rc, err := be.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	d, n, err := evidence.DigestReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	if d != evidence.Sum(want) || n != int64(len(want)) {
		t.Errorf("%s: %d bytes, %s; want %d bytes, %s", name, n, d.Short(), len(want), evidence.Sum(want).Short())
	}
}

func TestObjectLock(t *testing.T) {
	ctx := context.Background()
	c := rawClient(t)
	bucket := newBucket(t, true)
	for _, tc := range []struct {
		retention string
		mode      minio.RetentionMode
	}{
		{s3.RetentionGovernance, minio.Governance},
		{s3.RetentionCompliance, minio.Compliance},
	} {
		t.Run(tc.retention, func(t *testing.T) {
			be := newBackend(t, s3.Config{Bucket: bucket, Retention: tc.retention, RetentionDays: 1, PartSize: s3.MinPartSize})
			data := []byte("locked evidence")
			big := bytes.Repeat([]byte("b"), s3.MinPartSize+1) // multipart
			before := time.Now()
			var oi minio.ObjectInfo
			for _, obj := range []struct {
				name string
				data []byte
			}{{"blobs/big", big}, {"runs/locked", data}} {
				if err := be.Create(ctx, obj.name, bytes.NewReader(obj.data), int64(len(obj.data))); err != nil {
					t.Fatalf("Create(%s): %v", obj.name, err)
				}
				var err error
				oi, err = c.StatObject(ctx, bucket, be.Key(obj.name), minio.StatObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				mode, until, err := c.GetObjectRetention(ctx, bucket, be.Key(obj.name), oi.VersionID)
				if err != nil {
					t.Fatalf("GetObjectRetention(%s): %v", obj.name, err)
				}
				wantUntil := before.Add(24 * time.Hour)
				if mode == nil || *mode != tc.mode || until == nil || until.Before(wantUntil.Add(-time.Minute)) || until.After(wantUntil.Add(time.Minute)) {
					t.Errorf("%s: retention %v until %v; want %s until about %v", obj.name, mode, until, tc.mode, wantUntil)
				}
			}

			err := be.Create(ctx, "runs/locked", strings.NewReader("overwrite"), 9)
			if !errors.Is(err, evidence.ErrExists) {
				t.Errorf("overwrite through the backend = %v; want ErrExists", err)
			}
			err = c.RemoveObject(ctx, bucket, be.Key("runs/locked"), minio.RemoveObjectOptions{VersionID: oi.VersionID})
			if err == nil {
				t.Fatalf("deleting the locked version succeeded; want the server to refuse")
			}
			t.Logf("delete of the locked version refused: %v", err)
			if tc.mode == minio.Compliance {
				err = c.RemoveObject(ctx, bucket, be.Key("runs/locked"), minio.RemoveObjectOptions{VersionID: oi.VersionID, GovernanceBypass: true})
				if err == nil {
					t.Fatalf("deleting a compliance-locked version with governance bypass succeeded")
				}
			}
			checkContent(t, be, "runs/locked", data)
		})
	}

	t.Run("bucket without object lock", func(t *testing.T) {
		plain := newBucket(t, false)
		_, err := s3.New(ctx, s3.Config{Bucket: plain, Endpoint: endpoint(t), Region: "us-east-1", Retention: s3.RetentionGovernance, RetentionDays: 1})
		if err == nil || !strings.Contains(err.Error(), "Object Lock") {
			t.Errorf("New with retention on a plain bucket = %v; want an error about Object Lock", err)
		}
	})
}

func TestMissingBucket(t *testing.T) {
	_, err := s3.New(context.Background(), s3.Config{Bucket: "perfwh-test-missing-" + randomHex(4), Endpoint: endpoint(t), Region: "us-east-1"})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("New on a missing bucket = %v; want 'does not exist'", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	ep := endpoint(t)
	bucket := newBucket(t, false)
	secret := "wrong-secret-" + randomHex(8)
	t.Setenv(s3.EnvSecretAccessKey, secret)
	_, err := s3.New(context.Background(), s3.Config{Bucket: bucket, Endpoint: ep, Region: "us-east-1", MaxAttempts: 3, RetryBase: time.Millisecond})
	if err == nil {
		t.Fatal("New with a wrong secret succeeded")
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "attempts") {
		t.Errorf("error %q repeats the secret or was retried", err)
	}
}
