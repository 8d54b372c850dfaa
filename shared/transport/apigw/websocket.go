package apigw

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/transport/wsrelay"
)

// WebSocketHandler is an API Gateway WebSocket API Lambda handler.
type WebSocketHandler = func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// WebSocket turns the relay into the handler of one WebSocket route (the
// event type says which: CONNECT, MESSAGE, DISCONNECT). o is the HTTP
// origin (its scheme maps to ws or wss, unless $connect's
// X-Forwarded-Proto says otherwise). Replies are posted to the connection by
// the relay; the handler always answers 200 except a failed $connect, which
// refuses the connection: 404 for a rejection (the only one $connect makes
// is a host that serves no community, as HTTP answers it), else the status
// reject.Map gives (503, never 500).
func WebSocket(r *wsrelay.Relay, o Origin) WebSocketHandler {
	return func(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
		req, err := WebSocketRequest(ev, o)
		if err != nil {
			r.Log.WarnContext(ctx, "apigw: bad websocket event", "connection", ev.RequestContext.ConnectionID, "err", err)
			return events.APIGatewayProxyResponse{StatusCode: http.StatusBadRequest}, nil
		}
		switch ev.RequestContext.EventType {
		case "CONNECT":
			if err := r.Connect(ctx, req); err != nil {
				a := reject.Report(ctx, r.Log, "apigw: $connect "+req.ConnectionID, err)
				if a.Class == reject.Refused {
					r.Log.InfoContext(ctx, "apigw: $connect refused", "host", req.Host, "err", err)
					a.Status = http.StatusNotFound
				}
				return events.APIGatewayProxyResponse{StatusCode: a.Status}, nil
			}
		case "DISCONNECT":
			if err := r.Disconnect(ctx, req); err != nil {
				r.Log.ErrorContext(ctx, "apigw: $disconnect", "connection", req.ConnectionID, "err", err)
			}
		default:
			r.Message(ctx, req)
		}
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
	}
}

// WebSocketRequest converts an API Gateway WebSocket event to the relay's
// form. Headers come only with $connect; later events use the domain name.
// With o.Host set every event is taken as addressed to that public host.
func WebSocketRequest(ev events.APIGatewayWebsocketProxyRequest, o Origin) (wsrelay.Request, error) {
	rc := ev.RequestContext
	scheme := wsScheme(o.Scheme)
	if rc.ConnectionID == "" {
		return wsrelay.Request{}, fmt.Errorf("apigw: websocket event without connection id")
	}
	var host, proto string
	for k, v := range ev.Headers {
		switch k = strings.ToLower(k); {
		case k == "host" && host == "":
			host = v
		case k == "x-forwarded-proto":
			proto = strings.ToLower(v)
		case k == o.HostHeader && v != "":
			host = v
		}
	}
	switch proto {
	case "https":
		scheme = "wss"
	case "http":
		scheme = "ws"
	}
	if host == "" {
		host = rc.DomainName
	}
	if o.Host != "" {
		scheme, host = wsScheme(o.Scheme), o.Host
	}
	// Later events carry no headers; the $connect authorizer (Authorize)
	// hands the addressed host to every event of the connection.
	if h := authorizedHost(rc.Authorizer); h != "" {
		scheme, host = wsScheme(o.Scheme), h
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return wsrelay.Request{}, fmt.Errorf("apigw: websocket body is not valid base64: %w", err)
		}
		body = b
	}
	return wsrelay.Request{ConnectionID: rc.ConnectionID, Host: host, Scheme: scheme, Stage: rc.Stage, Body: body,
		Address: rc.Identity.SourceIP}, nil
}

// wsScheme is the WebSocket scheme matching an HTTP scheme.
func wsScheme(httpScheme string) string {
	if httpScheme == "http" {
		return "ws"
	}
	return "wss"
}
