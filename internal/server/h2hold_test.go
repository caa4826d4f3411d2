package server

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ssatd/ssatd/internal/config"
)

// asset106 is the 106-byte asset of the attack in issue 30.
var asset106 = strings.Repeat("a", 105) + "\n"

// holdPage is a page larger than what the guest's copy to the client
// reads at once, so that a page whose client takes none of it keeps its
// pipeline, and its page place, waiting.
var holdPage = "<!doctype html><html><head><title>p</title></head><body>" +
	strings.Repeat("<p>a paragraph of the page</p>\n", 8<<10) + "</body></html>"

// holdOrigin serves /asset.wasm (pass-through) and /page (HTML, a page to
// rewrite).
func holdOrigin(t *testing.T) *httptest.Server {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, holdPage)
			return
		}
		w.Header().Set("Content-Type", "application/wasm")
		_, _ = io.WriteString(w, asset106)
	}))
	t.Cleanup(o.Close)
	return o
}

// h2Holder is a raw HTTP/2 client over TLS (x/net/http2's Framer) that
// sets SETTINGS_INITIAL_WINDOW_SIZE = 0 and never opens a window, so no
// response body it asks for can be sent.
type h2Holder struct {
	conn   *tls.Conn
	fr     *http2.Framer
	frames chan http2.Frame // every frame read, until the connection ends
	next   uint32           // the next stream id
}

// dialHolder connects from the loopback address local, so that it is a
// client of its own.
func dialHolder(t *testing.T, f *tlsFront, local string) *h2Holder {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := tls.DialWithDialer(d, "tcp", f.addr, &tls.Config{RootCAs: f.roots, ServerName: "localhost", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q, want h2", p)
	}
	h := &h2Holder{conn: c, fr: http2.NewFramer(c, c), frames: make(chan http2.Frame, 4096), next: 1}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.frames)
		for {
			fr, err := h.fr.ReadFrame()
			if err != nil {
				return
			}
			if sf, ok := fr.(*http2.SettingsFrame); ok && !sf.IsAck() {
				_ = h.fr.WriteSettingsAck() // as a real client does; the only write after the streams
			}
			// The framer reuses a frame's buffer at the next read: keep what
			// the test reads.
			switch v := fr.(type) {
			case *http2.MetaHeadersFrame, *http2.RSTStreamFrame, *http2.GoAwayFrame:
				h.frames <- v
			case *http2.DataFrame:
				h.frames <- v // only its header is read
			}
		}
	}()
	t.Cleanup(func() { _ = c.Close() })
	return h
}

// open sends n GET requests for path, each a stream of its own, in one
// write.
func (h *h2Holder) open(t *testing.T, path string, n int) []uint32 {
	t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	var out bytes.Buffer
	fw := http2.NewFramer(&out, nil)
	ids := make([]uint32, n)
	for i := range ids {
		block.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "www.pub.example"},
			{":path", path}, {"accept", "text/html"}, {"sec-fetch-dest", "document"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		ids[i] = h.next
		h.next += 2
		if err := fw.WriteHeaders(http2.HeadersFrameParam{StreamID: ids[i], BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.conn.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	return ids
}

// answers reads frames until each of the streams has its response
// headers or a reset, and returns the statuses (0: reset).
func (h *h2Holder) answers(t *testing.T, ids []uint32) map[uint32]int {
	t.Helper()
	want := map[uint32]bool{}
	for _, id := range ids {
		want[id] = true
	}
	got := map[uint32]int{}
	timeout := time.After(20 * time.Second)
	for len(got) < len(want) {
		select {
		case fr, ok := <-h.frames:
			if !ok {
				t.Fatalf("connection ended with %d of %d streams answered", len(got), len(want))
			}
			id := fr.Header().StreamID
			if !want[id] {
				continue
			}
			switch v := fr.(type) {
			case *http2.MetaHeadersFrame:
				got[id], _ = strconv.Atoi(v.PseudoValue("status"))
			case *http2.RSTStreamFrame:
				if _, answered := got[id]; !answered {
					got[id] = 0
				}
			}
		case <-timeout:
			t.Fatalf("%d of %d streams answered after 20 s", len(got), len(want))
		}
	}
	return got
}

// TestZeroWindowHTTP2ClientCannotHoldEverySlot: one HTTP/2 connection
// that set SETTINGS_INITIAL_WINDOW_SIZE = 0 opened 200 streams for a
// 106-byte asset and held all 128 request places (and, with 40 page
// streams, all 16 page places) for write_timeout, so every other client
// got 503. Now a connection has at most 32 streams, a client at most
// three quarters of the places, and a normal client beside the attack
// keeps getting its asset and its page with 200, in well under the stall
// bound.
func TestZeroWindowHTTP2ClientCannotHoldEverySlot(t *testing.T) {
	checkLeaks(t)
	origin := holdOrigin(t)
	f := newTLSFront(t, origin.URL, func(c *config.Config) {
		c.Server.MaxConcurrentPages = 16 // 128 requests in progress, as on 2 cores
	})
	normal := f.h2Client(t)
	fetch := func(path string) (int, time.Duration) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, f.url(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Sec-Fetch-Dest", "document")
		start := time.Now()
		resp, err := normal.Do(req)
		if err != nil {
			t.Fatalf("normal client, %s: %v", path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	for _, attack := range []struct {
		name    string
		from    string // each attack from a client address of its own
		path    string
		conns   int
		streams int // per connection
		most    int // the most responses the client may hold
	}{
		{"200 asset streams", "127.0.0.2", "/asset.wasm", 1, 200, streamsPerConnection(128)},
		{"40 page streams", "127.0.0.3", "/page", 1, 40, 12},
		{"4 connections of asset streams", "127.0.0.4", "/asset.wasm", 4, 200, 96},
	} {
		t.Run(attack.name, func(t *testing.T) {
			got := map[int]int{}
			for range attack.conns {
				h := dialHolder(t, f, attack.from)
				for _, status := range h.answers(t, h.open(t, attack.path, attack.streams)) {
					got[status]++
				}
			}
			held := got[http.StatusOK]
			t.Logf("%d×%d streams for %s: %d held, %d refused at once, %d 429, %d 503", attack.conns, attack.streams, attack.path,
				held, got[0], got[http.StatusTooManyRequests], got[http.StatusServiceUnavailable])
			if held > attack.most {
				t.Errorf("one client holds %d responses, more than %d", held, attack.most)
			}
			for i := 0; i < 3; i++ {
				for _, path := range []string{"/asset.wasm", "/page"} {
					status, took := fetch(path)
					if status != http.StatusOK || took >= 2*time.Second {
						t.Errorf("normal client beside the attack, %s: status %d in %v, want 200 in under 2 s", path, status, took)
					}
				}
			}
		})
	}
}

// TestHTTP2StreamWaitingOnWindowIsReset: a stream whose client never opens
// its window held its request place until server.write_timeout (30 s);
// now it is reset after streamStallTimeout, as for a client that stopped
// reading (RST_STREAM INTERNAL_ERROR), and its place is free again.
func TestHTTP2StreamWaitingOnWindowIsReset(t *testing.T) {
	checkLeaks(t)
	origin := holdOrigin(t)
	f := newTLSFront(t, origin.URL)
	h := dialHolder(t, f, "127.0.0.2")
	start := time.Now()
	id := h.open(t, "/asset.wasm", 1)[0]
	if got := h.answers(t, []uint32{id}); got[id] != http.StatusOK {
		t.Fatalf("status %d, want 200 headers", got[id])
	}
	deadline := time.After(config.Defaults().Server.WriteTimeout.Duration)
	for {
		select {
		case fr, ok := <-h.frames:
			if !ok {
				t.Fatal("connection ended before the stream was reset")
			}
			rst, isRST := fr.(*http2.RSTStreamFrame)
			if !isRST || rst.StreamID != id {
				continue
			}
			took := time.Since(start)
			if rst.ErrCode != http2.ErrCodeInternal || took < streamStallTimeout {
				t.Fatalf("stream reset with %v after %v, want INTERNAL_ERROR after %v", rst.ErrCode, took, streamStallTimeout)
			}
			t.Logf("reset after %v", took)
			return
		case <-deadline:
			t.Fatal("the stream was not reset before write_timeout")
		}
	}
}
