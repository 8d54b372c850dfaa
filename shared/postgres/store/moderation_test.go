package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/buzzrelay/relay/shared/domain/records"
	"github.com/buzzrelay/relay/shared/postgres/store"
)

// TestReportQueueListingIsBounded: the operators' queue of open NIP-56
// reports is read a bounded page at a time, oldest first, each page after
// the last report of the one before (keyset: a report resolved meanwhile
// still marks its place), until a short page; the whole queue is never one
// answer.
func TestReportQueueListingIsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st := freshStore(t)
	const n = 7
	var ids []string
	if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("%064x", i+1)
			ids = append(ids, id)
			// Two reports share each created_at: the id orders them.
			if _, err := tx.ModerationReportsInsert(ctx, records.Report{ID: id, Reporter: id, TargetPubkey: id, Type: "spam", Raw: "{}", CreatedAt: int64(100 + i/2)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		page, err := st.ModerationReportsListOpen(ctx, "default", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 3 {
			t.Fatalf("a page of %d reports, limit 3", len(page))
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].ID
		if pages == 0 { // resolving the cursor's report keeps its place
			if err := st.Tx(ctx, "default", func(tx *store.Tx) error {
				_, err := tx.ModerationReportsUpdate(ctx, after, ids[0], "dismissed", "", 200)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("pages read %v, want every report once, oldest first: %v", got, ids)
	}
}
