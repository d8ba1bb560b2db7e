#!/usr/bin/env bash
# Checks that a Go program importing the SDK gets no module but the SDK's
# own requirements: it makes an empty module beside this checkout that
# imports the SDK (through a local replace), lets `go mod tidy` resolve it,
# and compares `go list -m all` with the list below.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
cd "$consumer"
cat >go.mod <<MOD
module example.com/consumer

go 1.25.0

require github.com/docsapi/docsapi-go v0.0.0

replace github.com/docsapi/docsapi-go => $repo
MOD
cat >main.go <<'GO'
package main

import (
	"fmt"

	docsapi "github.com/docsapi/docsapi-go"
)

func main() { fmt.Println(docsapi.DefaultBaseURL) }
GO
export GOWORK=off
go mod tidy
go build ./...
got=$(go list -m -f '{{.Path}}' all | sort)
want=$(printf '%s\n' example.com/consumer github.com/docsapi/docsapi-go \
  github.com/google/go-cmp github.com/hashicorp/go-cleanhttp github.com/jarcoal/httpmock \
  golang.org/x/time | sort)
if [ "$got" != "$want" ]; then
  echo "a program that imports the SDK gets these modules:"; echo "$got"
  echo "want only:"; echo "$want"
  exit 1
fi
echo "a program that imports the SDK gets only: $(echo $want | tr '\n' ' ')"
