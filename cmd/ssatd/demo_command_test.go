package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

// runCommand starts the command line in the background and returns its
// output buffers, a stop func and the exit code channel.
func runCommand(t *testing.T, args ...string) (stdout, stderr *testutil.LockedBuffer, stop func(), code <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &testutil.LockedBuffer{}, &testutil.LockedBuffer{}
	ch := make(chan int, 1)
	go func() { ch <- run(ctx, args, stdout, stderr, []string{"SSATD_LOG_LEVEL=warn"}) }()
	t.Cleanup(cancel)
	return stdout, stderr, cancel, ch
}

func waitOutput(t *testing.T, b *testutil.LockedBuffer, re *regexp.Regexp, code <-chan int) []string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		out, next := b.Next()
		if m := re.FindStringSubmatch(out); m != nil {
			return m
		}
		select {
		case <-next:
		case c := <-code:
			t.Fatalf("command exited with %d before printing %v; output:\n%s", c, re, b.String())
		case <-timeout:
			t.Fatalf("no %v in the output after 30s:\n%s", re, out)
		}
	}
}

func exitCode(t *testing.T, code <-chan int) int {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(15 * time.Second):
		t.Fatal("command did not return within 15s of cancellation")
		return -1
	}
}

// TestDemoCommand runs `ssatd demo` as a user would (with free ports), reads
// the printed URLs, fetches them, and stops it as Ctrl-C would.
func TestDemoCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo", "-origin-port", "0", "-bidder-port", "0", "-mirror-port", "0", "-offload-port", "0",
		"-mirror-admin-port", "0", "-offload-admin-port", "0")
	m := waitOutput(t, stdout, regexp.MustCompile(`(?m)^  mirror +(http://\S+/) .*\n  offload +(http://\S+/) `), code)
	// The banner is written in several pieces: read it once its last line
	// (the metrics curl) is out.
	waitOutput(t, stdout, regexp.MustCompile(`(?m)^  curl -s \S+/metrics\n`), code)
	out := stdout.String()
	for _, want := range []string{"Press Ctrl-C", "curl -sD- -o /dev/null --compressed -H 'Sec-Fetch-Dest: document' " + strings.TrimSuffix(m[1], "/") + "/",
		"/metrics", "/articles/", "not SSAT-eligible"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	for i, want := range []string{"gzip", "br"} {
		resp, body := navigate(t, m[i+1], "gzip, deflate, br")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != want || !bytes.Contains(body, []byte("tsjs")) {
			t.Errorf("%s: status %d, coding %q", m[i+1], resp.StatusCode, resp.Header.Get("Content-Encoding"))
		}
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d after cancellation, want 0; stderr:\n%s", c, stderr.String())
	}
	if !strings.Contains(stdout.String(), "ssatd demo: stopped") {
		t.Errorf("no stop message:\n%s", stdout.String())
	}
}

func TestDemoPortInUse(t *testing.T) {
	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	port := busy.Listener.Addr().String()[strings.LastIndex(busy.Listener.Addr().String(), ":")+1:]
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"demo", "-origin-port", "0", "-bidder-port", "0", "-mirror-port", port, "-offload-port", "0",
		"-mirror-admin-port", "0", "-offload-admin-port", "0"}, io.Discard, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "-mirror-port") {
		t.Fatalf("exit %d, stderr %q; want 1 and a hint to use -mirror-port", code, stderr.String())
	}
}

func TestDemoOriginCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo-origin", "-listen", "127.0.0.1:0", "-host", "origin.test:8000")
	m := waitOutput(t, stdout, regexp.MustCompile(`serving on (http://\S+/)`), code)
	resp, body := navigate(t, m[1], "br")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "br" ||
		!bytes.Contains(body, []byte(`href="http://origin.test:8000/`)) || !bytes.Contains(body, []byte(`id="ad-home-mpu"`)) {
		t.Errorf("demo origin: status %d, coding %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
	}
	if c := cmdHealthcheck(context.Background(), []string{"-url", m[1] + "healthz"}, io.Discard, io.Discard, nil); c != 0 {
		t.Errorf("healthcheck of the origin = %d", c)
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d, stderr %s", c, stderr.String())
	}
}

func TestHealthcheck(t *testing.T) {
	var status int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if status == 0 {
			time.Sleep(300 * time.Millisecond) // slower than the timeout below
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		name   string
		status int
		args   []string
		want   int
	}{
		{"200", 200, []string{"-url", srv.URL}, 0},
		{"503", 503, []string{"-url", srv.URL}, 1},
		{"404", 404, []string{"-url", srv.URL}, 1},
		{"too slow", 0, []string{"-url", srv.URL, "-timeout", "100ms"}, 1},
		{"refused", 200, []string{"-url", deadURL}, 1},
		{"bad flag", 200, []string{"-bogus"}, 2},
		{"extra argument", 200, []string{"extra"}, 2},
		{"bad url", 200, []string{"-url", "::"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			status = tt.status
			mu.Unlock()
			var stderr bytes.Buffer
			if got := run(context.Background(), append([]string{"healthcheck"}, tt.args...), io.Discard, &stderr, nil); got != tt.want {
				t.Errorf("exit %d, want %d; stderr %q", got, tt.want, stderr.String())
			}
			if tt.want != 0 && stderr.Len() == 0 {
				t.Error("failure without a message")
			}
		})
	}
}

func TestDemoUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"demo", "-bogus"}, {"demo", "extra"}, {"demo", "-mirror-port", "70000"},
		{"demo-origin", "-bogus"}, {"demo-origin", "extra"},
		{"demo-bidder", "-bogus"}, {"demo-bidder", "extra"}, {"demo-bidder", "-failure-rate", "2"}} {
		got := invoke(t, args, nil)
		if got.code != 2 || !strings.Contains(got.stderr, "usage: ssatd "+args[0]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the usage", args, got.code, got.stderr)
		}
	}
}

// TestDemoBidderCommand runs `ssatd demo-bidder` and sends it an OpenRTB
// request as ssatd would.
func TestDemoBidderCommand(t *testing.T) {
	stdout, stderr, stop, code := runCommand(t, "demo-bidder", "-listen", "127.0.0.1:0", "-failure-rate", "0.5")
	m := waitOutput(t, stdout, regexp.MustCompile(`serving OpenRTB on (http://\S+/openrtb2/auction)`), code)
	post := func() (int, string) {
		resp, err := http.Post(m[1], "application/json", strings.NewReader(
			`{"id":"r1","imp":[{"id":"top-leaderboard","banner":{"format":[{"w":728,"h":90}]}}],"tmax":400}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A failure rate of 0.5 fails every second request.
	for i, want := range []int{http.StatusOK, http.StatusInternalServerError, http.StatusOK, http.StatusInternalServerError} {
		status, body := post()
		if status != want {
			t.Fatalf("request %d: status %d, want %d: %s", i+1, status, want, body)
		}
		if status == http.StatusOK && (!strings.Contains(body, `"seat":"demo-gamma"`) || !strings.Contains(body, `"price":2.456`) ||
			!strings.Contains(body, `"impid":"top-leaderboard"`)) {
			t.Errorf("request %d: %s", i+1, body)
		}
	}
	stop()
	if c := exitCode(t, code); c != 0 {
		t.Fatalf("exit code %d, stderr %s", c, stderr.String())
	}
}
