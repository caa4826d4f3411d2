package edge

import (
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

// decide is the one place the edge chooses: every rule gives its coding
// and its reason, and the hint is gone from the header afterwards.
func TestDecideGivesOneCodingAndItsReason(t *testing.T) {
	tests := []struct {
		name   string
		method string
		status int
		hdr    map[string]string
		ae     string
		zstd   bool
		want   decision
	}{
		{"no hint", "GET", 200, nil, "br", false, decision{choiceNone, reasonNoHint}},
		{"on br", "GET", 200, map[string]string{ssat.HintHeader: "on"}, "gzip, br", false, decision{choiceBrotli, reasonCompressed}},
		{"on gzip", "GET", 200, map[string]string{ssat.HintHeader: "on"}, "gzip", false, decision{choiceGzip, reasonCompressed}},
		{"on zstd enabled", "GET", 200, map[string]string{ssat.HintHeader: "on"}, "zstd, gzip", true, decision{choiceZstd, reasonCompressed}},
		{"on zstd disabled", "GET", 200, map[string]string{ssat.HintHeader: "on"}, "zstd, gzip", false, decision{choiceGzip, reasonCompressed}},
		{"forced gzip with zstd enabled", "GET", 200, map[string]string{ssat.HintHeader: "gzip"}, "zstd, gzip", true, decision{choiceGzip, reasonCompressed}},
		{"refused", "GET", 200, map[string]string{ssat.HintHeader: "on"}, "identity", false, decision{choiceNone, reasonRefused}},
		{"unknown hint", "GET", 200, map[string]string{ssat.HintHeader: "yes"}, "br", false, decision{choiceNone, reasonBadHint}},
		{"encoded", "GET", 200, map[string]string{ssat.HintHeader: "on", "Content-Encoding": "deflate"}, "br", false, decision{choiceNone, reasonEncoded}},
		{"HEAD", "HEAD", 200, map[string]string{ssat.HintHeader: "on"}, "br", false, decision{choiceNone, reasonNoBody}},
		{"204", "GET", 204, map[string]string{ssat.HintHeader: "on"}, "br", false, decision{choiceNone, reasonNoBody}},
		{"304", "GET", 304, map[string]string{ssat.HintHeader: "on"}, "br", false, decision{choiceNone, reasonNoBody}},
		{"empty", "GET", 200, map[string]string{ssat.HintHeader: "on", "Content-Length": "0"}, "br", false, decision{choiceNone, reasonNoBody}},
		{"206", "GET", 206, map[string]string{ssat.HintHeader: "on"}, "br", false, decision{choiceNone, reasonPartial}},
		{"Content-Range", "GET", 200, map[string]string{ssat.HintHeader: "on", "Content-Range": "bytes 0-1/2"}, "br", false, decision{choiceNone, reasonPartial}},
		{"declared under min size", "GET", 200, map[string]string{ssat.HintHeader: "on", "Content-Length": "99"}, "br", false, decision{choiceNone, reasonSmall}},
		{"declared at min size", "GET", 200, map[string]string{ssat.HintHeader: "on", "Content-Length": "100"}, "br", false, decision{choiceBrotli, reasonCompressed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(http.NotFoundHandler(), Options{GzipLevel: 1, BrotliQuality: 1, MinSize: 100, Zstd: tt.zstd})
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for k, v := range tt.hdr {
				h.Set(k, v)
			}
			got := e.decide(tt.method, tt.status, h, compress.ParseAcceptEncoding([]string{tt.ae}))
			if got != tt.want {
				t.Fatalf("decide = %v %s, want %v %s", got.coding, got.why, tt.want.coding, tt.want.why)
			}
			if h.Get(ssat.HintHeader) != "" {
				t.Fatal("the hint is still in the header")
			}
		})
	}
}
