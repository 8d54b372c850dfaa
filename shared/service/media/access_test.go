package media_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// channelOf creates a channel of the community (visibility open or
// private, type stream or dm) whose members are keys, the first its owner.
func channelOf(t *testing.T, f *fixture, visibility, typ string, keys ...string) string {
	t.Helper()
	ctx := context.Background()
	ch := testkit.ChannelID()
	private := visibility == "private"
	if _, err := f.db.Exec(ctx, `INSERT INTO channels (community_id, id, name, channel_type, visibility, creator, created_at, create_event,
  restricted, closed, hidden) VALUES ($1, $2, 'c', $3, $4, $5, 1, $2, $6, $6, $7)`, community, ch, typ, visibility, keys[0], private, typ == "dm"); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		role := "member"
		if i == 0 {
			role = "owner"
		}
		if _, err := f.db.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at) VALUES ($1, $2, $3, $4, 1)`,
			community, ch, k, role); err != nil {
			t.Fatal(err)
		}
	}
	return ch
}

// share stores a kind 9 by k in channel ch whose content links the blob of
// hash (and an imeta tag naming it), as ingest stores a message.
func share(t *testing.T, f *fixture, k testkit.Key, ch, hash string) *nostr.Event {
	t.Helper()
	url := "https://media.test/" + hash + ".png"
	ev := k.Event(t, 9, "look "+url, nostr.Tag{"h", ch}, nostr.Tag{"imeta", "url " + url, "x " + hash, "m image/png"})
	err := f.st.Tx(context.Background(), community, func(tx *store.Tx) error {
		_, err := tx.EventsInsert(context.Background(), ev, records.EventMeta{ChannelID: ch, TopLevel: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// upload stores a blob of n bytes by k (a member) through the function.
func upload(t *testing.T, f *fixture, k string, n int, seed byte, typ string) string {
	t.Helper()
	body, h := blob(n, seed)
	if _, _, err := f.svc.Upload(context.Background(), media.Claim{Community: community, Pubkey: k, SHA256: h, Type: typ, Size: -1}, body); err != nil {
		t.Fatal(err)
	}
	return h
}

// readAs asserts what Read and Download answer reader for hash: the blob,
// or exactly what they answer for a hash the community does not hold.
func readAs(t *testing.T, f *fixture, reader, hash string, may bool) {
	t.Helper()
	ctx := context.Background()
	_, err := f.svc.Read(ctx, community, reader, hash)
	_, _, derr := f.svc.Download(ctx, community, reader, hash)
	if may {
		if err != nil || derr != nil {
			t.Fatalf("%.8s may read %.8s: %v, %v", reader, hash, err, derr)
		}
		return
	}
	_, missing := f.svc.Read(ctx, community, reader, "f"+hash[1:])
	if err == nil || err != missing || derr != missing {
		t.Fatalf("%.8s may not read %.8s: got %v, %v; want %v, as for a missing blob", reader, hash, err, derr, missing)
	}
}

// A blob shared in a private channel or a DM is read by its owners and by
// the readers of the events that share it, and by nobody else (a key of
// the community or a request without a key), who get the answer of a
// missing blob; a blob shared in an open channel, or nowhere, stays
// public. A deleted reference keeps the blob a referenced one.
func TestBlobSharedInPrivateChannelOrDMReadOnlyByItsReaders(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	owner := testkit.NewKey(t)
	join(t, f.db, owner.Pub)
	reader, peer, stranger := testkit.NewKey(t), testkit.NewKey(t), testkit.NewKey(t)
	join(t, f.db, stranger.Pub) // a member of the community, in none of the channels below

	priv := upload(t, f, owner.Pub, 3000, 1, "image/png")
	readAs(t, f, "", priv, true) // shared nowhere yet
	ch := channelOf(t, f, "private", "stream", owner.Pub, reader.Pub)
	share(t, f, owner, ch, priv)
	readAs(t, f, owner.Pub, priv, true)
	readAs(t, f, reader.Pub, priv, true)
	readAs(t, f, stranger.Pub, priv, false)
	readAs(t, f, "", priv, false)
	// Removed from the channel, the reader reads it no more.
	if _, err := f.db.Exec(ctx, `UPDATE channel_members SET removed_at = 2 WHERE community_id = $1 AND channel_id = $2 AND pubkey = $3`,
		community, ch, reader.Pub); err != nil {
		t.Fatal(err)
	}
	readAs(t, f, reader.Pub, priv, false)

	dm := upload(t, f, owner.Pub, 3000, 2, "image/png")
	share(t, f, owner, channelOf(t, f, "private", "dm", owner.Pub, peer.Pub), dm)
	readAs(t, f, peer.Pub, dm, true)
	readAs(t, f, stranger.Pub, dm, false)
	readAs(t, f, "", dm, false)

	open := upload(t, f, owner.Pub, 3000, 3, "image/png")
	openCh := channelOf(t, f, "open", "stream", owner.Pub)
	share(t, f, owner, openCh, open)
	readAs(t, f, "", open, true)
	readAs(t, f, stranger.Pub, open, true)
	// Shared in an open channel too, a private channel's blob is public.
	share(t, f, owner, openCh, priv)
	readAs(t, f, "", priv, true)

	// The only reference deleted: referenced still, readable by its owners.
	gone := upload(t, f, owner.Pub, 3000, 4, "image/png")
	ev := share(t, f, owner, openCh, gone)
	if err := f.st.Tx(ctx, community, func(tx *store.Tx) error { return tx.EventsDelete(ctx, []string{ev.ID}) }); err != nil {
		t.Fatal(err)
	}
	readAs(t, f, "", gone, false)
	readAs(t, f, owner.Pub, gone, true)

	// A presigned upload shared before the relay completed it.
	body, staged := blob(5000, 5)
	p, err := f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: owner.Pub, SHA256: staged, Type: "video/mp4", Size: 5000})
	if err != nil {
		t.Fatal(err)
	}
	share(t, f, owner, channelOf(t, f, "private", "stream", owner.Pub, peer.Pub), staged)
	put(t, p, body)
	readAs(t, f, "", staged, false) // completes it, and answers as for a missing blob
	readAs(t, f, peer.Pub, staged, true)
	readAs(t, f, owner.Pub, staged, true)
}

// BUD-02's list shows a key its own blobs: another key's list is refused
// the same way whether that key uploaded anything or not, so it hands out
// no hash (of blobs shared in private channels and DMs or any other).
func TestListShowsAKeyItsOwnBlobsOnly(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	other, empty := testkit.NewKey(t).Pub, testkit.NewKey(t).Pub
	join(t, f.db, other)
	join(t, f.db, empty)
	h := upload(t, f, other, 3000, 9, "image/png")
	if l, err := f.svc.List(ctx, community, other, other, 0, 0); err != nil || len(l) != 1 || l[0].SHA256 != h {
		t.Fatalf("own list: %+v %v", l, err)
	}
	l, err := f.svc.List(ctx, community, f.member, other, 0, 0)
	status(t, err, http.StatusForbidden)
	if len(l) != 0 {
		t.Fatalf("another key's list handed out %+v", l)
	}
	_, none := f.svc.List(ctx, community, f.member, empty, 0, 0)
	if none == nil || none.Error() != err.Error() {
		t.Fatalf("another key's list answers %v for a key with blobs, %v for one without", err, none)
	}
	if l, err := f.svc.List(ctx, community, f.member, f.member, 0, 0); err != nil || len(l) != 0 {
		t.Fatalf("own empty list: %+v %v", l, err)
	}
}

// A key becomes a blob's owner by sending its bytes: a presign naming a
// held hash stages an upload like any other, adds no owner, and the
// uploader's delete removes the blob; once the bytes arrive and match,
// the presigning key is an owner.
func TestOnlyUploadersOfTheBytesOwnABlob(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	squatter := testkit.NewKey(t).Pub
	join(t, f.db, squatter)
	body, h := blob(5000, 11)
	if _, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h, Size: -1}, body); err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: squatter, SHA256: h, Size: 5000})
	if err != nil || p.Existing != nil || p.URL == "" {
		t.Fatalf("presign of a held hash: %+v %v; want an upload to send", p, err)
	}
	if l, _ := f.svc.List(ctx, community, squatter, squatter, 0, 0); len(l) != 0 {
		t.Fatalf("a presign made its key an owner: %+v", l)
	}
	status(t, func() error { _, err := f.svc.Complete(ctx, community, squatter, h); return err }(), http.StatusNotFound)
	if err := f.svc.Delete(ctx, community, f.member, h); err != nil {
		t.Fatal(err)
	}
	status(t, func() error { _, err := f.svc.Read(ctx, community, "", h); return err }(), http.StatusNotFound)
	if _, found, _ := f.bucket.Head(ctx, blossom.BlobKey(community, h)); found {
		t.Fatal("the uploader's delete left the blob's object")
	}

	// Held again; a second key sends the bytes through a presign and owns it.
	if _, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h, Size: -1}, body); err != nil {
		t.Fatal(err)
	}
	p, err = f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: squatter, SHA256: h, Size: 5000})
	if err != nil || p.URL == "" {
		t.Fatalf("presign: %+v %v", p, err)
	}
	put(t, p, body)
	if b, err := f.svc.Complete(ctx, community, squatter, h); err != nil || b.Size != 5000 {
		t.Fatalf("completion by the sender of the bytes: %+v %v", b, err)
	}
	if l, _ := f.svc.List(ctx, community, squatter, squatter, 0, 0); len(l) != 1 {
		t.Fatalf("the sender of the bytes is no owner: %+v", l)
	}
	if _, found, _ := f.bucket.Head(ctx, blossom.UploadKey(community, p.UploadID)); found {
		t.Fatal("the staged object was not deleted")
	}
	// Other bytes sent for the held hash are refused and add no owner.
	third := testkit.NewKey(t).Pub
	join(t, f.db, third)
	p, err = f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: third, SHA256: h, Size: 5000})
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := blob(5000, 12)
	put(t, p, bad)
	status(t, func() error { _, err := f.svc.Complete(ctx, community, third, h); return err }(), http.StatusConflict)
	if l, _ := f.svc.List(ctx, community, third, third, 0, 0); len(l) != 0 {
		t.Fatalf("mismatched bytes made their key an owner: %+v", l)
	}
}

// swapping is the bucket with a second PUT to a staged upload's presigned
// URL landing while the relay completes it: right after the relay has
// read (hashed) the staged object, other bytes replace it.
type swapping struct {
	*s3blobs.Bucket
	put func()
}

type closeHook struct {
	io.ReadCloser
	after func()
}

func (c closeHook) Close() error {
	err := c.ReadCloser.Close()
	c.after()
	return err
}

func (s swapping) OpenVersion(ctx context.Context, key string) (io.ReadCloser, string, error) {
	r, v, err := s.Bucket.OpenVersion(ctx, key)
	return closeHook{r, s.put}, v, err
}

func (s swapping) Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	r, err := s.Bucket.Open(ctx, key, offset, length)
	return closeHook{r, s.put}, err
}

// A completed upload is the object that was hashed: bytes put to the
// staged key while the relay verifies it are never what the blob holds
// (the completion copies only the version it read, and refuses the upload
// when that version is gone).
func TestCompletedUploadIsTheObjectThatWasHashed(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	body, h := blob(5000, 21)
	evil := bytes.Repeat([]byte("<script>alert(1)</script>"), 200)[:5000]
	p, err := f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h, Type: "image/png", Size: 5000})
	if err != nil {
		t.Fatal(err)
	}
	put(t, p, body)
	f.svc.Objects = swapping{Bucket: f.bucket, put: func() {
		if err := f.bucket.Put(ctx, blossom.UploadKey(community, p.UploadID), evil, "text/html"); err != nil {
			t.Error(err)
		}
	}}
	_, err = f.svc.Complete(ctx, community, f.member, h)
	status(t, err, http.StatusConflict)
	if r, err := f.bucket.Open(ctx, blossom.BlobKey(community, h), 0, 0); err == nil {
		got, _ := io.ReadAll(r)
		r.Close()
		t.Fatalf("the blob holds %d bytes that were not hashed (%.20q)", len(got), got)
	}
	status(t, func() error { _, err := f.svc.Read(ctx, community, f.member, h); return err }(), http.StatusNotFound)

	// Sent again without interference, the upload completes with its bytes.
	f.svc.Objects = f.bucket
	p, err = f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h, Type: "image/png", Size: 5000})
	if err != nil {
		t.Fatal(err)
	}
	put(t, p, body)
	if _, err := f.svc.Complete(ctx, community, f.member, h); err != nil {
		t.Fatal(err)
	}
	r, err := f.bucket.Open(ctx, blossom.BlobKey(community, h), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, body) {
		t.Fatal("the completed blob is not the uploaded bytes")
	}
}

// A blob is downloaded with a safe type: an uploader's text/html or
// image/svg+xml comes back as an application/octet-stream attachment,
// passive media as declared.
func TestDownloadServesOnlySafeTypes(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	for i, c := range []struct{ declared, served, disposition string }{
		{"text/html", blossom.DefaultType, "attachment"},
		{"image/svg+xml", blossom.DefaultType, "attachment"},
		{"image/png", "image/png", "inline"},
	} {
		h := upload(t, f, f.member, 1000, byte(40+i), c.declared)
		url, _, err := f.svc.Download(ctx, community, "", h)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != c.served || resp.Header.Get("Content-Disposition") != c.disposition {
			t.Errorf("a blob declared %s is served as %q (%q), want %s (%s)", c.declared, got, resp.Header.Get("Content-Disposition"), c.served, c.disposition)
		}
	}
}
