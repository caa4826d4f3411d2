package server

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A client that stops reading is cut off after the write deadline instead
// of holding the handler forever; a slow reader that keeps reading is not.
func TestStalledClientCutOff(t *testing.T) {
	done := make(chan error, 1)
	big := bytes.Repeat([]byte("x"), 64<<10)
	s := httptest.NewServer(WriteDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 2000; i++ { // 128 MB: far more than socket buffers hold
			if _, err := w.Write(big); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}), 300*time.Millisecond))
	defer s.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	// Never read.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("handler finished writing 128 MB to a client that never read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stalled client held the handler for 10s")
	}
}

func TestSlowReaderNotCutOff(t *testing.T) {
	s := httptest.NewServer(WriteDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 5; i++ {
			w.Write([]byte("chunk\n"))
			http.NewResponseController(w).Flush()
			time.Sleep(150 * time.Millisecond) // total 750ms > the 300ms deadline
		}
	}), 300*time.Millisecond))
	defer s.Close()
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil || b.String() != strings.Repeat("chunk\n", 5) {
		t.Fatalf("slow but progressing response cut: %v %q", err, b.String())
	}
}

// TestEndOfBodyAfterSlowHandlerNotCutOff: a handler that writes, works for
// longer than the write deadline and returns had the rest of its body (the
// buffered write and the last chunk, written after it returned) cut off by
// the deadline its last Write had set, so a complete response reached the
// client as an unexpected EOF.
func TestEndOfBodyAfterSlowHandlerNotCutOff(t *testing.T) {
	const d = 50 * time.Millisecond
	s := httptest.NewServer(WriteDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first\n"))
		http.NewResponseController(w).Flush()
		w.Write([]byte("last\n")) // buffered until the handler returns
		time.Sleep(3 * d)         // work past the last Write's deadline
	}), d))
	defer s.Close()
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil || b.String() != "first\nlast\n" {
		t.Fatalf("a finished response was cut: %v %q", err, b.String())
	}
}
