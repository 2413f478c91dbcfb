package storetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfwh/perfwh/evidence"
)

func (s *suite) testRepository(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"PutBlobDedup", s.testPutBlobDedup},
		{"PutBlobFile", s.testPutBlobFile},
		{"BlobUnderWrongName", s.testBlobUnderWrongName},
		{"CorruptAfterWrite", s.testCorruptAfterWrite},
		{"ManifestsAndRuns", s.testManifestsAndRuns},
		{"BundleCommitAndVerify", s.testBundleCommitAndVerify},
		{"VerifyReportsFailures", s.testVerifyReportsFailures},
	} {
		t.Run(tc.name, tc.fn)
	}
}

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func manifest(runID string, files ...evidence.File) *evidence.Manifest {
	return &evidence.Manifest{
		Format: evidence.ManifestFormat, FormatVersion: evidence.ManifestFormatVersion,
		RunID:     runID,
		Benchmark: evidence.Benchmark{Name: "storetest", Version: "1", Driver: "none"},
		Status:    evidence.RunComplete,
		StartedAt: t0, EndedAt: t0.Add(time.Minute),
		Trials: []evidence.Trial{{ID: "t0001", Point: 1, Repetition: 1, Status: evidence.TrialOK,
			StartedAt: t0, EndedAt: t0.Add(time.Minute)}},
		Files: files,
	}
}

func (s *suite) testPutBlobDedup(t *testing.T) {
	ctx := context.Background()
	repo := evidence.NewRepository(s.newBackend(t))
	data := payload(11, 5000)
	d1, created, err := repo.PutBlob(ctx, data)
	if err != nil || !created {
		t.Fatalf("first PutBlob = %v, created %v; want created", err, created)
	}
	if d1 != evidence.Sum(data) {
		t.Errorf("PutBlob digest %s; want %s", d1, evidence.Sum(data))
	}
	d2, created, err := repo.PutBlob(ctx, data)
	if err != nil || created || d2 != d1 {
		t.Fatalf("second PutBlob = %s, created %v, %v; want %s, not created", d2, created, err, d1)
	}
	if got := names(list(t, repo.Backend(), "blobs/")); !slices.Equal(got, []string{evidence.BlobName(d1)}) {
		t.Errorf("stored blobs %q; want exactly one, %s", got, evidence.BlobName(d1))
	}
	got, err := repo.ReadBlob(ctx, d1)
	if err != nil {
		t.Fatalf("ReadBlob: %v", err)
	}
	if err := sameBytes(got, data); err != nil {
		t.Errorf("ReadBlob: %v", err)
	}
}

func (s *suite) testPutBlobFile(t *testing.T) {
	ctx := context.Background()
	repo := evidence.NewRepository(s.newBackend(t))
	dir := t.TempDir()
	for i, size := range []int{0, 3000, 2<<20 + 1} {
		data := payload(uint64(20+i), size)
		src := filepath.Join(dir, "src")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, n, created, err := repo.PutBlobFile(ctx, src)
		if err != nil || !created || n != int64(size) || d != evidence.Sum(data) {
			t.Fatalf("PutBlobFile(%d bytes) = %s, %d, created %v, %v; want %s, %d, created", size, d, n, created, err, evidence.Sum(data), size)
		}
		if _, _, created, err := repo.PutBlobFile(ctx, src); err != nil || created {
			t.Errorf("second PutBlobFile: created %v, %v; want deduplicated", created, err)
		}
		if err := os.Remove(src); err != nil { // the store must not depend on it
			t.Fatal(err)
		}
		got, err := repo.ReadBlob(ctx, d)
		if err != nil {
			t.Fatalf("ReadBlob after removing the source: %v", err)
		}
		if err := sameBytes(got, data); err != nil {
			t.Errorf("ReadBlob: %v", err)
		}
	}
}

// testBlobUnderWrongName stores content under another content's address,
// the one corruption every backend can express, and expects every read and
// Verify to catch it.
func (s *suite) testBlobUnderWrongName(t *testing.T) {
	repo := evidence.NewRepository(s.newBackend(t))
	good, bad := []byte("the real content"), []byte("tampered content")
	d := evidence.Sum(good)
	create(t, repo.Backend(), evidence.BlobName(d), bad)
	checkBlobMismatch(t, repo, d)
}

func (s *suite) testCorruptAfterWrite(t *testing.T) {
	if s.opts.Corrupt == nil {
		t.Skip("backend has no Corrupt hook")
	}
	ctx := context.Background()
	be := s.newBackend(t)
	repo := evidence.NewRepository(be)
	d, _, err := repo.PutBlob(ctx, payload(30, 10000))
	if err != nil {
		t.Fatal(err)
	}
	corrupted := payload(30, 10000)
	corrupted[5000] ^= 1
	s.opts.Corrupt(t, be, evidence.BlobName(d), corrupted)
	checkBlobMismatch(t, repo, d)

	md, err := repo.PutManifest(ctx, manifest("run-corrupt", evidence.File{Path: "a", Digest: d, Size: 10000}))
	if err != nil {
		t.Fatal(err)
	}
	enc, _, _ := manifest("run-corrupt-other").Encode()
	s.opts.Corrupt(t, be, evidence.ManifestName(md), enc)
	var mm *evidence.DigestMismatchError
	if _, err := repo.ReadManifest(ctx, md); !errors.As(err, &mm) || mm.Object != repo.ManifestURI(md) {
		t.Errorf("ReadManifest of a corrupted manifest = %v; want a DigestMismatchError naming %s", err, repo.ManifestURI(md))
	}
}

func checkBlobMismatch(t *testing.T, repo *evidence.Repository, d evidence.Digest) {
	t.Helper()
	ctx := context.Background()
	_, err := repo.ReadBlob(ctx, d)
	var mm *evidence.DigestMismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("ReadBlob = %v; want a DigestMismatchError", err)
	}
	if mm.Object != repo.BlobURI(d) || mm.Want != d {
		t.Errorf("mismatch names %s (want %s); want %s (%s)", mm.Object, mm.Want, repo.BlobURI(d), d)
	}
	rep, err := repo.Verify(ctx, d.String())
	if err != nil {
		t.Fatalf("Verify(%s): %v", d, err)
	}
	if rep.OK() || rep.Failed != 1 || len(rep.Objects) != 1 || rep.Objects[0].URI != repo.BlobURI(d) || rep.Objects[0].Error == "" {
		t.Errorf("Verify(%s) = %+v; want one failed object %s", d, rep, repo.BlobURI(d))
	}
}

func (s *suite) testManifestsAndRuns(t *testing.T) {
	ctx := context.Background()
	repo := evidence.NewRepository(s.newBackend(t))
	blob := []byte("samples")
	bd, _, err := repo.PutBlob(ctx, blob)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"20250102T030405Z-aaaa", "20250102T030406Z-bbbb"}
	for _, id := range ids {
		m := manifest(id, evidence.File{Path: "samples.jsonl", Digest: bd, Size: int64(len(blob)), Role: evidence.RoleSamples})
		md, err := repo.PutManifest(ctx, m)
		if err != nil {
			t.Fatalf("PutManifest: %v", err)
		}
		if md2, err := repo.PutManifest(ctx, manifest(id, m.Files...)); err != nil || md2 != md {
			t.Errorf("PutManifest again = %s, %v; want %s (idempotent)", md2, err, md)
		}
		got, err := repo.ReadManifest(ctx, md)
		if err != nil {
			t.Fatalf("ReadManifest: %v", err)
		}
		if got.RunID != id || len(got.Files) != 1 || got.Files[0].Digest != bd {
			t.Errorf("ReadManifest = %+v; want run %s with the blob", got, id)
		}
		p := evidence.PointerFor(m, md)
		if err := repo.CommitRun(ctx, p); err != nil {
			t.Fatalf("CommitRun(%s): %v", id, err)
		}
		if err := repo.CommitRun(ctx, p); !errors.Is(err, evidence.ErrExists) {
			t.Errorf("second CommitRun(%s) = %v; want ErrExists", id, err)
		}
		rp, err := repo.ReadRun(ctx, id)
		if err != nil || rp.ManifestDigest != md || rp.TrialsOK != 1 {
			t.Errorf("ReadRun(%s) = %+v, %v; want manifest %s, 1 trial ok", id, rp, err, md)
		}
	}
	// A pointer that does not decode is reported and skipped.
	create(t, repo.Backend(), evidence.RunName("20250102T030407Z-junk"), []byte("{not json"))
	var bad []string
	runs, err := repo.ListRuns(ctx, func(name string, err error) { bad = append(bad, name) })
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.RunID)
	}
	if !slices.Equal(got, ids) {
		t.Errorf("ListRuns = %q; want %q", got, ids)
	}
	if !slices.Equal(bad, []string{"runs/20250102T030407Z-junk"}) {
		t.Errorf("ListRuns reported bad %q; want the junk pointer", bad)
	}
	if _, err := repo.ReadRun(ctx, "20990101T000000Z-none"); !errors.Is(err, evidence.ErrNotFound) {
		t.Errorf("ReadRun(missing) = %v; want ErrNotFound", err)
	}
}

func (s *suite) testBundleCommitAndVerify(t *testing.T) {
	ctx := context.Background()
	repo := evidence.NewRepository(s.newBackend(t))
	files := map[string][]byte{
		"spec.json":           []byte(`{"workload":"x"}`),
		"t0001/samples.jsonl": payload(40, 300000),
		"t0002/samples.jsonl": payload(40, 300000), // same content: one blob
	}
	commit := func(id string) evidence.CommitResult {
		w, err := evidence.NewBundleWriter(filepath.Join(t.TempDir(), "stage"))
		if err != nil {
			t.Fatal(err)
		}
		for p, data := range files {
			trial, _, _ := strings.Cut(p, "/")
			if !strings.HasPrefix(trial, "t0") {
				trial = ""
			}
			if err := w.AddBytes(p, evidence.RoleSamples, evidence.MediaJSONL, trial, data); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Commit(ctx, repo, manifest(id))
		if err != nil {
			t.Fatalf("Commit(%s): %v", id, err)
		}
		return res
	}
	res := commit("run-one")
	if res.Files != 3 || res.BlobsCreated+res.BlobsExisting != 3 || res.BlobsCreated < 2 {
		t.Errorf("first commit %+v; want 3 files, at least 2 new blobs", res)
	}
	if res2 := commit("run-two"); res2.BlobsCreated != 0 || res2.BlobsExisting != 3 {
		t.Errorf("second commit %+v; want every blob deduplicated", res2)
	}
	if got := len(list(t, repo.Backend(), "blobs/")); got != 2 {
		t.Errorf("%d blobs stored; want 2", got)
	}
	rep, err := repo.Verify(ctx, "run-one")
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() || rep.Checked != 5 || rep.RunID != "run-one" || rep.ManifestDigest != res.ManifestDigest.String() {
		t.Errorf("Verify(run-one) = %+v; want 5 objects (run, manifest, 3 files) OK", rep)
	}
	if rep, err := repo.Verify(ctx, res.ManifestDigest.String()); err != nil || !rep.OK() || rep.Checked != 4 {
		t.Errorf("Verify(manifest) = %+v, %v; want 4 objects OK", rep, err)
	}
	if _, err := repo.Verify(ctx, "run-missing"); err == nil {
		t.Errorf("Verify(run-missing) succeeded; want an error")
	}
}

func (s *suite) testVerifyReportsFailures(t *testing.T) {
	ctx := context.Background()
	repo := evidence.NewRepository(s.newBackend(t))
	okData, wrong, missing := []byte("fine"), []byte("stored under the wrong name"), []byte("never stored")
	okD, _, err := repo.PutBlob(ctx, okData)
	if err != nil {
		t.Fatal(err)
	}
	wrongD := evidence.Sum([]byte("what the manifest expects"))
	create(t, repo.Backend(), evidence.BlobName(wrongD), wrong)
	missingD := evidence.Sum(missing)
	m := manifest("run-bad",
		evidence.File{Path: "ok", Digest: okD, Size: int64(len(okData))},
		evidence.File{Path: "wrong", Digest: wrongD, Size: int64(len(wrong))},
		evidence.File{Path: "missing", Digest: missingD, Size: int64(len(missing))},
		evidence.File{Path: "size", Digest: okD, Size: 999},
	)
	md, err := repo.PutManifest(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CommitRun(ctx, evidence.PointerFor(m, md)); err != nil {
		t.Fatal(err)
	}
	rep, err := repo.Verify(ctx, "run-bad")
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.OK() || rep.Checked != 6 || rep.Failed != 3 {
		t.Fatalf("Verify = checked %d, failed %d; want 6 checked, 3 failed", rep.Checked, rep.Failed)
	}
	failed := map[string]string{}
	for _, c := range rep.Objects {
		if !c.OK {
			failed[c.Path] = c.URI
		}
	}
	want := map[string]string{"wrong": repo.BlobURI(wrongD), "missing": repo.BlobURI(missingD), "size": repo.BlobURI(okD)}
	for p, uri := range want {
		if failed[p] != uri {
			t.Errorf("failure of %q reported at %q; want %q", p, failed[p], uri)
		}
	}
	if _, ok := failed["ok"]; ok {
		t.Errorf("ok blob reported failed")
	}
}
