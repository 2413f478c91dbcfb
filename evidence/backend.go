package evidence

import (
	"context"
	"io"
	"time"
)

// Backend is a flat namespace of write-once objects named by slash-separated
// keys ("blobs/sha256/ab/ab12…"). It knows nothing of digests or layout; the
// Repository above it does. Every implementation must pass the conformance
// suite in package evidence/storetest.
//
// Implementations must be safe for concurrent use.
type Backend interface {
	// Create stores the size bytes read from r under name, only if no object
	// of that name exists. If one exists it returns an error wrapping
	// ErrExists and leaves the existing object untouched; a concurrent
	// Create of the same name has exactly one winner. The object becomes
	// visible atomically: readers never see partial content, and a failed or
	// cancelled Create leaves no object behind.
	Create(ctx context.Context, name string, r io.Reader, size int64) error

	// Open returns the content of name, or an error wrapping ErrNotFound.
	// The caller closes the reader.
	Open(ctx context.Context, name string) (io.ReadCloser, error)

	// Stat returns the object's size, or an error wrapping ErrNotFound.
	Stat(ctx context.Context, name string) (ObjectInfo, error)

	// List calls fn for every object whose name starts with prefix, in
	// lexical order of name. An error from fn stops the listing and is
	// returned.
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error

	// URI returns the location of name for people and lineage records
	// ("file:///…", "s3://bucket/prefix/…"). It does not check existence.
	URI(name string) string

	// Close releases resources held by the backend.
	Close() error
}

// FileCreator is implemented by backends that can store an existing local
// file more cheaply than by streaming it (the local backend links it). The
// contract is Create's; the file at path is not modified and may be removed
// by the caller afterwards.
type FileCreator interface {
	CreateFromFile(ctx context.Context, name, path string) error
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Name    string
	Size    int64
	ModTime time.Time
}
