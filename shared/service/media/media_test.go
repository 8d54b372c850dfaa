package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/blossom"
	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/postgres/dbtest"
	"github.com/buzzrelay/relay/shared/postgres/store"
	"github.com/buzzrelay/relay/shared/service/media"
	"github.com/buzzrelay/relay/shared/testing/testkit"
)

type fixture struct {
	svc    *media.Service
	st     *store.Store
	db     *dbtest.DB // the same database, for the fixture's own rows
	bucket *s3blobs.Bucket
	member string
}

const community = "c1"

// setup is the service over a fresh database and a fresh local S3 server,
// with one member (owner of a channel).
func setup(t *testing.T, l blossom.Limits) *fixture {
	t.Helper()
	ctx := context.Background()
	st, db := testkit.NewStoreDB(t, store.Options{MaxConns: 4})
	srv, err := s3local.Start("127.0.0.1:0", t.TempDir(), nil, "media")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	b, err := s3blobs.Open(ctx, "", "media", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CommunitiesEnsure(ctx, community, "media.test"); err != nil {
		t.Fatal(err)
	}
	member := testkit.NewKey(t).Pub
	join(t, db, member)
	return &fixture{svc: media.New(st, b, l, testkit.Quiet()), st: st, db: db, bucket: b, member: member}
}

// join makes pubkey a member of a channel of the community.
func join(t *testing.T, db *dbtest.DB, pubkey string) {
	t.Helper()
	ch := testkit.ChannelID()
	ctx := context.Background()
	if _, err := db.Exec(ctx, `INSERT INTO channels (community_id, id, name, channel_type, visibility, creator, created_at, create_event)
VALUES ($1, $2, 'c', 'stream', 'private', $3, 1, $2)`, community, ch, pubkey); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO channel_members (community_id, channel_id, pubkey, role, added_at) VALUES ($1, $2, $3, 'owner', 1)`,
		community, ch, pubkey); err != nil {
		t.Fatal(err)
	}
}

func blob(n int, seed byte) ([]byte, string) {
	b := bytes.Repeat([]byte{seed, seed + 1, seed + 2}, n/3+1)[:n]
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

func status(t *testing.T, err error, want int) {
	t.Helper()
	if err == nil || blossom.Status(err) != want {
		t.Fatalf("got %v (status %d), want status %d", err, blossom.Status(err), want)
	}
}

func TestDirectUploadOnceDownloadDelete(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	body, h := blob(3000, 1)
	c := media.Claim{Community: community, Pubkey: f.member, SHA256: h, Type: "image/png", Size: -1}
	b, created, err := f.svc.Upload(ctx, c, body)
	if err != nil || !created || b.Size != 3000 || b.Type != "image/png" {
		t.Fatalf("upload: %+v %v %v", b, created, err)
	}
	// A second member uploading the same bytes stores nothing new.
	other := testkit.NewKey(t).Pub
	join(t, f.db, other)
	c2 := c
	c2.Pubkey = other
	if _, created, err := f.svc.Upload(ctx, c2, body); err != nil || created {
		t.Fatalf("second upload: %v %v", created, err)
	}
	url, _, err := f.svc.Download(ctx, community, "", h)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, body) || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("download: %d bytes, type %q", len(got), resp.Header.Get("Content-Type"))
	}
	if l, _ := f.svc.List(ctx, community, other, other, 0, 0); len(l) != 1 || l[0].SHA256 != h {
		t.Fatalf("list: %+v", l)
	}
	if _, err := f.svc.List(ctx, community, testkit.NewKey(t).Pub, other, 0, 0); blossom.Status(err) != http.StatusForbidden {
		t.Fatalf("a stranger's list: %v", err)
	}
	// A stranger may not delete it; the first owner's delete leaves it to the second.
	status(t, f.svc.Delete(ctx, community, testkit.NewKey(t).Pub, h), http.StatusForbidden)
	if err := f.svc.Delete(ctx, community, f.member, h); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Read(ctx, community, "", h); err != nil {
		t.Fatalf("still owned by the other: %v", err)
	}
	if err := f.svc.Delete(ctx, community, other, h); err != nil {
		t.Fatal(err)
	}
	status(t, func() error { _, err := f.svc.Read(ctx, community, "", h); return err }(), http.StatusNotFound)
	if _, found, _ := f.bucket.Head(ctx, blossom.BlobKey(community, h)); found {
		t.Fatalf("object left under blobs/: %v", err)
	}
	if _, found, err := f.bucket.Head(ctx, blossom.TrashKey(community, h)); err != nil || !found {
		t.Fatalf("object not in trash/: %v", err)
	}
}

func TestUploadRefusals(t *testing.T) {
	ctx := context.Background()
	l := blossom.Defaults
	l.KeyBytesPerDay = 5000
	l.CommunityBytesStored = 8000
	f := setup(t, l)
	body, h := blob(3000, 7)
	c := media.Claim{Community: community, Pubkey: f.member, SHA256: h, Size: -1}

	stranger := testkit.NewKey(t).Pub
	_, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: stranger, SHA256: h, Size: -1}, body)
	status(t, err, http.StatusForbidden)
	banned := testkit.NewKey(t).Pub
	join(t, f.db, banned)
	if err := f.st.PubkeyRulesPut(ctx, community, banned, "ban", "", 1); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: banned, SHA256: h, Size: -1}, body)
	status(t, err, http.StatusForbidden)
	if err == nil || err.Error()[:8] != "blocked:" {
		t.Fatalf("banned: %v", err)
	}
	_, _, err = f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h, Size: 2999}, body)
	status(t, err, http.StatusBadRequest)
	_, other := blob(10, 9)
	_, _, err = f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: other, Size: -1}, body)
	status(t, err, http.StatusConflict)
	if _, found, _ := f.bucket.Head(ctx, blossom.BlobKey(community, other)); found {
		t.Fatal("a refused upload left an object")
	}
	if _, _, err := f.svc.Upload(ctx, c, body); err != nil {
		t.Fatal(err)
	}
	// Bytes per day: 3000 used of 5000.
	body2, h2 := blob(3000, 20)
	_, _, err = f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h2, Size: -1}, body2)
	status(t, err, http.StatusTooManyRequests)
	if err := f.svc.Preflight(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h2, Size: 3000}); blossom.Status(err) != http.StatusTooManyRequests {
		t.Fatalf("preflight over the day: %v", err)
	}
	// Stored bytes: another member fills the community.
	m2 := testkit.NewKey(t).Pub
	join(t, f.db, m2)
	body3, h3 := blob(4000, 30)
	if _, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: m2, SHA256: h3, Size: -1}, body3); err != nil {
		t.Fatal(err)
	}
	m3 := testkit.NewKey(t).Pub
	join(t, f.db, m3)
	body4, h4 := blob(2000, 40)
	_, _, err = f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: m3, SHA256: h4, Size: -1}, body4)
	status(t, err, http.StatusRequestEntityTooLarge)
	if _, found, _ := f.bucket.Head(ctx, blossom.BlobKey(community, h4)); found {
		t.Fatal("an upload over the stored quota left its object")
	}
	status(t, f.svc.Preflight(ctx, media.Claim{Community: community, Pubkey: m2, SHA256: h, Size: l.MaxBytes + 1}), http.StatusRequestEntityTooLarge)
	status(t, f.svc.Preflight(ctx, media.Claim{Community: community, Pubkey: m2, SHA256: h, Size: -1}), http.StatusLengthRequired)
}

// put sends body to a presigned URL.
func put(t *testing.T, p media.Presigned, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, p.URL, bytes.NewReader(body))
	for k, v := range p.Headers {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned put: %d", resp.StatusCode)
	}
}

func TestLargeUploadCompletedAndTamperedRefused(t *testing.T) {
	ctx := context.Background()
	l := blossom.Defaults
	l.DirectMaxBytes = 1000
	f := setup(t, l)
	body, h := blob(5000, 3)
	c := media.Claim{Community: community, Pubkey: f.member, SHA256: h, Type: "video/mp4", Size: 5000}
	if _, _, err := f.svc.Upload(ctx, c, body); blossom.Status(err) != http.StatusRequestEntityTooLarge {
		t.Fatalf("a direct upload above the limit: %v", err)
	}
	p, err := f.svc.Presign(ctx, c)
	if err != nil || p.URL == "" || p.Existing != nil {
		t.Fatalf("presign: %+v %v", p, err)
	}
	status(t, func() error { _, err := f.svc.Complete(ctx, community, f.member, h); return err }(), http.StatusNotFound)
	put(t, p, body)
	b, err := f.svc.Complete(ctx, community, f.member, h)
	if err != nil || b.Size != 5000 || b.Type != "video/mp4" {
		t.Fatalf("completed: %+v %v", b, err)
	}
	if _, found, _ := f.bucket.Head(ctx, blossom.UploadKey(community, p.UploadID)); found {
		t.Fatal("the staged object was not deleted")
	}
	// Presigning a held blob adds the owner, nothing to send.
	if p2, err := f.svc.Presign(ctx, c); err != nil || p2.Existing == nil {
		t.Fatalf("presign of a held blob: %+v %v", p2, err)
	}

	// Tampered: bytes that do not hash to the claim.
	good, h2 := blob(5000, 50)
	bad := append([]byte(nil), good...)
	bad[100] ^= 1
	p, err = f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h2, Size: 5000})
	if err != nil {
		t.Fatal(err)
	}
	put(t, p, bad)
	_, err = f.svc.Complete(ctx, community, f.member, h2)
	status(t, err, http.StatusConflict)
	status(t, func() error { _, err := f.svc.Complete(ctx, community, f.member, h2); return err }(), http.StatusNotFound)
	for _, k := range []string{blossom.UploadKey(community, p.UploadID), blossom.BlobKey(community, h2)} {
		if _, found, _ := f.bucket.Head(ctx, k); found {
			t.Fatalf("%s left after a tampered upload", k)
		}
	}
	// A body larger than announced.
	p, err = f.svc.Presign(ctx, media.Claim{Community: community, Pubkey: f.member, SHA256: h2, Size: 4999})
	if err != nil {
		t.Fatal(err)
	}
	put(t, p, good)
	_, err = f.svc.Complete(ctx, community, f.member, h2)
	status(t, err, http.StatusConflict)
	_ = time.Second
}

// Members uploading the same new blob at once: it is stored once, its
// bytes counted once, every uploader an owner.
func TestConcurrentUploadsStoreOnce(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	body, h := blob(100_000, 60)
	keys := []string{f.member}
	for range 3 {
		k := testkit.NewKey(t).Pub
		join(t, f.db, k)
		keys = append(keys, k)
	}
	errs := make(chan error, len(keys))
	created := make(chan bool, len(keys))
	for _, k := range keys {
		go func() {
			_, c, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: k, SHA256: h, Size: -1}, body)
			errs <- err
			created <- c
		}()
	}
	n := 0
	for range keys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if <-created {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d uploads created the blob, want 1", n)
	}
	if _, stored, _ := f.st.MediaUsageGet(ctx, community, f.member, 0); stored != 100_000 {
		t.Fatalf("stored %d bytes, want 100000", stored)
	}
	for _, k := range keys {
		if l, err := f.svc.List(ctx, community, k, k, 0, 0); err != nil || len(l) != 1 {
			t.Fatalf("owners: %v %v", l, err)
		}
	}
}

// rule gives pubkey a community_pubkey_rules row (ban or timeout) that
// expires at expires.
func rule(t *testing.T, f *fixture, pubkey, kind string, expires int64) {
	t.Helper()
	if _, err := f.db.Exec(context.Background(), `INSERT INTO community_pubkey_rules (community_id, pubkey, rule, created_at, expires_at)
VALUES ($1, $2, $3, 0, $4)`, community, pubkey, kind, expires); err != nil {
		t.Fatal(err)
	}
}

// TestExpiredBanLetsKeyUpload: a moderator's ban (9040) that has expired
// no longer keeps its key from uploading, as it no longer keeps it from
// publishing; one still in force does (blocked:, 403).
func TestExpiredBanLetsKeyUpload(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	was, still := testkit.NewKey(t).Pub, testkit.NewKey(t).Pub
	join(t, f.db, was)
	join(t, f.db, still)
	now := time.Now().Unix()
	rule(t, f, was, "ban", now-60)
	rule(t, f, still, "ban", now+3600)
	body, h := blob(100, 3)
	if _, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: was, SHA256: h, Size: -1}, body); err != nil {
		t.Fatalf("a key whose ban expired: %v", err)
	}
	_, _, err := f.svc.Upload(ctx, media.Claim{Community: community, Pubkey: still, SHA256: h, Size: -1}, body)
	status(t, err, http.StatusForbidden)
	if r, ok := reject.As(err); !ok || r.Prefix != reject.Blocked {
		t.Fatalf("a key still banned: %v, want blocked:", err)
	}
}

// TestTimeoutBlocksUpload: a key a moderator timed out (9042) cannot
// upload, announce (BUD-06) or presign until the timeout expires, as it
// cannot publish; an expired timeout blocks nothing.
func TestTimeoutBlocksUpload(t *testing.T) {
	ctx := context.Background()
	f := setup(t, blossom.Defaults)
	out, was := testkit.NewKey(t).Pub, testkit.NewKey(t).Pub
	join(t, f.db, out)
	join(t, f.db, was)
	now := time.Now().Unix()
	rule(t, f, out, "timeout", now+3600)
	rule(t, f, was, "timeout", now-60)
	body, h := blob(100, 5)
	claim := media.Claim{Community: community, Pubkey: out, SHA256: h, Size: int64(len(body))}
	for name, try := range map[string]func() error{
		"upload":    func() error { _, _, err := f.svc.Upload(ctx, claim, body); return err },
		"preflight": func() error { return f.svc.Preflight(ctx, claim) },
		"presign":   func() error { _, err := f.svc.Presign(ctx, claim); return err },
	} {
		err := try()
		if r, ok := reject.As(err); !ok || r.Prefix != reject.Blocked || blossom.Status(err) != http.StatusForbidden {
			t.Errorf("%s by a timed-out key: %v, want blocked: (403)", name, err)
		}
	}
	claim.Pubkey = was
	if _, _, err := f.svc.Upload(ctx, claim, body); err != nil {
		t.Fatalf("a key whose timeout expired: %v", err)
	}
}
