package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/family"
)

// Batch-sync bounds (ec/batch_sync.rs:28, 126).
const (
	maxBatchMappings = 1000
	maxBatchBody     = 2 << 20
)

type batchMapping struct {
	ECID       string  `json:"ec_id"`
	PartnerUID string  `json:"partner_uid"`
	Timestamp  *uint64 `json:"timestamp"`
}

type mappingError struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

type batchResponse struct {
	Accepted int            `json:"accepted"`
	Rejected int            `json:"rejected"`
	Errors   []mappingError `json:"errors"`
}

// BatchSync serves POST /_ts/api/v1/batch-sync (ec/batch_sync.rs:100-176):
// a partner, by its bearer token and within its batch_rate_limit a minute,
// writes its uids onto existing live ids; 200 when every mapping is
// accepted, 207 with the rejected ones' reasons otherwise.
func (f *Family) BatchSync() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := f.authenticate(r)
		switch {
		case p == nil:
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		case !p.limit.allow():
			writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate_limit_exceeded"})
			return
		case r.ContentLength > maxBatchBody:
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "body_too_large"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
		if err != nil {
			badRequest(w, "unreadable body")
			return
		}
		if len(body) > maxBatchBody {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "body_too_large"})
			return
		}
		mappings, err := decodeBatch(body)
		if err != nil {
			badRequest(w, "Invalid request body: "+err.Error())
			return
		}
		if len(mappings) > maxBatchMappings {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "batch_too_large"})
			return
		}
		resp := f.applyBatch(r.Context(), p.SourceDomain, mappings)
		status := http.StatusOK
		if resp.Rejected > 0 {
			status = http.StatusMultiStatus
		}
		writeJSON(w, status, resp)
	})
}

var errNoTimestamp = errors.New("missing field `timestamp`")

func decodeBatch(body []byte) ([]batchMapping, error) {
	var req struct {
		Mappings *[]batchMapping `json:"mappings"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, err
	}
	if req.Mappings == nil {
		return nil, errors.New("missing field `mappings`")
	}
	for _, m := range *req.Mappings {
		if m.Timestamp == nil {
			return nil, errNoTimestamp
		}
	}
	return *req.Mappings, nil
}

// applyBatch is process_mappings (batch_sync.rs:180-240): a store failure
// rejects that mapping and every one after it as kv_unavailable.
func (f *Family) applyBatch(ctx context.Context, source string, mappings []batchMapping) batchResponse {
	resp := batchResponse{Errors: []mappingError{}}
	reject := func(i int, reason string) { resp.Errors = append(resp.Errors, mappingError{i, reason}) }
	for i, m := range mappings {
		id := normalizeForKV(m.ECID)
		switch {
		case !Valid(id):
			reject(i, "invalid_ec_id")
			continue
		case strings.TrimSpace(m.PartnerUID) == "" || len(m.PartnerUID) > maxUIDLength:
			reject(i, "invalid_partner_uid")
			continue
		}
		res, err := f.upsert(ctx, id, source, m.PartnerUID)
		if err != nil {
			f.failed(err, "batch-sync: store write failed", id)
			for j := i; j < len(mappings); j++ {
				reject(j, "kv_unavailable")
			}
			break
		}
		if res == upsertNotFound || res == upsertWithdrawn {
			reject(i, "ineligible")
			continue
		}
		resp.Accepted++
	}
	resp.Rejected = len(resp.Errors)
	return resp
}

func (f *Family) upsert(ctx context.Context, id, source, uid string) (upsertResult, error) {
	if f.graph == nil {
		return 0, errNoStore
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return f.graph.upsertPartner(ctx, id, source, uid)
}

var errNoStore = errors.New("no store configured")

// badRequest is upstream's BadRequest error answer (error.rs:119, 141).
func badRequest(w http.ResponseWriter, msg string) {
	family.Answer{Status: http.StatusBadRequest, Msg: "Bad request: " + msg, Policy: family.NoStore}.Write(w)
}
