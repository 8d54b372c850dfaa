package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/invite"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/invites"
)

// Buzz's invite routes (block/buzz crates/buzz-relay/src/api/invites.rs),
// over shared/service/invites (shared/transport/routes routes them): POST /api/invites and POST
// /api/invites/claim (NIP-98, the writing function's), GET
// /api/join-policy with its /terms and /privacy pages, POST
// /api/invites/accept-policy and the /invite/{code} landing page (the
// reading function's).

// InfoJSON is GET /info: the desktop's invite calls read it first (the
// canonical origin to sign NIP-98 for, push.origin); without one
// advertised it signs for the host it rides. The NIP-11 document, as JSON.
func (b *Bridge) InfoJSON(ctx context.Context, r Request) Response {
	r.Headers = map[string]string{"accept": "application/nostr+json"}
	return b.Info(ctx, r)
}

// mintRequest is POST /api/invites's body (both fields optional).
type mintRequest struct {
	TTLSecs *int64 `json:"ttl_secs"`
	MaxUses *int   `json:"max_uses"`
}

// mintResponse is its answer: Buzz's fields and the landing page's url.
type mintResponse struct {
	invites.Minted
	URL string `json:"url"`
}

// MintInvite is POST /api/invites: invites.Service.Mint.
func (b *Bridge) MintInvite(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.Fail(ctx, "invite mint", err)
	}
	var req mintRequest
	if len(strings.TrimSpace(string(r.Body))) > 0 {
		if err := json.Unmarshal(r.Body, &req); err != nil {
			return b.Fail(ctx, "invite mint", reject.Invalidf("invalid invite JSON: %s", err))
		}
	}
	terms, err := invite.NewTerms(req.TTLSecs, req.MaxUses)
	if err != nil {
		return b.Fail(ctx, "invite mint", err)
	}
	m, err := b.Invites.Mint(ctx, invites.Caller{Community: c.ID, Pubkey: pubkey}, terms)
	if err != nil {
		return b.Fail(ctx, "invite mint", err)
	}
	return JSON(http.StatusOK, mintResponse{Minted: m, URL: r.Scheme + "://" + r.Host + "/invite/" + url.PathEscape(m.Code)})
}

// claimRequest is POST /api/invites/claim's body.
type claimRequest struct {
	Code          string `json:"code"`
	PolicyReceipt string `json:"policy_receipt"`
}

// claimResponse is Buzz's answer to a claim.
type claimResponse struct {
	Status      string `json:"status"`
	CommunityID string `json:"community_id"`
	Host        string `json:"host"`
	Role        string `json:"role"`
}

// ClaimInvite is POST /api/invites/claim: invites.Service.Claim.
func (b *Bridge) ClaimInvite(ctx context.Context, r Request) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, true)
	if err != nil {
		return b.Fail(ctx, "invite claim", err)
	}
	var req claimRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		return b.Fail(ctx, "invite claim", reject.Invalidf("invalid claim JSON: %s", err))
	}
	out, err := b.Invites.Claim(ctx, invites.Caller{Community: c.ID, Pubkey: pubkey, Address: r.Address}, req.Code, req.PolicyReceipt)
	if err != nil {
		return b.Fail(ctx, "invite claim", err)
	}
	role := "member"
	if out.Status == invites.AlreadyMember {
		role = "" // the key's role is not the claim's to tell
	}
	return JSON(http.StatusOK, claimResponse{Status: out.Status, CommunityID: c.ID, Host: community.NormalizeHost(r.Host), Role: role})
}

// policyJSON is a join policy as Buzz's GET /api/join-policy shows it.
type policyJSON struct {
	Terms       string `json:"terms_markdown,omitempty"`
	Privacy     string `json:"privacy_markdown,omitempty"`
	AgeRequired bool   `json:"age_attestation_required"`
	Version     string `json:"version"`
}

// policyOf resolves the community at r's host and reads its join policy.
func (b *Bridge) policyOf(ctx context.Context, r Request) (*community.Community, *invite.Policy, error) {
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		return nil, nil, unresolved(err)
	}
	p, err := b.Invites.Policy(ctx, c.ID)
	return c, p, err
}

// JoinPolicy is GET /api/join-policy: it answers {"policy": {...}}, or {} when none is set (Buzz's
// answer when the feature is off).
func (b *Bridge) JoinPolicy(ctx context.Context, r Request) Response {
	_, p, err := b.policyOf(ctx, r)
	if err != nil {
		return b.Fail(ctx, "join policy", err)
	}
	if p == nil {
		return JSON(http.StatusOK, struct{}{})
	}
	return JSON(http.StatusOK, map[string]policyJSON{"policy": {Terms: p.Terms, Privacy: p.Privacy, AgeRequired: p.AgeRequired, Version: p.Version}})
}

// PolicyPage is GET /api/join-policy/{terms,privacy}: it serves the terms or the privacy policy as a small HTML page
// (the desktop app opens it in the system browser); 404 when not set.
func (b *Bridge) PolicyPage(ctx context.Context, r Request, which string) Response {
	_, p, err := b.policyOf(ctx, r)
	if err != nil {
		return b.Fail(ctx, "join policy page", err)
	}
	title, text := "Terms of Service", ""
	if p != nil {
		text = p.Terms
	}
	if which == "privacy" {
		title = "Privacy Policy"
		if p != nil {
			text = p.Privacy
		}
	}
	if strings.TrimSpace(text) == "" {
		return b.Fail(ctx, "join policy page", because(errNoPolicy, reject.Invalidf("join_policy_not_configured")))
	}
	return htmlPage(title, `<div class="doc">`+html.EscapeString(text)+`</div>`)
}

// acceptRequest is POST /api/invites/accept-policy's body.
type acceptRequest struct {
	Code          string `json:"code"`
	PolicyVersion string `json:"policy_version"`
	AgeConfirmed  bool   `json:"age_confirmed"`
}

// AcceptPolicy is POST /api/invites/accept-policy: invites.Service.AcceptPolicy.
func (b *Bridge) AcceptPolicy(ctx context.Context, r Request) Response {
	if len(r.Body) > 16<<10 {
		return b.Fail(ctx, "accept policy", because(errTooLarge, reject.Invalidf("request body is larger than 16 KiB")))
	}
	c, err := b.Communities.Resolve(ctx, r.Host)
	if err != nil {
		return b.Fail(ctx, "accept policy", unresolved(err))
	}
	var req acceptRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		return b.Fail(ctx, "accept policy", reject.Invalidf("invalid policy acceptance JSON: %s", err))
	}
	receipt, err := b.Invites.AcceptPolicy(ctx, c.ID, req.Code, req.PolicyVersion, req.AgeConfirmed)
	if errors.Is(err, invites.ErrNoPolicy) {
		err = because(errNoPolicy, invites.ErrNoPolicy)
	}
	if err != nil {
		return b.Fail(ctx, "accept policy", err)
	}
	return JSON(http.StatusOK, map[string]string{"receipt": receipt})
}

// Landing is the GET /invite/{code} page: static, the same for any code (it
// says nothing of whether the code is good), handing the code to the app
// (buzz://join) with the code to paste.
func (b *Bridge) Landing(ctx context.Context, r Request, code string) Response {
	if _, err := b.Communities.Resolve(ctx, r.Host); err != nil {
		return b.Fail(ctx, "invite page", unresolved(err))
	}
	if c, err := url.PathUnescape(code); err == nil {
		code = c
	}
	if !invite.Usable(code) || strings.ContainsAny(code, "/?#") {
		return b.Fail(ctx, "invite page", because(errNoRoute, reject.Invalidf("no invite page at %s", r.Path)))
	}
	ws := "wss://"
	if r.Scheme == "http" {
		ws = "ws://"
	}
	app := "buzz://join?" + url.Values{"relay": {ws + r.Host}, "code": {code}}.Encode()
	body := `<h1>You're invited</h1>
<p>Open this invitation in the Buzz app to join <b>` + html.EscapeString(r.Host) + `</b>.</p>
<p><a class="button" href="` + html.EscapeString(app) + `">Open in Buzz</a></p>
<p>Or paste this invite code in the app:</p>
<p><code>` + html.EscapeString(code) + `</code></p>`
	return htmlPage("Join "+r.Host, body)
}

// htmlPage is a small self-contained HTML page (no script, no outside
// resource).
func htmlPage(title, body string) Response {
	page := `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>` + html.EscapeString(title) + `</title>
<style>body{max-width:42rem;margin:2rem auto;padding:0 1rem;font-family:system-ui,sans-serif;line-height:1.6}
.doc{white-space:pre-wrap}code{word-break:break-all;font-size:1.1em}
.button{display:inline-block;padding:.6rem 1.2rem;border-radius:.5rem;background:#222;color:#fff;text-decoration:none}</style>
</head><body>
` + body + `
</body></html>
`
	return Response{Status: http.StatusOK, Headers: map[string]string{
		"content-type":            "text/html; charset=utf-8",
		"content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
		"x-content-type-options":  "nosniff",
		"cache-control":           "no-store",
	}, Body: []byte(page)}
}
