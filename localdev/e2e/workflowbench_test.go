package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nbd-wtf/go-nostr"
)

// BenchmarkWorkflowTriggerToFirstStep measures a message trigger's
// latency as a channel member sees it (docs/benchmarks.md): from sending
// a kind 9 that matches a workflow to receiving, on a live subscription,
// the message the run's first step posts (p50, p99). The trigger goes
// after the commit to the runner by an asynchronous Invoke; the runner
// matches, writes the run and its step, signs and delivers the post.
//
//	APIGW_COSTS=on go test ./localdev/e2e -run '^$' -bench WorkflowTriggerToFirstStep -benchtime 100x
func BenchmarkWorkflowTriggerToFirstStep(b *testing.B) {
	r := StartTest(b, Options{Workflows: true})
	alice := newBenchKey(b)
	arl := benchDial(b, r, alice)
	ch := benchChannel(b, arl, alice)
	def := *alice.Event(b, 30620, "name: Echo\ntrigger:\n  on: message_posted\nsteps:\n  - id: echo\n    action: send_message\n    text: 'echo {{trigger.text}}'\n",
		nostr.Tag{"d", uuid.NewString()}, nostr.Tag{"h", ch})
	if err := arl.Publish(ctxB(b), def); err != nil {
		b.Fatal(err)
	}
	now := nostr.Now()
	subCtx, cancel := context.WithCancel(context.Background()) // for the whole run
	b.Cleanup(cancel)
	sub, err := arl.Subscribe(subCtx, nostr.Filters{{Kinds: []int{9}, Tags: nostr.TagMap{"h": {ch}}, Since: &now}})
	if err != nil {
		b.Fatal(err)
	}
	echo := func(text string) time.Duration {
		ev := *alice.Event(b, 9, text, nostr.Tag{"h", ch})
		start := time.Now()
		if err := arl.Publish(ctxB(b), ev); err != nil {
			b.Fatal(err)
		}
		deadline := time.After(wait)
		for {
			select {
			case got, ok := <-sub.Events:
				if !ok {
					b.Fatalf("the subscription ended waiting for %q: %v", text, sub.Context.Err())
				}
				if got.Tags.GetFirst([]string{"workflow-run"}) != nil && got.Content == "echo "+text {
					return time.Since(start)
				}
			case <-deadline:
				b.Fatalf("no workflow post for %q", text)
			}
		}
	}
	echo("warm-up") // the runner's cold start
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, echo(uuid.NewString()))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
}
