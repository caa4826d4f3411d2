package server

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/ssatd/ssatd/internal/config"
)

// bigAssetOrigin serves at /big.wasm an asset that goes on until its
// client leaves (4 GiB at most), far past loopback's socket buffers and
// what a test reads, and the 106-byte asset elsewhere.
func bigAssetOrigin(t *testing.T) string {
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		if r.URL.Path != "/big.wasm" {
			_, _ = io.WriteString(w, asset106)
			return
		}
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 4 << 10 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(o.Close)
	return o.URL
}

// fillSocket connects from local with SETTINGS_INITIAL_WINDOW_SIZE = 0,
// opens one stream for /big.wasm with a 1 GiB window and n streams for
// the asset with none, reads until every stream has its response headers
// (each holds a place, or was refused), and then reads nothing more: the
// big response fills the socket.
func fillSocket(t *testing.T, f *tlsFront, local string, n int) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := tls.DialWithDialer(d, "tcp", f.addr, &tls.Config{RootCAs: f.roots, ServerName: "localhost", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	h := &h2Holder{conn: c, fr: http2.NewFramer(c, c), next: 1}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	_, _ = io.WriteString(c, http2.ClientPreface)
	_ = h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	_ = h.fr.WriteWindowUpdate(0, 1<<30)
	big := h.open(t, "/big.wasm", 1)[0]
	if err := h.fr.WriteWindowUpdate(big, 1<<30); err != nil {
		t.Fatal(err)
	}
	h.open(t, "/asset.wasm", n)
	answered := map[uint32]bool{}
	for len(answered) < n+1 {
		fr, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("%d of %d streams answered: %v", len(answered), n+1, err)
		}
		switch v := fr.(type) {
		case *http2.SettingsFrame:
			if !v.IsAck() {
				_ = h.fr.WriteSettingsAck()
			}
		case *http2.MetaHeadersFrame, *http2.RSTStreamFrame:
			answered[fr.Header().StreamID] = true
		}
	}
}

// TestHTTP2ClientNotReadingItsSocketReleasesPlaces: a client that opened
// a large window on one stream, many zero-window streams beside it, and
// then stopped reading its socket held every place it had for as long
// as it kept the connection (no 200 for anyone else in 40 s with a 10 s
// write_timeout): the stall bound does not count time the socket spends
// writing, and the streams' write deadlines could not reset streams whose
// RST_STREAM waited behind the full socket. Now the connection is closed
// once its socket has taken no byte for write_timeout, and a normal
// client gets its asset soon after.
func TestHTTP2ClientNotReadingItsSocketReleasesPlaces(t *testing.T) {
	checkLeaks(t)
	const writeTimeout = 2 * time.Second
	f := newTLSFront(t, bigAssetOrigin(t), func(c *config.Config) {
		c.Server.MaxRequestsInProgress = 8 // 6 for one client
		c.Server.WriteTimeout = config.Duration{Duration: writeTimeout}
	})
	fillSocket(t, f, "127.0.0.10", 8)
	fillSocket(t, f, "127.0.0.11", 8)
	held := time.Now()
	normal := f.h2Client(t)
	first := 0
	for time.Since(held) < writeTimeout+streamStallTimeout+5*time.Second {
		resp, err := normal.Get(f.url("/asset.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if first == 0 {
			first = resp.StatusCode
		}
		if resp.StatusCode == http.StatusOK {
			t.Logf("first status %d; 200 %v after the attack held its places", first, time.Since(held))
			if first == http.StatusOK {
				t.Error("the attack held no place: the test proves nothing")
			}
			return
		}
	}
	t.Fatalf("no 200 in %v after the attack held its places (first status %d)", time.Since(held), first)
}
