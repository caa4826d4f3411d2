package identity

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/store"
)

// adminGet is an operator's GET of path on srv, with a ts-ec cookie when
// ec is set.
func adminGet(t *testing.T, srv *httptest.Server, path, ec string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if ec != "" {
		req.AddCookie(&http.Cookie{Name: CookieName, Value: ec})
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// adminSite serves the lookups of f beside site's routes.
func adminSite(t *testing.T, f *Family) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET "+AdminECPath, f.AdminEC())
	mux.Handle("GET "+AdminECPath+"/{id}", f.AdminEC())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestAdminECLookupAnswersAsUpstream: the lookup's statuses and JSON as
// ec/admin.rs gives them, on both stores: the cookie's entry with the
// auction's view of its uids (an eid for a bidstream partner, skipped
// ones with upstream's reasons), 404 without a cookie or for an id not
// stored, 400 for an id of the wrong form, a corrupt entry reported with
// its raw body, and every answer JSON, no-store and nosniff.
func TestAdminECLookupAnswersAsUpstream(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			st := s.open(t)
			srv, f, _ := site(t, st)
			f.all[0].BidstreamEnabled = true
			admin := adminSite(t, f)
			ec := ""
			for _, c := range navigate(t, srv, "allow").Cookies() {
				if c.Name == CookieName {
					ec = c.Value
				}
			}
			if !Valid(ec) {
				t.Fatalf("no edge cookie minted: %q", ec)
			}
			ctx := context.Background()
			for source, uid := range map[string]string{"one.example": "uid-1", "gone.example": "uid-2"} {
				e, gen, _, err := f.graph.get(ctx, ec)
				if err != nil {
					t.Fatal(err)
				}
				if e.IDs == nil {
					e.IDs = map[string]partnerUID{}
				}
				e.IDs[source] = partnerUID{UID: uid}
				b, _ := json.Marshal(e)
				if ok, err := st.Set(ctx, ec, b, nil, time.Hour, store.IfGeneration(gen)); !ok || err != nil {
					t.Fatalf("write %s: %v %v", source, ok, err)
				}
			}
			corrupt := strings.Repeat("b", 64) + ".Zz0000"
			if _, err := st.Set(ctx, corrupt, []byte("not json"), nil, time.Hour, store.Always); err != nil {
				t.Fatal(err)
			}
			absent := strings.Repeat("c", 64) + ".AbCd12"

			for _, c := range []struct {
				name, path, cookie string
				status             int
				want               []string
			}{
				{"cookie", AdminECPath, ec, 200, []string{`"ec_id":"` + ec + `"`, `"tombstone":false`, `"created_iso":"`,
					`"auction":{"eids":[{"source":"one.example","uids":[{"id":"uid-1","atype":3}]}],"skipped":[{"source_domain":"gone.example","reason":"not_in_registry"}]}`}},
				{"explicit id", AdminECPath + "/" + ec, "", 200, []string{`"ec_id":"` + ec + `"`, `"ids":{`}},
				{"no cookie", AdminECPath, "", 404, []string{`{"error":"no EC ID in path and no ts-ec cookie on the request`}},
				{"bad id", AdminECPath + "/not-an-id", "", 400, []string{`{"error":"invalid EC ID format (expected {64hex}.{6alnum})"}`}},
				{"absent", AdminECPath + "/" + absent, "", 404, []string{`{"error":"EC entry not found`}},
				{"corrupt", AdminECPath + "/" + corrupt, "", 200, []string{`"entry_error":"failed to parse entry JSON`, `"raw_body":"not json"`}},
			} {
				status, h, body := adminGet(t, admin, c.path, c.cookie)
				if status != c.status {
					t.Errorf("%s: status %d, want %d: %s", c.name, status, c.status, body)
				}
				for _, w := range c.want {
					if !strings.Contains(body, w) {
						t.Errorf("%s: body lacks %s:\n%s", c.name, w, body)
					}
				}
				if h.Get("Content-Type") != "application/json" || h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s: headers %v", c.name, h)
				}
			}
		})
	}
}

// TestAdminECLookupWithoutOrWithAFailingStore: 501 when no store is
// configured (ec/admin.rs:304-310), 503 when the store fails
// (error.rs:125), counted as a store failure.
func TestAdminECLookupWithoutOrWithAFailingStore(t *testing.T) {
	id := strings.Repeat("a", 64) + ".Ab12Z9"
	_, none, _ := site(t, nil)
	if status, _, body := adminGet(t, adminSite(t, none), AdminECPath+"/"+id, ""); status != 501 ||
		body != `{"error":"EC identity graph is not configured on this deployment"}` {
		t.Errorf("no store: %d %s", status, body)
	}
	st := stores[0].open(t)
	_, f, failed := site(t, st)
	st.(*store.Bolt).Close()
	if status, _, body := adminGet(t, adminSite(t, f), AdminECPath+"/"+id, ""); status != 503 || failed.Load() != 1 {
		t.Errorf("store down: %d %s, %d failures counted", status, body, failed.Load())
	}
}
