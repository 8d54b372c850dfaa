package lambdas

// Every AWS API the functions call, by the name the environment uses for
// it. No function calls SSM (the relay key's ciphertext arrives inline,
// RELAY_KEY_CIPHERTEXT) or STS (IAM database tokens are signed locally
// with the role's credentials, which Lambda provides).
const (
	SvcKMS            = "kms"
	SvcLambda         = "lambda"
	SvcS3             = "s3"
	SvcSecretsManager = "secretsmanager"
	// SvcDynamoDB is the session table's API: over egress=ipv6 reached
	// through the VPC's gateway endpoint (IPv4, the SDK's default name).
	SvcDynamoDB = "dynamodb"
)

// EndpointURL is the endpoint the functions reach service at in region
// over s.Egress: over IPv6 each service's dual-stack name (an AAAA
// record), through a NAT the SDK's default. KMS's and Lambda's dual-stack
// names are <service>.<region>.api.aws, S3's
// s3.dualstack.<region>.amazonaws.com, and Secrets Manager's default name
// is itself dual-stack (docs/deploy.md, endpoint table). With a KMS
// interface endpoint, the default KMS name resolves (private DNS) to the
// endpoint's IPv4 addresses in the VPC.
func EndpointURL(s Settings, region, service string) string {
	dual := s.Egress == "ipv6" && !(service == SvcKMS && s.KMSEndpoint)
	switch {
	case dual && (service == SvcKMS || service == SvcLambda):
		return "https://" + service + "." + region + ".api.aws"
	case dual && service == SvcS3:
		return "https://s3.dualstack." + region + ".amazonaws.com"
	}
	return "https://" + service + "." + region + ".amazonaws.com"
}

// SetsEndpoint: the functions' environment names service's endpoint
// (AWS_ENDPOINT_URL_<SERVICE>, LAMBDA_ENDPOINT) because the SDK's default
// is not the one EndpointURL gives. They are named per service rather than
// by AWS_USE_DUALSTACK_ENDPOINT=true: that flag makes the SDK refuse any
// client with a custom endpoint ("Dualstack and custom endpoint are not
// supported"), which is what the @connections client has.
func SetsEndpoint(s Settings, service string) bool {
	return s.Egress == "ipv6" && service != SvcSecretsManager && service != SvcDynamoDB && !(service == SvcKMS && s.KMSEndpoint)
}

// EgressNetwork is the address family the functions reach service over:
// IPv6 only over egress=ipv6 (the app subnets route only ::/0 out), IPv4
// through a NAT, to the KMS interface endpoint or to DynamoDB's gateway
// endpoint.
func EgressNetwork(s Settings, service string) string {
	if s.Egress == "ipv6" && service != SvcDynamoDB && !(service == SvcKMS && s.KMSEndpoint) {
		return "tcp6"
	}
	return "tcp4"
}
