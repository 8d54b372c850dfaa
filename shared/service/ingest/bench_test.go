package ingest_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/testing/testkit"
)

// BenchmarkIngest measures events/s through Submit (checks, rules, one
// fsynced transaction each) against real Postgres, with 16 concurrent
// submitters as 16 Lambda instances or sockets would be. Events are signed
// before the timer starts: client signing is not relay work.
//
//	go test -run '^$' -bench Ingest -benchtime 5000x ./shared/ingest/
func BenchmarkIngest(b *testing.B) {
	for _, kind := range []string{"messages", "replies"} {
		b.Run(kind, func(b *testing.B) {
			h := newHarness(b)
			owner := testkit.NewKey(b)
			ch := h.channel(owner)
			top := owner.Event(b, 9, "root", nostr.Tag{"h", ch})
			h.ok(top)
			// Replies spread over 50 roots: a busy channel has many live threads.
			roots := []string{top.ID}
			for i := 1; i < 50 && kind == "replies"; i++ {
				r := owner.Event(b, 9, fmt.Sprint("root ", i), nostr.Tag{"h", ch})
				h.ok(r)
				roots = append(roots, r.ID)
			}
			authors := make([]testkit.Key, 32)
			for i := range authors {
				authors[i] = testkit.NewKey(b)
			}
			evs := make(chan *nostr.Event, b.N)
			now := time.Now()
			for i := 0; i < b.N; i++ {
				tags := []nostr.Tag{{"h", ch}}
				if kind == "replies" {
					tags = append(tags, reply(roots[i%len(roots)]))
				}
				evs <- authors[i%len(authors)].EventAt(b, now, 9, fmt.Sprint("message ", i), tags...)
			}
			close(evs)
			b.SetParallelism(8) // 8 x GOMAXPROCS(2) = 16 submitters
			self0, busy0 := cpuTimes(b)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ev := <-evs
					if out, err := h.svc.Submit(context.Background(), community, ev.PubKey, ev); err != nil || !out.Accepted || out.Message != "" {
						b.Errorf("refused: %s (%v)", out.Message, err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
			self1, busy1 := cpuTimes(b)
			relay := self1 - self0
			b.ReportMetric(float64(relay.Microseconds())/float64(b.N), "relay-cpu-µs/event")
			// Everything else the machine burned meanwhile is Postgres
			// (the benchmark runs alone).
			b.ReportMetric(float64((busy1-busy0-relay).Microseconds())/float64(b.N), "other-cpu-µs/event")
		})
	}
}

// cpuTimes returns this process's CPU time and the whole machine's busy
// CPU time, from getrusage and /proc/stat.
func cpuTimes(b *testing.B) (self, busy time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return self, 0
	}
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	var ticks int64
	for i, f := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		ticks += n
	}
	return self, time.Duration(ticks) * 10 * time.Millisecond // USER_HZ = 100
}
