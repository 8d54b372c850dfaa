// Package blossom is the HTTP codec of the media service: Blossom's routes
// (BUD-01 GET/HEAD /<sha256>[.ext], BUD-02 PUT /upload, DELETE /<sha256>,
// GET /list/<pubkey>, BUD-06 HEAD /upload) and Buzz's /media/* routes, on
// the bridge's Request and Response (bridge.Bridge.Media hooks it in).
// Every 4xx carries its reason in X-Reason and a JSON {"message"} body
// (BUD-01); every answer carries BUD-01's CORS headers and
// X-Content-Type-Options: nosniff. Uploads authorize with a kind 24242
// event (shared/domain/blossom) or, as Buzz's routes take it, a NIP-98
// token; reads of a blob that is not public with a 24242 get event or a
// NIP-98 token (media.Service.Read's rule). Downloads are redirects to
// presigned S3 GETs answered with the blob's served type.
package blossom

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/kinds"
	"github.com/buzzrelay/relay/shared/domain/nip98"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/domain/sigverify"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/transport/bridge"
)

// Side is which function serves a route: uploads and deletes (ingest) or
// downloads, HEAD and list (query), as API Gateway routes them.
type Side uint8

const (
	Write Side = 1 << iota
	Read
	Both = Write | Read
)

// Codec serves the media routes of one side.
type Codec struct {
	Media       *media.Service
	Communities *community.Registry
	// NIP98 checks NIP-98 tokens (Buzz's routes); Sigs the 24242 events.
	NIP98 *nip98.Verifier
	Sigs  *sigverify.Verifier
	Side  Side
	Log   *slog.Logger
	Now   func() time.Time
}

// route is one media request, parsed from its path.
type route struct {
	op   string // upload, preflight, presign, delete, get, head, list, options
	hash string
	name string // the path's last segment (a blob name or a pubkey)
}

// match finds the media route of method and path; ok is false for a path
// that is not a media route (the bridge's own routes).
func match(method, path string) (route, bool) {
	p := strings.TrimPrefix(path, "/media")
	media := p != path
	if media && p == "" {
		return route{}, false
	}
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	switch {
	case len(seg) == 1 && seg[0] == "upload":
		switch method {
		case http.MethodPut:
			return route{op: "upload"}, true
		case http.MethodHead:
			return route{op: "preflight"}, true
		case http.MethodPost:
			if media {
				return route{op: "presign"}, true
			}
		case http.MethodOptions:
			return route{op: "options"}, true
		}
		return route{}, false
	case len(seg) == 2 && seg[0] == "list" && !media:
		switch method {
		case http.MethodGet:
			return route{op: "list", name: seg[1]}, true
		case http.MethodOptions:
			return route{op: "options"}, true
		}
		return route{}, false
	case len(seg) == 1 && seg[0] != "" && (media || !bridgeName(seg[0])):
		switch method {
		case http.MethodGet:
			return route{op: "get", name: seg[0]}, true
		case http.MethodHead:
			return route{op: "head", name: seg[0]}, true
		case http.MethodDelete:
			return route{op: "delete", name: seg[0]}, true
		case http.MethodOptions:
			return route{op: "options"}, true
		}
	}
	return route{}, false
}

// bridgeName reports whether a root path segment is one of the bridge's
// own routes.
func bridgeName(s string) bool {
	switch s {
	case "events", "query", "count", "healthz":
		return true
	}
	return false
}

// side is the function side that serves op.
func side(op string) Side {
	switch op {
	case "upload", "preflight", "presign", "delete":
		return Write
	case "options":
		return Both
	}
	return Read
}

// Serve answers r when it is a media route of c's side; ok is false
// otherwise (the bridge routes it).
func (c *Codec) Serve(ctx context.Context, r bridge.Request) (bridge.Response, bool) {
	rt, ok := match(r.Method, r.Path)
	if !ok || side(rt.op)&c.Side == 0 {
		return bridge.Response{}, false
	}
	if rt.op == "options" {
		return bridge.Response{Status: http.StatusNoContent, Headers: common(nil)}, true
	}
	if rt.name != "" && rt.op != "list" {
		h, _, err := blossom.ParseBlobName(rt.name)
		if err != nil {
			return c.fail(ctx, rt.op, err), true
		}
		rt.hash = h
	}
	com, err := c.Communities.Resolve(ctx, r.Host)
	if err != nil {
		if community.Unknown(err) {
			err = blossom.Refuse(http.StatusNotFound, reject.Invalid, "no community is served at this host")
		}
		return c.fail(ctx, rt.op, err), true
	}
	var resp bridge.Response
	switch rt.op {
	case "upload":
		resp, err = c.upload(ctx, r, com.ID)
	case "preflight":
		resp, err = c.preflight(ctx, r, com.ID)
	case "presign":
		resp, err = c.presign(ctx, r, com.ID)
	case "delete":
		resp, err = c.delete(ctx, r, com.ID, rt.hash)
	case "get":
		resp, err = c.get(ctx, r, com.ID, rt.hash)
	case "head":
		resp, err = c.head(ctx, r, com.ID, rt.hash)
	case "list":
		resp, err = c.list(ctx, r, com.ID, rt.name)
	}
	if err != nil {
		return c.fail(ctx, rt.op, err), true
	}
	return resp, true
}

// authorize checks the Authorization header for need: a kind 24242 event
// (BUD-01), or a NIP-98 token bound to this request.
func (c *Codec) authorize(ctx context.Context, r bridge.Request, community string, need blossom.Need) (string, error) {
	ev, err := blossom.ParseAuthorization(r.Headers["authorization"])
	if err != nil {
		return "", err
	}
	if ev.Kind == kinds.HTTPAuth && c.NIP98 != nil {
		pk, err := c.NIP98.Verify(ctx, nip98.Request{Community: community, Authorization: r.Headers["authorization"],
			Method: r.Method, URL: r.URL(), Body: r.Body})
		var rj *reject.Error
		if errors.As(err, &rj) && rj.Prefix == reject.AuthRequired {
			return "", &blossom.Refusal{Status: http.StatusUnauthorized, Err: rj}
		}
		return pk, err
	}
	need.Host, need.Now = r.Host, c.now()
	return blossom.CheckAuth(ev, need, c.Sigs)
}

func (c *Codec) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

var uploadVerbs = []string{blossom.VerbUpload, blossom.VerbMedia}

// claim reads what an upload announces: X-SHA-256 (else the body's hash
// when there is a body), X-Content-Length (else -1), the type from
// X-Content-Type or Content-Type.
func claim(r bridge.Request, community string, preflight bool) (media.Claim, error) {
	c := media.Claim{Community: community, Size: -1}
	h := strings.TrimSpace(r.Headers["x-sha-256"])
	if h == "" && (preflight || len(r.Body) == 0) {
		return c, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "the X-SHA-256 header is required")
	}
	if h == "" {
		h = media.Hash(r.Body)
	}
	var err error
	if c.SHA256, err = blossom.ParseHash(h); err != nil {
		return c, err
	}
	if v := strings.TrimSpace(r.Headers["x-content-length"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "X-Content-Length must be a whole number of bytes")
		}
		c.Size = n
	}
	t := r.Headers["x-content-type"]
	if t == "" && !preflight {
		t = r.Headers["content-type"]
	}
	if c.Type, err = blossom.ParseType(t); err != nil {
		return c, err
	}
	return c, nil
}

// upload is PUT /upload and PUT /media/upload. An empty body with
// X-SHA-256 completes a presigned upload of that hash.
func (c *Codec) upload(ctx context.Context, r bridge.Request, community string) (bridge.Response, error) {
	cl, err := claim(r, community, false)
	if err != nil {
		return bridge.Response{}, err
	}
	if cl.Pubkey, err = c.authorize(ctx, r, community, blossom.Need{Verbs: uploadVerbs, Hash: cl.SHA256}); err != nil {
		return bridge.Response{}, err
	}
	if len(r.Body) == 0 {
		b, err := c.Media.Complete(ctx, community, cl.Pubkey, cl.SHA256)
		if errors.Is(err, blossom.ErrNotFound) {
			return bridge.Response{}, blossom.Refuse(http.StatusBadRequest, reject.Invalid,
				"the body is empty and no presigned upload of %s by this key has arrived", cl.SHA256)
		}
		if err != nil {
			return bridge.Response{}, err
		}
		return descriptor(http.StatusOK, r, b), nil
	}
	b, created, err := c.Media.Upload(ctx, cl, r.Body)
	if err != nil {
		return bridge.Response{}, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return descriptor(status, r, b), nil
}

// preflight is BUD-06's HEAD /upload. Without Authorization it answers
// 401, so a client signs before sending bytes.
func (c *Codec) preflight(ctx context.Context, r bridge.Request, community string) (bridge.Response, error) {
	cl, err := claim(r, community, true)
	if err != nil {
		return bridge.Response{}, err
	}
	if cl.Size < 0 {
		return bridge.Response{}, c.Media.Limits.CheckSize(-1)
	}
	if cl.Pubkey, err = c.authorize(ctx, r, community, blossom.Need{Verbs: uploadVerbs, Hash: cl.SHA256}); err != nil {
		return bridge.Response{}, err
	}
	if err := c.Media.Preflight(ctx, cl); err != nil {
		return bridge.Response{}, err
	}
	h := common(map[string]string{"x-direct-upload-max-bytes": strconv.FormatInt(c.Media.Limits.DirectMaxBytes, 10)})
	if !c.Media.Limits.Direct(cl.Size) {
		h["x-upload-path"] = "/media/upload"
	}
	return bridge.Response{Status: http.StatusOK, Headers: h}, nil
}

// Presign is POST /media/upload's answer for a new blob.
type Presign struct {
	URL      string            `json:"url"`
	Method   string            `json:"method"`
	Headers  map[string]string `json:"headers"`
	Expires  int64             `json:"expires"`
	UploadID string            `json:"upload_id"`
	SHA256   string            `json:"sha256"`
	Size     int64             `json:"size"`
	// Complete is where the upload completes: a HEAD or GET of it, or
	// PUT /upload with an empty body and X-SHA-256, after the bytes are
	// sent.
	Complete string `json:"complete"`
}

// presign is POST /media/upload: a presigned S3 PUT for a blob of any
// size (the path of blobs above the direct limit), or the descriptor of a
// blob the community already holds.
func (c *Codec) presign(ctx context.Context, r bridge.Request, community string) (bridge.Response, error) {
	cl, err := claim(r, community, true)
	if err != nil {
		return bridge.Response{}, err
	}
	if cl.Pubkey, err = c.authorize(ctx, r, community, blossom.Need{Verbs: uploadVerbs, Hash: cl.SHA256}); err != nil {
		return bridge.Response{}, err
	}
	p, err := c.Media.Presign(ctx, cl)
	if err != nil {
		return bridge.Response{}, err
	}
	if p.Existing != nil {
		return descriptor(http.StatusOK, r, *p.Existing), nil
	}
	hdr := map[string]string{}
	for k, v := range p.Headers {
		if len(v) > 0 {
			hdr[k] = v[0]
		}
	}
	return jsonResponse(http.StatusOK, Presign{URL: p.URL, Method: http.MethodPut, Headers: hdr, Expires: p.Expires,
		UploadID: p.UploadID, SHA256: cl.SHA256, Size: cl.Size, Complete: base(r) + "/" + cl.SHA256}), nil
}

func (c *Codec) delete(ctx context.Context, r bridge.Request, community, hash string) (bridge.Response, error) {
	pk, err := c.authorize(ctx, r, community, blossom.Need{Verbs: []string{blossom.VerbDelete}, Hash: hash})
	if err != nil {
		return bridge.Response{}, err
	}
	if err := c.Media.Delete(ctx, community, pk, hash); err != nil {
		return bridge.Response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"message": "deleted " + hash}), nil
}

// reader is the key a read of hash authorizes: "" without an
// Authorization header, else a kind 24242 get event (an x tag for hash, or
// a server tag naming this host) or a NIP-98 token bound to this request;
// a bad one is refused (401) whatever the blob.
func (c *Codec) reader(ctx context.Context, r bridge.Request, community, hash string) (string, error) {
	if r.Headers["authorization"] == "" {
		return "", nil
	}
	return c.authorize(ctx, r, community, blossom.Need{Verbs: []string{blossom.VerbGet}, Hash: hash, ServerSuffices: true})
}

// errNotPublic answers a GET without authorization of a blob that is not
// public, the same for one the community does not hold: BUD-01's 401, so a
// client signs a get authorization and asks again (the answer to that is
// the blob or 404).
var errNotPublic = blossom.Refuse(http.StatusUnauthorized, reject.AuthRequired,
	"no public blob with this hash is stored here; a blob shared in a private channel or a DM is read with an Authorization header: Nostr <base64 kind %d get event> or a NIP-98 token", blossom.AuthKind)

// get redirects to a presigned S3 GET of the blob, for a reader who may
// read it (S3 serves the bytes and Range with the blob's served type; the
// URL names the hash, as BUD-01 asks of a redirect).
func (c *Codec) get(ctx context.Context, r bridge.Request, community, hash string) (bridge.Response, error) {
	reader, err := c.reader(ctx, r, community, hash)
	if err != nil {
		return bridge.Response{}, err
	}
	url, _, err := c.Media.Download(ctx, community, reader, hash)
	if errors.Is(err, blossom.ErrNotFound) && reader == "" {
		return bridge.Response{}, errNotPublic
	}
	if err != nil {
		return bridge.Response{}, err
	}
	return bridge.Response{Status: http.StatusFound, Headers: common(map[string]string{
		"location": url, "cache-control": "private, max-age=60"})}, nil
}

// head answers from Postgres, for a reader who may read the blob: 200 with
// its served type and length; 404 otherwise, as for a blob the community
// does not hold (BUD-01: HEAD answers 200 or 404).
func (c *Codec) head(ctx context.Context, r bridge.Request, community, hash string) (bridge.Response, error) {
	reader, err := c.reader(ctx, r, community, hash)
	if err != nil {
		return bridge.Response{}, err
	}
	b, err := c.Media.Read(ctx, community, reader, hash)
	if err != nil {
		return bridge.Response{}, err
	}
	typ, _ := blossom.Served(b.Type)
	return bridge.Response{Status: http.StatusOK, Headers: common(map[string]string{
		"content-type": typ, "content-length": strconv.FormatInt(b.Size, 10), "accept-ranges": "bytes"})}, nil
}

// list is BUD-02's GET /list/<pubkey>?since=&until=, a member's own
// blobs (a kind 24242 list authorization by pubkey; without one, 401;
// another key's list, 403).
func (c *Codec) list(ctx context.Context, r bridge.Request, community, pubkey string) (bridge.Response, error) {
	if _, err := blossom.ParseHash(pubkey); err != nil {
		return bridge.Response{}, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "a pubkey must be 64 lowercase hex characters")
	}
	reader, err := c.authorize(ctx, r, community, blossom.Need{Verbs: []string{blossom.VerbList}})
	if err != nil {
		return bridge.Response{}, err
	}
	var bounds [2]int64
	for i, k := range []string{"since", "until"} {
		if v := r.Query[k]; v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return bridge.Response{}, blossom.Refuse(http.StatusBadRequest, reject.Invalid, "%s must be a unix time", k)
			}
			bounds[i] = n
		}
	}
	blobs, err := c.Media.List(ctx, community, reader, pubkey, bounds[0], bounds[1])
	if err != nil {
		return bridge.Response{}, err
	}
	out := make([]blossom.Descriptor, len(blobs))
	for i, b := range blobs {
		out[i] = blossom.Describe(base(r), b.SHA256, b.Size, b.Type, b.UploadedAt)
	}
	return jsonResponse(http.StatusOK, out), nil
}

func base(r bridge.Request) string { return r.Scheme + "://" + r.Host }

func descriptor(status int, r bridge.Request, b records.Blob) bridge.Response {
	return jsonResponse(status, blossom.Describe(base(r), b.SHA256, b.Size, b.Type, b.CreatedAt))
}

// fail answers err: its Blossom status (reject.Map's otherwise), the
// prefixed reason in X-Reason and in {"message"}; unexpected errors are
// logged, never shown.
func (c *Codec) fail(ctx context.Context, op string, err error) bridge.Response {
	a := reject.Report(ctx, c.Log, "blossom: "+op, err)
	status := a.Status
	if a.Class == reject.Refused {
		status = blossom.Status(err)
	}
	resp := jsonResponse(status, map[string]string{"message": a.Text})
	resp.Headers["x-reason"] = a.Text
	if a.RetryAfter > 0 {
		resp.Headers["retry-after"] = strconv.Itoa(a.RetryAfter)
	}
	return resp
}

func jsonResponse(status int, v any) bridge.Response {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bridge.Response{Status: status, Headers: common(map[string]string{"content-type": "application/json"}),
		Body: bytes.TrimRight(buf.Bytes(), "\n")}
}

// common adds the headers of every media answer: BUD-01's cross-origin
// headers, and X-Content-Type-Options: nosniff, so no browser reads a
// media answer as a type it was not given.
func common(h map[string]string) map[string]string {
	if h == nil {
		h = map[string]string{}
	}
	h["x-content-type-options"] = blossom.NoSniff
	h["access-control-allow-origin"] = "*"
	h["access-control-allow-headers"] = "Authorization, *"
	h["access-control-allow-methods"] = "GET, HEAD, PUT, POST, DELETE, OPTIONS"
	h["access-control-expose-headers"] = "*"
	h["access-control-max-age"] = "86400"
	return h
}
