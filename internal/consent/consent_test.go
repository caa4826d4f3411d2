package consent

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// bitw writes fields as the IAB specifications lay them out, so each test
// string states what it encodes. It shares nothing with the decoder.
type bitw struct{ bits []byte }

func (w *bitw) put(v, n int) *bitw {
	for i := n - 1; i >= 0; i-- {
		w.bits = append(w.bits, byte(v>>i&1))
	}
	return w
}

// fib writes v in Fibonacci coding: one bit per Fibonacci number 1, 2, 3,
// 5, ... (greedy from the largest), then a closing 1.
func (w *bitw) fib(v int) *bitw {
	fibs := []int{1, 2}
	for fibs[len(fibs)-1] <= v {
		fibs = append(fibs, fibs[len(fibs)-1]+fibs[len(fibs)-2])
	}
	code := make([]byte, len(fibs))
	for i := len(fibs) - 1; i >= 0; i-- {
		if fibs[i] <= v {
			v -= fibs[i]
			code[i] = 1
		}
	}
	for len(code) > 1 && code[len(code)-1] == 0 {
		code = code[:len(code)-1]
	}
	w.bits = append(w.bits, code...)
	w.bits = append(w.bits, 1)
	return w
}

// String pads to whole bytes and encodes base64url without padding, as
// CMPs do (upstream's literal "DBABTA" is 30 header bits so padded).
func (w *bitw) String() string {
	out := make([]byte, (len(w.bits)+7)/8)
	for i, b := range w.bits {
		out[i/8] |= b << (7 - i%8)
	}
	return base64.RawURLEncoding.EncodeToString(out)
}

// header is a GPP header listing ids one by one (no ranges).
func header(ids ...int) string {
	w := (&bitw{}).put(3, 6).put(1, 6).put(len(ids), 12)
	last := 0
	for _, id := range ids {
		w.put(0, 1).fib(id - last)
		last = id
	}
	return w.String()
}

// tcString is a TCF v2 core segment, last updated at t, with consent for
// the given purposes and no vendors (TCF v2.2 "TC String" core fields).
func tcString(t time.Time, purposes ...int) string {
	ds := int(t.UnixMilli() / 100)
	w := (&bitw{}).put(2, 6).put(ds, 36).put(ds, 36).put(7, 12).put(1, 12).put(1, 6).
		put('E'-'A', 6).put('N'-'A', 6).put(150, 12).put(4, 6).put(0, 1).put(0, 1).put(0, 12)
	for p := 1; p <= 24; p++ {
		b := 0
		if slices.Contains(purposes, p) {
			b = 1
		}
		w.put(b, 1)
	}
	w.put(0, 24).put(0, 1).put('D'-'A', 6).put('E'-'A', 6)
	w.put(0, 16).put(0, 1).put(0, 16).put(0, 1).put(0, 12)
	return w.String()
}

// usNat is a US National section core (GPP US National, version 1) with
// the given SaleOptOut (1 opted out, 2 not, 0 not applicable).
func usNat(saleOptOut int) string {
	w := (&bitw{}).put(1, 6)
	for i := 0; i < 6; i++ { // the six notices: provided
		w.put(1, 2)
	}
	w.put(saleOptOut, 2).put(2, 2).put(2, 2).put(0, 2*12).put(0, 2*2).put(0, 2).put(2, 2).put(2, 2).put(2, 2)
	return w.String()
}

var updated = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func TestDecodeGPP(t *testing.T) {
	tests := []struct {
		name    string
		s       string
		ids     []int
		tcfP1   *bool // nil: no TCF section decoded
		optOut  *bool
		invalid bool
	}{
		// Upstream's vectors (crates/trusted-server-core/src/consent/gpp.rs tests).
		{name: "upstream usp only", s: "DBABTA~1YNN", ids: []int{6}},
		{name: "upstream tcf and usp", s: "DBACNY~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN", ids: []int{2, 6}, tcfP1: ptr(false)},
		{name: "upstream usnat not opted out", s: "DBABLA~BVQqAAAAAgA.QA", ids: []int{7}, optOut: ptr(false)},
		{name: "upstream usnat then usva opted out", s: header(7, 9) + "~BVQqAAAAAgA.QA~BVVVVVVVVWA.AA", ids: []int{7, 9}, optOut: ptr(true)},
		{name: "upstream usnat and usva not opted out", s: header(7, 9) + "~BVQqAAAAAgA.QA~BVgVVVVVVWA.AA", ids: []int{7, 9}, optOut: ptr(false)},
		{name: "opt-out wins over an undecodable section", s: header(7, 9) + "~!!~BVVVVVVVVWA.AA", ids: []int{7, 9}, optOut: ptr(true)},
		// Built from the specifications.
		{name: "header encoder matches upstream", s: header(2, 6) + "~" + tcString(updated, 1) + "~1YNN", ids: []int{2, 6}, tcfP1: ptr(true)},
		{name: "tcf without purpose 1", s: header(2) + "~" + tcString(updated, 2, 3), ids: []int{2}, tcfP1: ptr(false)},
		{name: "usnat opted out", s: header(7) + "~" + usNat(1), ids: []int{7}, optOut: ptr(true)},
		{name: "usnat not applicable", s: header(7) + "~" + usNat(0), ids: []int{7}},
		{name: "range of ids", s: (&bitw{}).put(3, 6).put(1, 6).put(1, 12).put(1, 1).fib(7).fib(2).String() + "~" + usNat(2) + "~a~b", ids: []int{7, 8, 9}, optOut: ptr(false)},
		{name: "section count differs from header", s: header(2, 6) + "~" + tcString(updated, 1), invalid: true},
		{name: "not base64", s: "D*BA~x", invalid: true},
		{name: "wrong header type", s: (&bitw{}).put(2, 6).put(1, 6).put(0, 12).String(), invalid: true},
		{name: "empty", s: "", invalid: true},
		{name: "too long", s: "DBABTA~" + strings.Repeat("A", maxGPPLen), invalid: true},
		{name: "header cut short", s: "DBAB~x", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := DecodeGPP(tt.s)
			if tt.invalid {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", g)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g.SectionIDs, tt.ids) {
				t.Errorf("ids %v, want %v", g.SectionIDs, tt.ids)
			}
			switch {
			case tt.tcfP1 == nil && g.TCF != nil:
				t.Errorf("decoded a TCF section %+v, want none", g.TCF)
			case tt.tcfP1 != nil && g.TCF == nil:
				t.Errorf("no TCF section decoded (%v)", g.Problems)
			case tt.tcfP1 != nil && g.TCF.Purpose(1) != *tt.tcfP1:
				t.Errorf("purpose 1 = %v, want %v", g.TCF.Purpose(1), *tt.tcfP1)
			}
			if !reflect.DeepEqual(g.SaleOptOut, tt.optOut) {
				t.Errorf("sale opt-out %v, want %v", deref(g.SaleOptOut), deref(tt.optOut))
			}
		})
	}
}

// TestHeaderEncoderMatchesUpstream pins the test's encoder to upstream's
// literal headers, so the built strings are the spec's. CMPs differ only
// in the zero padding at the end ("DBACNY" pads to 6 bits, "DBABTA" to 8).
func TestHeaderEncoderMatchesUpstream(t *testing.T) {
	for want, ids := range map[string][]int{"DBABTA": {6}, "DBACNY": {2, 6}, "DBABLA": {7}} {
		if got := header(ids...); strings.TrimRight(got, "A") != strings.TrimRight(want, "A") {
			t.Errorf("header(%v) = %q, upstream %q", ids, got, want)
		}
	}
}

func TestParseSID(t *testing.T) {
	for in, want := range map[string][]int{"2,6": {2, 6}, " 2 , 6 , 8 ": {2, 6, 8}, "2,abc,6": {2, 6}, "": nil, "abc": nil, "-1,70000": nil} {
		if got := ParseSID(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSID(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestDecodeUSPrivacy(t *testing.T) {
	for in, want := range map[string]string{"1YNN": "1YNN", "1yyn": "1YYN", "1---": "1---", "1YN": "", "2YNN": "", "1YXN": "", "": ""} {
		u, err := DecodeUSPrivacy(in)
		if want == "" {
			if err == nil {
				t.Errorf("DecodeUSPrivacy(%q) = %v, want an error", in, u)
			}
			continue
		}
		if err != nil || u.String() != want {
			t.Errorf("DecodeUSPrivacy(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

func TestJurisdiction(t *testing.T) {
	tests := []struct {
		country, region string
		want            Jurisdiction
	}{
		{"", "", JurisdictionUnknown},
		{"DE", "", JurisdictionGDPR},
		{"gb", "", JurisdictionGDPR},
		{"NO", "", JurisdictionGDPR},
		{"US", "CA", "US-CA"},
		{"US", "de", "US-DE"},
		{"US", "NY", JurisdictionNonRegulated},
		{"US", "", JurisdictionNonRegulated},
		{"JP", "", JurisdictionNonRegulated},
	}
	for _, tt := range tests {
		if got := JurisdictionOf(tt.country, tt.region); got != tt.want {
			t.Errorf("JurisdictionOf(%q, %q) = %q, want %q", tt.country, tt.region, got, tt.want)
		}
	}
	for _, bad := range []string{"EU", "US-", "US-CAL", "gdpr2"} {
		if _, err := ParseJurisdiction(bad); err == nil {
			t.Errorf("ParseJurisdiction(%q) accepted", bad)
		}
	}
	if j, err := ParseJurisdiction("us-ca"); err != nil || j != "US-CA" {
		t.Errorf("ParseJurisdiction(us-ca) = %q, %v", j, err)
	}
}

func ptr(b bool) *bool { return &b }

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// request builds a page request with the given cookies and Sec-GPC.
func request(gpc bool, cookies ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for i := 0; i+1 < len(cookies); i += 2 {
		r.AddCookie(&http.Cookie{Name: cookies[i], Value: cookies[i+1]})
	}
	if gpc {
		r.Header.Set(HeaderGPC, "1")
	}
	return r
}
