// Package buildinfo reports the version and VCS revision of the running
// perfwh binary. Both are set at link time by the Makefile
// (-X .../buildinfo.version=... -X .../buildinfo.revision=...); a binary built
// without them falls back to the module's build information.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

var (
	version  = ""
	revision = ""
)

// Version is perfwh's version ("dev" for an unreleased build).
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Revision is the VCS revision perfwh was built from, or "unknown".
func Revision() string {
	if revision != "" {
		return revision
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// GoVersion is the Go toolchain perfwh was built with.
func GoVersion() string { return runtime.Version() }
