package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkPublishOKWithSlowCallback measures what a slow NIP-9a callback
// costs a publisher: the OK latency of kind 9 events (p50, p99) in a
// channel with no push subscription, and with ten subscribers whose
// callback answers after 2 s (docs/benchmarks.md). Matching and callbacks
// run in the push sender, after the OK.
//
//	go test ./localdev/e2e -run '^$' -bench PublishOKWithSlowCallback -benchtime 200x
func BenchmarkPublishOKWithSlowCallback(b *testing.B) {
	for _, slow := range []bool{false, true} {
		b.Run("slow_callbacks="+strconv.FormatBool(slow), func(b *testing.B) {
			r := StartTest(b, Options{Push: true})
			srv := newBenchReceiver(b)
			alice := newBenchKey(b)
			arl := benchDial(b, r, alice)
			open := benchChannel(b, arl, alice)
			if slow {
				for i := range 10 {
					u := newBenchKey(b)
					rl := benchDial(b, r, u)
					ev := benchSigned(b, u, 30390, nostr.Tags{{"d", "bench"}, {"relay", r.WSURL}, {"callback", srv + "/slow" + strconv.Itoa(i)}, {"filter", `{"kinds":[9]}`}})
					if err := rl.Publish(ctxB(b), ev); err != nil {
						b.Fatal(err)
					}
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ev := benchSigned(b, alice, 9, nostr.Tags{{"h", open}})
				start := time.Now()
				if err := arl.Publish(ctxB(b), ev); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
}

func newBenchReceiver(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Second)
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func newBenchKey(b *testing.B) user { return testkit.NewKey(b) }

func ctxB(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	b.Cleanup(cancel)
	return ctx
}

func benchSigned(b *testing.B, u user, kind int, tags nostr.Tags) nostr.Event {
	return *u.Event(b, kind, "bench", tags...)
}

// benchDial is an authenticated go-nostr connection of u.
func benchDial(b *testing.B, r *Relay, u user) *nostr.Relay {
	rl, err := nostr.RelayConnect(context.Background(), r.WSURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rl.Close() })
	sub, err := rl.Subscribe(ctxB(b), nostr.Filters{{Kinds: []int{1}, Limit: 1}})
	if err != nil {
		b.Fatal(err)
	}
	select {
	case <-sub.ClosedReason:
	case <-time.After(wait):
		b.Fatal("no CLOSED before AUTH")
	}
	if err := rl.Auth(ctxB(b), u.Sign); err != nil {
		b.Fatal(err)
	}
	return rl
}

func benchChannel(b *testing.B, rl *nostr.Relay, u user) string {
	id := createChannelID()
	if err := rl.Publish(ctxB(b), benchSigned(b, u, 9007, nostr.Tags{{"h", id}, {"name", "bench"}, {"visibility", "open"}})); err != nil {
		b.Fatal(err)
	}
	return id
}

// BenchmarkHealthyCallbackWithSlowReceivers measures what slow receivers
// cost another subscriber (issue 51): 40 NIP-9a callbacks on 40 hosts
// answer after 4.5 s, one healthy callback at once; each kind 9 event
// matches all 41; and the same without the slow ones. Reported: the
// healthy callback's delay after the publisher's OK (p50, p99, max),
// events published one a second (docs/benchmarks.md).
//
//	go test ./localdev/e2e -run '^$' -bench HealthyCallbackWithSlowReceivers -benchtime 30x
func BenchmarkHealthyCallbackWithSlowReceivers(b *testing.B) {
	for _, slow := range []int{0, 40} {
		b.Run("slow_receivers="+strconv.Itoa(slow), func(b *testing.B) { benchHealthyCallback(b, slow) })
	}
}

func benchHealthyCallback(b *testing.B, slow int) {
	r := StartTest(b, Options{Push: true})
	alice := newBenchKey(b)
	arl := benchDial(b, r, alice)
	open := benchChannel(b, arl, alice)
	filter := `{"kinds":[9],"#h":["` + open + `"]}`
	var urls []string
	for i := range slow {
		urls = append(urls, newSlowReceiver(b, "127.0.1."+strconv.Itoa(i+1), 4500*time.Millisecond, nil).url)
	}
	healthy := newSlowReceiver(b, "127.0.0.1", 0, nil)
	for i, u := range append(urls, healthy.url) {
		k := newBenchKey(b)
		rl := benchDial(b, r, k)
		ev := benchSigned(b, k, 30390, nostr.Tags{{"d", "bench" + strconv.Itoa(i)}, {"relay", r.WSURL}, {"callback", u}, {"filter", filter}})
		if err := rl.Publish(ctxB(b), ev); err != nil {
			b.Fatal(err)
		}
	}
	okAt := map[string]time.Time{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := benchSigned(b, alice, 9, nostr.Tags{{"h", open}})
		if err := arl.Publish(ctxB(b), ev); err != nil {
			b.Fatal(err)
		}
		okAt[ev.ID] = time.Now()
		time.Sleep(time.Second)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, acked := healthy.counts()
		if len(acked) >= b.N || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	_, acked := healthy.counts()
	var lat []time.Duration
	for id, at := range okAt {
		got, ok := acked[id]
		if !ok {
			b.Fatalf("the healthy callback never got %s", id)
		}
		lat = append(lat, got.Sub(at))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "healthy_p50_ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "healthy_p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "healthy_max_ms")
}
