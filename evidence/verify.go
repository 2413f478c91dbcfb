package evidence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Object kinds in a verification report.
const (
	KindRun      = "run"
	KindManifest = "manifest"
	KindBlob     = "blob"
)

// ObjectCheck is the verdict on one stored object.
type ObjectCheck struct {
	Kind   string `json:"kind"`
	URI    string `json:"uri"`
	Digest string `json:"digest,omitempty"`
	Path   string `json:"path,omitempty"` // bundle path, for blobs
	Role   string `json:"role,omitempty"`
	Size   int64  `json:"size"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
}

// VerifyReport lists every object checked for a reference.
type VerifyReport struct {
	Ref            string        `json:"ref"`
	RunID          string        `json:"run_id,omitempty"`
	ManifestDigest string        `json:"manifest_digest,omitempty"`
	Objects        []ObjectCheck `json:"objects"`
	Checked        int           `json:"checked"`
	Failed         int           `json:"failed"`
	Bytes          int64         `json:"bytes"`
}

// OK reports whether every object verified.
func (v *VerifyReport) OK() bool { return v.Failed == 0 }

func (v *VerifyReport) add(c ObjectCheck) {
	v.Objects = append(v.Objects, c)
	v.Checked++
	if !c.OK {
		v.Failed++
	} else {
		v.Bytes += c.Size
	}
}

// Verify re-hashes everything ref names: a run id (pointer, manifest and
// every blob), a manifest digest (manifest and its blobs) or a blob digest.
// The error is non-nil only when ref names nothing or the store cannot be
// reached; integrity failures are in the report.
func (r *Repository) Verify(ctx context.Context, ref string) (*VerifyReport, error) {
	rep := &VerifyReport{Ref: ref}
	if ValidRunID(ref) == nil && len(ref) != 64 {
		p, err := r.ReadRun(ctx, ref)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("no run %s in %s", ref, r.be.URI("runs/"))
			}
			rep.add(ObjectCheck{Kind: KindRun, URI: r.be.URI(RunName(ref)), Error: err.Error()})
			return rep, nil
		}
		rep.RunID = p.RunID
		rep.add(ObjectCheck{Kind: KindRun, URI: r.be.URI(RunName(ref)), OK: true})
		r.verifyManifest(ctx, rep, p.ManifestDigest, p.RunID)
		return rep, nil
	}
	d, err := ParseDigest(ref)
	if err != nil {
		return nil, fmt.Errorf("%q is neither a run id nor a digest", ref)
	}
	if _, err := r.be.Stat(ctx, ManifestName(d)); err == nil {
		r.verifyManifest(ctx, rep, d, "")
		return rep, nil
	}
	if _, err := r.be.Stat(ctx, BlobName(d)); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("no manifest or blob %s in the store", d)
		}
		return nil, err
	}
	rep.add(r.verifyBlob(ctx, File{Digest: d, Size: -1}))
	return rep, nil
}

func (r *Repository) verifyManifest(ctx context.Context, rep *VerifyReport, d Digest, runID string) {
	rep.ManifestDigest = d.String()
	c := ObjectCheck{Kind: KindManifest, URI: r.ManifestURI(d), Digest: d.String()}
	m, err := r.ReadManifest(ctx, d)
	if err == nil && runID != "" && m.RunID != runID {
		err = fmt.Errorf("manifest is for run %s, not %s", m.RunID, runID)
	}
	if err != nil {
		c.Error = err.Error()
		rep.add(c)
		return
	}
	if info, err := r.be.Stat(ctx, ManifestName(d)); err == nil {
		c.Size = info.Size
	}
	c.OK = true
	rep.add(c)
	if rep.RunID == "" {
		rep.RunID = m.RunID
	}
	checks := make([]ObjectCheck, len(m.Files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range m.Files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			checks[i] = r.verifyBlob(ctx, f)
		}()
	}
	wg.Wait()
	for _, c := range checks {
		rep.add(c)
	}
}

// verifyBlob re-hashes one blob; f.Size < 0 skips the size check.
func (r *Repository) verifyBlob(ctx context.Context, f File) ObjectCheck {
	c := ObjectCheck{Kind: KindBlob, URI: r.BlobURI(f.Digest), Digest: f.Digest.String(), Path: f.Path, Role: f.Role, Size: f.Size}
	rc, err := r.OpenBlob(ctx, f.Digest)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	defer rc.Close()
	n, err := io.CopyBuffer(io.Discard, rc, make([]byte, 1<<20))
	switch {
	case err != nil:
		c.Error = err.Error()
	case f.Size >= 0 && n != f.Size:
		c.Error = (&SizeMismatchError{Object: c.URI, Want: f.Size, Got: n}).Error()
	default:
		c.OK = true
		c.Size = n
	}
	return c
}
