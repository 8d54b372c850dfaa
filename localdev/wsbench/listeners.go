package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/localdev/emulator"
	"github.com/buzzrelay/relay/localdev/wsclient"
)

// # Listeners in processes of their own
//
// With -listener-processes N the subscriber sockets are opened by N child
// processes of this binary, niced like the fan-out processes: subscribers
// are remote clients, whose reading costs the relay's machine nothing,
// while 5,000 sockets read in the relay's own Go runtime take turns with
// the publisher's messages. A child is this binary started with
// listenerEnv set; it speaks a line protocol on its standard streams:
//
//	parent → child: one JSON listenSpec line
//	child → parent: "ready", then "min N" each time every socket of it has
//	                at least N events
//	parent → child: "report" and its sent times (JSON array of unix nanos)
//	child → parent: one JSON line, each socket's [seq, latency ns] pairs
//
// The clock is the machine's, shared by both.

// listenerEnv, set in a process's environment, makes it a listener child.
const listenerEnv = "WSBENCH_LISTENER"

// listenSpec is what a listener child opens.
type listenSpec struct {
	URL          string `json:"url"`
	Channel      string `json:"channel"`
	Subs         int    `json:"subs"`
	DialParallel int    `json:"dial_parallel"`
}

// remote is one listener child as the parent sees it.
type remote struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	min   atomic.Int64 // events every socket of the child has
	lines chan string  // the child's lines after "ready"
}

// startListeners starts o.ListenerProcesses children holding o.Subs
// sockets between them and waits until each sent its REQ.
func (b *bench) startListeners(ctx context.Context) ([]*remote, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	n := b.o.ListenerProcesses
	var out []*remote
	for i := range n {
		subs := b.o.Subs / n
		if i < b.o.Subs%n {
			subs++
		}
		cmd := emulator.NiceCommand(ctx, b.o.ListenerNice, self)
		cmd.Env = append(os.Environ(), listenerEnv+"=1")
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return out, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return out, err
		}
		if err := cmd.Start(); err != nil {
			return out, fmt.Errorf("listener process: %w", err)
		}
		r := &remote{cmd: cmd, in: in, out: bufio.NewReaderSize(stdout, 1<<20), lines: make(chan string, 1)}
		out = append(out, r)
		spec, _ := json.Marshal(listenSpec{URL: b.relay.WSURL, Channel: b.channel, Subs: subs, DialParallel: max(b.o.DialParallel/n, 1)})
		if _, err := fmt.Fprintf(in, "%s\n", spec); err != nil {
			return out, err
		}
	}
	for i, r := range out {
		line, err := r.out.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "ready" {
			return out, fmt.Errorf("listener process %d: %q %v", i, line, err)
		}
		go r.follow()
	}
	return out, nil
}

// follow reads the child's "min N" lines; the report line goes to lines.
func (r *remote) follow() {
	for {
		line, err := r.out.ReadString('\n')
		if err != nil {
			close(r.lines)
			return
		}
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "min "); ok {
			v, _ := strconv.ParseInt(n, 10, 64)
			r.min.Store(v)
			continue
		}
		r.lines <- line
	}
}

// report asks the child for its sockets' latencies against sent and ends
// it; each socket becomes a client holding them (got), as in process.
func (r *remote) report(sent []atomic.Int64) ([]*client, error) {
	times := make([]int64, len(sent))
	for i := range sent {
		times[i] = sent[i].Load()
	}
	line, _ := json.Marshal(times)
	if _, err := fmt.Fprintf(r.in, "report %s\n", line); err != nil {
		return nil, err
	}
	got, ok := <-r.lines
	_ = r.in.Close()
	_ = r.cmd.Wait()
	if !ok {
		return nil, errors.New("listener process ended without a report")
	}
	var sockets [][][2]int64
	if err := json.Unmarshal([]byte(got), &sockets); err != nil {
		return nil, fmt.Errorf("listener report: %w", err)
	}
	out := make([]*client, len(sockets))
	for i, pairs := range sockets {
		c := &client{got: make(map[int]time.Duration, len(pairs))}
		for _, p := range pairs {
			c.got[int(p[0])] = time.Duration(p[1])
		}
		out[i] = c
	}
	return out, nil
}

// stop ends the child without a report.
func (r *remote) stop() {
	_ = r.in.Close()
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
	}
	_ = r.cmd.Wait()
}

// listen is a listener child's main: it never returns.
func listen() {
	err := func() error {
		in := bufio.NewReaderSize(os.Stdin, 1<<20)
		line, err := in.ReadString('\n')
		if err != nil {
			return err
		}
		var spec listenSpec
		if err := json.Unmarshal([]byte(line), &spec); err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		socks, err := openListeners(ctx, spec)
		if err != nil {
			return err
		}
		fmt.Println("ready")
		go func() {
			last := int64(-1)
			for ctx.Err() == nil {
				m := int64(-1)
				for _, s := range socks {
					if n := int64(s.count()); m < 0 || n < m {
						m = n
					}
				}
				if m != last {
					fmt.Printf("min %d\n", m)
					last = m
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		line, err = in.ReadString('\n')
		if err != nil {
			return err
		}
		var sent []int64
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "report ")), &sent); err != nil {
			return err
		}
		out := make([][][2]int64, len(socks))
		for i, s := range socks {
			s.mu.Lock()
			for seq, at := range s.arrived {
				if seq < len(sent) {
					out[i] = append(out[i], [2]int64{int64(seq), at - sent[seq]})
				}
			}
			s.mu.Unlock()
		}
		cancel()
		b, _ := json.Marshal(out)
		fmt.Printf("%s\n", b)
		return nil
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsbench listener:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// listener is one socket of a listener child: arrival times by sequence
// number (the latency is known once the parent tells the send times).
type listener struct {
	mu      sync.Mutex
	arrived map[int]int64
}

func (l *listener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.arrived)
}

// openListeners opens, authenticates and subscribes spec's sockets.
func openListeners(ctx context.Context, spec listenSpec) ([]*listener, error) {
	socks := make([]*listener, spec.Subs)
	sem := make(chan struct{}, max(spec.DialParallel, 1))
	errc := make(chan error, spec.Subs)
	var wg sync.WaitGroup
	for i := range socks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			conn, err := wsclient.Dial(dctx, spec.URL)
			if err == nil {
				err = conn.Login(dctx, spec.URL, nostr.GeneratePrivateKey())
			}
			if err == nil {
				err = conn.Send(dctx, []any{"REQ", "live", map[string]any{"kinds": []int{9}, "#h": []string{spec.Channel}, "limit": 0}})
			}
			if err != nil {
				errc <- err
				return
			}
			l := &listener{arrived: map[int]int64{}}
			socks[i] = l
			go func() {
				for {
					data, err := conn.Read(ctx)
					if err != nil {
						return
					}
					if seq, ok := benchSeq(data); ok {
						now := time.Now().UnixNano()
						l.mu.Lock()
						l.arrived[seq] = now
						l.mu.Unlock()
					}
				}
			}()
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return socks, nil
}
