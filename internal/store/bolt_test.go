package store

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openTestBolt(t *testing.T, c *clock) Store {
	t.Helper()
	s, err := OpenBolt(t.TempDir(), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBoltConformance runs the store suite on the embedded store.
func TestBoltConformance(t *testing.T) { runConformance(t, openTestBolt) }

// TestBoltKeepsEntriesAcrossRestart catches an embedded store that loses
// identities when the daemon restarts, or resets generations (so a CAS
// read before the restart could match a later write).
func TestBoltKeepsEntriesAcrossRestart(t *testing.T) {
	dir, c := t.TempDir(), newClock()
	s, err := OpenBolt(dir, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "ec:a", "kept", []byte("m"), time.Hour, Always)
	before, _ := mustGet(t, s, "ec:a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenBolt(dir, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, ok := mustGet(t, s, "ec:a")
	if !ok || string(e.Value) != "kept" || string(e.Meta) != "m" || e.Generation != before.Generation {
		t.Fatalf("after restart: %+v %v", e, ok)
	}
	mustSet(t, s, "ec:b", "x", nil, 0, Always)
	if b, _ := mustGet(t, s, "ec:b"); b.Generation <= before.Generation {
		t.Errorf("generation %d after restart, not above %d", b.Generation, before.Generation)
	}
}

// TestBoltSweepsExpiredEntries catches expired identities left in the
// file for ever: each write removes some that have expired.
func TestBoltSweepsExpiredEntries(t *testing.T) {
	c := newClock()
	s := openTestBolt(t, c).(*Bolt)
	for i := range 10 {
		mustSet(t, s, "ec:old"+string(rune('a'+i)), "v", nil, time.Minute, Always)
	}
	c.advance(2 * time.Minute)
	mustSet(t, s, "ec:new", "v", nil, time.Minute, Always)
	n := 0
	if err := s.db.View(func(tx *bolt.Tx) error { n = tx.Bucket(bucketEntries).Stats().KeyN; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d entries in the file after the sweep, want 1", n)
	}
	if got, _ := s.CountPrefix(context.Background(), "ec:", 100); got != 1 {
		t.Errorf("CountPrefix %d", got)
	}
}

// TestBoltSecondOpenFailsInTime catches a second daemon on the same data
// directory hanging at start on Bolt's file lock.
func TestBoltSecondOpenFailsInTime(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenBolt(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if s2, err := OpenBolt(dir, nil); err == nil {
		s2.Close()
		t.Fatal("a second open of a locked file succeeded")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the second open failed after %s", took)
	}
}

// BenchmarkStores: a Get and a conditional Set, each store.
func BenchmarkStores(b *testing.B) {
	c := newClock()
	bs, err := OpenBolt(b.TempDir(), c.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer bs.Close()
	stores := map[string]Store{"bolt": bs}
	if u := os.Getenv("SSATD_REDIS"); u != "" {
		rs, err := OpenRedis(RedisOptions{URL: u, Prefix: "ssatd-bench:"})
		if err != nil {
			b.Fatal(err)
		}
		defer rs.Close()
		stores["redis"] = rs
	}
	ctx := context.Background()
	for name, s := range stores {
		b.Run(name+"/Get", func(b *testing.B) {
			mustSetB(b, s)
			for b.Loop() {
				if _, ok, err := s.Get(ctx, "ec:bench"); err != nil || !ok {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/SetIfAbsentParallel", func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(16) // concurrent requests minting identities
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := "ec:par-" + strconv.FormatInt(n.Add(1), 10)
					if _, err := s.Set(ctx, k, []byte(`{"v":1}`), nil, time.Hour, IfAbsent); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(name+"/SetIfAbsent", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Set(ctx, "ec:bench-"+strconv.Itoa(i), []byte(`{"v":1}`), nil, time.Hour, IfAbsent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustSetB(b *testing.B, s Store) {
	if _, err := s.Set(context.Background(), "ec:bench", []byte("v"), nil, 0, Always); err != nil {
		b.Fatal(err)
	}
}
