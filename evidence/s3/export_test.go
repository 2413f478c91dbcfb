package s3

import "time"

// Backoff exposes the pause after failed attempt n to the tests.
func (b *Backend) Backoff(n int) time.Duration { return b.backoff(n) }
