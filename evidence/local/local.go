package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/perfwh/perfwh/evidence"
)

// Backend stores objects as files under a root directory.
type Backend struct {
	root string
}

var (
	_ evidence.Backend     = (*Backend)(nil)
	_ evidence.FileCreator = (*Backend)(nil)
)

// linkSeq makes temporary link names unique within the process.
var linkSeq atomic.Int64

// tmpDir holds files being written; it is never listed.
const tmpDir = "tmp"

// Open creates root if needed and returns a backend on it.
func Open(root string) (*Backend, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("local store %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, tmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("local store %s: %w", abs, err)
	}
	return &Backend{root: abs}, nil
}

// Root returns the absolute root directory.
func (b *Backend) Root() string { return b.root }

func (b *Backend) path(name string) (string, error) {
	if name == "" || name == "." || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") ||
		path.Clean(name) != name || strings.HasPrefix(name, "..") || name == tmpDir || strings.HasPrefix(name, tmpDir+"/") {
		return "", fmt.Errorf("invalid object name %q", name)
	}
	return filepath.Join(b.root, filepath.FromSlash(name)), nil
}

// Create implements evidence.Backend.
func (b *Backend) Create(ctx context.Context, name string, r io.Reader, size int64) error {
	final, err := b.path(name)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("%s: %w", b.URI(name), evidence.ErrExists)
	}
	tmp, err := os.CreateTemp(filepath.Join(b.root, tmpDir), "create-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", b.URI(name), err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.CopyBuffer(tmp, &ctxReader{ctx: ctx, r: r}, make([]byte, 1<<20))
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes, expected %d", n, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", b.URI(name), err)
	}
	return b.link(name, tmp.Name(), final)
}

// CreateFromFile implements evidence.FileCreator: the file is fsynced and
// hard-linked into place when it lives on the same file system, and copied
// otherwise.
func (b *Backend) CreateFromFile(ctx context.Context, name, src string) error {
	final, err := b.path(name)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("%s: %w", b.URI(name), evidence.ErrExists)
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", b.URI(name), src, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", b.URI(name), src, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("create %s from %s: fsync: %w", b.URI(name), src, err)
	}
	// Link a second name to the source inode in tmp first, so that the
	// source may be removed by the caller while the link is made.
	tmpName := filepath.Join(b.root, tmpDir, fmt.Sprintf("link-%d-%d", os.Getpid(), linkSeq.Add(1)))
	_ = os.Remove(tmpName)
	if err := os.Link(src, tmpName); err != nil {
		var le *os.LinkError
		if errors.As(err, &le) && (errors.Is(le.Err, syscall.EXDEV) || errors.Is(le.Err, syscall.EPERM)) {
			return b.Create(ctx, name, f, st.Size())
		}
		return fmt.Errorf("create %s from %s: %w", b.URI(name), src, err)
	}
	defer os.Remove(tmpName)
	return b.link(name, tmpName, final)
}

// link makes the fully written file tmp visible as final, write-once.
func (b *Backend) link(name, tmp, final string) error {
	if err := os.Chmod(tmp, 0o444); err != nil {
		return fmt.Errorf("create %s: %w", b.URI(name), err)
	}
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", b.URI(name), err)
	}
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", b.URI(name), evidence.ErrExists)
		}
		return fmt.Errorf("create %s: %w", b.URI(name), err)
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("create %s: fsync dir: %w", b.URI(name), err)
		}
	}
	return nil
}

// Open implements evidence.Backend.
func (b *Backend) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	p, err := b.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if notExist(err) {
		return nil, fmt.Errorf("%s: %w", b.URI(name), evidence.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", b.URI(name), err)
	}
	// A directory is a name's prefix, not an object.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", b.URI(name), err)
		}
		return nil, fmt.Errorf("%s: %w", b.URI(name), evidence.ErrNotFound)
	}
	return f, nil
}

// Stat implements evidence.Backend.
func (b *Backend) Stat(ctx context.Context, name string) (evidence.ObjectInfo, error) {
	p, err := b.path(name)
	if err != nil {
		return evidence.ObjectInfo{}, err
	}
	st, err := os.Stat(p)
	if notExist(err) {
		return evidence.ObjectInfo{}, fmt.Errorf("%s: %w", b.URI(name), evidence.ErrNotFound)
	}
	if err != nil {
		return evidence.ObjectInfo{}, fmt.Errorf("stat %s: %w", b.URI(name), err)
	}
	if !st.Mode().IsRegular() {
		return evidence.ObjectInfo{}, fmt.Errorf("%s: %w", b.URI(name), evidence.ErrNotFound)
	}
	return evidence.ObjectInfo{Name: name, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// List implements evidence.Backend.
func (b *Backend) List(ctx context.Context, prefix string, fn func(evidence.ObjectInfo) error) error {
	start := b.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = filepath.Join(b.root, filepath.FromSlash(prefix[:i]))
	}
	if start != b.root && !strings.HasPrefix(start, b.root+string(filepath.Separator)) {
		return nil // a prefix climbing out of root ("../") matches no name
	}
	var infos []evidence.ObjectInfo
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if notExist(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(b.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == tmpDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(rel, prefix) || !d.Type().IsRegular() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return nil // removed while listing
		}
		infos = append(infos, evidence.ObjectInfo{Name: rel, Size: st.Size(), ModTime: st.ModTime()})
		return nil
	})
	if err != nil {
		return fmt.Errorf("list %s: %w", b.URI(prefix), err)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	for _, oi := range infos {
		if err := fn(oi); err != nil {
			return err
		}
	}
	return nil
}

// notExist reports an error meaning no such file, including a path through
// an object ("a/b" when "a" is a file).
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// URI implements evidence.Backend.
func (b *Backend) URI(name string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(b.root, filepath.FromSlash(name)))}
	return u.String()
}

// Close implements evidence.Backend.
func (b *Backend) Close() error { return nil }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
