package ddbsessions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/buzzrelay/relay/localdev/s3local"
	"github.com/buzzrelay/relay/shared/aws/s3blobs"
	"github.com/buzzrelay/relay/shared/domain/session"
	"github.com/buzzrelay/relay/shared/testing/sessionstest"
)

// BenchmarkSessionOps times, on one machine, the session store's
// operations a write and a REQ pay against the local DynamoDB (dynalite,
// localdev/ddb.sh) and the S3 requests the former S3 design paid for the
// same against the local S3 server (localdev/s3local), one at a time
// (docs/architecture.md, "Session state: S3 vs DynamoDB"):
//
//	source localdev/pg.sh && source localdev/ddb.sh && go test -run '^$' -bench SessionOps -benchtime 2s ./shared/aws/ddbsessions
func BenchmarkSessionOps(b *testing.B) {
	ctx := context.Background()
	im := sessionstest.DynamoDB(b)
	st := im.Store
	now := time.Now().Unix()
	if err := st.OpenConnection(ctx, session.Connection{ID: "bench=", Community: "c", Challenge: "x", ConnectedAt: now, ExpiresAt: now + 7200}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := st.RaiseMark(ctx, "c", 1, true); err != nil {
		b.Fatal(err)
	}
	b.Run("dynamodb/raise-mark-UpdateItem", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, _, err := st.RaiseMark(ctx, "c", int64(i+2), false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamodb/read-mark-GetItem", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Mark(ctx, "c"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamodb/subscribe-one-pin", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s := session.NewSubscription{Subscription: session.Subscription{Connection: "bench=", Sub: fmt.Sprint("s", i%10), Pubkey: "pk",
				Filters: `[{"kinds":[9],"#h":["x"]}]`}, Community: "c", Pins: []string{"x"}, CreatedAt: now}
			if err := subErr(st.Subscribe(ctx, s, session.Limits{PerConnection: 20, PerKey: 60})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamodb/subscribe-one-pin-expiry-known", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s := session.NewSubscription{Subscription: session.Subscription{Connection: "bench=", Sub: fmt.Sprint("s", i%10), Pubkey: "pk",
				Filters: `[{"kinds":[9],"#h":["x"]}]`}, Community: "c", Pins: []string{"x"}, CreatedAt: now, Expires: now + 7200}
			if err := subErr(st.Subscribe(ctx, s, session.Limits{PerConnection: 20, PerKey: 60})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamodb/audience-Query", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.AudienceRange(ctx, session.AudienceRangeParams{Community: "c", Channels: []string{"x"}, Cutoff: 1 << 62, After: "", Through: "\U0010FFFF", Now: now}); err != nil {
				b.Fatal(err)
			}
		}
	})

	srv := s3local.ForTest(b, "media")
	bucket, err := s3blobs.Open(ctx, "", "media", srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if err := bucket.Put(ctx, fmt.Sprintf("sessions/fold/c/p/pk/%d", i), []byte(`{}`), "application/json"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("s3/PUT", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := bucket.Put(ctx, fmt.Sprint("sessions/c/mark/", i%10), nil, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("s3/GET", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := bucket.Get(ctx, "sessions/fold/c/p/pk/1"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("s3/LIST-10", func(b *testing.B) {
		for b.Loop() {
			if _, err := bucket.List(ctx, "sessions/fold/c/", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
