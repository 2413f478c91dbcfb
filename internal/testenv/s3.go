// Package testenv gives tests the real services that scripts/test.sh
// starts (scripts/testenv/*.sh). A test asks for a service; when it is not
// configured the test skips — except in CI (CI=true), where it fails,
// because a skipped test must never count as a pass there (restic's
// SkipDisallowed).
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvS3Endpoint names the S3 server the tests use; scripts/testenv/minio.sh
// starts one and prints it with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
const EnvS3Endpoint = "PERFWH_TEST_S3_ENDPOINT"

// Missing skips t because service is not available, or fails it in CI.
func Missing(t testing.TB, service, how string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s missing, and CI=true forbids skipping: %s", service, how)
	}
	t.Skipf("%s not available: %s", service, how)
}

// S3Endpoint returns the test S3 server's endpoint URL.
func S3Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv(EnvS3Endpoint)
	if ep == "" {
		Missing(t, "S3 service", EnvS3Endpoint+` is not set; start one with: eval "$(scripts/testenv/minio.sh start /tmp/perfwh-minio)"`)
	}
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
		t.Fatalf("%s is set but AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not", EnvS3Endpoint)
	}
	return ep
}

// S3Client talks to the test server directly, bypassing perfwh.
func S3Client(t testing.TB) *minio.Client {
	t.Helper()
	u, err := url.Parse(S3Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
		Secure:       u.Scheme == "https",
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RandomHex returns n random bytes in hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// S3Bucket creates a bucket unique to this test, with Object Lock when
// locking is set. Plain buckets are removed with their content afterwards;
// locked ones cannot be, by design, and stay in the server's disposable
// data directory.
func S3Bucket(t testing.TB, locking bool) string {
	t.Helper()
	c := S3Client(t)
	name := "perfwh-test-" + RandomHex(6)
	ctx := context.Background()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1", ObjectLocking: locking}); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
	if !locking {
		t.Cleanup(func() {
			if err := c.RemoveBucketWithOptions(ctx, name, minio.RemoveBucketOptions{ForceDelete: true}); err != nil {
				t.Logf("remove bucket %s: %v", name, err)
			}
		})
	}
	return name
}
