package s3

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Retention modes for Object Lock (Config.Retention).
const (
	RetentionGovernance = "governance" // removable early by a user with s3:BypassGovernanceRetention
	RetentionCompliance = "compliance" // nobody, root included, can remove it early
)

// Defaults of the retry policy (see the package documentation).
const (
	DefaultMaxAttempts = 5
	DefaultRetryBase   = 500 * time.Millisecond
	DefaultRetryMax    = 10 * time.Second
)

// Part sizes accepted by S3 for multipart uploads.
const (
	MinPartSize = 5 << 20
	MaxPartSize = 5 << 30
)

// maxRetentionDays bounds retention_days (100 years) to catch typos.
const maxRetentionDays = 36500

// Config says where a store lives and how objects are written. It holds no
// credentials: those come from the environment only.
type Config struct {
	Bucket string // bucket name
	Prefix string // key prefix without leading or trailing slash; "" for the bucket root

	// Endpoint is "http://host:port" or "https://host" for S3-compatible
	// servers (addressed path-style); "" means Amazon S3 (virtual-host style).
	Endpoint string
	// Region is the bucket's region; "" asks the server (one extra request).
	Region string

	// Retention, when set, puts Object Lock retention of this mode
	// ("governance" or "compliance") on every object created, lasting
	// RetentionDays from its creation. The bucket must have Object Lock
	// enabled.
	Retention     string
	RetentionDays int

	// PartSize is the part size of multipart uploads and the size above
	// which an upload is multipart; 0 means 16 MiB. It is raised for
	// objects that would otherwise need more than 10,000 parts.
	PartSize uint64

	// Retry policy; zero values take the defaults above. MaxAttempts counts
	// the first attempt: 1 disables retries.
	MaxAttempts int
	RetryBase   time.Duration
	RetryMax    time.Duration
}

// knownParams are the query parameters ParseURL accepts.
var knownParams = []string{"endpoint", "region", "retention", "retention_days", "part_size"}

// ParseURL parses "s3://bucket/prefix?endpoint=…&region=…&retention=…&
// retention_days=…&part_size=…". Every parameter is optional, but
// retention and retention_days go together. Errors name the bad field and
// never repeat credentials.
func ParseURL(raw string) (Config, error) {
	var c Config
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL; do not, in case it holds secrets.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c, fmt.Errorf("s3 store URL: %w", err)
	}
	if u.Scheme != "s3" {
		return c, fmt.Errorf("s3 store URL: scheme %q, want s3://bucket/prefix", u.Scheme)
	}
	if u.User != nil {
		return c, errors.New("s3 store URL: credentials are not allowed in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if u.Opaque != "" {
		return c, errors.New("s3 store URL: want s3://bucket/prefix")
	}
	c.Bucket = u.Host
	c.Prefix = strings.Trim(u.Path, "/")
	q := u.Query()
	for k, v := range q {
		if !slices.Contains(knownParams, k) {
			return c, fmt.Errorf("s3 store URL: unknown parameter %q (known: %s)", k, strings.Join(knownParams, ", "))
		}
		if len(v) != 1 {
			return c, fmt.Errorf("s3 store URL: parameter %q given %d times", k, len(v))
		}
	}
	c.Endpoint = q.Get("endpoint")
	c.Region = q.Get("region")
	c.Retention = strings.ToLower(q.Get("retention"))
	if s := q.Get("retention_days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return c, fmt.Errorf("s3 store URL: retention_days %q: not a whole number of days", s)
		}
		c.RetentionDays = n
	}
	if s := q.Get("part_size"); s != "" {
		n, err := parseSize(s)
		if err != nil {
			return c, fmt.Errorf("s3 store URL: part_size %q: %w", s, err)
		}
		c.PartSize = n
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// Validate checks every field and names the first bad one.
func (c Config) Validate() error {
	if c.Bucket == "" {
		return errors.New("s3 store URL: bucket is missing: want s3://bucket/prefix")
	}
	if err := s3utils.CheckValidBucketNameStrict(c.Bucket); err != nil {
		return fmt.Errorf("s3 store URL: bucket %q: %w", c.Bucket, err)
	}
	if c.Prefix != "" {
		for _, seg := range strings.Split(c.Prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Errorf("s3 store URL: prefix %q: empty, \".\" and \"..\" path segments are not allowed", c.Prefix)
			}
		}
	}
	if c.Endpoint != "" {
		if _, _, err := endpointHost(c.Endpoint); err != nil {
			return err
		}
	}
	if strings.ContainsAny(c.Region, " /?#") {
		return fmt.Errorf("s3 store URL: region %q is not a region name", c.Region)
	}
	switch c.Retention {
	case "":
		if c.RetentionDays != 0 {
			return errors.New("s3 store URL: retention_days needs retention=governance or retention=compliance")
		}
	case RetentionGovernance, RetentionCompliance:
		if c.RetentionDays < 1 || c.RetentionDays > maxRetentionDays {
			return fmt.Errorf("s3 store URL: retention_days %d: want 1..%d with retention=%s", c.RetentionDays, maxRetentionDays, c.Retention)
		}
	default:
		return fmt.Errorf("s3 store URL: retention %q: want governance or compliance", c.Retention)
	}
	if c.PartSize != 0 && (c.PartSize < MinPartSize || c.PartSize > MaxPartSize) {
		return fmt.Errorf("s3 store URL: part_size %d: want 5MiB..5GiB", c.PartSize)
	}
	if c.MaxAttempts < 0 || c.RetryBase < 0 || c.RetryMax < 0 {
		return errors.New("s3 store: negative retry setting")
	}
	return nil
}

// String returns the store URL of c (it never holds credentials).
func (c Config) String() string {
	u := url.URL{Scheme: "s3", Host: c.Bucket, Path: "/" + c.Prefix}
	q := url.Values{}
	if c.Endpoint != "" {
		q.Set("endpoint", c.Endpoint)
	}
	if c.Region != "" {
		q.Set("region", c.Region)
	}
	if c.Retention != "" {
		q.Set("retention", c.Retention)
		q.Set("retention_days", strconv.Itoa(c.RetentionDays))
	}
	if c.PartSize != 0 {
		q.Set("part_size", strconv.FormatUint(c.PartSize, 10))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// endpointHost splits an endpoint URL into host[:port] and whether it is
// https.
func endpointHost(endpoint string) (host string, secure bool, err error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("s3 store URL: endpoint %q: want http://host:port or https://host", endpoint)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("s3 store URL: endpoint %q: scheme must be http or https", endpoint)
	case u.User != nil:
		return "", false, errors.New("s3 store URL: endpoint: credentials are not allowed in the URL")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "", false, fmt.Errorf("s3 store URL: endpoint %q: want no path or query, only scheme://host:port", endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// parseSize reads bytes, optionally with a KiB, MiB or GiB suffix.
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("want bytes, or a number with a KiB, MiB or GiB suffix")
	}
	return n * mult, nil
}
