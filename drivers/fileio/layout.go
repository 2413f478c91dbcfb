package fileio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// layoutChunk is the size of the writes that lay out a file.
const layoutChunk = 1 << 20

// layOut makes path a regular file of exactly size bytes of incompressible
// data, fsynced. A regular file that already has that size is used as it is
// (like fio, which lays out a file only when it is missing or too small);
// one of another size is rewritten. created reports whether the file did not
// exist before: only such files are removed on failure (and by Close, in a
// target dir).
func layOut(ctx context.Context, path string, size int64, seed int64) (created bool, err error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return false, fmt.Errorf("exists and is not a regular file (%s)", st.Mode().Type())
	case err == nil && st.Size() == size:
		return false, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, err
	}
	have := int64(0)
	flags := os.O_WRONLY | os.O_TRUNC
	if err != nil {
		created, flags = true, os.O_WRONLY|os.O_CREATE|os.O_EXCL
	} else {
		have = st.Size()
	}
	if err := checkFreeSpace(path, size-have); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return false, err
	}
	fail := func(err error) (bool, error) {
		f.Close()
		if created {
			os.Remove(path)
		}
		return false, err
	}
	buf := make([]byte, layoutChunk)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(seed))
	copy(key[8:], "perfwh fileio layout")
	src := rand.NewChaCha8(key)
	for off := int64(0); off < size; off += layoutChunk {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("interrupted at offset %d: %w", off, err))
		}
		n := min(int64(layoutChunk), size-off)
		src.Read(buf[:n]) // never fails
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("fsync: %w", err))
	}
	if err := f.Close(); err != nil {
		if created {
			os.Remove(path)
		}
		return false, err
	}
	return created, nil
}

// checkFreeSpace fails early, with a clear message, when the file system of
// path cannot hold need more bytes.
func checkFreeSpace(path string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil || st.Blocks == 0 {
		// Not knowing (or a file system that keeps no count, like
		// ramfs) is no reason to fail; the writes will say.
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if need > 0 && free < need {
		return fmt.Errorf("needs %d more bytes but its file system has %d available", need, free)
	}
	return nil
}

// alignedBuffer returns n bytes starting at a multiple of bufAlign, as
// O_DIRECT requires. It over-allocates on the Go heap, which does not move
// objects.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+bufAlign)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (bufAlign - 1))
	return b[skip : skip+n : skip+n]
}

// fillRandom fills b with pseudo-random bytes derived from seed and stream.
func fillRandom(b []byte, seed int64, stream uint64) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(seed))
	binary.LittleEndian.PutUint64(key[8:], stream)
	copy(key[16:], "perfwh fileio")
	rand.NewChaCha8(key).Read(b)
}

// fsTypeName names the file system holding path, for Attributes and error
// messages.
func fsTypeName(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "unknown"
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC:
		return "ext2/3/4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.RAMFS_MAGIC:
		return "ramfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	}
	return fmt.Sprintf("0x%x", uint64(st.Type))
}
