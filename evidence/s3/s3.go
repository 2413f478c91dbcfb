package s3

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/perfwh/perfwh/evidence"
)

// Environment variables holding the credentials.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
)

// Backend stores objects in an S3 bucket under a key prefix.
type Backend struct {
	cfg       Config
	client    *minio.Client
	core      minio.Core
	transport *http.Transport
}

var (
	_ evidence.Backend     = (*Backend)(nil)
	_ evidence.FileCreator = (*Backend)(nil)
)

// Open parses a store URL (see ParseURL) and returns New's backend on it.
func Open(ctx context.Context, rawURL string) (*Backend, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, cfg)
}

// New returns a backend on cfg with credentials from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and (optionally) AWS_SESSION_TOKEN. It checks that
// the bucket exists and, when retention is configured, that it has Object
// Lock enabled.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.RetryBase == 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	id, secret := os.Getenv(EnvAccessKeyID), os.Getenv(EnvSecretAccessKey)
	if id == "" || secret == "" {
		return nil, fmt.Errorf("s3 store %s: set %s and %s in the environment", cfg.uri(""), EnvAccessKeyID, EnvSecretAccessKey)
	}
	host, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if cfg.Endpoint != "" {
		var err error
		if host, secure, err = endpointHost(cfg.Endpoint); err != nil {
			return nil, err
		}
		lookup = minio.BucketLookupPath
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("s3 store %s: %w", cfg.uri(""), err)
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(id, secret, os.Getenv(EnvSessionToken)),
		Secure:       secure,
		Transport:    tr,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   1, // one request per attempt: Backend.retry is the only retry loop
	})
	if err != nil {
		return nil, fmt.Errorf("s3 store %s: %w", cfg.uri(""), err)
	}
	b := &Backend{cfg: cfg, client: client, core: minio.Core{Client: client}, transport: tr}
	if err := b.checkBucket(ctx); err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	return b, nil
}

func (b *Backend) checkBucket(ctx context.Context) error {
	bucket := "s3://" + b.cfg.Bucket
	var exists bool
	err := b.retry(ctx, true, func(ctx context.Context) (err error) {
		exists, err = b.client.BucketExists(ctx, b.cfg.Bucket)
		return err
	})
	if err != nil {
		return fmt.Errorf("s3 store %s: %w", b.cfg.uri(""), err)
	}
	if !exists {
		return fmt.Errorf("s3 store %s: bucket %s does not exist", b.cfg.uri(""), bucket)
	}
	if b.cfg.Retention == "" {
		return nil
	}
	var enabled string
	err = b.retry(ctx, true, func(ctx context.Context) (err error) {
		enabled, _, _, _, err = b.client.GetObjectLockConfig(ctx, b.cfg.Bucket)
		return err
	})
	if err != nil && !isObjectLockMissing(err) {
		return fmt.Errorf("s3 store %s: object lock configuration: %w", b.cfg.uri(""), err)
	}
	if enabled != "Enabled" {
		return fmt.Errorf("s3 store %s: retention=%s needs Object Lock, which bucket %s does not have enabled", b.cfg.uri(""), b.cfg.Retention, bucket)
	}
	return nil
}

func isObjectLockMissing(err error) bool {
	er, ok := asErrorResponse(err)
	return ok && (er.Code == "ObjectLockConfigurationNotFoundError" || er.StatusCode == http.StatusNotFound)
}

// Config returns the backend's configuration, with defaults filled in.
func (b *Backend) Config() Config { return b.cfg }

// Key returns the S3 object key of name.
func (b *Backend) Key(name string) string {
	if b.cfg.Prefix == "" {
		return name
	}
	return b.cfg.Prefix + "/" + name
}

// URI implements evidence.Backend: "s3://bucket/prefix/name".
func (b *Backend) URI(name string) string { return b.cfg.uri(name) }

func (c Config) uri(name string) string {
	if c.Prefix == "" {
		return "s3://" + c.Bucket + "/" + name
	}
	return "s3://" + c.Bucket + "/" + c.Prefix + "/" + name
}

// key validates name and returns its key. Names follow the local backend's
// rules so that a store can move between backends.
func (b *Backend) key(name string) (string, error) {
	if name == "" || name == "." || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") ||
		path.Clean(name) != name || strings.HasPrefix(name, "..") {
		return "", fmt.Errorf("invalid object name %q", name)
	}
	return b.Key(name), nil
}

// Open implements evidence.Backend. A read that fails midway is not resumed;
// the error names the object.
func (b *Backend) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	key, err := b.key(name)
	if err != nil {
		return nil, err
	}
	uri := b.URI(name)
	var rc io.ReadCloser
	err = b.retry(ctx, true, func(ctx context.Context) (err error) {
		rc, _, _, err = b.core.GetObject(ctx, b.cfg.Bucket, key, minio.GetObjectOptions{})
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%s: %w", uri, evidence.ErrNotFound)
		}
		return nil, fmt.Errorf("open %s: %w", uri, err)
	}
	return &objectReader{rc: rc, uri: uri}, nil
}

// objectReader names the object in read errors.
type objectReader struct {
	rc  io.ReadCloser
	uri string
}

func (o *objectReader) Read(p []byte) (int, error) {
	n, err := o.rc.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("read %s: %w", o.uri, err)
	}
	return n, err
}

func (o *objectReader) Close() error { return o.rc.Close() }

// Stat implements evidence.Backend.
func (b *Backend) Stat(ctx context.Context, name string) (evidence.ObjectInfo, error) {
	key, err := b.key(name)
	if err != nil {
		return evidence.ObjectInfo{}, err
	}
	var oi minio.ObjectInfo
	err = b.retry(ctx, true, func(ctx context.Context) (err error) {
		oi, err = b.client.StatObject(ctx, b.cfg.Bucket, key, minio.StatObjectOptions{})
		return err
	})
	if err != nil {
		if isNotFound(err) {
			return evidence.ObjectInfo{}, fmt.Errorf("%s: %w", b.URI(name), evidence.ErrNotFound)
		}
		return evidence.ObjectInfo{}, fmt.Errorf("stat %s: %w", b.URI(name), err)
	}
	return evidence.ObjectInfo{Name: name, Size: oi.Size, ModTime: oi.LastModified}, nil
}

// List implements evidence.Backend with ListObjectsV2 under the key prefix;
// S3 returns keys in lexical (UTF-8 byte) order. A failed page is retried,
// resuming after the last key delivered.
func (b *Backend) List(ctx context.Context, prefix string, fn func(evidence.ObjectInfo) error) error {
	base := b.Key("")
	after := ""
	var fnErr error
	err := b.retry(ctx, true, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		opts := minio.ListObjectsOptions{Prefix: base + prefix, Recursive: true, StartAfter: after}
		for oi := range b.client.ListObjectsIter(ctx, b.cfg.Bucket, opts) {
			if oi.Err != nil {
				return oi.Err
			}
			after = oi.Key
			name := strings.TrimPrefix(oi.Key, base)
			if name == "" || strings.HasSuffix(name, "/") {
				continue // a "directory" marker written by another tool
			}
			if fnErr = fn(evidence.ObjectInfo{Name: name, Size: oi.Size, ModTime: oi.LastModified}); fnErr != nil {
				return nil
			}
		}
		return nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", b.URI(prefix), err)
	}
	return nil
}

// Close implements evidence.Backend.
func (b *Backend) Close() error {
	b.transport.CloseIdleConnections()
	return nil
}
