package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// TestClientOverItsShareIsRefusedWhileOthersAreAdmitted: one client could
// take every place of a gate. Now it holds at most its share (6 of 8): its
// next request is refused 429, not 503, while another client still gets
// one of the places left, and a released client is forgotten.
func TestClientOverItsShareIsRefusedWhileOthersAreAdmitted(t *testing.T) {
	ctx := context.Background()
	gate := newRequestGate(8, time.Second)
	shares := newClientShares(8, time.Second, "requests")
	hog, other := netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/64")
	now := time.Now() // a deadline already reached: a full gate refuses at once
	var held []*pageSlot
	for range clientShare(8) {
		s, err := admitShared(ctx, shares, gate, hog, now)
		if err != nil {
			t.Fatalf("place %d of the share: %v", len(held)+1, err)
		}
		held = append(held, s)
	}
	_, err := admitShared(ctx, shares, gate, hog, now)
	var ge *guestError
	if !errors.As(err, &ge) || ge.status != http.StatusTooManyRequests || ge.reason != reasonClientShare || ge.retryAfter != 1 {
		t.Fatalf("the client over its share: %v, want 429 client_share_exceeded with Retry-After", err)
	}
	s, err := admitShared(ctx, shares, gate, other, now)
	if err != nil {
		t.Fatalf("another client: %v, want a place", err)
	}
	s.release()
	for _, h := range held {
		h.release()
		h.release() // once only
	}
	if n := len(shares.clients); n != 0 || gate.taken != 0 {
		t.Errorf("after every release: %d clients remembered, %d places taken; want none", n, gate.taken)
	}
	if newClientShares(3, time.Second, "pages") != nil {
		t.Error("a gate of 3 places is shared; it has no quarter to keep")
	}
}

// TestClientKeyGroupsIPv6By64: the client a request counts against is
// its IPv4 address, or its IPv6 /64 (a host is usually given a /64);
// an IPv4-mapped address is its IPv4 one.
func TestClientKeyGroupsIPv6By64(t *testing.T) {
	e := newEnv(t, http.NotFoundHandler())
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:1234", "192.0.2.7/32"},
		{"[::ffff:192.0.2.7]:1234", "192.0.2.7/32"},
		{"[2001:db8:1:2:aaaa::1]:1234", "2001:db8:1:2::/64"},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://www.pub.example/", nil)
		r.RemoteAddr = tc.remote
		x := &exchange{prepared: prepared{view: e.guest.hosts.view(r)}}
		if got := e.guest.clientKey(r, x); got.String() != tc.want {
			t.Errorf("%s: client %s, want %s", tc.remote, got, tc.want)
		}
	}
}
