package edge

import (
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/ssat"
)

var errBroken = errors.New("broken connection")

// brokenWriter stands for a client connection that breaks after ok body
// bytes: every later write and flush fails, as a reset socket does. It sits
// in front of the edge, where net/http's writer is.
type brokenWriter struct {
	http.ResponseWriter
	ok int
}

func (b *brokenWriter) Write(p []byte) (int, error) {
	if len(p) > b.ok {
		n, _ := b.ResponseWriter.Write(p[:b.ok])
		b.ok = 0
		return n, errBroken
	}
	b.ok -= len(p)
	return b.ResponseWriter.Write(p)
}

func (b *brokenWriter) FlushError() error {
	if b.ok == 0 {
		return errBroken
	}
	return http.NewResponseController(b.ResponseWriter).Flush()
}

func (b *brokenWriter) Flush() { _ = b.FlushError() }

// deliveryRecorder runs next with the Delivery of every request reported
// on a channel once the edge has finished it.
func deliveryRecorder(t *testing.T, got chan<- ssat.Delivery, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d := ssat.DeliveryOf(r.Context())
		if d == nil {
			t.Error("no Delivery in the guest's context")
			return
		}
		d.AfterDelivery(func() { got <- *d })
		next(w, r)
	}
}

// A delivery that fails in any layer of the edge (a held-back body, the
// end of the encoder, a flush, a plain write) is aborted: the client never
// sees a clean end, the guest is told through its Delivery, and a guest
// that flushes learns of it at once. Before, brWriter reported a failed
// write as written, and the errors of the final brotli Close, of a body
// sent plain under min_size and of every flush were dropped, so the client
// got a clean end and the request was recorded as complete.
func TestFailedDeliveryIsAbortedAndReported(t *testing.T) {
	page := strings.Repeat("<p>compressible text, over and over</p>", 100)
	tests := []struct {
		name, ae, hint string
		minSize        int
		ok             int  // body bytes the connection takes before it breaks
		flush          bool // the guest flushes after its body
	}{
		{"br body held back under min_size", "br", "on", 100, 0, false},
		{"br body sent plain under min_size", "br", "on", 1 << 20, 0, false},
		{"br end of stream", "br", "on", 0, 0, false},
		{"br end of stream after some bytes", "br", "on", 0, 10, false},
		{"br flush", "br", "on", 0, 0, true},
		{"gzip end of stream", "gzip", "on", 0, 0, false},
		{"gzip flush", "gzip", "on", 0, 0, true},
		{"not hinted", "gzip", "", 0, 0, false},
		{"not hinted flush", "gzip", "", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan ssat.Delivery, 1)
			var flushErr error
			e, err := New(deliveryRecorder(t, got, func(w http.ResponseWriter, r *http.Request) {
				if tt.hint != "" {
					w.Header().Set(ssat.HintHeader, tt.hint)
				}
				// A guest that finishes its page whatever its writes return,
				// as http.ServeContent does for the bundle.
				_, _ = io.WriteString(w, page)
				if tt.flush {
					flushErr = http.NewResponseController(w).Flush()
				}
			}), Options{GzipLevel: 1, BrotliQuality: 1, MinSize: tt.minSize})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				e.ServeHTTP(&brokenWriter{ResponseWriter: w, ok: tt.ok}, r)
			}))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", tt.ae)
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			if resp, err := tr.RoundTrip(req); err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatalf("a response that was not delivered whole ended cleanly (status %d)", resp.StatusCode)
				}
			}
			d := <-got
			if !errors.Is(d.Err, errBroken) {
				t.Fatalf("Delivery.Err = %v, want the connection's error", d.Err)
			}
			if tt.flush && !errors.Is(flushErr, errBroken) {
				t.Fatalf("the guest's flush returned %v, want the connection's error", flushErr)
			}
		})
	}
}

// A client that disconnects in the middle of a compressed stream: the
// guest's writes or flushes fail within a bounded number of bytes, and the
// Delivery says the response was not delivered.
func TestClientDisconnectMidStreamReported(t *testing.T) {
	for _, ae := range []string{"br", "gzip"} {
		t.Run(ae, func(t *testing.T) {
			got := make(chan ssat.Delivery, 1)
			const limit = 1 << 30
			var written int
			var streamErr error
			srv := newEdge(t, Options{}, deliveryRecorder(t, got, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(ssat.HintHeader, "on")
				chunk := make([]byte, 16<<10)
				rc := http.NewResponseController(w)
				for written < limit {
					rand.Read(chunk) // incompressible: the stream keeps flowing
					n, err := w.Write(chunk)
					written += n
					if err == nil {
						err = rc.Flush()
					}
					if err != nil {
						streamErr = err
						return
					}
				}
			}))
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", ae)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(resp.Body, make([]byte, 1024)); err != nil {
				t.Fatalf("first bytes: %v", err)
			}
			resp.Body.Close() // mid-body: the connection is closed
			d := <-got
			if streamErr == nil {
				t.Fatalf("the guest wrote %d bytes to a client that had left without an error", written)
			}
			if d.Err == nil {
				t.Fatalf("Delivery.Err is nil after the client left (guest saw %v)", streamErr)
			}
		})
	}
}
