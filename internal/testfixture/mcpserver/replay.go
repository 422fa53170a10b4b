package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// savedServer is a server as test/e2e/testdata/discover500/capture.mjs
// saved it: its initialize answer and its tools/list.
type savedServer struct {
	Instructions string `json:"instructions"`
	ServerInfo   struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Tools []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
}

// replay is an MCP server that says of itself and lists what the saved
// server in file did; a call of any of its tools answers its name and
// arguments.
func replay(file string, pageSize int) (*mcp.Server, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	var saved savedServer
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("replay %s: %w", file, err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: saved.ServerInfo.Name, Title: saved.ServerInfo.Title, Version: saved.ServerInfo.Version},
		&mcp.ServerOptions{PageSize: pageSize, Instructions: saved.Instructions})
	for _, t := range saved.Tools {
		tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
		if len(t.OutputSchema) > 0 {
			tool.OutputSchema = t.OutputSchema
		}
		name := t.Name
		server.AddTool(tool, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := fmt.Sprintf("%s called with %s", name, req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	}
	return server, nil
}
