package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is the embedded store: one file in the data directory, surviving
// restarts, for a single instance (or the demo). Entries live in one
// bucket; a second, ordered by expiry, lets each write remove a few
// expired entries, so the file does not grow with dead identities and
// no goroutine sweeps it.
type Bolt struct {
	db  *bolt.DB
	now func() time.Time
}

var (
	bucketEntries = []byte("entries")
	bucketExpiry  = []byte("expiry") // 8-byte big-endian expiry (unix ns) + key -> nil
)

// sweepPerWrite bounds the expired entries one write removes.
const sweepPerWrite = 16

// OpenBolt opens (creating) the database file dir/ssatd.db. now is the
// clock TTLs are measured on; nil is time.Now.
func OpenBolt(dir string, now func() time.Time) (*Bolt, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// A second process on the same file waits this long, then fails,
	// rather than blocking start-up for ever.
	db, err := bolt.Open(filepath.Join(dir, "ssatd.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Join(dir, "ssatd.db"), err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketEntries); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bucketExpiry)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("init %s: %w", db.Path(), err)
	}
	// A write waits at most this long for others to share its commit.
	db.MaxBatchDelay = 2 * time.Millisecond
	return &Bolt{db: db, now: now}, nil
}

// record is an entry as stored: expiry (unix ns, 0 for none), generation,
// the metadata's length (with 1<<31 set when there is metadata), the
// metadata, the value.
type record struct {
	expiry int64
	Entry
}

func (r record) encode() []byte {
	b := make([]byte, 20, 20+len(r.Meta)+len(r.Value))
	binary.BigEndian.PutUint64(b[0:], uint64(r.expiry))
	binary.BigEndian.PutUint64(b[8:], r.Generation)
	n := uint32(len(r.Meta))
	if r.Meta != nil {
		n |= 1 << 31
	}
	binary.BigEndian.PutUint32(b[16:], n)
	b = append(b, r.Meta...)
	return append(b, r.Value...)
}

func decodeRecord(b []byte) (record, error) {
	if len(b) < 20 {
		return record{}, errors.New("short record")
	}
	r := record{expiry: int64(binary.BigEndian.Uint64(b[0:]))}
	r.Generation = binary.BigEndian.Uint64(b[8:])
	n := binary.BigEndian.Uint32(b[16:])
	hasMeta := n&(1<<31) != 0
	n &^= 1 << 31
	if uint64(len(b)-20) < uint64(n) {
		return record{}, errors.New("short record")
	}
	if hasMeta {
		r.Meta = bytes.Clone(b[20 : 20+n])
	}
	r.Value = bytes.Clone(b[20+n:])
	return r, nil
}

func (r record) live(now time.Time) bool { return r.expiry == 0 || now.UnixNano() < r.expiry }

func expiryKey(expiry int64, key string) []byte {
	b := make([]byte, 8, 8+len(key))
	binary.BigEndian.PutUint64(b, uint64(expiry))
	return append(b, key...)
}

func unavailable(err error) error { return fmt.Errorf("%w: %w", ErrUnavailable, err) }

func (s *Bolt) Get(ctx context.Context, key string) (Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, false, err
	}
	var r record
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries).Get([]byte(key))
		if b == nil {
			return nil
		}
		var err error
		r, err = decodeRecord(b)
		found = err == nil && r.live(s.now())
		return err
	})
	if err != nil {
		return Entry{}, false, unavailable(err)
	}
	if !found {
		return Entry{}, false, nil
	}
	return r.Entry, true, nil
}

func (s *Bolt) Set(ctx context.Context, key string, value, meta []byte, ttl time.Duration, cond Cond) (bool, error) {
	if key == "" {
		return false, errors.New("store: empty key")
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	written := false
	// Batch commits concurrent writes together: one fsync for many, where
	// Update pays one each (about 3ms here). Bolt may run the function
	// again, alone, when another in its batch fails; it rereads the key.
	err := s.db.Batch(func(tx *bolt.Tx) error {
		written = false
		entries, exp := tx.Bucket(bucketEntries), tx.Bucket(bucketExpiry)
		now := s.now()
		var cur record
		exists := false
		if b := entries.Get([]byte(key)); b != nil {
			var err error
			if cur, err = decodeRecord(b); err != nil {
				return err
			}
			exists = cur.live(now)
		}
		switch {
		case cond.kind == 1 && exists,
			cond.kind == 2 && (!exists || cur.Generation != cond.gen):
			return nil
		}
		gen, err := entries.NextSequence()
		if err != nil {
			return err
		}
		r := record{Entry: Entry{Value: value, Meta: meta, Generation: gen}}
		if ttl > 0 {
			r.expiry = now.Add(ttl).UnixNano()
		}
		if cur.expiry != 0 {
			if err := exp.Delete(expiryKey(cur.expiry, key)); err != nil {
				return err
			}
		}
		if r.expiry != 0 {
			if err := exp.Put(expiryKey(r.expiry, key), nil); err != nil {
				return err
			}
		}
		if err := entries.Put([]byte(key), r.encode()); err != nil {
			return err
		}
		written = true
		return sweep(entries, exp, now)
	})
	if err != nil {
		return false, unavailable(err)
	}
	return written, nil
}

// sweep removes up to sweepPerWrite entries whose expiry has passed.
func sweep(entries, exp *bolt.Bucket, now time.Time) error {
	c := exp.Cursor()
	var dead [][]byte
	for k, _ := c.First(); k != nil && len(dead) < sweepPerWrite; k, _ = c.Next() {
		if int64(binary.BigEndian.Uint64(k[:8])) > now.UnixNano() {
			break
		}
		dead = append(dead, bytes.Clone(k))
	}
	for _, k := range dead {
		if err := exp.Delete(k); err != nil {
			return err
		}
		if err := entries.Delete(k[8:]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Bolt) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		entries := tx.Bucket(bucketEntries)
		if b := entries.Get([]byte(key)); b != nil {
			if r, err := decodeRecord(b); err == nil && r.expiry != 0 {
				if err := tx.Bucket(bucketExpiry).Delete(expiryKey(r.expiry, key)); err != nil {
					return err
				}
			}
		}
		return entries.Delete([]byte(key))
	})
	if err != nil {
		return unavailable(err)
	}
	return nil
}

func (s *Bolt) CountPrefix(ctx context.Context, prefix string, limit int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		now := s.now()
		c := tx.Bucket(bucketEntries).Cursor()
		for k, v := c.Seek([]byte(prefix)); k != nil && n < limit && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			if r, err := decodeRecord(v); err == nil && r.live(now) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, unavailable(err)
	}
	return n, nil
}

func (s *Bolt) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.View(func(*bolt.Tx) error { return nil }); err != nil {
		return unavailable(err)
	}
	return nil
}

func (s *Bolt) Close() error { return s.db.Close() }
