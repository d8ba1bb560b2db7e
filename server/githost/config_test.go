package githost

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestConfigPrintedFormsHideCredentials(t *testing.T) {
	const secret = "s3cr3t-token-value"
	tokenFunc := func(context.Context) (string, error) { return secret, nil }
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "githost.Config{BaseURL: default, Token: none, Draft: false}"},
		{Config{Token: secret, Draft: true}, "githost.Config{BaseURL: default, Token: [REDACTED], Draft: true}"},
		{Config{TokenFunc: tokenFunc, BaseURL: "https://u:" + secret + "@ghe.example/api/v3/"}, `githost.Config{BaseURL: "https://***@ghe.example/api/v3/", Token: func, Draft: false}`},
	} {
		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("config", "cfg", tc.cfg)
		for _, got := range []string{tc.cfg.String(), fmt.Sprint(tc.cfg), fmt.Sprintf("%+v", tc.cfg), fmt.Sprintf("%#v", tc.cfg), b.String()} {
			if strings.Contains(got, secret) {
				t.Errorf("a printed form shows the secret: %s", got)
			}
		}
		if got := tc.cfg.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}
