package auction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
	"github.com/ssatd/ssatd/internal/telemetry"
	"go.uber.org/zap"
)

// TestBidRequestGolden checks the OpenRTB request field by field against
// testdata/bidrequest.golden.json, and that nothing of the client's request
// travels as a header.
func TestBidRequestGolden(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	f := newFixture(t, OpenRTBOptions{GDPRApplies: true, Endpoints: []Endpoint{{AccountID: "1001", Test: true, Debug: true,
		Headers: map[string]string{"X-Api-Key": "k1"}}}}, e)
	_, _, _ = f.run(t, time.Second)
	if e.calls() != 1 {
		t.Fatalf("%d calls", e.calls())
	}
	var got map[string]any
	if err := json.Unmarshal(e.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if id, _ := got["id"].(string); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Errorf("id %q is not a fresh random id", got["id"])
	}
	if tmax, _ := got["tmax"].(float64); tmax < 900 || tmax > 1000 {
		t.Errorf("tmax %v, want the time left of a 1s auction", got["tmax"])
	}
	got["id"], got["tmax"] = "<ID>", "<TMAX>"
	data, err := os.ReadFile("testdata/bidrequest.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, d := range diffJSON("", want, got) {
		t.Error(d)
	}

	h := e.headers[0]
	if h.Get("Content-Type") != "application/json" || h.Get("X-Openrtb-Version") != "2.6" || h.Get("X-Api-Key") != "k1" || h.Get("User-Agent") != "ssatd" {
		t.Errorf("headers %v", h)
	}
	var names []string
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	wantNames := []string{"Accept-Encoding", "Content-Length", "Content-Type", "User-Agent", "X-Api-Key", "X-Openrtb-Version"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("request headers %q, want only %q", names, wantNames)
	}
}

// diffJSON lists the paths where got differs from want.
func diffJSON(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, diffJSON(path+"."+k, v, g[k])...)
		}
		for k, v := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: unexpected field %v", path, k, v))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
	}
	return nil
}

func TestWinnerAcrossEndpoints(t *testing.T) {
	verifyNoLeaks(t)
	a := newEndpoint(t, answer(
		bid("a-top", "top", "1.50", "alpha"),
		bid("a-side", "side", "0.80", "alpha"),
		bid("a-tie", "side", "0.90", "alpha"),
		openrtb.Bid{ID: "no-adm", ImpID: "top", Price: "9"},
		bid("zero", "top", "0", "alpha"),
		bid("neg", "top", "-1", "alpha"),
		bid("stranger", "nope", "9", "alpha"),
	))
	b := newEndpoint(t, answer(
		bid("b-top", "top", "2.10", "beta"),
		bid("b-tie", "side", "0.90", "beta"), // equal price: the first endpoint's bid stays
	))
	f := newFixture(t, OpenRTBOptions{}, a, b)
	bids, out, _ := f.run(t, 2*time.Second)
	if out != Completed {
		t.Fatalf("outcome %v", out)
	}
	want := map[string]ssat.Bid{
		"top":  {Adm: "<div>b-top</div>", W: 300, H: 250, HbAdid: "b-top", HbBidder: "beta", HbPb: "2.10", Price: 2.1},
		"side": {Adm: "<div>a-tie</div>", W: 300, H: 250, HbAdid: "a-tie", HbBidder: "alpha", HbPb: "0.90", Price: 0.9},
	}
	if !reflect.DeepEqual(bids, want) {
		t.Errorf("bids\n%+v\nwant\n%+v", bids, want)
	}
	s := f.p.Stats().Snapshot()
	wantIgnored := map[string]int64{IgnoredNoAdm: 1, IgnoredPrice: 2, IgnoredUnknownImpID: 1}
	if !reflect.DeepEqual(s.Ignored, wantIgnored) {
		t.Errorf("ignored %v, want %v", s.Ignored, wantIgnored)
	}
	if a, b := s.Endpoints["ep1"].Won, s.Endpoints["ep2"].Won; !reflect.DeepEqual(a, map[string]int64{"alpha": 1}) ||
		!reflect.DeepEqual(b, map[string]int64{"beta": 1}) {
		t.Errorf("won by seat: ep1 %v, ep2 %v", a, b)
	}
	for _, name := range []string{"ep1", "ep2"} {
		if got := s.Endpoints[name].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointBids, ""}: 1}) {
			t.Errorf("%s outcomes %v", name, got)
		}
	}
}

// Bid w/h missing: the slot's first format is used.
func TestBidSizeFallsBackToFormat(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, answer(openrtb.Bid{ID: "x", ImpID: "top", Price: "1", AdM: "<b>x</b>", CrID: "s"}))
	f := newFixture(t, OpenRTBOptions{}, e)
	bids, _, _ := f.run(t, time.Second)
	if b := bids["top"]; b.W != 728 || b.H != 90 {
		t.Errorf("bid %+v", b)
	}
}

// TestBadAnswers: each bad answer leaves its endpoint without bids, with
// one log line and one counted reason, while a good endpoint beside it
// still wins its slot.
func TestBadAnswers(t *testing.T) {
	verifyNoLeaks(t)
	oversize := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"r","seatbid":[{"seat":"big","bid":[{"id":"x","impid":"side","price":9,"adm":"`)
		_, _ = w.Write(bytes.Repeat([]byte("a"), DefaultMaxBody))
		_, _ = io.WriteString(w, `"}]}]}`)
	}
	slowDrip := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, `{"id":"r","seatbid":[{"seat":"slow"`[i%10:i%10+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	tests := []struct {
		name    string
		h       func(http.ResponseWriter, *http.Request)
		outcome OutcomeKey
		level   string
		page    Outcome // the auction's: partial when the bad endpoint gave no usable answer
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad", 400) }, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, OutcomeKey{EndpointNoBid, ReasonNoContent}, "info", Completed},
		{"invalid json", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"id":"r","seatbid":[`) }, OutcomeKey{EndpointError, ReasonJSON}, "warn", Partial},
		{"oversize body", oversize, OutcomeKey{EndpointError, ReasonTooLarge}, "warn", Partial},
		{"connection error", func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, OutcomeKey{EndpointError, ReasonConnection}, "warn", Partial},
		{"slow drip", slowDrip, OutcomeKey{EndpointTimeout, ReasonSlowDrip}, "warn", Partial},
		{"no answer in time", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, OutcomeKey{EndpointTimeout, ReasonNoAnswer}, "warn", Partial},
		{"other currency", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"id":"r","cur":"EUR","seatbid":[{"seat":"eu","bid":[{"id":"e","impid":"side","price":5,"adm":"x"}]}]}`)
		}, OutcomeKey{EndpointError, ReasonCurrency}, "warn", Partial},
		{"no usable bid", answer(bid("z", "side", "0", "zero")), OutcomeKey{EndpointNoBid, ReasonEmpty}, "", Completed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			good := newEndpoint(t, answer(bid("g", "top", "1.00", "good")))
			bad := newEndpoint(t, tt.h)
			timeout := 300 * time.Millisecond
			if tt.name == "oversize body" {
				// Reading past the 1 MiB cap must not race the endpoint's
				// timeout: under -race on a loaded machine 300ms is not
				// always enough to move 1 MiB, which then ends as slow_drip.
				timeout = 2 * time.Second
			}
			f := newFixture(t, OpenRTBOptions{Endpoints: []Endpoint{{Name: "good"}, {Name: "bad", Timeout: timeout}}}, good, bad)
			bids, out, took := f.run(t, 8*time.Second)
			if out != tt.page || len(bids) != 1 || bids["top"].HbBidder != "good" {
				t.Fatalf("outcome %v, bids %+v; want %v with the good endpoint's bid alone", out, bids, tt.page)
			}
			// The slow handlers would hold the auction for 5s or up to its
			// 8s deadline; 3s leaves room for a loaded CI machine.
			if took > 3*time.Second {
				t.Errorf("took %v: the bad endpoint held the auction past its own 300ms timeout", took)
			}
			s := f.p.Stats().Snapshot()
			if got := s.Endpoints["bad"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{tt.outcome: 1}) {
				t.Errorf("bad endpoint outcomes %v, want %v once", got, tt.outcome)
			}
			lines := f.logs.FilterField(zap.String("endpoint", "bad")).All()
			wantLines := 1
			if tt.level == "" {
				wantLines = 0
			}
			if len(lines) != wantLines {
				t.Fatalf("%d log lines for the bad endpoint, want %d: %v", len(lines), wantLines, lines)
			}
			if wantLines == 1 && (lines[0].Level.String() != tt.level || lines[0].ContextMap()["reason"] != tt.outcome.Reason) {
				t.Errorf("log line %s %v", lines[0].Level, lines[0].ContextMap())
			}
			if n := len(f.logs.FilterField(zap.String("endpoint", "good")).All()); n != 0 {
				t.Errorf("%d log lines for the good endpoint", n)
			}
		})
	}
}

// Keep-alive connections are reused between auctions (the pool), and
// closed by Close.
func TestConnectionsPooled(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, answer(bid("x", "top", "1", "s")))
	f := newFixture(t, OpenRTBOptions{}, e)
	for range 5 {
		if bids, _, _ := f.run(t, time.Second); len(bids) != 1 {
			t.Fatalf("bids %v", bids)
		}
	}
	if n, _ := e.openConns(); n != 1 {
		t.Errorf("%d connections for 5 sequential auctions, want 1 kept alive", n)
	}
}

// TestBidderNumberDoesNotFillTheLogLine: encoding/json's error quotes a
// number of any length, so a bid endpoint answering with a 500 KB width
// put 500 KB of its bytes into the "answered badly" line. The line's
// error is bounded by telemetry.Text and still names the number.
func TestBidderNumberDoesNotFillTheLogLine(t *testing.T) {
	verifyNoLeaks(t)
	bad := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"r","seatbid":[{"seat":"s","bid":[{"id":"x","impid":"side","price":1,"adm":"a","w":3`+
			strings.Repeat("0", 500<<10)+`}]}]}`)
	})
	f := newFixture(t, OpenRTBOptions{Endpoints: []Endpoint{{Name: "bad", Timeout: 5 * time.Second}}}, bad)
	f.run(t, 8*time.Second)
	lines := f.logs.FilterField(zap.String("endpoint", "bad")).All()
	if len(lines) != 1 {
		t.Fatalf("%d log lines for the bad endpoint, want 1", len(lines))
	}
	msg, _ := lines[0].ContextMap()["error"].(string)
	if len(msg) > telemetry.MaxTextBytes+len("…") || !strings.Contains(msg, "cannot unmarshal number 3000") {
		t.Errorf("error of %d bytes (at most %d): %.120q", len(msg), telemetry.MaxTextBytes, msg)
	}
}
