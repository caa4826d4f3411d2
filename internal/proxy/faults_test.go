package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// assertAborted checks that the client saw a failed transfer, not a short
// page that ended cleanly (docs/behaviour.md, "Limits").
func assertAborted(t *testing.T, resp *http.Response, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("response ended cleanly (status %d); want an aborted transfer", resp.StatusCode)
	}
}

// assertNotComplete checks that a page that failed was not served as
// complete: either a 502 before any byte (the failure came before the first
// output was ready) or an aborted transfer.
func assertNotComplete(t *testing.T, resp *http.Response, err error) {
	t.Helper()
	if err == nil && resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("response ended cleanly (status %d); want a 502 or an aborted transfer", resp.StatusCode)
	}
}

// A page body of n bytes of valid HTML.
func htmlOfSize(n int) []byte {
	head := "<html><head></head><body>"
	b := make([]byte, 0, n)
	b = append(b, head...)
	for len(b) < n {
		b = append(b, 'x')
	}
	return b[:n]
}

// "Limits" in docs/behaviour.md: the raw limit is exact, by Content-Length and chunked.
func TestRawLimitBoundaries(t *testing.T) {
	const limit = 64 << 10
	for _, chunked := range []bool{false, true} {
		for _, size := range []int{limit - 1, limit, limit + 1} {
			t.Run(fmt.Sprintf("chunked=%v/size=%d", chunked, size-limit), func(t *testing.T) {
				body := htmlOfSize(size)
				e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					if !chunked {
						w.Header().Set("Content-Length", fmt.Sprint(len(body)))
					}
					w.Write(body)
				}), func(c *config.Config) { c.Publisher.MaxOriginResponseBytes = limit })
				resp, got, err := e.get(t, "/", header("Accept", "*/*"))
				switch {
				case size <= limit:
					if err != nil || resp.StatusCode != 200 || !bytes.HasSuffix(got, body[len(body)-100:]) {
						t.Fatalf("within the limit: err %v status %v", err, resp)
					}
				case !chunked:
					if err != nil || resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(got), "limit") {
						t.Fatalf("declared too large: want 502 before headers, got %v %v %q", err, resp, got)
					}
				default:
					assertAborted(t, resp, err)
				}
				if size > limit {
					line := e.accessLine(t, 1)
					if line["reason"] != reasonTooLarge.String() {
						t.Fatalf("reason = %v", line["reason"])
					}
					if e.guest.Metrics().Failures(reasonTooLarge.String()) != 1 {
						t.Fatalf("metric not incremented once: %d", e.guest.Metrics().Failures(reasonTooLarge.String()))
					}
				}
			})
		}
	}
}

// "Limits" (docs/behaviour.md) bomb guard: a small gzip body that expands past the decoded limit
// is stopped there.
func TestDecodedLimitStopsBomb(t *testing.T) {
	for _, c := range []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli} {
		t.Run(string(c), func(t *testing.T) {
			page := append([]byte("<html><head></head><body>"), make([]byte, 8<<20)...)
			bomb := encode(t, c, page)
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", string(c))
				w.Write(bomb)
			}), func(cfg *config.Config) { cfg.Publisher.MaxDecodedBodyBytes = 1 << 20 })
			resp, _, err := e.get(t, "/", header("Accept", "*/*"), header("Accept-Encoding", string(c)))
			// The limit may be crossed before the first compressed bytes
			// are ready (a 502) or after (aborted): which one depends on
			// when the flush timer fires.
			assertNotComplete(t, resp, err)
			if r := e.accessLine(t, 1)["reason"]; r != reasonDecodedTooLarge.String() {
				t.Fatalf("reason = %v", r)
			}
		})
	}
}

// Truncated compressed bodies abort the response at every cut point of a
// small page, for every coding.
func TestTruncatedBodiesAlwaysAbort(t *testing.T) {
	page := []byte(strings.Repeat("<p>hello world</p>", 40))
	for _, c := range []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli} {
		full := encode(t, c, append([]byte("<html><head></head><body>"), page...))
		var cut int
		e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", string(c))
			// No Content-Length: the origin ends the chunked body cleanly
			// after a cut stream, so only the decoder can tell.
			w.Write(full[:cut])
		}))
		step := 1
		if testing.Short() {
			step = 7
		}
		for cut = 1; cut < len(full); cut += step {
			resp, _, err := e.get(t, "/", header("Accept", "*/*"), header("Accept-Encoding", string(c)))
			if err == nil {
				if resp.StatusCode == http.StatusBadGateway {
					continue // detected before the first output byte (a cut gzip header, a small page)
				}
				t.Fatalf("%s cut at %d/%d: response ended cleanly with status %d", c, cut, len(full), resp.StatusCode)
			}
		}
	}
}

// The origin dies mid-body: the client must see a failed transfer.
func TestOriginClosesMidBody(t *testing.T) {
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			// Noisy, so that half of the stream decodes to output in
			// every coding.
			full := encode(t, c, noisyHTML(256<<10))
			mid := newMidBody(t)
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				if c != compress.Identity {
					w.Header().Set("Content-Encoding", string(c))
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(full)))
				w.Write(full[:len(full)/2])
				w.(http.Flusher).Flush()
				mid.wait(r) // the failure is then mid-body, after the headers
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			}))
			resp, err := mid.get(e, "/", navigate, header("Accept-Encoding", "gzip, deflate, br"))
			assertAborted(t, resp, err)
			if o := e.accessLine(t, 1)["outcome"]; o != outcomeAborted {
				t.Fatalf("outcome = %v", o)
			}
		})
	}
}

// A corrupt gzip header is caught before the headers go out: 502.
func TestCorruptGzipHeaderIs502(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("this is not gzip at all, just text"))
	}))
	resp, body, err := e.get(t, "/", navigate, header("Accept-Encoding", "gzip"))
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("err %v resp %v", err, resp)
	}
	if resp.Header.Get("Cache-Control") != privateCacheControl {
		t.Errorf("eligible error lacks privacy headers")
	}
	if !strings.Contains(string(body), "decoded") {
		t.Errorf("body = %q", body)
	}
}

func TestOriginUnreachableIs502(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, "http://"+addr)
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	front := newFront(t, g)
	resp, err := client.Get(front + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || len(body) == 0 {
		t.Fatalf("status %d type %q body %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if g.Metrics().Failures(reasonUnreachable.String()) != 1 {
		t.Fatal("unreachable not counted")
	}
}

// A name that does not resolve is an unreachable origin: 502.
func TestDNSFailureIs502(t *testing.T) {
	g, err := New(testConfig(t, "http://origin.does-not-exist.invalid"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	front := newFront(t, g)
	resp, err := client.Get(front + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || g.Metrics().Failures(reasonUnreachable.String()) != 1 {
		t.Fatalf("status %d, unreachable count %d", resp.StatusCode, g.Metrics().Failures(reasonUnreachable.String()))
	}
}

func TestOriginHeaderTimeoutIs504(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), func(c *config.Config) {
		c.Publisher.OriginHeaderTimeout = config.Duration{Duration: 200 * time.Millisecond}
	})
	defer close(release)
	resp, _, err := e.get(t, "/", navigate)
	if err != nil || resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("err %v resp %v", err, resp)
	}
	if r := e.accessLine(t, 1)["reason"]; r != reasonHeaderTimeout.String() {
		t.Fatalf("reason = %v", r)
	}
}

// The origin stops sending mid-body for longer than origin_idle_timeout.
func TestOriginIdleTimeoutAborts(t *testing.T) {
	for _, rt := range []string{"text/html", "application/json"} {
		t.Run(rt, func(t *testing.T) {
			release := make(chan struct{})
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", rt)
				w.Write([]byte("<html><head></head><body>part"))
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}), func(c *config.Config) {
				c.Publisher.OriginIdleTimeout = config.Duration{Duration: 200 * time.Millisecond}
			})
			defer close(release)
			start := time.Now()
			resp, _, err := e.get(t, "/", navigate)
			assertAborted(t, resp, err)
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
			if rt == "text/html" {
				if r := e.accessLine(t, 1)["reason"]; r != reasonOriginIdle.String() {
					t.Fatalf("reason = %v", r)
				}
			}
		})
	}
}

// Streaming: the head of the page, with its injected scripts, reaches the
// client while the origin is still holding back the rest, in every coding.
func TestFirstBytesBeforeOriginFinishes(t *testing.T) {
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			release := make(chan struct{})
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				var cw compress.Writer = nopWriter{w}
				if c != compress.Identity {
					w.Header().Set("Content-Encoding", string(c))
					cw, _ = compress.NewWriter(c, w, compress.Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22})
				}
				cw.Write([]byte("<html><head><title>x</title></head><body><p>first part</p>"))
				cw.Flush()
				w.(http.Flusher).Flush()
				<-release
				cw.Write([]byte("<p>second part</p></body></html>"))
				cw.Close()
			}))
			req, _ := http.NewRequest("GET", e.front.URL+"/", nil)
			req.Header.Set("Accept", "text/html")
			req.Header.Set("Accept-Encoding", "gzip, deflate, br")
			resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			defer resp.Body.Close()
			dec, err := compress.NewReader(c, resp.Body, 1<<20)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			br := bufio.NewReader(dec)
			got, err := br.ReadString('>') // blocks until the first bytes arrive
			for err == nil && !strings.Contains(got, "first part") {
				var more string
				more, err = br.ReadString('>')
				got += more
			}
			close(release)
			if err != nil {
				t.Fatalf("reading the first part: %v (got %q)", err, got)
			}
			if !strings.Contains(got, "trustedserver-js") {
				t.Fatalf("first part lacks the injection: %q", got)
			}
			rest, err := io.ReadAll(br)
			if err != nil || !strings.Contains(string(rest), "second part") {
				t.Fatalf("rest: %v %q", err, rest)
			}
		})
	}
}

type nopWriter struct{ io.Writer }

func (nopWriter) Flush() error { return nil }
func (nopWriter) Close() error { return nil }

// The client goes away mid-page: the origin request is cancelled.
func TestClientDisconnectCancelsOrigin(t *testing.T) {
	cancelled := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(htmlOfSize(64 << 10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(cancelled)
	}))
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/html\r\n\r\n", testDomain)
	buf := make([]byte, 1024)
	if _, err := conn.Read(buf); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("origin request not cancelled after the client left")
	}
	if o := e.accessLine(t, 1)["outcome"]; o != outcomeAborted {
		t.Fatalf("outcome = %v", o)
	}
}

// A client that closes its connection after the first chunk, while the
// origin is still sending, went away: the cancelled origin read surfaces as
// a decode error, but the reason is client_gone, in every origin coding and
// both modes, and it is never counted as an origin failure: an operator who
// alerts on origin failures would page the wrong team.
func TestClientLeavingEarlyIsNotBlamedOnOrigin(t *testing.T) {
	modes := []struct {
		name string
		mut  []func(*config.Config)
	}{{"mirror", nil}, {"offload", []func(*config.Config){offload("builtin")}}}
	for _, m := range modes {
		for _, c := range allCodings {
			t.Run(m.name+"/"+string(c), func(t *testing.T) {
				e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// The origin answers in c whatever it is asked, so that
					// offload also sees every coding.
					w.Header().Set("Content-Type", "text/html")
					var cw compress.Writer = nopWriter{w}
					if c != compress.Identity {
						w.Header().Set("Content-Encoding", string(c))
						cw, _ = compress.NewWriter(c, w, originOpts)
					}
					cw.Write([]byte("<html><head><title>x</title></head><body><p>first chunk</p>"))
					cw.Flush()
					w.(http.Flusher).Flush()
					<-r.Context().Done() // the rest never comes before the client leaves
				}), m.mut...)
				tr := &http.Transport{DisableCompression: true}
				defer tr.CloseIdleConnections()
				req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/", nil)
				req.Host = testDomain
				req.Header.Set("Sec-Fetch-Dest", "document")
				req.Header.Set("Accept-Encoding", "gzip, deflate, br")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if _, err := io.ReadAtLeast(resp.Body, make([]byte, 1), 1); err != nil {
					t.Fatalf("first chunk: %v", err)
				}
				resp.Body.Close() // an unfinished body: the connection is closed
				line := e.accessLine(t, 1)
				if line["mode"] != m.name {
					t.Fatalf("mode %v, want %s", line["mode"], m.name)
				}
				if line["reason"] != reasonClientGone.String() || line["outcome"] != outcomeAborted {
					t.Fatalf("reason %v outcome %v error %v; want %s, %s", line["reason"], line["outcome"], line["error"], reasonClientGone.String(), outcomeAborted)
				}
				met := e.guest.Metrics()
				if n := met.Failures(reasonOriginFailed.String()); n != 0 {
					t.Fatalf("%s counted %d times", reasonOriginFailed.String(), n)
				}
				if n := met.Failures(reasonClientGone.String()); n != 1 {
					t.Fatalf("%s counted %d times, want 1", reasonClientGone.String(), n)
				}
				// Nor does ReverseProxy log it as a read error of the
				// origin body.
				if l := e.logs.FilterMessageSnippet("read error during body copy").All(); len(l) > 0 {
					t.Fatalf("logged as an upstream read error: %v", l[0].Message)
				}
			})
		}
	}
}

// A pass-through body (not HTML) that ReverseProxy stops copying is blamed
// on the side that failed: the origin's read error, the idle timer, or the
// client that left while the origin was still sending; and it is counted
// under that reason, as an aborted page is.
func TestPassThroughAbortReasons(t *testing.T) {
	tests := []struct {
		name        string
		then        func(w http.ResponseWriter, r *http.Request) // after the first chunk
		clientLeave bool
		want        string
	}{
		{"origin closes", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, false, reasonOriginFailed.String()},
		{"origin idle", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, false, reasonOriginIdle.String()},
		{"client leaves", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, true, reasonClientGone.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream") // outside publisher.rewrite_content_types
				w.Header().Set("Content-Length", "100000")
				w.Write([]byte(`{"first":"chunk"`))
				w.(http.Flusher).Flush()
				tt.then(w, r)
			}), func(c *config.Config) {
				c.Publisher.OriginIdleTimeout = config.Duration{Duration: 300 * time.Millisecond}
				if tt.clientLeave {
					c.Publisher.OriginIdleTimeout = config.Duration{Duration: 10 * time.Second}
				}
			})
			tr := &http.Transport{DisableCompression: true}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/data.json", nil)
			req.Host = testDomain
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAtLeast(resp.Body, make([]byte, 1), 1); err != nil {
				t.Fatalf("first chunk: %v", err)
			}
			if tt.clientLeave {
				resp.Body.Close()
			} else {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				assertAborted(t, resp, err)
			}
			line := e.accessLine(t, 1)
			if line["route"] != string(routePassThrough) || line["outcome"] != outcomeAborted || line["reason"] != tt.want {
				t.Fatalf("route %v outcome %v reason %v (error %v); want %s, %s, %s",
					line["route"], line["outcome"], line["reason"], line["error"], routePassThrough, outcomeAborted, tt.want)
			}
			if n := e.guest.Metrics().Sum("ssatd_failures_total", map[string]string{"reason": tt.want, "stage": "aborted"}); n != 1 {
				t.Fatalf("ssatd_failures_total{reason=%q,stage=\"aborted\"} = %v, want 1", tt.want, n)
			}
		})
	}
}
