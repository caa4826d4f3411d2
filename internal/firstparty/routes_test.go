package firstparty

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestClickRedirectsToTheVerifiedTarget(t *testing.T) {
	_, srv := front(t, Config{}, Deps{ECID: func(r *http.Request) string { return r.Header.Get("X-Test-EC") }})
	good := signed(t, srv, PathClick, "https://adv.example/land?id=7&ts-ec=old")
	cases := []struct {
		name, url, ec string
		code          int
		loc           string
	}{
		{"valid", good, "", 302, "https://adv.example/land?id=7&ts-ec=old"},
		{"ts-ec replaced", good, "ec1", 302, "https://adv.example/land?id=7&ts-ec=ec1"},
		{"tampered target", strings.Replace(good, "id=7", "id=8", 1), "", 403, ""},
		{"other host, same token", strings.Replace(good, "adv.example", "evil.example", 1), "", 403, ""},
		{"missing token (upstream 502)", srv.URL + PathClick + "?tsurl=https%3A%2F%2Fevil.example%2F", "", 400, ""},
		{"expired", signed(t, srv, PathClick, "https://adv.example/", expiry(-time.Second*2)), "", 403, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := get(t, c.url, "X-Test-EC", c.ec)
			if a.code != c.code || a.header.Get("Location") != c.loc {
				t.Fatalf("got %d Location %q, want %d %q", a.code, a.header.Get("Location"), c.code, c.loc)
			}
			if c.code == 302 && a.header.Get("Cache-Control") != "no-store, private" {
				t.Errorf("Cache-Control %q", a.header.Get("Cache-Control"))
			}
		})
	}
}

type signAnswer struct{ Href, Base string }

func TestSignMintsAThirtySecondProxyURL(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	_, srv := front(t, Config{ExcludeDomains: []string{"*.pub.example"}}, Deps{Now: func() time.Time { return now }})
	s := testSigner(t)
	check := func(t *testing.T, a answer, wantTarget, wantBase string) {
		t.Helper()
		var got signAnswer
		if a.code != 200 || json.Unmarshal([]byte(a.body), &got) != nil {
			t.Fatalf("got %d %q", a.code, a.body)
		}
		if ct := a.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if got.Base != wantBase || !strings.HasPrefix(got.Href, PathProxy+"?tsurl=") || strings.Contains(a.body, `\u0026`) {
			t.Errorf("href %q base %q body %s", got.Href, got.Base, a.body)
		}
		u, _ := url.Parse(got.Href)
		tg, err := s.verifyQuery(u.RawQuery, now)
		exp := strconv.FormatInt(now.Add(30*time.Second).Unix(), 10)
		if err != nil || tg.url != wantTarget+exp {
			t.Errorf("href verifies to %q (%v), want %q", tg.url, err, wantTarget+exp)
		}
		if _, err := s.verifyQuery(u.RawQuery, now.Add(31*time.Second)); err != errExpired {
			t.Errorf("31 s later: %v, want expired", err)
		}
	}
	t.Run("GET", func(t *testing.T) {
		check(t, get(t, srv.URL+PathSign+"?url="+url.QueryEscape(" https://cdn.example/a.png?x=1#f ")),
			"https://cdn.example/a.png?x=1&tsexp=", "https://cdn.example/a.png")
	})
	t.Run("POST", func(t *testing.T) {
		check(t, post(t, srv.URL+PathSign, "application/json", `{"url":"https://cdn.example/b.js"}`),
			"https://cdn.example/b.js?tsexp=", "https://cdn.example/b.js")
	})
	t.Run("protocol-relative takes the request's scheme", func(t *testing.T) {
		check(t, get(t, srv.URL+PathSign+"?url=//cdn.example/c.png"), "http://cdn.example/c.png?tsexp=", "http://cdn.example/c.png")
	})
	refused := []struct {
		name string
		a    answer
		want int
	}{
		{"missing url (upstream 502)", get(t, srv.URL+PathSign), 400},
		{"relative url (upstream 502)", get(t, srv.URL+PathSign+"?url=/a.png"), 400},
		{"javascript: (upstream 502)", get(t, srv.URL+PathSign+"?url=javascript:alert(1)"), 400},
		{"excluded domain (upstream 502)", get(t, srv.URL+PathSign+"?url=https://static.pub.example/a.png"), 400},
		{"not JSON (upstream 502)", post(t, srv.URL+PathSign, "application/json", `url=x`), 400},
		{"JSON without url (upstream 502)", post(t, srv.URL+PathSign, "application/json", `{}`), 400},
		{"body over 64 KiB", post(t, srv.URL+PathSign, "application/json", `{"url":"https://a.example/`+strings.Repeat("a", 65536)+`"}`), 413},
	}
	for _, c := range refused {
		if c.a.code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, c.a.code, c.a.body, c.want)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, srv.URL+PathSign, nil)
	if a := do(t, req); a.code != 405 || a.header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %d Allow %q", a.code, a.header.Get("Allow"))
	}
}

type rebuildAnswer struct {
	Href, Base string
	Added      map[string]string
	Removed    []string
}

func TestRebuildAddsAndRemovesParametersOnly(t *testing.T) {
	_, srv := front(t, Config{}, Deps{})
	s := testSigner(t)
	click := testSigner(t).signURL("https://adv.example/land?b=2&a=1", PathClick)
	body := func(add map[string]string, del ...string) string {
		b, _ := json.Marshal(map[string]any{"tsclick": click, "add": add, "del": del})
		return string(b)
	}

	a := post(t, srv.URL+PathRebuild, "application/json", body(map[string]string{"c": "3"}, "b"))
	var got rebuildAnswer
	if a.code != 200 || json.Unmarshal([]byte(a.body), &got) != nil || a.header.Get("Cache-Control") != "no-store, private" {
		t.Fatalf("JSON POST: %d %q %q", a.code, a.body, a.header.Get("Cache-Control"))
	}
	if got.Base != "https://adv.example/land" || got.Added["c"] != "3" || len(got.Added) != 1 ||
		len(got.Removed) != 1 || got.Removed[0] != "b" {
		t.Errorf("answer %+v", got)
	}
	u, _ := url.Parse(got.Href)
	if tg, err := s.verifyQuery(u.RawQuery, time.Now()); err != nil || u.Path != PathClick ||
		tg.url != "https://adv.example/land?a=1&c=3" {
		t.Errorf("href %q verifies to %q (%v)", got.Href, tg.url, err)
	}

	q := "?tsclick=" + url.QueryEscape(click) + "&add=" + url.QueryEscape(`{"z":"9"}`)
	if a := get(t, srv.URL+PathRebuild+q); a.code != 302 || !strings.Contains(a.header.Get("Location"), "&z=9&tstoken=") {
		t.Errorf("GET: %d Location %q", a.code, a.header.Get("Location"))
	}
	if a := post(t, srv.URL+PathRebuild, "application/x-www-form-urlencoded", q[1:]); a.code != 302 {
		t.Errorf("form POST: %d", a.code)
	}

	refused := []struct {
		name string
		a    answer
		want int
	}{
		{"delete tsexp (upstream 502)", post(t, srv.URL+PathRebuild, "application/json", body(nil, "tsexp")), 400},
		{"add tsurl (upstream 502)", post(t, srv.URL+PathRebuild, "application/json", body(map[string]string{"tsurl": "https://evil.example/"})), 400},
		{"change a parameter (upstream 502)", post(t, srv.URL+PathRebuild, "application/json", body(map[string]string{"a": "2"})), 400},
		{"unsigned click", post(t, srv.URL+PathRebuild, "application/json", `{"tsclick":"/first-party/click?tsurl=https%3A%2F%2Fevil.example%2F&tstoken=`+strings.Repeat("A", 43)+`"}`), 403},
		{"not a click path (upstream 502)", post(t, srv.URL+PathRebuild, "application/json", `{"tsclick":"/first-party/proxy?tsurl=x&tstoken=y"}`), 400},
		{"missing tsclick (upstream 502)", get(t, srv.URL+PathRebuild), 400},
		{"body over 64 KiB", post(t, srv.URL+PathRebuild, "application/json", `{"tsclick":"`+strings.Repeat("a", 65536)+`"}`), 413},
	}
	for _, c := range refused {
		if c.a.code != c.want {
			t.Errorf("%s: %d %q, want %d", c.name, c.a.code, c.a.body, c.want)
		}
	}
}

func TestRoutesListsUpstreamMethods(t *testing.T) {
	f, _ := front(t, Config{}, Deps{})
	var got []string
	for _, r := range f.Routes() {
		got = append(got, r.Method+" "+r.Path)
	}
	want := "GET /first-party/proxy|GET /first-party/click|GET /first-party/sign|POST /first-party/sign|GET /first-party/proxy-rebuild|POST /first-party/proxy-rebuild"
	if strings.Join(got, "|") != want {
		t.Fatalf("routes %q", got)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, c := range []Config{
		{},
		{ProxySecret: "s", AllowedDomains: []string{"https://a.example/"}},
		{ProxySecret: "s", ExcludeDomains: []string{""}},
		{ProxySecret: "s", PerClient: -1},
	} {
		if _, err := New(c, Deps{}); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}
