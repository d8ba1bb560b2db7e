package server_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/docsapi/docsapi-go/server"
	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// A host application embeds the API under /api of its own mux, with the
// embedded SQLite storage.
func ExampleNew() {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, "docsapi.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		log.Fatal(err)
	}

	// Once: a project and a key for it. The key is shown this one time;
	// the store keeps only its hash.
	if _, err := srv.CreateProject(ctx, store.Project{
		ID: "handbook", Repository: "https://github.com/acme/handbook.git", Ref: "main", Model: "claude-sonnet-4",
	}); err != nil {
		log.Fatal(err)
	}
	key, err := srv.CreateKey(ctx, server.KeyParams{
		Name: "release bot", Projects: []string{"handbook"}, Scopes: []store.Scope{store.ScopeWrite},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("API key:", key.Secret)

	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", srv))
	log.Fatal(http.ListenAndServe("localhost:8080", mux))
}
