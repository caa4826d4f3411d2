package proxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The requests tsjs sends, for the guest's own tests of the callbacks'
// admission and consent gate; the callbacks' tests are internal/tsjs's.

// post sends body to path as tsjs's sendAuction does (fetch with
// content-type application/json).
func (e *env) post(t *testing.T, path, contentType, body string, opts ...reqOpt) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.front.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = testDomain
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}
