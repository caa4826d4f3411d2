package edge

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/ssat"
)

// The Delivery the edge hands back says what the client received: the
// coding on the wire, whether the edge applied it, and the bytes on both
// sides, once the response is over.
func TestDeliveryReportsWhatTheClientReceived(t *testing.T) {
	page := strings.Repeat("<p>compressible text, over and over</p>", 200)
	tests := []struct {
		name, ae, hint, guestCoding string
		minSize                     int
		wantCoding                  string
		wantCompressed              bool
	}{
		{"br", "br, gzip", "on", "", 0, "br", true},
		{"gzip", "gzip", "on", "", 0, "gzip", true},
		{"no hint", "br, gzip", "", "", 0, "identity", false},
		{"client accepts nothing", "identity", "on", "", 0, "identity", false},
		{"guest already encoded", "br", "", "deflate", 0, "deflate", false},
		{"br under min size", "br", "on", "", 1 << 20, "identity", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got ssat.Delivery
			finished := 0
			srv := newEdge(t, Options{MinSize: tt.minSize}, func(w http.ResponseWriter, r *http.Request) {
				d := ssat.DeliveryOf(r.Context())
				if d == nil {
					t.Error("no Delivery in the guest's context")
					return
				}
				d.AfterDelivery(func() { got = *d; finished++ })
				if tt.hint != "" {
					w.Header().Set(ssat.HintHeader, tt.hint)
				}
				if tt.guestCoding != "" {
					w.Header().Set("Content-Encoding", tt.guestCoding)
				}
				_, _ = io.WriteString(w, page)
			})
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", tt.ae)
			resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			wire, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			srv.Close() // waits for the handler, and so for the Delivery
			if finished != 1 {
				t.Fatalf("AfterDelivery ran %d times, want once", finished)
			}
			if got.Coding != tt.wantCoding || got.Compressed != tt.wantCompressed {
				t.Errorf("coding %q compressed %v, want %q %v", got.Coding, got.Compressed, tt.wantCoding, tt.wantCompressed)
			}
			if got.BytesIn != int64(len(page)) || got.BytesOut != int64(len(wire)) {
				t.Errorf("bytes in %d out %d; guest wrote %d, client received %d", got.BytesIn, got.BytesOut, len(page), len(wire))
			}
			if tt.wantCompressed && got.BytesOut >= got.BytesIn {
				t.Errorf("compressed %d bytes into %d", got.BytesIn, got.BytesOut)
			}
		})
	}
}
