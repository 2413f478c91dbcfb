package s3_test

import (
	"context"
	"strings"
	"testing"

	"github.com/perfwh/perfwh/evidence/s3"
)

func TestParseURL(t *testing.T) {
	f := func(raw string, want s3.Config) {
		t.Helper()
		got, err := s3.ParseURL(raw)
		if err != nil {
			t.Fatalf("ParseURL(%q): %v", raw, err)
		}
		if got != want {
			t.Fatalf("ParseURL(%q) = %+v; want %+v", raw, got, want)
		}
		again, err := s3.ParseURL(got.String())
		if err != nil || again != got {
			t.Fatalf("ParseURL(%q.String() = %q) = %+v, %v; want %+v", raw, got.String(), again, err, got)
		}
	}
	f("s3://bucket", s3.Config{Bucket: "bucket"})
	f("s3://bucket/", s3.Config{Bucket: "bucket"})
	f("s3://my-bucket/perf/evidence/", s3.Config{Bucket: "my-bucket", Prefix: "perf/evidence"})
	f("s3://bk1/p?endpoint=http://127.0.0.1:9000&region=us-east-1", s3.Config{Bucket: "bk1", Prefix: "p", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1"})
	f("s3://bk1/p?endpoint=https://minio.example.com&retention=GOVERNANCE&retention_days=30",
		s3.Config{Bucket: "bk1", Prefix: "p", Endpoint: "https://minio.example.com", Retention: s3.RetentionGovernance, RetentionDays: 30})
	f("s3://bk1?retention=compliance&retention_days=3650&part_size=64MiB",
		s3.Config{Bucket: "bk1", Retention: s3.RetentionCompliance, RetentionDays: 3650, PartSize: 64 << 20})
	f("s3://bk1?part_size=5242880", s3.Config{Bucket: "bk1", PartSize: 5 << 20})
}

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
	}{
		{"file:///tmp/x", `scheme "file"`},
		{"s3:bucket", "want s3://bucket/prefix"},
		{"s3://", "bucket is missing"},
		{"s3:///prefix", "bucket is missing"},
		{"s3://Bad_Bucket/p", `bucket "Bad_Bucket"`},
		{"s3://bk1/a//c", `prefix "a//c"`},
		{"s3://bk1/a/../c", `prefix "a/../c"`},
		{"s3://AKIAXXXX:very-secret@bk1/p", "credentials are not allowed"},
		{"s3://bk1?endpoint=ftp://h", `endpoint "ftp://h": scheme must be http or https`},
		{"s3://bk1?endpoint=127.0.0.1:9000", `endpoint "127.0.0.1:9000"`},
		{"s3://bk1?endpoint=http://h:9000/sub", "want no path or query"},
		{"s3://bk1?endpoint=http://u:very-secret@h", "credentials are not allowed"},
		{"s3://bk1?region=us east", `region "us east"`},
		{"s3://bk1?retention=forever&retention_days=1", `retention "forever"`},
		{"s3://bk1?retention=governance", "retention_days 0"},
		{"s3://bk1?retention=governance&retention_days=x", `retention_days "x"`},
		{"s3://bk1?retention=governance&retention_days=-1", "retention_days -1"},
		{"s3://bk1?retention_days=3", "retention_days needs retention"},
		{"s3://bk1?part_size=1MiB", "part_size 1048576"},
		{"s3://bk1?part_size=big", `part_size "big"`},
		{"s3://bk1?retenton=governance", `unknown parameter "retenton"`},
		{"s3://bk1?region=a&region=b", `"region" given 2 times`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := s3.ParseURL(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseURL(%q) = %v; want an error containing %q", tc.raw, err, tc.want)
			}
			if strings.Contains(err.Error(), "very-secret") {
				t.Errorf("error %q repeats a secret", err)
			}
		})
	}
}

func TestNewNeedsCredentials(t *testing.T) {
	for _, unset := range []string{s3.EnvAccessKeyID, s3.EnvSecretAccessKey} {
		t.Setenv(s3.EnvAccessKeyID, "id")
		t.Setenv(s3.EnvSecretAccessKey, "very-secret")
		t.Setenv(unset, "")
		_, err := s3.New(context.Background(), s3.Config{Bucket: "bk1", Endpoint: "http://127.0.0.1:1"})
		if err == nil || !strings.Contains(err.Error(), s3.EnvAccessKeyID) || strings.Contains(err.Error(), "very-secret") {
			t.Errorf("New without %s = %v; want an error naming the variables, not their values", unset, err)
		}
	}
}
