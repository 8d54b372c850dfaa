package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
)

// # What API Gateway and Lambda cost that loopback does not
//
// On loopback a post to @connections takes about 0.1 ms and an invocation
// nothing, so the emulator alone cannot show what a REQ answer or a
// publisher's OK costs behind AWS. Costs puts those prices back, each
// configurable and off unless asked for (APIGW_COSTS=on, or one variable
// at a time), so the tests keep their speed and a benchmark can run both
// ways.
//
// Sources (AWS documentation, "Quotas for configuring and running a
// WebSocket in API Gateway",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-execution-service-websocket-limits-table.html):
// message payload 128 KB, frame 32 KB, idle connection timeout 10 minutes,
// connection duration 2 hours (MaxMessageSize, IdleTimeout and
// ConnectionLifetime in websocket.go, always applied), and 500 new
// connections per second per account and Region (NewConnectionsPerSecond).
// A PostToConnection returns once API Gateway accepted the message; it
// does not wait for the client to read it (the documented GoneException
// is the only answer about the recipient), which is what the bounded
// outbound buffer of management.go models.
//
// Latencies AWS does not publish, chosen by reasoning and documented as
// such: a post to @connections is an HTTPS request from the function to
// execute-api in the same Region, several to tens of milliseconds; 20 ms
// (DefaultPostLatency) is the figure issue 32 measures against. A warm
// Lambda invocation behind API Gateway adds a few milliseconds of
// integration overhead before the handler runs (DefaultInvokeOverhead, 5
// ms). Both are knobs: set them to what a deployment measures.
//
// The AWS calls the relay makes besides (S3, the session store's
// DynamoDB, KMS, Lambda Invoke, the Aurora round trip) are charged by the
// relay's own clients: every SDK client awssdk.Load builds and the pool's
// tracer (Costs.AWS, shared/aws/awssdk/charges.go, with each figure's
// source; S3_LATENCY, DYNAMODB_LATENCY, KMS_LATENCY,
// LAMBDA_INVOKE_LATENCY, AURORA_ROUND_TRIP), and by the emulator for the
// Invokes it serves in process (LambdaAPI.InvokeLatency). APIGW_COSTS=on
// turns every one of them on.

// Defaults of the costs when they are on (APIGW_COSTS=on).
const (
	DefaultPostLatency      = 20 * time.Millisecond
	DefaultInvokeOverhead   = 5 * time.Millisecond
	NewConnectionsPerSecond = 500
	// DefaultOutboundBuffer is how many accepted posts one connection may
	// have waiting for its client (costs on or off): past it the client is
	// dropped, later posts answer 410 Gone.
	DefaultOutboundBuffer = 1024
)

// Costs are the emulated prices of API Gateway and Lambda; the zero value
// costs nothing beyond the always-on limits.
type Costs struct {
	// PostLatency is spent by every @connections post before API Gateway
	// accepts the message (APIGW_POST_LATENCY).
	PostLatency time.Duration
	// InvokeOverhead is spent before every route invocation
	// (LAMBDA_INVOKE_OVERHEAD).
	InvokeOverhead time.Duration
	// ConnectRate bounds new connections per second; over it the upgrade
	// answers 429 (APIGW_NEW_CONNECTIONS_PER_SECOND; 0: unbounded).
	ConnectRate float64
	// OutboundBuffer is the accepted posts a connection holds for its
	// client (APIGW_OUTBOUND_BUFFER; 0: DefaultOutboundBuffer).
	OutboundBuffer int
	// HTTPThrottle and WSThrottle are the stages' throttles: requests (the
	// HTTP API) and messages, $connect included (the WebSocket API) a
	// second, past which API Gateway answers 429 Too Many Requests. Read
	// from infra/throttles.json, the defaults the CDK stack deploys, with
	// APIGW_THROTTLES=on (not implied by APIGW_COSTS: a benchmark opening
	// thousands of sockets would wait on them); zero: none.
	HTTPThrottle, WSThrottle Throttle
	// AWS are the other AWS calls' latencies (awssdk.ChargesFromEnv),
	// which the relay's clients read from the same environment; the
	// emulator spends AWS.LambdaInvoke on the Invokes it serves in process
	// (Stack.Charge).
	AWS awssdk.Charges
}

// Throttle is a stage's steady rate (a second) and burst.
type Throttle struct{ Rate, Burst float64 }

// ThrottlesFile is where the stage throttles' defaults live, relative to
// the repository's root (the CDK stack embeds the same file).
const ThrottlesFile = "infra/throttles.json"

// StageThrottles reads the HTTP and WebSocket stages' throttles from
// ThrottlesFile, looked for from dir upwards.
func StageThrottles(dir string) (httpStage, wsStage Throttle, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, rerr := os.ReadFile(filepath.Join(d, ThrottlesFile))
		if rerr == nil {
			var m map[string]float64
			if err := json.Unmarshal(data, &m); err != nil {
				return httpStage, wsStage, fmt.Errorf("emulator: %s: %w", ThrottlesFile, err)
			}
			return Throttle{m["httpThrottleRate"], m["httpThrottleBurst"]}, Throttle{m["wsThrottleRate"], m["wsThrottleBurst"]}, nil
		}
		if filepath.Dir(d) == d {
			return httpStage, wsStage, fmt.Errorf("emulator: no %s in %s or above", ThrottlesFile, dir)
		}
	}
}

// CostsFromEnv reads the costs: APIGW_COSTS=on sets every default above,
// and each variable overrides its own (a Go duration, or a number).
func CostsFromEnv(getenv func(string) string) (Costs, error) {
	var c Costs
	on, err := awssdk.CostsOn(getenv)
	if err != nil {
		return c, err
	}
	if on {
		c = Costs{PostLatency: DefaultPostLatency, InvokeOverhead: DefaultInvokeOverhead, ConnectRate: NewConnectionsPerSecond}
	}
	if c.AWS, err = awssdk.ChargesFromEnv(getenv); err != nil {
		return c, err
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"APIGW_POST_LATENCY", &c.PostLatency}, {"LAMBDA_INVOKE_OVERHEAD", &c.InvokeOverhead}} {
		if v := getenv(d.key); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x < 0 {
				return c, fmt.Errorf("%s must be a duration such as 20ms, got %q", d.key, v)
			}
			*d.dst = x
		}
	}
	if v := getenv("APIGW_NEW_CONNECTIONS_PER_SECOND"); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return c, fmt.Errorf("APIGW_NEW_CONNECTIONS_PER_SECOND must be a number, got %q", v)
		}
		c.ConnectRate = x
	}
	switch v := getenv("APIGW_THROTTLES"); v {
	case "", "off", "0", "false":
	case "on", "1", "true":
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf("emulator: stage throttles: %w", err)
		}
		if c.HTTPThrottle, c.WSThrottle, err = StageThrottles(wd); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("APIGW_THROTTLES must be on or off, got %q", v)
	}
	if v := getenv("APIGW_OUTBOUND_BUFFER"); v != "" {
		x, err := strconv.Atoi(v)
		if err != nil || x < 1 {
			return c, fmt.Errorf("APIGW_OUTBOUND_BUFFER must be a whole number of messages ≥ 1, got %q", v)
		}
		c.OutboundBuffer = x
	}
	return c, nil
}

func (c Costs) outboundBuffer() int {
	if c.OutboundBuffer <= 0 {
		return DefaultOutboundBuffer
	}
	return c.OutboundBuffer
}

// throttled answers 429 past t, as an HTTP API stage does.
func throttled(t Throttle, b *bucket, next http.Handler) http.Handler {
	if t.Rate <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !b.take(t.Rate, t.Burst, time.Now()) {
			tooMany(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooMany is API Gateway's throttling answer.
func tooMany(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"message":"Too Many Requests"}`))
}

// spend waits d (nothing when d is 0).
func spend(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

// bucket is a token bucket: rate tokens a second, at most burst kept.
type bucket struct {
	mu          sync.Mutex
	rate, burst float64
	tokens      float64
	last        time.Time
	initialized bool
}

// take reports whether a token was there (and takes it); a rate of 0
// lets everything through.
func (b *bucket) take(rate, burst float64, now time.Time) bool {
	if rate <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.initialized || b.rate != rate || b.burst != burst {
		b.rate, b.burst, b.tokens, b.last, b.initialized = rate, burst, burst, now, true
	}
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
