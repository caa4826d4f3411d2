// Package tcf decodes the core segment of an IAB Transparency and Consent
// Framework v2 consent string (the euconsent-v2 cookie): base64url text
// holding fixed-width bit fields, as laid out in the IAB Tech Lab
// "TCF v2.x Consent string and vendor list formats" specification.
//
// ssatd only needs to pass the string on and to know whether purpose 1
// (store and/or access information on a device) is granted; the decoder
// still reads the whole core segment, vendor sections included, so that a
// truncated or corrupt string is rejected rather than half-believed.
package tcf

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// CookieName is the cookie that carries the TCF v2 string.
const CookieName = "euconsent-v2"

// maxLen bounds the text decoded: real strings are a few hundred bytes,
// and the cookie comes from the client.
const maxLen = 8 << 10

// Consent is the decoded core segment.
type Consent struct {
	Version              int
	Created              time.Time
	LastUpdated          time.Time
	CmpID                int
	CmpVersion           int
	ConsentScreen        int
	ConsentLanguage      string // two upper-case letters
	VendorListVersion    int
	PolicyVersion        int
	IsServiceSpecific    bool
	UseNonStandardTexts  bool
	SpecialFeatureOptIns [12]bool // index 0 is special feature 1
	PurposesConsent      [24]bool // index 0 is purpose 1
	PurposesLI           [24]bool // legitimate interest transparency
	PurposeOneTreatment  bool
	PublisherCC          string
	VendorConsents       VendorSet // vendors with consent
	VendorLI             VendorSet // vendors with legitimate interest
}

// Purpose reports consent for purpose n (1-based).
func (c *Consent) Purpose(n int) bool {
	return n >= 1 && n <= len(c.PurposesConsent) && c.PurposesConsent[n-1]
}

// VendorSet is a set of vendor ids, kept as ranges: a hostile string can
// name 4095 ranges of 65535 ids each, which must not become 268M entries.
type VendorSet struct {
	MaxID  int
	ranges [][2]int
}

// Has reports whether id is in the set.
func (v VendorSet) Has(id int) bool {
	for _, rg := range v.ranges {
		if id >= rg[0] && id <= rg[1] {
			return true
		}
	}
	return false
}

func (v *VendorSet) add(lo, hi int) {
	if n := len(v.ranges); n > 0 && v.ranges[n-1][1] == lo-1 {
		v.ranges[n-1][1] = hi
		return
	}
	v.ranges = append(v.ranges, [2]int{lo, hi})
}

// ErrInvalid wraps every decoding failure.
var ErrInvalid = errors.New("invalid TCF v2 consent string")

// Decode reads the core segment of s (the part before the first '.').
func Decode(s string) (*Consent, error) {
	if len(s) > maxLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrInvalid, len(s))
	}
	core, _, _ := strings.Cut(s, ".")
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(core, "="))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	r := &bitReader{b: data}
	c := &Consent{}
	c.Version = r.int(6)
	if r.err == nil && c.Version != 2 {
		return nil, fmt.Errorf("%w: version %d, want 2", ErrInvalid, c.Version)
	}
	c.Created = r.deciseconds()
	c.LastUpdated = r.deciseconds()
	c.CmpID = r.int(12)
	c.CmpVersion = r.int(12)
	c.ConsentScreen = r.int(6)
	c.ConsentLanguage = r.letters()
	c.VendorListVersion = r.int(12)
	c.PolicyVersion = r.int(6)
	c.IsServiceSpecific = r.bool()
	c.UseNonStandardTexts = r.bool()
	for i := range c.SpecialFeatureOptIns {
		c.SpecialFeatureOptIns[i] = r.bool()
	}
	for i := range c.PurposesConsent {
		c.PurposesConsent[i] = r.bool()
	}
	for i := range c.PurposesLI {
		c.PurposesLI[i] = r.bool()
	}
	c.PurposeOneTreatment = r.bool()
	c.PublisherCC = r.letters()
	c.VendorConsents = r.vendors()
	c.VendorLI = r.vendors()
	r.publisherRestrictions()
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, r.err)
	}
	return c, nil
}

var errShort = errors.New("the core segment ends early")

// bitReader reads big-endian bit fields; after the first error every read
// returns zero, and err says why.
type bitReader struct {
	b   []byte
	pos int // in bits
	err error
}

func (r *bitReader) int(n int) int {
	if r.err != nil {
		return 0
	}
	if r.pos+n > len(r.b)*8 {
		r.err = errShort
		return 0
	}
	v := 0
	for range n {
		bit := r.b[r.pos/8] >> (7 - r.pos%8) & 1
		v = v<<1 | int(bit)
		r.pos++
	}
	return v
}

func (r *bitReader) bool() bool { return r.int(1) == 1 }

func (r *bitReader) deciseconds() time.Time {
	d := r.int(36)
	return time.UnixMilli(int64(d) * 100).UTC()
}

// letters reads two 6-bit letters, 0 being 'A'.
func (r *bitReader) letters() string {
	a, b := r.int(6), r.int(6)
	if r.err == nil && (a > 25 || b > 25) {
		r.err = fmt.Errorf("letter code %d, %d out of A-Z", a, b)
	}
	return string([]byte{byte('A' + a), byte('A' + b)})
}

// vendors reads a vendor section: MaxVendorId, IsRangeEncoding, then a bit
// field or a list of ids and ranges.
func (r *bitReader) vendors() VendorSet {
	v := VendorSet{MaxID: r.int(16)}
	if !r.bool() {
		for id := 1; id <= v.MaxID && r.err == nil; id++ {
			if r.bool() {
				v.add(id, id)
			}
		}
		return v
	}
	n := r.int(12)
	for range n {
		isRange := r.bool()
		start := r.int(16)
		end := start
		if isRange {
			end = r.int(16)
		}
		if r.err != nil {
			return v
		}
		if start < 1 || end < start || end > v.MaxID {
			r.err = fmt.Errorf("vendor range %d-%d outside 1-%d", start, end, v.MaxID)
			return v
		}
		v.add(start, end)
	}
	return v
}

// publisherRestrictions reads past the restriction entries, checking only
// that they are all there.
func (r *bitReader) publisherRestrictions() {
	n := r.int(12)
	for range n {
		r.int(6 + 2) // purpose id, restriction type
		entries := r.int(12)
		for range entries {
			if r.bool() {
				r.int(32)
			} else {
				r.int(16)
			}
		}
		if r.err != nil {
			return
		}
	}
}
