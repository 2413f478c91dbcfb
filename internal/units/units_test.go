package units

import "testing"

func TestParseBytes(t *testing.T) {
	f := func(in string, want int64, ok bool) {
		t.Helper()
		got, err := ParseBytes(in)
		if (err == nil) != ok || got != want {
			t.Fatalf("ParseBytes(%q) = %d, %v; want %d, ok=%v", in, got, err, want, ok)
		}
	}
	f("4096", 4096, true)
	f("4KiB", 4096, true)
	f("4K", 4096, true)
	f("1MiB", 1<<20, true)
	f("1.5MiB", 3<<19, true)
	f("2GB", 2e9, true)
	f(" 8 GiB ", 8<<30, true)
	f("12B", 12, true)
	f("-1KiB", 0, false)
	f("lots", 0, false)
	f("", 0, false)
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{4096: "4KiB", 1 << 20: "1MiB", 1000: "1000B", 3 << 30: "3GiB", 1536: "1536B"} {
		if got := FormatBytes(in); got != want {
			t.Fatalf("FormatBytes(%d) = %q; want %q", in, got, want)
		}
	}
}
