package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

// TestPageThatNeverNamesTheOriginHostIsCountedAndLogged catches the
// own-origin trap: the page's links name localhost:PORT while origin_url
// says 127.0.0.1:PORT, so nothing is rewritten. The guest counts such a
// page and says so at debug level; a page that names the origin is not
// counted.
func TestPageThatNeverNamesTheOriginHostIsCountedAndLogged(t *testing.T) {
	var page string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	defer origin.Close()
	host := strings.TrimPrefix(origin.URL, "http://")
	_, port, _ := strings.Cut(host, ":")

	logger, logs := newObservedLogger(zapcore.DebugLevel)
	g, err := New(testConfig(t, origin.URL), Options{Logger: logger, Bundle: []byte("bundle")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	front := httptest.NewServer(g)
	defer front.Close()

	fetch := func() {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/p", nil)
		req.Host = testDomain
		req.Header.Set("Sec-Fetch-Dest", "document")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Contains(body, []byte("</html>")) {
			t.Fatalf("page did not arrive whole: %v", err)
		}
	}
	// The count is made when the pipeline ends, before the access line,
	// which may come just after the client has read the last byte.
	check := func(accessLines int, want int64) {
		t.Helper()
		logs.waitAccess(t, accessLines)
		if got := int64(g.Metrics().Sum("ssatd_pages_without_origin_host_total", nil)); got != want {
			t.Fatalf("after %d pages: pages without origin host = %d, want %d", accessLines, got, want)
		}
	}

	page = `<html><head></head><body><a href="http://` + host + `/a">a</a></body></html>`
	fetch()
	check(1, 0)
	page = `<html><head></head><body><a href="http://localhost:` + port + `/a">a</a></body></html>`
	fetch()
	check(2, 1)

	lines := logs.FilterMessageSnippet("never named the origin host").All()
	if len(lines) != 1 {
		t.Fatalf("got %d debug lines about the origin host, want 1", len(lines))
	}
	if f := lines[0].ContextMap(); f["origin_host"] != host || f["path"] != "/p" {
		t.Errorf("debug line fields = %v, want origin_host %q and path /p", f, host)
	}

	var m bytes.Buffer
	if err := g.Metrics().WritePrometheus(&m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.String(), "\nssatd_pages_without_origin_host_total 1\n") {
		t.Errorf("metrics lack the counter at 1:\n%s", m.String())
	}
}
