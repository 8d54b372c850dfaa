package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/eventcheck"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/service/media"
)

// A feedback attachment's bytes never pass through a function (API
// Gateway carries a binary answer base64-encoded, and a Lambda answer is
// at most 6 MB): the relay's route decides who may read which blob and
// answers its front (CloudFront's edge function, infra/edgeupload.js; the
// emulator's front, localdev/emulator/front.go) a Stream answer, marked
// StreamHeader; the front then streams the blob from the bucket to the
// client on the same request, with the answer headers the Stream names
// and the route's own (the admin API's no-store, nosniff and the rest).
// The client sees the bytes and no redirect, as Buzz's relay serves them.

// StreamPattern is the paths (path.Match's pattern, CloudFront's
// behaviour path) whose GET may be answered with a Stream: the front asks
// the relay first and streams what it is told to.
const StreamPattern = AdminPrefix + "/feedback/*/attachments/*"

// StreamHeader marks a Stream answer: the relay's front streams its URL;
// no client is ever given it through the front.
const StreamHeader = "x-buzz-stream"

// Stream is the body of a Stream answer: the bucket URL the front GETs
// (forwarding the client's Range) and the answer headers it sets on what
// the bucket answers (Content-Length and Content-Range are the bucket's).
type Stream struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// StreamAnswer is the relay's Stream answer for s.
func StreamAnswer(s media.Stream) Response {
	r := JSON(http.StatusOK, Stream{URL: s.URL, Headers: map[string]string{
		"content-type":           s.Type,
		"content-disposition":    s.Disposition,
		"x-content-type-options": blossom.NoSniff,
		"accept-ranges":          "bytes",
	}})
	r.Headers[StreamHeader] = "1"
	return r
}

// AdminFeedbackAttachment is GET /api/admin/v1/feedback/{id}/attachments/
// {sha256} (param "id/sha256"): for the community's operators (NIP-98,
// the door), a blob of the community that the feedback's imeta tags name
// (x the hash, url the blob's on a host of the community), as a Stream
// answer (media.Service.Attachment: its type sniffed from its bytes). An
// unknown feedback, another community's, a hash the feedback does not
// name, a malformed one and a blob the community does not hold get one
// answer, 404.
func (b *Bridge) AdminFeedbackAttachment(ctx context.Context, r Request, param string, m *media.Service) Response {
	c, pubkey, err := b.authenticateAs(ctx, r, false)
	if err != nil {
		return b.adminFail(ctx, "attachment", err)
	}
	id, hash, _ := strings.Cut(param, "/")
	f, err := b.Manager.FeedbackItem(ctx, c, pubkey, adminPrefix(id))
	if err != nil {
		return b.adminFail(ctx, "attachment", err)
	}
	if !eventcheck.LowerHex(hash, 64) || !b.namesBlob(ctx, c, f.Tags, hash) {
		return b.adminFail(ctx, "attachment", manage.ErrNoSuchItem)
	}
	s, err := m.Attachment(ctx, c.ID, hash)
	if errors.Is(err, blossom.ErrNotFound) {
		err = manage.ErrNoSuchItem
	}
	if err != nil {
		return b.adminFail(ctx, "attachment", err)
	}
	return StreamAnswer(s)
}

// namesBlob reports whether the feedback's tags (JSON) hold an imeta tag
// naming hash: its x field hash and its url field a media URL of the blob
// on a host of community c (mediaURLOf).
func (b *Bridge) namesBlob(ctx context.Context, c *community.Community, tags []byte, hash string) bool {
	var tt [][]string
	if json.Unmarshal(tags, &tt) != nil {
		return false
	}
	for _, t := range tt {
		if len(t) == 0 || t[0] != "imeta" {
			continue
		}
		fields := map[string]string{}
		for _, f := range t[1:] {
			if k, v, ok := strings.Cut(f, " "); ok {
				if _, seen := fields[k]; !seen {
					fields[k] = v
				}
			}
		}
		if fields["x"] == hash && b.mediaURLOf(ctx, c, fields["url"], hash) {
			return true
		}
	}
	return false
}

// mediaURLOf reports whether raw is a media URL of hash on a host of c:
// http(s)://<host>/media/<hash>[.<ext>] (Buzz's) or /<hash>[.<ext>] (the
// descriptor's here, BUD-01's), or such a path alone; no query, no
// fragment.
func (b *Bridge) mediaURLOf(ctx context.Context, c *community.Community, raw, hash string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return false
	}
	name, ok := strings.CutPrefix(strings.TrimPrefix(u.EscapedPath(), "/media"), "/")
	if !ok {
		return false
	}
	if h, _, err := blossom.ParseBlobName(name); err != nil || h != hash {
		return false
	}
	if u.Scheme == "" && u.Host == "" {
		return strings.HasPrefix(raw, "/")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	other, err := b.Communities.Resolve(ctx, u.Host)
	return err == nil && other.ID == c.ID
}
