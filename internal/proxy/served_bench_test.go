//go:build linux || darwin || freebsd

package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// BenchmarkServedPage serves corpus pages through the guest over loopback
// HTTP, origin and client included, in mirror mode with a gzip origin and
// with an identity origin (the rewrite and the HTTP path alone). It
// reports, beside the wall time, the process CPU per page (cpu-ns/op) and
// the OS context switches per page (ctxsw/op): the figures that show what
// the guest's waits cost on a loaded machine, where wall time is noise
// (a page holds an OS thread only while it computes, cpuclock.go). c is
// the clients in flight: GOMAXPROCS × the parallelism, so c=16 needs
// -cpu 2 or a multiple of 16 / GOMAXPROCS.
func BenchmarkServedPage(b *testing.B) {
	pages := corpusPages(b)
	for _, name := range []string{"yahoo-3.html", "ars-1.html"} {
		page, ok := pages[name]
		if !ok {
			b.Fatalf("corpus lacks %s", name)
		}
		for _, coding := range []compress.Coding{compress.Gzip, compress.Identity} {
			for _, par := range []int{1, 8} {
				b.Run(fmt.Sprintf("page=%s/origin=%s/c=%d", strings.TrimSuffix(name, ".html"), coding, par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
					b.SetParallelism(par)
					benchServed(b, name, page, coding)
				})
			}
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
	cpu0, sw0 := processCPU()
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
	cpu1, sw1 := processCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(sw1-sw0)/float64(b.N), "ctxsw/op")
}

// processCPU is the user and system CPU of the whole process, and its
// context switches, voluntary and not.
func processCPU() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}
