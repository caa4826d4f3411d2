package tsjs_test

import (
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// The bundle is hinted, and Fastly adds no Vary for the hint (its
// X-Compress-Hint page names only Content-Encoding), so the guest lists
// Accept-Encoding in Vary itself wherever it sets the hint: once, through the
// builtin edge and to an external CDN; never when nothing is hinted.
// Before, the bundle relied on the edge for Vary, and reached an external
// CDN without it.
func TestBundleVariesOnAcceptEncodingWhereverHinted(t *testing.T) {
	for _, tt := range []struct {
		platform string
		hint     string
		vary     int
	}{
		{config.DeliveryCompressionBuiltin, "", 1},
		{config.DeliveryCompressionExternal, "on", 1},
		{config.DeliveryCompressionUnavailable, "", 0},
	} {
		t.Run(tt.platform, func(t *testing.T) {
			e := newEnv(t, http.NotFoundHandler(), func(c *config.Config) { c.Platform.DeliveryCompression = tt.platform })
			for _, ae := range []string{"br", "identity"} {
				resp, _ := e.mustGet(t, rewrite.BundlePath, header("Accept-Encoding", ae))
				if got := resp.Header.Get(ssat.HintHeader); got != tt.hint {
					t.Fatalf("ae %s: %s = %q, want %q", ae, ssat.HintHeader, got, tt.hint)
				}
				if n := compress.VaryCount(resp.Header, "Accept-Encoding"); n != tt.vary {
					t.Fatalf("ae %s: Vary %q lists Accept-Encoding %d times, want %d", ae, resp.Header.Values("Vary"), n, tt.vary)
				}
			}
		})
	}
}
