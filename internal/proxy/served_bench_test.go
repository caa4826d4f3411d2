//go:build linux || darwin || freebsd

package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// BenchmarkServedPage serves corpus pages through the guest over loopback
// HTTP, origin and client included, in mirror mode with a gzip origin and
// with an identity origin (the rewrite and the HTTP path alone). It
// reports the process CPU per page (cpu-ns/op) beside the wall time: the
// figure that shows what reading the guest's thread CPU costs (the
// pipeline goroutine keeps its OS thread, compute.go).
func BenchmarkServedPage(b *testing.B) {
	pages := corpusPages(b)
	for _, name := range []string{"yahoo-3.html", "ars-1.html"} {
		page, ok := pages[name]
		if !ok {
			b.Fatalf("corpus lacks %s", name)
		}
		for _, coding := range []compress.Coding{compress.Gzip, compress.Identity} {
			b.Run(fmt.Sprintf("page=%s/origin=%s", strings.TrimSuffix(name, ".html"), coding), func(b *testing.B) {
				benchServed(b, name, page, coding)
			})
		}
	}
}

// benchServed serves page from an origin that sends it in coding to a
// client that accepts only that coding, so the guest mirrors it: gzip
// decodes and encodes, identity is the rewrite and the HTTP path alone.
func benchServed(b *testing.B, name string, page []byte, coding compress.Coding) {
	body := page
	if coding != compress.Identity {
		body = encode(b, coding, page)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if coding != compress.Identity {
			w.Header().Set("Content-Encoding", string(coding))
		}
		_, _ = w.Write(body)
	}))
	defer origin.Close()
	cfg := testConfig(&testing.T{}, origin.URL)
	g, err := New(cfg, Options{Bundle: []byte("bundle")})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	front := httptest.NewServer(g)
	defer front.Close()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodGet, front.URL+"/"+name, nil)
			req.Host = testDomain
			req.Header.Set("Sec-Fetch-Dest", "document")
			req.Header.Set("Accept-Encoding", string(coding))
			resp, err := c.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system CPU of the whole process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
