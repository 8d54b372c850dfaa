package store

// Statements the external tests inspect.
var DeliveryStatements = map[string]string{
	"events":        deliveryEventsSQL,
	"roots":         deliveryRootsSQL,
	"system":        deliverySystemSQL,
	"subscriptions": deliverySubscriptionsSQL,
	"audience":      deliveryAudienceSQL,
}
