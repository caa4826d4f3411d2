package edge

import (
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
)

// FuzzNegotiate: any hint and Accept-Encoding value gives a choice the
// client accepts, zstd only when enabled, never a panic.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"br, gzip", "gzip;q=0, br", "*;q=0", "identity", "", "BR;Q=0.5, gzip;q=0.50", ",;=,q=", "br;q=1.0000"} {
		f.Add("on", s, false)
		f.Add("on", s, true)
	}
	f.Add("gzip", "br", true)
	f.Fuzz(func(t *testing.T, hint, ae string, zstd bool) {
		a := compress.ParseAcceptEncoding([]string{ae})
		switch negotiate(hint, a, zstd) {
		case choiceBrotli:
			if a.Q("br") <= 0 {
				t.Fatalf("br chosen for %q", ae)
			}
		case choiceGzip:
			if a.Q("gzip") <= 0 {
				t.Fatalf("gzip chosen for %q", ae)
			}
		case choiceZstd:
			if !zstd || a.Q("zstd") <= 0 {
				t.Fatalf("zstd chosen for %q (enabled %v)", ae, zstd)
			}
		}
	})
}
