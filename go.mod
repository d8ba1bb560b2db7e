module github.com/docsapi/docsapi-go

go 1.25.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-cleanhttp v0.5.2
	github.com/jarcoal/httpmock v1.4.2
	golang.org/x/time v0.15.0
)
