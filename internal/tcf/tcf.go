// Package tcf decodes the core segment of an IAB Transparency and Consent
// Framework v2 consent string (the euconsent-v2 cookie): base64url text
// holding fixed-width bit fields, as laid out in the IAB Tech Lab
// "TCF v2.x Consent string and vendor list formats" specification.
//
// ssatd only needs to pass the string on and to know whether purpose 1
// (store and/or access information on a device) is granted. The decoder
// reads the fixed fields of the core segment and requires the header of the
// vendor consent section after them (MaxVendorId and IsRangeEncoding, 230
// bits in all); it does not read the vendor sections or the publisher
// restrictions, which nothing in ssatd uses. Trusted Server's decoder
// accepts the same strings by the same rule: it requires those 230 bits and
// tolerates a vendor section that ends early
// (crates/trusted-server-core/src/consent/tcf.rs, decode_tc_string).
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
}

// Purpose reports consent for purpose n (1-based).
func (c *Consent) Purpose(n int) bool {
	return n >= 1 && n <= len(c.PurposesConsent) && c.PurposesConsent[n-1]
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
	r.int(16 + 1) // MaxVendorId and IsRangeEncoding of the vendor consents: present, not read
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
