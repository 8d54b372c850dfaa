// Package blossom is the HTTP codec of the media service: Blossom's routes
// (BUD-01 GET/HEAD /<sha256>[.ext], BUD-02 PUT /upload, DELETE /<sha256>,
// GET /list/<pubkey>, BUD-06 HEAD /upload) and Buzz's /media/* routes, on
// the bridge's Request and Response (shared/transport/routes routes them).
// Every 4xx carries its reason in X-Reason and a JSON {"message"} body
// (BUD-01); every answer carries BUD-01's CORS headers and
// X-Content-Type-Options: nosniff (the route table's media headers). Uploads authorize with a kind 24242
// event (shared/domain/blossom) or, as Buzz's routes take it, a NIP-98
// token; reads of a blob that is not public with a 24242 get event or a
// NIP-98 token (media.Service.Read's rule). Downloads are redirects to
// presigned S3 GETs answered with the blob's served type.
package blossom

import (
	"context"
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

// Codec serves the media routes.
type Codec struct {
	Media       *media.Service
	Communities *community.Registry
	// NIP98 checks NIP-98 tokens (Buzz's routes); Sigs the 24242 events.
	NIP98 *nip98.Verifier
	Sigs  *sigverify.Verifier
	Log   *slog.Logger
	Now   func() time.Time
}

// The media routes, one method each, as the route table
// (shared/transport/routes) calls them: name is the path's {blob} (a
// blob's name: its hash and an optional extension) or {pubkey}.

// Upload is PUT /upload and PUT /media/upload.
func (c *Codec) Upload(ctx context.Context, r bridge.Request, _ string) bridge.Response {
	return c.serve(ctx, r, "upload", "", c.upload)
}

// Preflight is BUD-06's HEAD /upload (and HEAD /media/upload).
func (c *Codec) Preflight(ctx context.Context, r bridge.Request, _ string) bridge.Response {
	return c.serve(ctx, r, "preflight", "", c.preflight)
}

// Presign is POST /media/upload.
func (c *Codec) Presign(ctx context.Context, r bridge.Request, _ string) bridge.Response {
	return c.serve(ctx, r, "presign", "", c.presign)
}

// Delete is DELETE /{blob} and DELETE /media/{blob}.
func (c *Codec) Delete(ctx context.Context, r bridge.Request, name string) bridge.Response {
	return c.serveBlob(ctx, r, "delete", name, c.delete)
}

// Get is GET /{blob} and GET /media/{blob}.
func (c *Codec) Get(ctx context.Context, r bridge.Request, name string) bridge.Response {
	return c.serveBlob(ctx, r, "get", name, c.get)
}

// Head is HEAD /{blob} and HEAD /media/{blob}.
func (c *Codec) Head(ctx context.Context, r bridge.Request, name string) bridge.Response {
	return c.serveBlob(ctx, r, "head", name, c.head)
}

// List is BUD-02's GET /list/{pubkey}.
func (c *Codec) List(ctx context.Context, r bridge.Request, pubkey string) bridge.Response {
	return c.serve(ctx, r, "list", pubkey, c.list)
}

// Options answers a CORS preflight (OPTIONS) of a media route.
func (c *Codec) Options(context.Context, bridge.Request, string) bridge.Response {
	return bridge.Response{Status: http.StatusNoContent, Headers: map[string]string{}}
}

// serveBlob is serve for a route naming a blob: its hash from the name.
func (c *Codec) serveBlob(ctx context.Context, r bridge.Request, op, name string,
	run func(context.Context, bridge.Request, string, string) (bridge.Response, error)) bridge.Response {
	h, _, err := blossom.ParseBlobName(name)
	if err != nil {
		return c.fail(ctx, op, err)
	}
	return c.serve(ctx, r, op, h, run)
}

// serve resolves the community at r's host and runs op there, its error
// through the media error table (fail).
func (c *Codec) serve(ctx context.Context, r bridge.Request, op, name string,
	run func(context.Context, bridge.Request, string, string) (bridge.Response, error)) bridge.Response {
	com, err := c.Communities.Resolve(ctx, r.Host)
	if err != nil {
		if community.Unknown(err) {
			err = blossom.Refuse(http.StatusNotFound, reject.Invalid, "no community is served at this host")
		}
		return c.fail(ctx, op, err)
	}
	resp, err := run(ctx, r, com.ID, name)
	if err != nil {
		return c.fail(ctx, op, err)
	}
	return resp
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
func (c *Codec) upload(ctx context.Context, r bridge.Request, community, _ string) (bridge.Response, error) {
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
// 401, so a client signs before sending bytes. Its upload authorization
// may carry no x tag (welshman's makeBlossomAuthEvent, with the hash in
// X-SHA-256, is how Flotilla asks whether a space serves uploads); one
// with x tags must name X-SHA-256. The PUT that follows binds its body's
// hash as ever.
func (c *Codec) preflight(ctx context.Context, r bridge.Request, community, _ string) (bridge.Response, error) {
	cl, err := claim(r, community, true)
	if err != nil {
		return bridge.Response{}, err
	}
	if cl.Size < 0 {
		return bridge.Response{}, c.Media.Limits.CheckSize(-1)
	}
	if cl.Pubkey, err = c.authorize(ctx, r, community, blossom.Need{Verbs: uploadVerbs, Hash: cl.SHA256, HashOptional: true}); err != nil {
		return bridge.Response{}, err
	}
	if err := c.Media.Preflight(ctx, cl); err != nil {
		return bridge.Response{}, err
	}
	h := map[string]string{"x-direct-upload-max-bytes": strconv.FormatInt(c.Media.Limits.DirectMaxBytes, 10)}
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
func (c *Codec) presign(ctx context.Context, r bridge.Request, community, _ string) (bridge.Response, error) {
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
	return bridge.JSON(http.StatusOK, Presign{URL: p.URL, Method: http.MethodPut, Headers: hdr, Expires: p.Expires,
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
	return bridge.JSON(http.StatusOK, map[string]string{"message": "deleted " + hash}), nil
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
	return bridge.Response{Status: http.StatusFound, Headers: map[string]string{
		"location": url, "cache-control": "private, max-age=60"}}, nil
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
	return bridge.Response{Status: http.StatusOK, Headers: map[string]string{
		"content-type": typ, "content-length": strconv.FormatInt(b.Size, 10), "accept-ranges": "bytes"}}, nil
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
	return bridge.JSON(http.StatusOK, out), nil
}

func base(r bridge.Request) string { return r.Scheme + "://" + r.Host }

func descriptor(status int, r bridge.Request, b records.Blob) bridge.Response {
	return bridge.JSON(status, blossom.Describe(base(r), b.SHA256, b.Size, b.Type, b.CreatedAt))
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
	resp := bridge.JSON(status, map[string]string{"message": a.Text})
	resp.Headers["x-reason"] = a.Text
	if a.RetryAfter > 0 {
		resp.Headers["retry-after"] = strconv.Itoa(a.RetryAfter)
	}
	return resp
}
