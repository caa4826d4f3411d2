package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/measure"
	"github.com/ssatd/ssatd/internal/measure/chromium"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
)

const measureDomain = "www.pub.example"

// measurePage is a small article naming host in its links.
func measurePage(host string, extra string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>m</title><link rel="stylesheet" href="//%s/s.css"></head><body>`, host)
	for i := range 20 {
		fmt.Fprintf(&b, `<p>paragraph %d <a href="http://%s/a/%d">link</a></p>`+"\n", i, host, i)
	}
	b.WriteString(extra)
	b.WriteString(`<div id="top"></div></body></html>`)
	return []byte(b.String())
}

// measureEncode encodes page as an origin would.
func measureEncode(t *testing.T, c compress.Coding, page []byte) []byte {
	t.Helper()
	b, err := compress.Encode(c, page, compress.Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// measureOrigin serves body() in the coding choose picks from the request's
// Accept-Encoding.
func measureOrigin(t *testing.T, body func() []byte, choose func(ae string) compress.Coding) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := choose(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Vary", "Accept-Encoding")
		if c != compress.Identity {
			w.Header().Set("Content-Encoding", string(c))
		}
		_, _ = w.Write(measureEncode(t, c, body()))
	}))
	t.Cleanup(s.Close)
	return s
}

// negotiate is what a well-behaved origin does.
func negotiate(ae string) compress.Coding {
	switch {
	case strings.Contains(ae, "br"):
		return compress.Brotli
	case strings.Contains(ae, "gzip"):
		return compress.Gzip
	case strings.Contains(ae, "deflate"):
		return compress.Deflate
	}
	return compress.Identity
}

func measureRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"measure"}, args...), &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

// measureBrowserRun is measureRun with -browser: the measure command as
// cmd/ssatd-measure builds it, with Chromium, which ssatd does not link.
func measureBrowserRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := measure.Command{Name: measure.BrowserCommand, Launch: chromium.Launch}
	code := cmd.Main(context.Background(), args, &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

// measureDaemon is the daemon's client-facing handler (edge in front of the
// guest) for origin, served over loopback.
func measureDaemon(t *testing.T, originURL string, mutate func(*config.Config)) *httptest.Server {
	t.Helper()
	c := config.Defaults()
	c.Publisher.Domain = measureDomain
	c.Publisher.OriginURL = originURL
	c.Auction.Enabled = true
	c.CreativeOpportunities.Slots = []config.Slot{{ID: "top", PagePatterns: []string{"/**"}}}
	mutate(c)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(c, proxy.Options{Bundle: bundle.JS()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.ClientHandler(c, g)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// upstreamLike is a small server speaking Trusted Server's measurement
// protocol as its Fastly staging build did (upstream issue #858): it
// answers ?__ts_ssat_compression=identity|mirror with the x-ts-ssat-*
// values observed there, all as response headers before the body, and
// compresses identity output per the client's Accept-Encoding as Fastly's
// dynamic compression would.
func upstreamLike(t *testing.T, page []byte) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		out := compress.Gzip
		switch r.URL.Query().Get("__ts_ssat_compression") {
		case "identity":
			h.Set("x-ts-ssat-compression-mode", "identity")
			h.Set("x-ts-ssat-delivery-compression", "fastly-dynamic")
			h.Set("x-ts-ssat-fastly-vcpu-ms", "19")
			h.Set("x-ts-ssat-origin-accept-encoding", "identity")
			h.Set("x-ts-ssat-origin-content-encoding", "identity")
			h.Set("x-ts-ssat-output-content-encoding", "identity")
			h.Set("x-ts-ssat-processed-bytes", "1365106")
			h.Set("x-ts-ssat-processing-ms", "9.045")
			out = negotiate(r.Header.Get("Accept-Encoding"))
		case "mirror":
			h.Set("x-ts-ssat-compression-mode", "mirror")
			h.Set("x-ts-ssat-delivery-compression", "in-guest")
			h.Set("x-ts-ssat-fastly-vcpu-ms", "47")
			h.Set("x-ts-ssat-origin-accept-encoding", "gzip, deflate, br")
			h.Set("x-ts-ssat-origin-content-encoding", "gzip")
			h.Set("x-ts-ssat-output-content-encoding", "gzip")
			h.Set("x-ts-ssat-processed-bytes", "178351")
			h.Set("x-ts-ssat-processing-ms", "44.630")
		}
		h.Set("Content-Encoding", string(out))
		_, _ = w.Write(measureEncode(t, out, page))
	}))
	t.Cleanup(s.Close)
	return s
}
