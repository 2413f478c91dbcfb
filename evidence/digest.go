package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Digest is the sha256 content address of a blob, a manifest or a canonical
// spec. Its text form is "sha256:" followed by 64 lowercase hex digits.
type Digest [sha256.Size]byte

// digestPrefix is the algorithm prefix of a Digest's text form.
const digestPrefix = "sha256:"

// Sum returns the digest of data.
func Sum(data []byte) Digest { return Digest(sha256.Sum256(data)) }

// ParseDigest parses "sha256:<64 hex>" (the prefix may be omitted).
func ParseDigest(s string) (Digest, error) {
	var d Digest
	h := strings.TrimPrefix(s, digestPrefix)
	if len(h) != 2*len(d) {
		return d, fmt.Errorf("invalid digest %q: want sha256:<64 hex digits>", s)
	}
	if strings.ToLower(h) != h {
		return d, fmt.Errorf("invalid digest %q: hex must be lowercase", s)
	}
	if _, err := hex.Decode(d[:], []byte(h)); err != nil {
		return d, fmt.Errorf("invalid digest %q: %w", s, err)
	}
	return d, nil
}

// String returns "sha256:<hex>".
func (d Digest) String() string { return digestPrefix + d.Hex() }

// Hex returns the 64 hex digits without the algorithm prefix.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// Short returns the first 12 hex digits, for people.
func (d Digest) Short() string { return d.Hex()[:12] }

// IsZero reports whether d is the zero value (no digest).
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Digest) UnmarshalText(b []byte) error {
	p, err := ParseDigest(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// Hasher computes a Digest over what is written to it.
type Hasher struct {
	h hash.Hash
	n int64
}

// NewHasher returns an empty Hasher.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Write implements io.Writer; it never fails.
func (h *Hasher) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	return h.h.Write(p)
}

// Digest returns the digest of everything written so far.
func (h *Hasher) Digest() Digest {
	var d Digest
	h.h.Sum(d[:0])
	return d
}

// Size returns the number of bytes written so far.
func (h *Hasher) Size() int64 { return h.n }

// DigestReader reads r to its end and returns its digest and size.
func DigestReader(r io.Reader) (Digest, int64, error) {
	h := NewHasher()
	n, err := io.CopyBuffer(h, r, make([]byte, 1<<20))
	if err != nil {
		return Digest{}, n, err
	}
	return h.Digest(), n, nil
}

// verifyingReader passes reads through and, at EOF, fails with a
// *DigestMismatchError when the content does not hash to want.
type verifyingReader struct {
	r    io.ReadCloser
	h    *Hasher
	want Digest
	name string
	done bool
}

// NewVerifyingReader wraps r so that reading it to EOF checks its digest.
// name identifies the object in the error.
func NewVerifyingReader(r io.ReadCloser, want Digest, name string) io.ReadCloser {
	return &verifyingReader{r: r, h: NewHasher(), want: want, name: name}
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF && !v.done {
		v.done = true
		if got := v.h.Digest(); got != v.want {
			return n, &DigestMismatchError{Object: v.name, Want: v.want, Got: got}
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.r.Close() }
