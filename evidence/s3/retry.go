package s3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
)

// retry runs op until it succeeds, fails permanently, has run
// b.cfg.MaxAttempts times, or ctx ends. Only replayable operations are
// retried: an upload whose body cannot be re-read gets one attempt. The
// error of the last attempt is returned, noting the attempts when more
// than one was made.
func (b *Backend) retry(ctx context.Context, replayable bool, op func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return contextError(cerr, err)
		}
		if !replayable || !transient(err) {
			return err
		}
		if attempt >= b.cfg.MaxAttempts {
			if attempt > 1 {
				return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
			}
			return err
		}
		t := time.NewTimer(b.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return contextError(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// contextError reports a cancelled operation, keeping the context error
// in the chain so callers can test for it.
func contextError(cerr, last error) error {
	if errors.Is(last, cerr) {
		return last
	}
	return fmt.Errorf("%w (last error: %v)", cerr, last)
}

// backoff returns the pause after failed attempt n (1-based): exponential
// from RetryBase, capped at RetryMax, with "equal jitter" (half fixed, half
// random) so that concurrent clients spread out but never retry at once.
func (b *Backend) backoff(n int) time.Duration {
	d := b.cfg.RetryBase
	for i := 1; i < n && d < b.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, b.cfg.RetryMax)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(half+1)
}

// retryableCodes are S3 error codes worth another attempt whatever their
// HTTP status.
var retryableCodes = map[string]bool{
	"InternalError":              true,
	"ServiceUnavailable":         true,
	"SlowDown":                   true,
	"SlowDownRead":               true,
	"SlowDownWrite":              true,
	"Throttling":                 true,
	"ThrottlingException":        true,
	"RequestLimitExceeded":       true,
	"RequestThrottled":           true,
	"RequestTimeout":             true,
	"XMinioServerNotInitialized": true,
}

// transient reports whether err is worth retrying: 5xx, 408 and 429
// responses, throttling codes, timeouts, and connections refused, reset or
// closed early. Anything the server answered otherwise (400, 403, 404,
// 412, …) and TLS or configuration errors are permanent, as are errors
// from the caller's reader (bodyError).
func transient(err error) bool {
	var be *bodyError
	if errors.As(err, &be) {
		return false
	}
	if er, ok := asErrorResponse(err); ok {
		if retryableCodes[er.Code] {
			return true
		}
		switch s := er.StatusCode; {
		case s >= 500, s == http.StatusTooManyRequests, s == http.StatusRequestTimeout:
			return true
		case s != 0:
			return false
		}
		// StatusCode 0: minio-go's own argument errors, not the server's.
		return false
	}
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	if errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	// minio-go replaces a connection closed mid-request by its own error.
	var ue *url.Error
	if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "Connection closed by foreign host") {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// asErrorResponse extracts the server's answer from a minio-go error.
func asErrorResponse(err error) (minio.ErrorResponse, bool) {
	var v minio.ErrorResponse
	if errors.As(err, &v) {
		return v, true
	}
	var p *minio.ErrorResponse
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return v, false
}

// isNotFound reports a missing object (or a missing bucket, which makes
// every object missing; New checks the bucket exists).
func isNotFound(err error) bool {
	er, ok := asErrorResponse(err)
	return ok && (er.Code == "NoSuchKey" || er.Code == "NoSuchVersion" || er.StatusCode == http.StatusNotFound && er.Code != "NoSuchBucket")
}

// isPreconditionFailed reports the answer to a conditional write whose
// object exists.
func isPreconditionFailed(err error) bool {
	er, ok := asErrorResponse(err)
	return ok && (er.Code == "PreconditionFailed" || er.StatusCode == http.StatusPreconditionFailed)
}
