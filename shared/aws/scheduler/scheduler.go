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
	"time"

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
// schedules invoke runnerArn with role.
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

// Put creates or replaces the schedule of workflowID: expression (rate()
// or cron()), its input the runner's fire payload.
func (c *Client) Put(ctx context.Context, community, workflowID, expression string) error {
	input, _ := json.Marshal(map[string]string{"community": community, "workflow": workflowID})
	return c.put(ctx, Name(community, workflowID), schedule{ScheduleExpression: expression, Target: c.target(string(input))})
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
	s := schedule{ScheduleExpression: "at(" + at.UTC().Format("2006-01-02T15:04:05") + ")", Target: c.target(string(input)), ActionAfterCompletion: "DELETE"}
	return c.put(ctx, name, s)
}

func (c *Client) target(input string) target {
	return target{Arn: c.runnerArn, RoleArn: c.role, Input: input}
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
