package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"

	"github.com/buzzrelay/relay/shared/aws/awssdk"
)

func TestCostsFromEnv(t *testing.T) {
	awsOn, err := awssdk.ChargesFromEnv(func(k string) string { return map[string]string{"APIGW_COSTS": "on"}[k] })
	if err != nil || awsOn.S3 == 0 || awsOn.AuroraRoundTrip == 0 {
		t.Fatalf("APIGW_COSTS=on charges the AWS calls %+v, %v", awsOn, err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Costs
		bad  bool
	}{
		{"none", nil, Costs{}, false},
		{"on", map[string]string{"APIGW_COSTS": "on"},
			Costs{PostLatency: DefaultPostLatency, InvokeOverhead: DefaultInvokeOverhead, ConnectRate: NewConnectionsPerSecond, AWS: awsOn}, false},
		{"one knob", map[string]string{"APIGW_POST_LATENCY": "20ms"}, Costs{PostLatency: 20 * time.Millisecond}, false},
		{"one AWS knob", map[string]string{"S3_LATENCY": "40ms"}, Costs{AWS: awssdk.Charges{S3: 40 * time.Millisecond}}, false},
		{"on, overridden", map[string]string{"APIGW_COSTS": "on", "LAMBDA_INVOKE_OVERHEAD": "0s", "APIGW_NEW_CONNECTIONS_PER_SECOND": "0", "APIGW_OUTBOUND_BUFFER": "8"},
			Costs{PostLatency: DefaultPostLatency, OutboundBuffer: 8, AWS: awsOn}, false},
		{"bad AWS knob", map[string]string{"AURORA_ROUND_TRIP": "1"}, Costs{}, true},
		{"throttles from the stack's file", map[string]string{"APIGW_THROTTLES": "on"},
			Costs{HTTPThrottle: Throttle{50, 100}, WSThrottle: Throttle{100, 200}}, false},
		{"bad switch", map[string]string{"APIGW_COSTS": "yes please"}, Costs{}, true},
		{"bad latency", map[string]string{"APIGW_POST_LATENCY": "20"}, Costs{}, true},
		{"negative latency", map[string]string{"APIGW_POST_LATENCY": "-1ms"}, Costs{}, true},
		{"bad buffer", map[string]string{"APIGW_OUTBOUND_BUFFER": "0"}, Costs{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CostsFromEnv(func(k string) string { return tc.env[k] })
			if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
				t.Fatalf("got %+v, %v; want %+v (error: %v)", got, err, tc.want, tc.bad)
			}
		})
	}
}

// Past the new-connection rate an upgrade is refused with 429 and no
// $connect runs; the stage throttle refuses a message without invoking it.
func TestConnectionRateAndStageThrottle(t *testing.T) {
	var connects, messages atomic.Int32
	ok := func(_ context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		switch ev.RequestContext.EventType {
		case "CONNECT":
			connects.Add(1)
		case "MESSAGE":
			messages.Add(1)
		}
		return events.APIGatewayProxyResponse{StatusCode: 200}, nil
	}
	a := &WebSocketAPI{Connect: ok, Default: ok, Disconnect: ok, InFlight: 1,
		Costs: Costs{ConnectRate: 0.001, WSThrottle: Throttle{Rate: 0.001, Burst: 1}}}
	srv := httptest.NewServer(a.Wrap(http.NotFoundHandler()))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if _, resp, err := websocket.Dial(ctx, url, nil); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second connection: %v %v, want 429", resp, err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`["REQ","a",{}]`)); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.Read(ctx); err != nil || !strings.Contains(string(msg), "Too Many Requests") {
		t.Fatalf("throttled message answered %q, %v", msg, err)
	}
	if connects.Load() != 1 || messages.Load() != 0 {
		t.Fatalf("%d $connect and %d $default invocations, want 1 and 0", connects.Load(), messages.Load())
	}
}

// An Invoke the emulator serves in process costs its caller the Lambda
// Invoke's charge (Stack.Charge: LAMBDA_INVOKE_LATENCY, or APIGW_COSTS=on),
// as the SDK's Invoke request does behind AWS.
func TestInProcessInvokePaysTheLambdaInvokeCharge(t *testing.T) {
	const charge = 300 * time.Millisecond
	l := &LambdaAPI{Functions: map[string]AsyncHandler{"f": func(context.Context, json.RawMessage) error { return nil }}}
	s := &Stack{WS: &WebSocketAPI{}, Lambda: l}
	s.Charge(Costs{AWS: awssdk.Charges{LambdaInvoke: charge}})
	start := time.Now()
	if err := l.Invoker("f").InvokeAsync(context.Background(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < charge {
		t.Fatalf("the Invoke returned after %s, less than its charge %s", d, charge)
	}
	l.Wait()
}
