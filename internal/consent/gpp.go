// Package consent reads the client's privacy signals (TCF v2, GPP,
// us_privacy, Sec-GPC) and decides, as Trusted Server does, whether the
// server-side auction may run and what the bid request's regs carry
// (upstream crates/trusted-server-core/src/consent/).
package consent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ssatd/ssatd/internal/tcf"
)

// GPP section ids (IAB Global Privacy Platform, "Section Information").
const (
	SectionTCFEUv2 = 2
	SectionUSPv1   = 6
	SectionUSNat   = 7
	SectionUSVA    = 9
	firstUSSection = 7
	lastUSSection  = 23
	// maxSectionID bounds the ids a header may list (the spec assigns
	// 1-23), so a crafted range cannot allocate without bound.
	maxSectionID = 255
)

// maxGPPLen bounds the text decoded, as upstream's MAX_GPP_STRING_LEN
// (consent/gpp.rs): the value comes from a client cookie.
const maxGPPLen = 8192

// ErrInvalidGPP wraps every GPP decoding failure.
var ErrInvalidGPP = errors.New("invalid GPP string")

// GPP is a decoded GPP string: the header's section ids and what ssatd
// reads of the sections.
type GPP struct {
	SectionIDs []int
	// Sections holds each section's encoded text by id.
	Sections map[int]string
	// TCF is the EU TCF v2 section (id 2), decoded; nil when absent or
	// undecodable.
	TCF *tcf.Consent
	// SaleOptOut is the US sections' sale opt-out: nil when no US section
	// (7-23) that ssatd decodes gives one; true when any does.
	SaleOptOut *bool
	// Problems are the sections that did not decode; the string as a
	// whole still counts.
	Problems []error
}

// DecodeGPP reads a GPP v1 string: a header, then one "~"-separated
// section per id in the header, in the header's order.
func DecodeGPP(s string) (*GPP, error) {
	if len(s) > maxGPPLen {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidGPP, len(s), maxGPPLen)
	}
	parts := strings.Split(s, "~")
	ids, err := decodeHeader(parts[0])
	if err != nil {
		return nil, err
	}
	if len(parts)-1 != len(ids) {
		return nil, fmt.Errorf("%w: header lists %d sections, string has %d", ErrInvalidGPP, len(ids), len(parts)-1)
	}
	g := &GPP{SectionIDs: ids, Sections: make(map[int]string, len(ids))}
	for i, id := range ids {
		g.Sections[id] = parts[i+1]
	}
	if sec, ok := g.Sections[SectionTCFEUv2]; ok {
		c, err := tcf.Decode(sec)
		if err != nil {
			g.Problems = append(g.Problems, fmt.Errorf("gpp section %d: %w", SectionTCFEUv2, err))
		} else {
			g.TCF = c
		}
	}
	g.readUSSections()
	return g, nil
}

// readUSSections: any decodable US section that says "opted out" wins,
// as upstream's decode_us_sale_opt_out (consent/gpp.rs).
func (g *GPP) readUSSections() {
	for _, id := range g.SectionIDs {
		if id < firstUSSection || id > lastUSSection {
			continue
		}
		out, known, err := saleOptOut(id, g.Sections[id])
		if err != nil {
			g.Problems = append(g.Problems, fmt.Errorf("gpp section %d: %w", id, err))
			continue
		}
		if !known {
			continue
		}
		if out || g.SaleOptOut == nil {
			g.SaleOptOut = &out
		}
		if out {
			return
		}
	}
}

// saleOptOutOffset is where the 2-bit SaleOptOut field of each decoded US
// section's core segment starts (GPP US National and US state technical
// specifications): after Version (6 bits) and the notice fields.
var saleOptOutOffset = map[int]int{
	SectionUSNat: 6 + 6*2, // SharingNotice .. SensitiveDataLimitUseNotice
	SectionUSVA:  6 + 3*2, // SharingNotice, SaleOptOutNotice, TargetedAdvertisingOptOutNotice
}

// saleOptOut reads a US section's SaleOptOut (1 opted out, 2 did not, 0
// not applicable). known is false for sections ssatd does not decode.
func saleOptOut(id int, sec string) (out, known bool, err error) {
	off, ok := saleOptOutOffset[id]
	if !ok {
		return false, false, nil
	}
	core, _, _ := strings.Cut(sec, ".")
	r, err := sixBits(core)
	if err != nil {
		return false, false, fmt.Errorf("%w: %w", ErrInvalidGPP, err)
	}
	if v := r.int(6); r.err == nil && v != 1 && !(id == SectionUSNat && v == 2) {
		return false, false, fmt.Errorf("%w: section version %d", ErrInvalidGPP, v)
	}
	r.pos = off
	v := r.int(2)
	if r.err != nil {
		return false, false, fmt.Errorf("%w: %w", ErrInvalidGPP, r.err)
	}
	switch v {
	case 1:
		return true, true, nil
	case 2:
		return false, true, nil
	}
	return false, false, nil
}

// decodeHeader reads the header section: Type (6 bits, 3), Version (6
// bits, 1) and the section ids as a Fibonacci-coded range list.
func decodeHeader(h string) ([]int, error) {
	r, err := sixBits(h)
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrInvalidGPP, err)
	}
	if t, v := r.int(6), r.int(6); r.err == nil && (t != 3 || v != 1) {
		return nil, fmt.Errorf("%w: header type %d version %d, want 3 and 1", ErrInvalidGPP, t, v)
	}
	n := r.int(12)
	var ids []int
	last := 0
	for i := 0; i < n && r.err == nil; i++ {
		isRange := r.int(1) == 1
		start := last + r.fib()
		end := start
		if isRange {
			end = start + r.fib()
		}
		if r.err == nil && end > maxSectionID {
			return nil, fmt.Errorf("%w: header section id %d, at most %d", ErrInvalidGPP, end, maxSectionID)
		}
		for id := start; id <= end && r.err == nil; id++ {
			ids = append(ids, id)
		}
		last = end
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrInvalidGPP, r.err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: no sections", ErrInvalidGPP)
	}
	return ids, nil
}

// ParseSID reads the __gpp_sid cookie ("2,6"); entries that are not
// numbers are skipped, as upstream's parse_gpp_sid_cookie. nil when none.
func ParseSID(s string) []int {
	var ids []int
	for _, f := range strings.Split(s, ",") {
		if id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 16); err == nil {
			ids = append(ids, int(id))
		}
	}
	return ids
}

var errShort = errors.New("ends early")

// sixBits reads s as GPP encodes bit fields: each base64url character is
// six bits, with no padding and any length (so not through
// encoding/base64, which drops a final partial byte).
func sixBits(s string) (bits, error) {
	b := make([]byte, (len(s)*6+7)/8)
	for i := 0; i < len(s); i++ {
		v := strings.IndexByte(base64URL, s[i])
		if v < 0 {
			return bits{}, fmt.Errorf("character %q at %d is not base64url", s[i], i)
		}
		for k := 0; k < 6; k++ {
			if v>>(5-k)&1 == 1 {
				p := i*6 + k
				b[p/8] |= 1 << (7 - p%8)
			}
		}
	}
	return bits{b: b, n: len(s) * 6}, nil
}

const base64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// bits reads big-endian bit fields.
type bits struct {
	b   []byte
	n   int // bits in b
	pos int
	err error
}

func (r *bits) int(n int) int {
	v := 0
	for ; n > 0; n-- {
		if r.pos >= r.n {
			r.err = errShort
			return 0
		}
		v = v<<1 | int(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

// fib reads a Fibonacci-coded integer: a 1 bit adds F(i+2) (1, 2, 3,
// 5, ...), and two 1 bits in a row end it.
func (r *bits) fib() int {
	sum, a, b, prev := 0, 1, 2, 0
	for i := 0; i < 24; i++ {
		bit := r.int(1)
		if r.err != nil {
			return 0
		}
		if bit == 1 && prev == 1 {
			return sum
		}
		if bit == 1 {
			sum += a
		}
		prev = bit
		a, b = b, a+b
	}
	r.err = errors.New("fibonacci integer too long")
	return 0
}
