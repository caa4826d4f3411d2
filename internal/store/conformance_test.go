package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// clock is a test clock both stores measure TTLs on.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// opener opens a fresh, empty store on the clock.
type opener func(t *testing.T, c *clock) Store

// runConformance is the one suite every Store passes: what the identity
// graph relies on (ec/kv_backend.rs:20-116, ec/kv.rs's CAS loops).
func runConformance(t *testing.T, open opener) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s Store, c *clock)
	}{
		{"MissingKeyIsAbsent", testMissing},
		{"SetThenGetRoundTrips", testRoundTrip},
		{"EveryWriteIsANewGeneration", testGenerations},
		{"IfAbsentWritesOnlyAMissingKey", testIfAbsent},
		{"IfGenerationIsCompareAndSwap", testIfGeneration},
		{"DeletedKeyDoesNotMatchItsOldGeneration", testDeleteGeneration},
		{"ExpiredEntryIsAbsentEverywhere", testTTL},
		{"CountPrefixCountsLiveKeysUpToTheLimit", testCountPrefix},
		{"ConcurrentCompareAndSwapLosesNoUpdate", testConcurrentCAS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			s := open(t, c)
			tc.run(t, s, c)
		})
	}
}

func mustSet(t *testing.T, s Store, key, value string, meta []byte, ttl time.Duration, cond Cond) bool {
	t.Helper()
	ok, err := s.Set(context.Background(), key, []byte(value), meta, ttl, cond)
	if err != nil {
		t.Fatalf("Set %q: %v", key, err)
	}
	return ok
}

func mustGet(t *testing.T, s Store, key string) (Entry, bool) {
	t.Helper()
	e, ok, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	return e, ok
}

func testMissing(t *testing.T, s Store, _ *clock) {
	if _, ok := mustGet(t, s, "ec:none"); ok {
		t.Error("a key never written is present")
	}
	if err := s.Delete(context.Background(), "ec:none"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
}

func testRoundTrip(t *testing.T, s Store, _ *clock) {
	value := "\x00\xff{\"v\":1}\n" // not UTF-8, with a NUL
	if !mustSet(t, s, "ec:a", value, []byte(`{"m":1}`), 0, Always) {
		t.Fatal("unconditional write not written")
	}
	e, ok := mustGet(t, s, "ec:a")
	if !ok || string(e.Value) != value || string(e.Meta) != `{"m":1}` || e.Generation == 0 {
		t.Fatalf("got %+v %v", e, ok)
	}
	mustSet(t, s, "ec:b", "", nil, 0, Always)
	if e, ok := mustGet(t, s, "ec:b"); !ok || len(e.Value) != 0 || e.Meta != nil {
		t.Errorf("empty value without metadata: %+v %v", e, ok)
	}
	mustSet(t, s, "ec:c", "x", []byte{}, 0, Always)
	if e, _ := mustGet(t, s, "ec:c"); e.Meta == nil {
		t.Error("empty metadata read back as none")
	}
}

func testGenerations(t *testing.T, s Store, _ *clock) {
	mustSet(t, s, "ec:a", "1", nil, 0, Always)
	first, _ := mustGet(t, s, "ec:a")
	mustSet(t, s, "ec:a", "2", nil, 0, Always)
	second, _ := mustGet(t, s, "ec:a")
	if second.Generation <= first.Generation || string(second.Value) != "2" {
		t.Errorf("generations %d then %d", first.Generation, second.Generation)
	}
}

func testIfAbsent(t *testing.T, s Store, _ *clock) {
	if !mustSet(t, s, "ec:a", "first", nil, 0, IfAbsent) {
		t.Fatal("IfAbsent on a missing key not written")
	}
	if mustSet(t, s, "ec:a", "second", nil, 0, IfAbsent) {
		t.Error("IfAbsent overwrote a key")
	}
	if e, _ := mustGet(t, s, "ec:a"); string(e.Value) != "first" {
		t.Errorf("value %q", e.Value)
	}
}

func testIfGeneration(t *testing.T, s Store, _ *clock) {
	if mustSet(t, s, "ec:a", "x", nil, 0, IfGeneration(1)) {
		t.Error("IfGeneration wrote a missing key")
	}
	mustSet(t, s, "ec:a", "1", nil, 0, Always)
	e, _ := mustGet(t, s, "ec:a")
	if !mustSet(t, s, "ec:a", "2", nil, 0, IfGeneration(e.Generation)) {
		t.Fatal("IfGeneration at the current generation not written")
	}
	if mustSet(t, s, "ec:a", "3", nil, 0, IfGeneration(e.Generation)) {
		t.Error("IfGeneration at a stale generation written")
	}
	if e, _ := mustGet(t, s, "ec:a"); string(e.Value) != "2" {
		t.Errorf("value %q, want 2", e.Value)
	}
}

func testDeleteGeneration(t *testing.T, s Store, _ *clock) {
	mustSet(t, s, "ec:a", "1", nil, 0, Always)
	old, _ := mustGet(t, s, "ec:a")
	if err := s.Delete(context.Background(), "ec:a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, s, "ec:a"); ok {
		t.Fatal("deleted key present")
	}
	mustSet(t, s, "ec:a", "again", nil, 0, Always)
	if mustSet(t, s, "ec:a", "stale", nil, 0, IfGeneration(old.Generation)) {
		t.Error("a generation read before the delete matched the key written again")
	}
}

func testTTL(t *testing.T, s Store, c *clock) {
	mustSet(t, s, "ec:a", "1", nil, time.Hour, Always)
	mustSet(t, s, "ec:b", "1", nil, 0, Always)
	c.advance(59 * time.Minute)
	if _, ok := mustGet(t, s, "ec:a"); !ok {
		t.Fatal("entry gone before its TTL")
	}
	c.advance(2 * time.Minute)
	if _, ok := mustGet(t, s, "ec:a"); ok {
		t.Error("entry present after its TTL")
	}
	if n, err := s.CountPrefix(context.Background(), "ec:", 10); err != nil || n != 1 {
		t.Errorf("CountPrefix counted %d (%v), want the one live key", n, err)
	}
	if mustSet(t, s, "ec:a", "x", nil, 0, IfGeneration(1)) {
		t.Error("IfGeneration matched an expired entry")
	}
	if !mustSet(t, s, "ec:a", "2", nil, time.Hour, IfAbsent) {
		t.Error("IfAbsent refused an expired key")
	}
	if e, ok := mustGet(t, s, "ec:a"); !ok || string(e.Value) != "2" {
		t.Errorf("rewritten expired key: %+v %v", e, ok)
	}
}

func testCountPrefix(t *testing.T, s Store, _ *clock) {
	for _, k := range []string{"ec:aa1", "ec:aa2", "ec:ab1", "other", "x*1", "xy", "x\\?"} {
		mustSet(t, s, k, "v", nil, 0, Always)
	}
	for _, tc := range []struct {
		prefix string
		limit  int
		want   int
	}{
		{"ec:aa", 10, 2}, {"ec:a", 10, 3}, {"ec:a", 2, 2}, {"ec:", 1, 1}, {"none", 10, 0},
		{"x*", 10, 1}, {"x\\", 10, 1}, {"x", 10, 3},
	} {
		n, err := s.CountPrefix(context.Background(), tc.prefix, tc.limit)
		if err != nil || n != tc.want {
			t.Errorf("CountPrefix(%q, %d) = %d, %v; want %d", tc.prefix, tc.limit, n, err, tc.want)
		}
	}
}

// testConcurrentCAS: writers that read, add one and write back at the
// generation they read, retrying on a conflict, lose no increment: the
// identity graph's partner-id upserts are such loops (ec/kv.rs:397-566).
func testConcurrentCAS(t *testing.T, s Store, _ *clock) {
	const writers, each = 6, 15
	mustSet(t, s, "ec:n", "0", nil, 0, Always)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range each {
				if err := increment(s, "ec:n"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if e, _ := mustGet(t, s, "ec:n"); string(e.Value) != strconv.Itoa(writers*each) {
		t.Errorf("counter %s, want %d", e.Value, writers*each)
	}
}

func increment(s Store, key string) error {
	ctx := context.Background()
	for range 1000 {
		e, ok, err := s.Get(ctx, key)
		if err != nil || !ok {
			return fmt.Errorf("get: %v %v", ok, err)
		}
		n, _ := strconv.Atoi(string(e.Value))
		written, err := s.Set(ctx, key, []byte(strconv.Itoa(n+1)), nil, 0, IfGeneration(e.Generation))
		if err != nil {
			return err
		}
		if written {
			return nil
		}
	}
	return errors.New("no write in 1000 attempts")
}

// checkUnavailable: an operation on a store that is down fails with
// ErrUnavailable, in time.
func checkUnavailable(t *testing.T, s Store, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err := s.Get(ctx, "ec:a")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Get on a store that is down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Set(ctx, "ec:a", []byte("v"), nil, 0, Always); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Set on a store that is down: %v", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping on a store that is down: %v", err)
	}
	if took := time.Since(start); took > within {
		t.Errorf("three failed operations took %s, over %s", took, within)
	}
}
