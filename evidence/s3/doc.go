// Package s3 implements evidence.Backend on S3-compatible object storage
// (Amazon S3, MinIO) with minio-go.
//
// # Configuration
//
// A store is named by a URL (see ParseURL):
//
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&retention=governance&retention_days=30
//
// Objects live at "prefix/name" in the bucket. Without endpoint the store
// is on Amazon S3 (https, virtual-host addressing); with one, http or https
// follows its scheme and buckets are addressed path-style. Credentials come
// only from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN;
// they are never part of a URL, a Config or an error. New checks that the
// bucket exists and, with retention, that it has Object Lock enabled.
//
// # Write-once
//
// Create sends If-None-Match: * so the server refuses to replace an
// existing key (412 Precondition Failed, reported as evidence.ErrExists);
// the check and the write are atomic on the server, so of concurrent
// creators exactly one wins. Objects up to the part size (16 MiB unless
// Config.PartSize says otherwise) go in one PUT. Larger ones go in a
// multipart upload that this package drives itself, because minio-go
// (v7.4.1) drops If-None-Match when it completes its own multipart uploads:
// the upload is initiated and completed with If-None-Match: *, so it is
// refused if the key exists at either point, and a failed or cancelled
// Create aborts it, leaving no object. Parts of a file or an in-memory body
// are sent four at a time.
//
// Every Create stores a random token in the object's metadata. When a
// retried write is refused, Create reads the token back: if it is its own,
// an earlier attempt succeeded and only its answer was lost, and Create
// succeeds instead of reporting ErrExists.
//
// The body is checked to hold exactly the declared size before the last
// byte is sent: a reader that can seek is measured first; one that cannot
// is read into memory up to 8 MiB, and streamed beyond that, once.
//
// With retention configured, each object is created under Object Lock in
// that mode (governance or compliance) until RetentionDays after its
// creation; the server then refuses to delete or replace that version.
//
// # Retries
//
// minio-go's own retry loop is switched off (one HTTP request per call),
// and every request this package makes (PUT, multipart initiate, each part,
// complete, HEAD, GET, each list page, the bucket checks) is retried by one
// policy: transient failures (5xx, 408, 429, throttling codes such as
// SlowDown, timeouts, refused or reset connections) are retried up to
// Config.MaxAttempts times in all (default 5), pausing between attempts by
// exponential backoff from RetryBase (500ms) capped at RetryMax (10s), with
// equal jitter (each pause is between half and all of its step). With the
// defaults a request waits at most 0.5+1+2+4 = 7.5s in backoff, plus up to
// 200ms per failed attempt that minio-go pauses before it returns a
// retryable error. Each attempt is bounded by the transport: 30s to
// connect, 60s for response headers once the request is sent; a transfer in
// progress is bounded only by the context. Permanent answers (400, 403, 404
// where an object should exist, 412) fail at once, as do errors of the
// caller's reader. A body that cannot be re-read (a stream above 8 MiB sent
// in one PUT) gets one attempt. Context cancellation stops a retry loop at
// once. A read that fails after Open returned is not resumed. Every error
// names the object's s3:// URI.
package s3
