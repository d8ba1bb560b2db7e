package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "docsapi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "docsapi.db"), sqlite.WithBusyTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	err = s.CreateProject(ctx, store.Project{ID: "docs", Name: "Docs", Repository: "https://git.example.com/docs.git"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := s.Project(ctx, "docs")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name, p.Repository)
	// Output: Docs https://git.example.com/docs.git
}
