// Package store is the key-value store with TTLs that identity state
// lives in: an embedded database for one instance (Bolt), or Redis for
// several sharing it. Its operations are those Trusted Server's edge-cookie
// identity graph asks of its KV store (IABTechLab/trusted-server
// crates/trusted-server-core/src/ec/kv_backend.rs:20-116): a lookup that
// returns the entry's metadata and a generation, a write that may require
// the key to be absent or at a generation (compare-and-swap), a count of
// keys by prefix, and a delete.
package store

import (
	"context"
	"errors"
	"time"
)

// Entry is a stored value (EcKvLookup, kv_backend.rs:20-29).
type Entry struct {
	Value []byte
	Meta  []byte // nil when written without metadata
	// Generation changes with every write of the key, and is never
	// reused by the store: a compare-and-swap on it cannot succeed on a
	// key deleted and written again since it was read.
	Generation uint64
}

// Cond is a write's precondition (EcKvWriteMode, kv_backend.rs:44-54).
type Cond struct {
	kind uint8
	gen  uint64
}

var (
	// Always overwrites whatever is stored.
	Always = Cond{}
	// IfAbsent writes only a key that does not exist (or has expired).
	IfAbsent = Cond{kind: 1}
)

// IfGeneration writes only when the key is stored at generation gen.
func IfGeneration(gen uint64) Cond { return Cond{kind: 2, gen: gen} }

// ErrUnavailable wraps every failure of the store itself (a connection
// refused, a timeout, a closed database), as upstream's KvStore error
// (error.rs:57, 503): the caller serves the page and degrades identity.
var ErrUnavailable = errors.New("store unavailable")

// Store is the key-value store. Keys are non-empty strings; a TTL of zero
// keeps the entry until it is deleted. An expired entry is absent for
// every operation.
type Store interface {
	// Get returns the entry of key; ok is false when there is none.
	Get(ctx context.Context, key string) (e Entry, ok bool, err error)
	// Set writes value and meta under key for ttl when cond holds;
	// written is false, with no error, when it does not
	// (EcKvWriteOutcome, kv_backend.rs:56-65).
	Set(ctx context.Context, key string, value, meta []byte, ttl time.Duration, cond Cond) (written bool, err error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// CountPrefix counts the live keys that start with prefix, up to
	// limit (count_keys_with_prefix, kv_backend.rs:99-108).
	CountPrefix(ctx context.Context, prefix string, limit int) (int, error)
	// Ping checks that the store answers (readiness).
	Ping(ctx context.Context) error
	Close() error
}
