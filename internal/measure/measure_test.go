package measure

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"even two", []float64{1, 10}, 5.5},
		{"odd with duplicates", []float64{7, 7, 1, 9, 7}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := Median(in); got != tt.want {
				t.Fatalf("Median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Median reordered its input: %v", in)
				}
			}
		})
	}
}

func TestDifferingBytes(t *testing.T) {
	tests := []struct {
		a, b string
		want int64
	}{
		{"same", "same", 0},
		{"abcXdef", "abcYdef", 1},
		{"abcdef", "abcXYZdef", 3},
		{"", "abc", 3},
		{"abc", "abd", 1},
		{"xbc", "abc", 1},
		{"aaaa", "aa", 2},
	}
	for _, tt := range tests {
		if got := differingBytes([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("differingBytes(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// A mode whose output does not decode to the identity output makes the
// command exit 1 and name the page and the mode.
func TestEquivalenceFailure(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		damage   func(call int, out []byte) []byte // call 0 is the warm-up
		wantCode int
	}{
		{"no damage", "", nil, 0},
		{"br_mirror truncated", ModeBrMirror, func(_ int, b []byte) []byte { return b[:len(b)-3] }, 1},
		{"gzip_to_identity one byte changed", ModeGzipToIdentity, func(_ int, b []byte) []byte {
			c := bytes.Clone(b)
			c[len(c)/2] ^= 0x20
			return c
		}, 1},
		{"deflate_mirror extra byte", ModeDeflateMirror, func(_ int, b []byte) []byte { return append(bytes.Clone(b), 'x') }, 1},
		{"br_mirror damaged in the second timed run only", ModeBrMirror, func(call int, b []byte) []byte {
			if call == 2 {
				return b[:len(b)/2]
			}
			return b
		}, 1},
		{"identity differs in a timed run", ModeIdentity, func(call int, b []byte) []byte {
			if call == 1 {
				return append(bytes.Clone(b), ' ')
			}
			return b
		}, 1},
		// Encoded bytes may legitimately differ between runs (a latency
		// flush at another point); the decoded page is what counts.
		{"gzip_mirror encoded differently in timed runs", ModeGzipMirror, func(call int, b []byte) []byte {
			if call == 0 {
				return b
			}
			plain, err := decodeAll("gzip", b)
			if err != nil {
				panic(err)
			}
			re, err := compress.Encode(compress.Gzip, plain, compressOptions(1))
			if err != nil || bytes.Equal(re, b) {
				panic("re-encoding did not change the bytes")
			}
			return re
		}, 0},
	}
	dir := pagesDir(t, map[string]string{"good.html": testPage(3), "victim.html": testPage(30)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.damage != nil {
				calls := 0
				corruptHook = func(page, mode string, out []byte) []byte {
					if page == "victim.html" && mode == tt.mode {
						calls++
						return tt.damage(calls-1, out)
					}
					return out
				}
				t.Cleanup(func() { corruptHook = nil })
			}
			r := runMain(t, "-pages", dir, "-runs", "2", "-format", "json")
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			var rep Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Summary.AllEquivalent != (tt.wantCode == 0) {
				t.Fatalf("all_equivalent %v", rep.Summary.AllEquivalent)
			}
			if tt.wantCode == 0 {
				return
			}
			if !strings.Contains(r.stderr, "NOT EQUIVALENT: victim.html: "+tt.mode+":") {
				t.Fatalf("stderr does not name the page and mode:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, "good.html") {
				t.Fatalf("stderr blames the undamaged page:\n%s", r.stderr)
			}
			for _, p := range rep.Pages {
				eq := p.Modes[tt.mode].Equivalent
				if eq != (p.Name == "good.html") {
					t.Errorf("%s: %s equivalent = %v", p.Name, tt.mode, eq)
				}
			}
		})
	}
}

func compressOptions(level int) compress.Options {
	return compress.Options{GzipLevel: level, BrotliQuality: 1, BrotliWindow: 22}
}
