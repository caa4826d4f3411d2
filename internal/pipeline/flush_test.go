package pipeline

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// gatedSource gives head, then blocks until open is closed, then gives
// rest.
type gatedSource struct {
	head, rest []byte
	open       chan struct{}
	err        error // returned instead of rest when set
}

func (s *gatedSource) Read(p []byte) (int, error) {
	if len(s.head) > 0 {
		n := copy(p, s.head)
		s.head = s.head[n:]
		return n, nil
	}
	<-s.open
	if s.err != nil {
		return 0, s.err
	}
	if len(s.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}

func (s *gatedSource) Close() error { return nil }

// signalWriter closes wrote on its first write.
type signalWriter struct {
	wrote chan struct{}
	n     int
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if w.n == 0 && len(p) > 0 {
		close(w.wrote)
	}
	w.n += len(p)
	return len(p), nil
}

// With Latency set, what was rewritten reaches Dst while the source still
// waits (the timer's flush), and OnFirstWrite runs before it does; the
// source opens only once Dst has seen bytes.
func TestLatencyFlushesWhileTheSourceWaits(t *testing.T) {
	src := &gatedSource{head: []byte(testPage[:40]), rest: []byte(testPage[40:]), open: make(chan struct{})}
	dst := &signalWriter{wrote: make(chan struct{})}
	first := make(chan struct{})
	job := htmlJob(nil, compress.Identity, compress.Gzip, dst)
	job.Src = src
	job.Latency = time.Millisecond
	job.OnFirstWrite = func() { close(first) }
	done := make(chan error, 1)
	go func() {
		_, err := Do(job)
		done <- err
	}()
	select {
	case <-dst.wrote:
	case err := <-done:
		t.Fatalf("the job ended (%v) before the source opened", err)
	case <-time.After(10 * time.Second):
		close(src.open)
		<-done
		t.Fatal("nothing reached Dst within 10 s while the source waited")
	}
	select {
	case <-first:
	default:
		t.Error("OnFirstWrite was not called before the first write")
	}
	close(src.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A source that waits longer than Limits.Idle gets OnIdle called: serving
// cancels the origin request there, which ends the read.
func TestIdleSourceCallsOnIdle(t *testing.T) {
	cancelled := errors.New("origin request cancelled")
	src := &gatedSource{head: []byte(testPage[:40]), open: make(chan struct{}), err: cancelled}
	job := htmlJob(nil, compress.Identity, compress.Identity, io.Discard)
	job.Src = src
	job.Limits.Idle = time.Millisecond
	job.OnIdle = func() { close(src.open) }
	if _, err := Do(job); !errors.Is(err, cancelled) {
		t.Fatalf("error %v, want the cancelled read's", err)
	}
}
