// Command coldstart measures each Lambda's init time on this machine: it
// builds functions/* for the host (as `make build` does for arm64:
// -tags lambda.norpc, -trimpath, -s -w), starts each binary -runs times
// with a local Lambda Runtime API (AWS_LAMBDA_RUNTIME_API) and reports the
// time from process start to the function's first request for an
// invocation, which the runtime client sends once main() has built
// everything (pool, signer, SDK clients) and called lambda.Start. Local
// only: the pool connects lazily, the relay key is RELAY_SECRET_KEY, no
// AWS call is made. It prints the size of build/{function}.zip when
// `make build` made it.
//
//	source localdev/pg.sh && go run ./localdev/coldstart
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

func main() {
	runs := flag.Int("runs", 7, "starts per function")
	flag.Parse()
	fns := []string{"ingest", "query", "ws-connect", "ws-message", "ws-disconnect", "fanout", "migrate"}
	dir, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	next := make(chan time.Time, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case next <- time.Now():
			default:
			}
			<-r.Context().Done() // hold the long poll until the process ends
		}))
	}()
	fmt.Println("| function | init p50 | init max | zip |\n|---|---|---|---|")
	for _, fn := range fns {
		bin := filepath.Join(dir, fn)
		b := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, "./functions/"+fn)
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		b.Stderr = os.Stderr
		if err := b.Run(); err != nil {
			fail(fmt.Errorf("build %s: %w", fn, err))
		}
		var ds []time.Duration
		for range *runs {
			cmd := exec.Command(bin)
			cmd.Env = append(os.Environ(),
				"AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(),
				"RELAY_SECRET_KEY="+nostr.GeneratePrivateKey(),
				"WS_MANAGEMENT_ENDPOINT=http://127.0.0.1:9",
				"FANOUT_FUNCTION=fanout", "LAMBDA_ENDPOINT=http://127.0.0.1:9",
				"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
				"LOG_LEVEL=error")
			start := time.Now()
			if err := cmd.Start(); err != nil {
				fail(err)
			}
			select {
			case t := <-next:
				ds = append(ds, t.Sub(start))
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				fail(fmt.Errorf("%s never asked for an invocation", fn))
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		slices.Sort(ds)
		zip := "-"
		if st, err := os.Stat(filepath.Join("build", fn+".zip")); err == nil {
			zip = fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
		}
		fmt.Printf("| %s | %.1f ms | %.1f ms | %s |\n", fn, ms(ds[len(ds)/2]), ms(ds[len(ds)-1]), zip)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "coldstart:", err)
	os.Exit(1)
}
