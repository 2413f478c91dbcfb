package lineage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/perfwh/perfwh/evidence"
)

// Level is how deeply evidence is checked.
type Level string

// Verification levels.
const (
	// LevelManifest reads every run pointer, re-hashes every manifest and
	// checks that every blob exists with the size its manifest gives.
	LevelManifest Level = "manifest"
	// LevelDeep also re-hashes every blob.
	LevelDeep Level = "deep"
)

// ParseLevel parses --verify.
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case LevelManifest, LevelDeep:
		return Level(s), nil
	}
	return "", fmt.Errorf("--verify must be manifest or deep, got %q", s)
}

// Problem is one broken link of a lineage: the object and what is wrong.
type Problem struct {
	Link    string `json:"link"`   // publication, query, row, run, manifest, blob, warehouse, gate
	Object  string `json:"object"` // digest, run id, query or gate name
	URI     string `json:"uri,omitempty"`
	Message string `json:"message"`
	RunID   string `json:"run_id,omitempty"`
	Path    string `json:"path,omitempty"` // bundle path, for blobs
}

func (p Problem) String() string {
	s := p.Link + " " + p.Object + " " + p.Message
	var ctx []string
	if p.URI != "" {
		ctx = append(ctx, p.URI)
	}
	if p.RunID != "" && p.RunID != p.Object {
		ctx = append(ctx, "run "+p.RunID)
	}
	if p.Path != "" {
		ctx = append(ctx, p.Path)
	}
	if len(ctx) > 0 {
		s += " (" + strings.Join(ctx, ", ") + ")"
	}
	return s
}

// ObjectState is the verdict on a run pointer or manifest.
type ObjectState struct {
	URI      string `json:"uri"`
	Verified bool   `json:"verified"`
	Error    string `json:"error,omitempty"`
}

// ManifestState is the verdict on a run's manifest.
type ManifestState struct {
	Digest evidence.Digest `json:"digest"`
	ObjectState
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// BlobState is the verdict on one file of a run's bundle.
type BlobState struct {
	Path      string          `json:"path"`
	Role      string          `json:"role"`
	Trial     string          `json:"trial,omitempty"`
	MediaType string          `json:"media_type"`
	Digest    evidence.Digest `json:"digest"`
	Size      int64           `json:"size"`
	URI       string          `json:"uri"`
	Verified  bool            `json:"verified"`
	// Check says what verified means: "size" (exists with the manifest's
	// size; LevelManifest) or "sha256" (re-hashed; LevelDeep).
	Check string `json:"check"`
	Error string `json:"error,omitempty"`
}

// RunEvidence is what the store holds for one run, checked.
type RunEvidence struct {
	RunID              string              `json:"run_id"`
	Pointer            ObjectState         `json:"pointer"`
	Manifest           ManifestState       `json:"manifest"`
	WorkloadSpecDigest string              `json:"workload_spec_digest,omitempty"`
	Benchmark          *evidence.Benchmark `json:"benchmark,omitempty"`
	Blobs              []BlobState         `json:"blobs"`
	Dimensions         *Dimensions         `json:"dimensions,omitempty"`
	// manifest is the decoded manifest when it verified (gates read it).
	manifest *manifestInfo
}

// Verified reports whether the pointer, the manifest and every blob
// verified.
func (r *RunEvidence) Verified() bool {
	if !r.Pointer.Verified || !r.Manifest.Verified {
		return false
	}
	for _, b := range r.Blobs {
		if !b.Verified {
			return false
		}
	}
	return true
}

// RunRef names a run and, when known, the manifest it must have.
type RunRef struct {
	RunID          string
	ManifestDigest evidence.Digest // zero: whatever the run pointer names
}

// Checker checks runs' evidence in a repository.
type Checker struct {
	Repo  *evidence.Repository
	Level Level
	// Workers bounds concurrent store operations. By default, on a local
	// store 4×GOMAXPROCS for metadata and 2×GOMAXPROCS when re-hashing
	// (measured best on 2 cores: fewer leave the CPUs idle during system
	// calls, more contend); on a remote store 32 and 16, to cover network
	// round trips.
	Workers int
}

func (c *Checker) workers(hashing bool) int {
	if c.Workers > 0 {
		return c.Workers
	}
	p := runtime.GOMAXPROCS(0)
	local := strings.HasPrefix(c.Repo.Backend().URI(""), "file:")
	switch {
	case local && hashing:
		return 2 * p
	case local:
		return 4 * p
	case hashing:
		return max(16, 2*p)
	}
	return max(32, 4*p)
}

// Check verifies runs and returns their evidence, in the order given, and
// every problem found. Blobs shared by several runs are checked once.
func (c *Checker) Check(ctx context.Context, runs []RunRef) ([]*RunEvidence, []Problem) {
	out := make([]*RunEvidence, len(runs))
	probs := make([][]Problem, len(runs))
	parallel(len(runs), c.workers(false), func(i int) {
		out[i], probs[i] = c.checkRun(ctx, runs[i])
	})
	var all []Problem
	for _, p := range probs {
		all = append(all, p...)
	}
	// Unique blobs, then each one once.
	var blobs []evidence.Digest
	seen := map[evidence.Digest]int{}
	for _, r := range out {
		for _, b := range r.Blobs {
			if _, ok := seen[b.Digest]; !ok {
				seen[b.Digest] = len(blobs)
				blobs = append(blobs, b.Digest)
			}
		}
	}
	type verdict struct {
		size int64
		err  error
	}
	verdicts := make([]verdict, len(blobs))
	deep := c.Level == LevelDeep
	parallel(len(blobs), c.workers(deep), func(i int) {
		verdicts[i].size, verdicts[i].err = c.checkBlob(ctx, blobs[i], deep)
	})
	check := "size"
	if deep {
		check = "sha256"
	}
	reported := map[evidence.Digest]bool{}
	for _, r := range out {
		for k := range r.Blobs {
			b := &r.Blobs[k]
			v := verdicts[seen[b.Digest]]
			b.Check = check
			switch {
			case errors.Is(v.err, evidence.ErrNotFound):
				b.Error = "missing"
			case v.err != nil:
				b.Error = v.err.Error()
			case v.size != b.Size:
				b.Error = fmt.Sprintf("size %d bytes, manifest says %d", v.size, b.Size)
			default:
				b.Verified = true
			}
			if !b.Verified && !reported[b.Digest] {
				reported[b.Digest] = true // once, however many runs share it
				all = append(all, Problem{Link: "blob", Object: b.Digest.String(), URI: b.URI, Message: b.Error, RunID: r.RunID, Path: b.Path})
			}
		}
	}
	return out, all
}

func (c *Checker) checkRun(ctx context.Context, ref RunRef) (*RunEvidence, []Problem) {
	repo := c.Repo
	r := &RunEvidence{RunID: ref.RunID, Blobs: []BlobState{}}
	r.Pointer.URI = repo.Backend().URI(evidence.RunName(ref.RunID))
	var probs []Problem
	bad := func(link, object, uri, msg string) {
		probs = append(probs, Problem{Link: link, Object: object, URI: uri, Message: msg, RunID: ref.RunID})
	}
	d := ref.ManifestDigest
	p, err := repo.ReadRun(ctx, ref.RunID)
	switch {
	case errors.Is(err, evidence.ErrNotFound):
		r.Pointer.Error = "run pointer missing"
		bad("run", ref.RunID, r.Pointer.URI, r.Pointer.Error)
	case err != nil:
		r.Pointer.Error = err.Error()
		bad("run", ref.RunID, r.Pointer.URI, "run pointer unreadable: "+err.Error())
	case !d.IsZero() && p.ManifestDigest != d:
		r.Pointer.Error = fmt.Sprintf("run pointer names manifest %s, the lineage records %s", p.ManifestDigest, d)
		bad("run", ref.RunID, r.Pointer.URI, r.Pointer.Error)
	default:
		r.Pointer.Verified = true
		d = p.ManifestDigest
	}
	if d.IsZero() {
		return r, probs
	}
	r.Manifest.Digest = d
	r.Manifest.URI = repo.ManifestURI(d)
	buf := manifestBufs.Get().(*bytes.Buffer)
	defer manifestBufs.Put(buf)
	m, err := readManifest(ctx, repo, d, buf)
	var mm *evidence.DigestMismatchError
	switch {
	case errors.Is(err, evidence.ErrNotFound):
		r.Manifest.Error = "missing"
	case errors.As(err, &mm):
		r.Manifest.Error = "corrupt: content hashes to " + mm.Got.String()
	case err != nil:
		r.Manifest.Error = "unreadable: " + err.Error()
	case m.RunID != ref.RunID:
		r.Manifest.Error = fmt.Sprintf("is the manifest of run %s, not %s", m.RunID, ref.RunID)
	}
	if r.Manifest.Error != "" {
		bad("manifest", d.String(), r.Manifest.URI, r.Manifest.Error)
		return r, probs
	}
	r.Manifest.Verified = true
	r.manifest = m
	r.WorkloadSpecDigest = m.WorkloadSpecDigest.String()
	r.Benchmark = &m.Benchmark
	r.Manifest.Files = len(m.Files)
	for _, f := range m.Files {
		r.Manifest.Bytes += f.Size
		r.Blobs = append(r.Blobs, BlobState{Path: f.Path, Role: f.Role, Trial: f.Trial, MediaType: f.MediaType,
			Digest: f.Digest, Size: f.Size, URI: repo.BlobURI(f.Digest)})
	}
	return r, probs
}

var manifestBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// checkBlob returns a blob's size: by Stat, or by reading and re-hashing it
// (deep), which fails with a *evidence.DigestMismatchError on altered
// content.
func (c *Checker) checkBlob(ctx context.Context, d evidence.Digest, deep bool) (int64, error) {
	if !deep {
		oi, err := c.Repo.Backend().Stat(ctx, evidence.BlobName(d))
		return oi.Size, err
	}
	rc, err := c.Repo.OpenBlob(ctx, d)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	// io.Discard's ReadFrom would read in 8 KiB pieces; hide it to use buf.
	n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, rc, *buf)
	var mm *evidence.DigestMismatchError
	if errors.As(err, &mm) {
		return n, fmt.Errorf("corrupt: content hashes to %s", mm.Got)
	}
	return n, err
}

// parallel calls f(0..n-1) on at most workers goroutines.
func parallel(n, workers int, f func(i int)) {
	if workers > n {
		workers = n
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// sortProblems orders problems by link (outermost first), then object.
func sortProblems(ps []Problem) {
	order := map[string]int{"publication": 0, "query": 1, "gate": 2, "row": 3, "warehouse": 4, "run": 5, "manifest": 6, "blob": 7}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := order[a.Link] - order[b.Link]; c != 0 {
			return c
		}
		if c := strings.Compare(a.Object, b.Object); c != 0 {
			return c
		}
		return strings.Compare(a.RunID, b.RunID)
	})
}
