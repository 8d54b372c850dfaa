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
	"github.com/buzzrelay/relay/shared/domain/front"
	"github.com/buzzrelay/relay/shared/service/community"
	"github.com/buzzrelay/relay/shared/service/manage"
	"github.com/buzzrelay/relay/shared/service/media"
)

// A feedback attachment's bytes never pass through a function (API
// Gateway carries a binary answer base64-encoded, and a Lambda answer is
// at most 6 MB): the relay's route decides who may read which blob and
// answers its front (shared/domain/front) a stream answer, marked
// front.StreamHeader; the front then streams the blob from the bucket to the
// client on the same request, with the answer headers the Stream names
// and the route's own (the admin API's no-store, nosniff and the rest).
// The client sees the bytes and no redirect, as Buzz's relay serves them.

// Stream is the body of a stream answer (marked front.StreamHeader): the
// bucket URL the front GETs (forwarding the client's Range), the answer
// headers it sets on what the bucket answers (Content-Length and
// Content-Range are the bucket's; the route's own headers are on the
// stream answer), and Missing, the body of the route's 404, answered if
// the bucket no longer holds the object.
type Stream struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Missing string            `json:"missing"`
}

// streamAnswer is the relay's stream answer for s; missing is the route's
// 404.
func streamAnswer(s media.Stream, missing Response) Response {
	r := JSON(http.StatusOK, Stream{URL: s.URL, Missing: string(missing.Body), Headers: map[string]string{
		"content-type":           s.Type,
		"content-disposition":    s.Disposition,
		"x-content-type-options": blossom.NoSniff,
		"accept-ranges":          "bytes",
	}})
	r.Headers[front.StreamHeader] = "1"
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
	return streamAnswer(s, b.adminFail(ctx, "attachment", manage.ErrNoSuchItem))
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
