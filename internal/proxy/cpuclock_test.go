package proxy

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A page that waits, on a client that stopped reading or on an origin that
// paused, holds no locked OS thread: the thread CPU clock is read only
// while the page computes (pageCPU). The pipeline goroutine is found in
// the goroutine dump, blocked where the case says, and its header must
// not say "locked to thread".
func TestWaitingPageHoldsNoLockedThread(t *testing.T) {
	cases := []struct {
		name  string
		frame string // where the pipeline goroutine waits
		body  func(w http.ResponseWriter, r *http.Request, page string)
	}{
		{"client stopped reading", "io.(*pipe).write", func(w http.ResponseWriter, r *http.Request, page string) {
			// Far more than the socket buffers and the pipe hold.
			cut := strings.Index(page, "<body>")
			io.WriteString(w, page[:cut+len("<body>")])
			io.WriteString(w, strings.Repeat("<p>lorem ipsum dolor</p>", 2<<20))
			io.WriteString(w, page[cut+len("<body>"):])
		}},
		{"origin paused", "(*originBody).Read", func(w http.ResponseWriter, r *http.Request, page string) {
			io.WriteString(w, page[:strings.Index(page, "<body>")])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				tc.body(w, r, e.page())
			}))
			req, _ := http.NewRequest(http.MethodGet, e.front.URL+"/", nil)
			req.Host = testDomain
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close() // read nothing more
			g := waitingPipeline(t, tc.frame)
			if bytes.Contains(g[:bytes.IndexByte(g, '\n')], []byte("locked to thread")) {
				t.Fatalf("the waiting page holds a locked OS thread:\n%s", g)
			}
		})
	}
}

// waitingPipeline returns the dump of the pipeline goroutine once it is
// blocked in frame: the dump is polled, as no hook can report a goroutine
// that has parked.
func waitingPipeline(t *testing.T, frame string) []byte {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		n := runtime.Stack(buf, true)
		for _, g := range bytes.Split(buf[:n], []byte("\n\n")) {
			if bytes.Contains(g, []byte("proxy.(*pipeline).run")) && bytes.Contains(g, []byte(frame)) &&
				!bytes.Contains(g[:bytes.IndexByte(g, '\n')], []byte("[run")) {
				return append([]byte(nil), g...)
			}
		}
	}
	t.Fatalf("no pipeline goroutine waiting in %s within 10 s", frame)
	return nil
}
