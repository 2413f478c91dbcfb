package evidence

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// BundleWriter gathers a run's files in a staging directory and then stores
// them, content-addressed, with their manifest and run pointer. Files are
// named by bundle-relative paths; each path may be added once.
//
// Nothing is visible in the store until Commit writes the run pointer, so an
// abandoned writer leaves, at worst, unreferenced blobs.
type BundleWriter struct {
	dir   string
	mu    sync.Mutex
	files map[string]File // by path; Digest and Size are filled by Commit
}

// NewBundleWriter stages files in dir, which is created.
func NewBundleWriter(dir string) (*BundleWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bundle staging %s: %w", dir, err)
	}
	return &BundleWriter{dir: dir, files: map[string]File{}}, nil
}

// Dir returns the staging directory.
func (w *BundleWriter) Dir() string { return w.dir }

func (w *BundleWriter) reserve(p, role, media, trial string) (string, error) {
	if p == "" || path.Clean(p) != p || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "..") {
		return "", fmt.Errorf("invalid bundle path %q", p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.files[p]; dup {
		return "", fmt.Errorf("bundle path %q added twice", p)
	}
	w.files[p] = File{Path: p, Role: role, MediaType: media, Trial: trial}
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return "", err
	}
	return full, nil
}

// Create returns a new staged file at bundle path p. The caller writes and
// closes it before Commit.
func (w *BundleWriter) Create(p, role, media, trial string) (*os.File, error) {
	full, err := w.reserve(p, role, media, trial)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(full, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

// AddBytes stages data at bundle path p.
func (w *BundleWriter) AddBytes(p, role, media, trial string, data []byte) error {
	full, err := w.reserve(p, role, media, trial)
	if err != nil {
		return err
	}
	return os.WriteFile(full, data, 0o644)
}

// Has reports whether path p was staged.
func (w *BundleWriter) Has(p string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.files[p]
	return ok
}

// CommitResult summarises a stored bundle.
type CommitResult struct {
	RunID          string
	ManifestDigest Digest
	Files          int
	Bytes          int64
	BlobsCreated   int   // blobs written by this commit
	BlobsExisting  int   // blobs already stored (deduplicated)
	BytesCreated   int64 // bytes written by this commit
}

// Commit hashes and stores every staged file, fills m.Files, stores the
// manifest and finally writes the run pointer. The staging directory is
// removed on success and left for inspection on failure.
func (w *BundleWriter) Commit(ctx context.Context, repo *Repository, m *Manifest) (CommitResult, error) {
	res := CommitResult{RunID: m.RunID}
	w.mu.Lock()
	files := make([]File, 0, len(w.files))
	for _, f := range w.files {
		files = append(files, f)
	}
	w.mu.Unlock()

	type outcome struct {
		created bool
		err     error
	}
	outs := make([]outcome, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f := &files[i]
			d, size, created, err := repo.PutBlobFile(ctx, filepath.Join(w.dir, filepath.FromSlash(f.Path)))
			if err != nil {
				err = fmt.Errorf("store %s: %w", f.Path, err)
			}
			f.Digest, f.Size = d, size
			outs[i] = outcome{created, err}
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if o.err != nil {
			return res, o.err
		}
		res.Files++
		res.Bytes += files[i].Size
		if o.created {
			res.BlobsCreated++
			res.BytesCreated += files[i].Size
		} else {
			res.BlobsExisting++
		}
	}
	m.Files = files
	d, err := repo.PutManifest(ctx, m)
	if err != nil {
		return res, err
	}
	res.ManifestDigest = d
	if err := repo.CommitRun(ctx, PointerFor(m, d)); err != nil {
		return res, err
	}
	_ = os.RemoveAll(w.dir)
	return res, nil
}
