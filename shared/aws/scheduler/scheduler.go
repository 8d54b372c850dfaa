// Package scheduler is the workflow runner's EventBridge Scheduler client
// (direct signed calls through awssign, as the @connections client): one
// schedule per schedule-triggered workflow, whose target is the runner
// with the workflow in its input, and a one-time at() schedule per wait
// (a delay, an approval's expiry), deleted by EventBridge once it fired.
// Nothing here was run against AWS; the request shapes are the
// Scheduler API's (CreateSchedule, UpdateSchedule, DeleteSchedule).
package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/buzzrelay/relay/shared/aws/awssign"
)

// Client keeps the schedules of one group.
type Client struct {
	c                      *awssign.Client
	ep                     awssign.Endpoint
	group, role, runnerArn string
}

// New builds the client for group at endpoint ("" the region's), whose
// schedules invoke runnerArn with role; runnerArn "" is the ARN the
// running invocation was invoked as (the runner's own, from its Lambda
// context: a reference to itself would make the template circular).
func New(cfg aws.Config, endpoint, group, role, runnerArn string) (*Client, error) {
	if endpoint == "" {
		endpoint = "https://scheduler." + cfg.Region + ".amazonaws.com"
	}
	ep, err := awssign.ParseEndpoint(endpoint)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	return &Client{c: awssign.New(cfg, "scheduler", 4), ep: ep, group: group, role: role, runnerArn: runnerArn}, nil
}

// Name is a workflow's schedule name: a community's workflow ids are its
// own, so the name carries a digest of the community.
func Name(community, workflowID string) string {
	h := sha256.Sum256([]byte(community))
	return "wf-" + hex.EncodeToString(h[:4]) + "-" + workflowID
}

type target struct {
	Arn     string `json:"Arn"`
	RoleArn string `json:"RoleArn"`
	Input   string `json:"Input"`
}

type schedule struct {
	GroupName             string            `json:"GroupName"`
	ScheduleExpression    string            `json:"ScheduleExpression"`
	FlexibleTimeWindow    map[string]string `json:"FlexibleTimeWindow"`
	Target                target            `json:"Target"`
	ActionAfterCompletion string            `json:"ActionAfterCompletion,omitempty"`
}

// ScheduledTime is the Scheduler's context attribute for the time a
// schedule's invocation was due (ISO 8601), substituted in the target's
// input: a fire's retries carry the same time, so the runner's run for it
// is one (workflow.Batch.Scheduled).
const ScheduledTime = "<aws.scheduler.scheduled-time>"

// Put creates or replaces the schedule of workflowID: expression (rate()
// or cron()), its input the runner's fire payload with the scheduled time.
func (c *Client) Put(ctx context.Context, community, workflowID, expression string) error {
	// The placeholder's angle brackets as they are (json.Marshal would
	// escape them, and the Scheduler substitutes only the literal text).
	var input strings.Builder
	enc := json.NewEncoder(&input)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{"community": community, "workflow": workflowID, "scheduled": ScheduledTime})
	t, err := c.target(ctx, strings.TrimSpace(input.String()))
	if err != nil {
		return err
	}
	return c.put(ctx, Name(community, workflowID), schedule{ScheduleExpression: expression, Target: t})
}

// Delete removes the schedule of workflowID (none: done).
func (c *Client) Delete(ctx context.Context, community, workflowID string) error {
	u := c.ep.URL("/schedules/", Name(community, workflowID), "")
	u.RawQuery = url.Values{"groupName": {c.group}}.Encode()
	_, err := c.c.Do(ctx, &awssign.Request{Method: http.MethodDelete, URL: u})
	if isStatus(err, http.StatusNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scheduler: delete %s: %w", workflowID, err)
	}
	return nil
}

// Wake is a one-time schedule that invokes the runner with run at (UTC,
// to the second), deleted by EventBridge after it fires.
func (c *Client) Wake(ctx context.Context, community, run string, at time.Time) error {
	input, _ := json.Marshal(map[string]string{"community": community, "run": run})
	name := fmt.Sprintf("wk-%s-%d", run, at.Unix())
	t, err := c.target(ctx, string(input))
	if err != nil {
		return err
	}
	s := schedule{ScheduleExpression: "at(" + at.UTC().Format("2006-01-02T15:04:05") + ")", Target: t, ActionAfterCompletion: "DELETE"}
	return c.put(ctx, name, s)
}

func (c *Client) target(ctx context.Context, input string) (target, error) {
	arn := c.runnerArn
	if arn == "" {
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			arn = lc.InvokedFunctionArn
		}
	}
	if arn == "" {
		return target{}, errors.New("scheduler: no runner ARN (not inside a Lambda invocation)")
	}
	// An invocation through an alias or version carries it (…:qualifier):
	// the schedule invokes the function as it was invoked.
	return target{Arn: arn, RoleArn: c.role, Input: input}, nil
}

// put updates the schedule name, creating it when there is none.
func (c *Client) put(ctx context.Context, name string, s schedule) error {
	s.GroupName, s.FlexibleTimeWindow = c.group, map[string]string{"Mode": "OFF"}
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	req := &awssign.Request{Method: http.MethodPut, URL: c.ep.URL("/schedules/", name, ""), ContentType: "application/json", Body: body}
	_, err = c.c.Do(ctx, req)
	if isStatus(err, http.StatusNotFound) {
		req.Method = http.MethodPost
		_, err = c.c.Do(ctx, req)
	}
	if isStatus(err, http.StatusConflict) {
		return nil // created by a concurrent put
	}
	if err != nil {
		return fmt.Errorf("scheduler: put %s: %w", name, err)
	}
	return nil
}

func isStatus(err error, status int) bool {
	var se *awssign.StatusError
	return errors.As(err, &se) && se.StatusCode == status
}
