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
	frames chan h2Event // what each frame read says, until the connection ends
	next   uint32       // the next stream id
}

// h2Event is what the test reads of a frame: the framer reuses its frames.
type h2Event struct {
	stream uint32
	status int           // HEADERS: the response status
	reset  http2.ErrCode // RST_STREAM
	isRST  bool
	data   int  // DATA: the payload's length
	end    bool // the frame ends its stream
}

// dialHolder connects from the loopback address local, so that it is a
// client of its own.
func dialHolder(t *testing.T, f *tlsFront, local string) *h2Holder {
	return dialReader(t, f, local, 0, nil)
}

// dialReader is dialHolder with a stream window of window bytes (and as
// much on the connection), which reads nothing from the socket until
// start is closed (nil: at once).
func dialReader(t *testing.T, f *tlsFront, local string, window uint32, start <-chan struct{}) *h2Holder {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := tls.DialWithDialer(d, "tcp", f.addr, &tls.Config{RootCAs: f.roots, ServerName: "localhost", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q, want h2", p)
	}
	h := &h2Holder{conn: c, fr: http2.NewFramer(c, c), frames: make(chan h2Event, 1<<14), next: 1}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: window}); err != nil {
		t.Fatal(err)
	}
	if window > 0 {
		if err := h.fr.WriteWindowUpdate(0, window); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		defer close(h.frames)
		if start != nil {
			<-start
		}
		for {
			fr, err := h.fr.ReadFrame()
			if err != nil {
				return
			}
			if sf, ok := fr.(*http2.SettingsFrame); ok && !sf.IsAck() {
				_ = h.fr.WriteSettingsAck() // as a real client does; the only write after the streams
			}
			ev := h2Event{stream: fr.Header().StreamID}
			switch v := fr.(type) {
			case *http2.MetaHeadersFrame:
				ev.status, _ = strconv.Atoi(v.PseudoValue("status"))
				ev.end = v.StreamEnded()
			case *http2.RSTStreamFrame:
				ev.isRST, ev.reset = true, v.ErrCode
			case *http2.DataFrame:
				ev.data, ev.end = len(v.Data()), v.StreamEnded()
			default:
				continue
			}
			h.frames <- ev
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
		case ev, ok := <-h.frames:
			if !ok {
				t.Fatalf("connection ended with %d of %d streams answered", len(got), len(want))
			}
			if !want[ev.stream] {
				continue
			}
			if _, answered := got[ev.stream]; answered {
				continue
			}
			switch {
			case ev.status != 0:
				got[ev.stream] = ev.status
			case ev.isRST:
				got[ev.stream] = 0
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
		case ev, ok := <-h.frames:
			if !ok {
				t.Fatal("connection ended before the stream was reset")
			}
			if !ev.isRST || ev.stream != id {
				continue
			}
			took := time.Since(start)
			if ev.reset != http2.ErrCodeInternal || took < streamStallTimeout {
				t.Fatalf("stream reset with %v after %v, want INTERNAL_ERROR after %v", ev.reset, took, streamStallTimeout)
			}
			t.Logf("reset after %v", took)
			return
		case <-deadline:
			t.Fatal("the stream was not reset before write_timeout")
		}
	}
}

// TestHTTP2SlowNetworkIsNotAStall: a client that opens a large window but
// reads its socket late (a slow network: the response waits for the
// socket, not for the window) is not reset by the stall bound; it gets the
// whole response once it reads, 2 s past that bound.
func TestHTTP2SlowNetworkIsNotAStall(t *testing.T) {
	checkLeaks(t)
	const size = 48 << 20 // well past the socket buffers of loopback
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range size >> 20 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(origin.Close)
	f := newTLSFront(t, origin.URL)
	start := make(chan struct{})
	h := dialReader(t, f, "127.0.0.5", 1<<30, start)
	id := h.open(t, "/big.wasm", 1)[0]
	// Not reading: the server's writes fill the socket buffers and wait.
	time.Sleep(streamStallTimeout + 2*time.Second)
	close(start)
	got := 0
	for ev := range h.frames {
		if ev.stream != id {
			continue
		}
		if ev.isRST {
			t.Fatalf("stream reset (%v) after %d of %d bytes", ev.reset, got, size)
		}
		got += ev.data
		if ev.end {
			break
		}
	}
	if got != size {
		t.Fatalf("%d of %d bytes", got, size)
	}
}
