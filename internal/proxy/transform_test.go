package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// Transform applies serving's raw limit: a page of exactly
// max_origin_response_bytes is rewritten, one byte more fails with the
// limit's error, as serving aborts it with origin_body_too_large.
func TestTransformAppliesServingRawLimit(t *testing.T) {
	const limit = 4 << 10
	page := "<html><head><title>t</title></head><body>" + strings.Repeat("p", limit) + "</body></html>"
	page = page[:limit]
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.(http.Flusher).Flush() // chunked: the limit is found while streaming
		io.WriteString(w, page)
		if r.URL.Path == "/over" {
			io.WriteString(w, "x")
		}
	}), func(c *config.Config) { c.Publisher.MaxOriginResponseBytes = limit })

	req := httptest.NewRequest(http.MethodGet, "http://"+testDomain+"/page", nil)
	var out bytes.Buffer
	if _, err := e.guest.Transform(&out, strings.NewReader(page), compress.Identity, compress.Identity, req); err != nil {
		t.Fatalf("a page of exactly the limit: %v", err)
	}
	out.Reset()
	_, err := e.guest.Transform(&out, strings.NewReader(page+"x"), compress.Identity, compress.Identity, req)
	var lim *errRawLimit
	if !errors.As(err, &lim) || bodyFailureReason(err) != reasonTooLarge {
		t.Fatalf("a page one byte over the limit: %v, want the raw limit's error", err)
	}

	if resp, _, _ := e.get(t, "/page"); resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("serving a page of exactly the limit: %v", resp)
	}
	_, _, _ = e.get(t, "/over")
	if r := e.accessLine(t, 2)["reason"]; r != reasonTooLarge.String() {
		t.Fatalf("serving a page one byte over: reason %v, want %s", r, reasonTooLarge)
	}
}
