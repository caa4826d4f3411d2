package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/testutil"
)

// startTestDemo runs the whole demo in-process on free loopback ports and
// stops it when the test ends.
func startTestDemo(t *testing.T) *demoRun {
	t.Helper()
	return startTestDemoWith(t, demoOptions{})
}

// startTestDemoWith is startTestDemo with o's other flags (-tls, -cert-dir).
func startTestDemoWith(t *testing.T, o demoOptions) *demoRun {
	t.Helper()
	o.addr, o.shutdownTimeout = "127.0.0.1", 2*time.Second
	ctx, cancel := context.WithCancel(context.Background())
	d, err := startDemo(ctx, o, zaptest.NewLogger(t))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		done := make(chan error, 1)
		go func() { done <- d.wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo stopped with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("demo did not stop within 10s of cancellation")
		}
	})
	return d
}

// navigate fetches url as a browser navigation would, without decoding, and
// returns the response and the decoded body.
func navigate(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}, Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	switch ce := resp.Header.Get("Content-Encoding"); ce {
	case "":
	case "gzip":
		if r, err = gzip.NewReader(resp.Body); err != nil {
			t.Fatal(err)
		}
	case "br":
		r = brotli.NewReader(resp.Body)
	default:
		t.Fatalf("%s: unexpected Content-Encoding %q", url, ce)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: reading the body: %v", url, err)
	}
	return resp, body
}

// auctionID is the auction's mark in the demo bidder's bid ids and
// creatives (demo.BidResponseFor).
var auctionID = regexp.MustCompile(`-[0-9a-f]{6}\b`)

// TestDemoThroughBothProxies fetches every demo page through both proxies
// over loopback, as curl --compressed would with a browser's headers.
func TestDemoThroughBothProxies(t *testing.T) {
	d := startTestDemo(t)
	const browserAE = "gzip, deflate, br, zstd"
	originHost := strings.TrimPrefix(d.originURL, "http://")
	bundleTag := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + bundle.Hash(bundle.JS()) + `" id="trustedserver-js"></script>`
	for _, p := range d.origin.Pages() {
		eligible := p.Path != demo.AboutPath
		identity, _ := d.origin.Body(p.Path)
		var bodies [2][]byte
		for i, proxy := range []struct {
			name, url, wantCoding string
		}{
			{"mirror", d.mirrorURL, "gzip"}, // the origin's choice for a browser
			{"offload", d.offloadURL, "br"}, // the builtin edge's choice
		} {
			if !eligible {
				proxy.wantCoding = "gzip" // not SSAT: mirror mode on both
			}
			resp, body := navigate(t, proxy.url+p.Path, browserAE)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: status %d", proxy.name, p.Path, resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Encoding"); got != proxy.wantCoding {
				t.Errorf("%s %s: Content-Encoding %q, want %q", proxy.name, p.Path, got, proxy.wantCoding)
			}
			if resp.Header.Get("X-Compress-Hint") != "" {
				t.Errorf("%s %s: the hint reached the client", proxy.name, p.Path)
			}
			cc := resp.Header.Get("Cache-Control")
			if eligible && (cc != "private, max-age=0" || resp.Header.Get("Surrogate-Control") != "" || resp.Header.Get("ETag") != "") {
				t.Errorf("%s %s: SSAT page headers %v", proxy.name, p.Path, resp.Header)
			}
			if !eligible && cc != "public, max-age=60" {
				t.Errorf("%s %s: a non-SSAT page keeps the origin's Cache-Control, got %q", proxy.name, p.Path, cc)
			}
			if !bytes.Contains(body, []byte(bundleTag)) {
				t.Errorf("%s %s: no bundle tag", proxy.name, p.Path)
			}
			hasSlots := bytes.Contains(body, []byte(`(window.tsjs=window.tsjs||{}).adSlots=JSON.parse(`))
			hasBids := bytes.Contains(body, []byte(`var s=t.scheduleInitialAdInit;`))
			if hasSlots != eligible || hasBids != eligible {
				t.Errorf("%s %s: ad slots script %v, bids script %v, want %v", proxy.name, p.Path, hasSlots, hasBids, eligible)
			}
			if eligible && (!bytes.Contains(body, []byte(`\"hb_bidder\":\"demo-`)) || !bytes.Contains(body, []byte(`via OpenRTB`))) {
				t.Errorf("%s %s: the demo bidder's OpenRTB bids are missing", proxy.name, p.Path)
			}
			proxyHost := strings.TrimPrefix(proxy.url, "http://")
			if bytes.Contains(body, []byte(`href="http://`+originHost)) || !bytes.Contains(body, []byte(`href="http://`+proxyHost+`/`)) {
				t.Errorf("%s %s: links were not pointed at %s", proxy.name, p.Path, proxyHost)
			}
			// Undo what the proxy did; what remains must be the origin page.
			undone := bytes.ReplaceAll(body, []byte(proxyHost), []byte(originHost))
			undone = regexp.MustCompile(`<script>\(window\.tsjs=[^<]*</script>|<script>\(function\(\)\{var t=window\.tsjs[^<]*</script>`).ReplaceAll(undone, nil)
			undone = bytes.Replace(undone, []byte(bundleTag), nil, 1)
			if !bytes.Equal(undone, identity) {
				t.Errorf("%s %s: apart from the injections and links, the page differs from the origin's (%d vs %d bytes)", proxy.name, p.Path, len(undone), len(identity))
			}
			// Each view is its own auction, and the demo bidder's bid ids
			// and captions name it: compare the pages without that.
			bodies[i] = auctionID.ReplaceAll(bytes.ReplaceAll(body, []byte(proxyHost), []byte("PROXY")), []byte("-AUCTION"))
		}
		if !bytes.Equal(bodies[0], bodies[1]) {
			t.Errorf("%s: mirror and offload pages differ beyond the proxy host", p.Path)
		}
	}

	// Assets pass through untouched, and the admin endpoints answer.
	resp, body := navigate(t, d.offloadURL+"/static/site.js", "br")
	if resp.Header.Get("Content-Encoding") != "br" || !bytes.Contains(body, []byte("site_ready")) {
		t.Errorf("site.js through the offload proxy: %v", resp.Header)
	}
	for _, u := range []string{d.mirrorAdmin + "/readyz", d.offloadAdmin + "/healthz"} {
		if code := cmdHealthcheck(context.Background(), []string{"-url", u}, io.Discard, io.Discard, nil); code != 0 {
			t.Errorf("healthcheck %s = %d", u, code)
		}
	}
}

// runCommand starts the command line in the background and returns its
// output buffers, a stop func and the exit code channel.
func runCommand(t *testing.T, args ...string) (stdout, stderr *testutil.LockedBuffer, stop func(), code <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &testutil.LockedBuffer{}, &testutil.LockedBuffer{}
	ch := make(chan int, 1)
	go func() { ch <- run(ctx, args, stdout, stderr, []string{"SSATD_LOG_LEVEL=warn"}) }()
	t.Cleanup(cancel)
	return stdout, stderr, cancel, ch
}

func waitOutput(t *testing.T, b *testutil.LockedBuffer, re *regexp.Regexp, code <-chan int) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		out, next := b.Next()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-next:
		case c := <-code:
			t.Fatalf("command exited with %d before printing %v; output:\n%s", c, re, b.String())
		case <-timeout:
			t.Fatalf("no %v in the output after 30s:\n%s", re, out)
		}
	}
}

func exitCode(t *testing.T, code <-chan int) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(15 * time.Second):
		t.Fatal("command did not return within 15s of cancellation")
		return -1
	}
}

// TestDemoCommand runs `ssatd demo` as a user would (with free ports), reads
// the printed URLs, fetches them, and stops it as Ctrl-C would.
func TestDemoCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo", "-origin-port", "0", "-bidder-port", "0", "-mirror-port", "0", "-offload-port", "0",
		"-mirror-admin-port", "0", "-offload-admin-port", "0")
	m := waitOutput(t, stdout, regexp.MustCompile(`(?m)^  mirror +(http://\S+/) .*\n  offload +(http://\S+/) `), code)
	// The banner is written in several pieces: read it once its last line
	// (the metrics curl) is out.
	waitOutput(t, stdout, regexp.MustCompile(`(?m)^  curl -s \S+/metrics\n`), code)
	out := stdout.String()
	for _, want := range []string{"Press Ctrl-C", "curl -sD- -o /dev/null --compressed -H 'Sec-Fetch-Dest: document' " + strings.TrimSuffix(m[1], "/") + "/",
		"/metrics", "/articles/", "not SSAT-eligible"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	for i, want := range []string{"gzip", "br"} {
		resp, body := navigate(t, m[i+1], "gzip, deflate, br")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != want || !bytes.Contains(body, []byte("tsjs")) {
			t.Errorf("%s: status %d, coding %q", m[i+1], resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d after cancellation, want 0; stderr:\n%s", c, stderr.String())
	}
	if !strings.Contains(stdout.String(), "ssatd demo: stopped") {
		t.Errorf("no stop message:\n%s", stdout.String())
	}
}

func TestDemoPortInUse(t *testing.T) {
	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	port := busy.Listener.Addr().String()[strings.LastIndex(busy.Listener.Addr().String(), ":")+1:]
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "-origin-port", "0", "-bidder-port", "0", "-mirror-port", port, "-offload-port", "0",
		"-mirror-admin-port", "0", "-offload-admin-port", "0"}, io.Discard, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "-mirror-port") {
		t.Fatalf("exit %d, stderr %q; want 1 and a hint to use -mirror-port", code, stderr.String())
	}
}

func TestDemoOriginCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo-origin", "-listen", "127.0.0.1:0", "-host", "origin.test:8000")
	m := waitOutput(t, stdout, regexp.MustCompile(`serving on (http://\S+/)`), code)
	resp, body := navigate(t, m[1], "br")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "br" ||
		!bytes.Contains(body, []byte(`href="http://origin.test:8000/`)) || !bytes.Contains(body, []byte(`id="ad-home-mpu"`)) {
		t.Errorf("demo origin: status %d, coding %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
	}
	if c := cmdHealthcheck(context.Background(), []string{"-url", m[1] + "healthz"}, io.Discard, io.Discard, nil); c != 0 {
		t.Errorf("healthcheck of the origin = %d", c)
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d, stderr %s", c, stderr.String())
	}
}

func TestHealthcheck(t *testing.T) {
	var status int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if status == 0 {
			time.Sleep(300 * time.Millisecond) // slower than the timeout below
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		name   string
		status int
		args   []string
		want   int
	}{
		{"200", 200, []string{"-url", srv.URL}, 0},
		{"503", 503, []string{"-url", srv.URL}, 1},
		{"404", 404, []string{"-url", srv.URL}, 1},
		{"too slow", 0, []string{"-url", srv.URL, "-timeout", "100ms"}, 1},
		{"refused", 200, []string{"-url", deadURL}, 1},
		{"bad flag", 200, []string{"-bogus"}, 2},
		{"extra argument", 200, []string{"extra"}, 2},
		{"bad url", 200, []string{"-url", "::"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			status = tt.status
			mu.Unlock()
			var stderr bytes.Buffer
			if got := run(context.Background(), append([]string{"healthcheck"}, tt.args...), io.Discard, &stderr, nil); got != tt.want {
				t.Errorf("exit %d, want %d; stderr %q", got, tt.want, stderr.String())
			}
			if tt.want != 0 && stderr.Len() == 0 {
				t.Error("failure without a message")
			}
		})
	}
}

func TestDemoUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"demo", "-bogus"}, {"demo", "extra"}, {"demo", "-mirror-port", "70000"},
		{"demo-origin", "-bogus"}, {"demo-origin", "extra"},
		{"demo-bidder", "-bogus"}, {"demo-bidder", "extra"}, {"demo-bidder", "-failure-rate", "2"}} {
		got := invoke(t, args, nil)
		if got.code != 2 || !strings.Contains(got.stderr, "usage: ssatd "+args[0]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the usage", args, got.code, got.stderr)
		}
	}
}

// TestComposeConfigsMatchDemo keeps the Compose configurations in step with
// the in-process demo: same slots and OpenRTB endpoint (the bidder service),
// each proxy in its mode.
func TestComposeConfigsMatchDemo(t *testing.T) {
	want, err := demo.ProxyConfig(demo.ProxyOptions{Listen: ":0", AdminListen: ":0", OriginURL: "http://origin:8000", Domain: "localhost",
		BidderURL: "http://bidder:8002/openrtb2/auction"})
	if err != nil {
		t.Fatal(err)
	}
	for file, offload := range map[string]bool{"demo.toml": false, "demo-offload.toml": true} {
		cfg, err := config.Load(filepath.Join("..", "..", "configs", file), nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if cfg.Publisher.OriginURL != "http://origin:8000" || cfg.Publisher.Domain != "localhost" {
			t.Errorf("%s: origin_url %q, domain %q", file, cfg.Publisher.OriginURL, cfg.Publisher.Domain)
		}
		if cfg.Compute.Limits != want.Compute.Limits {
			t.Errorf("%s: compute.limits %q, want the demo's %q", file, cfg.Compute.Limits, want.Compute.Limits)
		}
		if cfg.Publisher.SSATCompressionOffloadEnabled != offload || cfg.Platform.DeliveryCompression != config.DeliveryCompressionBuiltin {
			t.Errorf("%s: offload %v platform %q", file, cfg.Publisher.SSATCompressionOffloadEnabled, cfg.Platform.DeliveryCompression)
		}
		if !cfg.Auction.Enabled || cfg.Auction.Provider != config.AuctionProviderOpenRTB || !reflect.DeepEqual(cfg.Auction.OpenRTB, want.Auction.OpenRTB) ||
			cfg.Auction.TimeoutMS != want.Auction.TimeoutMS || cfg.Auction.PriceGranularity != want.Auction.PriceGranularity {
			t.Errorf("%s: auction differs from the demo's:\n%+v\nwant\n%+v", file, cfg.Auction, want.Auction)
		}
		strip := func(s []config.Slot) []config.Slot {
			out := append([]config.Slot{}, s...)
			for i := range out {
				out[i].Patterns = nil
				out[i].BidderParams = nil
			}
			return out
		}
		if got, w := strip(cfg.CreativeOpportunities.Slots), strip(want.CreativeOpportunities.Slots); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: slots differ from the demo's:\n%+v\nwant\n%+v", file, got, w)
		}
	}
}

// screenshotDir is where the browser test writes its screenshots: the
// test's temporary folder, removed afterwards, or the folder that
// SSATD_SCREENSHOTS names, created if it does not exist.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SSATD_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("SSATD_SCREENSHOTS: %v", err)
	}
	return dir
}

func TestScreenshotDirIsCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	t.Setenv("SSATD_SCREENSHOTS", dir)
	if got := screenshotDir(t); got != dir {
		t.Fatalf("screenshotDir = %q, want %q", got, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("SSATD_SCREENSHOTS=%s was not created: %v", dir, err)
	}
}

// pageEvents is what a tab reported while loading one page.
type pageEvents struct {
	mu       sync.Mutex
	url      string
	document *network.Response // the response of url as a document
	errors   []string          // exceptions, console.error calls, error log entries
}

func (e *pageEvents) listen(ev any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventResponseReceived:
		if ev.Type == network.ResourceTypeDocument && ev.Response != nil && ev.Response.URL == e.url {
			e.document = ev.Response
		}
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			text += " " + ev.ExceptionDetails.Exception.Description
		}
		e.errors = append(e.errors, "exception: "+text)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			e.errors = append(e.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			e.errors = append(e.errors, "log: "+string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	}
}

func headerValue(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// renderedFrame is one creative iframe the bundle rendered.
type renderedFrame struct {
	Div     string `json:"div"`
	W       string `json:"w"`
	H       string `json:"h"`
	Sandbox string `json:"sandbox"`
	Srcdoc  string `json:"srcdoc"`
	Bid     string `json:"bid"` // the container's data-tsjs-bid: seat, bid id, hb_pb
}

// framesJS lists the creative iframes in slot containers as renderedFrame.
const framesJS = `Array.prototype.map.call(document.querySelectorAll("[data-tsjs-rendered] > iframe"), function (f) {
	return {div: f.parentElement.id, w: f.getAttribute("width"), h: f.getAttribute("height"), sandbox: f.getAttribute("sandbox"),
		srcdoc: f.srcdoc, bid: f.parentElement.getAttribute("data-tsjs-bid") || ""};
})`

// creativeSandbox is tsjs's CREATIVE_SANDBOX_TOKENS (core/render.ts).
const creativeSandbox = "allow-forms allow-popups allow-popups-to-escape-sandbox allow-scripts allow-top-navigation-by-user-activation"

type renderedPage struct {
	Slots       []string        `json:"slots"`
	Frames      []renderedFrame `json:"frames"`
	Adms        []string        `json:"adms"`
	StateCount  string          `json:"stateCount"`
	TeaserCount string          `json:"teaserCount"`
	Proto       string          `json:"proto"`       // the document's nextHopProtocol
	BundleProto string          `json:"bundleProto"` // the bundle script's
}

// startBrowser starts headless Chromium, with extra flags, for the rest of
// the test.
func startBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 1000),
		chromedp.UserDataDir(t.TempDir()),
	}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return browserCtx
}

// TestDemoInBrowser loads the demo pages in headless Chromium through both
// proxies over plain HTTP/1.1 (see browseDemo).
func TestDemoInBrowser(t *testing.T) {
	d := startTestDemo(t)
	browseDemo(t, startBrowser(t), d, "", "http/1.1")
}

// TestDemoInBrowserOverTLS loads the pages of `ssatd demo -tls` as
// TestDemoInBrowser does: the document and the bundle arrive over HTTP/2.
// Chromium trusts exactly the demo's certificate: its public key is pinned
// with --ignore-certificate-errors-spki-list (honoured with a
// --user-data-dir), and a server with another certificate still fails.
func TestDemoInBrowserOverTLS(t *testing.T) {
	d := startTestDemoWith(t, demoOptions{tls: true, certDir: t.TempDir()})
	certPEM, err := os.ReadFile(d.certs.Cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("%s holds no PEM block", d.certs.Cert)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	browserCtx := startBrowser(t, chromedp.Flag("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:])))

	other := httptest.NewUnstartedServer(http.NotFoundHandler())
	other.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	other.StartTLS()
	tabCtx, cancelTab := chromedp.NewContext(browserCtx)
	err = chromedp.Do(tabCtx, chromedp.Navigate(other.URL))
	cancelTab()
	other.Close()
	if err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Fatalf("a certificate other than the demo's: %v, want net::ERR_CERT_AUTHORITY_INVALID", err)
	}
	browseDemo(t, browserCtx, d, "tls-", "h2")
}

// browseDemo loads the home and an article page of d through both proxies
// in the browser: the page and the bundle arrive over proto (the
// navigation's nextHopProtocol), the bundle renders the demo bids into the
// slots, window.tsjs has the matched slots, the document arrives br-encoded
// from the offload proxy and in the origin's coding from the mirror proxy,
// and the page logs no error. Screenshots are named with shotPrefix.
func browseDemo(t *testing.T, browserCtx context.Context, d *demoRun, shotPrefix, proto string) {
	t.Helper()
	shots := screenshotDir(t)

	// Each slot's winning bid as the bundle renders it: a sandboxed iframe
	// of the bid's size, its container naming seat and price bucket. The
	// demo bidder's prices are fixed (demo.DemoPrice): the winners are
	// top-leaderboard demo-gamma 2.456, home-mpu demo-beta 3.890,
	// article-mpu demo-beta 3.911 and sidebar-sky demo-gamma 4.089, floored
	// by the dense granularity (cents up to 3.00, then 0.05 steps).
	type winner struct{ seat, w, h, pb string }
	wantBid := map[string]winner{
		"top-leaderboard": {"demo-gamma", "728", "90", "2.45"},
		"home-mpu":        {"demo-beta", "300", "250", "3.85"},
		"article-mpu":     {"demo-beta", "300", "250", "3.90"},
		"sidebar-sky":     {"demo-gamma", "160", "600", "4.05"},
	}
	divOf := map[string]string{}
	for _, s := range demo.Slots() {
		divOf[s.ID] = s.DivID
	}
	pages := map[string][]string{ // path → the slots that match it
		"/":                    {"top-leaderboard", "home-mpu", "sidebar-sky"},
		demo.ArticlePaths()[0]: {"top-leaderboard", "article-mpu", "sidebar-sky"},
	}
	originCoding := "gzip" // what the demo origin sends for Chromium's Accept-Encoding
	for _, proxy := range []struct{ name, base, coding string }{
		{"mirror", d.mirrorURL, originCoding},
		{"offload", d.offloadURL, "br"},
	} {
		for path, slots := range pages {
			name := proxy.name + "-home"
			if path != "/" {
				name = proxy.name + "-article"
			}
			t.Run(name, func(t *testing.T) {
				ev := &pageEvents{url: proxy.base + path}
				tabCtx, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithListener(ev.listen))
				defer cancelTab()
				// Without the HTTP cache, each page fetches its bundle: its
				// protocol is known whichever page loads first.
				if _, err := chromedp.Call(tabCtx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(tabCtx, chromedp.Navigate(ev.url)); err != nil {
					t.Fatalf("navigate %s: %v", ev.url, err)
				}
				if _, err := chromedp.Run(tabCtx, chromedp.Poll[bool](`window.tsjs && window.tsjs.rendered === true`,
					chromedp.WithPollingTimeout(20*time.Second))); err != nil {
					t.Fatalf("the bundle did not render the slots: %v", err)
				}
				got, err := chromedp.Run(tabCtx, chromedp.Evaluate[renderedPage](`({
					slots: (window.tsjs.adSlots || []).map(function (s) { return s.id; }),
					frames: `+framesJS+`,
					adms: Object.keys(window.tsjs.bids || {}).sort().map(function (k) { return window.tsjs.bids[k].hb_adid + " " + window.tsjs.bids[k].adm; }),
					stateCount: (document.getElementById("state-count") || {}).textContent || "",
					teaserCount: (document.getElementById("teaser-count") || {}).textContent || "",
					proto: performance.getEntriesByType("navigation")[0].nextHopProtocol,
					bundleProto: performance.getEntriesByType("resource").filter(function (r) { return r.name.indexOf("/static/tsjs=") >= 0; })
						.map(function (r) { return r.nextHopProtocol; }).join(" ")
				})`))
				if err != nil {
					t.Fatal(err)
				}
				if got.Proto != proto || got.BundleProto != proto {
					t.Errorf("nextHopProtocol: page %q, bundle %q; want %q", got.Proto, got.BundleProto, proto)
				}
				if !reflect.DeepEqual(got.Slots, slots) {
					t.Errorf("window.tsjs.adSlots ids = %q, want %q", got.Slots, slots)
				}
				if len(got.Frames) != len(slots) {
					t.Errorf("%d creatives rendered, want %d: %+v", len(got.Frames), len(slots), got.Frames)
				}
				for i, f := range got.Frames {
					if i >= len(slots) {
						break
					}
					w := wantBid[slots[i]]
					if f.Div != divOf[slots[i]] || f.W != w.w || f.H != w.h || f.Sandbox != creativeSandbox ||
						!strings.HasPrefix(f.Bid, w.seat+" ") || !strings.HasSuffix(f.Bid, " "+w.pb) ||
						!strings.Contains(f.Srcdoc, w.seat+" · "+slots[i]+" · "+w.w+"x"+w.h) {
						t.Errorf("creative %d = %+v, want slot %s's %s bid in #%s, %sx%s, sandboxed", i, f, slots[i], w.seat, divOf[slots[i]], w.w, w.h)
					}
				}
				// The bids came through the OpenRTB exchange: the demo
				// bidder's bid ids and creatives.
				if len(got.Adms) != len(slots) {
					t.Errorf("window.tsjs.bids has %d bids, want %d: %q", len(got.Adms), len(slots), got.Adms)
				}
				for _, a := range got.Adms {
					if !strings.HasPrefix(a, "demo-") || !strings.Contains(a, "via OpenRTB</div>") {
						t.Errorf("bid %q did not come from the demo bidder", a)
					}
				}
				if path == "/" && (got.StateCount == "0" || got.TeaserCount == "0") {
					t.Errorf("the page's own scripts did not run: state %q, teasers %q", got.StateCount, got.TeaserCount)
				}
				shot, err := chromedp.Run(tabCtx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(shots, shotPrefix+name+".png")
				if err := os.WriteFile(file, shot, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", file)

				ev.mu.Lock()
				defer ev.mu.Unlock()
				if ev.document == nil {
					t.Fatalf("no document response for %s", ev.url)
				}
				if ev.document.Status != http.StatusOK {
					t.Errorf("document status %d", ev.document.Status)
				}
				if ce := headerValue(ev.document.Headers, "Content-Encoding"); ce != proxy.coding {
					t.Errorf("document content-encoding %q, want %q (headers %v)", ce, proxy.coding, ev.document.Headers)
				}
				if cc := headerValue(ev.document.Headers, "Cache-Control"); cc != "private, max-age=0" {
					t.Errorf("document cache-control %q", cc)
				}
				if len(ev.errors) > 0 {
					t.Errorf("the page reported errors:\n%s", strings.Join(ev.errors, "\n"))
				}
			})
		}
	}

	// Two proxies, two pages: each page view was one OpenRTB request.
	if n := d.bidder.Requests(); n != 4 {
		t.Errorf("the demo bidder received %d bid requests, want 4", n)
	}

	// The mirror proxy's coding is the origin's: ask the origin directly
	// with Chromium's Accept-Encoding.
	resp, _ := navigate(t, d.originURL+"/", "gzip, deflate, br, zstd")
	if ce := resp.Header.Get("Content-Encoding"); ce != originCoding {
		t.Errorf("the origin sends %q for a browser, the test expected %q through the mirror proxy", ce, originCoding)
	}
}

// TestDemoBidderCommand runs `ssatd demo-bidder` and sends it an OpenRTB
// request as ssatd would.
func TestDemoBidderCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo-bidder", "-listen", "127.0.0.1:0", "-failure-rate", "0.5")
	m := waitOutput(t, stdout, regexp.MustCompile(`serving OpenRTB on (http://\S+/openrtb2/auction)`), code)
	post := func() (int, string) {
		resp, err := http.Post(m[1], "application/json", strings.NewReader(
			`{"id":"r1","imp":[{"id":"top-leaderboard","banner":{"format":[{"w":728,"h":90}]}}],"tmax":400}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A failure rate of 0.5 fails every second request.
	for i, want := range []int{http.StatusOK, http.StatusInternalServerError, http.StatusOK, http.StatusInternalServerError} {
		status, body := post()
		if status != want {
			t.Fatalf("request %d: status %d, want %d: %s", i+1, status, want, body)
		}
		if status == http.StatusOK && (!strings.Contains(body, `"seat":"demo-gamma"`) || !strings.Contains(body, `"price":2.456`) ||
			!strings.Contains(body, `"impid":"top-leaderboard"`)) {
			t.Errorf("request %d: %s", i+1, body)
		}
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d, stderr %s", c, stderr.String())
	}
}
