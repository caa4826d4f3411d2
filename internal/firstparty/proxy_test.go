package firstparty

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestProxyFetchesSignedURLWithoutCookiesOrCORS(t *testing.T) {
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Set("Access-Control-Expose-Headers", "X-Secret")
		w.Header().Add("Set-Cookie", "tp=1; Domain=pub.example")
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "PNG")
	})
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{})
	a := get(t, signed(t, srv, PathProxy, tp.URL+"/a.png?x=1"),
		"Cookie", "session=publisher-secret", "Authorization", "Bearer pub",
		"User-Agent", "ua-test", "Accept", "image/*", "Accept-Language", "fr", "Referer", "https://pub.example/p",
		"Accept-Encoding", "identity")
	if a.code != 200 || a.body != "PNG" {
		t.Fatalf("got %d %q", a.code, a.body)
	}
	for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers", "Set-Cookie"} {
		if v := a.header.Get(h); v != "" {
			t.Errorf("%s reached the client: %q", h, v)
		}
	}
	if a.header.Get("Cache-Control") != "max-age=60" {
		t.Errorf("Cache-Control %q, want the third party's", a.header.Get("Cache-Control"))
	}
	r := tp.last.Load()
	if r.URL.RawQuery != "x=1" {
		t.Errorf("third party asked for ?%s", r.URL.RawQuery)
	}
	for h, want := range map[string]string{"Cookie": "", "Authorization": "", "User-Agent": "ua-test", "Accept": "image/*",
		"Accept-Language": "fr", "Referer": "https://pub.example/p", "Accept-Encoding": "gzip, deflate, br"} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("third party got %s %q, want %q", h, got, want)
		}
	}
}

func TestProxyStatusesForRefusedURLs(t *testing.T) {
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{})
	_, strict := front(t, Config{AllowAddrs: loopbackOnly, AllowedDomains: []string{"cdn.example"}}, Deps{})
	good := signed(t, srv, PathProxy, tp.URL+"/a.png")
	q, _ := url.Parse(good)
	tsurl, tok := q.Query().Get("tsurl"), q.Query().Get("tstoken")
	tampered := strings.Replace(good, "tstoken="+tok[:1], "tstoken="+string(tok[0]^1), 1)
	cases := []struct {
		name, url string
		want      int
	}{
		{"valid", good, 200},
		{"missing tstoken (upstream 502)", srv.URL + PathProxy + "?tsurl=" + url.QueryEscape(tsurl), 400},
		{"missing tsurl (upstream 502)", srv.URL + PathProxy + "?tstoken=" + tok, 400},
		{"no query", srv.URL + PathProxy, 400},
		{"tampered token", tampered, 403},
		{"other url, same token", strings.Replace(good, "a.png", "b.png", 1), 403},
		{"expired tsexp (upstream 502)", signed(t, srv, PathProxy, tp.URL+"/a.png", expiry(-time.Minute)), 403},
		{"tsexp not a number (upstream 502)", signed(t, srv, PathProxy, tp.URL+"/a.png", Pair{"tsexp", "soon"}), 400},
		{"tsexp changed after signing", strings.Replace(signed(t, srv, PathProxy, tp.URL+"/a.png", Pair{"tsexp", "9999999999"}), "9999999999", "9999999998", 1), 403},
		{"live tsexp", signed(t, srv, PathProxy, tp.URL+"/a.png", expiry(time.Minute)), 200},
		{"host not in allowed_domains", signed(t, strict, PathProxy, tp.URL+"/a.png"), 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if a := get(t, c.url); a.code != c.want {
				t.Errorf("got %d %q, want %d", a.code, a.body, c.want)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPost, good, nil)
	if a := do(t, req); a.code != 405 || a.header.Get("Allow") != "GET" {
		t.Errorf("POST: %d Allow %q", a.code, a.header.Get("Allow"))
	}
}

// redirectChain serves /r/<n> as a redirect to /r/<n-1>, and /r/0 as "end".
func redirectChain(t *testing.T, code int) *thirdParty {
	var tp *thirdParty
	tp = newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n == 0 {
			io.WriteString(w, "end "+r.Method)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), code)
	})
	return tp
}

func TestProxyFollowsAtMostFourRedirects(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		tp := redirectChain(t, code)
		_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{})
		if a := get(t, signed(t, srv, PathProxy, tp.URL+"/r/4")); a.code != 200 || a.body != "end GET" {
			t.Errorf("%d: four redirects: %d %q", code, a.code, a.body)
		}
		tp.hits.Store(0)
		if a := get(t, signed(t, srv, PathProxy, tp.URL+"/r/5")); a.code != 502 {
			t.Errorf("%d: five redirects: %d %q, want 502", code, a.code, a.body)
		}
		if n := tp.hits.Load(); n != 5 {
			t.Errorf("%d: five redirects made %d requests, want 5", code, n)
		}
	}
}

func TestProxyChecksEveryRedirectHop(t *testing.T) {
	var other *thirdParty
	other = newThirdParty(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") })
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/x", http.StatusFound)
	})
	// localhost is allowed by a wildcard, which names no address: the hop's
	// host passes allowed_domains, its loopback address does not.
	_, srv := front(t, Config{AllowedDomains: []string{"127.0.0.1", "*.localhost"}}, Deps{})
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/a")); a.code != 403 {
		t.Errorf("redirect to a private address: %d %q, want 403", a.code, a.body)
	}
	// Only 127.0.0.1 allowed: the hop to localhost is refused by name.
	_, srv = front(t, Config{AllowedDomains: []string{"127.0.0.1"}, AllowAddrs: loopbackOnly}, Deps{})
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/a")); a.code != 403 {
		t.Errorf("redirect off allowed_domains: %d %q, want 403", a.code, a.body)
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the refused hop was fetched %d times", n)
	}
	_, srv = front(t, Config{AllowedDomains: []string{"127.0.0.1", "localhost"}}, Deps{})
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/a")); a.code != 200 || a.body != "other" {
		t.Errorf("redirect to a named host: %d %q", a.code, a.body)
	}
}

func TestProxyRefusesLoopbackUnlessNamed(t *testing.T) {
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inside") })
	for _, c := range []struct {
		name    string
		allowed []string
		want    int
	}{
		{"open allowed_domains", nil, 403},
		{"wildcard names no address", []string{"*.0.0.1"}, 403},
		{"listed exactly", []string{"127.0.0.1"}, 200},
	} {
		_, srv := front(t, Config{AllowedDomains: c.allowed}, Deps{})
		if a := get(t, signed(t, srv, PathProxy, tp.URL+"/a")); a.code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, a.code, a.body, c.want)
		}
	}
	if n := tp.hits.Load(); n != 1 {
		t.Fatalf("the loopback stand-in was asked %d times, want 1 (the named case)", n)
	}
}

func TestProxyRewritesHTMLAndCSSAndKeepsTheirCoding(t *testing.T) {
	html := `<html><body><img src="https://cdn.example/a.png"><a href="https://adv.example/">x</a></body></html>`
	css := `.b{background:url("https://cdn.example/bg.png")}`
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		switch r.URL.Path {
		case "/c.html":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(&buf)
			io.WriteString(zw, html)
			zw.Close()
		case "/c.css":
			w.Header().Set("Content-Type", "text/css")
			w.Header().Set("Content-Encoding", "br")
			bw := brotli.NewWriter(&buf)
			io.WriteString(bw, css)
			bw.Close()
		}
		w.Write(buf.Bytes())
	})
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{BundleTag: "<script src=/tsjs.js></script>"})
	s := testSigner(t)

	resp, err := noFollow.Get(signed(t, srv, PathProxy, tp.URL+"/c.html"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body) // the client transport undoes gzip
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !resp.Uncompressed {
		t.Errorf("html: type %q, gzip undone %v", resp.Header.Get("Content-Type"), resp.Uncompressed)
	}
	got := firstPartyURLs(t, s, string(body))
	if len(got) != 3 || got[0] != "proxy https://cdn.example/a.png" || got[1] != "click https://adv.example/" ||
		!strings.Contains(string(body), "<body><script src=/tsjs.js></script>") {
		t.Errorf("html: %s -> %q", body, got)
	}

	req, _ := http.NewRequest(http.MethodGet, signed(t, srv, PathProxy, tp.URL+"/c.css"), nil)
	req.Header.Set("Accept-Encoding", "br")
	resp, err = noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("css coding %q, want br", resp.Header.Get("Content-Encoding"))
	}
	plain, err := io.ReadAll(brotli.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if got := firstPartyURLs(t, s, string(plain)); len(got) != 1 || got[0] != "proxy https://cdn.example/bg.png" {
		t.Errorf("css: %s -> %q", plain, got)
	}
}

func TestProxyBoundsTheAnswer(t *testing.T) {
	big := strings.Repeat("x", 2048)
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=60")
		switch r.URL.Path {
		case "/declared":
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		case "/html":
			w.Header().Set("Content-Type", "text/html")
		case "/grows":
			// Under the bound as sent, over it once its URLs are signed.
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, strings.Repeat(`<img src="https://cdn.example/a.png">`, 20))
			return
		}
		io.WriteString(w, big[:10])
		w.(http.Flusher).Flush() // chunked, unless declared
		io.WriteString(w, big[10:])
	})
	_, srv := front(t, Config{AllowAddrs: loopbackOnly, MaxBodyBytes: 1024, MaxRewriteBytes: 1024}, Deps{})
	// A refusal carries none of the third party's headers: a cacheable 502
	// would outlive the fault.
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/declared")); a.code != 502 || a.header.Get("Cache-Control") != "" {
		t.Errorf("declared over the bound: %d Cache-Control %q", a.code, a.header.Get("Cache-Control"))
	}
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/html")); a.code != 502 || a.header.Get("Cache-Control") != "" {
		t.Errorf("html over the rewrite bound: %d Cache-Control %q", a.code, a.header.Get("Cache-Control"))
	}
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/grows")); a.code != 502 {
		t.Errorf("html over the bound once rewritten: %d %q, want 502", a.code, a.body)
	}
	resp, err := noFollow.Get(signed(t, srv, PathProxy, tp.URL+"/chunked"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err == nil {
		t.Fatalf("an answer cut at the bound read as complete (%d bytes)", len(b))
	}
}

func TestProxyBoundsConcurrentFetchesPerClient(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, r.URL.Path)
	})
	_, srv := front(t, Config{AllowAddrs: loopbackOnly, PerClient: 1}, Deps{})
	done := make(chan answer)
	go func() {
		resp, err := noFollow.Get(signed(t, srv, PathProxy, tp.URL+"/slow"))
		if err != nil {
			done <- answer{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{code: resp.StatusCode, body: string(b)}
	}()
	<-entered
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/other")); a.code != 429 || a.header.Get("Retry-After") == "" {
		t.Errorf("second concurrent fetch: %d Retry-After %q, want 429", a.code, a.header.Get("Retry-After"))
	}
	close(release)
	if a := <-done; a.code != 200 || a.body != "/slow" {
		t.Errorf("first fetch: %d %q", a.code, a.body)
	}
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/after")); a.code != 200 {
		t.Errorf("after the first ended: %d, want 200", a.code)
	}
}

func TestProxyTimesOutASilentThirdParty(t *testing.T) {
	release := make(chan struct{})
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	_, srv := front(t, Config{AllowAddrs: loopbackOnly, FirstByteTimeout: 50 * time.Millisecond}, Deps{})
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/silent")); a.code != 502 && a.code != 504 {
		t.Errorf("silent third party: %d, want 502 or 504", a.code)
	}
}

func TestProxyCertificateCheck(t *testing.T) {
	tp := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls") }))
	tp.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	tp.StartTLS()
	defer tp.Close()
	pool := tp.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	cases := []struct {
		name  string
		check bool
		deps  Deps
		want  int
	}{
		{"unknown issuer refused", true, Deps{}, 502},
		{"trusted issuer", true, Deps{RootCAs: pool}, 200},
		{"certificate_check = false", false, Deps{}, 200},
	}
	for _, c := range cases {
		_, srv := front(t, Config{AllowAddrs: loopbackOnly, CertificateCheck: c.check}, c.deps)
		if a := get(t, signed(t, srv, PathProxy, tp.URL+"/x")); a.code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, a.code, a.body, c.want)
		}
	}
}

// A failed fetch is logged with the third party's host, never the target's
// query, which can carry the client's ts-ec id and bid data.
func TestProxyLogNamesNoTargetQuery(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // connection refused
	core, logs := observer.New(zap.InfoLevel)
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{Log: zap.New(core),
		ECID: func(*http.Request) string { return "ec-id-SECRET" }})
	if a := get(t, signed(t, srv, PathProxy, gone.URL+"/a.png?bid=SECRET")); a.code != 502 {
		t.Fatalf("got %d, want 502", a.code)
	}
	if logs.Len() != 1 {
		t.Fatalf("%d log entries, want 1", logs.Len())
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(line, "SECRET") || !strings.Contains(line, strings.TrimPrefix(gone.URL, "http://")) {
			t.Errorf("log line %s", line)
		}
	}
}

func TestProxyRedirectToOtherSchemeIs502(t *testing.T) {
	tp := newThirdParty(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "ftp://files.example/x")
		w.WriteHeader(http.StatusFound)
	})
	_, srv := front(t, Config{AllowAddrs: loopbackOnly}, Deps{})
	if a := get(t, signed(t, srv, PathProxy, tp.URL+"/a")); a.code != 502 || a.header.Get("Location") != "" {
		t.Fatalf("got %d Location %q, want 502 without it", a.code, a.header.Get("Location"))
	}
}
