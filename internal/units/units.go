// Package units parses and formats byte sizes (4KiB, 1MiB, 2GB) the way
// perfwh's case files write them.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

var suffixes = []struct {
	s string
	m int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseBytes parses "4096", "4KiB", "1.5MiB", "2GB" (binary suffixes K/M/G/T
// and KiB/…; decimal KB/MB/GB/TB) into a byte count.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, sf := range suffixes {
		if strings.HasSuffix(t, sf.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, sf.s)), sf.m
			break
		}
	}
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		if i < 0 {
			return 0, fmt.Errorf("negative size %q", s)
		}
		return i * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return int64(f * float64(mult)), nil
}

// FormatBytes renders n with a binary suffix when it divides evenly.
func FormatBytes(n int64) string {
	for _, sf := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= sf.m && n%sf.m == 0 {
			return fmt.Sprintf("%d%s", n/sf.m, sf.s)
		}
	}
	return fmt.Sprintf("%dB", n)
}
