package pipeline

import (
	"bufio"
	"errors"
	"sync"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// latencyWriter sits in front of the encoder. Bytes reach the client when a
// buffer fills, when the page ends, before the auction wait, and otherwise
// no later than latency after they were written: a browser can start on the
// head while the origin is still sending, without a flush (which costs
// compression ratio) after every small write.
type latencyWriter struct {
	mu      sync.Mutex
	front   *bufio.Writer
	enc     compress.Writer
	out     *bufio.Writer // nil when enc writes to the client side directly
	latency time.Duration
	timer   *time.Timer
	dirty   bool
	closed  bool
	written int64 // bytes accepted from the rewriter (uncompressed output)
	err     error
	cpu     *pageCPU // the pipeline's clock, which the timer's flush leaves alone
}

func newLatencyWriter(front *bufio.Writer, enc compress.Writer, out *bufio.Writer, latency time.Duration) *latencyWriter {
	// The timer is made on the first write that needs it: a pipeline
	// without latency flushes (Job.Latency 0) never does.
	return &latencyWriter{front: front, enc: enc, out: out, latency: latency}
}

func (lw *latencyWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return 0, lw.err
	}
	n, err := lw.front.Write(p)
	lw.written += int64(n)
	if err != nil {
		lw.err = err
		return n, err
	}
	if !lw.dirty {
		lw.dirty = true
		if lw.latency > 0 {
			if lw.timer == nil {
				lw.timer = time.AfterFunc(lw.latency, lw.onTimer)
			} else {
				lw.timer.Reset(lw.latency)
			}
		}
	}
	return n, nil
}

func (lw *latencyWriter) onTimer() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.dirty && !lw.closed && lw.err == nil {
		if lw.cpu != nil {
			lw.cpu.foreign = true
			defer func() { lw.cpu.foreign = false }()
		}
		lw.flushLocked()
	}
}

func (lw *latencyWriter) flushLocked() {
	lw.dirty = false
	lw.stopTimer()
	if err := lw.front.Flush(); err != nil {
		lw.err = err
		return
	}
	if err := lw.enc.Flush(); err != nil {
		lw.err = err
		return
	}
	if lw.out != nil {
		if err := lw.out.Flush(); err != nil {
			lw.err = err
		}
	}
}

func (lw *latencyWriter) stopTimer() {
	if lw.timer != nil {
		lw.timer.Stop()
	}
}

// Flush pushes everything written so far to the client.
func (lw *latencyWriter) Flush() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err == nil {
		lw.flushLocked()
	}
	return lw.err
}

// Close ends the encoded stream properly: only for a complete page.
func (lw *latencyWriter) Close() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.closed = true
	lw.stopTimer()
	if lw.err != nil {
		return lw.err
	}
	if err := lw.front.Flush(); err != nil {
		return err
	}
	if err := lw.enc.Close(); err != nil {
		return err
	}
	if lw.out == nil {
		return nil
	}
	return lw.out.Flush()
}

// Abandon stops the writer without finishing the encoded stream, so that a
// failed page can never look complete to a decoder.
func (lw *latencyWriter) Abandon() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.closed = true
	lw.stopTimer()
	if lw.err == nil {
		lw.err = errors.New("pipeline abandoned")
	}
}
