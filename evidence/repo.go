package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfwh/perfwh/internal/canonjson"
)

// Repository lays content-addressed evidence out on a Backend:
//
//	blobs/sha256/<2 hex>/<64 hex>   file contents
//	manifests/sha256/<64 hex>       canonical manifest JSON
//	runs/<run_id>                   run pointer (written last: the commit point)
//
// Every read verifies the digest of what it returns.
type Repository struct {
	be Backend
}

// NewRepository returns a repository on be.
func NewRepository(be Backend) *Repository { return &Repository{be: be} }

// Backend returns the underlying backend.
func (r *Repository) Backend() Backend { return r.be }

// BlobName is the object name of a blob.
func BlobName(d Digest) string { h := d.Hex(); return "blobs/sha256/" + h[:2] + "/" + h }

// ManifestName is the object name of a manifest.
func ManifestName(d Digest) string { return "manifests/sha256/" + d.Hex() }

// RunName is the object name of a run pointer.
func RunName(runID string) string { return "runs/" + runID }

// BlobURI returns where blob d lives.
func (r *Repository) BlobURI(d Digest) string { return r.be.URI(BlobName(d)) }

// ManifestURI returns where manifest d lives.
func (r *Repository) ManifestURI(d Digest) string { return r.be.URI(ManifestName(d)) }

// PutBlobFile stores the file at path as a blob and returns its digest and
// size. created is false when the blob was already stored (deduplicated).
func (r *Repository) PutBlobFile(ctx context.Context, path string) (d Digest, size int64, created bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return d, 0, false, err
	}
	defer f.Close()
	d, size, err = DigestReader(f)
	if err != nil {
		return d, size, false, fmt.Errorf("hash %s: %w", path, err)
	}
	name := BlobName(d)
	if _, err := r.be.Stat(ctx, name); err == nil {
		return d, size, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return d, size, false, err
	}
	if fc, ok := r.be.(FileCreator); ok {
		err = fc.CreateFromFile(ctx, name, path)
	} else {
		if _, err = f.Seek(0, io.SeekStart); err != nil {
			return d, size, false, err
		}
		err = r.be.Create(ctx, name, NewVerifyingReader(f, d, path), size)
	}
	if errors.Is(err, ErrExists) {
		return d, size, false, nil
	}
	return d, size, err == nil, err
}

// PutBlob stores data as a blob; created is false when it already existed.
func (r *Repository) PutBlob(ctx context.Context, data []byte) (Digest, bool, error) {
	d := Sum(data)
	created, err := r.createOnce(ctx, BlobName(d), data)
	return d, created, err
}

func (r *Repository) createOnce(ctx context.Context, name string, data []byte) (bool, error) {
	if _, err := r.be.Stat(ctx, name); err == nil {
		return false, nil
	}
	err := r.be.Create(ctx, name, bytes.NewReader(data), int64(len(data)))
	if errors.Is(err, ErrExists) {
		return false, nil
	}
	return err == nil, err
}

// OpenBlob returns blob d; reading it to EOF fails with a
// *DigestMismatchError if its content does not match d.
func (r *Repository) OpenBlob(ctx context.Context, d Digest) (io.ReadCloser, error) {
	rc, err := r.be.Open(ctx, BlobName(d))
	if err != nil {
		return nil, err
	}
	return NewVerifyingReader(rc, d, r.BlobURI(d)), nil
}

// ReadBlob reads and verifies a whole blob.
func (r *Repository) ReadBlob(ctx context.Context, d Digest) ([]byte, error) {
	rc, err := r.OpenBlob(ctx, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// PutManifest encodes and stores m, returning its digest.
func (r *Repository) PutManifest(ctx context.Context, m *Manifest) (Digest, error) {
	b, d, err := m.Encode()
	if err != nil {
		return d, err
	}
	if _, err := r.createOnce(ctx, ManifestName(d), b); err != nil {
		return d, fmt.Errorf("store manifest %s: %w", d, err)
	}
	return d, nil
}

// ReadManifest reads, verifies and decodes manifest d.
func (r *Repository) ReadManifest(ctx context.Context, d Digest) (*Manifest, error) {
	rc, err := r.be.Open(ctx, ManifestName(d))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(NewVerifyingReader(rc, d, r.ManifestURI(d)))
	if err != nil {
		return nil, err
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.ManifestURI(d), err)
	}
	return m, nil
}

// CommitRun writes the run pointer; the run becomes visible. It fails with
// ErrExists if the run id was already committed.
func (r *Repository) CommitRun(ctx context.Context, p RunPointer) error {
	if err := ValidRunID(p.RunID); err != nil {
		return err
	}
	b, err := canonjson.Marshal(p)
	if err != nil {
		return err
	}
	name := RunName(p.RunID)
	if err := r.be.Create(ctx, name, bytes.NewReader(b), int64(len(b))); err != nil {
		return fmt.Errorf("commit run %s: %w", p.RunID, err)
	}
	return nil
}

// ReadRun reads run pointer id.
func (r *Repository) ReadRun(ctx context.Context, id string) (RunPointer, error) {
	var p RunPointer
	if err := ValidRunID(id); err != nil {
		return p, err
	}
	rc, err := r.be.Open(ctx, RunName(id))
	if err != nil {
		return p, fmt.Errorf("run %s: %w", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return p, fmt.Errorf("read run %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: decode run pointer: %w", r.be.URI(RunName(id)), err)
	}
	if p.Format != RunPointerFormat || p.RunID != id {
		return p, fmt.Errorf("%s: not a run pointer for %s", r.be.URI(RunName(id)), id)
	}
	return p, nil
}

// ListRuns returns every committed run, oldest first (run ids sort by time).
// A pointer that cannot be read is reported through bad and skipped.
func (r *Repository) ListRuns(ctx context.Context, bad func(name string, err error)) ([]RunPointer, error) {
	var ids []string
	err := r.be.List(ctx, "runs/", func(oi ObjectInfo) error {
		ids = append(ids, strings.TrimPrefix(oi.Name, "runs/"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]RunPointer, 0, len(ids))
	for _, id := range ids {
		p, err := r.ReadRun(ctx, id)
		if err != nil {
			if bad != nil {
				bad(RunName(id), err)
			}
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// ValidRunID checks that id is safe to use as an object name.
func ValidRunID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("invalid run id %q", id)
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return fmt.Errorf("invalid run id %q", id)
		}
	}
	return nil
}
