package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/perfwh/perfwh/evidence"
)

const (
	// defaultPartSize is the part size when Config.PartSize is 0.
	defaultPartSize = 16 << 20
	// maxParts is S3's limit on the parts of one upload.
	maxParts = 10000
	// partWorkers is how many parts of a re-readable body are sent at once.
	partWorkers = 4
	// abortTimeout bounds the clean-up of a failed multipart upload.
	abortTimeout = time.Minute
)

// tokenMeta is the user metadata key of the per-Create token that lets a
// retried conditional write recognise its own earlier success.
const tokenMeta = "Perfwh-Create-Token"

// Create implements evidence.Backend. Objects up to the part size are
// written with one conditional PUT (If-None-Match: *); larger ones with a
// multipart upload that is initiated and completed with If-None-Match: *,
// so the server refuses it if the key exists at either point and, of
// concurrent creators, completes only the first.
func (b *Backend) Create(ctx context.Context, name string, r io.Reader, size int64) error {
	key, err := b.key(name)
	if err != nil {
		return err
	}
	uri := b.URI(name)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create %s: %w", uri, err)
	}
	body, err := newBody(ctx, r, size)
	if err != nil {
		return fmt.Errorf("create %s: %w", uri, err)
	}
	token, err := newToken()
	if err != nil {
		return fmt.Errorf("create %s: %w", uri, err)
	}
	opts := minio.PutObjectOptions{
		ContentType:      "application/octet-stream",
		UserMetadata:     map[string]string{tokenMeta: token},
		DisableMultipart: true, // minio-go's multipart drops If-None-Match on completion
	}
	opts.SetMatchETagExcept("*")
	if b.cfg.Retention != "" {
		opts.Mode = minio.Governance
		if b.cfg.Retention == RetentionCompliance {
			opts.Mode = minio.Compliance
		}
		opts.RetainUntilDate = time.Now().UTC().AddDate(0, 0, b.cfg.RetentionDays)
	}
	c := &creation{b: b, key: key, uri: uri, token: token, body: body, opts: opts}
	if partSize := b.partSize(size); size > partSize {
		err = c.multipart(ctx, partSize)
	} else {
		err = c.single(ctx)
	}
	if err != nil && !errors.Is(err, evidence.ErrExists) {
		err = fmt.Errorf("create %s: %w", uri, err)
	}
	return err
}

// partSize returns the part size for an object of size bytes: the
// configured one, raised if needed to stay within S3's 10,000 parts.
func (b *Backend) partSize(size int64) int64 {
	ps := int64(b.cfg.PartSize)
	if ps == 0 {
		ps = defaultPartSize
	}
	if need := (size + maxParts - 1) / maxParts; need > ps {
		ps = (need + 1<<20 - 1) &^ (1<<20 - 1)
	}
	return ps
}

// creation is one Create in progress.
type creation struct {
	b     *Backend
	key   string
	uri   string
	token string
	body  *body
	opts  minio.PutObjectOptions
}

func (c *creation) single(ctx context.Context) error {
	return c.b.retry(ctx, c.body.replayable(), func(ctx context.Context) error {
		var r io.Reader = c.body.stream
		var sec *recordingSection
		if c.body.replayable() {
			sec = c.body.section(0, c.body.size)
			r = sec
		}
		_, err := c.b.client.PutObject(ctx, c.b.cfg.Bucket, c.key, r, c.body.size, c.opts)
		if err != nil {
			if rerr := c.readError(sec); rerr != nil {
				return rerr
			}
			if isPreconditionFailed(err) {
				return c.refused(ctx, err)
			}
		}
		return err
	})
}

// readError returns the error of the caller's reader in the last attempt.
func (c *creation) readError(sec *recordingSection) error {
	var err error
	if sec != nil {
		err = sec.failure()
	} else if c.body.stream != nil && c.body.stream.err != nil {
		return c.body.stream.err
	}
	if err != nil {
		return &bodyError{fmt.Errorf("read: %w", err)}
	}
	return nil
}

// refused interprets a refused conditional write (412, or NoSuchUpload
// when completing): ErrExists, unless the object holds this Create's token
// because an earlier attempt succeeded and its answer was lost.
func (c *creation) refused(ctx context.Context, cause error) error {
	oi, err := c.b.client.StatObject(ctx, c.b.cfg.Bucket, c.key, minio.StatObjectOptions{})
	switch {
	case err == nil:
		for k, v := range oi.UserMetadata {
			if strings.EqualFold(k, tokenMeta) && v == c.token {
				return nil
			}
		}
	case !isPreconditionFailed(cause):
		return cause
	}
	return fmt.Errorf("%s: %w", c.uri, evidence.ErrExists)
}

func (c *creation) multipart(ctx context.Context, partSize int64) (err error) {
	core := c.b.core
	var uploadID string
	err = c.b.retry(ctx, true, func(ctx context.Context) (err error) {
		uploadID, err = core.NewMultipartUpload(ctx, c.b.cfg.Bucket, c.key, c.opts)
		return err
	})
	if err != nil {
		if isPreconditionFailed(err) {
			return fmt.Errorf("%s: %w", c.uri, evidence.ErrExists)
		}
		return fmt.Errorf("initiate multipart upload: %w", err)
	}
	completed := false
	defer func() {
		if !completed {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
			defer cancel()
			_ = core.AbortMultipartUpload(actx, c.b.cfg.Bucket, c.key, uploadID)
		}
	}()

	parts, err := c.uploadParts(ctx, uploadID, partSize)
	if err != nil {
		return err
	}
	done := minio.PutObjectOptions{}
	done.SetMatchETagExcept("*")
	err = c.b.retry(ctx, true, func(ctx context.Context) error {
		_, err := core.CompleteMultipartUpload(ctx, c.b.cfg.Bucket, c.key, uploadID, parts, done)
		if er, ok := asErrorResponse(err); ok && (isPreconditionFailed(err) || er.Code == "NoSuchUpload") {
			// NoSuchUpload: an earlier attempt may have completed it.
			completed = true // nothing left to abort either way
			return c.refused(ctx, err)
		}
		return err
	})
	if err == nil {
		completed = true
	}
	return err
}

// uploadParts sends the body in parts of partSize, each retried on its own:
// in parallel from a re-readable body, in order from a stream.
func (c *creation) uploadParts(ctx context.Context, uploadID string, partSize int64) ([]minio.CompletePart, error) {
	n := int((c.body.size + partSize - 1) / partSize)
	parts := make([]minio.CompletePart, n)
	put := func(ctx context.Context, i int, next func() (io.Reader, *recordingSection)) error {
		length := min(partSize, c.body.size-int64(i)*partSize)
		return c.b.retry(ctx, true, func(ctx context.Context) error {
			r, sec := next()
			p, err := c.b.core.PutObjectPart(ctx, c.b.cfg.Bucket, c.key, uploadID, i+1, r, length, minio.PutObjectPartOptions{})
			if err != nil {
				if rerr := c.readError(sec); rerr != nil {
					return rerr
				}
				return fmt.Errorf("part %d of %d: %w", i+1, n, err)
			}
			parts[i] = minio.CompletePart{PartNumber: i + 1, ETag: p.ETag}
			return nil
		})
	}

	if !c.body.replayable() {
		buf := make([]byte, partSize)
		for i := range n {
			length := min(partSize, c.body.size-int64(i)*partSize)
			if _, err := io.ReadFull(c.body.stream, buf[:length]); err != nil {
				if c.body.stream.err != nil {
					return nil, c.body.stream.err
				}
				return nil, &bodyError{fmt.Errorf("read: %w", err)}
			}
			chunk := buf[:length]
			err := put(ctx, i, func() (io.Reader, *recordingSection) {
				return bytes.NewReader(chunk), nil
			})
			if err != nil {
				return nil, err
			}
		}
		return parts, nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range min(partWorkers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := put(ctx, i, func() (io.Reader, *recordingSection) {
					sec := c.body.section(int64(i)*partSize, min(partSize, c.body.size-int64(i)*partSize))
					return sec, sec
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].PartNumber < parts[j].PartNumber })
	return parts, nil
}

func newToken() (string, error) {
	var t [16]byte
	if _, err := rand.Read(t[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(t[:]), nil
}

// CreateFromFile implements evidence.FileCreator: the file is uploaded from
// disk, in parallel parts when it is large, and re-read on a retry.
func (b *Backend) CreateFromFile(ctx context.Context, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", b.URI(name), src, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", b.URI(name), src, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("create %s from %s: not a regular file", b.URI(name), src)
	}
	return b.Create(ctx, name, f, st.Size())
}
