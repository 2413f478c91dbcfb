package stores

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/perfwh/perfwh/evidence"
	"github.com/perfwh/perfwh/evidence/local"
	"github.com/perfwh/perfwh/evidence/s3"
)

// schemeRE matches the start of a URL ("s3://", "file://", "gs://").
var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// Open returns the backend named by rawURL:
//
//	file:///abs/path            local directory (created if missing)
//	/abs/path, rel/path         local directory, as a plain path
//	s3://bucket/prefix?…        S3 or MinIO; see s3.ParseURL for parameters
//
// Opening an S3 store checks that its bucket exists.
func Open(ctx context.Context, rawURL string) (evidence.Backend, error) {
	if strings.TrimSpace(rawURL) == "" {
		return nil, errors.New("empty store URL: use file:///path or s3://bucket/prefix")
	}
	m := schemeRE.FindStringSubmatch(rawURL)
	if m == nil {
		return local.Open(rawURL)
	}
	switch scheme := strings.ToLower(m[1]); scheme {
	case "file":
		p, err := filePath(rawURL)
		if err != nil {
			return nil, err
		}
		return local.Open(p)
	case "s3":
		return s3.Open(ctx, rawURL)
	default:
		return nil, fmt.Errorf("unsupported store URL scheme %q: use file:///path or s3://bucket/prefix", scheme)
	}
}

// filePath returns the absolute path of a file:///abs/path URL.
func filePath(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("store URL %q: %w", rawURL, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("store URL %q: host %q: want file:///absolute/path", rawURL, u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("store URL %q: file URLs take no query or fragment", rawURL)
	}
	if !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("store URL %q: want file:///absolute/path", rawURL)
	}
	return u.Path, nil
}
