// Package local implements evidence.Backend on a local directory.
//
// Objects are files under the root directory at their key's path. Create
// writes a temporary file under root/tmp, fsyncs it, makes it read-only and
// hard-links it to its final name: link(2) fails when the name exists, which
// gives write-once semantics without a race, and a crash leaves at worst a
// stray temporary file, never a partial object. The parent directory is
// fsynced after the link so the new name survives a power loss.
package local
