package proxy

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/server"
)

var errConnBroken = errors.New("broken connection")

// connBroken stands for a client connection that is already broken when the
// body starts: every write and flush fails, as on a reset socket.
type connBroken struct{ http.ResponseWriter }

func (connBroken) Write([]byte) (int, error) { return 0, errConnBroken }
func (connBroken) FlushError() error         { return errConnBroken }
func (c connBroken) Flush()                  { _ = c.FlushError() }

// When the builtin edge cannot deliver a response the guest finished (the
// end of its br stream does not reach the client), the access line says
// aborted with reason client_gone, the request is counted as aborted, and
// the client never sees a clean end. Before, the edge dropped the error and
// the request was logged as ok.
func TestEdgeDeliveryFailureLoggedAsAborted(t *testing.T) {
	for _, tt := range []struct{ name, path string }{
		{"bundle", rewrite.BundlePath},
		{"offloaded page", "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, plainPage(r))
			}), offload("builtin"))
			front, err := server.ClientHandler(testConfig(t, e.origin.URL, offload("builtin")), e.guest)
			if err != nil {
				t.Fatal(err)
			}
			broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				front.ServeHTTP(connBroken{w}, r)
			}))
			defer broken.Close()
			req, _ := http.NewRequest(http.MethodGet, broken.URL+tt.path, nil)
			req.Host = testDomain
			req.Header.Set("Sec-Fetch-Dest", "document")
			req.Header.Set("Accept-Encoding", "br")
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			if resp, err := tr.RoundTrip(req); err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatalf("an undelivered response ended cleanly (status %d)", resp.StatusCode)
				}
			}
			line := e.accessLine(t, 1)
			if line["outcome"] != outcomeAborted || line["reason"] != reasonClientGone.String() {
				t.Fatalf("outcome %v reason %v error %v; want %s, %s", line["outcome"], line["reason"], line["error"], outcomeAborted, reasonClientGone.String())
			}
			if tt.path == "/" {
				if n := e.guest.Metrics().Failures(reasonClientGone.String()); n != 1 {
					t.Fatalf("%s counted %d times, want 1", reasonClientGone.String(), n)
				}
			}
		})
	}
}

// plainPage is a page that names no origin host: the test only needs a page on
// the pipeline route.
func plainPage(*http.Request) string {
	return `<!DOCTYPE html><html><head><title>t</title></head><body><div id="top"></div></body></html>`
}
