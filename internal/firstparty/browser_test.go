package firstparty

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/testutil"
)

func startChromium(t *testing.T) context.Context {
	t.Helper()
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return browserCtx
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{200, 10, 10, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// adServer is a stand-in ad server and advertiser on 127.0.0.1. It records
// each request's path and whether a browser sent it itself (browsers send
// Sec-Fetch-Dest; the first-party proxy forwards no Sec-Fetch header).
type adServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func (a *adServer) log() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func newAdServer(t *testing.T) *adServer {
	img := pngBytes(t)
	a := &adServer{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "proxy"
		if d := r.Header.Get("Sec-Fetch-Dest"); d != "" {
			who = "browser:" + d
		}
		a.mu.Lock()
		a.seen = append(a.seen, who+" "+r.URL.Path)
		a.mu.Unlock()
		self := "http://" + r.Host
		switch r.URL.Path {
		case "/img.png", "/bg.png", "/inner.png", "/final.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(img)
		case "/hop1":
			http.Redirect(w, r, "/hop2", http.StatusFound)
		case "/hop2":
			http.Redirect(w, r, self+"/final.png", http.StatusMovedPermanently)
		case "/style.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprintf(w, `#styled{width:3px;height:2px;background-image:url("%s/bg.png")}`, self)
		case "/ad.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, `document.documentElement.dataset.adRan = "1";`)
		case "/frame.html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><body><img id=inner src="%s/inner.png"></body>`, self)
		case "/landing":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><title>landed</title><p id=landed>advertiser</p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

// A winning creative rewritten by ProcessCreative loads every subresource
// through /first-party/proxy in Chromium, and its click lands on the
// advertiser through /first-party/click.
func TestCreativeIsFirstPartyInChromium(t *testing.T) {
	ctx := startChromium(t)
	ad := newAdServer(t)
	f, err := New(Config{ProxySecret: testSecret, AllowedDomains: []string{"127.0.0.1"}}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	adm := strings.ReplaceAll(`<link rel="stylesheet" href="AD/style.css">
<img id=direct src="AD/img.png"><img id=redirected src="AD/hop1"><img id=set srcset="AD/img.png 1x">
<div id=styled></div><script src="AD/ad.js"></script><iframe id=frame src="AD/frame.html"></iframe>
<a id=click href="AD/landing">visit</a>`, "AD", ad.URL)
	o := f.CreativeOptions()
	creative := ProcessCreative(adm, o)
	var clicks sync.Map
	mux := http.NewServeMux()
	mux.Handle("/first-party/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathClick {
			clicks.Store(r.URL.RawQuery, true)
		}
		f.Handler().ServeHTTP(w, r)
	}))
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><body>"+creative+"</body></html>")
	})
	pub := httptest.NewServer(mux)
	defer pub.Close()
	// The page is on localhost, the ad server on 127.0.0.1: another site.
	page := strings.Replace(pub.URL, "127.0.0.1", "localhost", 1) + "/page"

	check := `[...document.images].every(i => i.complete && i.naturalWidth === 3)
		&& document.documentElement.dataset.adRan === "1"
		&& document.getElementById("frame").contentDocument.getElementById("inner").naturalWidth === 3`
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](check, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("creative did not load first party: %v (ad server saw %q)", err, ad.log())
	}
	bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("styled")).backgroundImage`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bg, "/first-party/proxy?tsurl=") {
		t.Errorf("stylesheet's url() not first party: %s", bg)
	}
	for _, p := range []string{"/style.css", "/img.png", "/hop1", "/hop2", "/final.png", "/bg.png", "/ad.js", "/frame.html", "/inner.png"} {
		if !contains(ad.log(), "proxy "+p) {
			t.Errorf("%s was not fetched through the proxy: %q", p, ad.log())
		}
	}
	for _, s := range ad.log() {
		if strings.HasPrefix(s, "browser:") {
			t.Errorf("the browser went to the ad server itself: %s", s)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Click("#click"), chromedp.WaitVisible("#landed")); err != nil {
		t.Fatalf("click: %v (ad server saw %q)", err, ad.log())
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	clicks.Range(func(any, any) bool { n++; return true })
	if title != "landed" || n != 1 || !contains(ad.log(), "browser:document /landing") {
		t.Errorf("click landed on %q after %d first-party clicks; ad server saw %q", title, n, ad.log())
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
