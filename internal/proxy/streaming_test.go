package proxy

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// Streaming: bodies reach the client as the origin sends them, and a body
// that goes wrong in transit never ends as a complete page.

// A drip origin that sends its next chunk only once the client has read
// the last one: each chunk reaches the client while the origin waits,
// through the rewrite and the edge, so nothing is held for more input.
func TestSlowDripReachesClientAsItArrives(t *testing.T) {
	for _, mut := range map[string][]func(*config.Config){"mirror": nil, "offload": {offload("builtin")}} {
		step := make(chan struct{})
		e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><head></head><body>")
			for i := 0; i < 5; i++ {
				fmt.Fprintf(w, "<p>chunk-%d</p>", i)
				w.(http.Flusher).Flush()
				select {
				case <-step:
				case <-time.After(5 * time.Second):
					return
				}
			}
			io.WriteString(w, "</body></html>")
		}), mut...)
		req, _ := http.NewRequest("GET", e.front.URL+"/", nil)
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("Accept-Encoding", "br")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		coding := compress.Coding(orIdentity(resp.Header.Get("Content-Encoding")))
		dec, err := compress.NewReader(coding, resp.Body, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(dec)
		for i := 0; i < 5; i++ {
			want := fmt.Sprintf("chunk-%d", i)
			var got string
			for !strings.Contains(got, want) {
				s, err := br.ReadString('>')
				if err != nil {
					t.Fatalf("waiting for %s: %v", want, err)
				}
				got += s
			}
			step <- struct{}{} // the origin sends the next chunk only now
		}
		if _, err := io.ReadAll(br); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// Corrupt bytes in the middle of a compressed body abort the response.
func TestCorruptMidBodyAborts(t *testing.T) {
	for _, c := range []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli} {
		t.Run(string(c), func(t *testing.T) {
			full := encode(t, c, noisyHTML(200<<10))
			bad := append([]byte{}, full...)
			for i := len(bad) / 2; i < len(bad)/2+64; i++ {
				bad[i] ^= 0x5a
			}
			mid := newMidBody(t)
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", string(c))
				w.Write(bad[:len(bad)/2])
				w.(http.Flusher).Flush()
				mid.wait(r) // the corruption is then met mid-body
				w.Write(bad[len(bad)/2:])
			}))
			resp, err := mid.get(e, "/", navigate, header("Accept-Encoding", string(c)))
			assertAborted(t, resp, err)
		})
	}
}

// A body longer than its Content-Length: HTTP/1.1 framing ends the message
// at the declared length (RFC 9112 §6.3), so the client gets exactly the
// declared page, complete, and the excess is never served.
func TestBodyLongerThanContentLength(t *testing.T) {
	page := "<html><head></head><body>declared</body></html>"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The origin keeps the connection open until the client has read the
	// page: closing it with the request still unread could reset it
	// before the page got through.
	read := make(chan struct{})
	defer close(read)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s<script>EXCESS</script>", len(page), page)
				select {
				case <-read:
				case <-time.After(10 * time.Second): // a guard: the test has failed by then
				}
			}(c)
		}
	}()
	g, err := New(testConfig(t, "http://"+ln.Addr().String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	front := newFront(t, g)
	resp, err := client.Get(front + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Contains(string(body), "EXCESS") || !strings.Contains(string(body), "declared</body>") {
		t.Fatalf("err %v body %q", err, body)
	}
}

// noisyHTML is a page that does not compress to almost nothing.
func noisyHTML(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := []byte("<html><head></head><body>")
	for len(b) < n {
		b = append(b, "<p>"...)
		for i := 0; i < 60; i++ {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		b = append(b, "</p>\n"...)
	}
	return b
}

// A panic in a layer in front of the guest before the body is copied (here
// at WriteHeader) must not leave the pipeline goroutine blocked on the pipe
// forever: the request ends and nothing leaks (goleak checks in TestMain).
func TestPanicBeforeCopyDoesNotStrandPipeline(t *testing.T) {
	e := newEnv(t, serveCoded(func() []byte { return noisyHTML(256 << 10) }))
	panicky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.guest.ServeHTTP(panicAtHeader{w}, r)
	}))
	defer panicky.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest("GET", panicky.URL+"/", nil)
		req.Header.Set("Sec-Fetch-Dest", "document")
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never ended: the pipeline is stranded")
	}
}

type panicAtHeader struct{ http.ResponseWriter }

// WriteHeader panics with the pipeline in its first write into the pipe:
// ReverseProxy writes the header only once the pipeline has handed on its
// first bytes (pipeline.commit waits for that), and nothing reads the pipe
// before the header is written, so that write waits until the pipe closes.
func (panicAtHeader) WriteHeader(int) {
	panic(http.ErrAbortHandler)
}
