package blossom_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/e2e"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// noRedirect answers a request without following a redirect, to read the
// relay's own 302.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// answer is one media answer as a client sees it.
type answer struct {
	status        int
	reason, body  string
	header        http.Header
	location, typ string
}

func do(t *testing.T, method, url, auth string, hdr map[string]string, body []byte) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, reason: resp.Header.Get("X-Reason"), body: string(b), header: resp.Header,
		location: resp.Header.Get("Location"), typ: resp.Header.Get("Content-Type")}
}

// blobAuth is a kind 24242 authorization by k for verb, with tags.
func blobAuth(t *testing.T, k testkit.Key, verb string, tags ...nostr.Tag) string {
	t.Helper()
	ev := &nostr.Event{Kind: blossom.AuthKind, CreatedAt: nostr.Timestamp(time.Now().Unix() - 5), Content: verb,
		Tags: append(nostr.Tags{{"t", verb}, {"expiration", strconv.FormatInt(time.Now().Unix()+600, 10)}}, tags...)}
	if err := k.Sign(ev); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ev)
	return "Nostr " + base64.StdEncoding.EncodeToString(raw)
}

// uploadAs stores n random bytes of type typ as k through PUT /upload.
func uploadAs(t *testing.T, r *e2e.Relay, k testkit.Key, n int, typ string) ([]byte, string) {
	t.Helper()
	body := make([]byte, n)
	_, _ = rand.Read(body)
	h := media.Hash(body)
	a := do(t, http.MethodPut, r.HTTPURL+"/upload", blobAuth(t, k, "upload", nostr.Tag{"x", h}),
		map[string]string{"X-SHA-256": h, "Content-Type": typ}, body)
	if a.status != http.StatusCreated && a.status != http.StatusOK {
		t.Fatalf("upload: %d %s", a.status, a.body)
	}
	return body, h
}

// shareIn posts a kind 9 by k in channel ch linking the blob of hash, as a
// client shares an attachment (the URL in the content, NIP-92's imeta).
func shareIn(t *testing.T, r *e2e.Relay, k testkit.Key, ch, hash string) {
	t.Helper()
	url := r.HTTPURL + "/" + hash + ".png"
	ev := k.Event(t, 9, "look "+url, nostr.Tag{"h", ch}, nostr.Tag{"imeta", "url " + url, "x " + hash, "m image/png"})
	if ok, msg := post(t, r, k, ev); !ok {
		t.Fatalf("share in %s: %s", ch, msg)
	}
}

// query posts filter to /query as k (NIP-98).
func query(t *testing.T, r *e2e.Relay, k testkit.Key, filter map[string]any) []nostr.Event {
	t.Helper()
	body, _ := json.Marshal([]any{filter})
	url := r.HTTPURL + "/query"
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", k.Token(t, http.MethodPost, url, body, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []nostr.Event
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
		t.Fatalf("/query: %d %v", resp.StatusCode, err)
	}
	return evs
}

// TestPrivateChannelAndDMMediaNeedAReader: a blob shared in a private
// channel or a DM is downloaded only with an authorization (a 24242 get
// event or NIP-98) by a key that may read the message sharing it or that
// uploaded it; without one, GET answers 401 and HEAD 404, with another
// key's, 404 for both, exactly as for a blob the relay does not hold. A
// blob shared in an open channel stays public.
func TestPrivateChannelAndDMMediaNeedAReader(t *testing.T) {
	r := e2e.StartTest(t, e2e.Options{Media: true})
	owner, reader, peer, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ch := join(t, r, owner)
	join(t, r, stranger) // a member of the community, of no channel below
	if ok, msg := post(t, r, owner, owner.Event(t, 9000, "", nostr.Tag{"h", ch}, nostr.Tag{"p", reader.Pub})); !ok {
		t.Fatalf("add the reader: %s", msg)
	}
	body, priv := uploadAs(t, r, owner, 3000, "image/png")
	shareIn(t, r, owner, ch, priv)
	missing := strings.Repeat("e", 64)

	get := func(hash, auth string) answer { return do(t, http.MethodGet, r.HTTPURL+"/"+hash, auth, nil, nil) }
	head := func(hash, auth string) answer { return do(t, http.MethodHead, r.HTTPURL+"/"+hash, auth, nil, nil) }
	getAs := func(k testkit.Key, hash string) string { return blobAuth(t, k, "get", nostr.Tag{"x", hash}) }
	same := func(what string, got, want answer) {
		t.Helper()
		if got.status != want.status || got.reason != want.reason || got.body != want.body {
			t.Fatalf("%s: %d %q %q; a missing blob: %d %q %q", what, got.status, got.reason, got.body, want.status, want.reason, want.body)
		}
	}
	refusedAll := func(hash string) {
		t.Helper()
		a := get(hash, "")
		if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.reason, "auth-required:") {
			t.Fatalf("GET without a key: %d %q", a.status, a.reason)
		}
		same("GET without a key", a, get(missing, ""))
		same("HEAD without a key", head(hash, ""), head(missing, ""))
		if a := head(hash, ""); a.status != http.StatusNotFound {
			t.Fatalf("HEAD without a key: %d", a.status)
		}
		a = get(hash, getAs(stranger, hash))
		if a.status != http.StatusNotFound {
			t.Fatalf("GET by a non-reader: %d %q", a.status, a.reason)
		}
		same("GET by a non-reader", a, get(missing, getAs(stranger, missing)))
		same("HEAD by a non-reader", head(hash, getAs(stranger, hash)), head(missing, getAs(stranger, missing)))
	}
	// readable: k's GET with auth is redirected; with headAuth (a 24242
	// event serves both, a NIP-98 token one method once), its HEAD is 200.
	readable := func(k testkit.Key, hash, auth, headAuth string) {
		t.Helper()
		a := get(hash, auth)
		if a.status != http.StatusFound || a.location == "" || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET by %.8s: %d %q %v", k.Pub, a.status, a.reason, a.header)
		}
		if h := head(hash, headAuth); h.status != http.StatusOK {
			t.Fatalf("HEAD by %.8s: %d %q", k.Pub, h.status, h.reason)
		}
	}

	refusedAll(priv)
	readable(reader, priv, getAs(reader, priv), getAs(reader, priv))
	readable(owner, priv, getAs(owner, priv), getAs(owner, priv))
	// A get event naming this server instead of the blob, and NIP-98.
	server := blobAuth(t, reader, "get", nostr.Tag{"server", r.HTTPURL})
	readable(reader, priv, server, server)
	readable(reader, priv, reader.Token(t, http.MethodGet, r.HTTPURL+"/"+priv, nil, time.Now()),
		reader.Token(t, http.MethodHead, r.HTTPURL+"/"+priv, nil, time.Now()))
	resp, err := http.Get(get(priv, getAs(reader, priv)).location)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, body) {
		t.Fatal("the reader's download is not the blob")
	}
	// A bad authorization is refused whatever the blob.
	if a := get(priv, blobAuth(t, reader, "upload", nostr.Tag{"x", priv})); a.status != http.StatusUnauthorized {
		t.Fatalf("GET with an upload authorization: %d", a.status)
	}

	// A DM, opened and used as a Buzz client does.
	if ok, msg := post(t, r, owner, owner.Event(t, 41010, "", nostr.Tag{"p", peer.Pub})); !ok {
		t.Fatalf("open the DM: %s", msg)
	}
	var dm string
	for _, n := range query(t, r, peer, map[string]any{"kinds": []int{44100}, "#p": []string{peer.Pub}}) {
		if h := n.Tags.GetFirst([]string{"h"}); h != nil {
			dm = (*h)[1]
		}
	}
	if dm == "" {
		t.Fatal("no DM for the peer")
	}
	_, inDM := uploadAs(t, r, owner, 2000, "image/jpeg")
	shareIn(t, r, owner, dm, inDM)
	refusedAll(inDM)
	readable(peer, inDM, getAs(peer, inDM), getAs(peer, inDM))

	// An open channel's blob is public.
	open := testkit.ChannelID()
	if ok, msg := post(t, r, owner, owner.Event(t, 9007, "", nostr.Tag{"h", open}, nostr.Tag{"name", "open"},
		nostr.Tag{"channel_type", "stream"}, nostr.Tag{"visibility", "open"})); !ok {
		t.Fatalf("create an open channel: %s", msg)
	}
	_, pub := uploadAs(t, r, owner, 1000, "image/png")
	shareIn(t, r, owner, open, pub)
	if a := get(pub, ""); a.status != http.StatusFound {
		t.Fatalf("GET of an open channel's blob without a key: %d %q", a.status, a.reason)
	}
}

// TestBlobListIsTheListersOwn: GET /list/<pubkey> lists the blobs of the
// key that signed the list authorization; another key's list is 403 with
// the same reason whether that key uploaded anything or not.
func TestBlobListIsTheListersOwn(t *testing.T) {
	r := e2e.StartTest(t, e2e.Options{Media: true})
	lister, other, empty := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	for _, k := range []testkit.Key{lister, other, empty} {
		join(t, r, k)
	}
	_, h := uploadAs(t, r, other, 1000, "image/png")
	list := func(k testkit.Key, of string) answer {
		return do(t, http.MethodGet, r.HTTPURL+"/list/"+of, blobAuth(t, k, "list"), nil, nil)
	}
	a := list(lister, other.Pub)
	if a.status != http.StatusForbidden || !strings.HasPrefix(a.reason, "restricted:") || strings.Contains(a.body, h) {
		t.Fatalf("another key's list: %d %q %s", a.status, a.reason, a.body)
	}
	if b := list(lister, empty.Pub); b.status != a.status || b.reason != a.reason {
		t.Fatalf("another key's list answers %d %q with blobs, %d %q without", a.status, a.reason, b.status, b.reason)
	}
	if a := list(other, other.Pub); a.status != http.StatusOK || !strings.Contains(a.body, h) {
		t.Fatalf("own list: %d %s", a.status, a.body)
	}
}

// TestPresignOfAHeldBlobNeedsItsBytes: POST /media/upload naming a blob
// the community holds answers a presigned PUT like any other (bound to the
// hash: S3 checks x-amz-checksum-sha256) and makes the caller no owner, so
// the uploader's DELETE removes the blob.
func TestPresignOfAHeldBlobNeedsItsBytes(t *testing.T) {
	r := e2e.StartTest(t, e2e.Options{Media: true})
	owner, squatter := testkit.NewKey(t), testkit.NewKey(t)
	join(t, r, owner)
	join(t, r, squatter)
	body, h := uploadAs(t, r, owner, 3000, "image/png")
	a := do(t, http.MethodPost, r.HTTPURL+"/media/upload", blobAuth(t, squatter, "upload", nostr.Tag{"x", h}),
		map[string]string{"X-SHA-256": h, "X-Content-Length": strconv.Itoa(len(body))}, nil)
	var p struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	_ = json.Unmarshal([]byte(a.body), &p)
	sum := sha256.Sum256(body)
	if a.status != http.StatusOK || p.URL == "" || p.Headers["X-Amz-Checksum-Sha256"] != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatalf("presign of a held blob: %d %s; want a PUT bound to its hash", a.status, a.body)
	}
	if d := do(t, http.MethodDelete, r.HTTPURL+"/"+h, blobAuth(t, squatter, "delete", nostr.Tag{"x", h}), nil, nil); d.status != http.StatusForbidden {
		t.Fatalf("the squatter's delete: %d %q", d.status, d.reason)
	}
	if d := do(t, http.MethodDelete, r.HTTPURL+"/"+h, blobAuth(t, owner, "delete", nostr.Tag{"x", h}), nil, nil); d.status != http.StatusOK {
		t.Fatalf("the uploader's delete: %d %q", d.status, d.reason)
	}
	if a := do(t, http.MethodHead, r.HTTPURL+"/"+h, "", nil, nil); a.status != http.StatusNotFound {
		t.Fatalf("HEAD after the only uploader's delete: %d", a.status)
	}
}

// TestMediaServedTypesAndNosniff: every media answer carries
// X-Content-Type-Options: nosniff; a blob declared text/html or
// image/svg+xml is answered (HEAD, and S3 after GET's redirect) as an
// application/octet-stream attachment, passive media as declared.
func TestMediaServedTypesAndNosniff(t *testing.T) {
	r := e2e.StartTest(t, e2e.Options{Media: true})
	k := testkit.NewKey(t)
	join(t, r, k)
	for _, c := range []struct{ declared, served, disposition string }{
		{"text/html", "application/octet-stream", "attachment"},
		{"image/svg+xml", "application/octet-stream", "attachment"},
		{"image/png", "image/png", "inline"},
	} {
		_, h := uploadAs(t, r, k, 500, c.declared)
		if a := do(t, http.MethodHead, r.HTTPURL+"/"+h, "", nil, nil); a.typ != c.served || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("HEAD of a blob declared %s: %q %v", c.declared, a.typ, a.header)
		}
		a := do(t, http.MethodGet, r.HTTPURL+"/"+h, "", nil, nil)
		if a.status != http.StatusFound || a.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("GET: %d %v", a.status, a.header)
		}
		resp, err := http.Get(a.location)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != c.served || resp.Header.Get("Content-Disposition") != c.disposition {
			t.Errorf("S3 serves a blob declared %s as %q (%q)", c.declared, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
		}
	}
	if a := do(t, http.MethodGet, r.HTTPURL+"/"+strings.Repeat("z", 64), "", nil, nil); a.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("a refusal without nosniff: %v", a.header)
	}
}
