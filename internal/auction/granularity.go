package auction

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Granularity is one of Prebid's published price granularities: the price
// buckets that hb_pb reports. Each bucket runs from the previous one's max
// (exclusive of nothing: a price equal to a bucket's max belongs to it) and
// floors the price to its increment; prices above the last max are capped.
type Granularity struct {
	name    string
	buckets []bucket // ascending max; amounts in cents
}

type bucket struct{ max, increment int64 }

// The granularities Prebid.js and Prebid Server define, in cents: the one
// list of them, which configuration checks too (GranularityNames).
var granularities = []Granularity{
	{"low", []bucket{{500, 50}}},
	{"medium", []bucket{{2000, 10}}},
	{"high", []bucket{{2000, 1}}},
	{"dense", []bucket{{300, 1}, {800, 5}, {2000, 50}}},
	{"auto", []bucket{{500, 5}, {1000, 10}, {2000, 50}}},
}

// DefaultGranularity is dense: cent steps up to 3.00, where most display
// prices fall, and coarser steps above.
const DefaultGranularity = "dense"

// GranularityNames lists the accepted names, for configuration checks.
func GranularityNames() []string {
	names := make([]string, len(granularities))
	for i, g := range granularities {
		names[i] = g.name
	}
	return names
}

// ParseGranularity returns the named granularity.
func ParseGranularity(name string) (Granularity, error) {
	for _, g := range granularities {
		if g.name == name {
			return g, nil
		}
	}
	return Granularity{}, fmt.Errorf("unknown price granularity %q (want one of %q)", name, GranularityNames())
}

// Name is the granularity's configuration name.
func (g Granularity) Name() string { return g.name }

// Bucket returns hb_pb for a price given as a positive exact rational.
//
// The price is floored to whole cents first. Every bucket edge and
// increment is a whole number of cents, so for integer n
// floor((p-min)/inc) = floor((floor(100p)-100min)/(100inc)) and flooring
// first changes no result; it lets the rest be integer arithmetic, with no
// binary floating point anywhere (0.29 stays "0.29").
func (g Granularity) Bucket(price *big.Rat) string {
	cents := centsFloor(price)
	floor := int64(0)
	for _, b := range g.buckets {
		if cents <= b.max {
			return formatCents(floor + (cents-floor)/b.increment*b.increment)
		}
		floor = b.max
	}
	return formatCents(g.buckets[len(g.buckets)-1].max)
}

// centsFloor is floor(100*price), saturated so that absurd prices cannot
// overflow: they are capped by the last bucket anyway.
func centsFloor(price *big.Rat) int64 {
	if price.Sign() <= 0 {
		return 0
	}
	n := new(big.Int).Mul(price.Num(), big.NewInt(100))
	n.Quo(n, price.Denom()) // both positive: Quo truncates, which is floor
	if !n.IsInt64() || n.Int64() > 1<<40 {
		return 1 << 40
	}
	return n.Int64()
}

func formatCents(c int64) string {
	frac := c % 100
	s := strconv.FormatInt(c/100, 10) + "."
	if frac < 10 {
		s += "0"
	}
	return s + strconv.FormatInt(frac, 10)
}

// ParsePrice reads an OpenRTB price (a JSON number as sent) exactly. The
// exponent is bounded because big.Rat would otherwise build 10^n for any n
// an endpoint sends ("1e999999999").
func ParsePrice(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 64 || strings.Trim(s, "0123456789.eE+-") != "" {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 30 || e < -30 {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}
