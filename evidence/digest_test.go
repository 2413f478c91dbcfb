package evidence

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestDigestText(t *testing.T) {
	d := Sum([]byte("abc"))
	const want = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if d.String() != want {
		t.Fatalf("Sum(abc) = %s; want %s", d, want)
	}
	for _, s := range []string{want, strings.TrimPrefix(want, "sha256:")} {
		p, err := ParseDigest(s)
		if err != nil || p != d {
			t.Fatalf("ParseDigest(%q) = %v, %v", s, p, err)
		}
	}
	for _, bad := range []string{"", "sha256:", "sha256:xyz", strings.ToUpper(want[7:]), want + "00", "md5:" + want[7:]} {
		if _, err := ParseDigest(bad); err == nil {
			t.Fatalf("ParseDigest(%q) accepted", bad)
		}
	}
	b, _ := json.Marshal(map[string]Digest{"d": d})
	if string(b) != `{"d":"`+want+`"}` {
		t.Fatalf("json %s", b)
	}
	var back map[string]Digest
	if err := json.Unmarshal(b, &back); err != nil || back["d"] != d {
		t.Fatalf("round trip %v %v", back, err)
	}
	if !(Digest{}).IsZero() || d.IsZero() || d.Short() != want[7:19] {
		t.Fatal("IsZero/Short")
	}
}

func TestVerifyingReader(t *testing.T) {
	data := "evidence"
	r := NewVerifyingReader(io.NopCloser(strings.NewReader(data)), Sum([]byte(data)), "x")
	if b, err := io.ReadAll(r); err != nil || string(b) != data {
		t.Fatalf("intact: %q %v", b, err)
	}
	r = NewVerifyingReader(io.NopCloser(strings.NewReader("evidencE")), Sum([]byte(data)), "blobs/x")
	_, err := io.ReadAll(r)
	var dm *DigestMismatchError
	if !errors.As(err, &dm) || dm.Object != "blobs/x" || !strings.Contains(err.Error(), "blobs/x") {
		t.Fatalf("tampered: %v", err)
	}
}

func TestManifestEncodeIsCanonical(t *testing.T) {
	m := &Manifest{Format: ManifestFormat, FormatVersion: 1, RunID: "r1", Status: RunComplete,
		Files: []File{{Path: "b"}, {Path: "a"}}}
	b1, d1, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := DecodeManifest(b1)
	if err != nil {
		t.Fatal(err)
	}
	b2, d2, _ := m2.Encode()
	if d1 != d2 || string(b1) != string(b2) || m.Files[0].Path != "a" {
		t.Fatalf("re-encoding changed the manifest:\n%s\n%s", b1, b2)
	}
	if _, err := DecodeManifest([]byte(`{"format":"perfwh.bundle","format_version":99}`)); err == nil {
		t.Fatal("unknown format version accepted")
	}
}
