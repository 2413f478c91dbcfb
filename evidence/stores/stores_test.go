package stores_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/evidence/s3"
	"github.com/perfwh/perfwh/evidence/stores"
)

func TestOpenLocal(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		raw, root string
	}{
		{"file://" + filepath.Join(dir, "a"), filepath.Join(dir, "a")},
		{"file://localhost" + filepath.Join(dir, "b"), filepath.Join(dir, "b")},
		{"file://" + filepath.Join(dir, "with space"), filepath.Join(dir, "with space")},
		{"file://" + filepath.Join(dir, "esc%20aped"), filepath.Join(dir, "esc aped")},
		{filepath.Join(dir, "plain"), filepath.Join(dir, "plain")},
		{"relative/store", filepath.Join(dir, "relative", "store")},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			be, err := stores.Open(context.Background(), tc.raw)
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.raw, err)
			}
			defer be.Close()
			lb, ok := be.(*local.Backend)
			if !ok {
				t.Fatalf("Open(%q) = %T; want *local.Backend", tc.raw, be)
			}
			if lb.Root() != tc.root {
				t.Errorf("root %q; want %q", lb.Root(), tc.root)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{"", "empty store URL"},
		{"gs://bucket/prefix", `unsupported store URL scheme "gs": use file:///path or s3://bucket/prefix`},
		{"HTTP://example.com/x", `unsupported store URL scheme "http"`},
		{"file://host/x", `host "host"`},
		{"file:///x?mode=ro", "no query"},
		{"s3://ab", `bucket "ab"`},
		{"s3://bucket?retention=forever&retention_days=1", `retention "forever"`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			be, err := stores.Open(context.Background(), tc.raw)
			if err == nil {
				be.Close()
				t.Fatalf("Open(%q) succeeded", tc.raw)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%q) = %v; want an error containing %q", tc.raw, err, tc.want)
			}
		})
	}
}

// TestOpenS3 needs the MinIO that scripts/testenv/minio.sh starts; in CI
// it must not be skipped.
func TestOpenS3(t *testing.T) {
	ep := os.Getenv("PERFWH_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("S3 service missing: PERFWH_TEST_S3_ENDPOINT is not set and CI=true forbids skipping")
		}
		t.Skip(`PERFWH_TEST_S3_ENDPOINT not set; eval "$(scripts/testenv/minio.sh start /tmp/perfwh-minio)"`)
	}
	u, err := url.Parse(ep)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(os.Getenv(s3.EnvAccessKeyID), os.Getenv(s3.EnvSecretAccessKey), ""),
		Secure: u.Scheme == "https", Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	bucket := "perfwh-stores-" + hex.EncodeToString(rnd[:])
	ctx := context.Background()
	if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.RemoveBucketWithOptions(ctx, bucket, minio.RemoveBucketOptions{ForceDelete: true}) })
	raw := "s3://" + bucket + "/evidence?endpoint=" + url.QueryEscape(ep) + "&region=us-east-1"
	be, err := stores.Open(ctx, raw)
	if err != nil {
		t.Fatalf("Open(%q): %v", raw, err)
	}
	defer be.Close()
	if _, ok := be.(*s3.Backend); !ok {
		t.Fatalf("Open(%q) = %T; want *s3.Backend", raw, be)
	}
	if got, want := be.URI("runs/x"), "s3://"+bucket+"/evidence/runs/x"; got != want {
		t.Errorf("URI = %q; want %q", got, want)
	}
}
