// Package storetest provides the conformance suite that every
// evidence.Backend runs: write-once creation (including concurrent
// creators), not-found errors, listing order and prefixes, failed creations
// that must leave nothing behind, name validation, and the Repository
// (blobs, manifests, run pointers, verification) on top of the backend.
//
// A backend's test calls Run with a constructor that returns a fresh, empty
// backend for each subtest:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) evidence.Backend { … }, storetest.Options{…})
//	}
//
// Options carries the backend-specific hooks (tampering with a stored
// object, extra invalid names); without them the corresponding subtests are
// skipped or reduced.
package storetest
