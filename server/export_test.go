package server

import "github.com/docsapi/docsapi-go/server/internal/dashboard"

// SessionSealer returns the Sealer with which a Server whose Config.Secret
// is secret seals its sessions, whatever the secret's length: the tests
// forge cookies with the server's own code.
func SessionSealer(secret []byte) (*dashboard.Sealer, error) { return sessionSealer(secret) }
