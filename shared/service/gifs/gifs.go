// Package gifs is Buzz's GIF proxy as a use case: a community's members
// search KLIPY's GIF catalogue and report the GIF they send, through the
// relay, which holds the provider key (block/buzz crates/buzz-relay/src/
// api/gifs.rs, docs/gifs.md). GIF bytes never pass through the relay: the
// answer carries KLIPY's CDN URLs, and a GIF is sent as an ordinary
// message naming one.
//
// The outbound call is no SSRF vector: its host is fixed at start (KLIPY's
// API, or a loopback fake in tests), the client follows no redirect (the
// key rides in the path), every call has a deadline, an answer above
// MaxUpstreamBytes is dropped, and only the result data of a successful
// search is passed on (never the provider's error text). The door
// (guard.GIF) admits members that are not banned and counts each call
// against the key's GIF limit.
package gifs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/guard"
)

// DefaultBase is KLIPY's API root; the key is the next path segment.
const DefaultBase = "https://api.klipy.com/api/v1/"

// Bounds of the proxy (Buzz's).
const (
	UpstreamTimeout  = 10 * time.Second
	MaxUpstreamBytes = 2 << 20
	PerPage          = 24
	MaxQuery         = 200 // characters
	MaxCustomerID    = 128
	MaxLocale        = 32
	MaxSlug          = 200
)

// ErrUpstream is every failure of the provider, said without its details
// (never the key, the provider's text or a redirect's target): the
// transport answers it 502.
var ErrUpstream = reject.New(reject.Internal, "the GIF provider is unavailable")

// Refusals of a bad request body.
var (
	errSearchJSON = reject.Invalidf("invalid GIF search JSON")
	errShareJSON  = reject.Invalidf("invalid GIF share JSON")
)

// Service proxies GIF searches. Safe for concurrent use.
type Service struct {
	// Key is the provider key; "": the proxy is off (On).
	Key string
	// Base is the provider's API root (DefaultBase unless a test sets a
	// loopback fake); its host is the only one the proxy calls.
	Base *url.URL
	// Client makes the calls (NewClient's: no redirects, a deadline).
	Client *http.Client
	Guard  *guard.Guard
	Log    *slog.Logger
}

// New is the proxy with key over base ("" for DefaultBase).
func New(key, base string, g *guard.Guard, log *slog.Logger) (*Service, error) {
	if base == "" {
		base = DefaultBase
	}
	u, err := ParseBase(base)
	if err != nil {
		return nil, err
	}
	return &Service{Key: key, Base: u, Client: NewClient(), Guard: g, Log: log}, nil
}

// ParseBase checks a provider API root: https, or http to a loopback
// address (a test's fake provider), with a host and no query.
func ParseBase(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("gifs: provider base %q must be an absolute URL without query or credentials", base)
	}
	host := u.Hostname()
	loopback := host == "127.0.0.1" || host == "::1" || host == "localhost"
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return nil, fmt.Errorf("gifs: provider base %q must be https (http only to loopback)", base)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// NewClient is the proxy's HTTP client: a redirect is returned as it is
// (and then refused), never followed; every call ends within
// UpstreamTimeout.
func NewClient() *http.Client {
	return &http.Client{
		Timeout:       UpstreamTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// On reports whether a provider key is configured.
func (s *Service) On() bool { return s != nil && s.Key != "" }

// Caller is who calls: the NIP-98 signer in a community.
type Caller struct{ Community, Pubkey string }

// SearchRequest is POST /gifs/search's body.
type SearchRequest struct {
	Query      *string `json:"query"`
	CustomerID *string `json:"customer_id"`
	Locale     *string `json:"locale"`
}

// ShareRequest is POST /gifs/share's body.
type ShareRequest struct {
	Slug       *string `json:"slug"`
	CustomerID *string `json:"customer_id"`
}

// Search is one search (an empty query: trending) for c: the provider's
// result data as {"result": true, "data": ...}.
func (s *Service) Search(ctx context.Context, c Caller, body []byte) (json.RawMessage, error) {
	if err := s.admit(ctx, c); err != nil {
		return nil, err
	}
	var req SearchRequest
	if json.Unmarshal(body, &req) != nil || req.Query == nil || req.CustomerID == nil || req.Locale == nil {
		return nil, errSearchJSON
	}
	q := strings.TrimSpace(*req.Query)
	if err := firstErr(text("query", *req.Query, MaxQuery, true), text("customer_id", *req.CustomerID, MaxCustomerID, false),
		text("locale", *req.Locale, MaxLocale, false)); err != nil {
		return nil, err
	}
	endpoint := "trending"
	params := url.Values{"page": {"1"}, "per_page": {fmt.Sprint(PerPage)}, "customer_id": {*req.CustomerID}, "locale": {*req.Locale}}
	if q != "" {
		endpoint = "search"
		params.Set("q", q)
	}
	resp, err := s.call(ctx, http.MethodGet, s.url("gifs", endpoint)+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var up struct {
		Result bool            `json:"result"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(resp, &up) != nil || !up.Result {
		s.warn(ctx, "search: the provider answered no result")
		return nil, ErrUpstream
	}
	if len(up.Data) == 0 {
		up.Data = json.RawMessage("null")
	}
	return json.Marshal(struct {
		Result bool            `json:"result"`
		Data   json.RawMessage `json:"data"`
	}{true, up.Data})
}

// Share reports the GIF slug as sent by c (the provider's "recents").
func (s *Service) Share(ctx context.Context, c Caller, body []byte) error {
	if err := s.admit(ctx, c); err != nil {
		return err
	}
	var req ShareRequest
	if json.Unmarshal(body, &req) != nil || req.Slug == nil || req.CustomerID == nil {
		return errShareJSON
	}
	if err := firstErr(text("slug", *req.Slug, MaxSlug, false), text("customer_id", *req.CustomerID, MaxCustomerID, false)); err != nil {
		return err
	}
	out, _ := json.Marshal(map[string]string{"customer_id": *req.CustomerID})
	_, err := s.call(ctx, http.MethodPost, s.url("gifs", "share", strings.TrimSpace(*req.Slug)), out)
	return err
}

// admit is the door: the proxy on, then guard.GIF.
func (s *Service) admit(ctx context.Context, c Caller) error {
	if s.Guard == nil {
		return errors.New("gifs: no door guard configured")
	}
	_, err := s.Guard.Admit(ctx, guard.Door{Community: c.Community, Caller: guard.Caller{Pubkey: c.Pubkey}, Action: guard.GIF})
	return err
}

// url is the provider URL of path's segments under the key, each escaped
// as one segment (a slug with a slash stays one segment).
func (s *Service) url(segments ...string) string {
	p := s.Base.EscapedPath() + url.PathEscape(s.Key)
	for _, seg := range segments {
		p += "/" + url.PathEscape(seg)
	}
	return s.Base.Scheme + "://" + s.Base.Host + p
}

// call makes one provider call: any failure, a status other than 2xx (a
// redirect included) or an answer above MaxUpstreamBytes is ErrUpstream,
// logged without the URL (it carries the key).
func (s *Service) call(ctx context.Context, method, target string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, UpstreamTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, ErrUpstream
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		s.warn(ctx, "call failed", "timeout", errors.Is(err, context.DeadlineExceeded))
		return nil, ErrUpstream
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		s.warn(ctx, "the provider refused", "status", resp.StatusCode)
		return nil, ErrUpstream
	}
	if resp.ContentLength > MaxUpstreamBytes {
		return nil, ErrUpstream
	}
	out, err := io.ReadAll(io.LimitReader(resp.Body, MaxUpstreamBytes+1))
	if err != nil || len(out) > MaxUpstreamBytes {
		s.warn(ctx, "the answer was unreadable or too large")
		return nil, ErrUpstream
	}
	return out, nil
}

func (s *Service) warn(ctx context.Context, msg string, args ...any) {
	if s.Log != nil {
		s.Log.WarnContext(ctx, "gifs: "+msg, args...)
	}
}

// text checks a field: at most max characters, non-blank unless empty is
// allowed.
func text(name, v string, max int, empty bool) error {
	if (!empty && strings.TrimSpace(v) == "") || utf8.RuneCountInString(v) > max {
		least := 1
		if empty {
			least = 0
		}
		return reject.Invalidf("%s must be %d through %d characters", name, least, max)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
