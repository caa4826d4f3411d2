package proxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// watchedListener reports, in accept order, the remote address of every
// connection made to a host that must never be contacted.
type watchedListener struct {
	net.Listener
	accepted chan string
}

func watch(ln net.Listener) *watchedListener {
	l := &watchedListener{Listener: ln, accepted: make(chan string, 64)}
	go func() {
		defer close(l.accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	return l
}

// othersBefore connects to the listener itself and returns how many
// connections were accepted before its own. The kernel queues connections
// in arrival order and the listener accepts them one by one, so every
// connection made before this call is counted: no sleep is needed.
func (l *watchedListener) othersBefore(t *testing.T) int {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	self := c.LocalAddr().String()
	timeout := time.After(10 * time.Second)
	for n := 0; ; n++ {
		select {
		case addr, ok := <-l.accepted:
			if !ok {
				t.Fatal("the listener closed before accepting the test's own connection")
			}
			if addr == self {
				return n
			}
		case <-timeout:
			t.Fatal("the listener never accepted the test's own connection")
		}
	}
}

// rawRequest writes a request as given and returns the status line.
func rawRequest(t *testing.T, addr, req string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line)
}

// "Origin request" in docs/behaviour.md: ssatd is not an open proxy. Nothing a client sends makes it
// connect anywhere but the configured origin.
func TestNotAnOpenProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	evil := watch(ln)
	defer ln.Close()
	evilAddr := ln.Addr().String()
	var originPaths []string
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originPaths = append(originPaths, r.URL.Path)
	}))
	front := strings.TrimPrefix(e.front.URL, "http://")
	tests := []struct{ name, req, wantStatus string }{
		{"absolute-form URI", "GET http://" + evilAddr + "/x HTTP/1.1\r\nHost: " + evilAddr + "\r\n\r\n", "200"},
		{"foreign Host", "GET /x HTTP/1.1\r\nHost: " + evilAddr + "\r\n\r\n", "200"},
		{"CONNECT", "CONNECT " + evilAddr + " HTTP/1.1\r\nHost: " + evilAddr + "\r\n\r\n", "405"},
		{"scheme-relative path", "GET //" + evilAddr + "/x HTTP/1.1\r\nHost: " + testDomain + "\r\n\r\n", "200"},
		{"evil.example path", "GET //evil.example/ HTTP/1.1\r\nHost: " + testDomain + "\r\n\r\n", "200"},
		{"userinfo trick", "GET @" + evilAddr + "/x HTTP/1.1\r\nHost: " + testDomain + "\r\n\r\n", ""},
	}
	for _, tt := range tests {
		status := rawRequest(t, front, tt.req)
		if tt.wantStatus != "" && !strings.Contains(status, " "+tt.wantStatus+" ") {
			t.Errorf("%s: status line %q, want %s", tt.name, status, tt.wantStatus)
		}
	}
	if n := evil.othersBefore(t); n != 0 {
		t.Fatalf("ssatd connected %d times to a host that is not the origin", n)
	}
	if len(originPaths) == 0 {
		t.Fatal("the origin saw nothing: the test requests never went through")
	}
}

// Request smuggling shapes are refused by the server before the guest, so
// the origin never sees them.
func TestSmugglingShapesRejected(t *testing.T) {
	hits := 0
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	front := strings.TrimPrefix(e.front.URL, "http://")
	tests := []struct{ name, req string }{
		{"CL and TE", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"TE chunked alone", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"TE on GET", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"duplicate CL", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde"},
		{"TE not chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"},
		{"space before colon", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length : 4\r\n\r\nabcd"},
	}
	for _, tt := range tests {
		status := rawRequest(t, front, tt.req)
		if !strings.Contains(status, " 400 ") && !strings.Contains(status, " 411 ") && !strings.Contains(status, " 501 ") {
			t.Errorf("%s: status line %q, want 400, 411 or 501", tt.name, status)
		}
	}
	if hits != 0 {
		t.Fatalf("the origin saw %d smuggled requests", hits)
	}
}

// Oversized request headers are refused by the server limit.
func TestOversizedHeadersRefused(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	front := strings.TrimPrefix(e.front.URL, "http://")
	status := rawRequest(t, front, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\n\r\n")
	if !strings.Contains(status, " 431 ") {
		t.Fatalf("status line %q, want 431", status)
	}
}

// Slot ids, targeting and bid fields from configuration cannot break out of
// the injected scripts, end to end.
func TestInjectedScriptsCannotBeBrokenOut(t *testing.T) {
	hostile := "</script><script>alert(1)</script><!--\u2028\"'"
	var e *env
	e = newEnv(t, serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip), func(c *config.Config) {
		c.CreativeOpportunities.Slots[0].DivID = hostile
		c.CreativeOpportunities.Slots[0].GAMUnitPath = hostile
		c.CreativeOpportunities.Slots[0].Targeting = map[string]any{hostile: hostile}
		c.Auction.StaticBids[0].Adm = hostile
		c.Auction.StaticBids[0].HbBidder = hostile
	})
	_, body := e.mustGet(t, "/", navigate)
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" {
			scripts++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 3 {
		t.Fatalf("%d script elements, want 3 (ad slots, bundle, bids): a value broke out\n%s", scripts, body)
	}
	if strings.Contains(string(body), "\u2028") {
		t.Fatal("raw U+2028 in the page")
	}
}

// The "Eligible pages" (docs/behaviour.md) headers hold on every eligible response that sends headers, in
// every mode and on every error path.
func TestPrivacyHeadersOnEveryEligiblePath(t *testing.T) {
	cacheHeaders := func(w http.ResponseWriter) {
		h := w.Header()
		h.Set("Cache-Control", "public, max-age=600")
		h.Set("Surrogate-Control", "max-age=600")
		h.Set("ETag", `"x"`)
		h.Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Set("Expires", "Thu, 01 Dec 2030 16:00:00 GMT")
	}
	scenarios := map[string]http.HandlerFunc{
		"200 page": func(w http.ResponseWriter, r *http.Request) {
			cacheHeaders(w)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head></head><body></body></html>")
		},
		"404 page": func(w http.ResponseWriter, r *http.Request) {
			cacheHeaders(w)
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			fmt.Fprint(w, "<html><head></head></html>")
		},
		"origin 304": func(w http.ResponseWriter, r *http.Request) {
			cacheHeaders(w)
			w.WriteHeader(304)
		},
		"too large": func(w http.ResponseWriter, r *http.Request) {
			cacheHeaders(w)
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "999999999")
		},
		"corrupt gzip": func(w http.ResponseWriter, r *http.Request) {
			cacheHeaders(w)
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			fmt.Fprint(w, "not gzip")
		},
		"header timeout": func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		},
	}
	modes := map[string][]func(*config.Config){
		"mirror":           nil,
		"offload builtin":  {offload("builtin")},
		"offload external": {offload("external")},
		"diagnostics":      {offload("builtin"), diagnostics},
	}
	for mname, muts := range modes {
		for sname, h := range scenarios {
			t.Run(mname+"/"+sname, func(t *testing.T) {
				muts := append(muts, func(c *config.Config) {
					c.Publisher.OriginHeaderTimeout = config.Duration{Duration: 100 * time.Millisecond}
				})
				e := newEnv(t, h, muts...)
				resp, _ := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip, br"))
				hd := resp.Header
				if hd.Get("Cache-Control") != privateCacheControl {
					t.Errorf("status %d: Cache-Control %q", resp.StatusCode, hd.Get("Cache-Control"))
				}
				for _, k := range sharedCacheHeaders {
					if hd.Get(k) != "" {
						t.Errorf("status %d: %s = %q", resp.StatusCode, k, hd.Get(k))
					}
				}
			})
		}
	}
	// The unreachable origin, separately: no origin at all.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	g, err := New(testConfig(t, "http://"+addr), Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := newFront(t, g)
	req, _ := http.NewRequest("GET", front+"/", nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 502 || resp.Header.Get("Cache-Control") != privateCacheControl {
		t.Fatalf("unreachable: status %d Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
}

// An origin that leads back to the guest (origin_url naming ssatd itself,
// or a chain that loops) is answered 508 after one hop, instead of the
// request repeating until memory and file descriptors run out.
func TestRequestLoopAnswered508(t *testing.T) {
	var e *env
	var hops atomic.Int32
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hops.Add(1) > 5 {
			http.Error(w, "looped", http.StatusInternalServerError)
			return
		}
		e.guest.ServeHTTP(w, r) // the origin is ssatd itself
	}))
	resp, body := e.mustGet(t, "/", navigate)
	if resp.StatusCode != http.StatusLoopDetected {
		t.Fatalf("status %d (%s), want 508", resp.StatusCode, body)
	}
	if n := hops.Load(); n != 1 {
		t.Fatalf("the request reached the origin %d times, want 1", n)
	}
	line := e.accessLine(t, 1)
	if line["reason"] != "loop_detected" || line["outcome"] != "error" || line["mode"] != "none" {
		t.Fatalf("first access line reason %v, outcome %v, mode %v; want loop_detected, error (a 508 is an error status sent before any body), none (refused before a mode was chosen)", line["reason"], line["outcome"], line["mode"])
	}
}

// CDN-Loop is appended to origin requests, after the entries the request
// came with (RFC 8586 §2); ssatd adds no Via entry of its own.
func TestOriginRequestCarriesCDNLoop(t *testing.T) {
	type seenHeaders struct{ loop, via []string }
	seen := make(chan seenHeaders, 1)
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- seenHeaders{r.Header.Values("CDN-Loop"), r.Header.Values("Via")}
	}))
	e.mustGet(t, "/", header("CDN-Loop", "cdn.example; v=1"), header("Via", "1.1 cdn.example"))
	got := <-seen
	if len(got.loop) != 2 || got.loop[0] != "cdn.example; v=1" || got.loop[1] != e.guest.cdnLoop || !strings.HasPrefix(got.loop[1], "ssatd-") {
		t.Fatalf("origin saw CDN-Loop %q, want the client's entry then ssatd's", got.loop)
	}
	if len(got.via) != 1 || got.via[0] != "1.1 cdn.example" {
		t.Fatalf("origin saw Via %q, want only the client's entry", got.via)
	}
}

// A request that carries another process's token, or ours with
// parameters, is told apart: only ours loops.
func TestCDNLoopTokenIsThisProcesss(t *testing.T) {
	var e *env
	var hits atomic.Int32
	e = newEnv(t, countingOrigin(&e, &hits, nil))
	for _, tt := range []struct {
		loop   string
		status int
	}{
		{"ssatd-000000000000", http.StatusOK},
		{"Fastly, " + e.guest.cdnLoop + "; hop=2", http.StatusLoopDetected},
	} {
		if resp, _ := e.mustGet(t, "/", navigate, header("CDN-Loop", tt.loop)); resp.StatusCode != tt.status {
			t.Errorf("CDN-Loop %q: status %d, want %d", tt.loop, resp.StatusCode, tt.status)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("origin asked %d times, want 1", hits.Load())
	}
}

// No log line carries a secret: the client's Authorization, Cookie and
// query string, or credentials in the origin URL (refused by config
// validation, set here behind its back), on a served page, a pass-through,
// an origin failure and a loop.
func TestLogsCarryNoSecrets(t *testing.T) {
	const secret = "s3cr3t-value"
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/asset" {
			w.Write([]byte("x"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><head></head><body></body></html>"))
	}))
	e.guest.origin.User = url.UserPassword("user-"+secret, secret)
	opts := []reqOpt{navigate, header("Authorization", "Basic "+secret), header("Cookie", "session="+secret),
		header("X-Forwarded-Host", secret), header("Referer", "https://x.example/?t="+secret)}
	e.mustGet(t, "/page?token="+secret, opts...)
	e.mustGet(t, "/asset?token="+secret, opts...)
	e.mustGet(t, "/page?token="+secret, append(opts, header("CDN-Loop", e.guest.cdnLoop))...)
	e.origin.Close() // now unreachable
	e.mustGet(t, "/gone?token="+secret, opts...)
	e.accessLine(t, 4)
	for _, l := range e.logs.All() {
		line := l.Message
		for k, v := range l.ContextMap() {
			line += fmt.Sprintf(" %s=%v", k, v)
		}
		if strings.Contains(line, secret) {
			t.Errorf("log line carries a secret: %s", line)
		}
	}
}
