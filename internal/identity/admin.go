package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/store"
)

// AdminECPath is the admin identity lookup: GET AdminECPath reads the
// request's ts-ec, GET AdminECPath/{id} the id named (IABTechLab/
// trusted-server crates/trusted-server-core/src/ec/admin.rs:44-45,
// 259-300). Basic auth closes it unless a [[handlers]] entry covers it.
const AdminECPath = "/_ts/admin/ec"

// adminLookup is upstream's AdminEcLookupResponse (ec/admin.rs:196-240).
// An entry that does not decode is reported, not refused, so that a
// corrupt one stays inspectable.
type adminLookup struct {
	ECID          string           `json:"ec_id"`
	Store         string           `json:"store"`
	Generation    uint64           `json:"generation"`
	Tombstone     *bool            `json:"tombstone,omitempty"`
	Entry         map[string]any   `json:"entry,omitempty"`
	EntryError    string           `json:"entry_error,omitempty"`
	RawBody       string           `json:"raw_body,omitempty"`
	Metadata      json.RawMessage  `json:"metadata,omitempty"`
	MetadataError string           `json:"metadata_error,omitempty"`
	Auction       *adminAuctionIDs `json:"auction,omitempty"`
}

// adminAuctionIDs is AuctionEidsView (ec/admin.rs:242-257): the eids a bid
// request would carry from the entry, and the stored uids it would not.
type adminAuctionIDs struct {
	EIDs    []openrtb.EID  `json:"eids"`
	Skipped []adminSkipped `json:"skipped"`
}

type adminSkipped struct {
	SourceDomain string `json:"source_domain"`
	Reason       string `json:"reason"`
}

// AdminEC serves the lookup with upstream's statuses (ec/admin.rs:
// 259-372): 501 without a store, 404 for the bare route without a ts-ec
// cookie and for an id not stored, 400 for an id of the wrong form, 503
// when the store fails (error.rs:125), else 200 with the entry. Every
// answer is JSON, no-store and nosniff (ec/admin.rs:659-672).
func (f *Family) AdminEC() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.graph == nil {
			adminError(w, http.StatusNotImplemented, "EC identity graph is not configured on this deployment")
			return
		}
		id := strings.Trim(strings.TrimPrefix(r.URL.Path, AdminECPath), "/")
		if id == "" {
			if id = cookieID(cookieValues(r)); id == "" {
				adminError(w, http.StatusNotFound, "no EC ID in path and no ts-ec cookie on the request — pass an explicit id: /_ts/admin/ec/{id}")
				return
			}
		}
		if !Valid(id) {
			adminError(w, http.StatusBadRequest, "invalid EC ID format (expected {64hex}.{6alnum})")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
		defer cancel()
		se, ok, err := f.graph.st.Get(ctx, id)
		switch {
		case err != nil:
			f.failed(err, "admin lookup failed", id)
			adminError(w, http.StatusServiceUnavailable, "EC store read failed")
			return
		case !ok:
			adminError(w, http.StatusNotFound, "EC entry not found (KV reads are eventually consistent; a very recent entry may not be visible yet)")
			return
		}
		adminJSON(w, http.StatusOK, f.lookup(id, se))
	})
}

// lookup is build_lookup_response (ec/admin.rs:374-438).
func (f *Family) lookup(id string, se store.Entry) adminLookup {
	out := adminLookup{ECID: id, Store: storeName(f.graph.st), Generation: se.Generation}
	var raw map[string]any
	if err := json.Unmarshal(se.Value, &raw); err != nil {
		out.EntryError = fmt.Sprintf("failed to parse entry JSON: %v", err)
		out.RawBody = strings.ToValidUTF8(string(se.Value), "\uFFFD")
	} else {
		addISOCompanions(raw)
		out.Entry = raw
		var e entry
		if err := json.Unmarshal(se.Value, &e); err != nil {
			out.EntryError = fmt.Sprintf("failed to deserialize entry schema: %v", err)
		} else {
			tomb := !e.Consent.OK
			out.Tombstone = &tomb
			out.Auction = f.auctionView(e)
		}
	}
	if se.Meta != nil {
		if json.Valid(se.Meta) {
			out.Metadata = se.Meta
		} else {
			out.MetadataError = fmt.Sprintf("failed to parse metadata JSON (raw: %s)", strings.ToValidUTF8(string(se.Meta), "\uFFFD"))
		}
	}
	return out
}

// auctionView is build_auction_view (ec/admin.rs:470-497): the eids the
// bid request would carry (as Bidstream builds them) and, for each other
// stored uid, why not.
func (f *Family) auctionView(e entry) *adminAuctionIDs {
	v := &adminAuctionIDs{EIDs: []openrtb.EID{}, Skipped: []adminSkipped{}}
	bySource := map[string]*partner{}
	for _, p := range f.all {
		bySource[p.SourceDomain] = p
	}
	for _, source := range slices.Sorted(maps.Keys(e.IDs)) {
		uid, p := e.IDs[source].UID, bySource[source]
		switch {
		case uid == "":
			v.Skipped = append(v.Skipped, adminSkipped{source, "empty_uid"})
		case p == nil:
			v.Skipped = append(v.Skipped, adminSkipped{source, "not_in_registry"})
		case !p.BidstreamEnabled:
			v.Skipped = append(v.Skipped, adminSkipped{source, "bidstream_disabled"})
		default:
			v.EIDs = append(v.EIDs, openrtb.EID{Source: source, UIDs: []openrtb.UID{{ID: uid, Atype: p.OpenRTBAtype}}})
		}
	}
	return v
}

// addISOCompanions adds created_iso and consent.updated_iso beside the
// stored Unix seconds, leaving any already there (ec/admin.rs:440-468).
func addISOCompanions(e map[string]any) {
	iso := func(v any) (string, bool) {
		n, ok := v.(float64)
		if !ok || n < 0 {
			return "", false
		}
		return time.Unix(int64(n), 0).UTC().Format("2006-01-02T15:04:05.000Z"), true
	}
	if s, ok := iso(e["created"]); ok {
		if _, has := e["created_iso"]; !has {
			e["created_iso"] = s
		}
	}
	if c, ok := e["consent"].(map[string]any); ok {
		if s, ok := iso(c["updated"]); ok {
			if _, has := c["updated_iso"]; !has {
				c["updated_iso"] = s
			}
		}
	}
}

// storeName names the store an entry was read from, as upstream names its
// KV store.
func storeName(st store.Store) string {
	switch st.(type) {
	case *store.Redis:
		return "redis"
	case *store.Bolt:
		return "bolt"
	}
	return "store"
}

func adminError(w http.ResponseWriter, status int, msg string) {
	adminJSON(w, status, map[string]string{"error": msg})
}

func adminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, status, v)
}
