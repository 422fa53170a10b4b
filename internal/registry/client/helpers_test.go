package client_test

import "github.com/pml-go/pml/internal/store"

func storeScope(org, project string) store.Scope { return store.Scope{Org: org, Project: project} }
