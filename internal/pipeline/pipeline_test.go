package pipeline

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

const (
	testOrigin = "origin.example"
	testHost   = "www.example"
	testPage   = `<html><head><title>t</title></head><body><a href="http://origin.example/x">x</a></body></html>`
)

// htmlJob is a Job for testPage-like pages: the rewrite of a request for
// testHost, with a head script and, when bids is set, the bids script.
func htmlJob(src []byte, in, out compress.Coding, dst io.Writer) Job {
	return Job{
		Src: io.NopCloser(bytes.NewReader(src)), In: in, Out: out, Dst: dst,
		Encoders: testEncoders,
		Rewrite: Rewrite{OriginHost: testOrigin, RequestHost: testHost, RequestScheme: "https",
			Head: func() []byte { return []byte("<script>head()</script>") }},
	}
}

var testEncoders = func() compress.Encoders {
	e, err := compress.NewEncoders(compress.Options{GzipLevel: -1, BrotliQuality: 4, BrotliWindow: 22})
	if err != nil {
		panic(err)
	}
	return e
}()

func encode(t *testing.T, c compress.Coding, b []byte) []byte {
	t.Helper()
	e, err := compress.Encode(c, b, compress.Options{GzipLevel: -1, BrotliQuality: 4, BrotliWindow: 22})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func decode(c compress.Coding, b []byte) ([]byte, error) {
	r, err := compress.NewReader(c, bytes.NewReader(b), 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// A Job needs no guest: the page is decoded as In, rewritten for the
// request (URLs, head, bids at </body>), encoded as Out, and the Result
// counts what went in and out.
func TestJobRewritesAcrossCodings(t *testing.T) {
	codings := []compress.Coding{compress.Identity, compress.Gzip, compress.Deflate, compress.Brotli}
	for _, in := range codings {
		for _, out := range codings {
			t.Run(string(in)+"-"+string(out), func(t *testing.T) {
				src := encode(t, in, []byte(testPage))
				var dst bytes.Buffer
				job := htmlJob(src, in, out, &dst)
				job.Bids = func() map[string]ssat.Bid { return map[string]ssat.Bid{"top": {HbAdid: "bid-1"}} }
				res, err := Do(job)
				if err != nil {
					t.Fatal(err)
				}
				page, err := decode(out, dst.Bytes())
				if err != nil {
					t.Fatalf("the output does not decode as %s: %v", out, err)
				}
				for _, want := range []string{"https://www.example/x", "<script>head()</script>", "bid-1"} {
					if !bytes.Contains(page, []byte(want)) {
						t.Errorf("the page lacks %q:\n%s", want, page)
					}
				}
				if bytes.Contains(page, []byte(testOrigin)) {
					t.Errorf("the page still names the origin:\n%s", page)
				}
				if res.In != in || res.Out != out || !res.Stats.HeadFound {
					t.Errorf("Result codings %s, %s, head found %v", res.In, res.Out, res.Stats.HeadFound)
				}
				if res.InBytes != int64(len(src)) || res.OutBytes != int64(dst.Len()) || res.ProcessedBytes != int64(len(page)) {
					t.Errorf("Result bytes in %d, out %d, processed %d; want %d, %d, %d",
						res.InBytes, res.OutBytes, res.ProcessedBytes, len(src), dst.Len(), len(page))
				}
			})
		}
	}
}

// The raw limit passes a body of exactly the limit and ends one a byte
// longer with a *RawLimitError; the decoded limit ends a body that
// decodes to more with compress's limit error.
func TestJobLimits(t *testing.T) {
	page := []byte(testPage)
	gz := encode(t, compress.Gzip, page)
	tests := []struct {
		name   string
		src    []byte
		in     compress.Coding
		limits Limits
		check  func(error) bool
	}{
		{"raw exactly", page, compress.Identity, Limits{Raw: int64(len(page))}, func(err error) bool { return err == nil }},
		{"raw one over", page, compress.Identity, Limits{Raw: int64(len(page)) - 1}, func(err error) bool {
			var lim *RawLimitError
			return errors.As(err, &lim)
		}},
		{"decoded exactly", gz, compress.Gzip, Limits{Decoded: int64(len(page))}, func(err error) bool { return err == nil }},
		{"decoded one over", gz, compress.Gzip, Limits{Decoded: int64(len(page)) - 1}, func(err error) bool {
			var de *compress.DecodeError
			return errors.As(err, &de) && de.Kind == compress.KindLimit
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := htmlJob(tt.src, tt.in, compress.Identity, io.Discard)
			job.Limits = tt.limits
			if _, err := Do(job); !tt.check(err) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// A body that fails part way leaves its encoded output unfinished: it can
// never decode as a complete page.
func TestFailedJobNeverDecodesComplete(t *testing.T) {
	broken := errors.New("origin went away")
	half := []byte(testPage + strings.Repeat("<p>more</p>", 1000))
	for _, out := range []compress.Coding{compress.Gzip, compress.Deflate, compress.Brotli} {
		t.Run(string(out), func(t *testing.T) {
			var dst bytes.Buffer
			job := htmlJob(nil, compress.Identity, out, &dst)
			job.Src = io.NopCloser(io.MultiReader(bytes.NewReader(half), errReader{broken}))
			res, err := Do(job)
			if !errors.Is(err, broken) || !errors.Is(res.Err, broken) {
				t.Fatalf("error %v, Result.Err %v; want the source's", err, res.Err)
			}
			if _, err := decode(out, dst.Bytes()); err == nil {
				t.Fatalf("the output of a failed page decodes as complete")
			}
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// The wait for the bids is not guest work: with a wall clock that only
// moves while Bids waits, the guest time is zero.
func TestBidsWaitIsNotGuestTime(t *testing.T) {
	now := time.Unix(0, 0)
	job := htmlJob([]byte(testPage), compress.Identity, compress.Identity, io.Discard)
	job.Now = func() time.Time { return now }
	called := false
	job.Bids = func() map[string]ssat.Bid {
		called = true
		now = now.Add(time.Hour)
		return nil
	}
	res, err := Do(job)
	if err != nil || !called {
		t.Fatalf("error %v, bids awaited %v", err, called)
	}
	if res.GuestTime != 0 {
		t.Fatalf("guest time %v, want 0: the bids' wait was counted", res.GuestTime)
	}
}

// With MeasureCPU the Result has the page's CPU; past Limits.CPU the page
// ends with ErrCPULimit.
func TestJobCPU(t *testing.T) {
	tests := []struct {
		name  string
		limit time.Duration
		want  error
	}{
		{"measured", 0, nil},
		{"over the limit", time.Nanosecond, ErrCPULimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := htmlJob([]byte(testPage), compress.Identity, compress.Gzip, io.Discard)
			job.MeasureCPU = true
			job.Limits.CPU = tt.limit
			res, err := Do(job)
			if !res.CPUMeasured || res.CPU <= 0 {
				t.Fatalf("CPU %v, measured %v: the thread clock did not work", res.CPU, res.CPUMeasured)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// Without MeasureCPU no clock is read.
func TestJobWithoutCPUClock(t *testing.T) {
	res, err := Do(htmlJob([]byte(testPage), compress.Identity, compress.Identity, io.Discard))
	if err != nil || res.CPUMeasured || res.CPU != 0 {
		t.Fatalf("error %v, CPU %v, measured %v; want no clock", err, res.CPU, res.CPUMeasured)
	}
}
