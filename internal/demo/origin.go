package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ssatd/ssatd/internal/compress"
)

// Codings the origin can send, in its default order of preference when the
// client accepts several equally. gzip comes first, like an origin that
// leaves brotli to its CDN, so that through the mirror proxy the page
// arrives in gzip while the offload proxy's edge delivers br.
var DefaultPreference = []string{"gzip", "br", "deflate", "identity"}

// Compression settings of the origin: what a typical web server uses for
// pre-compressed static files.
const (
	gzipLevel     = 6
	brotliQuality = 6
	brotliWindow  = 22
)

// OriginOptions configure the demo origin.
type OriginOptions struct {
	// Host is the host[:port] that pages name in their absolute links, the
	// host the proxies know as the origin (publisher.origin_url's host).
	Host string
	// Prefer orders codings the client accepts with the same q-value;
	// nil means DefaultPreference.
	Prefer []string
}

// Origin is the demo publisher origin: a handful of generated pages, their
// images, a style sheet and a script, each precompressed once in every
// coding and served by content negotiation on Accept-Encoding.
type Origin struct {
	host      string
	prefer    []string
	resources map[string]*resource
	modified  time.Time
}

type resource struct {
	contentType  string
	cacheControl string
	page         bool              // an HTML page: gets the page headers
	variants     map[string][]byte // by coding; only "identity" when not compressible
	etag         string            // hash of the identity bytes
}

// Page describes one of the origin's HTML pages.
type Page struct {
	Path  string
	Title string
	Sizes map[string]int // body bytes by coding
}

// Paths of the origin's pages.
const (
	HomePath  = "/"
	AboutPath = "/about"
)

// NewOrigin generates the pages for opts.Host and precompresses every
// resource once, in parallel.
func NewOrigin(opts OriginOptions) (*Origin, error) {
	o, err := generate(opts)
	if err != nil {
		return nil, err
	}
	if err := o.precompress(); err != nil {
		return nil, err
	}
	return o, nil
}

// generate builds every resource in identity only.
func generate(opts OriginOptions) (*Origin, error) {
	if opts.Host == "" || strings.ContainsAny(opts.Host, "/ \t\"'<>") {
		return nil, fmt.Errorf("demo: origin host %q must be a bare host[:port]", opts.Host)
	}
	o := &Origin{
		host:      strings.ToLower(opts.Host),
		prefer:    opts.Prefer,
		resources: map[string]*resource{},
		modified:  epoch,
	}
	if o.prefer == nil {
		o.prefer = DefaultPreference
	}
	for _, c := range o.prefer {
		if !slices.Contains(DefaultPreference, c) {
			return nil, fmt.Errorf("demo: unknown coding %q in preference list (want gzip, br, deflate, identity)", c)
		}
	}
	g, err := newGenerator(o.host)
	if err != nil {
		return nil, err
	}
	pages := map[string]func() ([]byte, error){HomePath: g.home, AboutPath: g.about}
	for i, p := range ArticlePaths() {
		pages[p] = func() ([]byte, error) { return g.article(i) }
	}
	for _, p := range SPAPaths() {
		pages[p] = func() ([]byte, error) { return g.spa(p) }
	}
	// Generation shares one generator, so it runs in a fixed order.
	for _, path := range slices.Sorted(maps.Keys(pages)) {
		body, err := pages[path]()
		if err != nil {
			return nil, err
		}
		o.resources[path] = &resource{contentType: "text/html; charset=utf-8", cacheControl: "public, max-age=60", page: true,
			variants: map[string][]byte{"identity": body}}
	}
	static := func(path, ctype string, body []byte) {
		o.resources[path] = &resource{contentType: ctype, cacheControl: "public, max-age=3600", variants: map[string][]byte{"identity": body}}
	}
	for _, name := range []string{"site.css", "site.js"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return nil, err
		}
		ctype := "text/css; charset=utf-8"
		if strings.HasSuffix(name, ".js") {
			ctype = "text/javascript; charset=utf-8"
		}
		static("/static/"+name, ctype, b)
	}
	const svg = "image/svg+xml"
	static("/img/logo.svg", svg, logoSVG())
	static("/img/og-default.svg", svg, svgImage("og-default", 320, 180, "The Harbour Gazette"))
	static("/img/avatar.svg", svg, svgImage("avatar", 24, 24, ""))
	for i := range storyImages {
		name := fmt.Sprintf("story-%02d", i)
		static("/img/"+name+".svg", svg, svgImage(name, 640, 360, fmt.Sprintf("Gazette photo %d", i+1)))
	}
	static("/robots.txt", "text/plain; charset=utf-8", []byte("User-agent: *\nAllow: /\n"))
	ico, err := favicon()
	if err != nil {
		return nil, err
	}
	o.resources["/favicon.ico"] = &resource{contentType: "image/x-icon", cacheControl: "public, max-age=86400",
		variants: map[string][]byte{"identity": ico}}
	for _, r := range o.resources {
		sum := sha256.Sum256(r.variants["identity"])
		r.etag = hex.EncodeToString(sum[:8])
	}
	return o, nil
}

// precompress encodes every text resource once in each coding.
func (o *Origin) precompress() error {
	var mu sync.Mutex
	var eg errgroup.Group
	for _, r := range o.resources {
		id := r.variants["identity"]
		if r.contentType == "image/x-icon" {
			continue // already compressed (PNG inside)
		}
		for _, coding := range []string{"gzip", "deflate", "br"} {
			eg.Go(func() error {
				enc, err := encode(coding, id)
				if err != nil {
					return err
				}
				mu.Lock()
				r.variants[coding] = enc
				mu.Unlock()
				return nil
			})
		}
	}
	return eg.Wait()
}

// demoOpts are the demo origin's encoder settings.
var demoOpts = compress.Options{GzipLevel: gzipLevel, BrotliQuality: brotliQuality, BrotliWindow: brotliWindow}

func encode(coding string, data []byte) ([]byte, error) {
	return compress.Encode(compress.Coding(coding), data, demoOpts)
}

// Host is the host[:port] the pages link to.
func (o *Origin) Host() string { return o.host }

// Pages lists the HTML pages with their sizes in each coding, home first.
func (o *Origin) Pages() []Page {
	paths := append([]string{HomePath}, ArticlePaths()...)
	paths = append(paths, SPAPaths()...)
	paths = append(paths, AboutPath)
	out := make([]Page, 0, len(paths))
	for _, p := range paths {
		r := o.resources[p]
		sizes := map[string]int{}
		for c, b := range r.variants {
			sizes[c] = len(b)
		}
		out = append(out, Page{Path: p, Title: pageTitle(r.variants["identity"]), Sizes: sizes})
	}
	return out
}

func pageTitle(b []byte) string {
	_, rest, ok := bytes.Cut(b, []byte("<title>"))
	if !ok {
		return ""
	}
	t, _, _ := bytes.Cut(rest, []byte("</title>"))
	return string(t)
}

// Body returns the identity bytes of path, for tests and tools.
func (o *Origin) Body(path string) ([]byte, bool) {
	r, ok := o.resources[path]
	if !ok {
		return nil, false
	}
	return r.variants["identity"], true
}

// ServeHTTP serves the demo site.
func (o *Origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Server", "ssatd-demo-origin")
	if r.URL.Path == "/healthz" {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	res, ok := o.resources[r.URL.Path]
	if !ok {
		o.notFound(w, r)
		return
	}
	coding := "identity"
	if len(res.variants) > 1 {
		coding = Negotiate(r.Header.Values("Accept-Encoding"), o.prefer)
		h.Set("Vary", "Accept-Encoding")
	}
	body := res.variants[coding]
	etag := `"` + res.etag + `"`
	if coding != "identity" {
		// Each coding is a different representation, so its own validator.
		etag = `"` + res.etag + "-" + coding + `"`
		h.Set("Content-Encoding", coding)
	}
	h.Set("Content-Type", res.contentType)
	h.Set("Cache-Control", res.cacheControl)
	h.Set("ETag", etag)
	h.Set("Last-Modified", o.modified.Format(http.TimeFormat))
	h.Set("X-Content-Type-Options", "nosniff")
	if res.page {
		// What a CMS behind a CDN typically sends; ssatd replaces the cache
		// policy of SSAT pages and passes the cookie through.
		h.Set("Surrogate-Control", "max-age=300")
		h.Add("Set-Cookie", "gazette_visitor=demo; Path=/; Max-Age=86400; SameSite=Lax")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

func (o *Origin) notFound(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusNotFound)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found · The Harbour Gazette</title>`+
		`<link rel="stylesheet" href="http://%s/static/site.css"></head><body><main class="wrap"><h1>Page not found</h1>`+
		`<p><a href="http://%s/">Back to the front page</a></p></main></body></html>`, o.host, o.host)
}

// Negotiate picks the coding to send for the given Accept-Encoding header
// values among prefer, with compress's rules for an origin (highest weight,
// ties broken by prefer; identity when nothing is acceptable). The demo
// names codings as strings because its flags and variants do.
func Negotiate(values []string, prefer []string) string {
	offered := make([]compress.Coding, len(prefer))
	for i, c := range prefer {
		offered[i] = compress.Coding(c)
	}
	return string(compress.ParseAcceptEncoding(values).Choose(offered...))
}

// favicon draws a 16×16 icon and wraps the PNG in an ICO container.
func favicon() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	blue := color.NRGBA{0x0b, 0x5c, 0x8c, 0xff}
	for y := range 16 {
		for x := range 16 {
			c := blue
			if y >= 9 && y <= 10 || (x-8)*(x-8)+(y-12)*(y-12) >= 30 && (x-8)*(x-8)+(y-12)*(y-12) <= 42 && y < 12 {
				c = color.NRGBA{0xff, 0xff, 0xff, 0xff}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var p bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	// ICONDIR: reserved, type 1 (icon), one image.
	_ = binary.Write(&b, binary.LittleEndian, [3]uint16{0, 1, 1})
	// ICONDIRENTRY: 16×16, no palette, 1 plane, 32 bpp, size, offset 22.
	b.Write([]byte{16, 16, 0, 0})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint16{1, 32})
	_ = binary.Write(&b, binary.LittleEndian, [2]uint32{uint32(p.Len()), 22})
	b.Write(p.Bytes())
	return b.Bytes(), nil
}
