package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

// attachmentAnswer is what Buzz desktop's admin_fetch_feedback_attachment
// reads: the status (a 3xx is its admin_attachment_redirect error), the
// headers (Content-Type against the imeta m, Content-Length against its
// size and the 10 MiB preview cap) and the body's SHA-256.
type attachmentAnswer struct {
	status int
	header http.Header
	size   int64
	hash   string
	body   []byte // kept when small
}

// appAttachment is the admin console's attachment call: GET
// {origin}/api/admin/v1/feedback/{id}/attachments/{sha256} with a NIP-98
// token over that URL (no payload), from a client that follows no
// redirect (commands/admin/client.rs: redirect::Policy::none()), Range
// when given (the app sends none; a player would).
func appAttachment(t *testing.T, h *hosted, u *user, id, hash, rng string) attachmentAnswer {
	t.Helper()
	link := h.base() + "/api/admin/v1/feedback/" + id + "/attachments/" + hash
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u != nil {
		req.Header.Set("Authorization", u.Token(t, http.MethodGet, link, nil, time.Now()))
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	c := *h.hc
	c.Timeout = 2 * time.Minute
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", link, err)
		return attachmentAnswer{}
	}
	defer resp.Body.Close()
	sum := sha256.New()
	var kept bytes.Buffer
	n, err := io.Copy(io.MultiWriter(sum, &limitedBuffer{&kept, 64 << 10}), resp.Body)
	if err != nil {
		t.Errorf("GET %s: body: %v", link, err)
	}
	return attachmentAnswer{status: resp.StatusCode, header: resp.Header, size: n, hash: hex.EncodeToString(sum.Sum(nil)), body: kept.Bytes()}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// pngBody is n bytes that sniff as a PNG (its signature, then noise).
func pngBody(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	return b
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestDesktopFeedbackAttachment: GET /api/admin/v1/feedback/{id}/
// attachments/{sha256} as Buzz desktop's admin console sends it (NIP-98,
// no redirect followed): a 6 MiB PNG a member attached to her feedback
// (uploaded with the app's own call, above what a function carries) comes
// back byte for byte with 200, image/png sniffed from its bytes, its
// Content-Length and the admin API's headers, streamed from the bucket by
// the front on the same request (no redirect); an HTML file labelled
// image/png downloads as application/octet-stream; a Range is served.
// Attacks: a stranger, a member (the submitter herself), another
// community's operator and a banned key 403; no token 401; the feedback
// through another community's host, an attachment of another feedback, a
// blob the community holds that no feedback names, a hash nobody holds
// and a malformed one: one 404, the same body; 30 operators' reads at
// once all whole.
func TestDesktopFeedbackAttachment(t *testing.T) {
	s := newDesktopSetup(t, Options{Media: true})
	a := s.a
	server := a.host
	upload := func(body []byte, mime string) string {
		t.Helper()
		h := hashOf(body)
		ans := appUpload(t, a.hc, a.base(), appUploadAuth(t, s.alice, h, server, time.Now().Add(10*time.Minute)), mime, h, bytes.NewReader(body), int64(len(body)), shapeVec)
		checkDescriptor(t, mime, ans, h, int64(len(body)), mime)
		return h
	}
	const big = 6 << 20
	png := pngBody(1, big)
	pngHash := upload(png, "image/png")
	html := []byte("<!DOCTYPE html><html><body><script>alert(document.domain)</script></body></html>")
	htmlHash := upload(html, "image/png")
	other := pngBody(2, 4096)
	otherHash := upload(other, "image/png")
	stray := pngBody(3, 2048) // in the community, named by no feedback
	strayHash := upload(stray, "image/png")

	imeta := func(hash, mime string, size int) nostr.Tag {
		return nostr.Tag{"imeta", "url " + a.base() + "/media/" + hash + ".png", "x " + hash, "m " + mime, "size " + strconv.Itoa(size)}
	}
	fb := signed(t, s.alice, 42000, nostr.Tags{{"category", "bug"}, imeta(pngHash, "image/png", big),
		// The descriptor's own URL form (no /media/) names a blob too.
		{"imeta", "url " + a.base() + "/" + htmlHash + ".png", "x " + htmlHash, "m image/png", "size " + strconv.Itoa(len(html))}},
		"the sidebar flickers, screenshots attached")
	a.accept(s.alice, fb)
	fb2 := signed(t, s.alice, 42000, nostr.Tags{imeta(otherHash, "image/png", len(other))}, "another one")
	a.accept(s.alice, fb2)
	id, id2 := AdminIDOf(fb.ID), AdminIDOf(fb2.ID)

	// The app's call: 200, the bytes, no redirect.
	t0 := time.Now()
	got := appAttachment(t, a, &s.op, id, pngHash, "")
	took := time.Since(t0)
	if got.status != http.StatusOK || got.hash != pngHash || got.size != big {
		t.Fatalf("the PNG: %d, %d bytes hashing %s (%s)", got.status, got.size, got.hash, got.body[:min(len(got.body), 200)])
	}
	t.Logf("6 MiB attachment streamed through the front in %v", took.Round(time.Millisecond))
	for k, want := range map[string]string{"Content-Type": "image/png", "Content-Length": strconv.Itoa(big), "Content-Disposition": "inline",
		"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'", "Location": "", "X-Buzz-Stream": ""} {
		if v := got.header.Get(k); v != want {
			t.Errorf("the PNG's %s: %q, want %q", k, v, want)
		}
	}
	// The HTML labelled a PNG: downloaded, never rendered.
	got = appAttachment(t, a, &s.op, id, htmlHash, "")
	if got.status != http.StatusOK || got.hash != htmlHash || got.header.Get("Content-Type") != "application/octet-stream" ||
		got.header.Get("Content-Disposition") != "attachment" || got.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the HTML: %d %v %s", got.status, got.header, got.body)
	}
	// A player's Range.
	got = appAttachment(t, a, &s.op, id, pngHash, "bytes=100-199")
	if got.status != http.StatusPartialContent || !bytes.Equal(got.body, png[100:200]) || got.header.Get("Content-Range") != "bytes 100-199/"+strconv.Itoa(big) {
		t.Errorf("a range: %d %v", got.status, got.header)
	}

	// The attackers: the door answers before anything is looked up.
	for _, c := range []struct {
		name string
		u    user
	}{{"stranger", s.stranger}, {"member (the submitter)", s.alice}, {"another community's operator", s.opB}, {"banned key", s.banned}} {
		got := appAttachment(t, a, &c.u, id, pngHash, "")
		if got.status != http.StatusForbidden || !strings.Contains(string(got.body), "restricted:") || got.size > 1024 {
			t.Errorf("%s: %d %s", c.name, got.status, got.body)
		}
	}
	if got := appAttachment(t, a, nil, id, pngHash, ""); got.status != http.StatusUnauthorized || got.header.Get("WWW-Authenticate") != "Nostr" || got.size > 1024 {
		t.Errorf("no token: %d %v", got.status, got.header)
	}
	// Not found, not yours, not named: one answer.
	var first []byte
	for _, c := range []struct {
		name string
		h    *hosted
		u    *user
		id   string
		hash string
	}{
		{"the feedback through another community's host", s.b, &s.opB, id, pngHash},
		{"an attachment of another feedback", a, &s.op, id, otherHash},
		{"the other feedback's own attachment asked through this one's id", a, &s.op, id2, pngHash},
		{"a blob of the community no feedback names", a, &s.op, id, strayHash},
		{"a hash nobody holds", a, &s.op, id, strings.Repeat("ab", 32)},
		{"an uppercase hash", a, &s.op, id, strings.ToUpper(pngHash)},
		{"a made-up feedback id", a, &s.op, "00000000-0000-4000-8000-000000000000", pngHash},
	} {
		got := appAttachment(t, c.h, c.u, c.id, c.hash, "")
		if got.status != http.StatusNotFound || got.size > 1024 {
			t.Errorf("%s: %d %s", c.name, got.status, got.body)
			continue
		}
		if first == nil {
			first = got.body
		} else if !bytes.Equal(got.body, first) {
			t.Errorf("%s: %s, unlike %s", c.name, got.body, first)
		}
	}
	// The other feedback's attachment through its own id: served.
	if got := appAttachment(t, a, &s.op, id2, otherHash, ""); got.status != http.StatusOK || got.hash != otherHash {
		t.Errorf("the other feedback's attachment: %d", got.status)
	}

	// 30 at once, each its own token: all whole.
	var wg sync.WaitGroup
	results := make([]attachmentAnswer, 30)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = appAttachment(t, a, &s.op, id, pngHash, "")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.status != http.StatusOK || r.hash != pngHash {
			t.Errorf("read %d of 30: %d, %d bytes", i, r.status, r.size)
		}
	}
}
