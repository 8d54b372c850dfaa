// Command egresscheck runs the deploy's egress check (shared/service/egress)
// from here: it resolves and opens TLS (TCP for http://) to every endpoint
// it is given, prints one line each, and exits 1, naming the endpoint and
// the remedy, when one is unreachable.
//
//	go run ./localdev/egresscheck                     # make dev's @connections (http://$BUZZ_ADDR)
//	go run ./localdev/egresscheck -outputs cdk-outputs.json [-stack BuzzRelay-default]
//	go run ./localdev/egresscheck -endpoint '@connections=https://abc.execute-api.eu-west-1.amazonaws.com' -network tcp6
//
// -outputs reads the EgressEndpoints output of a deployed stack (`cdk
// deploy --outputs-file`), the very list its EgressCheck resource checks.
// Run from a machine, it checks that machine's egress: -network tcp6 asks
// what a function behind egress=ipv6 needs (an AAAA record and an IPv6
// route), which is how an @connections endpoint without IPv6 shows up
// before a deploy. The deployed resource runs the same check from inside
// the functions' subnets.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/buzzrelay/relay/shared/service/egress"
)

// OutputName is the stack output holding the EgressCheck resource's
// endpoint list as JSON (infra: EgressEndpointsOutput).
const OutputName = "EgressEndpoints"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// endpointFlags collects -endpoint name=url.
type endpointFlags []string

func (e *endpointFlags) String() string     { return strings.Join(*e, ",") }
func (e *endpointFlags) Set(v string) error { *e = append(*e, v); return nil }

// run is the command: 0 all reachable, 1 one is not, 2 bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("egresscheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var eps endpointFlags
	fs.Var(&eps, "endpoint", "name=url to check (repeatable)")
	network := fs.String("network", "tcp", "address family of -endpoint: tcp6 (egress=ipv6), tcp4 or tcp (either)")
	outputs := fs.String("outputs", "", "cdk deploy --outputs-file JSON: check its "+OutputName+" output")
	stack := fs.String("stack", "", "the stack in -outputs (default: the only one)")
	timeout := fs.Duration("timeout", 5*time.Second, "limit per attempt at one endpoint")
	attempts := fs.Int("attempts", 1, "attempts per endpoint")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	list, err := endpoints(eps, *network, *outputs, *stack)
	if err != nil {
		fmt.Fprintln(stderr, "egresscheck:", err)
		return 2
	}
	c := egress.New()
	c.Timeout, c.Attempts, c.Wait = *timeout, *attempts, 2*time.Second
	res, err := c.Check(ctx, list)
	for _, r := range res {
		if r.Err == nil {
			fmt.Fprintf(stdout, "ok    %s  %s via %s (%s)\n", r.Endpoint.Name, r.Host, r.Addr, r.Took.Round(time.Millisecond))
		} else {
			fmt.Fprintf(stdout, "FAIL  %s  %s\n", r.Endpoint.Name, r.Host)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%d/%d endpoints reachable\n", len(res), len(res))
	return 0
}

// endpoints is what to check: -endpoint flags, else -outputs, else make
// dev's @connections API (http://$BUZZ_ADDR, where localdev serves it).
func endpoints(flags []string, network, outputs, stack string) ([]egress.Endpoint, error) {
	if len(flags) > 0 && outputs != "" {
		return nil, errors.New("give -endpoint or -outputs, not both")
	}
	if outputs != "" {
		return fromOutputs(outputs, stack)
	}
	if len(flags) == 0 {
		addr := os.Getenv("BUZZ_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		flags = []string{"WebSocket @connections (make dev)=http://" + addr}
	}
	var out []egress.Endpoint
	for _, f := range flags {
		name, url, ok := strings.Cut(f, "=")
		if !ok || name == "" || url == "" {
			return nil, fmt.Errorf("-endpoint %q: want name=url", f)
		}
		out = append(out, egress.Endpoint{Name: name, URL: url, Network: network})
	}
	return out, nil
}

// fromOutputs reads the EgressEndpoints output of stack in a cdk outputs
// file ({"<stack>": {"<output>": "<value>"}}).
func fromOutputs(path, stack string) ([]egress.Endpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("outputs %s: %w", path, err)
	}
	if stack == "" {
		if len(all) != 1 {
			names := make([]string, 0, len(all))
			for n := range all {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("outputs %s has stacks %v: name one with -stack", path, names)
		}
		for n := range all {
			stack = n
		}
	}
	raw, ok := all[stack][OutputName]
	if !ok {
		return nil, fmt.Errorf("outputs %s: stack %q has no %s output (deployed before the egress check?)", path, stack, OutputName)
	}
	eps, err := egress.Parse([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("outputs %s: %s: %w", path, OutputName, err)
	}
	return eps, nil
}
