// Package apigw adapts API Gateway events to the relay's core. It is the
// only package below functions/ that knows AWS event types.
package apigw

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/buzzrelay/relay/shared/domain/reject"
	"github.com/buzzrelay/relay/shared/transport/bridge"
	"github.com/buzzrelay/relay/shared/transport/routes"
)

// Origin is how clients address the relay.
type Origin struct {
	// Scheme is the HTTP scheme clients use (https behind API Gateway)
	// unless a request says otherwise in X-Forwarded-Proto.
	Scheme string
	// Host, when set (BUZZ_PUBLIC_URL), is the public host clients reach
	// the relay at, e.g. a CloudFront domain in front of both APIs: every
	// request is taken as addressed to Scheme://Host, whatever Host header
	// it arrives with.
	Host string
	// HostHeader, when set (BUZZ_HOST_HEADER, e.g. x-buzz-host), names the
	// header that carries the host the client addressed: CloudFront in
	// front of both APIs cannot forward Host (API Gateway needs its own),
	// so its viewer-request function copies the viewer's Host into it. A
	// deployment hosting several hostnames sets this instead of Host.
	HostHeader string
}

// forwardedHost is the host named by o.HostHeader in headers (lowercased
// keys), "" when unset or absent.
func (o Origin) forwardedHost(headers map[string]string) string {
	if o.HostHeader == "" {
		return ""
	}
	return headers[o.HostHeader]
}

// HTTPHandler is an API Gateway HTTP API (payload v2) Lambda handler.
type HTTPHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// HTTP turns the route table's server into an API Gateway HTTP API
// (payload v2) handler.
func HTTP(s *routes.Server, o Origin) HTTPHandler {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		var resp bridge.Response
		if req, err := HTTPRequest(ev, o); err != nil {
			resp = s.Fail(ctx, "apigw", reject.Invalidf("request body is not valid base64"))
		} else {
			resp = s.Serve(ctx, req)
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: resp.Status, Headers: resp.Headers, Body: string(resp.Body)}, nil
	}
}

// HTTPRequest converts an API Gateway request to the bridge's form.
func HTTPRequest(ev events.APIGatewayV2HTTPRequest, o Origin) (bridge.Request, error) {
	scheme := o.Scheme
	headers := make(map[string]string, len(ev.Headers))
	for k, v := range ev.Headers {
		headers[strings.ToLower(k)] = v
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return bridge.Request{}, err
		}
		body = b
	}
	if p := headers["x-forwarded-proto"]; p == "http" || p == "https" {
		scheme = p
	}
	host := headers["host"]
	if host == "" {
		host = ev.RequestContext.DomainName
	}
	if o.Host != "" {
		scheme, host = o.Scheme, o.Host
	}
	if h := o.forwardedHost(headers); h != "" {
		scheme, host = o.Scheme, h
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	return bridge.Request{
		Method:   ev.RequestContext.HTTP.Method,
		Scheme:   scheme,
		Host:     host,
		Path:     path,
		Query:    ev.QueryStringParameters,
		RawQuery: ev.RawQueryString,
		Headers:  headers,
		Body:     body,
		Address:  ev.RequestContext.HTTP.SourceIP,
	}, nil
}
