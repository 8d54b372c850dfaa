package model

// PricesDate is when the prices below were read from AWS's public pricing
// pages (us-east-1, on-demand, the stack's default region in docs/deploy.md).
const PricesDate = "2026-12-03"

// S3PricesDate dates the S3 Standard lines (S3GBMonth, S3PutPerThousand,
// S3GetPerThousand): us-east-1 list prices as published for S3 Standard
// (first 50 TB), taken on this date from secondary copies of the pricing
// page, whose tables render client-side.
const S3PricesDate = "2026-12-04"

// Prices are US dollars, us-east-1, without free tiers. Each group names
// the AWS pricing page it comes from.
type Prices struct {
	// aws.amazon.com/rds/aurora/pricing: Aurora Serverless v2 (Aurora
	// Standard), ACU-hour billed per second; storage; I/O requests.
	ACUHour, StorageGBMonth, IOPerMillion float64
	// Backup storage beyond the retention period's free share: a cluster
	// snapshot kept after its cluster is deleted, per GB-month.
	SnapshotGBMonth float64
	// aws.amazon.com/kms/pricing: per customer managed key and month; each
	// of the first two rotations of its material adds one more.
	KMSKeyMonth, KMSRotationMonth float64
	// aws.amazon.com/secrets-manager/pricing: per secret and month.
	SecretMonth float64
	// aws.amazon.com/api-gateway/pricing: WebSocket messages (first 1B,
	// metered in 32 KB increments) and connection minutes; HTTP API
	// requests (first 300M).
	WSMessagePerMillion, WSConnMinutePerMillion, HTTPPerMillion float64
	// aws.amazon.com/lambda/pricing: requests; duration per GB-second for
	// arm64 and x86_64 (first tier).
	LambdaPerMillion, LambdaGBSecondArm, LambdaGBSecondX86 float64
	// aws.amazon.com/cloudwatch/pricing: log ingestion and storage per GB,
	// standard-resolution alarm metric per month.
	LogsIngestGB, LogsStoredGBMonth, AlarmMonth float64
	// aws.amazon.com/ec2/pricing/on-demand (data transfer): to the
	// internet, first 10 TB.
	TransferOutGB float64
	// aws.amazon.com/vpc/pricing: NAT gateway hour and GB processed;
	// public IPv4 address hour; interface endpoint hour per AZ and GB.
	NATGatewayHour, NATGatewayGB, PublicIPv4Hour float64
	InterfaceEndpointHour, InterfaceEndpointGB   float64
	// aws.amazon.com/ec2/pricing/on-demand and aws.amazon.com/ebs/pricing:
	// the NAT instance and its root volume.
	InstanceHour map[string]float64
	GP3GBMonth   float64
	// aws.amazon.com/s3/pricing: S3 Standard storage (first 50 TB),
	// PUT/COPY/POST/LIST and GET/HEAD requests per 1,000 (DELETE is free);
	// transfer out of S3 to the internet is TransferOutGB.
	S3GBMonth, S3PutPerThousand, S3GetPerThousand float64
	// aws.amazon.com/sqs/pricing: standard queue requests (after the
	// first billion none cheaper), each 64 KB chunk one request.
	SQSPerMillion float64
	// aws.amazon.com/dynamodb/pricing/on-demand: write and read request
	// units (as published since the on-demand price cut of 2024-11-01;
	// an item up to 1 KB written, 4 KB read strongly consistent, is one).
	DynamoDBWritePerMillion, DynamoDBReadPerMillion float64
	// aws.amazon.com/kms/pricing: API requests (symmetric), per 10,000.
	KMSPerTenThousand float64
	// aws.amazon.com/cloudfront/pricing (pay as you go, North America and
	// Europe): HTTPS requests per 10,000, data out per GB (first 10 TB),
	// CloudFront Functions per million invocations, and the always-free
	// monthly allowance (requests, GB out, function invocations).
	CloudFrontPer10kHTTPS, CloudFrontPerGB, CloudFrontFunctionPerMillion float64
	CloudFrontFreeRequests, CloudFrontFreeGB, CloudFrontFreeFunctions    float64
	// aws.amazon.com/lambda/pricing, Lambda@Edge: requests per million
	// and duration per GB-second.
	LambdaEdgePerMillion, LambdaEdgeGBSecond float64
	// aws.amazon.com/route53/pricing: a hosted zone a month (the first
	// 25), standard queries per million (the first billion); queries of
	// alias records to a CloudFront distribution are free.
	Route53ZoneMonth, Route53PerMillionQueries float64
}

// USEast1 is the one price table every line of the bill reads.
var USEast1 = Prices{
	ACUHour: 0.12, StorageGBMonth: 0.10, IOPerMillion: 0.20, SnapshotGBMonth: 0.021,
	KMSKeyMonth: 1.00, KMSRotationMonth: 1.00,
	SecretMonth:         0.40,
	WSMessagePerMillion: 1.00, WSConnMinutePerMillion: 0.25, HTTPPerMillion: 1.00,
	LambdaPerMillion: 0.20, LambdaGBSecondArm: 0.0000133334, LambdaGBSecondX86: 0.0000166667,
	LogsIngestGB: 0.50, LogsStoredGBMonth: 0.03, AlarmMonth: 0.10,
	TransferOutGB:  0.09,
	NATGatewayHour: 0.045, NATGatewayGB: 0.045, PublicIPv4Hour: 0.005,
	InterfaceEndpointHour: 0.01, InterfaceEndpointGB: 0.01,
	InstanceHour: map[string]float64{"t4g.nano": 0.0042},
	GP3GBMonth:   0.08,
	S3GBMonth:    0.023, S3PutPerThousand: 0.005, S3GetPerThousand: 0.0004,
	SQSPerMillion:           0.40,
	DynamoDBWritePerMillion: 0.625, DynamoDBReadPerMillion: 0.125,
	KMSPerTenThousand:     0.03,
	CloudFrontPer10kHTTPS: 0.01, CloudFrontPerGB: 0.085, CloudFrontFunctionPerMillion: 0.10,
	CloudFrontFreeRequests: 10e6, CloudFrontFreeGB: 1000, CloudFrontFreeFunctions: 2e6,
	LambdaEdgePerMillion: 0.60, LambdaEdgeGBSecond: 0.00005001,
	Route53ZoneMonth: 0.50, Route53PerMillionQueries: 0.40,
}

// HoursPerMonth is the month every line is computed for.
const HoursPerMonth = 730
