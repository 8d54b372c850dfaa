package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/records"
)

func hashOf(c byte) string { return strings.Repeat(string(c), 64) }

func TestBlobsOnceAndOwners(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	_, a := keypair()
	_, b := keypair()
	h := hashOf('a')
	got, created, err := st.BlobsInsert(ctx, records.NewBlob{Community: "c1", SHA256: h, Type: "image/png", Pubkey: a, Size: 100, At: 10, StoredLimit: 1000})
	if err != nil || !created || got.Size != 100 || got.Type != "image/png" {
		t.Fatalf("first add: %+v %v %v", got, created, err)
	}
	got, created, err = st.BlobsInsert(ctx, records.NewBlob{Community: "c1", SHA256: h, Type: "text/plain", Pubkey: b, Size: 100, At: 20, StoredLimit: 1000})
	if err != nil || created || got.Type != "image/png" || got.CreatedAt != 10 {
		t.Fatalf("second add: %+v %v %v", got, created, err)
	}
	// Another community keeps its own copy and its own total.
	if _, created, err := st.BlobsInsert(ctx, records.NewBlob{Community: "c2", SHA256: h, Pubkey: a, Size: 100, At: 10}); err != nil || !created {
		t.Fatalf("other community: %v %v", created, err)
	}
	if _, stored, _ := st.MediaUsageGet(ctx, "c1", a, 0); stored != 100 {
		t.Fatalf("c1 stores %d bytes, want 100 (once for two uploads)", stored)
	}
	list, err := st.BlobsListByOwner(ctx, "c1", b, 0, 0, 10)
	if err != nil || len(list) != 1 || list[0].UploadedAt != 20 {
		t.Fatalf("list of b: %+v %v", list, err)
	}
	if list, _ := st.BlobsListByOwner(ctx, "c1", b, 21, 0, 10); len(list) != 0 {
		t.Fatalf("since filter: %+v", list)
	}
	// a removes its ownership: b still owns it.
	if owned, gone, err := st.BlobsDelete(ctx, "c1", h, a, false); err != nil || !owned || gone {
		t.Fatalf("remove a: %v %v %v", owned, gone, err)
	}
	if owned, _, _ := st.BlobsDelete(ctx, "c1", h, a, false); owned {
		t.Fatal("a removed twice")
	}
	if owned, gone, err := st.BlobsDelete(ctx, "c1", h, b, false); err != nil || !owned || !gone {
		t.Fatalf("remove b: %v %v %v", owned, gone, err)
	}
	if _, err := st.BlobsGet(ctx, "c1", h); !errors.Is(err, records.ErrNotFound) {
		t.Fatalf("blob after last owner left: %v", err)
	}
	if _, stored, _ := st.MediaUsageGet(ctx, "c1", a, 0); stored != 0 {
		t.Fatalf("c1 stores %d bytes after delete", stored)
	}
	if _, err := st.BlobsGet(ctx, "c2", h); err != nil {
		t.Fatalf("c2's copy: %v", err)
	}
}

func TestBlobQuotas(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	_, a := keypair()
	if _, _, err := st.BlobsInsert(ctx, records.NewBlob{Community: "c", SHA256: hashOf('1'), Pubkey: a, Size: 600, At: 1, StoredLimit: 1000}); err != nil {
		t.Fatal(err)
	}
	_, _, err := st.BlobsInsert(ctx, records.NewBlob{Community: "c", SHA256: hashOf('2'), Pubkey: a, Size: 600, At: 1, StoredLimit: 1000})
	if !errors.Is(err, records.ErrStoredQuota) {
		t.Fatalf("over the stored quota: %v", err)
	}
	if _, err := st.BlobsGet(ctx, "c", hashOf('2')); !errors.Is(err, records.ErrNotFound) {
		t.Fatal("a refused blob left a row")
	}
	if _, stored, _ := st.MediaUsageGet(ctx, "c", a, 0); stored != 600 {
		t.Fatalf("stored %d after a refusal", stored)
	}
	// Bytes per day: concurrent charges never pass the limit.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.MediaKeyDaysAdd(ctx, "c", a, 5, 300, 1000); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, records.ErrKeyDayQuota) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if day, _, _ := st.MediaUsageGet(ctx, "c", a, 5); ok != 3 || day != 900 {
		t.Fatalf("%d charges passed, day total %d; want 3, 900", ok, day)
	}
	if err := st.MediaKeyDaysAdd(ctx, "c", a, 6, 1001, 1000); !errors.Is(err, records.ErrKeyDayQuota) {
		t.Fatalf("a first charge above the limit: %v", err)
	}
}

func TestStagedUploadsAndStanding(t *testing.T) {
	ctx := context.Background()
	st := freshStore(t)
	_, a := keypair()
	u := records.Upload{Community: "c", ID: "u1", SHA256: hashOf('3'), Type: "video/mp4", Pubkey: a, Size: 50, CreatedAt: 1, ExpiresAt: 2}
	if err := st.BlobUploadsInsert(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := st.BlobUploadsInsert(ctx, u); !errors.Is(err, records.ErrTaken) {
		t.Fatalf("same id twice: %v", err)
	}
	ups, err := st.BlobUploadsList(ctx, "c", u.SHA256)
	if err != nil || len(ups) != 1 || ups[0] != u {
		t.Fatalf("staged: %+v %v", ups, err)
	}
	if _, _, err := st.BlobsInsert(ctx, records.NewBlob{Community: "c", SHA256: u.SHA256, Pubkey: a, Size: 50, At: 3, Upload: "u1"}); err != nil {
		t.Fatal(err)
	}
	if ups, _ := st.BlobUploadsList(ctx, "c", u.SHA256); len(ups) != 0 {
		t.Fatal("completing did not drop the staged row")
	}
	m, err := st.PubkeyRulesGetStanding(ctx, "c", a)
	if err != nil || m.Member || m.Banned {
		t.Fatalf("a stranger's standing: %+v %v", m, err)
	}
}
