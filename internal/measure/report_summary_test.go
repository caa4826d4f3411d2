package measure

import (
	"encoding/json"
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name                    string
		pages                   []PageResult
		wantMirror, wantOffload float64
		wantIdentity            float64
		wantOffloadRatio        float64
		wantIdentityRatio       float64
		wantEquivalent          bool
		wantTotalMirror         float64
	}{
		{
			name: "odd page count",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 10, ModeGzipToIdentity: 4, ModeIdentity: 2}),
				pageWith("b", map[string]float64{ModeGzipMirror: 20, ModeGzipToIdentity: 5, ModeIdentity: 1}),
				pageWith("c", map[string]float64{ModeGzipMirror: 40, ModeGzipToIdentity: 9, ModeIdentity: 3}),
			},
			wantMirror: 20, wantOffload: 5, wantIdentity: 2, wantOffloadRatio: 0.25, wantIdentityRatio: 0.1,
			wantEquivalent: true, wantTotalMirror: 70,
		},
		{
			name: "even page count, one failure",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 10, ModeGzipToIdentity: 2, ModeIdentity: 1}),
				pageWith("b", map[string]float64{ModeGzipMirror: 30, ModeGzipToIdentity: 6, ModeIdentity: 3}, "br_mirror: broken"),
			},
			wantMirror: 20, wantOffload: 4, wantIdentity: 2, wantOffloadRatio: 0.2, wantIdentityRatio: 0.1,
			wantEquivalent: false, wantTotalMirror: 40,
		},
		{
			name: "no gzip_mirror CPU: ratios are 0, not NaN",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 0, ModeGzipToIdentity: 2}),
			},
			wantMirror: 0, wantOffload: 2, wantIdentity: 1, wantOffloadRatio: 0, wantIdentityRatio: 0,
			wantEquivalent: true, wantTotalMirror: 0,
		},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.pages)
			if s.Pages != len(tt.pages) {
				t.Errorf("pages %d, want %d", s.Pages, len(tt.pages))
			}
			if !near(s.MedianCPUMS[ModeGzipMirror], tt.wantMirror) || !near(s.MedianCPUMS[ModeGzipToIdentity], tt.wantOffload) || !near(s.MedianCPUMS[ModeIdentity], tt.wantIdentity) {
				t.Errorf("medians %v", s.MedianCPUMS)
			}
			if !near(s.MedianWallMS[ModeGzipMirror], 2*tt.wantMirror) {
				t.Errorf("median wall %v", s.MedianWallMS)
			}
			if !near(s.OffloadCPURatio, tt.wantOffloadRatio) || !near(s.IdentityCPURatio, tt.wantIdentityRatio) {
				t.Errorf("ratios offload %v identity %v, want %v %v", s.OffloadCPURatio, s.IdentityCPURatio, tt.wantOffloadRatio, tt.wantIdentityRatio)
			}
			if s.AllEquivalent != tt.wantEquivalent || (len(s.Failures) == 0) != tt.wantEquivalent {
				t.Errorf("all equivalent %v, failures %q", s.AllEquivalent, s.Failures)
			}
			if !near(s.TotalCPUMS[ModeGzipMirror], tt.wantTotalMirror) {
				t.Errorf("total gzip_mirror CPU %v, want %v", s.TotalCPUMS[ModeGzipMirror], tt.wantTotalMirror)
			}
			n := int64(len(tt.pages))
			if s.TotalIdentityBytes != 100*n || s.TotalOriginBytes["br"] != 20*n || s.TotalDeliveredBytes["gzip"] != 28*n || s.TotalOutBytes[ModeBrMirror] != 10*n {
				t.Errorf("byte totals %+v", s)
			}
			if _, err := json.Marshal(s); err != nil {
				t.Errorf("summary does not marshal: %v", err)
			}
		})
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1285977: "1,285,977", -1234: "-1,234"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}
