package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procStatusKB reads one "Name:   123 kB" field of /proc/self/status; 0 when
// it is not available (not Linux).
func procStatusKB(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != name {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		return n
	}
	return 0
}

type rssSample struct {
	at    time.Time
	bytes int64
}

// sampler reads VmRSS periodically.
type sampler struct {
	quit    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	samples []rssSample
}

func startSampler(every time.Duration) *sampler {
	s := &sampler{quit: make(chan struct{})}
	s.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case now := <-t.C:
				s.samples = append(s.samples, rssSample{at: now, bytes: procStatusKB("VmRSS") * 1024})
			}
		}
	})
	return s
}

// stop ends the sampling and returns the samples; it may be called again.
func (s *sampler) stop() []rssSample {
	s.once.Do(func() { close(s.quit) })
	s.wg.Wait()
	return s.samples
}

const mib = 1 << 20

// rssSummary puts the samples taken in [from, to] into rep and says whether
// they trend upward: the mean of the last third against the first third.
func rssSummary(rep *report, samples []rssSample, from, to time.Time) {
	var series []float64
	for _, s := range samples {
		if !s.at.Before(from) && !s.at.After(to) && s.bytes > 0 {
			series = append(series, round1(float64(s.bytes)/mib))
		}
	}
	rep.RSSSeriesMiB = series
	rep.RSSTrend = "n/a"
	if len(series) == 0 {
		return
	}
	rep.RSSMinMiB, rep.RSSMaxMiB = series[0], series[0]
	for _, v := range series {
		rep.RSSMinMiB = min(rep.RSSMinMiB, v)
		rep.RSSMaxMiB = max(rep.RSSMaxMiB, v)
	}
	if len(series) < 3 {
		return
	}
	third := len(series) / 3
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	first, last := mean(series[:third]), mean(series[len(series)-third:])
	rep.RSSFirstMeanMiB, rep.RSSLastMeanMiB = round1(first), round1(last)
	rep.RSSTrendPct = round1((last - first) / first * 100)
	// Within ±10% is noise for a garbage-collected heap under random load.
	switch {
	case rep.RSSTrendPct > 10:
		rep.RSSTrend = "up"
	case rep.RSSTrendPct < -10:
		rep.RSSTrend = "down"
	default:
		rep.RSSTrend = "flat"
	}
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
