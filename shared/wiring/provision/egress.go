package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/buzzrelay/relay/shared/service/egress"
)

// Properties of the EgressCheck custom resource (infra: EgressCheck).
const (
	// EgressPropEndpoints is the list of egress.Endpoint to check.
	EgressPropEndpoints = "Endpoints"
	// EgressPhysicalID is the resource's one physical id.
	EgressPhysicalID = "egress-check"
)

// EgressHandler is the onEvent handler of the EgressCheck custom resource
// (functions/egresscheck): on Create and Update it checks every endpoint of
// the resource's Endpoints property and fails, naming the endpoint and the
// remedy, when one cannot be reached, which fails the deployment. Delete
// checks nothing: a stack must always be deletable.
func EgressHandler(log *slog.Logger, c egress.Checker) func(context.Context, Event) (Response, error) {
	return func(ctx context.Context, ev Event) (Response, error) {
		switch ev.RequestType {
		case "Delete":
			return Response{PhysicalResourceID: EgressPhysicalID}, nil
		case "", "Create", "Update":
		default:
			return Response{}, fmt.Errorf("egress check: unknown RequestType %q (want Create, Update or Delete)", ev.RequestType)
		}
		eps, err := EgressEndpoints(ev.ResourceProperties)
		if err != nil {
			return Response{}, err
		}
		res, err := c.Check(ctx, eps)
		for _, r := range res {
			if r.Err == nil {
				log.InfoContext(ctx, "egress check: reachable", "endpoint", r.Endpoint.Name, "host", r.Host,
					"network", r.Endpoint.Network, "addr", r.Addr, "took_ms", r.Took.Milliseconds())
			} else {
				log.ErrorContext(ctx, "egress check: unreachable", "endpoint", r.Endpoint.Name, "host", r.Host,
					"network", r.Endpoint.Network, "err", r.Err)
			}
		}
		if err != nil {
			return Response{}, err
		}
		return Response{PhysicalResourceID: EgressPhysicalID}, nil
	}
}

// EgressEndpoints reads the Endpoints property.
func EgressEndpoints(props map[string]any) ([]egress.Endpoint, error) {
	raw, ok := props[EgressPropEndpoints]
	if !ok {
		return nil, errors.New("egress check: no Endpoints property")
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("egress check: Endpoints: %w", err)
	}
	eps, err := egress.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("egress check: Endpoints: %w", err)
	}
	return eps, nil
}
