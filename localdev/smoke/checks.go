package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"
)

// Config says which relay to check and how.
type Config struct {
	URL       string // http(s)://host
	WSURL     string // ws(s)://host; derived from URL when empty
	SecretKey string // hex; a fresh key when empty
	Timeout   time.Duration
	Wait      time.Duration // wait this long for /healthz first (0: do not)
}

type check struct {
	name  string
	needs []string // checks that must have passed first
	fn    func(*smoke, context.Context) (string, error)
}

var checks = []check{
	{"nip11", nil, (*smoke).nip11},
	{"healthz", nil, (*smoke).healthz},
	{"auth", nil, (*smoke).auth},
	{"create-channel", []string{"auth"}, (*smoke).createChannel},
	{"post", []string{"create-channel"}, (*smoke).post},
	{"window-query", []string{"nip11", "post"}, (*smoke).windowQuery},
	{"live-delivery", []string{"create-channel"}, (*smoke).liveDelivery},
	{"count", []string{"post"}, (*smoke).count},
	{"app-upload", []string{"nip11", "create-channel"}, (*smoke).appUpload},
	{"delete-channel", []string{"create-channel"}, (*smoke).deleteChannel},
}

type smoke struct {
	cfg         Config
	base, ws    string
	sk, pk      string
	http        *http.Client
	relay       *nostr.Relay
	relayPubkey string
	channel     string
	posts       []string
	// media is NIP-11's media object (nil: media is off here).
	media *struct {
		MaxBlobBytes         int64 `json:"max_blob_bytes"`
		DirectUploadMaxBytes int64 `json:"direct_upload_max_bytes"`
	}
	passed map[string]bool
}

func newSmoke(cfg Config, out io.Writer) (*smoke, error) {
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL must be http(s)://host, got %q", cfg.URL)
	}
	s := &smoke{cfg: cfg, base: u.Scheme + "://" + u.Host + u.Path, ws: cfg.WSURL,
		http: &http.Client{Timeout: cfg.Timeout}, passed: map[string]bool{}}
	if s.ws == "" {
		s.ws = "ws" + strings.TrimPrefix(s.base, "http")
	}
	s.sk = cfg.SecretKey
	if s.sk == "" {
		s.sk = nostr.GeneratePrivateKey()
	}
	if s.pk, err = nostr.GetPublicKey(s.sk); err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	fmt.Fprintf(out, "smoke: %s and %s as %s\n", s.base, s.ws, s.pk)
	return s, nil
}

func (s *smoke) close() {
	if s.relay != nil {
		_ = s.relay.Close()
	}
}

func (s *smoke) run(ctx context.Context, c check) (string, error) {
	for _, n := range c.needs {
		if !s.passed[n] {
			return "", fmt.Errorf("skipped: needs %s", n)
		}
	}
	detail, err := c.fn(s, ctx)
	if err == nil {
		s.passed[c.name] = true
	}
	return detail, err
}

func (s *smoke) get(ctx context.Context, path, accept string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return s.do(req)
}

func (s *smoke) do(req *http.Request) (int, []byte, error) {
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, body, err
}

func (s *smoke) nip11(ctx context.Context) (string, error) {
	status, body, err := s.get(ctx, "/", "application/nostr+json")
	if err != nil {
		return "", err
	}
	var info struct {
		Name          string `json:"name"`
		Pubkey        string `json:"pubkey"`
		SupportedNIPs []any  `json:"supported_nips"`
		Media         *struct {
			MaxBlobBytes         int64 `json:"max_blob_bytes"`
			DirectUploadMaxBytes int64 `json:"direct_upload_max_bytes"`
		} `json:"media"`
	}
	if status != 200 || json.Unmarshal(body, &info) != nil {
		return "", fmt.Errorf("GET / (application/nostr+json): %d %.200s", status, body)
	}
	if _, err := hex.DecodeString(info.Pubkey); err != nil || len(info.Pubkey) != 64 {
		return "", fmt.Errorf("NIP-11 pubkey %q is not 64 hex", info.Pubkey)
	}
	s.relayPubkey, s.media = info.Pubkey, info.Media
	return fmt.Sprintf("%q, relay pubkey %s, %d NIPs", info.Name, info.Pubkey, len(info.SupportedNIPs)), nil
}

// healthz checks the shallow health answer (no database) and the deep one.
func (s *smoke) healthz(ctx context.Context) (string, error) {
	var got []string
	for _, path := range []string{"/healthz", "/healthz?deep=1"} {
		status, body, err := s.get(ctx, path, "")
		if err != nil {
			return "", err
		}
		if status != 200 {
			return "", fmt.Errorf("GET %s: %d %.200s", path, status, body)
		}
		got = append(got, path+" 200 "+string(bytes.TrimSpace(body)))
	}
	return strings.Join(got, ", "), nil
}

// waitHealthy polls GET /healthz until it answers 200 or d has passed.
func (s *smoke) waitHealthy(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		if status, _, err := s.get(ctx, "/healthz", ""); err == nil && status == 200 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("GET %s/healthz did not answer 200 within %s", s.base, d)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// connect opens an authenticated go-nostr connection: a first REQ makes
// the relay send its challenge, then AUTH answers it.
func (s *smoke) connect(ctx context.Context) (*nostr.Relay, error) {
	rl, err := nostr.RelayConnect(ctx, s.ws)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", s.ws, err)
	}
	sub, err := rl.Subscribe(ctx, nostr.Filters{{Kinds: []int{1}, Limit: 1}})
	if err != nil {
		rl.Close()
		return nil, fmt.Errorf("first REQ: %w", err)
	}
	for answered := false; !answered; {
		select {
		case <-sub.Events:
		case <-sub.ClosedReason:
			answered = true
		case <-sub.EndOfStoredEvents:
			answered = true
		case <-ctx.Done():
			rl.Close()
			return nil, errors.New("no answer to the first REQ")
		}
	}
	sub.Unsub()
	if err := rl.Auth(ctx, func(ev *nostr.Event) error { return ev.Sign(s.sk) }); err != nil {
		rl.Close()
		return nil, fmt.Errorf("AUTH: %w", err)
	}
	return rl, nil
}

func (s *smoke) auth(ctx context.Context) (string, error) {
	rl, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	s.relay = rl
	return "NIP-42 AUTH accepted for " + s.pk[:12] + "…", nil
}

func (s *smoke) publish(ctx context.Context, kind int, tags nostr.Tags, content string) (*nostr.Event, error) {
	ev := &nostr.Event{Kind: kind, CreatedAt: nostr.Now(), Tags: tags, Content: content}
	if err := ev.Sign(s.sk); err != nil {
		return nil, err
	}
	if err := s.relay.Publish(ctx, *ev); err != nil {
		return nil, fmt.Errorf("EVENT kind %d: %w", kind, err)
	}
	return ev, nil
}

func (s *smoke) createChannel(ctx context.Context) (string, error) {
	id := uuid.NewString()
	if _, err := s.publish(ctx, 9007, nostr.Tags{{"h", id}, {"name", "smoke-" + id[:8]}, {"visibility", "open"}}, ""); err != nil {
		return "", err
	}
	s.channel = id
	return "kind 9007, channel " + id, nil
}

func (s *smoke) post(ctx context.Context) (string, error) {
	ev, err := s.publish(ctx, 9, nostr.Tags{{"h", s.channel}}, "smoke test message")
	if err != nil {
		return "", err
	}
	s.posts = append(s.posts, ev.ID)
	return "kind 9 " + ev.ID[:12] + "… over WebSocket", nil
}

// token is a NIP-98 Authorization header for method url with body.
func (s *smoke) token(method, u string, body []byte) (string, error) {
	tags := nostr.Tags{{"u", u}, {"method", method}}
	if len(body) > 0 {
		sum := sha256.Sum256(body)
		tags = append(tags, nostr.Tag{"payload", hex.EncodeToString(sum[:])})
	}
	ev := nostr.Event{Kind: 27235, CreatedAt: nostr.Now(), Tags: tags}
	if err := ev.Sign(s.sk); err != nil {
		return "", err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	return "Nostr " + base64.StdEncoding.EncodeToString(b), nil
}

func (s *smoke) postJSON(ctx context.Context, path string, body []byte) (int, []byte, error) {
	auth, err := s.token(http.MethodPost, s.base+path, body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	return s.do(req)
}

func (s *smoke) windowQuery(ctx context.Context) (string, error) {
	body, _ := json.Marshal([]map[string]any{{"kinds": []int{9}, "#h": []string{s.channel}, "limit": 20,
		"top_level": true, "include_summaries": true, "include_aux": true}})
	status, resp, err := s.postJSON(ctx, "/query", body)
	if err != nil {
		return "", err
	}
	var evs []nostr.Event
	if status != 200 || json.Unmarshal(resp, &evs) != nil {
		return "", fmt.Errorf("POST /query: %d %.300s", status, resp)
	}
	rows, found := 0, false
	var bounds *nostr.Event
	for i := range evs {
		switch evs[i].Kind {
		case 9:
			rows++
			found = found || evs[i].ID == s.posts[0]
		case 39006:
			bounds = &evs[i]
		}
	}
	if !found {
		return "", fmt.Errorf("the posted message is not among the %d window rows", rows)
	}
	if bounds == nil {
		return "", errors.New("no kind 39006 window bounds in the answer")
	}
	if ok, err := bounds.CheckSignature(); !ok || err != nil || bounds.PubKey != s.relayPubkey {
		return "", errors.New("the 39006 window bounds are not signed by the NIP-11 relay pubkey")
	}
	return fmt.Sprintf("NIP-98 POST /query: %d row(s), 39006 %s", rows, bounds.Content), nil
}

// liveDelivery subscribes on a second connection, posts over POST /events
// and waits for the event to arrive live.
func (s *smoke) liveDelivery(ctx context.Context) (string, error) {
	sub2, err := s.connect(ctx)
	if err != nil {
		return "", fmt.Errorf("second connection: %w", err)
	}
	defer sub2.Close()
	since := nostr.Now() - 1
	sub, err := sub2.Subscribe(ctx, nostr.Filters{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {s.channel}}, Since: &since}})
	if err != nil {
		return "", fmt.Errorf("REQ: %w", err)
	}
	defer sub.Unsub()
	// Stored events come first (and must be read for EOSE to come through).
	for eose := false; !eose; {
		select {
		case <-sub.Events:
		case <-sub.EndOfStoredEvents:
			eose = true
		case reason := <-sub.ClosedReason:
			return "", fmt.Errorf("REQ closed: %s", reason)
		case <-ctx.Done():
			return "", errors.New("no EOSE")
		}
	}
	ev := nostr.Event{Kind: 9, CreatedAt: nostr.Now(), Tags: nostr.Tags{{"h", s.channel}}, Content: "smoke live message"}
	if err := ev.Sign(s.sk); err != nil {
		return "", err
	}
	body, _ := json.Marshal(ev)
	start := time.Now()
	status, resp, err := s.postJSON(ctx, "/events", body)
	if err != nil {
		return "", err
	}
	var ok struct {
		Accepted bool   `json:"accepted"`
		Message  string `json:"message"`
	}
	if status != 200 || json.Unmarshal(resp, &ok) != nil || !ok.Accepted {
		return "", fmt.Errorf("POST /events: %d %.300s", status, resp)
	}
	s.posts = append(s.posts, ev.ID)
	for {
		select {
		case got := <-sub.Events:
			if got != nil && got.ID == ev.ID {
				return fmt.Sprintf("posted over POST /events, delivered to a WebSocket subscriber in %s", time.Since(start).Round(time.Millisecond)), nil
			}
		case reason := <-sub.ClosedReason:
			return "", fmt.Errorf("subscription closed: %s", reason)
		case <-ctx.Done():
			return "", errors.New("the event posted over POST /events did not arrive live")
		}
	}
}

func (s *smoke) count(ctx context.Context) (string, error) {
	n, _, err := s.relay.Count(ctx, nostr.Filters{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {s.channel}}}})
	if err != nil {
		return "", fmt.Errorf("COUNT: %w", err)
	}
	if n < int64(len(s.posts)) {
		return "", fmt.Errorf("COUNT says %d, but %d messages were posted", n, len(s.posts))
	}
	return fmt.Sprintf("COUNT kind 9 in the channel: %d", n), nil
}

func (s *smoke) deleteChannel(ctx context.Context) (string, error) {
	if _, err := s.publish(ctx, 9008, nostr.Tags{{"h", s.channel}}, ""); err != nil {
		return "", err
	}
	return "kind 9008, the smoke channel is gone", nil
}

// appUpload uploads a blob 1 MiB above the direct limit with Buzz
// desktop's own call (do_upload: one PUT /media/upload of the whole body,
// streamed with its Content-Length, a 24242 upload event with the x,
// expiration and server tags, base64url) and reads it back through the
// redirect to storage: after a deploy, the distribution's edge upload path
// end to end (docs/deploy.md, "The upload path"). A relay without media
// (no NIP-11 media object) passes it as not served.
func (s *smoke) appUpload(ctx context.Context) (string, error) {
	if s.media == nil || s.media.DirectUploadMaxBytes <= 0 {
		return "media is not served here (NIP-11 has no media object)", nil
	}
	n := s.media.DirectUploadMaxBytes + 1<<20
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i*7 + i>>12)
	}
	copy(body, s.pk) // a blob of this run's own
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	u, _ := url.Parse(s.base)
	auth := func(verb string, tags ...nostr.Tag) (string, error) {
		ev := nostr.Event{Kind: 24242, CreatedAt: nostr.Now(), Content: verb + " buzz-media", Tags: append(nostr.Tags{
			{"t", verb}, {"expiration", fmt.Sprint(time.Now().Add(time.Hour).Unix())}, {"server", u.Host}}, tags...)}
		if err := ev.Sign(s.sk); err != nil {
			return "", err
		}
		b, _ := json.Marshal(ev)
		return "Nostr " + base64.RawURLEncoding.EncodeToString(b), nil
	}
	up, err := auth("upload", nostr.Tag{"x", hash})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.base+"/media/upload", io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		return "", err
	}
	req.ContentLength = n // set by the app itself; no GetBody: the stream cannot be sent twice
	req.Header.Set("Authorization", up)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-SHA-256", hash)
	start := time.Now()
	status, out, err := s.do(req)
	if err != nil {
		return "", err
	}
	var d struct {
		URL, SHA256, Type string
		Size              int64
		Uploaded          int64
	}
	if status/100 != 2 || json.Unmarshal(out, &d) != nil || d.SHA256 != hash || d.Size != n || d.URL == "" || d.Uploaded == 0 {
		return "", fmt.Errorf("PUT /media/upload of %d bytes: %d %.300s", n, status, out)
	}
	took := time.Since(start)
	get, err := auth("get")
	if err != nil {
		return "", err
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/media/"+hash, nil)
	req.Header.Set("Authorization", get)
	noFollow := *s.http
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc == "" {
		return "", fmt.Errorf("GET /media/%s: %d, want a redirect to storage", hash[:12], resp.StatusCode)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, loc, nil) // storage's own authorization is in the URL
	if status, out, err = s.do(req); err != nil {
		return "", err
	}
	if got := sha256.Sum256(out); status != http.StatusOK || hex.EncodeToString(got[:]) != hash {
		return "", fmt.Errorf("GET /media/%s: %d, %d bytes", hash[:12], status, len(out))
	}
	return fmt.Sprintf("%d bytes with the Buzz app's PUT /media/upload in %v, read back", n, took.Round(time.Millisecond)), nil
}
