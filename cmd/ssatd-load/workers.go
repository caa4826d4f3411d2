package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// The client Accept-Encoding values, picked uniformly.
var clientEncodings = []string{"br, gzip", "gzip", "identity", "gzip, deflate, br"}

// Request kinds and their share of the mix (per mille).
const (
	kindEligible    = iota // Sec-Fetch-Dest: document: SSAT-eligible navigation
	kindNonEligible        // Accept: */*: HTML, rewritten, no ad slots or bids
	kindAsset              // /asset.js: pass-through
	numKinds
)

var kindNames = [numKinds]string{"eligible", "non_eligible", "asset"}

func pickKind(rng *rand.Rand) int {
	switch n := rng.IntN(1000); {
	case n < 700:
		return kindEligible
	case n < 900:
		return kindNonEligible
	default:
		return kindAsset
	}
}

func setKindHeaders(req *http.Request, kind int) {
	switch kind {
	case kindEligible:
		req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("Sec-Fetch-Mode", "navigate")
	case kindNonEligible:
		req.Header.Set("Accept", "*/*")
	case kindAsset:
		req.Header.Set("Accept", "*/*")
		req.Header.Set("Sec-Fetch-Dest", "script")
	}
	req.Header.Set("User-Agent", "ssatd-load/1")
}

// loader runs the client side.
type loader struct {
	opts    options
	res     []*resource
	stack   *stack
	client  *http.Client
	accepts []compress.AcceptEncoding

	start, warmEnd, end time.Time
	issued              atomic.Int64
	sent                atomic.Int64 // requests handed to the client, warm-up included
	hitMax              atomic.Bool
	done                time.Time

	mu     sync.Mutex
	total  workerStats
	errN   [numErrKinds]atomic.Int64
	errMu  sync.Mutex
	errEx  []string
	errAll atomic.Int64
}

// workerStats are one worker's counts for the measured phase.
type workerStats struct {
	lat             [numProxies][]time.Duration
	warm            int64
	byKind          [numKinds]int64
	byAE            [4]int64
	byCoding        map[string]int64
	wire, decoded   int64
	auctionTimeouts int64
	overloaded      int64
}

func (l *loader) runLoad(ctx context.Context) {
	l.start = time.Now()
	l.warmEnd = l.start.Add(l.opts.Warmup)
	l.end = l.warmEnd.Add(l.opts.Duration)
	var wg sync.WaitGroup
	for i := range l.opts.Concurrency {
		wg.Go(func() { l.worker(ctx, i) })
	}
	wg.Wait()
	l.done = time.Now()
}

func (l *loader) worker(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(l.opts.Seed, uint64(id)+1))
	ws := workerStats{byCoding: map[string]int64{}}
	w := &clientWork{buf: make([]byte, 32<<10)}
	htmls := len(l.res) - 1 // the asset is last
	for {
		now := time.Now()
		if ctx.Err() != nil || !now.Before(l.end) {
			break
		}
		if l.opts.MaxRequests > 0 && l.issued.Add(1) > l.opts.MaxRequests {
			l.hitMax.Store(true)
			break
		}
		measured := !now.Before(l.warmEnd)
		kind := pickKind(rng)
		r := l.res[len(l.res)-1]
		if kind != kindAsset {
			r = l.res[rng.IntN(htmls)]
		}
		px := rng.IntN(numProxies)
		aei := rng.IntN(len(clientEncodings))
		out := l.one(ctx, w, px, r, kind, aei)
		if ctx.Err() != nil {
			break // interrupted: the last request's failure is ours, not the proxy's
		}
		if out.errKind >= 0 {
			l.fail(out.errKind, fmt.Sprintf("%s %s %s AE=%q: %s", proxyNames[px], kindNames[kind], r.path, clientEncodings[aei], out.detail))
		}
		if !measured {
			ws.warm++
			continue
		}
		ws.lat[px] = append(ws.lat[px], out.elapsed)
		ws.byKind[kind]++
		ws.byAE[aei]++
		ws.byCoding[out.coding]++
		ws.wire += out.wire
		ws.decoded += out.decoded
		if out.noBids {
			ws.auctionTimeouts++
		}
		if out.overloaded {
			ws.overloaded++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &l.total
	if t.byCoding == nil {
		t.byCoding = map[string]int64{}
	}
	for p := range numProxies {
		t.lat[p] = append(t.lat[p], ws.lat[p]...)
	}
	t.warm += ws.warm
	for k := range numKinds {
		t.byKind[k] += ws.byKind[k]
	}
	for i := range ws.byAE {
		t.byAE[i] += ws.byAE[i]
	}
	for c, n := range ws.byCoding {
		t.byCoding[c] += n
	}
	t.wire += ws.wire
	t.decoded += ws.decoded
	t.auctionTimeouts += ws.auctionTimeouts
	t.overloaded += ws.overloaded
}

func (l *loader) fail(kind int, detail string) {
	l.errN[kind].Add(1)
	l.errAll.Add(1)
	l.errMu.Lock()
	if len(l.errEx) < 20 {
		l.errEx = append(l.errEx, errKindNames[kind]+": "+detail)
	}
	l.errMu.Unlock()
}

// clientWork is a worker's reusable state.
type clientWork struct {
	buf []byte
	chk checker
}

type outcome struct {
	errKind int // -1: none
	detail  string
	elapsed time.Duration
	coding  string
	wire    int64
	decoded int64
	noBids  bool
	// overloaded: a page answered 503 with Retry-After (not an error).
	overloaded bool
}

// one issues one request and checks the response completely.
func (l *loader) one(ctx context.Context, w *clientWork, px int, r *resource, kind, aei int) (out outcome) {
	out.errKind = -1
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.stack.proxyURL[px]+r.path, nil)
	if err != nil {
		out.errKind, out.detail = errTransport, err.Error()
		return out
	}
	req.Host = domain
	setKindHeaders(req, kind)
	req.Header.Set("Accept-Encoding", clientEncodings[aei])

	start := time.Now()
	defer func() { out.elapsed = time.Since(start) }()
	l.sent.Add(1)
	resp, err := l.client.Do(req)
	if err != nil {
		out.errKind, out.detail = errTransport, err.Error()
		return out
	}
	defer resp.Body.Close()
	l.check(&out, w, resp, r, kind, aei)
	return out
}
