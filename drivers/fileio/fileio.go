package fileio

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfwh/perfwh/drivers"
)

// Name and Version identify the driver in case files and manifests.
const (
	Name    = "fileio"
	Version = "1.0.0"
)

// Modes of the workload parameter "mode".
const (
	ModeRead      = "read"
	ModeWrite     = "write"
	ModeRandRead  = "randread"
	ModeRandWrite = "randwrite"
)

// Op values of the samples this driver records.
const (
	OpRead  = "read"
	OpWrite = "write"
	OpFsync = "fsync"
)

// Error kinds of failed samples.
const (
	ErrKindIO         = "io"
	ErrKindShortRead  = "short_read"
	ErrKindShortWrite = "short_write"
)

// bufAlign is the alignment of I/O buffers: enough for O_DIRECT on every
// common device (logical blocks of 512 or 4096 bytes).
const bufAlign = 4096

// filePrefix names the files the driver lays out: fileio.dat for a shared
// file, fileio.N.dat for thread N's file.
const filePrefix = "fileio"

func init() { drivers.Register(Driver{}) }

// Driver is the file I/O driver. It is stateless; Open prepares a trial.
type Driver struct{}

var _ drivers.Driver = Driver{}

// Info describes the driver and its parameters.
func (Driver) Info() drivers.Info {
	return drivers.Info{
		Name:    Name,
		Version: Version,
		Description: "File I/O like fio's psync engine: threads issue pread/pwrite of block_size " +
			"at sequential or seeded-random block-aligned offsets of a laid-out file, optionally with O_DIRECT and periodic fsync.",
		Params: []drivers.Param{
			{Name: "mode", Type: drivers.String, Default: ModeRead,
				Enum: []string{ModeRead, ModeWrite, ModeRandRead, ModeRandWrite},
				Doc:  "read (sequential read), write (sequential write), randread, randwrite"},
			{Name: "file_size", Type: drivers.Size, Default: "64MiB", Min: drivers.Bound(bufAlign),
				Doc: "size of the file (of each file with file_per_thread)"},
			{Name: "block_size", Type: drivers.Size, Default: "4KiB", Min: drivers.Bound(512),
				Doc: "bytes per read or write; offsets are multiples of it"},
			{Name: "threads", Type: drivers.Int, Default: 1, Min: drivers.Bound(1), Max: drivers.Bound(256),
				Doc: "concurrent workers, each with its own file descriptor (fio numjobs)"},
			{Name: "fsync", Type: drivers.Int, Default: 0, Min: drivers.Bound(0),
				Doc: "write modes: fsync after every N writes of a thread (0: never); recorded as fsync samples"},
			{Name: "direct", Type: drivers.Bool, Default: false,
				Doc: "open with O_DIRECT (bypass the page cache); Open fails if the file system refuses it"},
			{Name: "file_per_thread", Type: drivers.Bool, Default: false,
				Doc: "false: threads share one file (sequential: disjoint regions; random: whole file); true: one file of file_size per thread"},
		},
		Target: []drivers.Param{
			{Name: "dir", Type: drivers.String, Default: "",
				Doc: "existing directory for the test files; empty: the trial's scratch directory. Files the driver creates here are removed on Close"},
		},
	}
}

// config is the resolved parameters of one trial.
type config struct {
	mode          string
	write, random bool
	fileSize      int64
	blockSize     int64
	threads       int
	fsyncEvery    int64
	direct        bool
	filePerThread bool
	dir           string // absolute
	userDir       bool   // dir came from the target, not the trial's WorkDir
}

func parseConfig(tc drivers.TrialConfig) (config, error) {
	p := tc.Params
	c := config{
		mode:          p.String("mode"),
		fileSize:      p.Int("file_size"),
		blockSize:     p.Int("block_size"),
		threads:       int(p.Int("threads")),
		fsyncEvery:    p.Int("fsync"),
		direct:        p.Bool("direct"),
		filePerThread: p.Bool("file_per_thread"),
	}
	c.write = c.mode == ModeWrite || c.mode == ModeRandWrite
	c.random = c.mode == ModeRandRead || c.mode == ModeRandWrite
	if !c.write {
		c.fsyncEvery = 0 // fsync has nothing to flush in read modes
	}
	if c.blockSize > c.fileSize {
		return c, fmt.Errorf("block_size %d is larger than file_size %d", c.blockSize, c.fileSize)
	}
	if c.direct && c.blockSize%512 != 0 {
		return c, fmt.Errorf("direct=true needs block_size to be a multiple of 512, got %d", c.blockSize)
	}
	if !c.filePerThread && !c.random && c.regionBlocks() < 1 {
		return c, fmt.Errorf("file_size %d is too small for %d threads reading or writing disjoint regions of block_size %d",
			c.fileSize, c.threads, c.blockSize)
	}
	dir := ""
	if tc.Target != nil {
		if v, ok := tc.Target["dir"]; ok {
			dir, _ = v.(string)
		}
	}
	c.userDir = dir != ""
	if dir == "" {
		dir = tc.WorkDir
	}
	if dir == "" {
		return c, errors.New("no directory: target dir is empty and the trial has no WorkDir")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return c, fmt.Errorf("directory %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return c, fmt.Errorf("directory %s: %w", abs, err)
	}
	if !st.IsDir() {
		return c, fmt.Errorf("directory %s: not a directory", abs)
	}
	c.dir = abs
	if wd, err := filepath.Abs(tc.WorkDir); c.userDir && tc.WorkDir != "" && err == nil && wd == abs {
		c.userDir = false // the scratch directory named explicitly: the runner cleans it
	}
	return c, nil
}

// regionBlocks is the number of blocks each thread covers: the whole file
// for random modes and per-thread files, a 1/threads share of a shared file
// for sequential modes.
func (c config) regionBlocks() int64 {
	n := c.fileSize / c.blockSize
	if !c.filePerThread && !c.random {
		n /= int64(c.threads)
	}
	return n
}

// paths lists the files of the trial.
func (c config) paths() []string {
	if !c.filePerThread {
		return []string{filepath.Join(c.dir, filePrefix+".dat")}
	}
	out := make([]string, c.threads)
	for i := range out {
		out[i] = filepath.Join(c.dir, fmt.Sprintf("%s.%d.dat", filePrefix, i))
	}
	return out
}

// instance is one prepared trial.
type instance struct {
	cfg     config
	origin  time.Time
	paths   []string
	created []string // files this trial laid out from nothing
	fsType  string
	workers []*worker
	col     *collector
}

// Open lays out the files (unless they exist at file_size), opens one file
// descriptor per thread and checks that O_DIRECT works when asked for.
func (Driver) Open(ctx context.Context, tc drivers.TrialConfig) (drivers.Instance, error) {
	cfg, err := parseConfig(tc)
	if err != nil {
		return nil, fmt.Errorf("fileio: %w", err)
	}
	if tc.Origin.IsZero() {
		tc.Origin = time.Now()
	}
	in := &instance{cfg: cfg, origin: tc.Origin, paths: cfg.paths(), fsType: fsTypeName(cfg.dir), col: &collector{}}
	ok := false
	defer func() {
		if !ok {
			in.closeFiles()
			in.removeCreated()
		}
	}()
	for i, p := range in.paths {
		created, err := layOut(ctx, p, cfg.fileSize, tc.Seed+int64(i))
		if err != nil {
			return nil, fmt.Errorf("fileio: lay out %s: %w", p, err)
		}
		if created {
			in.created = append(in.created, p)
		}
		if tc.Log != nil {
			tc.Log.Info("fileio file ready", "path", p, "size", cfg.fileSize, "laid_out", created)
		}
	}
	for i := range cfg.threads {
		w, err := newWorker(cfg, i, in.paths[min(i, len(in.paths)-1)], tc.Seed, tc.Origin, in.col)
		if w != nil {
			in.workers = append(in.workers, w)
		}
		if err != nil {
			return nil, fmt.Errorf("fileio: %w", err)
		}
	}
	ok = true
	return in, nil
}

// openFile opens path for the mode, with O_DIRECT when asked, and checks
// with one aligned read that the file system accepts O_DIRECT I/O (some
// refuse it at open, others only at the first read or write).
func openFile(cfg config, path string, probe []byte) (int, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if cfg.write {
		flags = unix.O_RDWR | unix.O_CLOEXEC
	}
	if cfg.direct {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		if cfg.direct && errors.Is(err, unix.EINVAL) {
			return -1, fmt.Errorf("open %s with O_DIRECT: the file system (%s) refuses direct I/O: %w; use direct=false or a directory on another file system",
				path, fsTypeName(filepath.Dir(path)), err)
		}
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	if cfg.direct {
		if _, err := unix.Pread(fd, probe, 0); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("O_DIRECT read of %d bytes at offset 0 of %s failed: the file system (%s) refuses direct I/O of this size or alignment: %w",
				len(probe), path, fsTypeName(filepath.Dir(path)), err)
		}
	}
	return fd, nil
}

// Attributes reports the resolved files and I/O settings.
func (in *instance) Attributes() map[string]any {
	c := in.cfg
	offsets := "sequential, wrapping, each thread in its own disjoint region of the shared file"
	switch {
	case c.random:
		offsets = "uniform random block-aligned over the whole file (with replacement), PCG seeded per thread"
	case c.filePerThread:
		offsets = "sequential, wrapping, each thread over its own file"
	}
	cache := "used; nothing dropped before or between phases (fio --invalidate=0)"
	if c.direct {
		cache = "bypassed (O_DIRECT)"
	}
	return map[string]any{
		"mode":             c.mode,
		"files":            append([]string(nil), in.paths...),
		"files_laid_out":   len(in.created),
		"dir":              c.dir,
		"fs_type":          in.fsType,
		"file_size":        c.fileSize,
		"block_size":       c.blockSize,
		"threads":          c.threads,
		"file_per_thread":  c.filePerThread,
		"region_size":      c.regionBlocks() * c.blockSize,
		"offsets":          offsets,
		"offset_alignment": c.blockSize,
		"buffer_alignment": bufAlign,
		"direct":           c.direct, // Open fails rather than fall back, so requested == in effect
		"fsync_every":      c.fsyncEvery,
		"io_engine":        "psync (pread/pwrite)",
		"page_cache":       cache,
	}
}

// Close closes the files and removes those it laid out in a target dir
// (files in the trial's WorkDir are left to the runner).
func (in *instance) Close() error {
	in.col.release()
	err := in.closeFiles()
	if rerr := in.removeCreated(); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

func (in *instance) closeFiles() error {
	var errs []error
	for _, w := range in.workers {
		if w.fd >= 0 {
			if err := unix.Close(w.fd); err != nil {
				errs = append(errs, fmt.Errorf("fileio: close %s: %w", w.path, err))
			}
			w.fd = -1
		}
	}
	return errors.Join(errs...)
}

func (in *instance) removeCreated() error {
	if !in.cfg.userDir {
		return nil
	}
	var errs []error
	for _, p := range in.created {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("fileio: remove %s: %w", p, err))
		}
	}
	in.created = nil
	return errors.Join(errs...)
}

// newWorker prepares thread i: its file descriptor, aligned buffer, offset
// generator and sample batch.
func newWorker(cfg config, i int, path string, seed int64, origin time.Time, col *collector) (*worker, error) {
	w := &worker{
		id:         int32(i),
		fd:         -1,
		path:       path,
		bs:         cfg.blockSize,
		write:      cfg.write,
		random:     cfg.random,
		nblocks:    cfg.regionBlocks(),
		fsyncEvery: cfg.fsyncEvery,
		origin:     origin,
		buf:        alignedBuffer(int(cfg.blockSize)),
		col:        col,
	}
	if !cfg.filePerThread && !cfg.random {
		w.regionStart = int64(i) * w.nblocks * w.bs
	}
	w.rng = rand.New(rand.NewPCG(uint64(seed)+uint64(i), pcgStream))
	w.op = opRead
	if w.write {
		w.op = opWrite
		// Incompressible payload, different per thread; each write stamps
		// its offset into the first 8 bytes (see stamp).
		fillRandom(w.buf, seed, uint64(i)+1)
	}
	fd, err := openFile(cfg, path, w.buf)
	if err != nil {
		return w, err
	}
	w.fd = fd
	return w, nil
}
