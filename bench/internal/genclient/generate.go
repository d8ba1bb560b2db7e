package genclient

// client.gen.go is the client oapi-codegen v2.8.2 generates from the API's
// OpenAPI document (client and models), kept for comparison with the SDK.
// Regenerate it with go generate; do not edit it by hand.

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config cfg.yaml ../../../server/api/openapi.yaml
