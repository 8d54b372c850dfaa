package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// appBlob is what Buzz desktop parses from a successful upload
// (commands/media.rs BlobDescriptor: url, sha256, size, type and uploaded
// are required; the rest optional).
type appBlob struct {
	URL      *string `json:"url"`
	SHA256   *string `json:"sha256"`
	Size     *uint64 `json:"size"`
	Type     *string `json:"type"`
	Uploaded *int64  `json:"uploaded"`
}

// seededBody is n pseudo-random bytes from seed, produced as they are read
// (a 50 MiB body is never held by the test): do_upload's stream hands the
// socket one 64 KiB chunk at a time.
type seededBody struct {
	rng  *rand.ChaCha8
	left int64
}

func newSeededBody(seed byte, n int64) *seededBody {
	var s [32]byte
	s[0] = seed
	return &seededBody{rng: rand.NewChaCha8(s), left: n}
}

func (b *seededBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, _ := b.rng.Read(p)
	b.left -= int64(n)
	return n, nil
}

func seededHash(seed byte, n int64) string {
	h := sha256.New()
	_, _ = io.Copy(h, newSeededBody(seed, n))
	return hex.EncodeToString(h.Sum(nil))
}

// appUploadAuth is do_upload's Authorization: a kind 24242 upload event
// with the x, expiration (an hour for video) and server (the relay URL's
// authority) tags, base64url without padding.
func appUploadAuth(t *testing.T, k user, hash, server string, expires time.Time) string {
	t.Helper()
	ev := &nostr.Event{Kind: blossom.AuthKind, CreatedAt: nostr.Now(), Content: "Upload buzz-media", Tags: nostr.Tags{
		{"t", "upload"}, {"x", hash}, {"expiration", strconv.FormatInt(expires.Unix(), 10)}, {"server", server}}}
	if err := k.Sign(ev); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ev)
	return "Nostr " + base64.RawURLEncoding.EncodeToString(raw)
}

// appShape is how do_upload sends the body.
type appShape int

const (
	// shapeStream is the progress-bar path: reqwest::Body::wrap_stream of
	// 64 KiB chunks with Content-Length set by the app (hyper frames it by
	// that length); a stream that cannot be sent twice (no GetBody).
	shapeStream appShape = iota
	// shapeVec is the Vec<u8> body (its length known).
	shapeVec
	// shapeChunked is a stream without a length (Transfer-Encoding:
	// chunked), which do_upload never sends.
	shapeChunked
)

type upAnswer struct {
	status int
	reason string
	body   []byte
}

// appUpload is do_upload's call: PUT {base}/media/upload with
// Authorization, Content-Type and X-SHA-256, body per shape.
func appUpload(t *testing.T, hc *http.Client, base, auth, mime, hash string, body io.Reader, size int64, shape appShape) upAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, base+"/media/upload", nil)
	if err != nil {
		t.Fatal(err)
	}
	switch shape {
	case shapeStream:
		req.Body, req.ContentLength = io.NopCloser(body), size
	case shapeVec:
		b, _ := io.ReadAll(body)
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	case shapeChunked:
		req.Body, req.ContentLength = io.NopCloser(body), -1
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", mime)
	req.Header.Set("X-SHA-256", hash)
	// reqwest follows no redirect with a stream body; neither does this.
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("PUT /media/upload: %v", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return upAnswer{status: resp.StatusCode, reason: resp.Header.Get("X-Reason"), body: out}
}

// buJoin makes k a member: k creates a private channel (its first member).
func buJoin(t *testing.T, h *hosted, k user) string {
	t.Helper()
	ch := testkit.ChannelID()
	h.accept(k, signed(t, k, 9007, nostr.Tags{{"h", ch}, {"name", "media"}, {"channel_type", "stream"}, {"visibility", "private"}}, ""))
	return ch
}

// TestAppUploadOfAnySize: Buzz desktop's own upload call (one PUT
// /media/upload of the whole file) stores blobs above the 4 MiB a function
// takes, up to max_blob_bytes, through the front (localdev/emulator
// front.go, CloudFront's stand-in): a 50 MiB file streamed as the app's
// progress path streams it and a 6 MiB Vec<u8> body, each answered with
// the descriptor the app parses, then read back by another member of the
// channel it is shared in (and not by a stranger). Attacks, each refused
// before a byte is stored: a wrong hash, no authorization, an expired one,
// a non-member, a banned key, another community's host (with its own
// server tag, and with this one's), a body over max_blob_bytes, and a
// body without a length.
func TestAppUploadOfAnySize(t *testing.T) {
	r := StartTest(t, Options{Media: true})
	ctx := ctxT(t)
	// Two communities on one deployment: the default on a.test, Bees on
	// b.test.
	if err := community.AddHost(ctx, r.App.Store, "default", "a.test", r.App.Directory); err != nil {
		t.Fatal(err)
	}
	if _, err := community.Create(ctx, r.App.Store, r.App.Sealer, r.App.Directory, community.Spec{ID: "bees", Hosts: []string{"b.test"}, Name: "Bees"}); err != nil {
		t.Fatal(err)
	}
	home, other := onHost(t, r, "a.test"), onHost(t, r, "b.test")
	base, server := home.base(), home.host // do_upload's server tag: the relay URL's authority
	uploader, reader, stranger, banned := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	ch := buJoin(t, home, uploader)
	home.accept(uploader, signed(t, uploader, 9000, nostr.Tags{{"h", ch}, {"p", reader.Pub}}, ""))
	buJoin(t, home, banned)
	if err := r.App.Store.PubkeyRulesPut(ctx, r.App.Config.DefaultCommunity, banned.Pub, "ban", "e2e", time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	hc := home.hc
	hc.Timeout = 5 * time.Minute
	hour := time.Now().Add(time.Hour)

	// The 50 MiB video, streamed; the heap is sampled meanwhile.
	const big = 50 << 20
	bigHash := seededHash(1, big)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	t0 := time.Now()
	a := appUpload(t, hc, base, appUploadAuth(t, uploader, bigHash, server, hour), "video/mp4", bigHash, newSeededBody(1, big), big, shapeStream)
	took := time.Since(t0)
	close(stop)
	checkDescriptor(t, "50 MiB stream", a, bigHash, big, "video/mp4")
	t.Logf("50 MiB streamed upload: %d in %v, heap in use at most %.1f MiB", a.status, took.Round(time.Millisecond), float64(peak.Load())/(1<<20))
	if peak.Load() > 40<<20 {
		t.Errorf("the heap reached %.1f MiB during a 50 MiB upload: the body is held, not streamed", float64(peak.Load())/(1<<20))
	}

	// The Vec<u8> shape, 6 MiB (above the direct limit).
	const mid = 6 << 20
	midHash := seededHash(2, mid)
	a = appUpload(t, hc, base, appUploadAuth(t, uploader, midHash, server, time.Now().Add(5*time.Minute)), "application/pdf", midHash, newSeededBody(2, mid), mid, shapeVec)
	checkDescriptor(t, "6 MiB Vec<u8>", a, midHash, mid, "application/pdf")
	// Sent again: the key owns it already; the same descriptor.
	a = appUpload(t, hc, base, appUploadAuth(t, uploader, midHash, server, time.Now().Add(5*time.Minute)), "application/pdf", midHash, newSeededBody(2, mid), mid, shapeStream)
	checkDescriptor(t, "6 MiB again", a, midHash, mid, "application/pdf")

	// Shared in the private channel, read back by the other member (the
	// app's server-scoped get token), byte for byte; a stranger gets 404.
	link := base + "/media/" + bigHash
	home.accept(uploader, signed(t, uploader, 9, nostr.Tags{{"h", ch}, {"imeta", "url " + link, "x " + bigHash, "m video/mp4"}}, "video "+link))
	if got, status := readBlob(t, hc, link, getAuth(t, reader, server)); status != http.StatusOK || got != bigHash {
		t.Fatalf("the other member read %d, hash %s; want 200 %s", status, got, bigHash)
	}
	if _, status := readBlob(t, hc, link, getAuth(t, stranger, server)); status != http.StatusNotFound {
		t.Fatalf("a stranger read %d, want 404", status)
	}

	// Attacks: 5 MiB bodies (above the direct limit) unless said.
	const n = 5 << 20
	hashOf := func(seed byte) string { return seededHash(seed, n) }
	cases := []struct {
		name   string
		client *http.Client
		base   string
		key    *user
		server string
		exp    time.Time
		claim  string // the hash announced (x tag and X-SHA-256)
		seed   byte   // the body sent
		size   int64
		shape  appShape
		want   int
		reason string
	}{
		{"wrong hash", hc, base, &uploader, server, hour, hashOf(11), 12, n, shapeStream, http.StatusConflict, "invalid:"},
		{"no auth", hc, base, nil, server, hour, hashOf(13), 13, n, shapeStream, http.StatusUnauthorized, "auth-required:"},
		{"expired auth", hc, base, &uploader, server, time.Now().Add(-time.Minute), hashOf(14), 14, n, shapeStream, http.StatusUnauthorized, "auth-required:"},
		{"non-member", hc, base, &stranger, server, hour, hashOf(15), 15, n, shapeStream, http.StatusForbidden, "restricted:"},
		{"banned key", hc, base, &banned, server, hour, hashOf(16), 16, n, shapeStream, http.StatusForbidden, "blocked:"},
		{"another community's host, its server tag", other.hc, other.base(), &uploader, other.host, hour, hashOf(17), 17, n, shapeStream, http.StatusForbidden, "restricted:"},
		{"another community's host, this server tag", other.hc, other.base(), &uploader, server, hour, hashOf(18), 18, n, shapeStream, http.StatusUnauthorized, "auth-required:"},
		{"over max_blob_bytes", hc, base, &uploader, server, hour, hashOf(19), 19, blossom.Defaults.MaxBytes + 1, shapeStream, http.StatusRequestEntityTooLarge, ""},
		{"chunked, no length", hc, base, &uploader, server, hour, hashOf(20), 20, n, shapeChunked, http.StatusLengthRequired, "invalid:"},
	}
	for _, c := range cases {
		auth := ""
		if c.key != nil {
			auth = appUploadAuth(t, *c.key, c.claim, c.server, c.exp)
		}
		a := appUpload(t, c.client, c.base, auth, "video/mp4", c.claim, newSeededBody(c.seed, c.size), c.size, c.shape)
		if a.status != c.want || !strings.HasPrefix(a.reason, c.reason) {
			t.Errorf("%s: %d %q %s; want %d %s", c.name, a.status, a.reason, a.body, c.want, c.reason)
		}
		// Nothing of it is stored: neither the claimed hash nor the bytes'.
		for _, h := range []string{c.claim, seededHashOf(c.seed, c.size, n)} {
			if h == "" {
				continue
			}
			if held, err := r.App.Store.BlobsGetAccess(ctx, r.App.Config.DefaultCommunity, h, uploader.Pub); err != nil || held.Blob != nil {
				t.Errorf("%s: a blob %s is stored (%v)", c.name, h, err)
			}
		}
	}
}

// seededHashOf is the hash of the attack's body when it is small enough
// to hash here, "" for the over-size body (never sent whole).
func seededHashOf(seed byte, size, n int64) string {
	if size != n {
		return ""
	}
	return seededHash(seed, size)
}

func checkDescriptor(t *testing.T, what string, a upAnswer, hash string, size int64, mime string) {
	t.Helper()
	if a.status/100 != 2 {
		t.Fatalf("%s: %d %s %s", what, a.status, a.reason, a.body)
	}
	var d appBlob
	if err := json.Unmarshal(a.body, &d); err != nil || d.URL == nil || d.SHA256 == nil || d.Size == nil || d.Type == nil || d.Uploaded == nil {
		t.Fatalf("%s: the app cannot parse %s (%v)", what, a.body, err)
	}
	if *d.SHA256 != hash || int64(*d.Size) != size || *d.Type != mime || !strings.Contains(*d.URL, hash) {
		t.Fatalf("%s: descriptor %s", what, a.body)
	}
}

// getAuth is the app's server-scoped t=get token (sign_blossom_get_auth_header).
func getAuth(t *testing.T, k user, server string) string {
	t.Helper()
	ev := &nostr.Event{Kind: blossom.AuthKind, CreatedAt: nostr.Now(), Content: "Get buzz-media", Tags: nostr.Tags{
		{"t", "get"}, {"expiration", strconv.FormatInt(time.Now().Add(10*time.Minute).Unix(), 10)}, {"server", server}}}
	if err := k.Sign(ev); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(ev)
	return "Nostr " + base64.RawURLEncoding.EncodeToString(raw)
}

// readBlob GETs link with auth (through hc, which reaches the relay),
// follows the redirect to storage, and returns the SHA-256 of what arrived
// with the final status.
func readBlob(t *testing.T, hc *http.Client, link, auth string) (string, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	req.Header.Set("Authorization", auth)
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode == http.StatusFound && loc != "" {
		_ = resp.Body.Close()
		if resp, err = http.Get(loc); err != nil {
			t.Fatal(err)
		}
	}
	defer resp.Body.Close()
	h := sha256.New()
	_, _ = io.Copy(h, resp.Body)
	return hex.EncodeToString(h.Sum(nil)), resp.StatusCode
}
