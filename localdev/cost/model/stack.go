package model

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stack is what the bill needs to know of a synthesized template: every
// resource with a price of its own, read by FromTemplate. A resource type
// FromTemplate does not know is an error, so nothing billable can enter
// the template unpriced.
type Stack struct {
	Functions []Function
	// LogGroups and the longest retention among them, in days.
	LogGroups, LogRetentionDays int
	// Alarms outside the network (function errors and throttles, HTTP 5xx).
	Alarms   int
	Network  Network
	KMSKeys  int
	Rotating int // KMS keys with yearly rotation on
	Secrets  int
	Database Database
	Buckets  int
	// Budgets (the first two of an account are free), CloudFront
	// distributions and functions, SNS topics: no monthly fee of their own.
	Budgets, Distributions, Topics int
	// Domains are the distributions that answer on the operator's own
	// name (-c domain: Aliases set); each is priced a Route 53 hosted
	// zone unless Usage says otherwise.
	Domains int
	// Schedules (EventBridge rules, whose scheduled events are free) and
	// SQS queues, billed by request: with one of each the push
	// function's liveness ticks run (Bill).
	Schedules, Queues int
	// Sweeps are EventBridge Scheduler schedules (free at 30 invocations
	// a month): the NIP-40 expiry sweep, once every
	// lambdas.SweepRateHours, which resumes a paused Aurora (Bill).
	Sweeps int
	// Tables are the on-demand DynamoDB tables (the sessions'): no
	// monthly fee, billed by request unit (the design's) and storage
	// (negligible: every item expires within hours).
	Tables int
}

// Function is one Lambda function of the template.
type Function struct {
	Name     string  // the name after "buzz relay " in its description, else its logical id
	MemoryMB float64 // MemorySize, 128 when unset
	Arch     string  // arm64 or x86_64 (unset)
}

// Network is how the functions reach AWS: the egress and what it costs
// by the hour.
type Network struct {
	Egress       string // ipv6, nat-gateway, nat-instance or none
	NATGateways  int
	NATInstances []string // their instance types
	// PublicIPv4 addresses billed by the hour: Elastic IPs and each NAT
	// instance's public address.
	PublicIPv4 int
	// Alarms of the NAT instances (recover on a failed status check).
	Alarms int
	// InterfaceEndpoints is the endpoint network interfaces, one per
	// interface endpoint and subnet, each billed by the hour.
	InterfaceEndpoints int
}

// Database is the Aurora Serverless v2 cluster.
type Database struct {
	Instances int     // db.serverless instances (writer and readers)
	MinACU    float64 // ServerlessV2ScalingConfiguration.MinCapacity (a parameter's default)
	// AutoPauseSeconds is SecondsUntilAutoPause (AWS's default, 300, when
	// the template leaves it out); only meaningful with MinACU 0.
	AutoPauseSeconds float64
	// PoolIdleSeconds is the functions' DB_IDLE_TIMEOUT: how long a pool
	// in a running environment keeps an idle connection (its check runs
	// every half of it, so it closes 1 to 1.5 times this after the last
	// statement; shared/postgres/store).
	PoolIdleSeconds float64
	// ServerIdleSeconds is the cluster's idle_session_timeout (its
	// parameter group; 0: none): the server closes a connection idle this
	// long, also one a frozen Lambda environment left open.
	ServerIdleSeconds float64
}

// TailSeconds is how long after a wake's last statement the last
// connection closes, which is when Aurora's auto-pause count starts (it
// pauses an instance with no user connections for SecondsUntilAutoPause:
// "Scaling to Zero ACUs with automatic pause and resume for Aurora
// Serverless v2"). Lambda freezes an environment as soon as its run ends,
// so the pool's own idle check does not run after the last statement: the
// server's idle_session_timeout closes the connection. Without one the
// connection lives as long as the frozen environment, which Lambda keeps
// for an unstated time: the database never pauses (+Inf).
func (d Database) TailSeconds() float64 {
	if d.ServerIdleSeconds > 0 {
		return d.ServerIdleSeconds
	}
	return math.Inf(1)
}

// WakeSeconds is the shortest wake one burst of statements causes: the
// resume, the tail until the last connection closes, the auto-pause.
func (d Database) WakeSeconds() float64 {
	return ResumeSeconds + d.TailSeconds() + d.AutoPauseSeconds
}

// DefaultAutoPauseSeconds is SecondsUntilAutoPause when a template leaves
// it out (RDS API reference, ServerlessV2ScalingConfiguration: "The
// default is 300 seconds").
const DefaultAutoPauseSeconds = 300

// hashSuffix is the 8 hex digits CDK appends to a logical id.
var hashSuffix = regexp.MustCompile(`[0-9A-F]{8}$`)

// free are the resource types that cost nothing by themselves; their
// traffic, if any, is billed on another resource's line.
var free = map[string]bool{
	"AWS::ApiGatewayV2::Api": true, "AWS::ApiGatewayV2::Integration": true, "AWS::ApiGatewayV2::Route": true,
	"AWS::ApiGatewayV2::Stage": true, "AWS::ApiGatewayV2::Authorizer": true,
	"AWS::CDK::Metadata": true, "AWS::CloudFormation::CustomResource": true,
	"AWS::EC2::VPC": true, "AWS::EC2::VPCCidrBlock": true, "AWS::EC2::Subnet": true, "AWS::EC2::RouteTable": true,
	"AWS::EC2::Route": true, "AWS::EC2::SubnetRouteTableAssociation": true, "AWS::EC2::SecurityGroup": true,
	"AWS::EC2::SecurityGroupEgress": true, "AWS::EC2::SecurityGroupIngress": true, "AWS::EC2::InternetGateway": true,
	"AWS::EC2::EgressOnlyInternetGateway": true, "AWS::EC2::VPCGatewayAttachment": true, "AWS::EC2::LaunchTemplate": true,
	"AWS::IAM::Role": true, "AWS::IAM::Policy": true, "AWS::IAM::ManagedPolicy": true, "AWS::IAM::InstanceProfile": true,
	"AWS::KMS::Alias": true, "AWS::Lambda::Permission": true, "AWS::Lambda::EventInvokeConfig": true,
	"AWS::RDS::DBClusterParameterGroup": true, "AWS::RDS::DBParameterGroup": true, "AWS::RDS::DBSubnetGroup": true,
	"AWS::S3::BucketPolicy": true, "AWS::SecretsManager::SecretTargetAttachment": true, "AWS::SNS::Subscription": true,
	"AWS::SQS::QueuePolicy": true, "AWS::Lambda::EventSourceMapping": true, "AWS::SNS::TopicPolicy": true,
	// The resume-503 count (infra/alarms.go): a custom metric is billed
	// pro rata for the hours it publishes, only while Aurora resumes.
	"AWS::Logs::MetricFilter": true,
}

type template struct {
	Parameters map[string]struct {
		Default any `json:"Default"`
	} `json:"Parameters"`
	Resources map[string]struct {
		Type       string         `json:"Type"`
		Properties map[string]any `json:"Properties"`
	} `json:"Resources"`
}

// FromTemplate reads a CloudFormation template (JSON, as cdk synth writes
// it) into the Stack the bill is computed from.
func FromTemplate(b []byte) (Stack, error) {
	var t template
	if err := json.Unmarshal(b, &t); err != nil {
		return Stack{}, fmt.Errorf("read template: %w", err)
	}
	var s Stack
	var unknown []string
	egressOnly := false
	ids := make([]string, 0, len(t.Resources))
	for id := range t.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := t.Resources[id]
		p := r.Properties
		switch r.Type {
		case "AWS::Lambda::Function":
			f := Function{Name: id[:max(len(id)-8, 0)], MemoryMB: 128, Arch: "x86_64"}
			if !hashSuffix.MatchString(id) {
				f.Name = id
			}
			if d, _ := p["Description"].(string); strings.HasPrefix(d, "buzz relay ") {
				f.Name = strings.TrimPrefix(d, "buzz relay ")
			}
			if m, ok := p["MemorySize"].(float64); ok {
				f.MemoryMB = m
			}
			if a, ok := p["Architectures"].([]any); ok && len(a) == 1 {
				f.Arch = fmt.Sprint(a[0])
			}
			s.Functions = append(s.Functions, f)
			if v, ok := envVar(p, "DB_IDLE_TIMEOUT"); ok {
				d, err := time.ParseDuration(v)
				if err != nil {
					return s, fmt.Errorf("function %s: DB_IDLE_TIMEOUT %q: %w", f.Name, v, err)
				}
				s.Database.PoolIdleSeconds = max(s.Database.PoolIdleSeconds, d.Seconds())
			}
		case "AWS::Logs::LogGroup":
			s.LogGroups++
			days, ok := p["RetentionInDays"].(float64)
			if !ok {
				return s, fmt.Errorf("log group %s keeps its logs forever: the bill assumes a retention", id)
			}
			s.LogRetentionDays = max(s.LogRetentionDays, int(days))
		case "AWS::CloudWatch::Alarm":
			if p["Namespace"] == "AWS/EC2" {
				s.Network.Alarms++
			} else {
				s.Alarms++
			}
		case "AWS::EC2::NatGateway":
			s.Network.NATGateways++
		case "AWS::EC2::EIP":
			s.Network.PublicIPv4++
		case "AWS::EC2::Instance":
			typ, _ := p["InstanceType"].(string)
			s.Network.NATInstances = append(s.Network.NATInstances, typ)
			s.Network.PublicIPv4++ // in a public subnet, with an address of its own
		case "AWS::EC2::EgressOnlyInternetGateway":
			egressOnly = true
		case "AWS::EC2::VPCEndpoint":
			if p["VpcEndpointType"] == "Interface" {
				subnets, _ := p["SubnetIds"].([]any)
				s.Network.InterfaceEndpoints += len(subnets)
			}
		case "AWS::KMS::Key":
			s.KMSKeys++
			if p["EnableKeyRotation"] == true {
				s.Rotating++
			}
		case "AWS::SecretsManager::Secret":
			s.Secrets++
		case "AWS::RDS::DBCluster":
			sc, _ := p["ServerlessV2ScalingConfiguration"].(map[string]any)
			if sc == nil {
				return s, fmt.Errorf("cluster %s is not Aurora Serverless v2: the bill prices ACUs only", id)
			}
			min, err := number(t, sc["MinCapacity"])
			if err != nil {
				return s, fmt.Errorf("cluster %s MinCapacity: %w", id, err)
			}
			s.Database.MinACU = min
			s.Database.AutoPauseSeconds = DefaultAutoPauseSeconds
			if v, ok := sc["SecondsUntilAutoPause"]; ok {
				if s.Database.AutoPauseSeconds, err = number(t, v); err != nil {
					return s, fmt.Errorf("cluster %s SecondsUntilAutoPause: %w", id, err)
				}
			}
		case "AWS::RDS::DBInstance":
			if p["DBInstanceClass"] != "db.serverless" {
				return s, fmt.Errorf("database instance %s is %v: the bill prices db.serverless only", id, p["DBInstanceClass"])
			}
			s.Database.Instances++
		case "AWS::S3::Bucket":
			s.Buckets++
		case "AWS::Budgets::Budget":
			s.Budgets++
		case "AWS::CloudFront::Distribution":
			s.Distributions++
			dc, _ := p["DistributionConfig"].(map[string]any)
			if a, _ := dc["Aliases"].([]any); len(a) > 0 {
				s.Domains++
			}
		case "AWS::RDS::DBClusterParameterGroup":
			ps, _ := p["Parameters"].(map[string]any)
			if v, ok := ps["idle_session_timeout"]; ok {
				if str, ok := v.(string); ok { // parameter values are strings
					v, _ = strconv.ParseFloat(str, 64)
				}
				ms, err := number(t, v)
				if err != nil {
					return s, fmt.Errorf("parameter group %s idle_session_timeout: %w", id, err)
				}
				s.Database.ServerIdleSeconds = ms / 1000
			}
		case "AWS::CloudFront::Function":
			// billed per invocation, with the distribution's traffic
		case "AWS::SNS::Topic":
			s.Topics++
		case "AWS::Events::Rule":
			if p["ScheduleExpression"] == nil {
				return s, fmt.Errorf("rule %s is not a schedule: the bill prices scheduled rules only (their events are free)", id)
			}
			s.Schedules++
		case "AWS::SQS::Queue":
			s.Queues++
		case "AWS::Scheduler::Schedule":
			s.Sweeps++
		case "AWS::DynamoDB::Table":
			if p["BillingMode"] != "PAY_PER_REQUEST" {
				return s, fmt.Errorf("table %s is billed %v: the bill prices on-demand tables only", id, p["BillingMode"])
			}
			if pitr, _ := p["PointInTimeRecoverySpecification"].(map[string]any); pitr != nil && pitr["PointInTimeRecoveryEnabled"] == true {
				return s, fmt.Errorf("table %s has point-in-time recovery: the bill does not price its backups", id)
			}
			s.Tables++
		default:
			if !free[r.Type] && !strings.HasPrefix(r.Type, "Custom::") {
				unknown = append(unknown, id+" ("+r.Type+")")
			}
		}
	}
	if len(unknown) > 0 {
		return s, fmt.Errorf("the cost model does not know the price of %s: add the type to localdev/cost/model (FromTemplate, or free when it costs nothing by itself)", strings.Join(unknown, ", "))
	}
	switch {
	case len(s.Network.NATInstances) > 0:
		s.Network.Egress = "nat-instance"
	case s.Network.NATGateways > 0:
		s.Network.Egress = "nat-gateway"
	case egressOnly:
		s.Network.Egress = "ipv6"
	default:
		s.Network.Egress = "none"
	}
	sort.Slice(s.Functions, func(i, j int) bool { return s.Functions[i].Name < s.Functions[j].Name })
	return s, nil
}

func envVar(props map[string]any, name string) (string, bool) {
	env, _ := props["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	v, ok := vars[name].(string)
	return v, ok
}

// number is a template value: a number, or a Ref to a parameter with a
// numeric default.
func number(t template, v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case map[string]any:
		name, _ := x["Ref"].(string)
		p, ok := t.Parameters[name]
		if !ok {
			return 0, fmt.Errorf("%v is neither a number nor a Ref to a parameter", v)
		}
		var f float64
		if _, err := fmt.Sscan(fmt.Sprint(p.Default), &f); err != nil {
			return 0, fmt.Errorf("parameter %s has no numeric default (%v)", name, p.Default)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// Function is the function named name, or false.
func (s Stack) Function(name string) (Function, bool) {
	for _, f := range s.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Facts are the stack as sorted lines, one per billable fact, so that two
// stacks can be compared (Diff) and a difference read.
func (s Stack) Facts() []string {
	out := []string{
		fmt.Sprintf("log groups: %d, longest retention %d days", s.LogGroups, s.LogRetentionDays),
		fmt.Sprintf("alarms: %d (+ %d of the network)", s.Alarms, s.Network.Alarms),
		fmt.Sprintf("egress: %s, %d NAT gateway(s), NAT instances %v, %d public IPv4, %d interface endpoint ENI(s)",
			s.Network.Egress, s.Network.NATGateways, s.Network.NATInstances, s.Network.PublicIPv4, s.Network.InterfaceEndpoints),
		fmt.Sprintf("KMS keys: %d, %d rotating", s.KMSKeys, s.Rotating),
		fmt.Sprintf("secrets: %d", s.Secrets),
		fmt.Sprintf("Aurora: %d db.serverless, min %g ACU, auto-pause after %g s, pool idle %g s, server idle %g s",
			s.Database.Instances, s.Database.MinACU, s.Database.AutoPauseSeconds, s.Database.PoolIdleSeconds, s.Database.ServerIdleSeconds),
		fmt.Sprintf("S3 buckets: %d", s.Buckets),
		fmt.Sprintf("budgets %d, CloudFront distributions %d (%d on a domain), SNS topics %d", s.Budgets, s.Distributions, s.Domains, s.Topics),
		fmt.Sprintf("schedules %d, SQS queues %d, sweeps %d", s.Schedules, s.Queues, s.Sweeps),
		fmt.Sprintf("on-demand DynamoDB tables %d", s.Tables),
	}
	for _, f := range s.Functions {
		out = append(out, fmt.Sprintf("function %s: %g MB %s", f.Name, f.MemoryMB, f.Arch))
	}
	sort.Strings(out)
	return out
}

// Diff lists how got (the template) differs from want (the model), one
// line per fact only one of them has; nil when they agree.
func Diff(got, want Stack) []string {
	g, w := got.Facts(), want.Facts()
	var out []string
	for _, f := range g {
		if !slices.Contains(w, f) {
			out = append(out, "template: "+f)
		}
	}
	for _, f := range w {
		if !slices.Contains(g, f) {
			out = append(out, "model:    "+f)
		}
	}
	return out
}
