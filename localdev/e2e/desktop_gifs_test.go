package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/relayinfo"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

const fakeKlipyKey = "super-secret-klipy-key"

// fakeKlipy is KLIPY's API on loopback: it records each call and answers
// as mode says (ok, redirect, huge, refuse).
type fakeKlipy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	calls    []*http.Request
	bodies   []string
	mode     atomic.Value
	redirect *httptest.Server
	hits     atomic.Int32 // calls that reached the redirect's target
}

func newFakeKlipy(t *testing.T) *fakeKlipy {
	f := &fakeKlipy{}
	f.mode.Store("ok")
	f.redirect = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.hits.Add(1) }))
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.calls, f.bodies = append(f.calls, r), append(f.bodies, string(body))
		f.mu.Unlock()
		switch f.mode.Load() {
		case "redirect":
			http.Redirect(w, r, f.redirect.URL+"/leaked", http.StatusFound)
		case "huge":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"result":true,"data":"` + strings.Repeat("x", 3<<20) + `"}`))
		case "refuse":
			_, _ = w.Write([]byte(`{"result":false,"errors":{"message":["request used ` + fakeKlipyKey + `"]}}`))
		default:
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			_, _ = w.Write([]byte(`{"result":true,"data":{"data":[{"slug":"ship-it","file":{}}]},"debug":"` + fakeKlipyKey + `"}`))
		}
	}))
	t.Cleanup(func() { f.srv.Close(); f.redirect.Close() })
	return f
}

func (f *fakeKlipy) last() (*http.Request, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return nil, ""
	}
	return f.calls[len(f.calls)-1], f.bodies[len(f.bodies)-1]
}

func (f *fakeKlipy) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// TestDesktopGIFProxy: with a KLIPY key the relay advertises buzz-gif and
// its descriptor exactly as Buzz does, and proxies the picker's search and
// share (NIP-98 over the JSON body) to the one configured host: only the
// result data comes back, never the key; a redirect is not followed, an
// oversized or failed answer is a 502 without the provider's text; the
// per-key limit answers 429. A stranger without a token, a banned key, a
// token for another community's host are refused; without a key the routes
// answer 404 and NIP-11 says nothing.
func TestDesktopGIFProxy(t *testing.T) {
	f := newFakeKlipy(t)
	s := newDesktopSetup(t, Options{Env: map[string]string{
		"KLIPY_API_KEY": fakeKlipyKey, "KLIPY_API_BASE": f.srv.URL + "/api/v1/", "RATE_GIF_SEARCHES_PER_MIN": "8"}})
	a := s.a

	_, doc := a.info()
	if !slices.Contains(doc.SupportedExtensions, "buzz-gif") || doc.GIF == nil ||
		*doc.GIF != (relayinfo.GIF{Provider: "klipy", Search: "/gifs/search", Share: "/gifs/share"}) {
		t.Fatalf("NIP-11: %+v %+v", doc.SupportedExtensions, doc.GIF)
	}

	// The picker's first call: trending (an empty query).
	st, _, out := a.appDo(&s.alice, http.MethodPost, "/gifs/search", []byte(`{"query":"","customer_id":"c0ffee","locale":"en-US"}`), "")
	if st != 200 || string(out) != `{"result":true,"data":{"data":[{"slug":"ship-it","file":{}}]}}` {
		t.Fatalf("trending: %d %s", st, out)
	}
	req, _ := f.last()
	if req.Method != http.MethodGet || req.URL.Path != "/api/v1/"+fakeKlipyKey+"/gifs/trending" || req.URL.Query().Get("per_page") != "24" ||
		req.URL.Query().Get("page") != "1" || req.URL.Query().Get("customer_id") != "c0ffee" || req.URL.Query().Get("locale") != "en-US" || req.URL.Query().Has("q") {
		t.Fatalf("trending upstream: %s %s", req.Method, req.URL)
	}
	st, _, out = a.appDo(&s.alice, http.MethodPost, "/gifs/search", []byte(`{"query":" cats ","customer_id":"c0ffee","locale":"en-US"}`), "")
	if req, _ = f.last(); st != 200 || req.URL.Path != "/api/v1/"+fakeKlipyKey+"/gifs/search" || req.URL.Query().Get("q") != "cats" {
		t.Fatalf("search: %d %s %v", st, out, req.URL)
	}
	// Share: the slug one path segment, the customer in the body; 204.
	st, _, out = a.appDo(&s.alice, http.MethodPost, "/gifs/share", []byte(`{"slug":"ship/it","customer_id":"c0ffee"}`), "")
	req, body := f.last()
	if st != 204 || req.Method != http.MethodPost || req.URL.EscapedPath() != "/api/v1/"+fakeKlipyKey+"/gifs/share/ship%2Fit" || body != `{"customer_id":"c0ffee"}` {
		t.Fatalf("share: %d %s; upstream %s %s %s", st, out, req.Method, req.URL.EscapedPath(), body)
	}

	// Bad bodies: 400, nothing sent upstream.
	n := f.count()
	for _, b := range []string{`{}`, `{"query":"x","customer_id":"","locale":"en"}`, `{"query":"` + strings.Repeat("q", 201) + `","customer_id":"c","locale":"en"}`, `not json`} {
		if st, _, out := a.appDo(&s.alice, http.MethodPost, "/gifs/search", []byte(b), ""); st != 400 || !strings.Contains(string(out), "invalid:") {
			t.Errorf("search %s: %d %s", b, st, out)
		}
	}
	if f.count() != n {
		t.Errorf("a refused search reached the provider")
	}

	// The provider misbehaving: a 502 that names neither the key nor where
	// a redirect pointed; the redirect is never followed.
	for _, mode := range []string{"redirect", "huge", "refuse"} {
		f.mode.Store(mode)
		st, _, out := a.appDo(&s.bob, http.MethodPost, "/gifs/search", []byte(`{"query":"x","customer_id":"c","locale":"en"}`), "")
		if st != http.StatusBadGateway || strings.Contains(string(out), fakeKlipyKey) || strings.Contains(string(out), "leaked") {
			t.Errorf("%s: %d %s, want 502 without the key", mode, st, out)
		}
	}
	if f.hits.Load() != 0 {
		t.Errorf("the relay followed the provider's redirect")
	}
	f.mode.Store("ok")

	// The attackers.
	search := []byte(`{"query":"x","customer_id":"c","locale":"en"}`)
	n = f.count()
	if st, _, out := a.appDo(nil, http.MethodPost, "/gifs/search", search, ""); st != 401 {
		t.Errorf("no token: %d %s", st, out)
	}
	if st, _, out := a.appDo(&s.banned, http.MethodPost, "/gifs/search", search, ""); st != 403 || !strings.Contains(string(out), "blocked:") {
		t.Errorf("banned key: %d %s", st, out)
	}
	if st, _, out := a.appDo(&s.opB, http.MethodPost, "/gifs/search", search, s.b.base()+"/gifs/search"); st != 401 {
		t.Errorf("a token for b.test: %d %s", st, out)
	}
	if st, _, out := a.appDo(&s.stranger, http.MethodPost, "/gifs/share", []byte(`{"slug":"x","customer_id":"c"}`), a.base()+"/gifs/search"); st != 401 {
		t.Errorf("a search token used to share: %d %s", st, out)
	}
	if f.count() != n {
		t.Errorf("a refused caller reached the provider")
	}
	// The per-key limit (8 a minute here): one key is cut off, another not.
	heavy := testkit.NewKey(t)
	var last int
	for i := 0; i < 9; i++ {
		last, _, _ = a.appDo(&heavy, http.MethodPost, "/gifs/search", search, "")
	}
	if last != http.StatusTooManyRequests {
		t.Errorf("9th search in a minute: %d, want 429", last)
	}
	if st, _, out := a.appDo(&s.stranger, http.MethodPost, "/gifs/search", search, ""); st != 200 {
		t.Errorf("another key after the limit: %d %s", st, out)
	}
	// Every answer is JSON the picker can read.
	var v map[string]any
	if _, _, out := a.appDo(&s.alice, http.MethodPost, "/gifs/search", search, ""); json.Unmarshal(out, &v) != nil || v["result"] != true {
		t.Errorf("answer: %s", out)
	}
}

// TestDesktopGIFProxyOffWithoutKey: no key, no proxy: the routes answer
// 404 (before any token is looked at) and NIP-11 lists neither buzz-gif
// nor the descriptor.
func TestDesktopGIFProxyOffWithoutKey(t *testing.T) {
	s := newDesktopSetup(t, Options{})
	_, doc := s.a.info()
	if slices.Contains(doc.SupportedExtensions, "buzz-gif") || doc.GIF != nil {
		t.Fatalf("NIP-11 without a key: %+v %+v", doc.SupportedExtensions, doc.GIF)
	}
	for _, p := range []string{"/gifs/search", "/gifs/share"} {
		for _, u := range []*user{nil, &s.alice} {
			if st, _, out := s.a.appDo(u, http.MethodPost, p, []byte(`{"query":"","customer_id":"c","locale":"en"}`), ""); st != 404 {
				t.Errorf("%s: %d %s, want 404", p, st, out)
			}
		}
	}
	_ = nostr.Tags{}
}
