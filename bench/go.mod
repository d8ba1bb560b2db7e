module github.com/docsapi/docsapi-go/bench

go 1.25.0

require (
	github.com/docsapi/docsapi-go v0.0.0
	github.com/oapi-codegen/runtime v1.8.0
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace github.com/docsapi/docsapi-go => ../
