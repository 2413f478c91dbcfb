package evidence

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned (wrapped) when an object does not exist.
var ErrNotFound = errors.New("object not found")

// ErrExists is returned (wrapped) by Backend.Create when the object already
// exists. Objects are write-once; the existing object is left untouched.
var ErrExists = errors.New("object already exists")

// DigestMismatchError reports content that does not hash to its address.
type DigestMismatchError struct {
	Object string // object name or URI
	Want   Digest // the address it is stored under
	Got    Digest // what its content hashes to
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("%s: content hashes to %s, want %s", e.Object, e.Got, e.Want)
}

// SizeMismatchError reports an object whose size differs from the manifest.
type SizeMismatchError struct {
	Object    string
	Want, Got int64
}

func (e *SizeMismatchError) Error() string {
	return fmt.Sprintf("%s: size %d bytes, manifest says %d", e.Object, e.Got, e.Want)
}
