package dashboard

import (
	"github.com/docsapi/docsapi-go/server/dashboard/internal/pages"
	"github.com/docsapi/docsapi-go/server/dashboard/internal/session"
)

// SessionSealer returns the Sealer with which a Dashboard whose
// Config.Secret is secret seals its sessions, whatever the secret's
// length: the tests forge cookies with the dashboard's own code.
func SessionSealer(secret []byte) (*session.Sealer, error) { return sealerOf(secret) }

// GapID is the element ID of a gap's row on the gaps page.
var GapID = pages.GapID
