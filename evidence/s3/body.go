package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// memBufferLimit is the largest upload from a reader that cannot seek that
// is buffered in memory, so that it can be retried. Larger ones are streamed
// once.
const memBufferLimit = 8 << 20

// bodyError marks an error of the caller's reader (or of its size), which
// no retry can cure.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// body is the content of one Create, prepared so that the server can never
// store anything but exactly size bytes of it. Either ra holds the content
// at [off, off+size) and can be re-read, in parts and in parallel, or
// stream yields it once, in order.
type body struct {
	size   int64
	ra     io.ReaderAt
	off    int64
	stream *exactReader
}

// newBody prepares r for upload. A reader that can seek and read at
// offsets (a file, bytes.Reader) is checked to hold exactly size bytes and
// re-read from its current offset on every attempt. A small reader that
// cannot seek is read into memory; a large one is streamed once through a
// reader that fails, before the last byte is sent, if r holds more or fewer
// than size bytes.
func newBody(ctx context.Context, r io.Reader, size int64) (*body, error) {
	if size < 0 {
		return nil, &bodyError{fmt.Errorf("negative size %d", size)}
	}
	if ra, ok := r.(io.ReaderAt); ok {
		if s, ok := r.(io.Seeker); ok {
			if off, err := s.Seek(0, io.SeekCurrent); err == nil {
				end, err := s.Seek(0, io.SeekEnd)
				if _, err2 := s.Seek(off, io.SeekStart); err == nil {
					err = err2
				}
				if err != nil {
					return nil, &bodyError{fmt.Errorf("seek: %w", err)}
				}
				if end-off != size {
					return nil, &bodyError{fmt.Errorf("reader holds %d bytes, size says %d", end-off, size)}
				}
				return &body{size: size, ra: ra, off: off}, nil
			}
		}
	}
	if size <= memBufferLimit {
		buf := make([]byte, size)
		cr := &ctxReader{ctx: ctx, r: r}
		if n, err := io.ReadFull(cr, buf); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = fmt.Errorf("reader ended after %d of %d bytes", n, size)
			}
			return nil, &bodyError{err}
		}
		if err := expectEOF(cr); err != nil {
			return nil, &bodyError{err}
		}
		return &body{size: size, ra: bytes.NewReader(buf)}, nil
	}
	return &body{size: size, stream: &exactReader{ctx: ctx, r: r, left: size, size: size}}, nil
}

// replayable reports whether the body can be read more than once.
func (b *body) replayable() bool { return b.ra != nil }

// section returns a fresh reader of n bytes at offset off of the content.
func (b *body) section(off, n int64) *recordingSection {
	return &recordingSection{SectionReader: io.NewSectionReader(b.ra, b.off+off, n)}
}

// recordingSection is an io.SectionReader (so minio-go may ReadAt and
// Seek it) that remembers a read error of the underlying reader.
type recordingSection struct {
	*io.SectionReader
	mu  sync.Mutex
	err error
}

func (s *recordingSection) record(err error) error {
	if err != nil && err != io.EOF {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
	return err
}

func (s *recordingSection) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *recordingSection) Read(p []byte) (int, error) {
	n, err := s.SectionReader.Read(p)
	return n, s.record(err)
}

func (s *recordingSection) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.SectionReader.ReadAt(p, off)
	return n, s.record(err)
}

// exactReader passes size bytes of r through. It withholds the last chunk
// until it has seen r end, so a reader holding more than size bytes fails
// the upload before the server has the whole body; one holding fewer fails
// it too. Reads stop once ctx is done.
type exactReader struct {
	ctx        context.Context
	r          io.Reader
	left, size int64
	err        error
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if err := e.ctx.Err(); err != nil {
		return 0, e.fail(err)
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case err == io.EOF && e.left > 0:
		return 0, e.fail(fmt.Errorf("reader ended after %d of %d bytes", e.size-e.left, e.size))
	case err != nil && err != io.EOF:
		return 0, e.fail(err)
	case e.left == 0:
		if err := expectEOF(e.r); err != nil {
			return 0, e.fail(err)
		}
		return n, io.EOF
	}
	return n, nil
}

func (e *exactReader) fail(err error) error {
	e.err = &bodyError{err}
	return e.err
}

// expectEOF fails unless r has nothing more to read.
func expectEOF(r io.Reader) error {
	var one [1]byte
	n, err := io.ReadFull(r, one[:])
	switch {
	case n > 0:
		return errors.New("reader holds more bytes than size says")
	case err == io.EOF:
		return nil
	default:
		return err
	}
}

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
