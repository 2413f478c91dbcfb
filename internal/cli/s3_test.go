package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/perfwh/perfwh/internal/testenv"
)

// The user contract against S3-compatible storage: the same commands, a
// --store URL, credentials from the environment, on a real MinIO.
func TestRunVerifyOnS3(t *testing.T) {
	ep := testenv.S3Endpoint(t)
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("object_lock=%v", locked), func(t *testing.T) {
			bucket := testenv.S3Bucket(t, locked)
			store := fmt.Sprintf("s3://%s/team-a?endpoint=%s&region=us-east-1", bucket, ep)
			if locked {
				store += "&retention=governance&retention_days=1"
			}
			home := t.TempDir()
			cs := writeCase(t, smallCase)
			type runDoc struct {
				RunID string         `json:"run_id"`
				Store map[string]any `json:"store"`
			}
			var first, second runDoc
			for _, doc := range []*runDoc{&first, &second} {
				out, stderr, code := perfwh(t, home, "--store", store, "run", cs, "-o", "json")
				if code != 0 {
					t.Fatalf("run on S3: exit %d\n%s\n%s", code, out, stderr)
				}
				if err := json.Unmarshal([]byte(out), doc); err != nil {
					t.Fatal(err)
				}
			}
			if !strings.HasPrefix(first.Store["manifest_uri"].(string), "s3://"+bucket+"/team-a/manifests/sha256/") {
				t.Fatalf("manifest uri %v", first.Store["manifest_uri"])
			}
			if second.Store["blobs_existing"].(float64) < 4 {
				t.Fatalf("second run re-stored unchanged blobs: %v", second.Store)
			}
			out, _, code := perfwh(t, home, "--store", store, "runs", "list")
			if code != 0 || !strings.Contains(out, first.RunID) || !strings.Contains(out, second.RunID) {
				t.Fatalf("runs list on S3 (exit %d):\n%s", code, out)
			}
			if out, _, code := perfwh(t, home, "--store", store, "verify", first.RunID); code != 0 {
				t.Fatalf("verify on S3: exit %d\n%s", code, out)
			}
			// Replace a blob behind perfwh's back (a raw unconditional PUT, as a
			// holder of the bucket's keys could): verify names it.
			var show struct {
				Files []struct {
					Path string `json:"path"`
					URI  string `json:"uri"`
				} `json:"files"`
			}
			out, _, _ = perfwh(t, home, "--store", store, "runs", "show", first.RunID, "-o", "json")
			if err := json.Unmarshal([]byte(out), &show); err != nil {
				t.Fatal(err)
			}
			var victim string
			for _, f := range show.Files {
				if f.Path == "trials/t0001/samples.parquet" {
					victim = f.URI
				}
			}
			key := strings.TrimPrefix(victim, "s3://"+bucket+"/")
			junk := []byte("not the evidence")
			if _, err := testenv.S3Client(t).PutObject(context.Background(), bucket, key, bytes.NewReader(junk), int64(len(junk)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := perfwh(t, home, "--store", store, "verify", first.RunID)
			if code != ExitFailure || !strings.Contains(stderr, victim) {
				t.Fatalf("verify after tampering: exit %d\n%s", code, stderr)
			}
		})
	}
}
