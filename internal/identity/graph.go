package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ssatd/ssatd/internal/store"
)

// Upstream's TTLs (ec/kv.rs:37-40): a live entry lasts as long as the
// cookie, a withdrawal's tombstone a day.
const (
	entryTTL     = 365 * 24 * time.Hour
	tombstoneTTL = 24 * time.Hour
	casRetries   = 5 // kv.rs MAX_CAS_RETRIES
	maxUIDLength = 512
)

// entry is the identity graph's value as upstream stores it, schema 1
// (ec/kv_types.rs:42-110); the fields ssatd does not fill are left out as
// upstream omits empty ones.
type entry struct {
	V             uint8                 `json:"v"`
	Created       int64                 `json:"created"`
	Consent       entryConsent          `json:"consent"`
	Geo           entryGeo              `json:"geo"`
	PubProperties *pubProperties        `json:"pub_properties,omitempty"`
	IDs           map[string]partnerUID `json:"ids,omitempty"`
}

type entryConsent struct {
	TCF     string `json:"tcf,omitempty"`
	GPP     string `json:"gpp,omitempty"`
	OK      bool   `json:"ok"`
	Updated int64  `json:"updated"`
}

type entryGeo struct {
	Country string `json:"country"`
	Region  string `json:"region,omitempty"`
}

type pubProperties struct {
	OriginDomain string   `json:"origin_domain"`
	SeenDomains  []string `json:"seen_domains,omitempty"`
}

type partnerUID struct {
	UID string `json:"uid"`
}

// graph is the identity graph over the store.
type graph struct {
	st  store.Store
	now func() time.Time
}

// create writes a new live entry for id (create_or_revive, kv.rs:300-340):
// an id that exists is left as it is.
func (g graph) create(ctx context.Context, id string, e entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode entry: %w", err)
	}
	_, err = g.st.Set(ctx, id, b, nil, entryTTL, store.IfAbsent)
	return err
}

// get reads id's entry; ok is false when there is none.
func (g graph) get(ctx context.Context, id string) (e entry, gen uint64, ok bool, err error) {
	se, ok, err := g.st.Get(ctx, id)
	if err != nil || !ok {
		return entry{}, 0, false, err
	}
	if err := json.Unmarshal(se.Value, &e); err != nil {
		return entry{}, 0, false, fmt.Errorf("decode entry %s: %w", logID(id), err)
	}
	return e, se.Generation, true, nil
}

// tombstone marks id withdrawn for a day: its partner ids go, and
// batch-sync and identify see consent withdrawn (kv.rs
// write_withdrawal_tombstone).
func (g graph) tombstone(ctx context.Context, id string) error {
	now := g.now().Unix()
	e := entry{V: 1, Created: now, Consent: entryConsent{OK: false, Updated: now}}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode tombstone: %w", err)
	}
	_, err = g.st.Set(ctx, id, b, nil, tombstoneTTL, store.Always)
	return err
}

// upsertResult is kv.rs UpsertResult.
type upsertResult int

const (
	upsertWritten upsertResult = iota
	upsertNotFound
	upsertWithdrawn
	upsertUnchanged
)

var errCASExhausted = errors.New("identity entry changed under every retry")

// upsertPartner sets source's uid on an existing live entry, never
// creating one (upsert_partner_id_if_exists, kv.rs): a compare-and-swap
// on the entry's generation, retried when another write came between.
func (g graph) upsertPartner(ctx context.Context, id, source, uid string) (upsertResult, error) {
	for range casRetries {
		e, gen, ok, err := g.get(ctx, id)
		switch {
		case err != nil:
			return 0, err
		case !ok:
			return upsertNotFound, nil
		case !e.Consent.OK:
			return upsertWithdrawn, nil
		case e.IDs[source].UID == uid:
			return upsertUnchanged, nil
		}
		if e.IDs == nil {
			e.IDs = map[string]partnerUID{}
		}
		e.IDs[source] = partnerUID{UID: uid}
		b, err := json.Marshal(e)
		if err != nil {
			return 0, fmt.Errorf("encode entry: %w", err)
		}
		written, err := g.st.Set(ctx, id, b, nil, entryTTL, store.IfGeneration(gen))
		if err != nil {
			return 0, err
		}
		if written {
			return upsertWritten, nil
		}
	}
	return 0, errCASExhausted
}

// logID is the first 8 characters of an id, for logs (ec/mod.rs log_id).
func logID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
